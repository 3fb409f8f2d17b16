"""Parallel regions of barrier kernels (lowering/barriers.py): per-work-item variables kept in
registers inside a region (`pw_ptr`, `_cached`) and regions that are only `if (lid < c)`
looping over the first c work-items (`_x_bound`). Both must keep every work-item's values."""
import re

import numpy as np
import pytest

from pyplat.compiler import build, jit
from support.compiled import Local, run


def fresh(src):
    r = build(src, use_cache=False)
    assert r.ok, r.log
    return r


TREE = """
__kernel void tree(__global const float *x, __global float *out, __local float *part) {
    unsigned int lid = get_local_id(0);
    float acc = 0;
    for (int s = 0; s < 4; s++)
        acc += x[get_global_id(0) * 4 + s];
    part[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 32) part[lid] += part[lid + 32];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 16) part[lid] += part[lid + 16];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid <= 7) part[lid] += part[lid + 8];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) < 4u) part[lid] += part[lid + 4];
    barrier(CLK_LOCAL_MEM_FENCE);
    if ((int)get_local_id(0) < 2) part[lid] += part[lid + 2];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 1) part[lid] += part[lid + 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 0) part[0] = -1000;                   /* never */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) out[get_group_id(0)] = part[0];
    out[get_num_groups(0) + get_global_id(0)] = acc;
}
"""


def test_tree_reduction_with_bounded_regions():
    r = fresh(TREE)
    groups, wg = 3, 64
    x = np.random.RandomState(1).rand(groups * wg * 4).astype(np.float32)
    out = np.zeros(groups + groups * wg, np.float32)
    run(r.kernels["tree"], [x, out, Local(4 * wg)], (groups * wg,), (wg,))
    per_item = x.reshape(-1, 4).sum(1)
    np.testing.assert_allclose(out[groups:], per_item, rtol=1e-6)
    np.testing.assert_allclose(out[:groups], per_item.reshape(groups, wg).sum(1), rtol=1e-5)


@pytest.mark.parametrize("local", [(5, 3), (40, 2), (1, 4)])
def test_bound_on_local_id_0_of_a_2d_group(local):
    """`if (get_local_id(0) < 3)` in a 2-D group: every row's first three work-items, and
    groups narrower than the bound."""
    src = """
    __kernel void k(__global int *out, __local int *t, __global int *count) {
        int lx = get_local_id(0), ly = get_local_id(1), w = get_local_size(0);
        t[ly * w + lx] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 3) { t[ly * w + lx] = 100 * ly + lx + 1; atomic_inc(count); }
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = t[ly * w + lx];
    }"""
    r = fresh(src)
    gx, gy = local[0] * 2, local[1]
    out = np.full(gx * gy, -7, np.int32)
    count = np.zeros(1, np.int32)
    run(r.kernels["k"], [out, Local(4 * local[0] * local[1]), count], (gx, gy), local)
    assert count[0] == 2 * local[1] * min(local[0], 3)          # two groups, each row
    got = out.reshape(gy, gx)
    for y in range(gy):
        for x in range(gx):
            lx = x % local[0]
            assert got[y, x] == (100 * (y % local[1]) + lx + 1 if lx < 3 else 0), (y, x)


def test_address_taken_group_variable_stays_in_memory():
    """A group-level variable written through a pointer in the same region as direct reads:
    not kept in a register copy, so both see one value."""
    src = """
    void bump(int *p, int by) { *p += by; }
    __kernel void k(__global const int *x, __global int *out, __local int *sh) {
        int lid = get_local_id(0);
        int v = x[get_global_id(0)];
        int *pv = &v;
        sh[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        v += 1;
        bump(pv, sh[(lid + 1) % get_local_size(0)]);
        v *= 2;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = v + *pv;
    }"""
    r = fresh(src)
    wg, groups = 16, 2
    x = np.arange(wg * groups, dtype=np.int32) * 3
    out = np.zeros(wg * groups, np.int32)
    run(r.kernels["k"], [x, out, Local(4 * wg)], (wg * groups,), (wg,))
    nb = (np.arange(wg * groups) % wg + 1) % wg + np.arange(wg * groups) // wg * wg
    v = (x + 1 + x[nb]) * 2
    np.testing.assert_array_equal(out, 2 * v)


def test_lockstep_accumulator_in_a_register_copy():
    """The lockstep loop's accumulator lives in a register copy per region, stored back for
    every work-item (so the vectoriser stores it whole, not with masked stores), and work-items
    that left the loop early keep their sums."""
    src = """
    __kernel void sum(__global const float *x, long n, unsigned seq, __global float *out, __local float *part) {
        unsigned int lid = get_local_id(0);
        long i = get_group_id(0) * get_local_size(0) * 8 + lid;
        float acc = 0;
        for (unsigned s = 0; s < seq; ++s) {
            if (i >= n) break;
            acc += x[i];
            i += get_local_size(0);
        }
        part[lid] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            float t = 0;
            for (unsigned k = 0; k < get_local_size(0); k++) t += part[k];
            out[get_group_id(0)] = t;
        }
    }"""
    r = fresh(src)
    assert "ls.head" in r.llvm_ir and '"acc.r' in r.llvm_ir
    wg, groups = 64, 3
    n = wg * 8 * groups - 100
    x = np.random.RandomState(2).rand(wg * 8 * groups).astype(np.float32)
    out = np.zeros(groups, np.float32)
    run(r.kernels["sum"], [x, np.int64(n), np.uint32(8), out, Local(4 * wg)], (wg * groups,), (wg,))
    expect = [x[g * wg * 8:min((g + 1) * wg * 8, n)].sum() for g in range(groups)]
    np.testing.assert_allclose(out, expect, rtol=1e-5)


def test_checked_lockstep_loop_is_still_vectorised(monkeypatch):
    """PYPLAT_CHECK=bounds: the bounds check of a load under the lockstep loop's `if` keeps its
    finding in a register of the work-group function (checks.py, _site_slot), so the loop over
    work-items is vectorised as unchecked (a masked vector load of the floats). Kept in the
    check frame, as before, the max was a conditional store to memory once the tree's steps
    added sites, and the loop stayed scalar (pyopencl's reduction ran 7-15x slower checked)."""
    src = """
    __kernel void sum(__global const float *x, long n, unsigned seq, __global float *out, __local float *part) {
        unsigned int lid = get_local_id(0);
        long i = get_group_id(0) * 1024 * seq + lid;
        float acc = 0;
        for (unsigned s = 0; s < seq; ++s) {
            if (i >= n) break;
            acc += x[i];
            i += 1024;
        }
        part[lid] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < 2) part[lid] += part[lid + 2];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < 1) part[lid] += part[lid + 1];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) out[get_group_id(0)] = part[0];
    }"""
    vector_load = re.compile(r"@llvm\.masked\.(load|gather)\.v\d+f32")
    for checks in ("", "bounds"):
        monkeypatch.setenv("PYPLAT_CHECK", checks)
        r = fresh(src)
        assert ("__pyplat_check_report" in r.llvm_ir) == bool(checks)
        assert vector_load.search(jit.optimised_ir(r.llvm_ir)), checks or "unchecked"
