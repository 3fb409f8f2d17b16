"""Barrier-free loops over __global memory in barrier kernels run by the work-items in lockstep
(lowering/barriers.py, `_choose_lockstep`, `lockstep_loop`): every work-item still gets its own
iterations, breaks, continues and values."""
import numpy as np
import pytest

from pyplat.compiler import build
from support.compiled import Local, run


def fresh(src):
    """Built now, not taken from the kernel cache: its LLVM IR is there to inspect."""
    r = build(src, use_cache=False)
    assert r.ok, r.log
    return r

GRID_STRIDE = """
__kernel void sums(__global const int *x, uint n, __global int *out, __local int *part) {
    uint lid = get_local_id(0);
    int acc = 0;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        if (x[i] < 0)
            continue;                          /* per work-item */
        if (x[i] == 999)
            break;                             /* per work-item */
        acc += x[i];
    }
    part[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        int s = 0;
        for (uint k = 0; k < get_local_size(0); k++) s += part[k];
        out[get_group_id(0)] = s;
    }
    out[get_num_groups(0) + get_global_id(0)] = acc;
}
"""


def reference_sums(x, groups, wg):
    total = groups * wg
    per_item = np.zeros(total, np.int64)
    for g in range(total):
        for i in range(g, len(x), total):
            if x[i] < 0:
                continue
            if x[i] == 999:
                break
            per_item[g] += x[i]
    return per_item.reshape(groups, wg).sum(1), per_item


@pytest.mark.parametrize("wg,n", [(1, 7), (16, 1000), (64, 64 * 3 + 5), (256, 5000)])
def test_grid_stride_loop_with_per_item_break_and_continue(wg, n):
    r = fresh(GRID_STRIDE)
    assert "ls.head" in r.llvm_ir                      # the loop runs in lockstep
    groups = 3
    x = np.random.RandomState(wg).randint(-5, 50, n).astype(np.int32)
    x[::37] = 999
    out = np.zeros(groups + groups * wg, np.int32)
    run(r.kernels["sums"], [x, np.uint32(n), out, Local(4 * wg)], (groups * wg,), (wg,))
    by_group, by_item = reference_sums(x, groups, wg)
    np.testing.assert_array_equal(out[:groups], by_group)
    np.testing.assert_array_equal(out[groups:], by_item)


def test_while_and_do_loops_inside_a_group_level_loop_after_returns():
    src = """
    __kernel void k(__global const int *steps, __global int *out, __local int *sh) {
        int lid = get_local_id(0);
        if (lid % 5 == 4) { out[get_global_id(0)] = -1; return; }
        int total = 0;
        for (int round = 0; round < 3; round++) {
            int left = steps[get_global_id(0)] + round, seen = 0;
            while (left > 0) { seen += steps[(get_global_id(0) + left) % get_global_size(0)]; left--; }
            int d = 0;
            do { d++; } while (d < steps[lid] % 4 && out != 0);
            sh[lid] = seen + d;
            barrier(CLK_LOCAL_MEM_FENCE);
            total += sh[(lid + 1) % get_local_size(0)];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        out[get_global_id(0)] = total;
    }"""
    r = fresh(src)
    assert "ls.head" in r.llvm_ir
    wg, groups = 32, 2
    steps = np.random.RandomState(4).randint(0, 9, wg * groups).astype(np.int32)
    out = np.zeros(wg * groups, np.int32)
    run(r.kernels["k"], [steps, out, Local(4 * wg)], (wg * groups,), (wg,))
    size = wg * groups
    expect = np.zeros(size, np.int64)
    for g in range(size):
        lid, base = g % wg, g - g % wg
        if lid % 5 == 4:
            expect[g] = -1
            continue
        for rnd in range(3):
            nb = base + (lid + 1) % wg                 # the neighbour's value this round
            nl = nb % wg
            if nl % 5 == 4:
                continue                               # returned: its sh[] slot keeps the old value
            left, seen = steps[nb] + rnd, 0
            while left > 0:
                seen += steps[(nb + left) % size]
                left -= 1
            d = 1
            while d < steps[nl] % 4:
                d += 1
            expect[g] += seen + d
    # a returned work-item's slot is never written: only check items whose neighbour is live
    live = np.array([((g % wg + 1) % wg) % 5 != 4 for g in range(size)])
    np.testing.assert_array_equal(out[live], expect[live])
    assert (out[np.arange(size) % wg % 5 == 4] == -1).all()


def test_constant_bounded_and_local_only_loops_stay_in_their_region():
    src = """
    __kernel void k(__global const float *x, __global float *y, __local float *t) {
        int lid = get_local_id(0);
        float a = 0;
        for (int k = 0; k < 4; k++) a += x[4 * get_global_id(0) + k];     /* unrolled by LLVM */
        for (int k = lid; k < 64; k += get_local_size(0)) t[k] = 0;     /* no __global memory */
        t[lid] = a;
        barrier(CLK_LOCAL_MEM_FENCE);
        y[get_global_id(0)] = t[get_local_size(0) - 1 - lid];
    }"""
    r = fresh(src)
    assert "ls.head" not in r.llvm_ir
    x = np.arange(4 * 64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    run(r.kernels["k"], [x, y, Local(4 * 64)], (64,), (64,))
    np.testing.assert_array_equal(y, x.reshape(64, 4).sum(1)[::-1])


INDUCTION = """
__kernel void k(__global const int *lim, __global int *out, __local int *sh) {
    int lid = get_local_id(0);
    int n = lim[get_global_id(0)];
    int acc = 0, sum2 = 0, hits = 0;
    int j = 5 * lid;                           /* read after the loop: stays per work-item */
    for (int i = lid; i < n; i += get_local_size(0)) { acc += i; j += 2; }
    uchar w = 250;                             /* wraps */
    long down = 1000 + lid;
    while (hits < n) {
        if (lim[0] == 12345) break;
        hits++;
        down -= 3;
        w++;
        sum2 += (int)w + (int)down;
    }
    sh[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[3 * get_global_id(0)] = sh[(lid + 1) % get_local_size(0)];
    out[3 * get_global_id(0) + 1] = j;
    out[3 * get_global_id(0) + 2] = sum2;
}
"""


def test_induction_variables_of_lockstep_loops():
    r = fresh(INDUCTION)
    assert "trip" in r.llvm_ir                 # i, hits, down and w advance by uniform steps
    wg, groups = 16, 2
    lim = np.random.RandomState(9).randint(0, 40, wg * groups).astype(np.int32)
    out = np.zeros(3 * wg * groups, np.int32)
    run(r.kernels["k"], [lim, out, Local(4 * wg)], (wg * groups,), (wg,))
    acc, j, sum2 = [], [], []
    for g in range(wg * groups):
        lid, n = g % wg, int(lim[g])
        acc.append(sum(range(lid, n, wg)))
        j.append(5 * lid + 2 * len(range(lid, n, wg)))
        w, down, s = 250, 1000 + lid, 0
        for _ in range(n):
            down -= 3
            w = (w + 1) % 256
            s += w + down
        sum2.append(s)
    got = out.reshape(-1, 3)
    for g in range(wg * groups):
        base = g - g % wg
        assert got[g, 0] == acc[base + (g % wg + 1) % wg]
    np.testing.assert_array_equal(got[:, 1], j)
    np.testing.assert_array_equal(got[:, 2], sum2)


def test_local_sizes_are_known_to_be_small():
    r = fresh("__kernel void k(__global float *x) { x[(uint)get_local_id(0)] = 1; }")
    assert "!range" in r.llvm_ir               # lets LLVM keep `(uint)lid` accesses contiguous
