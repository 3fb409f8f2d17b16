"""PYPLAT_CHECK=uninit follows values read from unwritten __local bytes (compiler/checker/
definedness.py, docs/tools.md "PYPLAT_CHECK"): reading such bytes is no finding; branching on
the value, computing an address from it or storing it to __global memory is, and the finding
names the work-item, where the value was used and where it was read; an `if` on it is one
only where its arms store to __global memory. A scan-like kernel that
carries such values through private variables and back into __local memory, using them only
under a range guard, reports nothing. Builds without uninit get the same IR as without the
machinery."""
import os
import subprocess
import sys
import textwrap
import time

import pytest
from llvmlite import ir

from pyplat.compiler import driver, options
from pyplat.compiler.lowering import irbuild

from support.kernel_check import PRELUDE, findings

pytest.importorskip("pyopencl")

KERNELS = r"""
__kernel void scan_like(__global int *out, __global const int *in, int n) {
    __local int buf[64];
    int l = get_local_id(0), i = get_global_id(0);
    if (i < n) buf[l] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = buf[l];
    int w = v * 2 + 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    buf[l] = w;
    barrier(CLK_LOCAL_MEM_FENCE);
    int s = buf[l] + (l > 0 ? buf[l - 1] : 0);
    if (i < n) out[i] = s;
}
__kernel void chosen(__global int4 *out, int n) {
    __local int4 buf[64];
    int l = get_local_id(0);
    if (l < n) buf[l] = (int4)(l);
    barrier(CLK_LOCAL_MEM_FENCE);
    int4 v = buf[l];
    out[get_global_id(0)] = select((int4)(-1), v, (int4)(l) < (int4)(n));
    out[get_global_id(0)].y = l < n ? v.y : -1;
}
__kernel void leak(__global int *out, int n) {
    __local int buf[64];
    int l = get_local_id(0);
    if (l < n) buf[l] = l;
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = buf[l];
    int w = v + 1;
    out[get_global_id(0)] = w;
}
__kernel void branch_on(__global int *out, int n) {
    __local int buf[64];
    int l = get_local_id(0);
    if (l < n) buf[l] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = buf[l];
    if (v > 0) out[get_global_id(0)] = 1; else out[get_global_id(0)] = 2;
}
__kernel void switch_on(__global int *out, int n) {
    __local int buf[64];
    int l = get_local_id(0);
    if (l < n) buf[l] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = buf[l], r = 0;
    switch (v) { case 1: r = 2; break; default: r = 3; }
    out[get_global_id(0)] = 0;
}
__kernel void carried(__global int *out, int n) {
    __local int buf[64];
    int l = get_local_id(0);
    if (l < n) buf[l] = l;
    int acc = 0;
    for (int i = get_global_id(0); i < 128; i += 64)
        acc += out[i] & 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = buf[l];
    acc += v;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = acc;
}
__kernel void index_with(__global int *out, int n) {
    __local int buf[64];
    int l = get_local_id(0);
    if (l < n) buf[l] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = buf[l] & 63;
    out[v] = 1;
}
"""


def line_of(text, kernel):
    """The line of `text` in `kernel` in KERNELS, as the compiler numbers the program's source."""
    lines = KERNELS.split("\n")
    start = next(n for n, line in enumerate(lines) if "void %s(" % kernel in line)
    return next(n for n, line in enumerate(lines[start:], start + 1) if text in line)


def run(body):
    src = PRELUDE + "prg = cl.Program(ctx, r'''" + KERNELS + "''').build()\n" + textwrap.dedent(body)
    env = dict(os.environ, PYPLAT_CHECK="uninit", PYPLAT_CACHE_DIR="off")
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=300, env=env, cwd="/")
    assert p.returncode == 0, p.stderr[-3000:]
    return p


def test_garbage_carried_through_private_and_local_memory_and_used_under_a_guard_is_no_finding():
    p = run('''
        n = 40
        inp = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.arange(64, dtype=np.int32))
        out = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.full(64, -7, np.int32))
        print("status", status(prg.scan_like(q, (64,), (64,), out, inp, np.int32(n))))
        r = np.empty(64, np.int32); cl.enqueue_copy(q, r, out)
        w = 2 * np.arange(n) + 1
        print("ok", bool((r[:n] == w + np.concatenate([[0], w[:-1]])).all() and (r[n:] == -7).all()))
        # select() and ?: that take the undefined lanes only where they are defined
        v = cl.Buffer(ctx, mf.READ_WRITE, 16 * 64)
        st = status(prg.chosen(q, (64,), (64,), v, np.int32(n)))
        c = np.empty((64, 4), np.int32); cl.enqueue_copy(q, c, v)
        want = np.where(np.arange(64)[:, None] < n, np.arange(64)[:, None], -1)
        print("chosen", st, bool((c == want).all()))
    ''')
    assert "status 0" in p.stdout and "ok True" in p.stdout, p.stdout + p.stderr
    assert "chosen 0 True" in p.stdout, p.stdout + p.stderr
    assert findings(p.stderr) == [], p.stderr


@pytest.mark.parametrize("kernel, use, words", [
    ("leak", "out[get_global_id(0)] = w", "a store of it to __global argument 'out'"),
    ("branch_on", "if (v > 0)", "a store to __global argument 'out' under a branch on it"),
    ("switch_on", "switch (v)", "a branch on it"),
    ("index_with", "out[v] = 1", "an address computed from it"),
    # (a per-work-item variable of a lockstep loop, defined there, undefined after it:
    # check_defined's clean variables must not take it for one)
    ("carried", "out[get_global_id(0)] = acc", "a store of it to __global argument 'out'"),
])
def test_a_use_of_an_undefined_value_is_found_with_where_it_was_read_and_used(kernel, use, words):
    p = run('''
        out = cl.Buffer(ctx, mf.READ_WRITE, 4 * 128)
        print("status", status(prg.%s(q, (128,), (64,), out, np.int32(40))))
        ok = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(64, np.int32))
        print("correct", status(prg.scan_like(q, (64,), (64,), ok, ok, np.int32(64))))
    ''' % kernel)
    assert "status -5" in p.stdout and "correct 0" in p.stdout, p.stdout   # CL_OUT_OF_RESOURCES
    found = findings(p.stderr)
    assert len(found) == 1, p.stderr
    read_line = line_of("int v = buf[l]", kernel)
    use_line = line_of(use, kernel)
    line = found[0]
    assert f"kernel '{kernel}' work-item global (" in line and "local (40, 0, 0)" in line, line
    assert "use of a value read from uninitialised __local memory (read at <source>:%d:" % read_line in line, line
    assert "from __local variable 'buf'): %s, at <source>:%d:" % (words, use_line) in line, line


def _ir(source, checks):
    return driver._compile_unit(source, options.parse(""), time.perf_counter(), checks=frozenset(checks))[0]


def test_builds_without_uninit_have_no_definedness_code():
    """The Builder's hook is inert off uninit: the IR is the one a plain IRBuilder makes."""
    hooked = {checks: _ir(KERNELS, checks) for checks in ((), ("bounds",), ("bounds", "races"))}
    insert = irbuild.Builder._insert
    try:
        irbuild.Builder._insert = ir.IRBuilder._insert
        plain = {checks: _ir(KERNELS, checks) for checks in hooked}
    finally:
        irbuild.Builder._insert = insert
    for checks, text in hooked.items():
        assert text == plain[checks], checks
        assert "defined." not in text and "llvm.umax.i32" not in text
    assert "defined." in _ir(KERNELS, ("bounds", "uninit"))
