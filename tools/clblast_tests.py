#!/usr/bin/env python3
"""Run CLBlast's test binaries (Debian `clblast-tests`) on PyPlat and PoCL, one platform at a time,
and print passed / failed / skipped per routine side by side (the table in docs/real-apps.md).

    python tools/clblast_tests.py [--timeout S] [ROUTINE...]     # default: every clblast_test_*

Each binary runs as `pyplat run -- clblast_test_<routine> -platform N -device 0 -q`, so the loader
sees PyPlat next to the installed platforms; N is found from `clinfo -l` under the same
environment. Run it with the interpreter PyPlat is installed in (its `pyplat` command is used).
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import time

ANSI = re.compile(r"\x1b\[[0-9;]*m")
PLATFORMS = ("PyPlat", "Portable Computing Language")


def pyplat_run():
    return [os.path.join(os.path.dirname(sys.executable), "pyplat"), "run", "--"]


def platform_indices():
    out = subprocess.run(pyplat_run() + ["clinfo", "-l"], capture_output=True, text=True).stdout
    return {m.group(2).strip(): int(m.group(1)) for m in re.finditer(r"Platform #(\d+): (.*)", out)}


def run(routine, index, timeout):
    t = time.perf_counter()
    try:
        r = subprocess.run(pyplat_run() + ["clblast_test_" + routine, "-platform", str(index), "-device", "0",
                                           "-q"], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t
    text = ANSI.sub("", r.stdout + r.stderr)
    n = {w: sum(int(x) for x in re.findall(r"^\s+(\d+) test\(s\) %s" % w, text, re.M))
         for w in ("passed", "failed", "skipped")}
    status = "%(passed)d / %(failed)d / %(skipped)d" % n
    if r.returncode:
        status += " (rc %d)" % r.returncode
    return status, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("routines", nargs="*")
    ap.add_argument("--timeout", type=float, default=1800)
    args = ap.parse_args()
    routines = args.routines or sorted(os.path.basename(p)[len("clblast_test_"):]
                                       for p in glob.glob("/usr/bin/clblast_test_*"))
    if not routines:
        sys.exit("no clblast_test_* binaries (apt-get install clblast-tests)")
    index = platform_indices()
    names = [p for p in PLATFORMS if p in index]
    print("| routine | " + " | ".join(f"{p}: passed / failed / skipped (s)" for p in names) + " |")
    print("|---|" + "---|" * len(names))
    for routine in routines:
        cells = []
        for p in names:
            status, seconds = run(routine, index[p], args.timeout)
            cells.append(f"{status} ({seconds:.0f})")
        print(f"| {routine} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
