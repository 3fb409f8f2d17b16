"""The in-order queue's "is this argument written?" answer is sound (compiler/pointer_writes.py).

A kernel that writes through a pointer derived from an argument (an element's address, a pointer
variable, a helper, a cast, a struct field) once counted as only reading it, so a read enqueued
right after it on an in-order queue could run beside it and return stale data. Here: the issue's
idioms as fixed cases, then a bounded run of the generator (tests/support/difftest/writes.py) through
in-order chains on PyPlat, checked against a serial queue, the compiler's answers and PoCL.
Long runs: tools/write_chains.py (docs/differential.md).
"""
import os

import pytest

from pyplat.compiler import build

CI_SEEDS = range(910000, 910480)       # 480 kernels, 12 builds


def written(src, kernel):
    r = build(src, use_cache=False)
    assert r.ok, r.log
    return {a.name: a.written for a in r.kernels[kernel].args}


@pytest.mark.parametrize("src", [
    # through a helper, through a local pointer variable (the two kernels)
    "void put(global float *p, float v) { *p = v; }\n"
    "kernel void k(global float *out, global const float *in) { size_t i = get_global_id(0);"
    " put(&out[i], in[i]); }",
    "kernel void k(global float *out, global const float *in) { size_t i = get_global_id(0);"
    " global float *p = &out[i]; *p = in[i]; }",
    # vstore4 through a helper on &h[4]; a field's address to a helper
    "void st(global float *p, float4 v) { vstore4(v, 0, p); }\n"
    "kernel void k(global float *out, global const float *in) { st(&out[4], vload4(0, in)); }",
    "typedef struct { float a; float b; } S;\nvoid setf(global float *f, float v) { *f = v; }\n"
    "kernel void k(global S *out, global const float *in) { setf(&out->b, in[0]); }",
    # a histogram's compare-and-swap loop in a helper, on &histo[bin]
    "void add(volatile global uint *p, uint v) { uint o = *p, n;"
    " while ((n = atomic_cmpxchg(p, o, o + v)) != o) o = n; }\n"
    "kernel void k(global uint *out, global const float *in) {"
    " add(&out[(uint)in[get_global_id(0)] & 15], 1); }",
    # a helper returning the pointer; a pointer kept in a struct; an integer round trip
    "global float *at(global float *p, int i) { return p + i; }\n"
    "kernel void k(global float *out, global const float *in) { *at(out, 3) = in[0]; }",
    "kernel void k(global float *out, global const float *in) {"
    " struct { global float *p; } s; s.p = out + 1; *s.p = in[0]; }",
    "kernel void k(global float *out, global const float *in) {"
    " *(global float *)((ulong)out + 4) = in[0]; }",
    # a pointer to the pointer variable; the pointer reassigned
    "kernel void k(global float *out, global const float *in) { global float *p = 0;"
    " global float * private *pp = &p; *pp = out; *p = in[0]; }",
    "kernel void k(global float *out, global const float *in) { global float *p = (global float *)in;"
    " if (in[0] > 0) p = out; p[1] = 2; }",
])
def test_writes_through_derived_pointers_count(src):
    assert written(src, "k")["out"] is True


def test_arguments_only_read_stay_unwritten():
    """The answer is still precise where reads go through helpers and pointer variables."""
    src = ("float get(global const float *p, int i) { return p[i]; }\n"
           "kernel void k(global float *out, global const float *in, global const float *w) {"
           " size_t i = get_global_id(0); global const float *row = in + i * 4;"
           " out[i] = get(row, 1) + vload4(0, w).x + *(w + 2); }")
    assert written(src, "k") == {"out": True, "in": False, "w": False}


def test_generated_chains_never_read_stale_data():
    pytest.importorskip("pyopencl")
    import pyplat
    pyplat.enable()
    import pyopencl as cl
    from support.difftest import write_chains
    os.environ.setdefault("PYPLAT_CACHE_DIR", "off")
    plats = {p.name: p for p in cl.get_platforms()}
    pocl = plats.get("Portable Computing Language")
    res = write_chains.run_seeds(CI_SEEDS, write_chains.Platform(cl, plats["PyPlat"]),
                                 write_chains.Platform(cl, pocl) if pocl is not None else None,
                                 batch=40)
    assert res.kernels == len(CI_SEEDS)
    assert res.unsound == [] and res.stale == [] and res.pocl_mismatch == []
    # the run reaches the argument the kernels only read: the oracle is not vacuous
    assert res.readonly_args > len(CI_SEEDS) // 2


def test_generator_covers_every_write_form():
    from support.difftest import writes
    stores, derivations, conditional = set(), set(), False
    for s in CI_SEEDS:
        for kind, chain, cond in writes.generate(s, "p").forms:
            stores.add(kind)
            derivations.update(chain)
            conditional |= cond
    assert stores == set(writes.STORES) and derivations == set(writes.DERIVATIONS) and conditional
