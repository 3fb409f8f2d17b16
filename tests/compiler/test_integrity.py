"""Integrity of what the compiler reads back (issue 13, items 3-5): damaged compile-cache entries,
entries moved between keys and damaged program binaries never crash the host or run the wrong
code. Each trial runs in a child process, so a crash (SIGSEGV, SIGABRT, SIGILL) fails the test
instead of killing pytest; the child reports one JSON line per trial.

* cache entries truncated, zeroed, bit-flipped at seeded random offsets, or swapped between two
  programs: the next build succeeds from source, each program runs its own code, the bad entry
  is deleted and counted (cache.stats()["discarded"]) and a good entry replaces it;
* program binaries (executables, and a compiled object) truncated, bit-flipped, zeroed, or with
  their object code moved into another program's binary: clCreateProgramWithBinary answers
  CL_INVALID_BINARY, errcode and binary_status alike, before anything is built or loaded.
"""
import hashlib
import json
import os
import random
import subprocess
import sys
import uuid

import pytest

from pyplat import cl
from support import TESTS


# Two programs with the same kernel name and signature: running one's code for the other is
# silent unless the values are checked.
SRC_A = "/* A %s */ __kernel void k(__global int *o) { o[get_global_id(0)] = 3 * (int)get_global_id(0) + 11; }\n"
SRC_B = "/* B %s */ __kernel void k(__global int *o) { o[get_global_id(0)] = 5 * (int)get_global_id(0) + 22; }\n"
WANT_A = [11, 14, 17, 20]
WANT_B = [22, 27, 32, 37]


def _child(code, args, env_extra=None, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(TESTS) + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env_extra or {}))
    p = subprocess.run([sys.executable, "-c", code], input=json.dumps(args), env=env, capture_output=True,
                       cwd=str(TESTS), text=True, timeout=timeout)
    records = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert p.returncode == 0, "child died (rc %d) after %d trials; last: %s\n%s" % (
        p.returncode, len(records), records[-1:] if records else None, p.stderr[-3000:])
    return records


def _flips(data, n, seed, lo=0, hi=None):
    """n variants of data with one bit flipped each, at seeded random offsets in [lo, hi)."""
    rng = random.Random(seed)
    hi = len(data) if hi is None else hi
    out = []
    for _ in range(n):
        b = bytearray(data)
        off = rng.randrange(lo, hi)
        b[off] ^= 1 << rng.randrange(8)
        out.append(("flip@%d" % off, bytes(b)))
    return out


def _damaged(data, seed, flips):
    """Truncations, zeroed ranges and single-bit flips of data (name, bytes)."""
    rng = random.Random(seed)
    n = len(data)
    out = [("truncate@%d" % m, data[:m]) for m in sorted({1, 16, n // 2, n - 33, n - 1}
                                                        | {rng.randrange(1, n) for _ in range(3)})]
    out.append(("zeroed", bytes(n)))
    a = rng.randrange(n // 4, n // 2)
    out.append(("zeroed@%d+64" % a, data[:a] + bytes(64) + data[a + 64:]))
    out.append(("tail-zeroed", data[:n - 40] + bytes(40)))
    # a flip in each region: magic, length, JSON metadata, object code, checksum
    out += _flips(data, 2, seed + 1, 0, 24)
    j = data.index(b"{")
    out += _flips(data, 4, seed + 2, j, data.index(b"\x7fELF") if b"\x7fELF" in data else n // 2)
    out += _flips(data, flips, seed + 3)
    out += _flips(data, 2, seed + 4, n - 32, n)
    return out


def _reseal(body):
    """body + its sha256: the checksum trailer our formats end with, made anew."""
    return body + hashlib.sha256(body).digest()


# ----------------------------------------------------------------------------- the compile cache
CACHE_CHILD = r"""
import json, os, shutil, sys
import numpy as np
from pyplat.compiler import build, cache, objects
from support.compiled import run
cfg = json.loads(sys.stdin.read())

def value(r):
    o = np.zeros(4, np.int32)
    run(r.kernels["k"], [o], (4,))
    return o.tolist()

def entry_ok(path, key):
    with open(path, "rb") as f:
        parts = objects.unpack_package(f.read())
    return parts is not None and parts[0].get("origin") == key

def discarded():
    return getattr(cache, "stats", lambda: {"discarded": -1})()["discarded"]

for t in cfg["trials"]:
    for path, variant in t["write"]:
        shutil.copyfile(variant, path)
    before = discarded()
    rec = {"name": t["name"], "results": []}
    for src, path, key in t["build"]:
        r = build(src)
        rec["results"].append({"ok": r.ok, "cached": bool(r.timings.get("cached")), "value": value(r) if r.ok else None,
                               "entry_ok": entry_ok(path, key), "again_cached": bool(build(src).timings.get("cached"))})
    rec["discarded"] = discarded() - before
    print(json.dumps(rec), flush=True)
"""


@pytest.fixture
def cachedir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("PYPLAT_CACHE_DIR", str(d))
    return d


def _entries(cachedir, monkeypatch):
    """Build A and B into the cache: [(source, entry path, key)] for both."""
    from pyplat.compiler import build
    out = []
    for tmpl in (SRC_A, SRC_B):
        src = tmpl % uuid.uuid4().hex
        r = build(src)
        assert r.ok and r.cache_key
        path = cachedir / r.cache_key[:2] / r.cache_key
        assert path.is_file()
        out.append((src, str(path), r.cache_key))
    return out


def test_damaged_cache_entries_are_rebuilt_replaced_and_counted(cachedir, monkeypatch, tmp_path):
    (a, b) = _entries(cachedir, monkeypatch)
    good = open(a[1], "rb").read()
    vdir = tmp_path / "variants"
    vdir.mkdir()
    trials = []
    for i, (name, data) in enumerate(_damaged(good, 1301, flips=40)):
        assert data != good
        f = vdir / str(i)
        f.write_bytes(data)
        trials.append({"name": name, "write": [[a[1], str(f)]], "build": [a]})
    records = _child(CACHE_CHILD, {"trials": trials})
    assert len(records) == len(trials)
    for rec in records:
        (res,) = rec["results"]
        assert res == {"ok": True, "cached": False, "value": WANT_A, "entry_ok": True, "again_cached": True}, rec
        assert rec["discarded"] == 1, rec


def test_swapped_cache_entries_run_their_own_code(cachedir, monkeypatch, tmp_path):
    (a, b) = _entries(cachedir, monkeypatch)
    fa, fb = tmp_path / "a", tmp_path / "b"
    fa.write_bytes(open(a[1], "rb").read())
    fb.write_bytes(open(b[1], "rb").read())
    # B's entry under A's key and A's under B's: both intact, both the wrong program
    trials = [{"name": "swap", "write": [[a[1], str(fb)], [b[1], str(fa)]], "build": [a, b]},
              {"name": "copy", "write": [[b[1], str(fa)]], "build": [b, a]}]
    records = _child(CACHE_CHILD, {"trials": trials})
    swap, copy = records
    assert [r["value"] for r in swap["results"]] == [WANT_A, WANT_B]
    assert all(r["ok"] and not r["cached"] and r["entry_ok"] and r["again_cached"] for r in swap["results"])
    assert swap["discarded"] == 2
    assert [r["value"] for r in copy["results"]] == [WANT_B, WANT_A]
    assert [r["cached"] for r in copy["results"]] == [False, True]
    assert copy["discarded"] == 1


def test_cache_counters_and_hit_cost(cachedir, monkeypatch):
    """A hit verifies its entry's checksum: a fraction of a millisecond for a typical entry."""
    import time
    from pyplat.compiler import build, cache, objects
    (a, b) = _entries(cachedir, monkeypatch)
    s0 = cache.stats()
    assert build(a[0]).timings.get("cached")
    s1 = cache.stats()
    assert s1["hits"] == s0["hits"] + 1 and s1["discarded"] == s0["discarded"]
    data = open(a[1], "rb").read()
    t = time.perf_counter()
    for _ in range(20):
        assert objects.unseal(data) is not None
    assert (time.perf_counter() - t) / 20 < 0.005


# ----------------------------------------------------------------------------- program binaries
BINARY_CHILD = r"""
import ctypes, json, sys
import numpy as np
from support.capi import CL, addr, err
from support.clobjects import make_context, program_binary
from pyplat import cl
from pyplat.api import handles
from pyplat.core.program import Program
from support.compiled import run
cfg = json.loads(sys.stdin.read())
ctx, dev = make_context()

def from_source(src, compile_only=False):
    s = ctypes.c_char_p(src.encode())
    e = err()
    p = CL.clCreateProgramWithSource(ctx, 1, addr(s), 0, addr(e))
    assert e.value == 0
    if compile_only:
        assert CL.clCompileProgram(p, 0, 0, 0, 0, 0, 0, 0, 0) == 0
    else:
        assert CL.clBuildProgram(p, 0, 0, 0, 0, 0) == 0
    return p

def try_binary(data):
    # what clCreateProgramWithBinary says; a program it accepts is built and run
    blob = ctypes.create_string_buffer(data, len(data))
    ptrs = (ctypes.c_void_p * 1)(ctypes.addressof(blob))
    devs = (ctypes.c_size_t * 1)(dev)
    lengths = (ctypes.c_size_t * 1)(len(data))
    status = (ctypes.c_int32 * 1)(99)
    e = err()
    p = CL.clCreateProgramWithBinary(ctx, 1, addr(devs), addr(lengths), addr(ptrs), addr(status), addr(e))
    rec = {"err": e.value, "status": status[0]}
    if e.value == 0:
        rec["build"] = CL.clBuildProgram(p, 0, 0, 0, 0, 0)
        prog = handles.lookup(p, Program, cl.CL_INVALID_PROGRAM)
        if rec["build"] == 0 and "k" in prog.result.kernels:
            o = np.zeros(4, np.int32)
            run(prog.result.kernels["k"], [o], (4,))
            rec["value"] = o.tolist()
        CL.clReleaseProgram(p)
    return rec

if cfg["make"]:
    out = {}
    for name, src in cfg["make"].items():
        p = from_source(src, compile_only=name == "obj")
        out[name] = program_binary(p).hex()
        CL.clReleaseProgram(p)
    print(json.dumps(out), flush=True)
else:
    for name, hexdata in cfg["trials"]:
        rec = try_binary(bytes.fromhex(hexdata))
        rec["name"] = name
        print(json.dumps(rec), flush=True)
"""


@pytest.fixture(scope="module")
def binaries():
    """Program binaries of A and B (executables) and of a compiled object, made by a child."""
    srcs = {"a": SRC_A % uuid.uuid4().hex, "b": SRC_B % uuid.uuid4().hex,
            "obj": "/* %s */ int twice(int x) { return 2 * x; }\n" % uuid.uuid4().hex}
    (made,) = _child(BINARY_CHILD, {"make": srcs}, {"PYPLAT_CACHE_DIR": "off"})
    return {k: bytes.fromhex(v) for k, v in made.items()}


def _trials(trials):
    return _child(BINARY_CHILD, {"make": None, "trials": [[n, d.hex()] for n, d in trials]},
                  {"PYPLAT_CACHE_DIR": "off"})


def test_intact_binaries_load_and_run_their_own_code(binaries):
    a, b = _trials([("a", binaries["a"]), ("b", binaries["b"])])
    assert (a["err"], a["status"], a["build"], a["value"]) == (0, 0, 0, WANT_A)
    assert (b["err"], b["status"], b["build"], b["value"]) == (0, 0, 0, WANT_B)


def test_damaged_binaries_are_invalid_binary_never_a_crash(binaries):
    trials = _damaged(binaries["a"], 2207, flips=70)
    trials += [("obj:" + n, d) for n, d in _damaged(binaries["obj"], 2208, flips=6)]
    assert len(trials) >= 100 and all(d != binaries["a"] and d != binaries["obj"] for _, d in trials)
    records = _trials(trials)
    assert len(records) == len(trials)
    bad = [r for r in records if (r["err"], r["status"]) != (cl.CL_INVALID_BINARY, cl.CL_INVALID_BINARY)]
    assert not bad, bad


def test_object_code_moved_into_another_programs_binary_is_refused(binaries):
    """A's header and source with B's object code: intact checksums all round (the container's
    made anew), but the package is not the one the header names."""
    a, b = binaries["a"][:-32], binaries["b"][:-32]
    pa, pb = a.index(b"PYPLAT-OBJ-"), b.index(b"PYPLAT-OBJ-")
    trials = [("a-with-b-code", _reseal(a[:pa] + b[pb:])),
              ("b-with-a-code", _reseal(b[:pb] + a[pa:])),
              ("a-with-b-code-unsealed", a[:pa] + b[pb:] + binaries["a"][-32:])]
    records = _trials(trials)
    assert [(r["err"], r["status"]) for r in records] == [(cl.CL_INVALID_BINARY, cl.CL_INVALID_BINARY)] * 3, records


def test_older_formats_are_compiled_again_never_loaded(binaries):
    """An older PyPlat's binary (PYPLAT-PROGRAM-2: no checksum; pyopencl's cache keeps them
    across upgrades) is compiled again from its source; its object code is never loaded, so
    B's object code in A's old binary still runs A. A bare package is no program binary."""
    a, b = binaries["a"][:-32], binaries["b"][:-32]
    pa, pb = a.index(b"PYPLAT-OBJ-"), b.index(b"PYPLAT-OBJ-")
    old = a.replace(b"PYPLAT-PROGRAM-3", b"PYPLAT-PROGRAM-2", 1)
    swapped = (a[:pa] + b[pb:]).replace(b"PYPLAT-PROGRAM-3", b"PYPLAT-PROGRAM-2", 1)
    v2, moved, package = _trials([("v2", old), ("v2-b-code", swapped), ("package", a[pa:])])
    assert (v2["err"], v2["status"], v2["build"], v2["value"]) == (0, 0, 0, WANT_A)
    assert (moved["err"], moved["status"], moved["build"], moved["value"]) == (0, 0, 0, WANT_A)
    assert (package["err"], package["status"]) == (cl.CL_INVALID_BINARY, cl.CL_INVALID_BINARY)
