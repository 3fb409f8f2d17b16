#!/usr/bin/env python3
"""Run Khronos OpenCL CTS binaries against one platform at a time and compare PyPlat with PoCL.

    python tools/cts.py [--cts-dir DIR] [--platform pyplat|pocl|both] [--binaries A,B,...]
                        [--timeout S] [--jobs N] [--out DIR] [--args BINARY=ARGS ...]

Each binary runs with OCL_ICD_VENDORS naming a directory that holds only one platform's .icd
(PyPlat: `pyplat icd`; PoCL: a copy of /etc/OpenCL/vendors/pocl.icd), so the CTS sees that
platform alone as platform 0. Every subtest's result is read from the harness's results file
(CL_CONFORMANCE_RESULTS_FILENAME) and from its log ("NAME..." starts a subtest; "NAME passed",
"NAME FAILED", "NAME test not supported", "NAME skipped (requires ...)" end it); a binary that
crashes or runs past --timeout counts as failed, and the subtest it was in is marked
crash/timeout. Results are merged into OUT/cts.json (so binaries can be run a few at a time) and
OUT/cts.md is rewritten from it: a table PyPlat next to PoCL and the subtests failing on PyPlat
that pass on PoCL, each with the first lines of its failure output and a command to rerun it.
Logs: OUT/logs/<platform>/<binary>.log. Build the binaries with tools/cts_build.sh.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BINARIES = ("test_basic test_api test_compiler test_buffers test_events test_computeinfo "
            "test_commonfns test_geometrics test_relationals test_integer_ops test_atomics "
            "test_printf test_profiling test_vectors test_multiples test_mem_host_flags "
            "test_select test_allocations test_thread_dimensions test_half test_conversions "
            "test_bruteforce").split()
# Wimpy modes (a fraction of the inputs) for the exhaustive binaries; see docs/conformance.md.
DEFAULT_ARGS = {
    "test_conversions": ["-w"],
    "test_bruteforce": ["-w"],
    "test_half": ["-w"],
    "test_select": ["-w"],
}
PLATFORM_NAMES = {"pyplat": "PyPlat", "pocl": "PoCL"}
POCL_ICD = "/etc/OpenCL/vendors/pocl.icd"
EXCERPT_LINES = 12

START = re.compile(r"^(\S+)\.\.\.$")
ENDS = (
    (re.compile(r"^(\S+) passed$"), "pass"),
    (re.compile(r"^(\S+) FAILED$"), "fail"),
    (re.compile(r"^(\S+) test not supported$"), "skip"),
    (re.compile(r"^(\S+) skipped \(requires at least"), "skip"),
    (re.compile(r"^(\S+) test currently not implemented$"), "skip"),
    (re.compile(r"^Subtest (\S+) tests is not supported in offline"), "skip"),
)
SUMMARY = re.compile(r"^(PASSED|FAILED|SKIPPED) (\d+) of (\d+) tests\.$")
HARNESS_STATUS = {"pass": "pass", "fail": "fail", "skip": "skip"}


# --- platforms ----------------------------------------------------------------------------------

def vendors_dir(platform, tmp):
    """A directory for OCL_ICD_VENDORS holding only `platform`'s .icd file."""
    if platform == "pyplat":
        exe = shutil.which("pyplat", path=os.path.dirname(sys.executable)) or shutil.which("pyplat")
        if not exe:
            sys.exit("cts.py: no `pyplat` command (run with the interpreter PyPlat is installed in)")
        out = subprocess.run([exe, "icd"], capture_output=True, text=True, check=True).stdout
        return out.strip().splitlines()[-1]
    if not os.path.exists(POCL_ICD):
        sys.exit(f"cts.py: {POCL_ICD} not found (apt-get install pocl-opencl-icd)")
    d = os.path.join(tmp, "pocl-vendors")
    os.makedirs(d, exist_ok=True)
    shutil.copy(POCL_ICD, d)
    return d


def find_binary(cts_dir, name):
    for cand in (os.path.join(cts_dir, name), os.path.join(cts_dir, "bin", name)):
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return os.path.realpath(cand)
    tree = os.path.join(cts_dir, "build", "test_conformance")
    for root, _dirs, files in os.walk(tree if os.path.isdir(tree) else cts_dir):
        if name in files and os.access(os.path.join(root, name), os.X_OK):
            return os.path.join(root, name)
    return None


# --- parsing ------------------------------------------------------------------------------------

def parse_log(text):
    """(subtests, order, excerpts, summary) from a CTS binary's output.

    subtests: name -> pass/fail/skip, or "unfinished" for one started and never ended.
    excerpts: name -> the output between the subtest's start and its FAILED line."""
    subtests, excerpts, order = {}, {}, []
    current, lines = None, []
    summary = None
    for line in text.splitlines():
        s = line.rstrip()
        m = START.match(s)
        if m:
            current, lines = m.group(1), []
            if current not in subtests:
                order.append(current)
            subtests[current] = "unfinished"
            continue
        for pat, status in ENDS:
            m = pat.match(s)
            if m:
                name = m.group(1)
                if name not in subtests:
                    order.append(name)
                subtests[name] = status
                if status == "fail":
                    excerpts[name] = lines if name == current else []
                if name == current:
                    current, lines = None, []
                break
        else:
            m = SUMMARY.match(s)
            if m:
                summary = (m.group(1), int(m.group(2)), int(m.group(3)))
            elif current is not None and s.strip():
                lines.append(s)
    for name in subtests:
        if subtests[name] == "unfinished" and name == current:
            excerpts[name] = lines
    return subtests, order, excerpts, summary


def merge_results_file(subtests, order, path):
    """The harness's own results (all selected subtests, written at the end) win over the log."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return False
    for name, status in data.get("results", {}).items():
        if name not in subtests:
            order.append(name)
        if subtests.get(name) != "unfinished" or status != "pass":
            subtests[name] = HARNESS_STATUS.get(status, status)
    return True


def _excerpt(lines):
    """The failure output from its first error line on (progress lines before it dropped)."""
    for i, line in enumerate(lines):
        if re.search(r"error|fail|mismatch|expected|wrong", line, re.I):
            return lines[i:i + EXCERPT_LINES]
    return lines[:EXCERPT_LINES]


def run_one(platform, vendors, binary, path, args, timeout, logdir):
    os.makedirs(logdir, exist_ok=True)
    log = os.path.join(logdir, binary + ".log")
    results = os.path.join(logdir, binary + ".results.json")
    if os.path.exists(results):
        os.unlink(results)
    env = dict(os.environ, OCL_ICD_VENDORS=vendors, CL_CONFORMANCE_RESULTS_FILENAME=results)
    env.pop("OPENCL_VENDOR_PATH", None)
    env.pop("OCL_ICD_FILENAMES", None)
    cmd = [path] + list(args)
    t0 = time.monotonic()
    outcome = "ok"
    with open(log, "wb") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                                cwd=os.path.dirname(path), start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
            outcome = "timeout"
    seconds = time.monotonic() - t0
    with open(log, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    subtests, order, excerpts, summary = parse_log(text)
    had_results = merge_results_file(subtests, order, results)
    if outcome == "ok" and rc < 0:
        outcome = "crash (%s)" % signal.Signals(-rc).name if -rc in signal.valid_signals() \
            else "crash (signal %d)" % -rc
    for name in order:
        if subtests[name] == "unfinished":
            subtests[name] = "timeout" if outcome == "timeout" else "crash"
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for st in subtests.values():
        counts["passed" if st == "pass" else "skipped" if st == "skip" else "failed"] += 1
    if outcome != "ok" and not any(s in ("crash", "timeout") for s in subtests.values()):
        # died outside any subtest (start-up, exit): the binary itself counts as one failure
        counts["failed"] += 1
    if outcome == "ok" and rc != 0 and counts["failed"] == 0:
        outcome = "exit status %d" % rc
        counts["failed"] += 1
    return {
        "binary": binary, "platform": platform, "cmd": cmd, "rc": rc, "outcome": outcome,
        "seconds": round(seconds, 1), "counts": counts, "summary": summary,
        "results_file": had_results,
        "subtests": {n: subtests[n] for n in order},
        "failures": {n: _excerpt(excerpts.get(n, [])) for n in order
                     if subtests[n] not in ("pass", "skip")},
        "tail": text.splitlines()[-EXCERPT_LINES:] if outcome != "ok" or rc else [],
    }


# --- report -------------------------------------------------------------------------------------

def cell(r):
    if r is None:
        return "not run"
    c = r["counts"]
    s = "%d / %d / %d" % (c["passed"], c["failed"], c["skipped"])
    if r["outcome"] != "ok":
        s += " (%s)" % r["outcome"]
    return s + " (%.0f s)" % r["seconds"]


def rerun_command(platform, r, subtest):
    vend = "$(pyplat icd)" if platform == "pyplat" else "DIR_WITH_ONLY_pocl.icd"
    args = " ".join(shlex.quote(a) for a in r["cmd"][1:])
    return "cd %s && OCL_ICD_VENDORS=%s ./%s %s%s" % (
        os.path.dirname(r["cmd"][0]), vend, r["binary"], args + " " if args else "", subtest)


def markdown(data):
    plats = [p for p in ("pyplat", "pocl") if data.get(p)]
    binaries = sorted({b for p in plats for b in data[p]},
                      key=lambda b: (BINARIES.index(b) if b in BINARIES else 99, b))
    out = ["| binary | " + " | ".join("%s passed / failed / skipped" % PLATFORM_NAMES[p]
                                      for p in plats) + " |",
           "|---|" + "---|" * len(plats)]
    totals = {p: [0, 0, 0] for p in plats}
    for b in binaries:
        cells = []
        for p in plats:
            r = data[p].get(b)
            cells.append(cell(r))
            if r:
                for i, k in enumerate(("passed", "failed", "skipped")):
                    totals[p][i] += r["counts"][k]
        out.append("| %s | %s |" % (b, " | ".join(cells)))
    out.append("| **total** | %s |" % " | ".join("**%d / %d / %d**" % tuple(totals[p])
                                                 for p in plats))
    if "pyplat" in plats and "pocl" in plats:
        out += ["", "Subtests failing on PyPlat that pass on PoCL:", ""]
        n = 0
        for b in binaries:
            mine, theirs = data["pyplat"].get(b), data["pocl"].get(b)
            if not mine or not theirs:
                continue
            for name, st in mine["subtests"].items():
                if st != "pass" and st != "skip" and theirs["subtests"].get(name) == "pass":
                    n += 1
                    out.append("- %s %s (%s): `%s`" % (b, name, st,
                                                       rerun_command("pyplat", mine, name)))
                    for line in mine["failures"].get(name, [])[:6]:
                        out.append("      " + line[:160])
        if not n:
            out.append("- none")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cts-dir", default="/tmp/cts-build",
                    help="tools/cts_build.sh's build directory, or any directory holding the "
                         "binaries (searched recursively; default %(default)s)")
    ap.add_argument("--platform", choices=("pyplat", "pocl", "both"), default="both")
    ap.add_argument("--binaries", default=",".join(BINARIES),
                    help="comma-separated (default: the 22 of docs/conformance.md)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per binary")
    ap.add_argument("--jobs", type=int, default=1, help="binaries run at once")
    ap.add_argument("--out", default="cts-results")
    ap.add_argument("--args", action="append", default=[], metavar="BINARY=ARGS",
                    help="arguments for one binary instead of the defaults (subtest names too)")
    a = ap.parse_args(argv)
    extra = {k: list(v) for k, v in DEFAULT_ARGS.items()}
    for spec in a.args:
        name, _, rest = spec.partition("=")
        extra[name] = shlex.split(rest)
    plats = ["pyplat", "pocl"] if a.platform == "both" else [a.platform]
    names = [b for b in a.binaries.split(",") if b]
    os.makedirs(a.out, exist_ok=True)
    store = os.path.join(a.out, "cts.json")
    try:
        with open(store) as f:
            data = json.load(f)
    except (OSError, ValueError):
        data = {}
    tmp = tempfile.mkdtemp(prefix="cts-")
    try:
        vendors = {p: vendors_dir(p, tmp) for p in plats}
        jobs = []
        for b in names:
            path = find_binary(a.cts_dir, b)
            if path is None:
                print("cts.py: %s not found under %s (skipped)" % (b, a.cts_dir), file=sys.stderr)
                continue
            for p in plats:
                jobs.append((p, b, path))
        with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
            futs = {pool.submit(run_one, p, vendors[p], b, path, extra.get(b, []), a.timeout,
                                os.path.join(a.out, "logs", p)): (p, b) for p, b, path in jobs}
            for fut in concurrent.futures.as_completed(futs):
                r = fut.result()
                data.setdefault(r["platform"], {})[r["binary"]] = r
                print("%-7s %-24s %s" % (PLATFORM_NAMES[r["platform"]], r["binary"], cell(r)),
                      flush=True)
                with open(store + ".part", "w") as f:
                    json.dump(data, f, indent=1)
                os.replace(store + ".part", store)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    md = markdown(data)
    with open(os.path.join(a.out, "cts.md"), "w") as f:
        f.write(md)
    print(md)
    failed = any(r["counts"]["failed"] for p in plats for r in data.get(p, {}).values()
                 if r["binary"] in names)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
