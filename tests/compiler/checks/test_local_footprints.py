"""The footprints of `__local` accesses (compiler/checker/local_footprints.py): the bytes each work-item
touches, from the index arithmetic run for every local id and counted-loop turn, as C computes
it; and their use by the bounds check, which leaves out accesses whose every byte is inside
their variable, while an access that can leave it is still found when the kernel runs."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from pyplat.compiler.checker import intervals as check_intervals, local_footprints

from support.kernel_check import PRELUDE, findings, typed_kernels

pytest.importorskip("pyopencl")

SOURCE = r"""
#define WG 8
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void arithmetic(__global int *out, int n) {
    __local int t[64];
    int lid = (int)get_local_id(0);
    t[(lid - 4) / 3 + 8] = 1;                     /* division toward zero: -4/3 is -1 */
    t[(lid - 4) % 3 + 8] = 2;                     /* the remainder takes the dividend's sign */
    t[(1 << (lid + 32)) & 63] = 3;                /* shift counts modulo the width */
    t[(uint)(lid - 8) >> 28] = 4;                 /* unsigned wrap: 2^32 - 8 + lid, then >> 28 */
    for (int k = lid; k < WG; k += 2)
        t[16 + k] = 5;                            /* the turns from lid on, by 2 */
    if (lid < 3 && n > 0)
        t[32 + lid] = 6;                          /* known: lid < 3; n: not known (kept) */
    t[n] = 7;                                     /* not known at all */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[lid];
}
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void bounds(__global int *out) {
    __local int t[WG];
    __local int u[WG + 1][2];
    uint lid = get_local_id(0);
    t[lid] = 1;                                   /* inside */
    for (int k = 0; k < 2; k++)
        u[lid + 1][k] = 2;                        /* inside: rows 1..WG */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[(lid + 1) % WG] + t[lid + 1 - (lid + 1) / WG];
    out[get_global_id(0)] += t[lid + 1];          /* lid WG - 1 reads past t */
}
"""


def kernels():
    return typed_kernels(SOURCE)


def line(text):
    return next(i for i, s in enumerate(SOURCE.split("\n"), 1) if text in s)


def footprints_by_line(k):
    """{source line: (lanes' local ids, first bytes) or None} of k's `__local` writes."""
    occurrences, _ = check_intervals.local_accesses(k)
    fp = local_footprints.Footprints(k)
    out = {}
    for a in occurrences.values():
        if a.write:
            got = fp.of(a)
            out[a.var.cur.location.line] = None if got is None else (list(got[0]), list(got[1] // 4))
    return out


def test_footprints_follow_c_arithmetic():
    got = footprints_by_line(kernels()["arithmetic"])
    lids = list(range(8))
    assert got[line("/ 3 + 8] = 1;")] == (lids, [int((lid - 4) / 3) + 8 for lid in lids])
    assert got[line("% 3 + 8] = 2;")] == (lids, [int(np.fmod(lid - 4, 3)) + 8 for lid in lids])
    assert got[line("(1 << (lid + 32)) & 63")] == (lids, [(1 << lid) & 63 for lid in lids])
    assert got[line("(uint)(lid - 8) >> 28")] == (lids, [((lid - 8) % (1 << 32)) >> 28 for lid in lids])
    turns = sorted((lid, 16 + k) for lid in lids for k in range(lid, 8, 2))
    assert sorted(zip(*got[line("t[16 + k] = 5;")])) == turns
    assert got[line("t[32 + lid] = 6;")] == ([0, 1, 2], [32, 33, 34])
    assert got[line("t[n] = 7;")] is None


def test_accesses_inside_their_variable_lose_their_bounds_check():
    from pyplat.compiler.checker.table import CheckTable
    k = kernels()["bounds"]

    class G:
        f = k
    table = CheckTable.__new__(CheckTable)
    table.local_inside, table.called_kernels = {}, set()
    occurrences, _ = check_intervals.local_accesses(k)
    inside = {}
    for a in occurrences.values():
        inside.setdefault(a.var.cur.location.line, []).append(table.local_in_bounds(G, a.top))
    assert inside[line("t[lid] = 1;")] == [True]
    assert inside[line("u[lid + 1][k] = 2;")] == [True]
    assert inside[line("out[get_global_id(0)] = t[(lid + 1) % WG]")] == [True, True]
    assert inside[line("+= t[lid + 1];")] == [False]


def test_an_access_past_its_variable_is_still_found():
    body = textwrap.dedent('''
        P = cl.Program(ctx, %r).build()
        out = cl.Buffer(ctx, mf.READ_WRITE, 4 * 64)
        print("bounds", status(P.bounds(q, (8,), (8,), out)))
    ''' % SOURCE)
    env = dict(os.environ, PYPLAT_CHECK="bounds", PYPLAT_CACHE_DIR="off")
    p = subprocess.run([sys.executable, "-c", PRELUDE + body], capture_output=True, text=True, timeout=300,
                       env=env, cwd="/")
    assert p.returncode == 0, p.stderr[-3000:]
    found = findings(p.stderr)
    assert "bounds -5" in p.stdout, p.stdout + p.stderr
    assert len(found) == 1 and "out-of-bounds read of 4 bytes at offset 32 of __local variable 't' (32 bytes)" \
        in found[0] and ":%d:" % line("+= t[lid + 1];") in found[0], found
