"""Barrier-free kernels with a group-stride or grid-stride loop (lowering/group_stride.py) run
their loop with the work-items in lockstep. Every work-item must still do exactly its own
iterations: uneven trip counts, break/continue/return of single work-items, a loop variable
started by the for-init (pyopencl's elementwise kernels) and read after the loop."""
import numpy as np
import pytest

from pyplat.compiler import build
from support.compiled import run


def fresh(src):
    r = build(src, use_cache=False)
    assert r.ok, r.log
    return r


def lockstep(r):
    return "ls.head" in r.llvm_ir


GROUP_STRIDE = """
__kernel void upd(__global const int *x, __global int *y, int interval, int n, int stop_at) {
    int begin = interval * get_group_id(0);
    int end = min(begin + interval, n);
    if (get_local_id(0) == 3) return;                   /* one work-item leaves early */
    int carry = get_group_id(0) * 1000;
    for (int i = begin + get_local_id(0); i < end; i += get_local_size(0)) {
        if (x[i] == stop_at) break;                     /* that work-item stops here */
        if (x[i] % 7 == 0) continue;                    /* and skips these */
        y[i] = x[i] + carry;
    }
}
"""


def expect_group_stride(x, interval, n, local, groups, stop_at):
    y = np.full(n, -1, np.int32)
    for g in range(groups):
        begin, end = interval * g, min(interval * g + interval, n)
        for lid in range(local):
            if lid == 3:
                continue
            for i in range(begin + lid, end, local):
                if x[i] == stop_at:
                    break
                if x[i] % 7 == 0:
                    continue
                y[i] = x[i] + g * 1000
    return y


@pytest.mark.parametrize("local,interval", [(16, 1000), (5, 37), (64, 64)])
def test_group_stride_loop_keeps_each_work_items_iterations(local, interval):
    r = fresh(GROUP_STRIDE)
    assert lockstep(r)
    groups = 6
    n = groups * interval - interval // 3          # the last interval is short
    x = np.arange(n, dtype=np.int32)
    stop_at = interval + 5                          # inside group 1
    y = np.full(n, -1, np.int32)
    run(r.kernels["upd"], [x, y, np.int32(interval), np.int32(n), np.int32(stop_at)],
        (groups * local,), (local,))
    np.testing.assert_array_equal(y, expect_group_stride(x, interval, n, local, groups, stop_at))


ELEMENTWISE = """
__kernel void axpb(__global float *z, __global const float *x, float a, float b, long n,
                   __global long *last) {
    int lid = get_local_id(0);
    int gsize = get_global_size(0);
    int work_group_start = get_local_size(0) * get_group_id(0);
    long i;
    for (i = work_group_start + lid; i < n; i += gsize) {
        z[i] = a * x[i] + b;
    }
    last[get_global_id(0)] = i;                          /* the loop variable after the loop */
}
"""


@pytest.mark.parametrize("n", [1, 1000, 4096 + 3])
def test_grid_stride_loop_started_by_the_for_init(n):
    r = fresh(ELEMENTWISE)
    assert lockstep(r)
    local, groups = 32, 4
    gsize = local * groups
    x = np.random.RandomState(2).rand(n).astype(np.float32)
    z = np.zeros(n, np.float32)
    last = np.zeros(gsize, np.int64)
    run(r.kernels["axpb"], [z, x, np.float32(2), np.float32(0.5), np.int64(n), last], (gsize,), (local,))
    np.testing.assert_allclose(z, 2 * x + 0.5, rtol=1e-6)
    gid = np.arange(gsize)
    trips = np.maximum(0, (n - gid + gsize - 1) // gsize)
    np.testing.assert_array_equal(last, gid + trips * gsize)


def test_a_work_items_own_walk_is_not_changed():
    """A loop whose step is not the group's width (a row per work-item) keeps the plain order."""
    r = fresh("""
    __kernel void rows(__global const float *a, __global float *out, int n) {
        float acc = 0;
        for (int k = 0; k < n; k++) acc += a[get_global_id(0) * n + k];
        out[get_global_id(0)] = acc;
    }""")
    assert not lockstep(r)
    a = np.random.RandomState(3).rand(8 * 10).astype(np.float32)
    out = np.zeros(8, np.float32)
    run(r.kernels["rows"], [a, out, np.int32(10)], (8,), (4,))
    np.testing.assert_allclose(out, a.reshape(8, 10).sum(1), rtol=1e-5)
