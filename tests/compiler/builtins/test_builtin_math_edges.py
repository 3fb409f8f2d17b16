"""Math builtins against the OpenCL C spec's special values ("Edge Case Behavior") and exact
references: remquo's quotient bits for any exponent difference, powr's domain, rootn's signs and
double accuracy, and the special cases of the functions around them (ilogb, frexp, modf, fract,
nan, nextafter, fdim, fmax/fmin, maxmag/minmag, logb, ldexp, pown, pow)."""
from fractions import Fraction
import math

import numpy as np
import pytest

from support.compiled import ok, run

FLOATS = {"float": np.float32, "double": np.float64}
INF, NAN = math.inf, math.nan


def call(expr, xs, t="float", out="float", extra=""):
    """out[i] = expr over x[i], y[i] (type t) and k[i] (int), for each row of xs."""
    dt = FLOATS[t]
    x = np.array([r[0] for r in xs], dt)
    y = np.array([r[1] if len(r) > 1 else 0 for r in xs], dt)
    k = np.array([r[2] if len(r) > 2 else 0 for r in xs], np.int32)
    odt = {"float": np.float32, "double": np.float64, "int": np.int32}[out]
    src = ("__kernel void e(__global const %s *x, __global const %s *y, __global const int *k, "
           "__global %s *o, __global int *o2) { int i = get_global_id(0); %s o[i] = %s; }"
           % (t, t, out, extra, expr))
    o, o2 = np.zeros(len(xs), odt), np.zeros(len(xs), np.int32)
    run(ok(src).kernels["e"], [x, y, k, o, o2], (len(xs),))
    return o, o2


def same(got, want):
    """Bit-exact on value and the sign of zero, any NaN for NaN (want rounded to got's type)."""
    dt = np.asarray(got).dtype.type
    for g, w in zip(got, want):
        g, w = float(g), float(dt(w))
        if math.isnan(w):
            assert math.isnan(g), (g, w)
        else:
            assert g == w and math.copysign(1, g) == math.copysign(1, w), (g, w)


# ------------------------------------------------------------------ remquo
def exact_remquo(x, y):
    """remainder (quotient rounded to nearest, ties to even) and the integral quotient."""
    fx, fy = Fraction(float(x)), Fraction(float(y))
    q = fx / fy
    n = math.floor(q)
    d = q - n
    if d > Fraction(1, 2) or (d == Fraction(1, 2) and n % 2):
        n += 1
    return float(fx - n * fy), n


@pytest.mark.parametrize("t", ["float", "double"])
def test_remquo_quotient_bits_for_any_exponent_difference(t):
    dt = FLOATS[t]
    rng = np.random.default_rng(7)
    span = 120 if t == "float" else 1000
    m = rng.uniform(1, 2, (400, 2)) * np.exp2(rng.integers(-span, span, (400, 2)))
    m *= rng.choice([-1, 1], (400, 2))
    rows = [tuple(dt(v) for v in r) for r in m]
    fmax = np.finfo(dt).max
    rows += [(dt(fmax), dt(fmax / 3)), (dt(fmax), dt(fmax / 127.5)), (dt(-fmax), dt(np.finfo(dt).smallest_subnormal)),
             (dt(5.0), dt(2.0)), (dt(7.0), dt(2.0)), (dt(-7.0), dt(2.0)), (dt(1.0), dt(0.1)),
             (dt(1e-30), dt(-3e-38 if t == "float" else 3e-300)), (dt(0.0), dt(1.0)), (dt(-0.0), dt(3.0))]
    r, q = call("remquo(x[i], y[i], &o2[i])", rows, t, t)
    for (x, y), got_r, got_q in zip(rows, r, q):
        want_r, n = exact_remquo(x, y)
        assert got_r == want_r and math.copysign(1, got_r) == math.copysign(1, want_r if want_r else x), (x, y, got_r, want_r)
        assert got_q % 128 == n % 128 if n >= 0 else (-got_q) % 128 == (-n) % 128, (x, y, got_q, n)
        if n % 128:     # the sign of x/y (a quotient of 0 modulo 128 has none to carry)
            assert (got_q < 0) == (n < 0), (x, y, got_q, n)


def test_remquo_special_values():
    rows = [(INF, 1.0), (NAN, 1.0), (1.0, NAN), (1.0, 0.0), (3.0, INF), (-3.0, -INF), (-0.0, 1.0)]
    r, q = call("remquo(x[i], y[i], &o2[i])", rows)
    same(r, [NAN, NAN, NAN, NAN, 3.0, -3.0, -0.0])
    assert list(q[4:]) == [0, 0, 0]


def test_remquo_vectors_and_remainder_fmod_agree():
    rows = [(1e30, 3.0), (-7.5, 2.0), (1e-40, 3e-45), (123456.0, 0.001)]
    r, q = call("remquo((float2)(x[i], -x[i]), (float2)(y[i]), &v).y", rows, extra="int2 v;")
    same(r, [-exact_remquo(float(np.float32(a)), float(np.float32(b)))[0] for a, b in rows])
    rem, _ = call("remainder(x[i], y[i]) - remquo(x[i], y[i], &o2[i])", rows)
    same(rem, [0.0] * len(rows))
    fm, _ = call("fmod(x[i], y[i])", rows)
    for (a, b), g in zip(rows, fm):
        a, b = float(np.float32(a)), float(np.float32(b))
        assert g == float(Fraction(a) - math.trunc(Fraction(a) / Fraction(b)) * Fraction(b))


# ------------------------------------------------------------------ pow family
POWR = [((-2.0, 2.0), NAN), ((-0.0, 2.0), 0.0), ((0.0, 0.0), NAN), ((-0.0, -0.0), NAN), ((INF, 0.0), NAN),
        ((1.0, INF), NAN), ((1.0, -INF), NAN), ((1.0, NAN), NAN), ((NAN, 0.0), NAN), ((0.0, -1.0), INF),
        ((-0.0, -3.0), INF), ((0.0, -INF), INF), ((0.0, 3.0), 0.0), ((INF, -1.0), 0.0), ((INF, 2.0), INF),
        ((0.5, INF), 0.0), ((2.0, INF), INF), ((2.0, 0.0), 1.0), ((4.0, 0.5), 2.0), ((1.0, 5.0), 1.0)]


@pytest.mark.parametrize("fn", ["powr", "half_powr", "native_powr"])
def test_powr_domain(fn):
    got, _ = call("%s(x[i], y[i])" % fn, [r for r, _ in POWR])
    if fn == "powr":
        same(got, [w for _, w in POWR])
    else:   # implementation-defined accuracy, the same special values
        same([g if math.isnan(w) or w in (0.0, INF) else w for g, (_, w) in zip(got, POWR)], [w for _, w in POWR])


POW = [((-0.0, -3.0), -INF), ((0.0, -3.0), INF), ((-0.0, -2.0), INF), ((-0.0, 3.0), -0.0), ((-1.0, INF), 1.0),
       ((1.0, NAN), 1.0), ((NAN, 0.0), 1.0), ((-2.0, 0.5), NAN), ((-2.0, 3.0), -8.0), ((-INF, -3.0), -0.0)]


def test_pow_special_values():
    got, _ = call("pow(x[i], y[i])", [r for r, _ in POW])
    same(got, [w for _, w in POW])


ROOTN = [((-0.0, 0, -3), -INF), ((0.0, 0, -3), INF), ((-0.0, 0, -2), INF), ((-0.0, 0, 3), -0.0), ((-0.0, 0, 2), 0.0),
         ((-8.0, 0, 3), -2.0), ((-8.0, 0, 2), NAN), ((8.0, 0, 0), NAN), ((0.0, 0, 0), NAN), ((-INF, 0, 3), -INF),
         ((-INF, 0, -3), -0.0), ((INF, 0, 2), INF), ((NAN, 0, 3), NAN), ((16.0, 0, 4), 2.0), ((-0.125, 0, -3), -2.0),
         ((-0.0, 0, -1), -INF), ((0.0, 0, -1), INF), ((NAN, 0, -1), NAN), ((-INF, 0, -1), -0.0)]


@pytest.mark.parametrize("t", ["float", "double"])
def test_rootn_special_values(t):
    got, _ = call("rootn(x[i], k[i])", [r for r, _ in ROOTN], t, t)
    same(got, [w for _, w in ROOTN])


def test_rootn_double_exact_over_the_whole_exponent_range():
    """rootn(2^(n m), n) = 2^m exactly, subnormals included (1/n rounded cost ~60 ulp there)."""
    rows = []
    for nn in (3, -3, 5, 7, -7, 2, 1, -1, 1000, -1074):
        for e in range(-1074, 1024):
            if e % nn == 0 and (e // nn) > -1075 and (e // nn) < 1024:
                rows.append((math.ldexp(1.0, e), 0, nn))
    got, _ = call("rootn(x[i], k[i])", rows, "double", "double")
    want = [math.ldexp(1.0, int(math.log2(x)) // nn) for x, _, nn in rows]
    assert list(got) == want
    # and in general within the spec's 16 ulp (here much closer)
    rng = np.random.default_rng(3)
    rows = [(float(v), 0, int(nn)) for v, nn in zip(np.exp2(rng.uniform(-1070, 1020, 300)), rng.integers(2, 40, 300))]
    got, _ = call("rootn(x[i], k[i])", rows, "double", "double")
    for (x, _, nn), g in zip(rows, got):
        # g^n against x exactly: a relative error e of g is n e in g^n
        err = abs(Fraction(float(g)) ** nn / Fraction(x) - 1)
        assert err <= nn * 4 * Fraction(1, 2 ** 52), (x, nn, g, float(err))


def test_pown_special_values():
    rows = [(-0.0, 0, -3), (0.0, 0, -2), (-0.0, 0, 3), (NAN, 0, 0), (INF, 0, 0), (-2.0, 0, 3), (-INF, 0, -1), (2.0, 0, -1)]
    got, _ = call("pown(x[i], k[i])", rows)
    same(got, [-INF, INF, -0.0, 1.0, 1.0, -8.0, -0.0, 0.5])


# ------------------------------------------------------------------ the rest of the audit
def test_ilogb_logb_frexp_modf_fract_special_values():
    rows = [(0.0,), (-0.0,), (INF,), (-INF,), (NAN,), (1.5e-45,), (3.0,)]
    il, _ = call("ilogb(x[i])", rows, out="int")
    int_min, int_max = -2 ** 31, 2 ** 31 - 1
    assert list(il) == [int_min, int_min, int_max, int_max, int_min, -149, 1]
    ok0, _ = call("(ilogb(0.0f) == FP_ILOGB0) + 2 * (ilogb(NAN) == FP_ILOGBNAN)", [(0.0,)], out="int")
    assert ok0[0] == 3
    lb, _ = call("logb(x[i])", rows)
    same(lb, [-INF, -INF, INF, INF, NAN, -149.0, 1.0])
    m, e = call("frexp(x[i], &o2[i])", rows)
    same(m, [0.0, -0.0, INF, -INF, NAN, 0.5, 0.75])
    assert list(e[:4]) == [0, 0, 0, 0] and list(e[5:]) == [-148, 2]
    f, _ = call("modf(x[i], &ip)", rows, extra="float ip;")
    ip, _ = call("(modf(x[i], &ip), ip)", rows, extra="float ip;")
    same(f, [0.0, -0.0, 0.0, -0.0, NAN, 1.5e-45, 0.0])
    same(ip, [0.0, -0.0, INF, -INF, NAN, 0.0, 3.0])
    fr, _ = call("fract(x[i], &fl)", rows + [(-1e-10,), (-0.5,)], extra="float fl;")
    fl, _ = call("(fract(x[i], &fl), fl)", rows + [(-1e-10,), (-0.5,)], extra="float fl;")
    same(fr, [0.0, -0.0, 0.0, -0.0, NAN, 1.5e-45, 0.0, float.fromhex("0x1.fffffep-1"), 0.5])
    same(fl, [0.0, -0.0, INF, -INF, NAN, 0.0, 3.0, -1.0, -1.0])


def test_nan_nextafter_fdim_fmax_fmin_maxmag_minmag():
    n, _ = call("as_int(nan(0x12345u))", [(0.0,)], out="int")
    assert n[0] & 0x7fc00000 == 0x7fc00000 and n[0] & 0x3fffff == 0x12345
    na, _ = call("nextafter(x[i], y[i])", [(0.0, -1.0), (-0.0, 1.0), (1.5e-45, -1.0), (1.0, NAN), (3.4028235e38, INF)])
    same(na, [-1.5e-45, 1.5e-45, 0.0, NAN, INF])
    fd, _ = call("fdim(x[i], y[i])", [(3.0, 1.0), (1.0, 3.0), (NAN, 1.0), (1.0, NAN), (INF, INF)])
    same(fd, [2.0, 0.0, NAN, NAN, 0.0])
    rows = [(NAN, 1.0), (1.0, NAN), (NAN, NAN), (-0.0, 0.0)]
    mx, _ = call("fmax(x[i], y[i])", rows)
    mn, _ = call("fmin(x[i], y[i])", rows)
    same(mx[:3], [1.0, 1.0, NAN])
    same(mn[:3], [1.0, 1.0, NAN])
    rows = [(-3.0, 2.0), (2.0, -3.0), (-2.0, 2.0), (NAN, 1.0), (1.0, NAN), (-INF, 5.0)]
    mm, _ = call("maxmag(x[i], y[i])", rows)
    nm, _ = call("minmag(x[i], y[i])", rows)
    same(mm, [-3.0, -3.0, 2.0, 1.0, 1.0, -INF])
    same(nm, [2.0, 2.0, -2.0, 1.0, 1.0, 5.0])


def test_ldexp_overflow_underflow():
    rows = [(1.0, 0, 128), (1.0, 0, -149), (1.0, 0, -150), (1.5, 0, -149), (-1.0, 0, 2 ** 31 - 1),
            (1.0, 0, -2 ** 31), (0.75, 0, 128), (INF, 0, -1000), (NAN, 0, 3), (-0.0, 0, 5)]
    got, _ = call("ldexp(x[i], k[i])", rows)
    same(got, [INF, 1.5e-45, 0.0, 3e-45, -INF, 0.0, float(np.float32(2 ** 127 * 1.5)), INF, NAN, -0.0])


@pytest.mark.parametrize("t", ["float", "double"])
def test_normalize_length_distance_exact_for_subnormal_and_huge_components(t):
    """Scaled before squaring (CTS geom_normalize with denormals supported): components whose
    squares would underflow to 0 or overflow to inf still give the correctly scaled result."""
    dt = FLOATS[t]
    fi = np.finfo(dt)
    vs = [(fi.smallest_subnormal, 0.0), (fi.smallest_subnormal, fi.smallest_subnormal), (3 * fi.smallest_subnormal,
          -4 * fi.smallest_subnormal), (fi.max, fi.max), (-fi.max / 2, fi.max / 3), (fi.tiny, 1e-3 * fi.tiny)]
    src = ("__kernel void k(__global const T2 *v, __global T2 *n, __global T *l, __global T *d) {"
           " int i = get_global_id(0); n[i] = normalize(v[i]); l[i] = length(v[i]);"
           " d[i] = distance(v[i], (T2)(0)); }").replace("T", t)
    v = np.array(vs, dt)
    nn, ln, dd = np.zeros_like(v), np.zeros(len(v), dt), np.zeros(len(v), dt)
    run(ok(src).kernels["k"], [v, nn, ln, dd], (len(v),))
    for (x, y), (nx, ny), l_, d_ in zip(vs, nn, ln, dd):
        fx, fy = Fraction(float(x)), Fraction(float(y))
        q = math.sqrt(float((fx * fx + fy * fy) / (fx * fx)))              # sqrt(1 + (y/x)^2), x != 0
        want_nx = math.copysign(1.0, float(x)) / q
        want_ny = float(fy / abs(fx)) / q
        exact_len = abs(float(x)) * q
        for got, want in ((nx, want_nx), (ny, want_ny)):
            assert abs(float(got) - want) <= 4 * float(np.spacing(dt(abs(want)))), (x, y, got, want)
        if exact_len <= float(np.finfo(dt).max):     # else length overflows, as it should
            want_len = float(dt(exact_len))
            assert abs(float(l_) - want_len) <= 4 * float(np.spacing(dt(want_len))), (x, y, l_, want_len)
            assert l_ == d_


def test_normalize_subnormal_result_next_to_a_huge_component():
    """CTS geom_normalize's failing sample: scaling the vector down before dividing flushed the
    small component's low bits (a subnormal result 64 ulp off); each result must be within a few
    ulp of x / |x| computed exactly."""
    v = np.array([[float.fromhex("0x1.b08b3ep-20"), float.fromhex("0x1.323d98p-18"),
                   float.fromhex("0x1.82c064p-64"), -float.fromhex("0x1.61f43p+72")],
                  [float.fromhex("0x1p-130"), 3e30, float.fromhex("0x1.8p-120"), 1.0]], np.float32)
    src = ("__kernel void k(__global const float4 *v, __global float4 *n) {"
           " int i = get_global_id(0); n[i] = normalize(v[i]); }")
    out = np.zeros_like(v)
    run(ok(src).kernels["k"], [v, out], (len(v),))
    for row, got in zip(v, out):
        norm = math.sqrt(float(sum(Fraction(float(x)) ** 2 for x in row)))
        for x, g in zip(row, got):
            want = float(x) / norm
            assert abs(float(g) - want) <= 4 * float(np.spacing(np.float32(abs(want)))), (x, g, want)
