"""barrier() / work_group_barrier(): loop fission into parallel regions (pyplat/compiler/lowering/barriers.py)."""
import numpy as np
import pytest

from pyplat.compiler import build
from support.compiled import Local, ok, run

REDUCE = """
__kernel void reduce(__global const float *in, __global float *out, __local float *tmp) {
    uint lid = get_local_id(0);
    uint n = get_local_size(0);
    tmp[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = n / 2; s > 0; s >>= 1) {
        if (lid < s)
            tmp[lid] += tmp[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = tmp[0];
}
"""


@pytest.mark.parametrize("wg", [1, 64, 256, 4096])
def test_workgroup_reduction(wg):
    r = ok(REDUCE)
    groups = 3
    a = np.random.RandomState(1).randint(0, 100, wg * groups).astype(np.float32)
    out = np.zeros(groups, np.float32)
    run(r.kernels["reduce"], [a, out, Local(4 * wg)], (wg * groups,), (wg,))
    np.testing.assert_array_equal(out, a.reshape(groups, wg).sum(1))


def test_local_transpose_2d():
    src = """
    #define T 16
    __kernel void tr(__global const float *in, __global float *out, int w, int h) {
        __local float tile[T][T + 1];
        int x = get_group_id(0) * T + get_local_id(0);
        int y = get_group_id(1) * T + get_local_id(1);
        tile[get_local_id(1)][get_local_id(0)] = in[y * w + x];
        work_group_barrier(CLK_LOCAL_MEM_FENCE);
        x = get_group_id(1) * T + get_local_id(0);
        y = get_group_id(0) * T + get_local_id(1);
        out[y * h + x] = tile[get_local_id(0)][get_local_id(1)];
    }"""
    r = ok(src)
    w, h = 64, 32
    a = np.arange(w * h, dtype=np.float32).reshape(h, w)
    o = np.zeros((w, h), np.float32)
    run(r.kernels["tr"], [a, o, np.int32(w), np.int32(h)], (w, h), (16, 16))
    np.testing.assert_array_equal(o, a.T)


def test_values_live_across_barriers_and_private_arrays():
    src = """
    __kernel void k(__global int *out, __local int *sh, int bias) {
        int lid = get_local_id(0);
        int priv[4];
        for (int i = 0; i < 4; i++) priv[i] = lid * 10 + i;
        float4 v = (float4)(lid, 1, 2, 3);
        bias += lid;                         /* a modified parameter: per work-item */
        sh[lid] = lid;
        barrier(CLK_LOCAL_MEM_FENCE);
        int n = get_local_size(0);
        int other = sh[(lid + 1) % n];
        barrier(CLK_LOCAL_MEM_FENCE);
        sh[lid] = other * 2;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = sh[lid] + priv[3] + (int)v.x + bias;
    }"""
    r = ok(src)
    n, wg = 64, 16
    out = np.zeros(n, np.int32)
    run(r.kernels["k"], [out, Local(4 * wg), np.int32(1000)], (n,), (wg,))
    lid = np.arange(n) % wg
    np.testing.assert_array_equal(out, ((lid + 1) % wg) * 2 + lid * 10 + 3 + lid + 1000 + lid)


def test_barriers_in_uniform_branches_and_while_loops():
    src = """
    __kernel void k(__global int *out, __local int *sh) {
        int lid = get_local_id(0), n = get_local_size(0);
        int acc = 0;
        if (get_group_id(0) % 2 == 0) {
            sh[lid] = lid;
            barrier(CLK_LOCAL_MEM_FENCE);
            acc = sh[n - 1 - lid];
        } else {
            sh[lid] = 100 + lid;
            barrier(CLK_LOCAL_MEM_FENCE);
            acc = sh[(lid + 1) % n];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        int it = 0;
        while (1) {
            if (it == 3) break;             /* uniform break out of a loop with a barrier */
            sh[lid] = acc + it;
            barrier(CLK_LOCAL_MEM_FENCE);
            acc = sh[(lid + 1) % n];
            barrier(CLK_LOCAL_MEM_FENCE);
            it++;
            if (it == 1) continue;
            acc += 1;
        }
        out[get_global_id(0)] = acc;
    }"""
    r = ok(src)
    wg, groups = 8, 4
    out = np.zeros(wg * groups, np.int32)
    run(r.kernels["k"], [out, Local(4 * wg)], (wg * groups,), (wg,))
    exp = []
    for g in range(groups):
        lid = np.arange(wg)
        acc = (wg - 1 - lid) if g % 2 == 0 else 100 + (lid + 1) % wg
        for it in range(3):
            sh = acc + it
            acc = sh[(lid + 1) % wg]
            if it + 1 != 1:
                acc = acc + 1
        exp.append(acc)
    np.testing.assert_array_equal(out, np.concatenate(exp))


def test_early_returns():
    src = """
    __kernel void k(__global int *out, __local int *sh, int n) {
        if (get_group_id(0) == 1) return;          /* whole work-group leaves */
        int lid = get_local_id(0);
        sh[lid] = lid * 3;
        barrier(CLK_LOCAL_MEM_FENCE);
        int v = sh[get_local_size(0) - 1 - lid];
        if (get_global_id(0) >= n) return;         /* after the last barrier: per work-item */
        out[get_global_id(0)] = v;
    }"""
    r = ok(src)
    wg = 16
    out = np.full(64, -1, np.int32)
    run(r.kernels["k"], [out, Local(4 * wg), np.int32(60)], (64,), (wg,))
    lid = np.arange(64) % wg
    exp = (wg - 1 - lid) * 3
    exp[16:32] = -1
    exp[60:] = -1
    np.testing.assert_array_equal(out, exp)


def test_kernel_scope_local_and_3d_groups():
    src = """
    __kernel void k(__global int *out) {
        __local int sh[64];
        int l = get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2));
        sh[l] = l;
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        int n = get_local_size(0) * get_local_size(1) * get_local_size(2);
        out[get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2))]
            = sh[n - 1 - l];
    }"""
    r = ok(src)
    out = np.zeros((4, 4, 8), np.int32)
    run(r.kernels["k"], [out], (8, 4, 4), (4, 2, 2))
    z, y, x = np.meshgrid(np.arange(4), np.arange(4), np.arange(8), indexing="ij")
    l = (x % 4) + 4 * ((y % 2) + 2 * (z % 2))
    np.testing.assert_array_equal(out, 15 - l)


def test_work_group_barrier_cl20_scope():
    src = """
    __kernel void k(__global int *o, __local int *sh) {
        int l = get_local_id(0);
        sh[l] = l;
        work_group_barrier(CLK_LOCAL_MEM_FENCE, memory_scope_work_group);
        o[get_global_id(0)] = sh[get_local_size(0) - 1 - l];
    }"""
    r = ok(src, "-cl-std=CL2.0")
    o = np.zeros(32, np.int32)
    run(r.kernels["k"], [o, Local(128)], (32,), (32,))
    np.testing.assert_array_equal(o, 31 - np.arange(32))


def test_no_barrier_kernels_unchanged():
    r = build("__kernel void v(__global float *a) { a[get_global_id(0)] *= 2.0f; }", use_cache=False)
    assert "r.loop" not in r.llvm_ir and "malloc" not in r.llvm_ir


def test_barrier_helper_returning_early_and_goto_error():
    # helpers with barriers are inlined into the kernel; an early return is structured away
    # (barrier_flow.py, tests/compiler/lowering/test_compiler_barrier_flow.py); goto around barriers is an error
    r = ok("int f(int x) { if (x) return 1; barrier(CLK_LOCAL_MEM_FENCE); return 2; }\n"
           "__kernel void k(__global int *a) { a[0] = f(a[1]); }\n")
    for x, want in ((0, 2), (7, 1)):
        a = np.array([0, x], np.int32)
        run(r.kernels["k"], [a], (1,), (1,))
        assert a[0] == want
    r = build("int f(int x) { if (x) goto out; barrier(CLK_LOCAL_MEM_FENCE); out: return 2; }\n"
              "__kernel void k(__global int *a) { a[0] = f(a[1]); }\n")
    assert not r.ok and "barrier()" in r.log and "goto" in r.log and "error" in r.log and "internal" not in r.log
