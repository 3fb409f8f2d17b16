"""clang's own builtins that its OpenCL C mode accepts and kernels use (__builtin_expect,
__builtin_isnan, __builtin_popcount, __builtin_sqrtf, ...), C11 _Generic and __builtin_offsetof:
they compile under -cl-std=CL1.2 and CL3.0 and compute what C says; those still unsupported fail
with a clear build-log message naming them."""
import math

import numpy as np
import pytest

from pyplat.compiler import build
from support.compiled import ok, run

STDS = ["-cl-std=CL1.2", "-cl-std=CL3.0"]

KERNEL = r"""
#define likely(x) __builtin_expect(!!(x), 1)
#define KIND(x) _Generic((x), float: 1, int: 2, uint: 3, float4: 4, default: 5)
typedef struct { char c; float f; int4 v; } S;
__kernel void k(__global const float *x, __global const uint *u, __global int *o, __global float *f) {
    int i = 0;
    o[i++] = likely(u[0] > 3) ? 10 : 20;
    o[i++] = __builtin_expect(u[1], 0);
    o[i++] = __builtin_isnan(x[0]);
    o[i++] = __builtin_isinf(x[1]);
    o[i++] = __builtin_isfinite(x[1]);
    o[i++] = __builtin_isnormal(x[2]);
    o[i++] = __builtin_signbit(x[3]) != 0;
    o[i++] = __builtin_popcount(u[0]);
    o[i++] = __builtin_clz(u[0]);
    o[i++] = __builtin_ctz(u[0]);
    o[i++] = __builtin_popcountl((ulong)u[0] << 40 | 1);
    o[i++] = __builtin_clzll((ulong)u[0]);
    o[i++] = __builtin_bswap32(u[2]) == 0x78563412u;
    o[i++] = __builtin_bswap16((ushort)0x1234) == 0x3412;
    o[i++] = KIND(x[0]) * 1000 + KIND(o[0]) * 100 + KIND(u[0]) * 10 + KIND((char)1);
    o[i++] = KIND(vload4(0, x));
    o[i++] = __builtin_offsetof(S, f) * 100 + __builtin_offsetof(S, v);
    o[i++] = __builtin_constant_p(7);
    __builtin_assume(u[0] > 0);
    __builtin_prefetch(x);
    if (u[0] == 12345u) __builtin_unreachable();
    float y = x[4];
    f[0] = __builtin_sqrtf(y);
    f[1] = __builtin_fabsf(-y);
    f[2] = __builtin_copysignf(2.0f, x[3]);
    f[3] = __builtin_fmaxf(y, x[0]);
    f[4] = __builtin_floorf(-y);
    f[5] = __builtin_powf(y, 2.0f);
    f[6] = __builtin_erff(0.0f) + __builtin_ldexpf(y, 3);
    f[7] = __builtin_fmodf(7.0f, y);
}"""


@pytest.mark.parametrize("std", STDS)
def test_clang_builtins_generic_offsetof_values(std):
    k = ok(KERNEL, std).kernels["k"]
    x = np.array([np.nan, np.inf, 1e-40, -0.0, 2.25], np.float32)
    u = np.array([0b10110000, 7, 0x12345678], np.uint32)
    o = np.zeros(18, np.int32)
    f = np.zeros(8, np.float32)
    run(k, [x, u, o, f], (1,))
    assert list(o) == [10, 7, 1, 1, 0, 0, 1, 3, 24, 4, 4, 56, 1, 1, 1235, 4, 416, 1]
    assert list(f) == [1.5, 2.25, -2.0, 2.25, -3.0, 5.0625, 18.0, math.fmod(7.0, 2.25)]


def test_generic_selects_non_constant_expressions():
    k = ok("""__kernel void k(__global float *a, __global int *b) {
        float x = a[0]; int n = b[0];
        a[1] = _Generic(x, float: x * 2.0f, int: 0);
        b[1] = _Generic(n, float: 0.5f, default: n + 3);
    }""").kernels["k"]
    a, b = np.array([1.5, 0], np.float32), np.array([4, 0], np.int32)
    run(k, [a, b], (1,))
    assert a[1] == 3.0 and b[1] == 7


@pytest.mark.parametrize("src, what", [
    ("__kernel void k(__global int *a) { int b[2] = {1, 2}; __builtin_memcpy(a, b, 8); }", "__builtin_memcpy"),
    ("__kernel void k(__global int *a) { if (a[0] < 0) __builtin_trap(); }", "__builtin_trap"),
    ("__kernel void k(__global int *a) { int x = a[0], y = a[1]; a[2] = _Generic(x, int: x, float: y); }",
     "_Generic"),
])
def test_unsupported_clang_builtins_are_clear_errors(src, what):
    r = build(src, use_cache=False)
    assert not r.ok and what in r.log and "error" in r.log, r.log
