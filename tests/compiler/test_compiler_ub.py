"""Undefined behaviour in kernels never takes down the host.

Integer division and remainder by zero, and MIN / -1 for signed types, are undefined in OpenCL C;
on x86 a plain `idiv` traps (SIGFPE), which would kill the host process. The kernels run in a
child process so that a regression shows as a failed test, not a dead test session; the other
lanes must still be exact. Shift counts are masked to the promoted left operand's width.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from support import TESTS

TYPES = ["char", "uchar", "short", "ushort", "int", "uint", "long", "ulong"]
NP = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
      "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64}
WIDTHS = [1, 4, 16]
N = 16      # elements per run (a multiple of every width)

DIV_KERNEL = """
__kernel void k(__global const T *a, __global const T *b, __global T *q, __global T *r,
                __global T *cq, __global T *cr, __global T *z) {
    size_t i = get_global_id(0);
    q[i] = a[i] / b[i];
    r[i] = a[i] % b[i];
    T x = a[i], y = a[i];
    x /= b[i];
    y %= b[i];
    cq[i] = x;
    cr[i] = y;
    /* constant divisors 0 and -1: unspecified for 0 (and MIN / -1), never a trap */
    z[i] = a[i] / (T)0 + a[i] % (T)0 + a[i] / (T)(-1) + a[i] % (T)(-1);
}
"""


def aligned(values, dt):
    """A copy of `values` as dt at a 128-byte aligned address (as OpenCL buffers are: a kernel
    may load a whole long16 with an aligned vector load)."""
    raw = np.zeros(N * 8 + 128, np.uint8)
    off = (-raw.ctypes.data) % 128
    out = raw[off:off + N * np.dtype(dt).itemsize].view(dt)
    out[:] = values
    return out


def inputs(tname):
    """Dividends and divisors with a zero divisor, MIN / -1 (signed) and ordinary lanes."""
    dt = NP[tname]
    info = np.iinfo(dt)
    a = [info.min, info.min, 7, -7, 100, info.max, 0, 5, -128, 9, info.min, 3, 1, -1, 42, 11]
    b = [-1, 0, 2, 2, -3, 0, 0, -1, 7, -4, 1, 0, -1, 5, 13, 3]
    bits = 8 * np.dtype(dt).itemsize
    wrap = lambda v: np.array([x % (1 << bits) for x in v], np.uint64).astype(dt)  # noqa: E731
    return aligned(wrap(a), dt), aligned(wrap(b), dt)


def c_div(a, b):
    """C's truncating quotient and remainder, exact in Python integers."""
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    return q, a - q * b


def child(out):
    """Build and run every kernel; save the results (runs in a child process)."""
    from support.compiled import ok, run
    res = {}
    for tname in TYPES:
        for w in WIDTHS:
            vt = tname + (str(w) if w > 1 else "")
            r = ok(DIV_KERNEL.replace("T", vt))
            a, b = inputs(tname)
            outs = [aligned(0, NP[tname]) for _ in range(5)]
            run(r.kernels["k"], [a, b] + outs, (N // w,), (1,))
            for name, o in zip(("q", "r", "cq", "cr", "z"), outs):
                res["%s_%d_%s" % (tname, w, name)] = o
    np.savez(out, **res)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("ub") / "res.npz")
    here = os.path.dirname(os.path.abspath(__file__))
    code = "import sys; sys.path[:0] = [%r, %r]; import test_compiler_ub as m; m.child(%r)" % (here, str(TESTS), out)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                       cwd=os.path.dirname(out),
                       env=dict(os.environ, PYPLAT_CACHE_DIR="off"))
    assert p.returncode == 0, "kernel process died (rc %d): %s" % (p.returncode, p.stderr[-3000:])
    return np.load(out)


@pytest.mark.parametrize("w", WIDTHS)
@pytest.mark.parametrize("tname", TYPES)
def test_division_never_traps(results, tname, w):
    a, b = inputs(tname)
    bits = 8 * a.itemsize
    for i in range(N):
        x, y = int(a[i]), int(b[i])
        if y == 0 or (x == int(np.iinfo(a.dtype).min) and y == -1 and x < 0):
            continue                       # undefined: any value, but the lanes around are exact
        q, rem = c_div(x, y)
        wrap = lambda v: np.array(v & ((1 << bits) - 1), np.uint64).astype(a.dtype)  # noqa: E731
        for kind, want in (("q", q), ("r", rem), ("cq", q), ("cr", rem)):
            got = results["%s_%d_%s" % (tname, w, kind)][i]
            assert got == wrap(want), (tname, w, kind, i, x, y, got)


def test_shift_counts_masked():
    """Counts are taken modulo the bit width of the (promoted) left operand's element type,
    for scalars and vectors, plain and compound (<<=, >>=)."""
    from support.compiled import ok, run
    src = """
    __kernel void k(__global const int *s, __global int *o, __global char4 *v, __global long *l) {
        int i = get_global_id(0);
        int c = s[i];
        o[6*i + 0] = 1 << c;                 /* int: count & 31 */
        o[6*i + 1] = (-256) >> c;
        uchar u = 1;
        u <<= c;                             /* promoted to int, then truncated */
        o[6*i + 2] = u;
        char ch = -128;
        ch >>= c;
        o[6*i + 3] = ch;
        short sh = 3;
        o[6*i + 4] = sh << c;                /* int result of the promoted operand */
        o[6*i + 5] = (uint)0x80000000u >> c;
        char4 x = (char4)(1, -128, 64, 3);
        char4 y = x << (char4)(c);           /* char elements: count & 7 */
        y |= (x >> c) & (char4)(0);
        v[2*i] = y;
        char4 z = x;
        z >>= (char4)(c);
        v[2*i + 1] = z;
        l[i] = 1L << c;                      /* long: count & 63 */
    }"""
    counts = np.array([0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, -1], np.int32)
    n = len(counts)
    o = np.zeros(6 * n, np.int32)
    v = np.zeros(8 * n, np.int8)
    lo = np.zeros(n, np.int64)
    r = ok(src)
    run(r.kernels["k"], [counts, o, v, lo], (n,), (1,))
    o = o.reshape(n, 6)
    v = v.reshape(n, 2, 4)
    for i, c in enumerate(counts.tolist()):
        c5, c3, c6 = c & 31, c & 7, c & 63
        i32 = lambda x: int(np.array(x & 0xFFFFFFFF, np.uint32).view(np.int32))  # noqa: E731
        assert o[i, 0] == i32(1 << c5), c
        assert o[i, 1] == -256 >> c5, c
        assert o[i, 2] == (1 << c5) & 0xFF, c
        assert o[i, 3] == int(np.array((-128 >> c5) & 0xFF, np.uint8).view(np.int8)), c
        assert o[i, 4] == i32(3 << c5), c
        assert o[i, 5] == i32(0x80000000 >> c5), c
        x = [1, -128, 64, 3]
        assert list(v[i, 0]) == [int(np.array((e << c3) & 0xFF, np.uint8).view(np.int8)) for e in x], c
        assert list(v[i, 1]) == [e >> c3 for e in x], c
        assert lo[i] == int(np.array((1 << c6) & (2**64 - 1), np.uint64).view(np.int64)), c
