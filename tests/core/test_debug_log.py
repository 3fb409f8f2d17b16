"""PYPLAT_DEBUG (pyplat/log.py, api/diagnostics.py): every API error reaches stderr with its
entry point, code and reason when `err` is on, and the notify callback of the context the call
was about, always; `build` and `cache` say what the compiler and its cache did. Through the same
ctypes callbacks the ICD shim calls (tests/support/capi.py)."""
import ctypes
import os
import re

import pytest

from support.capi import CL, addr, err
from support.clobjects import first_device
from pyplat import cl, config

NOTIFY = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)


@pytest.fixture
def debug(monkeypatch):
    def set_categories(text):
        monkeypatch.setenv("PYPLAT_DEBUG", text)
        config.reload()
    yield set_categories
    monkeypatch.delenv("PYPLAT_DEBUG", raising=False)
    config.reload()


def context_with_notify(messages):
    def on_error(message, private_info, size, user_data):
        messages.append(message.decode())
    callback = NOTIFY(on_error)
    dev = ctypes.c_size_t(first_device())
    e = err()
    ctx = CL.clCreateContext(0, 1, addr(dev), ctypes.cast(callback, ctypes.c_void_p).value, 0, addr(e))
    assert e.value == 0
    return ctx, callback


def test_err_prints_entry_code_and_reason_and_notifies_the_context(debug, capfd):
    debug("err")
    messages = []
    ctx, keep = context_with_notify(messages)
    e = err()
    assert CL.clCreateBuffer(ctx, cl.CL_MEM_READ_WRITE, 0, 0, addr(e)) == 0
    assert e.value == cl.CL_INVALID_BUFFER_SIZE
    lines = [line for line in capfd.readouterr().err.splitlines() if line.startswith("pyplat[err]")]
    assert len(lines) == 1
    assert lines[0].startswith("pyplat[err]: clCreateBuffer returned CL_INVALID_BUFFER_SIZE: ")
    reason = lines[0].split("CL_INVALID_BUFFER_SIZE: ", 1)[1]
    assert "size" in reason                                   # the check's own words
    assert messages == [lines[0][len("pyplat[err]: "):]]
    assert CL.clReleaseContext(ctx) == 0


def test_errors_are_silent_without_err_but_still_reach_the_notify_callback(debug, capfd):
    debug("")
    messages = []
    ctx, keep = context_with_notify(messages)
    assert CL.clRetainMemObject(0) == cl.CL_INVALID_MEM_OBJECT        # no context to tell
    assert CL.clGetContextInfo(ctx, 0x7fff, 0, 0, 0) == cl.CL_INVALID_VALUE
    assert "pyplat[" not in capfd.readouterr().err
    assert len(messages) == 1 and messages[0].startswith("clGetContextInfo returned CL_INVALID_VALUE")
    assert CL.clReleaseContext(ctx) == 0


def test_build_and_cache_say_what_the_compiler_did(debug, capfd, tmp_path, monkeypatch):
    from pyplat.compiler import build
    monkeypatch.setenv("PYPLAT_CACHE_DIR", str(tmp_path))
    debug("build,cache")
    src = "__kernel void k(__global int *a) { a[get_global_id(0)] = 1; }"
    assert build(src).ok
    first = capfd.readouterr().err
    assert "pyplat[cache]: miss " in first and "pyplat[cache]: stored " in first
    assert "pyplat[build]: program for the host compiled in " in first and "1 kernels" in first
    assert build("/* edited */ " + src).ok
    second = capfd.readouterr().err
    assert "pyplat[cache]: hit " in second and "pyplat[build]: program for the host from the cache" in second


def test_an_unknown_category_is_reported_once_and_logs_nothing(debug, capfd):
    debug("err,bogus")
    assert config.value("PYPLAT_DEBUG") == frozenset()
    assert "PYPLAT_DEBUG='err,bogus'" in capfd.readouterr().err
    debug("all")
    assert config.value("PYPLAT_DEBUG") == frozenset(config.DEBUG_CATEGORIES)


def test_refcounts_and_events_say_what_happened_to_objects_and_commands(debug, capfd):
    from support.clobjects import make_context, make_queue
    debug("refcounts,events")
    ctx, dev = make_context()
    q = make_queue(ctx, dev)
    e = err()
    buf = CL.clCreateBuffer(ctx, cl.CL_MEM_READ_WRITE, 64, 0, addr(e))
    assert e.value == 0
    assert CL.clRetainMemObject(buf) == 0 and CL.clReleaseMemObject(buf) == 0
    pattern = ctypes.c_int(7)
    assert CL.clEnqueueFillBuffer(q, buf, addr(pattern), 4, 0, 64, 0, 0, 0) == 0
    assert CL.clFinish(q) == 0
    for obj, release in ((buf, CL.clReleaseMemObject), (q, CL.clReleaseCommandQueue), (ctx, CL.clReleaseContext)):
        assert release(obj) == 0
    out = capfd.readouterr().err
    # the buffer and its commands went through the native entries, debugging on or not, and
    # they logged as the Python entries log: the application's counts, then each command
    assert f"pyplat[refcounts]: clRetainMemObject {buf:#x}: 2 application references left" in out
    assert f"pyplat[refcounts]: clReleaseMemObject {buf:#x}: 1 application reference left" in out
    assert f"pyplat[refcounts]: clReleaseMemObject {buf:#x}: 0 application references left, handle released" in out
    # the context: its core object's count, or (made natively) the application's
    assert "destroyed" in out or f"clReleaseContext {ctx:#x}: 0 application references left" in out
    queued = [line for line in out.splitlines() if line.startswith("pyplat[events]: fill_buffer")]
    assert len(queued) == 2 and "queued" in queued[0] and queued[1].endswith("ended: complete")


def test_every_error_of_the_conformance_api_category_has_its_reason(run_with_pyplat, pyplat_command):
    """The issue's line: PYPLAT_DEBUG=err shows the reason of every error the api category of the
    conformance subset provokes (bad handles, sizes, flags, wait lists...)."""
    r = run_with_pyplat(pyplat_command + ["conformance", "--quick", "api"], env={"PYPLAT_DEBUG": "err"},
                        timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [line for line in (r.stdout + r.stderr).splitlines() if line.startswith("pyplat[err]: ")]
    assert len(lines) > 100                       # the category provokes that many errors
    bare = [line for line in lines if not re.match(r"pyplat\[err\]: cl\w+ returned CL_[A-Z_]+: \S", line)]
    assert not bare, bare[:10]


def test_debugging_never_changes_which_entries_run(tmp_path):
    """PYPLAT_DEBUG=all installs the same native entries as no debugging: a bug of the native
    path does not disappear when a user turns debugging on."""
    import subprocess
    import sys
    probe = ("from pyplat.api import bridge; bridge.direct_entries(); "
             "print(','.join(sorted(bridge._native_entries)))")
    seen = []
    for categories in ("", "all"):
        env = dict(os.environ, PYPLAT_DEBUG=categories, PYPLAT_CACHE_DIR="off")
        r = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120,
                           cwd=tmp_path)     # (the installed package, not a source tree beside it)
        assert r.returncode == 0, r.stderr
        seen.append(r.stdout.strip().split(","))
    assert seen[0] == seen[1] and "clEnqueueNDRangeKernel" in seen[0] and "clCreateBuffer" in seen[0]
