#!/usr/bin/env python3
"""Run real OpenCL applications' own correctness checks on PyPlat and PoCL, side by side
(the tables in docs/real-apps.md).

    python tools/real_apps.py reikna [--tests DIR] [PYTEST_ARG...]   # reikna 0.9.0's pytest suite
    python tools/real_apps.py clfft                                  # clFFT: clFFT-client sweep + gpyfft's tests
    python tools/real_apps.py clpeak                                 # clpeak, figures side by side

Run it with the interpreter PyPlat is installed in: its `pyplat run --` puts PyPlat next to the
installed platforms for the loader, and each application selects one platform by name or index.
  reikna: `pip install reikna scipy`; its tests come from the sdist (`scripts/setup.sh` leaves
          it in <venv>/real-apps/); run as `pytest --api=ocl --platform-include-mask=NAME`, with
          this file as a plugin for one pyopencl 2026 incompatibility (see pytest_configure).
  clFFT:  Debian `clfft-client` (the client transforms a constant or impulse signal and checks the
          result exactly, printing "Internal Client Test *****PASS*****" or "*****FAIL*****") and
          `python3-gpyfft` (a unittest suite comparing clFFT's transforms with numpy.fft; run with
          the system python3 and its pyopencl).
  clpeak: Debian `clpeak` (`-p N -d 0`): every test must complete, figures are for comparison.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET

PLATFORMS = ("PyPlat", "Portable Computing Language")
REIKNA = "reikna-0.9.0"


def pyplat_run():
    return [os.path.join(os.path.dirname(sys.executable), "pyplat"), "run", "--"]


def platform_indices():
    """{platform name: index} as the ICD loader lists them under `pyplat run`."""
    out = subprocess.run(pyplat_run() + ["clinfo", "-l"], capture_output=True, text=True).stdout
    return {m.group(2).strip(): int(m.group(1)) for m in re.finditer(r"Platform #(\d+): (.*)", out)}


# ---------------------------------------------------------------- reikna

def reikna_sdist(prefix=sys.prefix):
    """The reikna sdist scripts/setup.sh downloads (its test suite is not installed by pip)."""
    found = sorted(glob.glob(os.path.join(prefix, "real-apps", REIKNA + ".tar.gz")))
    return found[0] if found else None


def reikna_tests(dest):
    """Extract reikna's test/ directory from the sdist into dest; returns its path or None."""
    sdist = reikna_sdist()
    if sdist is None:
        return None
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(REIKNA + "/test/")]
        tar.extractall(dest, members=members, filter="data")
    return os.path.join(dest, REIKNA, "test")


def junit_counts(path):
    """passed / failed / skipped counts and the failing test ids from a pytest junit XML file."""
    n = {"passed": 0, "failed": 0, "skipped": 0}
    failing = []
    for case in ET.parse(path).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        name = case.get("classname", "") + "::" + case.get("name", "")
        if kinds & {"failure", "error"}:
            n["failed"] += 1
            failing.append(name)
        elif "skipped" in kinds:
            n["skipped"] += 1
        else:
            n["passed"] += 1
    return n, failing


def pytest_configure(config):
    """When reikna's suite loads this file as a pytest plugin (`-p real_apps`): reikna 0.9.0's
    Thread.from_device passes `async_=` to pyopencl's Array.get, which pyopencl 2026 no longer
    takes, so every test reading results through it fails on any platform. Drop the argument
    (a blocking read is what reikna asks for there)."""
    import pyopencl.array as cla
    get = cla.Array.get

    def get_without_async(self, queue=None, ary=None, async_=None, **kwargs):
        return get(self, queue=queue, ary=ary, **kwargs)

    cla.Array.get = get_without_async


def run_reikna(testdir, platform, pytest_args, timeout=7200, runner=None):
    """Run reikna's suite on one platform; returns (counts, failing ids, seconds)."""
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "junit.xml")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "real_apps", "--api=ocl",
               "--platform-include-mask=" + platform, "-m", "not perf", "--junitxml=" + xml] + list(pytest_args)
        env = {"PYTHONPATH": os.path.dirname(os.path.abspath(__file__))}
        t = time.perf_counter()
        if runner is None:
            subprocess.run(pyplat_run() + cmd, cwd=testdir, capture_output=True, timeout=timeout,
                           env=dict(os.environ, **env))
        else:
            runner(cmd, cwd=testdir, timeout=timeout, env=env)
        seconds = time.perf_counter() - t
        if not os.path.exists(xml):
            return None, [], seconds
        counts, failing = junit_counts(xml)
        return counts, failing, seconds


def cmd_reikna(args):
    with tempfile.TemporaryDirectory() as tmp:
        testdir = args.tests or reikna_tests(tmp)
        if testdir is None:
            sys.exit("no reikna sdist in %s/real-apps (see scripts/setup.sh)" % sys.prefix)
        print("| platform | passed / failed / skipped | seconds |\n|---|---|---|")
        failures = {}
        for p in PLATFORMS:
            counts, failing, seconds = run_reikna(testdir, p, args.rest)
            cell = "no result" if counts is None else "%(passed)d / %(failed)d / %(skipped)d" % counts
            print(f"| {p} | {cell} | {seconds:.0f} |", flush=True)
            failures[p] = failing
        for p in PLATFORMS:
            for name in failures[p]:
                print(f"failed on {p}: {name}")


# ---------------------------------------------------------------- clFFT

# clFFT-client transforms: (label, arguments). The client checks each result itself (exactly).
CLFFT_CASES = [
    ("1D 1024 c2c", "-x 1024"),
    ("1D 1024 c2c inverse", "-x 1024 --inv"),
    ("1D 1024 c2c out of place", "-x 1024 -o"),
    ("1D 1024 c2c double", "-x 1024 --double"),
    ("1D 1024 planar", "-x 1024 --inLayout 2 --outLayout 2"),
    ("1D 243 (radix 3)", "-x 243"),
    ("1D 625 (radix 5)", "-x 625"),
    ("1D 343 (radix 7)", "-x 343"),
    ("1D 1000 (mixed radix)", "-x 1000"),
    ("1D 8192 (large, multi-pass)", "-x 8192"),
    ("1D 1024 batch 8", "-x 1024 -b 8"),
    ("1D 1024 r2c", "-x 1024 -o --inLayout 5 --outLayout 3"),
    ("1D 1024 c2r", "-x 1024 -o --inv --inLayout 3 --outLayout 5"),
    ("2D 64x64 c2c", "-x 64 -y 64"),
    ("2D 64x64 r2c double", "-x 64 -y 64 -o --double --inLayout 5 --outLayout 3"),
    ("3D 16x16x16 c2c", "-x 16 -y 16 -z 16"),
]


def run_clfft_client(args, index, runner=None, timeout=600):
    """One clFFT-client transform on platform `index`: ("PASS" | "FAIL" | error text, seconds)."""
    cmd = ["clFFT-client", "--platform", str(index), "--device", "0"] + args.split()
    t = time.perf_counter()
    try:
        r = (runner or _run)(cmd, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t
    seconds = time.perf_counter() - t
    text = r.stdout + r.stderr
    if "*****PASS*****" in text:
        return "PASS", seconds
    if "*****FAIL*****" in text:
        return "FAIL", seconds
    errors = [line.strip() for line in text.splitlines() if "error" in line.lower()]
    return (errors[0][:80] if errors else "rc %d" % r.returncode), seconds


def _run(cmd, **kwargs):
    return subprocess.run(pyplat_run() + cmd, capture_output=True, text=True, **kwargs)


# Runs gpyfft's unittest suite on one platform (argv[1]) with the system python3: gpyfft's tests
# take their contexts from gpyfft.test.util.get_contexts(), which is replaced before they import it.
GPYFFT_DRIVER = r"""
import os, sys, unittest
import pyopencl as cl
import gpyfft.test.util as util
name = sys.argv[1]
util.get_contexts = lambda: [cl.Context([d]) for p in cl.get_platforms() if p.name == name
                             for d in p.get_devices()]
here = os.path.dirname(util.__file__)
suite = unittest.defaultTestLoader.discover(here, top_level_dir=os.path.dirname(os.path.dirname(here)))
r = unittest.TextTestRunner(verbosity=2, stream=sys.stderr).run(suite)
bad = [t.id() for t, _ in r.failures + r.errors]
print("GPYFFT ran=%d failed=%d skipped=%d" % (r.testsRun, len(bad), len(r.skipped)))
for t in bad:
    print("GPYFFT failing", t)
"""


def run_gpyfft(platform, runner=None, timeout=900):
    """gpyfft's tests on one platform: ({passed, failed, skipped} or None, failing ids, seconds, output)."""
    t = time.perf_counter()
    r = (runner or _run)(["/usr/bin/python3", "-c", GPYFFT_DRIVER, platform], timeout=timeout)
    seconds = time.perf_counter() - t
    m = re.search(r"GPYFFT ran=(\d+) failed=(\d+) skipped=(\d+)", r.stdout)
    if not m:
        return None, [], seconds, r.stdout + r.stderr
    ran, failed, skipped = map(int, m.groups())
    failing = re.findall(r"GPYFFT failing (\S+)", r.stdout)
    return {"passed": ran - failed - skipped, "failed": failed, "skipped": skipped}, failing, seconds, r.stderr


def cmd_clfft(args):
    index = platform_indices()
    names = [p for p in PLATFORMS if p in index]
    print("| clFFT-client transform | " + " | ".join(f"{p} (s)" for p in names) + " |")
    print("|---|" + "---|" * len(names))
    for label, cargs in CLFFT_CASES:
        cells = ["%s (%.1f)" % run_clfft_client(cargs, index[p]) for p in names]
        print(f"| {label} (`{cargs}`) | " + " | ".join(cells) + " |", flush=True)
    print()
    print("| gpyfft tests | " + " | ".join(f"{p}: passed / failed / skipped (s)" for p in names) + " |")
    print("|---|" + "---|" * len(names))
    cells, failing = [], {}
    for p in names:
        counts, failing[p], seconds, _ = run_gpyfft(p)
        cell = "no result" if counts is None else "%(passed)d / %(failed)d / %(skipped)d" % counts
        cells.append(f"{cell} ({seconds:.0f})")
    print("| gpyfft 0.7.1 | " + " | ".join(cells) + " |")
    for p in names:
        for name in failing[p]:
            print(f"failed on {p}: {name}")


# ---------------------------------------------------------------- clpeak

def run_clpeak(index, extra=(), timeout=1800):
    """clpeak on one platform: ({test: [(what, figure)]}, errors, seconds)."""
    t = time.perf_counter()
    r = _run(["clpeak", "-p", str(index), "-d", "0"] + list(extra), timeout=timeout)
    seconds = time.perf_counter() - t
    results, errors, test = {}, [], None
    for line in r.stdout.splitlines():
        s = line.strip()
        if not s:
            continue
        m = re.match(r"(.+?)\s*:\s*([-\d.]+)(?:\s*[a-z]+)?$", s)
        nested = len(line) - len(line.lstrip()) > 4      # a figure under a test's heading
        if m and nested and test is not None:
            results[test].append((m.group(1), m.group(2)))
        elif m and not nested and m.group(1) not in ("Compute units", "Clock frequency"):
            results[m.group(1)] = [("", m.group(2))]     # a one-figure test (kernel launch latency)
            test = None
        elif s.endswith(")") and "(" in s and ":" not in s:
            test = s
            results[test] = []
        elif "error" in s.lower() or "fail" in s.lower():
            errors.append(s)
    if r.returncode:
        errors.append("rc %d: %s" % (r.returncode, r.stderr.strip()[-200:]))
    return results, errors, seconds


def cmd_clpeak(args):
    index = platform_indices()
    names = [p for p in PLATFORMS if p in index]
    runs = {p: run_clpeak(index[p], args.rest) for p in names}
    print("| clpeak test | what | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    tests = list(runs[names[0]][0])
    for p in names[1:]:
        tests += [t for t in runs[p][0] if t not in tests]
    for test in tests:
        rows = {}
        for p in names:
            for what, fig in runs[p][0].get(test, []):
                rows.setdefault(what, {})[p] = fig
        for what, figs in rows.items():
            print(f"| {test} | {what} | " + " | ".join(figs.get(p, "missing") for p in names) + " |")
    for p in names:
        print(f"{p}: {runs[p][2]:.0f} s, errors: {runs[p][1] or 'none'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("app", choices=["reikna", "clfft", "clpeak"])
    ap.add_argument("--tests", help="reikna's test directory (default: extracted from the sdist)")
    ap.add_argument("rest", nargs=argparse.REMAINDER, help="passed on to pytest (reikna) or clpeak")
    args = ap.parse_args()
    {"reikna": cmd_reikna, "clfft": cmd_clfft, "clpeak": cmd_clpeak}[args.app](args)


if __name__ == "__main__":
    main()
