"""What the kernel checker costs (issue 16 part 3): bench/barrier_kernels.py's kernels on PyPlat
unchecked, on PyPlat with ``PYPLAT_CHECK`` and on Oclgrind with its checks on, side by side.

    python bench/check_cost.py [--scale 64] [--repeat 5] [--checks bounds,races,uninit]
                               [--kernels vadd,reduction,transpose,scan,histogram] [--no-oclgrind]
                               [--cpu-time]

Each configuration runs in a child process of its own (barrier_kernels.CHILD: every result is
checked against numpy before timing; median of ``--repeat`` calls after a warm-up call) with
one worker (``PYPLAT_WORKERS=1``; Oclgrind runs work-items one at a time too unless told
otherwise). Oclgrind (Debian package ``oclgrind``) runs as ``oclgrind --data-races
--uninitialized`` (its out-of-bounds checks are always on) with ``--num-threads 1``. pyopencl's
binary cache is off (``PYOPENCL_NO_CACHE``) so that every build is what the configuration says.
Prints ms per call and the ratios checked / unchecked (issue 16's goal: at most 3) and Oclgrind /
checked. Sizes are divided by ``--scale`` (Oclgrind interprets: the default keeps its runs
short). ``--cpu-time`` times calls by the process's CPU time (all its threads) instead of the
wall clock: on a shared machine under load, where wall-clock runs of one build vary by 2× and
more, CPU time varies far less (with one worker it is the kernel's time plus the host's).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from barrier_kernels import CHILD, KERNELS  # noqa: E402


def run(config, args, kernels):
    env = dict(os.environ, PYPLAT_WORKERS="1", PYOPENCL_NO_CACHE="1")
    env.pop("PYPLAT_CHECK", None)
    child = CHILD.replace("time.perf_counter()", "time.process_time()") if args.cpu_time else CHILD
    cmd = [sys.executable, "-c", child, "PyPlat" if config != "oclgrind" else "Oclgrind",
           str(args.scale), str(args.repeat), ",".join(kernels)]
    if config == "oclgrind":
        cmd = ["oclgrind", "--data-races", "--uninitialized", "--num-threads", "1"] + cmd
    else:
        if config == "checked":
            env["PYPLAT_CHECK"] = args.checks
        pyplat = shutil.which("pyplat") or os.path.join(os.path.dirname(sys.executable), "pyplat")
        cmd = [pyplat, "run", "--"] + cmd
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:]), proc.stderr
    raise SystemExit("%s failed (rc %d):\n%s%s" % (config, proc.returncode, proc.stdout, proc.stderr[-3000:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--checks", default="bounds,races,uninit")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--no-oclgrind", action="store_true")
    ap.add_argument("--cpu-time", action="store_true", help="time by process CPU time, not the wall clock")
    args = ap.parse_args()
    kernels = args.kernels.split(",")
    configs = ["unchecked", "checked"]
    if not args.no_oclgrind:
        if shutil.which("oclgrind") is None:
            raise SystemExit("oclgrind is not installed (Debian: apt install oclgrind), or pass --no-oclgrind")
        configs.append("oclgrind")
    results, logs = {}, {}
    for c in configs[:2]:
        results[c], logs[c] = run(c, args, kernels)
    if "oclgrind" in configs:                # one kernel per child: a kernel Oclgrind gets wrong
        results["oclgrind"], logs["oclgrind"] = {"kernels": {}}, ""      # stops only itself
        for name in kernels:
            try:
                r, log = run("oclgrind", args, [name])
                results["oclgrind"]["kernels"].update(r["kernels"])
                logs["oclgrind"] += log
            except SystemExit as e:
                results["oclgrind"]["kernels"][name] = None
                logs["oclgrind"] += str(e)[-400:] + "\n"
    print("kernel checker cost, ms %s per call (median of %d, 1 worker, sizes / %d); PyPlat checks: %s"
          % ("of CPU time" if args.cpu_time else "(wall clock)", args.repeat, args.scale, args.checks))
    head = "| kernel | " + " | ".join(configs) + " | checked / unchecked |" + (
        " Oclgrind / checked |" if "oclgrind" in configs else "")
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for name in kernels:
        ms = {c: results[c]["kernels"][name]["median_s"] * 1e3 if results[c]["kernels"][name] else None
              for c in configs}
        row = "| %s | " % name + " | ".join("%.3f" % ms[c] if ms[c] else "wrong result" for c in configs)
        row += " | %.2f |" % (ms["checked"] / ms["unchecked"])
        if "oclgrind" in configs:
            row += (" %.0f |" % (ms["oclgrind"] / ms["checked"])) if ms["oclgrind"] else " - |"
        print(row)
    for c in configs:
        findings = [line for line in logs[c].splitlines()
                    if line.startswith(("pyplat", "Invalid", "Uninitialized", "Read-write", "Write-write"))
                    or "data race" in line.lower() or "wrong" in line]
        kinds = sorted(set(f.split(" address")[0][:70] for f in findings))
        where = sorted(set(line.split("Kernel:")[1].strip() for line in logs[c].splitlines() if "Kernel:" in line))
        print("%s: %d report lines%s%s" % (c, len(findings), (" (" + "; ".join(kinds[:4]) + ")") if kinds else "",
                                          (" in kernels " + ", ".join(where)) if where else ""))


if __name__ == "__main__":
    main()
