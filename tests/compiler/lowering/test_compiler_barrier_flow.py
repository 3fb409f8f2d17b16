"""barrier() under the control flow real code puts around it (issue 31): early returns in
barrier-using helpers and kernels, break/continue and several exits of loops with barriers,
switch around barriers, barrier-using calls inside `?:`, `&&`, `||`, `,` and in conditions and
loop increments, helpers calling helpers (lowering/barrier_flow.py, barrier_tree.py).

Each kernel runs through pyopencl on PyPlat and, where it is installed, on PoCL; both must give
the numpy result."""
import numpy as np
import pytest

import pyplat

pyplat.enable()     # before pyopencl initialises its loader

cl = pytest.importorskip("pyopencl")
from support.platforms import pyopencl_context  # noqa: E402
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

WG, GROUPS = 16, 3
N = WG * GROUPS


class Local:
    def __init__(self, nbytes):
        self.nbytes = nbytes


@pytest.fixture(scope="module")
def contexts():
    mine = pyopencl_context("PyPlat")
    if mine is None:
        pytest.fail("pyopencl does not see PyPlat")
    pocl = pyopencl_context("Portable Computing Language")
    return [("PyPlat", mine)] + ([("PoCL", pocl)] if pocl is not None else [])


def _run(ctx, src, name, args, gsize, lsize):
    """The arrays of `args` after one launch (inputs and outputs alike)."""
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, src).build()
    mf = cl.mem_flags
    bufs, kargs = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
            bufs.append((b, a))
            kargs.append(b)
        elif isinstance(a, Local):
            kargs.append(cl.LocalMemory(a.nbytes))
        else:
            kargs.append(a)
    getattr(prg, name)(q, (gsize,), (lsize,), *kargs)
    out = []
    for b, a in bufs:
        r = np.empty_like(a)
        cl.enqueue_copy(q, r, b)
        out.append(r)
    q.finish()
    return out


def check(contexts, src, name, args, expected, gsize=N, lsize=WG):
    """Run on every platform; the arrays at the indices of `expected` ({index: array}) must
    equal it."""
    for plat, ctx in contexts:
        got = _run(ctx, src, name, [a.copy() if isinstance(a, np.ndarray) else a for a in args],
                   gsize, lsize)
        for i, want in expected.items():
            np.testing.assert_array_equal(got[_array_pos(args, i)], want, err_msg="%s, argument %d" % (plat, i))


def _array_pos(args, i):
    return sum(isinstance(a, np.ndarray) for a in args[:i])


X = np.random.RandomState(7).randint(-50, 50, N).astype(np.int32)
GROUP = X.reshape(GROUPS, WG)
REVERSED = GROUP[:, ::-1].ravel()


def per_item(values):
    """A per-group value repeated for each work-item of its group."""
    return np.repeat(np.asarray(values, np.int32), WG)


# A helper that shares a value through local memory: a barrier-using function
SHARE = """
int group_sum(__local int *sh, int v) {
    int lid = get_local_id(0);
    sh[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    int s = 0;
    for (int i = 0; i < get_local_size(0); i++) s += sh[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    return s;
}
int group_max(__local int *sh, int v) {
    int lid = get_local_id(0);
    sh[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    int m = sh[0];
    for (int i = 1; i < get_local_size(0); i++) m = max(m, sh[i]);
    barrier(CLK_LOCAL_MEM_FENCE);
    return m;
}
"""


def test_helper_returns_in_if_else(contexts):
    """pyFAI-style: each branch of a uniform if/else has barriers and returns."""
    src = """
    int passe(__global const int *x, __local int *sh, int mode) {
        int lid = get_local_id(0);
        sh[lid] = x[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (mode == 0) {
            int s = 0;
            for (int i = 0; i < get_local_size(0); i++) s += sh[i];
            barrier(CLK_LOCAL_MEM_FENCE);
            return s;
        } else {
            int m = sh[0];
            for (int i = 1; i < get_local_size(0); i++) m = max(m, sh[i]);
            barrier(CLK_LOCAL_MEM_FENCE);
            return m + mode;
        }
    }
    __kernel void k(__global const int *x, __global int *o, __local int *sh, int mode) {
        o[get_global_id(0)] = passe(x, sh, mode) * 2;
    }"""
    for mode, want in ((0, GROUP.sum(1)), (5, GROUP.max(1) + 5)):
        check(contexts, src, "k", [X, np.zeros(N, np.int32), Local(4 * WG), np.int32(mode)],
              {1: per_item(want) * 2})


def test_ternary_operand_is_a_barrier_helper(contexts):
    """`r = (wg == 1 ? f_single(...) : f_group(..., shared));` with groups of 1 and of 16."""
    src = SHARE + """
    int f_single(__global const int *x) { return x[get_global_id(0)]; }
    __kernel void k(__global const int *x, __global int *o, __local int *sh) {
        int wg = get_local_size(0);
        int r;
        r = (wg == 1 ? f_single(x) : group_sum(sh, x[get_global_id(0)]));
        o[get_global_id(0)] = r + (wg > 1 ? group_max(sh, 1) : 1);
        (wg > 1) ? (void)group_sum(sh, 0) : (void)0;        /* void arms */
    }"""
    check(contexts, src, "k", [X, np.zeros(N, np.int32), Local(4 * WG)], {1: per_item(GROUP.sum(1)) + 1})
    check(contexts, src, "k", [X, np.zeros(N, np.int32), Local(4)], {1: X + 1}, lsize=1)


def test_helper_early_returns_with_flag(contexts):
    """Returns before a barrier (uniform), from inside a loop with barriers, and after the last
    barrier (per work-item)."""
    src = SHARE + """
    int steps(__local int *sh, int v, int limit) {
        if (limit < 0) return -1;                     /* uniform, before any barrier */
        int acc = 0;
        for (int it = 0; it < 100; it++) {
            acc = group_sum(sh, v + it);
            if (acc > limit) return it * 1000 + acc;   /* uniform, inside the loop */
        }
        if (get_local_id(0) & 1) return -acc;          /* after the last barrier: per work-item */
        return acc;
    }
    __kernel void k(__global const int *x, __global int *o, __local int *sh, int limit) {
        o[get_global_id(0)] = steps(sh, x[get_global_id(0)], limit);
    }"""
    for limit in (-3, 200, 100000):
        want = []
        for g in GROUP:
            if limit < 0:
                want.append(np.full(WG, -1))
                continue
            for it in range(100):
                acc = int(g.sum()) + WG * it
                if acc > limit:
                    want.append(np.full(WG, it * 1000 + acc))
                    break
            else:
                want.append(np.where(np.arange(WG) & 1, -acc, acc))
        check(contexts, src, "k", [X, np.zeros(N, np.int32), Local(4 * WG), np.int32(limit)],
              {1: np.concatenate(want).astype(np.int32)})


def test_void_helper_returns_and_nested_helpers(contexts):
    """A void helper leaving from a switch inside a loop, a helper calling a helper calling
    a helper that has the barrier, each returning early."""
    src = SHARE + """
    void fill(__global int *o, __local int *sh, int n) {
        for (int i = 0; ; i++) {
            int s = group_sum(sh, 1);
            switch (i) {
            case 0: o[get_global_id(0)] = s; break;
            default:
                if (i >= n) return;
                o[get_global_id(0)] += i;
            }
        }
    }
    int inner(__local int *sh, int v) { if (v == 12345) return 0; return group_max(sh, v); }
    int middle(__local int *sh, int v) {
        int m = inner(sh, v);
        if (m < 0) return inner(sh, -v) * 100;
        return m;
    }
    int outer(__local int *sh, int v) { return middle(sh, v) + 1; }
    __kernel void k(__global const int *x, __global int *o, __global int *p, __local int *sh, int n) {
        fill(o, sh, n);
        p[get_global_id(0)] = outer(sh, x[get_global_id(0)]);
    }"""
    n = 4
    m = GROUP.max(1)
    mid = np.where(m < 0, (-GROUP).max(1) * 100, m)
    check(contexts, src, "k", [X, np.zeros(N, np.int32), np.zeros(N, np.int32), Local(4 * WG), np.int32(n)],
          {1: np.full(N, WG + sum(range(1, n)), np.int32), 2: per_item(mid + 1)})
    neg = -np.abs(X) - 1
    check(contexts, src, "k", [neg, np.zeros(N, np.int32), np.zeros(N, np.int32), Local(4 * WG), np.int32(n)],
          {2: per_item((-neg.reshape(GROUPS, WG)).max(1) * 100 + 1)})


def test_kernel_uniform_returns(contexts):
    """The kernel's own returns: inside an if with barriers, in a `for (;;)` with barriers."""
    src = """
    __kernel void k(__global const int *x, __global int *o, __local int *sh, int stop) {
        int lid = get_local_id(0);
        int g = get_group_id(0);
        sh[lid] = x[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (g == 0) {
            int v = sh[get_local_size(0) - 1 - lid];
            barrier(CLK_LOCAL_MEM_FENCE);
            o[get_global_id(0)] = v;
            return;
        }
        for (int it = 0; ; it++) {
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid == 0) sh[0] += 1;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (it == stop + g) { o[get_global_id(0)] = sh[0] * 10 + it; return; }
        }
    }"""
    stop = 3
    want = np.zeros(N, np.int32)
    want[:WG] = REVERSED[:WG]
    for g in (1, 2):
        it = stop + g
        want[g * WG:(g + 1) * WG] = (GROUP[g, 0] + it + 1) * 10 + it
    check(contexts, src, "k", [X, np.zeros(N, np.int32), Local(4 * WG), np.int32(stop)], {1: want})


def test_loops_with_barriers_break_continue_several_exits(contexts):
    src = """
    __kernel void k(__global const int *x, __global int *o, __local int *sh, int n) {
        int lid = get_local_id(0);
        int acc = 0, i = 0;
        while (1) {
            i++;
            sh[lid] = i;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (sh[0] > n) break;                      /* exit 1 */
            int t = sh[(lid + 1) % get_local_size(0)];
            barrier(CLK_LOCAL_MEM_FENCE);
            if (t % 3 == 0) continue;
            acc += t;
            if (acc > 4 * n) { acc = -acc; break; }     /* exit 2 */
            for (int j = 0; j < 3; j++) {
                barrier(CLK_LOCAL_MEM_FENCE);
                if (j == 1) continue;
                if (j == 2 && i == 5) break;
                acc += j;
            }
        }
        do {
            barrier(CLK_LOCAL_MEM_FENCE);
            acc += 100;
            if (acc > 1000) break;
        } while (acc % 7 != 0);
        o[get_global_id(0)] = acc + x[get_global_id(0)];
    }"""
    def model(n):
        acc, i = 0, 0
        while True:
            i += 1
            if i > n:
                break
            t = i
            if t % 3 == 0:
                continue
            acc += t
            if acc > 4 * n:
                acc = -acc
                break
            for j in range(3):
                if j == 1:
                    continue
                if j == 2 and i == 5:
                    break
                acc += j
        while True:
            acc += 100
            if acc > 1000 or acc % 7 == 0:
                break
        return acc
    for n in (3, 8, 30):
        check(contexts, src, "k", [X, np.zeros(N, np.int32), Local(4 * WG), np.int32(n)], {1: X + model(n)})


def test_per_work_item_break_after_the_last_barrier_of_a_pass(contexts):
    """Work-item 0 leaves in the last pass, after its barrier; the others still run the rest of
    that pass (a barrier-free loop over __global memory: lockstep regions elsewhere). PoCL
    takes the break as the group's (every work-item leaves): PyPlat only."""
    src = """
    __kernel void k(__global int *out, int n) {
        int lid = get_local_id(0);
        for (int it = 0; it < 2; it++) {
            barrier(CLK_GLOBAL_MEM_FENCE);
            if (it == 1 && lid == 0) break;
            for (int i = lid; i < n; i += get_local_size(0)) out[i] += 1;
        }
    }"""
    want = np.where(np.arange(4 * WG) % WG == 0, 1, 2).astype(np.int32)
    check(contexts[:1], src, "k", [np.zeros(4 * WG, np.int32), np.int32(4 * WG)], {0: want}, gsize=WG)


def test_switch_around_barriers(contexts):
    """Case segments with barriers, fallthrough, default in the middle, break, and continue
    of the loop around the switch."""
    src = SHARE + """
    __kernel void k(__global const int *x, __global int *o, __local int *sh, int sel) {
        int v = x[get_global_id(0)], r = 0;
        for (int it = 0; it < 4; it++) {
            switch (sel + it) {
            case 0:
                r += group_sum(sh, v);
                /* fall through */
            case 1:
                r += 1;
                break;
            default:
                r += 1000;
                barrier(CLK_LOCAL_MEM_FENCE);
            case 5: case 6:
                r += group_max(sh, v) * 10;
                if (it == 2) continue;
                r += 7;
                break;
            case 9:
                continue;
            }
            r += 3;
        }
        o[get_global_id(0)] = r;
    }"""
    def model(g, sel):
        r = 0
        for it in range(4):
            c = sel + it
            if c == 9:
                continue
            if c in (0, 1):
                if c == 0:
                    r += int(g.sum())
                r += 1
            else:
                if c not in (5, 6):
                    r += 1000
                r += int(g.max()) * 10
                if it == 2:
                    continue
                r += 7
            r += 3
        return r
    for sel in (0, 3, 6):
        check(contexts, src, "k", [X, np.zeros(N, np.int32), Local(4 * WG), np.int32(sel)],
              {1: per_item([model(g, sel) for g in GROUP])})


def test_switch_around_barriers_value_types(contexts):
    """Case values of a 64-bit unsigned and a negative int switch, compared in the switch's type."""
    src = """
    __kernel void k(__global long *o, __local int *sh, ulong u, int s) {
        long r = 0;
        switch (u) {
        case 0xFFFFFFFFFFFFFFF0UL: sh[get_local_id(0)] = 1; barrier(CLK_LOCAL_MEM_FENCE); r = 1; break;
        case 3: r = 3; break;
        default: barrier(CLK_LOCAL_MEM_FENCE); r = 9;
        }
        switch (s) {
        case -5: barrier(CLK_LOCAL_MEM_FENCE); r += 50; break;
        case 7: r += 70;
        }
        o[get_global_id(0)] = r;
    }"""
    for u, sv, want in ((0xFFFFFFFFFFFFFFF0, -5, 51), (3, 7, 73), (4, 0, 9), (0xFFFFFFF0, -5, 59)):
        check(contexts, src, "k", [np.zeros(N, np.int64), Local(4 * WG), np.uint64(u), np.int32(sv)],
              {0: np.full(N, want, np.int64)})


def test_logical_and_comma_operands(contexts):
    src = SHARE + """
    void sync(__local int *sh) { barrier(CLK_LOCAL_MEM_FENCE); }
    __kernel void k(__global const int *x, __global int *o, __local int *sh, int a) {
        int v = x[get_global_id(0)];
        int r = (a > 0 && group_sum(sh, v) > 0) * 1;
        r += (a > 1 || group_max(sh, v) > 10) * 10;
        r += (a == 2 && group_sum(sh, 1) == get_local_size(0) && group_max(sh, v) != 12345) * 100;
        int c = (group_sum(sh, 1), group_max(sh, -v));
        a > 0 ? sync(sh) : sync(sh);                   /* void operands, values discarded */
        (r++, sync(sh));
        a && group_sum(sh, 0);
        o[get_global_id(0)] = r - 1 + c * 1000;
    }"""
    for a in (0, 1, 2):
        r = (a > 0) * (GROUP.sum(1) > 0) + 10 * ((a > 1) | (GROUP.max(1) > 10)) + 100 * (a == 2)
        check(contexts, src, "k", [X, np.zeros(N, np.int32), Local(4 * WG), np.int32(a)],
              {1: per_item(r + (-GROUP).max(1) * 1000)})


def test_barrier_helpers_in_conditions_and_increments(contexts):
    src = SHARE + """
    int next(__local int *sh, int i) { return i + group_max(sh, 1); }
    __kernel void k(__global const int *x, __global int *o, __local int *sh) {
        int v = x[get_global_id(0)], r = 0;
        if (group_sum(sh, v) > 0) r += 1; else r += 2;
        int i = 0;
        while (i < 100 && group_sum(sh, i) < 5 * (int)get_local_size(0)) {
            i++;
            if (i == 2) continue;                      /* reaches the condition again */
            r += 10;
        }
        for (int j = group_max(sh, 0); j < 6; j = next(sh, j)) {
            if (j == 1) continue;                      /* reaches the increment */
            if (j == 4) break;
            r += 100;
        }
        int d = 0;
        do {
            d++;
            if (d == 2) continue;
            r += 1000;
        } while (group_sum(sh, d) < 4 * (int)get_local_size(0));
        switch (group_max(sh, v) > 0) { case 1: r += 10000; break; default: r += 20000; }
        o[get_global_id(0)] = r;
    }"""
    r = np.where(GROUP.sum(1) > 0, 1, 2) + 40 + 300 + 3000 + np.where(GROUP.max(1) > 0, 10000, 20000)
    check(contexts, src, "k", [X, np.zeros(N, np.int32), Local(4 * WG)], {1: per_item(r)})


def test_kernels_without_barriers_untouched():
    from pyplat.compiler import build
    r = build("int f(int x) { switch (x) { case 1: return 2; } return x ? 3 : 4; }\n"
              "__kernel void v(__global int *a) { a[get_global_id(0)] = f(a[0]); }", use_cache=False)
    assert r.ok, r.log
    assert "r.loop" not in r.llvm_ir and "malloc" not in r.llvm_ir


def test_unsupported_forms_are_clean_errors():
    from pyplat.compiler import build
    r = build("__kernel void k(__global int *a, __local int *s, int c) {\n"
              "  switch (c) { case 0: if (a[0]) { case 1: barrier(CLK_LOCAL_MEM_FENCE); } }\n}")
    assert not r.ok and "case label" in r.log and "internal" not in r.log
