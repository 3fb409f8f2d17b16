"""Exit-free lockstep passes (lowering/lockstep_exitfree.py): where a group-level test shows that
no work-item leaves the loop in a pass, the pass runs without the per-work-item exit tests. Every
work-item must still get exactly its own iterations: stops inside a pass, before the first one,
bounds that differ per group, 2-D groups, other exits, wrapping indices."""
import numpy as np
import pytest

from pyplat.compiler import build
from support.compiled import Local, run


def fresh(src):
    r = build(src, use_cache=False)
    assert r.ok, r.log
    return r


# pyopencl's ReductionKernel stage 1, on ints so that sums are exact
STAGE1 = """
__kernel void k(__global const int *x, __global int *out, __local int *sh,
                long start, long step, long stop, uint seq) {
    uint lid = get_local_id(0);
    const long base = get_group_id(0) * get_local_size(0) * seq + lid;
    long i = start + base * step;
    int acc = 0;
    for (uint s = 0; s < seq; ++s) {
        if (i >= stop)
            break;
        acc += x[i] + (int)s;
        i += get_local_size(0) * step;
    }
    sh[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = sh[(lid + 1) % get_local_size(0)];
}
"""


def stage1_reference(x, groups, wg, start, step, stop, seq):
    acc = np.zeros(groups * wg, np.int64)
    for g in range(groups):
        for lid in range(wg):
            i = start + (g * wg * seq + lid) * step
            for s in range(seq):
                if i >= stop:
                    break
                acc[g * wg + lid] += int(x[i]) + s
                i += wg * step
    # each work-item reports its neighbour's sum
    return acc.reshape(groups, wg)[:, np.r_[1:wg, 0]].reshape(-1)


@pytest.mark.parametrize("wg,groups,start,step,stop,seq", [
    (64, 4, 0, 1, 64 * 4 * 5, 5),                 # every pass exit-free
    (64, 4, 0, 1, 64 * 4 * 5 - 37, 5),            # the last group stops inside a pass
    (64, 4, 0, 1, 64 * 9 + 3, 5),                 # groups 2, 3: stopped before the first pass
    (32, 3, 7, 2, 32 * 3 * 4 * 2, 4),             # stride 2, offset start
    (16, 3, 16 * 3 * 6 - 1, -1, 16 * 3 * 6, 6),   # falling index (negative coefficient)
    (16, 3, 16 * 3 * 6 - 1, -1, 16 * 3 * 6 - 40, 6),  # ... that stops in the first pass
    (1, 5, 0, 1, 3, 2),
    (48, 2, 0, 1, 48 * 2 * 3 - 48 - 5, 3),        # a stop between passes of group 1
])
def test_reduction_stage1_stops_where_each_work_item_does(wg, groups, start, step, stop, seq):
    r = fresh(STAGE1)
    assert "ls.exitfree" in r.llvm_ir
    x = np.random.RandomState(wg + seq).randint(-100, 100, 2 * groups * wg * seq + 64).astype(np.int32)
    out = np.zeros(groups * wg, np.int32)
    run(r.kernels["k"], [x, out, Local(4 * wg), np.int64(start), np.int64(step), np.int64(stop),
                         np.uint32(seq)], (groups * wg,), (wg,))
    np.testing.assert_array_equal(out, stage1_reference(x, groups, wg, start, step, stop, seq))


@pytest.mark.parametrize("sign", ["+", "-"])
def test_index_that_wraps_inside_the_group_takes_no_shortcut(sign):
    """uint i = start +/- lid (and i +/-= 3 per pass) wraps for some work-items: the first and
    the last may stay in the loop while those between leave; the group-level test must not
    trust them."""
    src = """
    __kernel void k(__global int *out, __local int *sh, uint start, uint stop, uint seq) {
        uint i = start %s get_local_id(0);
        for (uint s = 0; s < seq; s++) {
            if (i >= stop) break;
            out[get_global_id(0)] += 1 + (int)(i & 7);
            i %s= 3u;
        }
        sh[get_local_id(0)] = 1;
        barrier(CLK_LOCAL_MEM_FENCE);
    }""" % (sign, sign)
    r = fresh(src)
    assert "ls.exitfree" in r.llvm_ir
    wg, seq, d = 64, 20, (1 if sign == "+" else -1)
    for start, stop in ((2 ** 32 - 10, 2 ** 32 - 5), (2 ** 32 - 70, 2 ** 32 - 1), (5, 2 ** 32 - 1),
                        (40, 2 ** 32 - 5), (100, 2 ** 32 - 200)):
        out = np.zeros(wg, np.int32)
        run(r.kernels["k"], [out, Local(4 * wg), np.uint32(start), np.uint32(stop), np.uint32(seq)], (wg,), (wg,))
        expect = np.zeros(wg, np.int64)
        for lid in range(wg):
            i = (start + d * lid) % 2 ** 32
            for s in range(seq):
                if i >= stop:
                    break
                expect[lid] += 1 + (i & 7)
                i = (i + 3 * d) % 2 ** 32
        np.testing.assert_array_equal(out, expect)


def test_bound_that_changes_per_group_in_2d_groups():
    src = """
    __kernel void k(__global const int *x, __global int *out, __local int *sh, long n, uint seq) {
        const long stop = n - (long)get_group_id(0) * 13;
        long i = get_global_id(0);
        int acc = 0;
        for (uint s = 0; s < seq; s++) {
            if (i >= stop) break;
            acc += x[i] * (1 + (int)get_local_id(1));
            i += get_global_size(0);
        }
        sh[get_local_id(1) * get_local_size(0) + get_local_id(0)] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = acc;
    }"""
    r = fresh(src)
    assert "ls.exitfree" in r.llvm_ir
    gx, gy, lx, ly, seq = 64, 8, 16, 4, 3
    x = np.random.RandomState(3).randint(-9, 9, gx * seq).astype(np.int32)
    for n in (gx * seq, gx * seq - 20, gx + 5, 10):
        out = np.zeros(gx * gy, np.int32)
        run(r.kernels["k"], [x, out, Local(4 * lx * ly), np.int64(n), np.uint32(seq)], (gx, gy), (lx, ly))
        expect = np.zeros((gy, gx), np.int64)
        for y in range(gy):
            for g in range(gx):
                stop, i = n - (g // lx) * 13, g
                for s in range(seq):
                    if i >= stop:
                        break
                    expect[y, g] += int(x[i]) * (1 + y % ly)
                    i += gx
        np.testing.assert_array_equal(out, expect.reshape(-1))


GRID_STRIDE = """
__kernel void k(__global const int *x, __global int *out, __local int *sh, uint n) {
    int acc = 0;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        acc += x[i] - (int)get_local_id(0);
    sh[get_local_id(0)] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = sh[get_local_id(0)];
}
"""


@pytest.mark.parametrize("n", [0, 5, 64, 64 * 4 * 3, 64 * 4 * 3 + 17])
def test_grid_stride_loop_condition_alone(n):
    r = fresh(GRID_STRIDE)
    assert "ls.exitfree" in r.llvm_ir
    wg, groups = 64, 4
    x = np.arange(max(n, 1), dtype=np.int32) * 3 - 7
    out = np.zeros(wg * groups, np.int32)
    run(r.kernels["k"], [x, out, Local(4 * wg), np.uint32(n)], (wg * groups,), (wg,))
    expect = np.array([sum(int(x[i]) - g % wg for i in range(g, n, wg * groups)) for g in range(wg * groups)])
    np.testing.assert_array_equal(out, expect)


def test_falling_while_loop_with_negated_test():
    src = """
    __kernel void k(__global const int *x, __global int *out, __local int *sh, long hi, long lo) {
        long i = hi - (long)get_local_id(0);
        int acc = 0;
        while (!(i < lo)) { acc += x[i]; i -= get_local_size(0); }
        sh[get_local_id(0)] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = acc;
    }"""
    r = fresh(src)
    assert "ls.exitfree" in r.llvm_ir
    wg = 32
    x = np.random.RandomState(5).randint(0, 50, 400).astype(np.int32)
    for hi, lo in ((399, 0), (399, 150), (100, 90), (10, 20)):
        out = np.zeros(wg, np.int32)
        run(r.kernels["k"], [x, out, Local(4 * wg), np.int64(hi), np.int64(lo)], (wg,), (wg,))
        expect = [sum(int(x[i]) for i in range(hi - lid, lo - 1, -wg)) for lid in range(wg)]
        np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("variant", ["second_break", "continue", "read_after"])
def test_other_exits_and_a_variable_read_after_the_loop_stay_generic(variant):
    body = {"second_break": "if (x[i] == 999) break; acc += x[i]; i += get_local_size(0);",
            "continue": "i += get_local_size(0); if (x[i - get_local_size(0)] < 0) continue; acc += x[i - get_local_size(0)];",
            "read_after": "acc += x[i]; i += get_local_size(0);"}[variant]
    src = """
    __kernel void k(__global const int *x, __global int *out, __local int *sh, long stop, uint seq) {
        long i = get_group_id(0) * get_local_size(0) * seq + get_local_id(0);
        int acc = 0;
        for (uint s = 0; s < seq; ++s) {
            if (i >= stop) break;
            %s
        }
        sh[get_local_id(0)] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = acc + %s;
    }""" % (body, "(int)i" if variant == "read_after" else "0")
    r = fresh(src)
    assert "ls.head" in r.llvm_ir and "ls.exitfree" not in r.llvm_ir
    wg, groups, seq = 32, 3, 4
    x = np.random.RandomState(9).randint(-20, 20, wg * groups * seq).astype(np.int32)
    x[::23] = 999
    stop = wg * groups * seq - 40
    out = np.zeros(wg * groups, np.int32)
    run(r.kernels["k"], [x, out, Local(4 * wg), np.int64(stop), np.uint32(seq)], (wg * groups,), (wg,))
    expect = []
    for g in range(groups * wg):
        i, acc = (g // wg) * wg * seq + g % wg, 0
        for s in range(seq):
            if i >= stop:
                break
            if variant == "second_break" and x[i] == 999:
                break
            if variant == "continue":
                i += wg
                if x[i - wg] < 0:
                    continue
                acc += int(x[i - wg])
                continue
            acc += int(x[i])
            i += wg
        expect.append(acc + (i if variant == "read_after" else 0))
    np.testing.assert_array_equal(out, expect)


def test_exit_free_pass_vectorises_without_masks():
    """The reason for the exit-free copy: a vector loop of plain loads and adds, no masked
    operation, select or vector compare (the generic pass has them for the `break`)."""
    import re
    from pyplat.compiler import jit
    src = STAGE1.replace("const int *x", "const float *x").replace("int acc", "float acc") \
        .replace(" + (int)s", "").replace("__local int", "__local float").replace("__global int *out", "__global float *out")
    opt = jit.optimised_ir(fresh(src).llvm_ir)
    blocks = re.split(r"\n(?=[\w.\-]+:)", opt)
    clean = [b for b in blocks if re.search(r"load <\d+ x float>", b) and re.search(r"fadd <\d+ x float>", b)
             and "masked" not in b and not re.search(r"select <|icmp \w+ <", b)]
    assert clean


def test_checked_exit_free_pass_tests_its_bounds_once(monkeypatch):
    """PYPLAT_CHECK=bounds (lowering/lockstep_ranges.py): `x[i]` of an exit-free pass is
    bounds-checked for the whole pass at group level, so the pass's vector loop is the
    unchecked one's (plain loads and adds, no mask, select or compare)."""
    import re
    from pyplat.compiler import jit
    monkeypatch.setenv("PYPLAT_CHECK", "bounds")
    src = STAGE1.replace("const int *x", "const float *x").replace("int acc", "float acc") \
        .replace(" + (int)s", "").replace("__local int", "__local float").replace("__global int *out", "__global float *out")
    r = fresh(src)
    assert "ls.exitfree" in r.llvm_ir and "__pyplat_check" in r.llvm_ir
    blocks = re.split(r"\n(?=[\w.\-]+:)", jit.optimised_ir(r.llvm_ir))
    clean = [b for b in blocks if re.search(r"load <\d+ x float>", b) and re.search(r"fadd <\d+ x float>", b)
             and "masked" not in b and not re.search(r"select <|icmp \w+ <|umax", b)]
    assert clean
