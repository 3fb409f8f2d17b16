"""PYPLAT_CHECK=races: `__local` accesses left without race checks where a barrier interval
cannot race (compiler/checker/intervals.py). Which accesses qualify, on the typed tree; and races
that look close to those, still found when the kernel runs."""
import pytest

from pyplat.compiler.checker import intervals as check_intervals
from pyplat.compiler.lowering.barrier_tree import walk

from support.kernel_check import PRELUDE, findings, local_uses_by_line, typed_kernels

pytest.importorskip("pyopencl")

SOURCE = r"""
#define WG 16
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void columns(__global int *out) {
    __local int t[4][WG + 1];
    __local int spread[64];
    uint lid = get_local_id(0);
    t[0][lid] = (int)lid;                     /* the first region (from the kernel's start) */
    spread[lid] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    int s = t[0][lid];                        /* closed: one column each */
    for (int r = 1; r < 4; r++) {
        s += t[r - 1][lid];
        t[r][lid] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int a = t[3][lid] + t[2][(lid + 1) % WG]; /* closed, reads only */
    int b = spread[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    t[1][lid + 1] = a;                        /* two columns (c 1 and 0): rows apart */
    t[2][lid] = b;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[1][lid];        /* the last region: reads only */
}
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void transposed(__global int *out, int n) {     /* pyopencl's scan: footprints */
    __local int d[4 + 1][WG + 1];
    uint lid = get_local_id(0);
    for (int k = 0; k < 4; k++) {
        const uint o = k * WG + lid;
        d[o % 4][o / 4] = (int)o;                     /* each element one work-item's */
    }
    if (lid == 0 && n > 0)
        d[0][0] += d[4][WG - 1];                      /* d[0][0] is work-item 0's; row 4 unwritten */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid > 0) {
        int s = d[4][lid - 1];
        for (int k = 0; k < 4; k++)
            d[k][lid] += s;                           /* rows 0..3, apart from row 4 */
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    d[lid / 2][0] = 1;                                /* two work-items per element */
    barrier(CLK_LOCAL_MEM_FENCE);
    d[n % 4][lid * 3 % WG] = 2;                       /* a row not known (the columns: apart) */
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < 2; k++)
        d[1][lid + k] = 3;                            /* lid + 1 is the next one's lid */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = d[lid % 4][lid / 4];
}
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void looped(__global int *out, int n) {
    __local int t[WG + 1], u[WG + 1];
    uint lid = get_local_id(0);
    int s = 0;
    for (int i = 0; i < n; i++) {
        t[lid] = i;                           /* the next turn's writes and the reads at the end */
        u[lid] = i;                           /* are one region: no barrier on the way back */
        barrier(CLK_LOCAL_MEM_FENCE);
        s += t[lid + 1] + u[lid + 1];
        barrier(CLK_LOCAL_MEM_FENCE);
        s += t[lid + 1] + u[lid];
    }
    out[get_global_id(0)] = s;
}
__kernel void no_size(__global int *out) {
    __local int t[64];
    size_t lid = get_local_id(0);
    t[lid] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    t[lid] += 1;                              /* closed, but the group's shape is not known */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[lid];
}
__kernel void tree(__global int *out) {            /* pyopencl's reduction tree */
    __local int t[64];
    uint lid = get_local_id(0);
    t[lid] = (int)lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 32) t[lid] = t[lid] + t[lid + 32];        /* [0, 32) and [32, 64): apart */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 20) t[lid] = t[lid] + t[lid + 16];        /* [0, 20) and [16, 36) overlap */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[lid];
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void sized_tree(__global int *out) {
    __local int t[64];
    uint lid = get_local_id(0);
    t[lid] = (int)lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 32) t[lid] += t[lid + 32];                /* apart, and groups of one row */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[lid];
}
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void escaped(__global int *out) {
    __local int t[WG];
    __local int *p = t;
    uint lid = get_local_id(0);
    t[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    t[lid] = 1;                               /* closed, but t is reached through p too */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = p[lid];
}
"""


def kernels():
    return typed_kernels(SOURCE)


def free_lines(k):
    """Source lines of k's uses of `__local` variables: {line: True (no race check), ONE_ROW
    (one only in groups of more than one row) or False}, where all uses on the line agree."""
    free = check_intervals.race_free_accesses(k)
    return local_uses_by_line(k, lambda key: free.get(key, False))


def line(text):
    return next(i for i, s in enumerate(SOURCE.split("\n"), 1) if text in s)


def test_which_accesses_leave_out_their_race_checks():
    ks = kernels()
    lines = free_lines(ks["columns"])
    for text, free in (("t[0][lid] = (int)lid;", True), ("spread[lid] = 1;", True),
                       ("int s = t[0][lid];", True), ("s += t[r - 1][lid];", True), ("t[r][lid] = s;", True),
                       ("int a = t[3][lid]", True), ("int b = spread[lid];", True),
                       ("t[1][lid + 1] = a;", True), ("t[2][lid] = b;", True),
                       ("out[get_global_id(0)] = t[1][lid];", True)):
        assert lines[line(text)] is free, (text, lines)
    lines = free_lines(ks["looped"])
    for text, free in (("t[lid] = i;", False), ("s += t[lid + 1] + u[lid + 1];", True), ("u[lid] = i;", True),
                       ("s += t[lid + 1] + u[lid];", "mixed")):
        assert lines[line(text)] == free, (text, lines)
    lines = free_lines(ks["transposed"])
    for text, free in (("d[o % 4][o / 4] = (int)o;", True), ("d[0][0] += d[4][WG - 1];", True),
                       ("int s = d[4][lid - 1];", True), ("d[k][lid] += s;", True),
                       ("d[lid / 2][0] = 1;", False), ("d[n % 4][lid * 3 % WG] = 2;", False),
                       ("d[1][lid + k] = 3;", False), ("= d[lid % 4][lid / 4];", True)):
        assert lines[line(text)] is free, (text, lines)
    # (a column private to each work-item: in groups of one row only, without a required size)
    assert free_lines(ks["no_size"])[line("t[lid] += 1;")] == check_intervals.ONE_ROW
    assert not any(free_lines(ks["escaped"]).values())
    tree = free_lines(ks["tree"])
    assert tree[line("t[lid] = t[lid] + t[lid + 32];")] == check_intervals.ONE_ROW
    assert tree[line("t[lid] = t[lid] + t[lid + 16];")] is False
    assert free_lines(ks["sized_tree"])[line("t[lid] += t[lid + 32];")] is True


RACES = r"""
__kernel __attribute__((reqd_work_group_size(16, 1, 1)))
void columns_overlap(__global int *out) {
    __local int t[4][8];                      /* 16 work-items, rows of 8: lid 8 is row 1's lid 0 */
    uint lid = get_local_id(0);
    t[lid / 8][lid % 8] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    t[0][lid] = 1;
    t[1][lid] = 2;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[0][lid % 8];
}
__kernel __attribute__((reqd_work_group_size(8, 8, 1)))
void rows_share_columns(__global int *out) {
    __local int t[8];
    size_t x = get_local_id(0);
    t[x] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    t[x] = (int)get_local_id(1);             /* 8 work-items per element */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0) + 8 * get_global_id(1)] = t[x];
}
__kernel __attribute__((reqd_work_group_size(16, 1, 1)))
void neighbour(__global int *out) {
    __local int t[17];
    uint lid = get_local_id(0);
    t[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    t[lid] = 1;
    t[lid + 1] += 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[lid];
}
__kernel __attribute__((reqd_work_group_size(16, 1, 1)))
void through_pointer(__global int *out) {
    __local int t[16];
    __local int *p = t + 1;
    uint lid = get_local_id(0);
    t[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    t[lid] = 1;
    if (lid < 15) p[lid] = 2;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[lid];
}
__kernel __attribute__((reqd_work_group_size(16, 1, 1)))
void loop_overlap(__global int *out) {
    __local int t[17];
    uint lid = get_local_id(0);
    for (int k = 0; k < 2; k++)
        t[lid + k] = (int)k;                  /* t[lid + 1]: the next work-item's t[lid] */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[lid];
}
__kernel __attribute__((reqd_work_group_size(16, 1, 1)))
void carry_in(__global int *out) {
    __local int d[5][17];
    uint lid = get_local_id(0);
    for (int k = 0; k < 4; k++) {
        const uint o = k * 16 + lid;
        d[o % 4][o / 4] = 1;
    }
    if (lid == 0)
        d[1][0] += 10;                        /* d[1][0] is work-item 1's (o = 1) */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = d[lid % 4][lid / 4];
}
__kernel void tree_rows(__global int *out) {
    __local int t[16];
    size_t lid = get_local_id(0);
    t[lid] = (int)lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 8) t[lid] = t[lid] + t[lid + 8];       /* every row of a 2-D group writes t[lid] */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0) + 16 * get_global_id(1)] = t[lid];
}
__kernel __attribute__((reqd_work_group_size(16, 1, 1)))
void private_columns(__global int *out) {
    __local int t[4][17];
    uint lid = get_local_id(0);
    t[0][lid] = (int)lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = 1; r < 4; r++)
        t[r][lid] = t[r - 1][lid] + 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[3][15 - lid];
}
"""


@pytest.mark.parametrize("kernel,size,expected", [
    ("columns_overlap", (16,), "write after another work-item's write of 4 bytes at offset 60 of __local variable "
     "'t' (128 bytes) (other work-item: local linear id 7,"),
    ("rows_share_columns", (8, 8), "write after another work-item's write of 4 bytes at offset "),
    ("neighbour", (16,), "of 4 bytes at offset "),
    ("through_pointer", (16,), "write after another work-item's write of 4 bytes at offset "),
    ("private_columns", (16,), None),
    ("tree_rows", (16, 2), "of 4 bytes at offset "),
    ("loop_overlap", (16,), "write after another work-item's write of 4 bytes at offset "),
    ("carry_in", (16,), "after another work-item's write of 4 bytes at offset 68 of __local variable 'd'"),
    ("tree_rows", (16,), "none: 8,10,12,14,16,18,20,22,8,9,10,11,12,13,14,15"),
])
def test_races_next_to_the_left_out_checks_are_found(kernel, size, expected):
    import os
    import subprocess
    import sys
    import textwrap
    body = textwrap.dedent('''
        P = cl.Program(ctx, %r).build()
        out = cl.Buffer(ctx, mf.READ_WRITE, 4 * 64)
        ev = P.%s(q, %r, %r, out)
        print("status", status(ev))
        r = np.empty(16, np.int32); cl.enqueue_copy(q, r, out)
        print("first", ",".join(str(int(x)) for x in r))
    ''' % (RACES, kernel, size, size))
    env = dict(os.environ, PYPLAT_CHECK="bounds,races", PYPLAT_CACHE_DIR="off")
    p = subprocess.run([sys.executable, "-c", PRELUDE + body], capture_output=True, text=True, timeout=300,
                       env=env, cwd="/")
    assert p.returncode == 0, p.stderr[-3000:]
    found = findings(p.stderr)
    if expected is not None and expected.startswith("none: "):     # no race: the sums
        assert found == [] and "status 0" in p.stdout and "first " + expected[6:] in p.stdout, p.stdout + p.stderr
        return
    if expected is None:
        assert found == [] and "status 0" in p.stdout, p.stdout + p.stderr
        assert "first " + ",".join(str(3 + 15 - i) for i in range(16)) in p.stdout, p.stdout
        return
    assert len(found) == 1 and "data race" in found[0] and expected in found[0], p.stderr
    assert f"kernel '{kernel}'" in found[0], found[0]
