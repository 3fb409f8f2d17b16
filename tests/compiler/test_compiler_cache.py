"""The on-disk cache of compiled programs and packages (object code + metadata)."""
import os
import shutil
import time
import uuid

import numpy as np
import pytest

import pyplat.compiler as C
from pyplat.compiler import build, driver, objects
from support.compiled import run


@pytest.fixture
def cachedir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("PYPLAT_CACHE_DIR", str(d))
    return d


def _src(tag=None, body="o[get_global_id(0)] = VAL;"):
    return "/* %s */\n__kernel void k(__global int *o) { %s }\n" % (tag or uuid.uuid4().hex, body)


def _value(r, n=4):
    o = np.zeros(n, np.int32)
    run(r.kernels["k"], [o], (n,))
    return o


def test_cached_build_skips_libclang_and_is_fast(cachedir, monkeypatch):
    src = _src()
    r1 = build(src, "-DVAL=3")
    assert r1.ok and not r1.timings.get("cached")
    files = [p for p in cachedir.rglob("*") if p.is_file()]
    assert len(files) == 1 and not files[0].name.startswith(".tmp")

    def no_clang():
        raise AssertionError("libclang called on a cache hit")
    monkeypatch.setattr(driver, "_get_index", no_clang)
    best = 1.0
    for _ in range(3):
        t = time.perf_counter()
        r2 = build(src, "-DVAL=3")
        best = min(best, time.perf_counter() - t)
    assert r2.ok and r2.timings["cached"]
    assert best < 0.05, best          # ~2 ms here; generous for loaded CI machines
    assert list(_value(r2)) == [3] * 4
    assert r2.kernels["k"].args[0].kind == "global" and r2.kernels["k"].args[0].written
    # different options: a different entry
    monkeypatch.undo()
    monkeypatch.setenv("PYPLAT_CACHE_DIR", str(cachedir))
    assert list(_value(build(src, "-DVAL=4"))) == [4] * 4


def test_changed_include_is_a_miss(cachedir, tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "val.h").write_text("#define VAL 5\n")
    src = '#include "val.h"\n' + _src()
    assert list(_value(build(src, "-I %s" % inc))) == [5] * 4
    (inc / "val.h").write_text("#define VAL 6\n")
    r = build(src, "-I %s" % inc)
    assert not r.timings.get("cached")
    assert list(_value(r)) == [6] * 4
    assert build(src, "-I %s" % inc).timings.get("cached")


def test_changed_pyplat_header_is_a_miss(cachedir, tmp_path, monkeypatch):
    src = _src()
    assert build(src, "-DVAL=1").ok
    assert build(src, "-DVAL=1").timings.get("cached")
    h = tmp_path / "pyplat_opencl.h"
    shutil.copy(C.HEADER, h)
    with open(h, "a") as f:
        f.write("\n#define PYPLAT_EXTRA 1\n")
    monkeypatch.setattr(driver, "HEADER", str(h))
    r = build(src, "-DVAL=1")
    assert r.ok and not r.timings.get("cached")


def test_corrupt_or_foreign_entries_are_misses(cachedir):
    src = _src()
    assert build(src, "-DVAL=2").ok
    (entry,) = [p for p in cachedir.rglob("*") if p.is_file()]
    entry.write_bytes(entry.read_bytes()[:40])
    r = build(src, "-DVAL=2")
    assert r.ok and not r.timings.get("cached") and list(_value(r)) == [2] * 4
    data = entry.read_bytes()
    assert objects.unpack_package(data) is not None
    assert objects.unpack_package(data.replace(b"cpu=", b"cpu=x", 1)) is None     # other machine/compiler
    assert C.load_package(b"garbage") is None


def test_cache_off_and_unwritable(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPLAT_CACHE_DIR", "off")
    src = _src()
    assert build(src, "-DVAL=1").ok and not build(src, "-DVAL=1").timings.get("cached")
    ro = tmp_path / "ro"
    ro.write_text("a file, not a directory")
    monkeypatch.setenv("PYPLAT_CACHE_DIR", str(ro))
    assert build(src, "-DVAL=1").ok


def test_package_round_trip_runs_without_compiling(monkeypatch):
    r = build(_src(body="o[get_global_id(0)] = get_global_id(0) * 7;"), use_cache=False)
    data = r.package
    monkeypatch.setattr(driver, "_get_index", lambda: (_ for _ in ()).throw(AssertionError("compiled")))
    r2 = C.load_package(data)
    assert list(_value(r2)) == [0, 7, 14, 21]
    assert r2.package == data


def test_concurrent_writers_leave_whole_entries(cachedir):
    import subprocess
    import sys
    src = _src()
    code = "from pyplat.compiler import build; assert build(%r, '-DVAL=9').ok" % src
    env = dict(os.environ, PYPLAT_CACHE_DIR=str(cachedir))
    # cwd away from a source checkout, whose pyplat/ would shadow the installed package
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, cwd=str(cachedir.parent))
             for _ in range(3)]
    assert all(p.wait() == 0 for p in procs)
    files = [p for p in cachedir.rglob("*") if p.is_file()]
    assert len(files) == 1 and not files[0].name.startswith(".tmp")
    r = build(src, "-DVAL=9")
    assert r.timings.get("cached") and list(_value(r)) == [9] * 4
