"""The conformance runner: ``pyplat conformance [--platform SUBSTR] [--quick] [--json FILE]
[CATEGORY...]`` (also ``python -m pyplat.conformance``).

Each category runs in a child process of its own (``--no-isolate`` runs them in this process):
a check that crashes the platform or hangs past ``--timeout`` is reported as failed and the
category goes on in a fresh child from the next check. The child reports each check as one JSON
line on a pipe; this process draws the progress bar (stderr; plain lines when stderr is not a
terminal), prints each failure and ``PASSED n of m`` per category (stdout), then the table.
"""
import argparse
import ctypes
import importlib
import json
import os
import select
import subprocess
import sys
import time

from . import clapi as C
from .framework import Env, Result, run_check

CATEGORIES = ["api", "computeinfo", "buffers", "events", "basic", "compiler", "math", "images", "atomics", "printf", "profiling", "thread_dimensions", "multi_device", "conversions", "integer_ops", "relationals", "commonfns", "geometrics", "vectors"]
DEFAULT_PLATFORM = "PyPlat"


def load_category(name):
    return importlib.import_module(f".cat_{name}", __package__).CATEGORY


def selected_checks(category, quick):
    return [c for c in category.checks if c.quick or not quick]


# --- Platform selection ----------------------------------------------------------------------------

def platforms(lib):
    n = C.cl_uint(0)
    code = lib.clGetPlatformIDs(0, None, ctypes.byref(n))
    if code != C.CL_SUCCESS or n.value == 0:
        return []
    arr = (C.c_void_p * n.value)()
    C.ok(lib.clGetPlatformIDs(n.value, arr, None), "clGetPlatformIDs")
    out = []
    for p in arr:
        out.append((p, C.info(lib.clGetPlatformInfo, p, C.CL_PLATFORM_NAME)))
    return out


def select_env(args):
    lib = C.library()
    found = platforms(lib)
    chosen = [(p, name) for p, name in found if args.platform.lower() in name.lower()]
    if not chosen:
        names = ", ".join(repr(n) for _, n in found) or "none"
        raise SystemExit(f"pyplat conformance: no platform matches {args.platform!r} "
                         f"(platforms: {names})")
    p = chosen[0][0]
    n = C.cl_uint(0)
    C.ok(lib.clGetDeviceIDs(p, C.CL_DEVICE_TYPE_ALL, 0, None, ctypes.byref(n)), "clGetDeviceIDs")
    devs = (C.c_void_p * n.value)()
    C.ok(lib.clGetDeviceIDs(p, C.CL_DEVICE_TYPE_ALL, n.value, devs, None), "clGetDeviceIDs")
    return Env(lib, p, devs[device_index(lib, devs, args.device)], quick=args.quick, seed=args.seed,
               timeout=args.timeout)


def device_index(lib, devs, wanted):
    """--device: an index in the platform, or the first device whose name contains the text
    (case-insensitive)."""
    names = [C.info(lib.clGetDeviceInfo, d, C.CL_DEVICE_NAME) for d in devs]
    if str(wanted).isdigit():
        if int(wanted) < len(devs):
            return int(wanted)
        raise SystemExit(f"pyplat conformance: the platform has {len(devs)} device(s), no --device {wanted}")
    for i, name in enumerate(names):
        if str(wanted).lower() in name.lower():
            return i
    raise SystemExit(f"pyplat conformance: no device name contains {wanted!r} "
                     f"(devices: {', '.join(repr(n) for n in names)})")


def maybe_enable_pyplat(platform_filter):
    """Make PyPlat visible to the loader (before it initialises) when the filter can match it."""
    if platform_filter.lower() not in DEFAULT_PLATFORM.lower():
        return None
    try:
        from pyplat import discovery
    except ImportError:
        return None
    try:
        return discovery.enable()
    except FileNotFoundError as e:
        print(f"pyplat conformance: PyPlat's ICD library not found ({e}); only the installed "
              "platforms are visible", file=sys.stderr)
        return None


# --- Progress --------------------------------------------------------------------------------------

class Progress:
    WIDTH = 28

    def __init__(self, stream, category, total):
        self.stream, self.category, self.total = stream, category, total
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.done = 0

    def current(self, name):
        if self.tty:
            filled = int(self.WIDTH * self.done / max(1, self.total))
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            self.stream.write(f"\r\033[K{self.category:<12} [{bar}] {self.done:>3}/{self.total} "
                              f"{name[:40]}")
            self.stream.flush()

    def finished(self, result):
        self.done += 1
        if self.tty:
            self.current(result.name)
        else:
            self.stream.write(f"[{self.category} {self.done}/{self.total}] {result.name}: "
                              f"{result.status}\n")
            self.stream.flush()

    def close(self):
        if self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()


# --- Running a category ----------------------------------------------------------------------------

def run_in_process(env, category, checks, progress):
    results = []
    for check in checks:
        progress.current(check.name)
        r = run_check(check, env)
        progress.finished(r)
        results.append(r)
    return results


def child_argv(args, name, start):
    module = f"{__package__}.runner"
    argv = [sys.executable, "-m", module, "--child", name, "--start", str(start),
            "--platform", args.platform, "--device", str(args.device), "--seed", str(args.seed),
            "--timeout", str(args.timeout)]
    if args.quick:
        argv.append("--quick")
    return argv


def _package_parent():
    """The directory holding the top-level package this runner belongs to."""
    parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if __package__ and "." in __package__:  # pyplat.conformance: go one more level up
        parent = os.path.dirname(parent)
    return parent


def _child_env(category=None):
    env = dict(os.environ)
    if category == "multi_device":  # PyPlat shows one device unless told otherwise
        env.setdefault("PYPLAT_DEVICES", "2")
    # The child imports this very package: make its parent directory importable.
    parent = _package_parent()
    env["PYTHONPATH"] = parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_isolated(args, category, checks, progress):
    results = [None] * len(checks)
    start = 0
    while start < len(checks):
        r_fd, w_fd = os.pipe()
        argv = child_argv(args, category.name, start) + ["--report-fd", str(w_fd)]
        # cwd: `python -m` puts the working directory first on sys.path, and a source checkout
        # there would shadow the installed package.
        proc = subprocess.Popen(argv, pass_fds=(w_fd,), env=_child_env(category.name),
                                cwd=_package_parent())
        os.close(w_fd)
        current, began, buf = None, time.monotonic(), b""
        timed_out = False
        with os.fdopen(r_fd, "rb", buffering=0) as pipe:
            while True:
                ready, _, _ = select.select([pipe], [], [], 0.2)
                if ready:
                    chunk = pipe.read(65536)
                    if not chunk:
                        break
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        rec = json.loads(line)
                        if "start" in rec:
                            current, began = rec["start"], time.monotonic()
                            progress.current(checks[current].name)
                        elif "result" in rec:
                            res = Result(**rec["result"])
                            results[rec["index"]] = res
                            progress.finished(res)
                            current = None
                if current is not None and time.monotonic() - began > args.timeout:
                    proc.kill()
                    timed_out = True
                    break
        status = proc.wait()
        if current is None and all(r is not None for r in results[start:]):
            break
        if current is None:  # died between checks (setup): blame the next one
            current = next(i for i in range(start, len(checks)) if results[i] is None)
        if timed_out:
            why = f"timed out after {args.timeout:g} s (the child was killed)"
        elif status < 0:
            why = f"the process crashed with signal {-status} during this check"
        else:
            why = f"the process exited with status {status} during this check"
        res = Result(checks[current].name, "fail", why, 0.0)
        results[current] = res
        progress.finished(res)
        start = current + 1
    return results


def child_main(args):
    category = load_category(args.child)
    checks = selected_checks(category, args.quick)
    out = os.fdopen(args.report_fd, "w", buffering=1)
    env = select_env(args)
    try:
        for i in range(args.start, len(checks)):
            out.write(json.dumps({"start": i}) + "\n")
            r = run_check(checks[i], env)
            out.write(json.dumps({"index": i, "result": r.as_dict()}) + "\n")
    finally:
        out.flush()
    out.close()
    # Platforms' worker threads and atexit handlers are not our business: leave at once.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# --- Reporting -------------------------------------------------------------------------------------

def summarize(name, results, seconds, skipped_reason=None):
    counts = {s: sum(1 for r in results if r.status == s) for s in ("pass", "fail", "skip")}
    return {"name": name, "passed": counts["pass"], "failed": counts["fail"],
            "skipped": counts["skip"], "seconds": round(seconds, 2),
            "skip_reason": skipped_reason, "checks": [r.as_dict() for r in results]}


def print_category(summary, out):
    for c in summary["checks"]:
        if c["status"] == "fail":
            text = c["message"].replace("\n", "\n    ")
            out.write(f"FAIL {summary['name']}/{c['name']}:\n    {text}\n")
    ran = summary["passed"] + summary["failed"]
    if summary["skip_reason"]:
        out.write(f"{summary['name']}: SKIPPED ({summary['skip_reason']})\n")
        return
    word = "PASSED" if summary["failed"] == 0 else "FAILED"
    n = summary["passed"] if word == "PASSED" else summary["failed"]
    extra = f", {summary['skipped']} skipped" if summary["skipped"] else ""
    out.write(f"{summary['name']}: {word} {n} of {ran}{extra}\n")
    out.flush()


def table(summaries):
    rows = [("category", "passed", "failed", "skipped", "seconds")]
    tot = [0, 0, 0, 0.0]
    for s in summaries:
        skipped = s["skipped"] if not s["skip_reason"] else "all"
        rows.append((s["name"], str(s["passed"]), str(s["failed"]), str(skipped), f"{s['seconds']:.1f}"))
        tot[0] += s["passed"]
        tot[1] += s["failed"]
        tot[2] += s["skipped"]
        tot[3] += s["seconds"]
    rows.append(("total", str(tot[0]), str(tot[1]), str(tot[2]), f"{tot[3]:.1f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = []
    for j, r in enumerate(rows):
        lines.append("  ".join(r[0].ljust(widths[0]) if i == 0 else r[i].rjust(widths[i])
                               for i in range(5)))
        if j == 0 or j == len(rows) - 2:
            lines.append("-" * len(lines[-1]))
    return "\n".join(lines)


# --- Command line ----------------------------------------------------------------------------------

def parser():
    p = argparse.ArgumentParser(
        prog="pyplat conformance",
        description="A conformance-style subset of OpenCL checks, run through the system ICD "
                    "loader against one platform (PyPlat by default).")
    p.add_argument("categories", nargs="*", metavar="CATEGORY",
                   help=f"categories to run (default: all): {', '.join(CATEGORIES)}")
    p.add_argument("--platform", default=DEFAULT_PLATFORM,
                   help="the first platform whose name contains this (case-insensitive; "
                        "default: %(default)s)")
    p.add_argument("--device", default="0",
                   help="device: its index in the platform, or a part of its name (default 0)")
    p.add_argument("--quick", action="store_true", help="fewer samples and the quick checks only")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.add_argument("--list", action="store_true", help="list the categories and checks")
    p.add_argument("--no-isolate", dest="isolate", action="store_false",
                   help="run every category in this process (a crash ends the run)")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds one check may take (default %(default)s; isolated runs only)")
    p.add_argument("--seed", type=int, default=1234, help="random seed of sampled inputs")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--report-fd", type=int, help=argparse.SUPPRESS)
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    maybe_enable_pyplat(args.platform)
    if args.child:
        return child_main(args)
    names = args.categories or CATEGORIES
    unknown = [n for n in names if n not in CATEGORIES]
    if unknown:
        print(f"pyplat conformance: unknown categories {', '.join(unknown)} (known: "
              f"{', '.join(CATEGORIES)})", file=sys.stderr)
        return 2
    if args.list:
        for n in names:
            cat = load_category(n)
            print(f"{n}: {cat.doc}")
            for c in cat.checks:
                print(f"  {c.name}{'' if c.quick else ' (full runs only)'}: {c.doc}")
        return 0
    try:
        env = select_env(args)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    out = sys.stdout
    out.write(f"Platform: {env.platform_name} ({env.platform_info(C.CL_PLATFORM_VERSION)})\n"
              f"Device:   {env.device_name} ({env.device_info(C.CL_DEVICE_VERSION)})\n"
              f"Mode:     {'quick' if args.quick else 'full'}, seed {args.seed}\n\n")
    out.flush()
    summaries = []
    for n in names:
        cat = load_category(n)
        checks = selected_checks(cat, args.quick)
        reason = cat.requires(env) if cat.requires else None
        t0 = time.monotonic()
        if reason:
            summaries.append(summarize(n, [], 0.0, reason))
            print_category(summaries[-1], out)
            continue
        progress = Progress(sys.stderr, n, len(checks))
        try:
            if args.isolate:
                results = run_isolated(args, cat, checks, progress)
            else:
                results = run_in_process(env, cat, checks, progress)
        finally:
            progress.close()
        summaries.append(summarize(n, results, time.monotonic() - t0))
        print_category(summaries[-1], out)
    out.write("\n" + table(summaries) + "\n")
    failed = sum(s["failed"] for s in summaries)
    report = {"platform": env.platform_name, "platform_version": env.platform_info(C.CL_PLATFORM_VERSION),
              "device": env.device_name, "device_version": env.device_info(C.CL_DEVICE_VERSION),
              "quick": args.quick, "seed": args.seed,
              "passed": sum(s["passed"] for s in summaries), "failed": failed,
              "skipped": sum(s["skipped"] for s in summaries), "categories": summaries}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    out.flush()
    env.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
