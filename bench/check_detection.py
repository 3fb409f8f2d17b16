"""Which bugs of the PYPLAT_CHECK tests' catalogue (tests/support/kernel_check.py) PyPlat's checker and
Oclgrind each find.

    python bench/check_detection.py

Runs every buggy kernel of the catalogue (the test's kernels and launches) once under
``PYPLAT_CHECK`` (the checks the test uses for it) and once under ``oclgrind --data-races
--uninitialized``, each in a child process, and prints per kernel whether a report came, its
first line (shortened) and the child's wall time. Needs Oclgrind (Debian package ``oclgrind``).
"""
import os
import shutil
import subprocess
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from support.kernel_check import CASES, CATALOGUE, PRELUDE  # noqa: E402

OCLGRIND_PRELUDE = PRELUDE.replace("import pyplat\npyplat.enable()\n", "").replace('p.name == "PyPlat"',
                                                                                 'p.name == "Oclgrind"')
DATA = """
out = cl.Buffer(ctx, mf.READ_WRITE, 4 * N)
inp = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.arange(N, dtype=np.int32))
"""


def child(prelude, launch):
    return (prelude + "SRC = r'''" + CATALOGUE + "'''\nprg = cl.Program(ctx, SRC).build()\n" + DATA
            + textwrap.dedent(launch) + "\nstatus(ev)\n")


def run(cmd, env):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, cwd="/")
    return time.perf_counter() - t, p


def main():
    if shutil.which("oclgrind") is None:
        raise SystemExit("oclgrind is not installed (Debian: apt install oclgrind)")
    print("| kernel | PyPlat checks | PyPlat report | s | Oclgrind report | s |")
    print("|---|---|---|---|---|---|")
    for kernel in sorted(CASES):
        launch, _, _, *kinds = CASES[kernel]
        checks = kinds[0] if kinds else "bounds"
        env = dict(os.environ, PYPLAT_CHECK=checks, PYPLAT_CACHE_DIR="off", PYOPENCL_NO_CACHE="1")
        t1, p = run([sys.executable, "-c", child(PRELUDE, launch)], env)
        ours = [line for line in p.stderr.splitlines() if line.startswith("pyplat: check: ")]
        env = dict(os.environ, PYOPENCL_NO_CACHE="1")
        env.pop("PYPLAT_CHECK", None)
        t2, g = run(["oclgrind", "--data-races", "--uninitialized", sys.executable, "-c",
                     child(OCLGRIND_PRELUDE, launch)], env)
        theirs = [line for line in g.stderr.splitlines()
                  if line.startswith(("Invalid", "Uninitialized", "Read-write", "Write-write", "Read-only",
                                      "Work-group divergence", "Oclgrind"))]
        print("| %s | %s | %s | %.1f | %s | %.1f |" % (
            kernel, checks, ours[0][15:95] + "…" if ours else "**none**", t1,
            (theirs[0][:80] + " (%d lines)" % len(theirs)) if theirs else "**none** (rc %d)" % g.returncode, t2))


if __name__ == "__main__":
    main()
