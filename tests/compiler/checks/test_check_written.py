"""PYPLAT_CHECK=uninit: `__local` reads whose bytes the group surely wrote, with defined values,
before them: no flag load (compiler/checker/local_written.py). Which reads qualify, on the typed tree;
and undefined reads next to them, still found when the kernel runs."""
import os
import subprocess
import sys
import textwrap

import pytest

from pyplat.compiler.checker import local_written as check_written

from support.kernel_check import PRELUDE, findings, local_uses_by_line, typed_kernels

pytest.importorskip("pyopencl")

SOURCE = r"""
#define WG 16
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void covered(__global int *out, __global const int *in, int n) {
    __local int t[WG + 1];
    __local int u[WG];
    uint lid = get_local_id(0);
    t[lid] = in[lid];                             /* every work-item writes its own */
    if (lid == 0)
        t[WG] = 0;
    if (n > 3)
        u[lid] = 1;                               /* a condition not known: maybe not */
    int a = t[lid];                               /* own bytes, written just before */
    barrier(CLK_LOCAL_MEM_FENCE);
    int b = t[(lid + 1) % WG] + t[WG];            /* others' bytes, a barrier between */
    int c = u[lid];                               /* not surely written */
    t[lid] = b;                                   /* written before, a defined value: no flag store */
    u[lid] = c;                                   /* not written before: its flags are set */
    out[get_global_id(0)] = a + b + c;
}
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void same_epoch(__global int *out) {
    __local int t[WG];
    uint lid = get_local_id(0);
    t[lid] = (int)lid;
    int a = t[(lid + 1) % WG];                    /* another's, no barrier between */
    out[get_global_id(0)] = a;
}
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void carry(__global int *out, __global const int *in, int n) {
    __local int t[2][WG];
    uint lid = get_local_id(0);
    int s = 0;
    for (int base = 0; base < n; base += WG) {
        barrier(CLK_LOCAL_MEM_FENCE);
        t[0][lid] = in[base + lid];
        if (lid == 0 && base != 0)
            t[0][0] += t[1][WG - 1];                  /* last turn's: after the first turn only */
        barrier(CLK_LOCAL_MEM_FENCE);
        s += t[0][lid];
        if (lid == 0)
            s += t[1][3];                             /* no guard: the first turn reads it unwritten */
        barrier(CLK_LOCAL_MEM_FENCE);
        t[1][lid] = s;
    }
    out[get_global_id(0)] = s;
}
"""


def kernels():
    return typed_kernels(SOURCE)


def written_lines(k):
    """{source line: whether the reads of `__local` variables there are found written}."""
    found = check_written.surely_written(k)[0]
    return local_uses_by_line(k, lambda key: key in found)


def line(text):
    return next(i for i, s in enumerate(SOURCE.split("\n"), 1) if text in s)


def test_which_reads_are_surely_written():
    ks = kernels()
    lines = written_lines(ks["covered"])
    for text, written in (("int a = t[lid];", True), ("int b = t[(lid + 1) % WG] + t[WG];", True),
                          ("int c = u[lid];", False)):
        assert lines[line(text)] is written, (text, lines)
    settled = check_written.surely_written(ks["covered"])[1]
    writes = local_uses_by_line(ks["covered"], lambda key: key in settled)
    assert writes[line("t[lid] = b;")] is True and writes[line("u[lid] = c;")] is False, writes
    assert writes[line("t[lid] = in[lid];")] is False, writes
    assert written_lines(ks["same_epoch"])[line("int a = t[(lid + 1) % WG];")] is False
    lines = written_lines(ks["carry"])
    # (the unguarded read of t[1][3] reads it unwritten in the first turn; it feeds s, which is
    # stored to t[1]; the carry reads that into t[0][0], which s += t[0][lid] reads: each of
    # them may get an undefined value, and none is taken as written)
    for text in ("s += t[1][3];", "t[0][0] += t[1][WG - 1];", "s += t[0][lid];"):
        assert lines[line(text)] is False, (text, lines)


def test_a_guarded_carry_in_is_written():
    """Without the unguarded read, the carry's read of the last turn's row is written."""
    src = SOURCE.replace("            s += t[1][3];", "            s += 0;")
    k = typed_kernels(src)["carry"]
    lines = written_lines(k)
    for text in ("t[0][0] += t[1][WG - 1];", "s += t[0][lid];"):
        at = next(i for i, s in enumerate(src.split("\n"), 1) if text in s)
        assert lines[at] is True, (text, lines)


def test_undefined_reads_next_to_written_ones_are_found():
    body = textwrap.dedent('''
        P = cl.Program(ctx, %r).build()
        out = cl.Buffer(ctx, mf.READ_WRITE, 4 * 64)
        inp = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.arange(64, dtype=np.int32))
        print("covered", status(P.covered(q, (16,), (16,), out, inp, np.int32(2))))
        print("carry", status(P.carry(q, (16,), (16,), out, inp, np.int32(32))))
    ''' % SOURCE)
    env = dict(os.environ, PYPLAT_CHECK="uninit", PYPLAT_CACHE_DIR="off")
    p = subprocess.run([sys.executable, "-c", PRELUDE + body], capture_output=True, text=True, timeout=300,
                       env=env, cwd="/")
    assert p.returncode == 0, p.stderr[-3000:]
    found = findings(p.stderr)
    assert "covered -5" in p.stdout and "carry -5" in p.stdout, p.stdout + p.stderr
    assert any("kernel 'covered'" in f and "from __local variable 'u'" in f for f in found), found
    assert any("kernel 'carry'" in f and "read at <source>:%d" % line("s += t[1][3];") in f for f in found), found
