"""CLBlast's own test binaries (Debian `clblast-tests`, CLBlast 1.5.3) on PyPlat, next to PoCL.

CLBlast is a real OpenCL library written for many vendors: macro-heavy kernels built with
`-cl-std=CL1.1`, `reqd_work_group_size` from macros, swizzles in included code, unroll pragmas.
Each routine's binary runs its whole test set on one platform (`-platform N`); the test asserts
that PyPlat fails none and passes exactly as many as PoCL does in the same run (a skip counts the
same on both: half precision, which neither device has). Skipped when the binaries are absent
(`scripts/setup.sh` installs them). All routines: `python tools/clblast_tests.py` (docs/real-apps.md).
"""
import re
import shutil
import subprocess

import pytest

# A representative subset for CI (each binary takes a second or two on PyPlat): level 1, 2 and 3.
ROUTINES = ["xaxpy", "xdot", "xnrm2", "xasum", "xamax", "xscal", "xswap", "xgemv", "xger", "xtrsv",
            "xsyrk"]

pytestmark = pytest.mark.skipif(shutil.which("clblast_test_xaxpy") is None,
                                reason="CLBlast's test binaries are not installed (apt-get install clblast-tests)")

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def counts(output):
    """{passed, failed, skipped} summed over the precisions a binary tests."""
    text = _ANSI.sub("", output)
    return {word: sum(int(n) for n in re.findall(r"^\s+(\d+) test\(s\) %s" % word, text, re.M))
            for word in ("passed", "failed", "skipped")}


@pytest.fixture(scope="module")
def platform_index(run_with_pyplat):
    """Index of each platform as the loader lists it to CLBlast ({name: index})."""
    r = run_with_pyplat(["clinfo", "-l"])
    assert r.returncode == 0, r.stderr
    return {m.group(2).strip(): int(m.group(1)) for m in re.finditer(r"Platform #(\d+): (.*)", r.stdout)}


def run_routine(run_with_pyplat, routine, index):
    r = run_with_pyplat(["clblast_test_" + routine, "-platform", str(index), "-device", "0", "-q"],
                        timeout=600)
    assert r.returncode == 0, (routine, r.returncode, r.stderr[-2000:])
    return counts(r.stdout + r.stderr)


@pytest.mark.parametrize("routine", ROUTINES)
def test_clblast_routine_passes_as_on_pocl(run_with_pyplat, platform_index, routine):
    ours = run_routine(run_with_pyplat, routine, platform_index["PyPlat"])
    assert ours["failed"] == 0 and ours["passed"] > 0, ours
    pocl = platform_index.get("Portable Computing Language")
    if pocl is not None:
        theirs = run_routine(run_with_pyplat, routine, pocl)
        assert ours == theirs, (ours, theirs)
