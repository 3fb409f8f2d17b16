#!/usr/bin/env python3
"""Run pyopencl's own test suite against PyPlat (and PoCL, side by side).

    python tools/pyopencl_suite.py [--platform PyPlat|Portable|both|NAME] [--timeout S]
                                   [-k EXPR] [--jobs N] [--json PATH] [--failures] [FILES...] [-- PYTEST_ARGS]

The tests come from the sdist of the *installed* pyopencl version: downloaded once with
``pip download --no-binary pyopencl --no-deps pyopencl==<version>`` into the cache directory
(``$XDG_CACHE_HOME/pyplat/pyopencl-sdist``, else ``~/.cache/pyplat/pyopencl-sdist``; ``--cache``
overrides), and the sdist's ``test/`` directory is extracted next to it. Each test file then runs
in its own ``python -m pytest`` subprocess with

  * ``PYOPENCL_TEST=<platform>``: pyopencl's tests run on every device of the first platform whose
    "name vendor" contains that string, case-insensitively (pyopencl.tools._find_cl_obj);
  * ``OCL_ICD_VENDORS`` = pyplat.discovery's merged vendors directory (what ``pyplat.enable()``
    sets): PyPlat next to the installed platforms;
  * a temporary working directory, so that no source checkout shadows the installed pyplat;
  * a wall-clock timeout per file: the process group is killed and the file reported as
    ``timeout``; a process that dies of a signal is reported as ``crash (SIGxxx)``. Both keep the
    counts of the tests that finished and name the test that was running.

Results come from a small pytest plugin that appends one JSON line per test outcome to a file as
it happens, so they survive a crash. Exit status: 0 when every file ran to its end (failures in
the tests do not count), 1 when a file crashed, timed out or could not run, 2 on usage errors.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

DEFAULT_FILES = ["test_array.py", "test_algorithm.py", "test_clmath.py", "test_clrandom.py",
                 "test_wrapper.py"]
PLATFORM_ALIASES = {"pyplat": "PyPlat", "pocl": "Portable", "portable": "Portable"}
DEFAULT_TIMEOUT = 900.0

# --- pyplat.discovery -------------------------------------------------------------------------


def _discovery():
    """pyplat.discovery, imported; from this checkout's file when pyplat is not importable
    (the module imports nothing else of PyPlat)."""
    try:
        from pyplat import discovery
        return discovery
    except ImportError:
        import importlib.util
        path = Path(__file__).resolve().parent.parent / "pyplat" / "discovery.py"
        spec = importlib.util.spec_from_file_location("_pyplat_discovery", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


_FIND_SHIM = "import pyplat.discovery as d; print(d.shim_path())"


def installed_shim(python):
    """Path of the libpyplat-icd.so that `python` has installed (asked from a temporary cwd, so
    that a source checkout does not answer), or None."""
    override = os.environ.get("PYPLAT_ICD_LIBRARY")
    if override:
        return Path(override)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([python, "-c", _FIND_SHIM], cwd=tmp, env=env, capture_output=True,
                           text=True, timeout=120)
    if r.returncode != 0:
        return None
    return Path(r.stdout.strip())


def suite_environment(python, platform):
    """Environment for the pytest children: PyPlat visible (merged vendors directory, as
    pyplat.enable() sets), PYOPENCL_TEST=platform, no PYTHONPATH."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PYOPENCL_CTX", None)
    shim = installed_shim(python)
    if shim is not None:
        env = _discovery().environment(env, library=shim)
    env["PYOPENCL_TEST"] = platform
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env, shim


# --- The sdist ----------------------------------------------------------------------------------


class SdistUnavailable(RuntimeError):
    """The pyopencl sdist could not be downloaded (no network, no such version...)."""


def installed_pyopencl_version(python=None):
    python = python or sys.executable
    code = "import importlib.metadata as m; print(m.version('pyopencl'))"
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([python, "-c", code], cwd=tmp, capture_output=True, text=True,
                           timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"pyopencl is not installed for {python}: {r.stderr.strip()[-300:]}")
    return r.stdout.strip()


def default_cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pyplat" / "pyopencl-sdist"


def _download_sdist(version, cache, python):
    """pip download the sdist into `cache`; returns its path. Build dependencies (needed by pip
    to read the sdist's metadata) come as wheels: ``--no-binary :all:`` would build numpy & co.
    from source."""
    with tempfile.TemporaryDirectory(dir=cache, prefix=".download-") as tmp:
        cmd = [python, "-m", "pip", "download", "--no-deps", "--no-binary", "pyopencl",
               "--disable-pip-version-check", "-d", tmp, f"pyopencl=={version}"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise SdistUnavailable(f"`{' '.join(cmd)}` took more than 600 s") from None
        found = sorted(Path(tmp).glob(f"pyopencl-{version}.tar.gz"))
        if r.returncode != 0 or not found:
            tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-8:])
            raise SdistUnavailable(f"`{' '.join(cmd)}` failed (exit {r.returncode}):\n{tail}")
        target = cache / found[0].name
        os.replace(found[0], target)
        return target


def _pytest_ini(tests, sdist_top):
    """pytest.ini for the extracted tests: the markers of the sdist's [tool.pytest.ini_options]
    (unknown markers would warn)."""
    markers = []
    try:
        import tomllib
        data = tomllib.loads((sdist_top / "pyproject.toml").read_text())
        markers = data.get("tool", {}).get("pytest", {}).get("ini_options", {}).get("markers", [])
    except Exception:
        pass
    lines = ["[pytest]", "markers ="] + [f"    {m}" for m in markers]
    (tests / "pytest.ini").write_text("\n".join(lines) + "\n")


def fetch_tests(version=None, cache=None, python=None):
    """The directory holding pyopencl's test files for `version` (default: the installed one).

    Returns ``(test_dir, how)`` where `how` is "cached" (extracted before), "extracted" (sdist in
    the cache, extracted now) or "downloaded". Raises SdistUnavailable when pip cannot get it.
    """
    python = python or sys.executable
    version = version or installed_pyopencl_version(python)
    cache = Path(cache) if cache else default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    dest = cache / f"pyopencl-{version}"
    tests = dest / "test"
    done = dest / ".complete"
    if done.is_file() and tests.is_dir():
        return tests, "cached"
    sdist = cache / f"pyopencl-{version}.tar.gz"
    how = "extracted"
    if not sdist.is_file():
        sdist = _download_sdist(version, cache, python)
        how = "downloaded"
    staging = Path(tempfile.mkdtemp(dir=cache, prefix=".extract-"))
    try:
        with tarfile.open(sdist) as tar:
            top = None
            members = []
            for m in tar.getmembers():
                parts = Path(m.name).parts
                if len(parts) < 2 or ".." in parts or Path(m.name).is_absolute():
                    continue
                top = top or parts[0]
                if parts[0] != top:
                    continue
                if (parts[1] == "test" and len(parts) > 2 and m.isfile()) or \
                        (parts[1:] == ("pyproject.toml",) and m.isfile()):
                    members.append(m)
            if not any(Path(m.name).parts[1] == "test" for m in members):
                raise RuntimeError(f"{sdist} has no test/ directory")
            kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(staging, members=members, **kwargs)
        src_top = staging / top
        _pytest_ini(src_top / "test", src_top)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(src_top, dest)
        done.write_text(f"{sdist.name}\n")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return tests, how


# --- Running one file ---------------------------------------------------------------------------

# Loaded into each pytest child with -p: one JSON line per outcome, flushed at once, so the
# results of a run that crashes or is killed are still there.
_PLUGIN = r'''
import json, os

_path = os.environ["PYPLAT_SUITE_EVENTS"]
_out = open(_path, "a", buffering=1)


def _write(**record):
    _out.write(json.dumps(record) + "\n")
    _out.flush()


def _message(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        text = crash.message
    elif isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        text = str(report.longrepr[2])
    else:
        text = str(report.longrepr or "")
    return text.strip()[:2000]


def pytest_runtest_logstart(nodeid, location):
    _write(event="start", nodeid=nodeid)


def pytest_collectreport(report):
    if report.failed:
        _write(event="outcome", nodeid=report.nodeid or "<collection>", outcome="error",
               phase="collect", message=_message(report))


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and not report.passed) or \
            (report.when == "teardown" and report.failed):
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        elif report.skipped:
            outcome = "skipped"
        elif report.passed:
            outcome = "passed"
        elif report.when == "call":
            outcome = "failed"
        else:
            outcome = "error"
        _write(event="outcome", nodeid=report.nodeid, outcome=outcome, phase=report.when,
               seconds=round(report.duration, 3),
               message=_message(report) if outcome in ("failed", "error", "skipped") else "")
'''

OUTCOMES = ("passed", "failed", "errors", "skipped", "xfailed", "xpassed")
_OUTCOME_KEY = {"passed": "passed", "failed": "failed", "error": "errors", "skipped": "skipped",
                "xfailed": "xfailed", "xpassed": "xpassed"}
_PYTEST_EXIT = {0: "ok", 1: "ok", 2: "interrupted", 3: "internal error", 4: "usage error",
                5: "no tests"}


def _kill_group(proc):
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 30)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_file(test_dir, name, platform, *, timeout=DEFAULT_TIMEOUT, kexpr=None, python=None,
             env=None, pytest_args=()):
    """Run one test file of `test_dir` with pytest on `platform`; returns a result dict."""
    python = python or sys.executable
    test_dir = Path(test_dir)
    result = {"file": name, "platform": platform, "status": None, "returncode": None,
              **{k: 0 for k in OUTCOMES}, "seconds": 0.0, "running": None, "failures": [],
              "skip_reasons": {}, "log_tail": ""}
    path = test_dir / name
    if not path.is_file():
        result["status"] = "missing"
        return result
    if env is None:
        env, _ = suite_environment(python, platform)
    with tempfile.TemporaryDirectory(prefix="pyopencl-suite-") as tmp:
        tmp = Path(tmp)
        (tmp / "pyplat_suite_plugin.py").write_text(_PLUGIN)
        events = tmp / "events.jsonl"
        log = tmp / "pytest.log"
        child_env = dict(env)
        child_env["PYTHONPATH"] = str(tmp)
        child_env["PYPLAT_SUITE_EVENTS"] = str(events)
        cmd = [python, "-m", "pytest", "-c", str(test_dir / "pytest.ini"),
               "--rootdir", str(test_dir), "-p", "pyplat_suite_plugin", "-p", "no:cacheprovider",
               "-q", "-rN", "--tb=short", str(path)]
        if kexpr:
            cmd += ["-k", kexpr]
        cmd += list(pytest_args)
        workdir = tmp / "cwd"
        workdir.mkdir()
        start = time.monotonic()
        with open(log, "wb") as logf:
            proc = subprocess.Popen(cmd, cwd=workdir, env=child_env, stdin=subprocess.DEVNULL,
                                    stdout=logf, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                rc = proc.wait(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                rc, timed_out = proc.returncode, True
            # Children of pytest (if any) must not outlive it.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        result["seconds"] = round(time.monotonic() - start, 1)
        result["returncode"] = rc
        started = []
        finished = set()
        if events.is_file():
            for line in events.read_text(errors="replace").splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # a line cut by the kill
                if rec["event"] == "start":
                    started.append(rec["nodeid"])
                    continue
                result[_OUTCOME_KEY[rec["outcome"]]] += 1
                finished.add(rec["nodeid"])
                if rec["outcome"] in ("failed", "error"):
                    result["failures"].append({"nodeid": rec["nodeid"], "outcome": rec["outcome"],
                                               "phase": rec.get("phase"),
                                               "message": rec.get("message", "")})
                elif rec["outcome"] == "skipped":
                    reason = rec.get("message", "").splitlines()
                    reason = reason[-1] if reason else ""
                    result["skip_reasons"][reason] = result["skip_reasons"].get(reason, 0) + 1
        unfinished = [n for n in started if n not in finished]
        text = log.read_bytes().decode(errors="replace")
        result["log_tail"] = "\n".join(text.splitlines()[-80:])
    if timed_out:
        result["status"] = "timeout"
    elif rc < 0:
        try:
            result["status"] = f"crash ({signal.Signals(-rc).name})"
        except ValueError:
            result["status"] = f"crash (signal {-rc})"
    else:
        result["status"] = _PYTEST_EXIT.get(rc, f"exit {rc}")
    if result["status"] not in ("ok", "no tests"):
        if unfinished:
            result["running"] = unfinished[-1]
        elif started and result["status"].startswith("crash"):
            result["running"] = "(no test: after the last one, at interpreter exit)"
    return result


# --- Reporting ----------------------------------------------------------------------------------

def format_table(results):
    head = ["file", "platform", "status", "passed", "failed", "errors", "skipped", "seconds"]
    rows = []
    for r in results:
        status = r["status"]
        rows.append([r["file"], r["platform"], status, str(r["passed"]), str(r["failed"]),
                     str(r["errors"]), str(r["skipped"] + r["xfailed"]), f"{r['seconds']:.1f}"])
    by_platform = {}
    for r in results:
        t = by_platform.setdefault(r["platform"], {k: 0 for k in OUTCOMES} | {"seconds": 0.0})
        for k in OUTCOMES + ("seconds",):
            t[k] += r[k]
    if len(results) > len(by_platform):
        for p, t in by_platform.items():
            rows.append(["(total)", p, "", str(t["passed"]), str(t["failed"]), str(t["errors"]),
                         str(t["skipped"] + t["xfailed"]), f"{t['seconds']:.1f}"])
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    right = {3, 4, 5, 6, 7}

    def fmt(row):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(row, widths)))
    lines = [fmt(head), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]
    for r in results:
        if r["running"]:
            lines.append(f"{r['platform']} {r['file']}: {r['status']} while running {r['running']}")
    return "\n".join(lines)


def format_failures(results):
    lines = []
    for r in results:
        if r["skip_reasons"]:
            lines.append(f"== {r['platform']} {r['file']}: skip reasons")
            for reason, n in sorted(r["skip_reasons"].items(), key=lambda x: -x[1]):
                lines.append(f"  {n:4}  {reason[:300]}")
        if not r["failures"]:
            continue
        lines.append(f"== {r['platform']} {r['file']}: {len(r['failures'])} failed/errors")
        for f in r["failures"]:
            msg = f["message"].splitlines()
            first = next((m for m in msg if m.strip()), "")
            lines.append(f"  {f['outcome']:6} {f['nodeid']}\n         {first[:300]}")
    return "\n".join(lines)


def resolve_platforms(choice):
    if choice.lower() == "both":
        return ["PyPlat", "Portable"]
    return [PLATFORM_ALIASES.get(p.lower(), p) for p in choice.split(",") if p]


def probe_platform(python, env):
    """Names of the platforms pyopencl sees in `env` (None and the error when it cannot)."""
    code = ("import os, pyopencl as cl, pyopencl.tools as t\n"
            "print([p.name for p in cl.get_platforms()])\n"
            "print(t.get_test_platforms_and_devices()[0][0].name)\n")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            r = subprocess.run([python, "-c", code], cwd=tmp, env=env, capture_output=True,
                               text=True, timeout=180)
        except subprocess.TimeoutExpired:
            return None, "timed out listing platforms"
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
    return r.stdout.strip().splitlines()[-1], None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help=f"test files (default: {' '.join(DEFAULT_FILES)})")
    ap.add_argument("--platform", default="both",
                    help="PyPlat, Portable (PoCL), both, or any PYOPENCL_TEST platform string; "
                         "comma-separated for several (default: both)")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                    help=f"seconds per file and platform (default {DEFAULT_TIMEOUT:.0f})")
    ap.add_argument("-k", dest="kexpr", help="pytest -k expression")
    ap.add_argument("--jobs", "-j", type=int, default=1,
                    help="files run at once (default 1; >1 skews the seconds)")
    ap.add_argument("--json", dest="json_path", help="write the results as JSON here ('-': stdout)")
    ap.add_argument("--failures", action="store_true",
                    help="list every failed test with the first line of its message")
    ap.add_argument("--cache", help="sdist cache directory (default: "
                                    "$XDG_CACHE_HOME/pyplat/pyopencl-sdist)")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter running pytest (needs pyopencl, pytest, and PyPlat installed)")
    ap.add_argument("--pyopencl-version", help="sdist version (default: the installed pyopencl's)")
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:  # after --: more pytest arguments
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    args = ap.parse_args(argv)

    try:
        test_dir, how = fetch_tests(args.pyopencl_version, args.cache, args.python)
    except SdistUnavailable as e:
        print(f"pyopencl sdist unavailable: {e}", file=sys.stderr)
        return 1
    print(f"pyopencl tests: {test_dir} ({how})", file=sys.stderr)
    files = args.files or DEFAULT_FILES

    jobs = []
    not_run = []
    for platform in resolve_platforms(args.platform):
        env, shim = suite_environment(args.python, platform)
        if shim is None and platform == "PyPlat":
            print("warning: PyPlat is not installed for this interpreter", file=sys.stderr)
        chosen, error = probe_platform(args.python, env)
        if chosen is None:
            print(f"platform {platform!r}: not available ({error})", file=sys.stderr)
            for f in files:
                not_run.append({"file": f, "platform": platform, "status": "no platform",
                                "returncode": None, **{k: 0 for k in OUTCOMES}, "seconds": 0.0,
                                "running": None, "failures": [], "skip_reasons": {},
                                "log_tail": error})
            continue
        print(f"platform {platform!r}: PYOPENCL_TEST selects {chosen!r}", file=sys.stderr)
        for f in files:
            jobs.append((f, platform, env))

    def one(job):
        f, platform, env = job
        r = run_file(test_dir, f, platform, timeout=args.timeout, kexpr=args.kexpr,
                     python=args.python, env=env, pytest_args=extra)
        print(f"  {platform:9} {f:20} {r['status']:14} {r['passed']} passed, {r['failed']} failed,"
              f" {r['errors']} errors, {r['skipped'] + r['xfailed']} skipped in {r['seconds']:.0f} s",
              file=sys.stderr, flush=True)
        return r

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(one, jobs)) + not_run
    order = {f: i for i, f in enumerate(files)}
    results.sort(key=lambda r: (order.get(r["file"], 0), r["platform"] != "PyPlat"))

    print(format_table(results))
    if args.failures:
        print(format_failures(results))
    if args.json_path:
        payload = json.dumps({"pyopencl_tests": str(test_dir), "results": results}, indent=1)
        if args.json_path == "-":
            print(payload)
        else:
            Path(args.json_path).write_text(payload + "\n")
    bad = [r for r in results if r["status"] not in ("ok", "no tests")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
