"""Builtins pyopencl's kernels use: pointer-output math, integer extras, half loads/stores,
async copies, atomics, anonymous struct members, switch, printf."""
import math

import numpy as np
import pytest

from pyplat.compiler import build
from support.compiled import Local, ok, run, ulp_diff

X = np.array([0.0, -0.0, 0.3, -0.3, 1.5, -2.75, 7.0, 1e-3, 123.456, -1e6, np.inf, -np.inf, np.nan,
              1e-40, 3.0, -5.5], np.float32)


def run1(src, args, n, wg=None, options=""):
    r = ok(src, options)
    run(list(r.kernels.values())[0], args, (n,), (wg or 1,))
    return r


def test_pointer_output_math():
    src = """
    __kernel void k(__global const float *x, __global float *o, __global int *e) {
        int i = get_global_id(0);
        float c, fl, ip, f2;
        int ex, q, sg;
        o[16*0 + i] = sincos(x[i], &c);
        o[16*1 + i] = c;
        o[16*2 + i] = fract(x[i], &fl);
        o[16*3 + i] = fl;
        o[16*4 + i] = modf(x[i], &ip);
        o[16*5 + i] = ip;
        o[16*6 + i] = frexp(x[i], &ex);
        e[16*0 + i] = ex;
        o[16*7 + i] = ldexp(x[i], 3);
        o[16*8 + i] = remquo(x[i], 0.7f, &q);
        e[16*1 + i] = q;
        o[16*9 + i] = lgamma_r(x[i], &sg);
        e[16*2 + i] = sg;
        float4 v = (float4)(x[i], 1.25f, -3.5f, 2.0f), vi;
        int4 ev;
        float4 fv = frexp(v, &ev);
        o[16*10 + i] = fv.x + fract(v, &vi).y + vi.z;
        e[16*3 + i] = ev.w;
        o[16*11 + i] = cbrt(x[i]);
        o[16*12 + i] = copysign(2.0f, x[i]);
        o[16*13 + i] = nextafter(x[i], 0.0f);
        o[16*14 + i] = ilogb(x[i] == 0 ? 1.0f : x[i]);
        o[16*15 + i] = sinpi(x[i]);
    }"""
    o = np.zeros(16 * 16, np.float32)
    e = np.zeros(16 * 4, np.int32)
    with np.errstate(all="ignore"):
        run1(src, [X, o, e], 16)
        o = o.reshape(16, 16)
        e = e.reshape(4, 16)
        fin = np.isfinite(X)
        np.testing.assert_allclose(o[0][fin], np.sin(X[fin]), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(o[1][fin], np.cos(X[fin]), rtol=1e-6, atol=1e-7)
        fl = np.floor(X)
        fr = np.where(np.isinf(X), np.copysign(0, X), np.minimum(X - fl, np.float32(float.fromhex('0x1.fffffep-1'))))
        fr = np.where(X == 0, X, fr)
        np.testing.assert_array_equal(o[2], fr)
        np.testing.assert_array_equal(np.signbit(o[2]), np.signbit(fr))
        np.testing.assert_array_equal(o[3], fl)
        mf, mi = np.modf(X)
        np.testing.assert_array_equal(o[4], mf)
        np.testing.assert_array_equal(np.signbit(o[4]), np.signbit(mf))
        np.testing.assert_array_equal(o[5], mi)
        m, ex = np.frexp(X)
        np.testing.assert_array_equal(o[6], m)
        np.testing.assert_array_equal(e[0][fin], ex[fin])
        np.testing.assert_array_equal(o[7], np.ldexp(X, 3))
        np.testing.assert_array_equal(o[8][fin], np.float32([math.remainder(float(v), float(np.float32(0.7))) for v in X[fin]]))
        lg = np.float32([math.lgamma(float(v)) if np.isfinite(v) and v != 0 and not (v < 0 and v == int(v)) else np.inf
                         for v in X])
        assert ulp_diff(o[9][fin], lg[fin]).max() <= 16
        assert o[10][0] == 0.0 + 0.25 + -4.0
        assert e[3][0] == 2
        np.testing.assert_allclose(o[11][fin], np.cbrt(X[fin]), rtol=1e-6)
        np.testing.assert_array_equal(o[12], np.copysign(np.float32(2), X))
        np.testing.assert_array_equal(o[13], np.nextafter(X, np.float32(0)))
        assert o[14][4] == 0 and o[14][8] == 6
        np.testing.assert_allclose(o[15][fin], np.sin(np.pi * X[fin].astype(np.float64)), atol=1e-6)
        assert o[15][6] == 0.0


def test_integer_extras():
    src = """
    __kernel void k(__global const int *a, __global const int *b, __global long *o) {
        int i = get_global_id(0);
        int x = a[i], y = b[i];
        o[8*i+0] = abs_diff(x, y);
        o[8*i+1] = mad_hi(x, y, 5);
        o[8*i+2] = mad_sat(x, y, 7);
        o[8*i+3] = upsample((short)x, (ushort)y);
        o[8*i+4] = add_sat(x, y) + 0 * sub_sat(x, y);
        o[8*i+5] = (long)hadd(x, y) + rhadd(x, y);
        o[8*i+6] = clz(x) + popcount(x);
        o[8*i+7] = mad_sat((long)x << 20, (long)y << 20, 1L);
    }"""
    a = np.array([3, -7, 2**31 - 1, -2**31, 100000, 0], np.int32)
    b = np.array([10, 5, 2, 3, 100000, -1], np.int32)
    o = np.zeros(8 * len(a), np.int64)
    run1(src, [a, b, o], len(a))
    o = o.reshape(-1, 8)
    A, Bv = a.astype(np.int64), b.astype(np.int64)
    np.testing.assert_array_equal(o[:, 0], np.abs(A - Bv).astype(np.uint32).astype(np.int64))
    np.testing.assert_array_equal(o[:, 1], ((A * Bv) >> 32) + 5)
    np.testing.assert_array_equal(o[:, 2], np.clip(A * Bv + 7, -2**31, 2**31 - 1))
    np.testing.assert_array_equal(o[:, 3], (a.astype(np.int16).astype(np.int64) << 16) | (b.astype(np.uint16)))
    np.testing.assert_array_equal(o[:, 4], np.clip(A + Bv, -2**31, 2**31 - 1))
    np.testing.assert_array_equal(o[:, 5], ((A + Bv) >> 1) + ((A + Bv + 1) >> 1))
    prod = [(int(x) << 20) * (int(y) << 20) + 1 for x, y in zip(a, b)]
    np.testing.assert_array_equal(o[:, 7], [min(max(p, -2**63), 2**63 - 1) for p in prod])


def test_vload_vstore_half_rounding():
    src = """
    __kernel void k(__global const float *x, __global half *h, __global float *back) {
        int i = get_global_id(0);
        vstore_half(x[i], i, h);
        vstore_half_rtz(x[i], i + 16, h);
        vstore_half_rtp(x[i], i + 32, h);
        vstore_half_rtn(x[i], i + 48, h);
        back[i] = vload_half(i, h);
        if (i == 0) {
            vstore_half4((float4)(1.0f, 2.0f, 3.0f, 4.0f), 16, h);
            float4 v = vload_half4(16, h);
            back[16] = v.x + v.y + v.z + v.w;
        }
    }"""
    x = np.array([1.0, 1.0001, -1.0001, 70000, -70000, 0.1, -0.1, 65504, 1e-8, -1e-8, np.nan, np.inf,
                  3.14159, -2.71828, 0.0, -0.0], np.float32)
    h = np.zeros(4 * 16 + 64, np.uint16)
    back = np.zeros(17, np.float32)
    run1(src, [x, h, back], 16)
    hv = h.view(np.float16)
    rte = x.astype(np.float16)
    np.testing.assert_array_equal(hv[:16][~np.isnan(x)], rte[~np.isnan(x)])
    x64 = x.astype(np.float64)
    fin = np.isfinite(x)
    for k, pick in ((1, lambda lo, hi, v: lo if v >= 0 else hi), (2, lambda lo, hi, v: hi), (3, lambda lo, hi, v: lo)):
        got = hv[16 * k:16 * k + 16].astype(np.float64)
        for i in np.nonzero(fin)[0]:
            v = x64[i]
            r = np.float64(np.float16(v))
            if r == v:
                assert got[i] == v
                continue
            lo = r if r < v else np.float64(np.nextafter(np.float16(r), np.float16(-np.inf)))
            hi = r if r > v else np.float64(np.nextafter(np.float16(r), np.float16(np.inf)))
            assert got[i] == pick(lo, hi, v), (k, v, got[i])
    assert back[16] == 10.0
    np.testing.assert_array_equal(back[:16][fin], rte.astype(np.float32)[fin])


def test_async_work_group_copy():
    src = """
    __kernel void k(__global const float *g, __global float *o, __local float *l) {
        int n = get_local_size(0);
        event_t e = async_work_group_copy(l, g + get_group_id(0) * n * 2, n * 2, 0);
        wait_group_events(1, &e);
        int i = get_local_id(0);
        float v = l[i] + l[2 * n - 1 - i];
        barrier(CLK_LOCAL_MEM_FENCE);
        l[i] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        e = async_work_group_strided_copy(o + get_group_id(0), l, n, get_num_groups(0), 0);
        wait_group_events(1, &e);
        prefetch(g, 4);
    }"""
    wg, groups = 8, 3
    g = np.arange(wg * 2 * groups, dtype=np.float32)
    o = np.zeros(wg * groups, np.float32)
    r = ok(src)
    run(r.kernels["k"], [g, o, Local(4 * 2 * wg)], (wg * groups,), (wg,))
    gg = g.reshape(groups, 2 * wg)
    exp = gg[:, :wg] + gg[:, ::-1][:, :wg]
    np.testing.assert_array_equal(o.reshape(wg, groups).T, exp)


def test_atomics_global_local_64bit_and_float_xchg():
    src = """
    #pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
    #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
    __kernel void k(__global int *c, __global long *l, __global float *f, __global uint *u) {
        __local int lc;
        if (get_local_id(0) == 0) lc = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        atomic_inc(&lc);
        atom_add(&c[0], 2);
        atomic_max(&c[1], (int)get_global_id(0));
        atomic_min(&u[0], (uint)get_global_id(0) + 5);
        atom_add(&l[0], 1L << 33);
        atom_max(&l[1], (long)get_global_id(0));
        atomic_xchg(&f[0], 1.5f);
        atomic_cmpxchg(&c[2], 0, 42);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) == 0) atomic_add(&c[3], lc);
    }"""
    c = np.zeros(4, np.int32)
    l = np.zeros(2, np.int64)
    f = np.zeros(1, np.float32)
    u = np.full(1, 1000, np.uint32)
    r = ok(src)
    run(r.kernels["k"], [c, l, f, u], (64,), (16,))
    assert list(c) == [128, 63, 42, 64]
    assert l[0] == 64 << 33 and l[1] == 63 and f[0] == 1.5 and u[0] == 5


def test_anonymous_struct_members_complex_like():
    src = """
    typedef union { struct { float x, y; } __attribute__((aligned(8)));
                    struct { float real, imag; } __attribute__((aligned(8))); } cf;
    __kernel void k(__global cf *a, __global float *o) {
        int i = get_global_id(0);
        cf v = a[i];
        o[i] = v.real * 10 + v.imag + v.x - v.y;
        a[i].imag = 7;
    }"""
    a = np.array([(1, 2), (3, 4)], np.float32)
    o = np.zeros(2, np.float32)
    run1(src, [a, o], 2)
    np.testing.assert_array_equal(o, [11, 33])
    assert a[0, 1] == 7 and a[1, 1] == 7


def test_switch():
    src = """
    __kernel void k(__global const int *a, __global int *o) {
        int i = get_global_id(0), r = 0;
        for (int j = 0; j < 2; j++) {
            switch (a[i]) {
            case 0: r += 1;            /* falls through */
            case 1: case 2: r += 10; break;
            case -5: { r += 100; continue; }
            default: r += 1000;
            }
            r += 5;
        }
        switch (a[i] & 1) { case 1: r = -r; }
        o[i] = r;
    }"""
    a = np.array([0, 1, 2, -5, 7, 8], np.int32)
    o = np.zeros(6, np.int32)
    run1(src, [a, o], 6)
    exp = []
    for v in a:
        r = 0
        for _ in range(2):
            if v == 0:
                r += 11
            elif v in (1, 2):
                r += 10
            elif v == -5:
                r += 100
                continue
            else:
                r += 1000
            r += 5
        exp.append(-r if v & 1 else r)
    np.testing.assert_array_equal(o, exp)


PRINTF = r"""
__kernel void k(__global const float *f) {
    int i = get_global_id(0);
    printf("i=%d f=%.2f %s|%5u|%x|%c %ld %%\n", i, f[i], "str", 7u, 255, 'A', 1L << 40);
    if (i == 0) {
        printf("%v4hlf|%v2d|%#v3x\n", (float4)(1.5f, 2, 3, 4), (int2)(-1, 2), (uint3)(10, 11, 12));
        printf("%v2hhd %hd\n", (char2)(-3, 4), (short)-7);
    }
}
"""


def test_printf_to_fd1(capfd):
    f = np.array([1.25, -2.5], np.float32)
    run1(PRINTF, [f], 2)
    out = capfd.readouterr().out
    assert out == ("i=0 f=1.25 str|    7|ff|A 1099511627776 %\n"
                   "1.500000,2.000000,3.000000,4.000000|-1,2|0xa,0xb,0xc\n"
                   "-3,4 -7\n"
                   "i=1 f=-2.50 str|    7|ff|A 1099511627776 %\n")


def test_printf_long_output_and_bad_format(capfd):
    src = r"""__kernel void k(void) { printf("%s%s%s\n", "%d", "x", "y");
        for (int j = 0; j < 300; j++) printf("%d-", j % 10); printf("\n");
        printf("<%s>\n", LONG); }"""
    run1(src, [], 1, options="-DLONG=\"\\\"%s\\\"\"" % ("ab" * 1500))
    out = capfd.readouterr().out
    assert out.startswith("%dxy\n0-1-2-") and len(out) == 5 + 600 + 1 + 3003
    r = build("__kernel void k(__constant char *s) { printf(s); }")
    assert not r.ok and "string literal" in r.log and "internal" not in r.log


def test_builtin_constants_used_twice():
    # clang declares __builtin_inff/__builtin_nanf implicitly at their first call: a second use
    # must still be a builtin, not a function declared elsewhere (link time)
    src = """
    __kernel void k(__global float *o) {
        o[0] = INFINITY; o[1] = -INFINITY; o[2] = NAN; o[3] = HUGE_VALF + NAN;
    }"""
    o = np.zeros(4, np.float32)
    run1(src, [o], 1)
    assert o[0] == np.inf and o[1] == -np.inf and np.isnan(o[2]) and np.isnan(o[3])


def test_kernels_that_may_print_are_marked():
    # the in-order queue orders kernels that may call printf (their output is observable)
    src = """
    void say(int x) { printf("%d\\n", x); }
    void quiet(__global int *o) { o[0] = 1; }
    __kernel void direct(__global int *o) { printf("hi\\n"); }
    __kernel void nested(__global int *o) { say(o[0]); }
    __kernel void silent(__global int *o) { quiet(o); }
    """
    r = ok(src)
    assert (r.kernels["direct"].prints, r.kernels["nested"].prints, r.kernels["silent"].prints) == \
        (True, True, False)
