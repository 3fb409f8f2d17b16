"""Barrier kernels: group-level variables with pure initialisers (work-item ids, unmodified
parameters) are recomputed in each parallel region instead of living in per-work-item arrays
(pyplat/compiler/lowering/barriers.py, _rematerialisable)."""
import numpy as np

from pyplat.compiler import build
from support.compiled import Local, ok, run

PYOPENCL_REDUCE = """
__kernel void red(__global float *out_base, long out_off, __global float *x_base, long x_off, uint n) {
    __global float *out = (__global float *)((__global char *)out_base + out_off);
    __global float *x = (__global float *)((__global char *)x_base + x_off);
    __local float ldata[256];
    unsigned int lid = get_local_id(0);
    const long base = get_group_id(0) * 256 + lid;
    float acc = base < n ? x[base] : 0;
    ldata[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 128; s > 0; s >>= 1) {
        if (lid < s)
            ldata[lid] += ldata[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[get_group_id(0)] = ldata[0];
}
"""


def test_pyopencl_style_reduction_keeps_ids_in_registers():
    r = ok(PYOPENCL_REDUCE)
    groups = 5
    a = np.random.RandomState(3).randint(0, 50, 256 * groups - 7).astype(np.float32)
    buf = np.concatenate([np.zeros(4, np.float32), a])          # x at byte offset 16
    out = np.zeros(groups + 2, np.float32)
    run(r.kernels["red"], [out, np.int64(8), buf, np.int64(16), np.uint32(a.size)], (256 * groups,), (256,))
    padded = np.concatenate([a, np.zeros(7, np.float32)])
    np.testing.assert_array_equal(out[2:], padded.reshape(groups, 256).sum(1))
    np.testing.assert_array_equal(out[:2], 0)


def test_only_rematerialisable_variables_need_no_frame():
    src = """
    __kernel void k(__global int *o, __local int *sh, int bias) {
        int lid = get_local_id(0);
        int g = get_global_id(0) + bias;
        __global int *dst = o + get_group_id(0) * get_local_size(0);
        sh[lid] = g;
        barrier(CLK_LOCAL_MEM_FENCE);
        dst[lid] = sh[get_local_size(0) - 1 - lid] + lid;
    }"""
    r = build(src, use_cache=False)
    assert r.ok, r.log
    assert "pw.have" not in r.llvm_ir        # no per-work-item arrays at all
    wg, groups = 32, 3
    o = np.zeros(wg * groups, np.int32)
    run(r.kernels["k"], [o, Local(4 * wg), np.int32(100)], (wg * groups,), (wg,))
    gid = np.arange(wg * groups)
    lid = gid % wg
    np.testing.assert_array_equal(o, (gid - lid) + (wg - 1 - lid) + 100 + lid)


def test_written_variables_and_modified_params_stay_per_work_item():
    src = """
    __kernel void k(__global int *o, __local int *sh, int p) {
        int lid = get_local_id(0);
        int a = lid * 2;             /* pure initialiser, but written later */
        p += lid;                     /* modified parameter */
        int b = p + 1;                /* depends on a modified parameter */
        sh[lid] = a;
        barrier(CLK_LOCAL_MEM_FENCE);
        a += sh[(lid + 1) % get_local_size(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        o[get_global_id(0)] = a * 1000 + b;
    }"""
    r = ok(src)
    wg = 16
    o = np.zeros(wg * 2, np.int32)
    run(r.kernels["k"], [o, Local(4 * wg), np.int32(7)], (wg * 2,), (wg,))
    lid = np.arange(wg * 2) % wg
    np.testing.assert_array_equal(o, (lid * 2 + ((lid + 1) % wg) * 2) * 1000 + 7 + lid + 1)


def test_declaration_in_untaken_branch_does_not_trap():
    # q is declared in a group-level branch the group does not take; its division must not
    # be evaluated in the other branch's regions (d == 0 there)
    src = """
    __kernel void k(__global int *o, __local int *sh, int n, int d) {
        int lid = get_local_id(0);
        if (d != 0) {
            int q = n / d + lid;
            sh[lid] = q;
            barrier(CLK_LOCAL_MEM_FENCE);
            o[lid] = sh[0] + q;
        } else {
            sh[lid] = lid;
            barrier(CLK_LOCAL_MEM_FENCE);
            o[lid] = sh[get_local_size(0) - 1] - lid;
        }
    }"""
    r = ok(src)
    wg = 8
    o = np.zeros(wg, np.int32)
    run(r.kernels["k"], [o, Local(4 * wg), np.int32(10), np.int32(0)], (wg,), (wg,))
    np.testing.assert_array_equal(o, wg - 1 - np.arange(wg))
    run(r.kernels["k"], [o, Local(4 * wg), np.int32(10), np.int32(3)], (wg,), (wg,))
    np.testing.assert_array_equal(o, 3 + 3 + np.arange(wg))


def test_rematerialised_value_in_group_level_loop_and_early_return():
    src = """
    __kernel void k(__global int *o, __local int *sh, int iters) {
        const int lid = get_local_id(0);
        const int n = get_local_size(0);
        if (get_group_id(0) == 1) return;         /* whole group returns */
        int acc = 0;
        for (int it = 0; it < iters; it++) {
            const int src = (lid + it) % n;
            sh[lid] = lid + it;
            barrier(CLK_LOCAL_MEM_FENCE);
            acc += sh[src];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        o[get_global_id(0)] = acc;
    }"""
    r = ok(src)
    wg, iters = 16, 5
    o = np.full(wg * 2, -1, np.int32)
    run(r.kernels["k"], [o, Local(4 * wg), np.int32(iters)], (wg * 2,), (wg,))
    lid = np.arange(wg)
    exp = sum(((lid + it) % wg) + it for it in range(iters))
    np.testing.assert_array_equal(o[:wg], exp)
    np.testing.assert_array_equal(o[wg:], -1)
