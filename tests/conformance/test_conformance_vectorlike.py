"""The runner's own tests for the relationals, commonfns, geometrics and vectors categories: each
validator rejects a deliberately broken answer (select deciding on the LSB, a vector isequal giving 1,
sign(-0) = +0, a length that overflows, a too-loose bound, a vstore3 writing 4 elements, a half store
rounding the wrong way, a wrong swizzle) and accepts the right one; and a quick run of the four
categories against the installed PyPlat, in a child process, exits 0."""
import json
import math
import struct
import sys
from fractions import Fraction

import numpy as np

from support import REPO

sys.path.append(str(REPO))          # the checkout's conformance/ package

from conformance import cat_commonfns as CF  # noqa: E402
from conformance import cat_geometrics as G  # noqa: E402
from conformance import cat_relationals as R  # noqa: E402
from conformance import cat_vectors as V  # noqa: E402
from conformance.framework import T  # noqa: E402


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32_up(x, n=1):
    v = np.float32(x)
    for _ in range(n):
        v = np.nextafter(v, np.float32(np.inf))
    return float(v)


# --- relationals ---------------------------------------------------------------------------------------

def relational_outputs(pairs, width, double=False, broken=None):
    rows = []
    for f in R.REL_ALL:
        for xb, yb in pairs:
            v = R.relational_expected(f, xb, yb, double, width)
            if broken and f == broken[0]:
                v = broken[1](v)
            rows.append(v)
    return rows


def test_vector_isequal_must_be_minus_one():
    pairs = [(f32_bits(1.0), f32_bits(1.0)), (f32_bits(math.nan), f32_bits(math.nan)), (0, 0x80000000)]
    t = T()
    assert R.check_relationals(t, "float", False, 4, pairs, relational_outputs(pairs, 4), False) == []
    bad = R.check_relationals(t, "float", False, 4, pairs,
                              relational_outputs(pairs, 4, broken=("isequal", lambda v: 1 if v else 0)), False)
    assert bad and bad[0].startswith("isequal(float4) lane (1.0 (0x3f800000), 1.0 (0x3f800000)): expected -1, got 1")
    # scalars are 1, not -1
    assert R.relational_expected("isequal", 0, 0x80000000, False, 1) == 1   # +0 == -0
    assert R.relational_expected("isnotequal", 0x7FC00000, 0x7FC00000, False, 1) == 1  # NaN != NaN
    assert R.relational_expected("islessgreater", 0x7FC00000, 0, False, 4) == 0
    assert R.relational_expected("signbit", 0xFFC00000, 0, False, 8) == -1  # negative NaN
    assert R.relational_expected("isnormal", 0x00000001, 0, False, 1) == 0  # denormal


def test_denormal_flush_only_accepted_without_denormals():
    pairs = [(0x00000001, 0)]  # denormal vs +0
    got = relational_outputs(pairs, 1, broken=("isequal", lambda v: 1))  # as if the denormal were 0
    t = T()
    assert R.check_relationals(t, "float", False, 1, pairs, got, False)
    assert R.check_relationals(t, "float", False, 1, pairs, got, True) == []


def test_select_must_decide_on_the_msb():
    a, b = [0x11], [0x22]
    ok = [R.select_expected("select", 0x11, 0x22, 1, 8, 4)]
    assert ok == [0x11]                                        # vector lane: LSB set, MSB clear -> a
    assert R.select_expected("select", 0x11, 0x22, 1, 8, 1) == 0x22  # scalar: c != 0 -> b
    assert R.select_expected("select", 0x11, 0x22, 0x80, 8, 4) == 0x22
    lsb_select = [0x22, 0x22, 0x22]  # a select deciding on the LSB picks b for c = 1
    bad = R.select_problems("char", 8, 4, a, b, [1], lsb_select, 1)
    assert any(m.startswith("select(char4) lane a=0x11, b=0x22, signed c=0x1: expected 0x11, got 0x22") for m in bad)
    good = [0x11, 0x11, R.select_expected("bitselect", 0x11, 0x22, 1, 8, 4)]
    assert R.select_problems("char", 8, 4, a, b, [1], good, 1) == []


def test_any_all_on_the_sign_bit():
    rows = [[0x01, 0x7F], [0x80, 0x01], [0xFF, 0x80]]
    right = [0, 0, 1, 0, 1, 1]
    assert R.any_all_problems("char", 2, rows, right) == []
    lsb = [1, 1, 1, 0, 1, 0]  # any/all on bit 0
    bad = R.any_all_problems("char", 2, rows, lsb)
    assert "any((char2)(0x1, 0x7f)): expected 0, got 1" in bad


# --- commonfns -----------------------------------------------------------------------------------------

F = CF.Fmt(False)


def test_sign_keeps_the_sign_of_zero():
    assert CF.judge("sign", "exact", -0.0, 0, 0, -0.0, F, False)[0]
    assert not CF.judge("sign", "exact", -0.0, 0, 0, 0.0, F, False)[0]
    assert CF.judge("sign", "exact", math.nan, 0, 0, 0.0, F, False)[0]
    assert not CF.judge("sign", "exact", math.nan, 0, 0, math.nan, F, False)[0]


def test_degrees_within_two_ulp():
    x = 1.0
    r = float(np.float32(180 / math.pi))
    assert CF.judge("degrees", "ulp2", x, 0, 0, r, F, False)[0]
    assert CF.judge("degrees", "ulp2", x, 0, 0, f32_up(r, 1), F, False)[0]
    ok, detail = CF.judge("degrees", "ulp2", x, 0, 0, f32_up(r, 3), F, False)
    assert not ok and "2 allowed" in detail
    assert CF.judge("degrees", "ulp2", 3e38, 0, 0, math.inf, F, False)[0]   # overflows


def test_mix_and_smoothstep_absolute_tolerances():
    exact = CF.exact_result("mix", 1.0, 3.0, 0.25)
    assert exact == Fraction(3, 2)
    assert CF.judge("mix", "abs1e-3", 1.0, 3.0, 0.25, 1.5009, F, False)[0]
    assert not CF.judge("mix", "abs1e-3", 1.0, 3.0, 0.25, 1.502, F, False)[0]
    assert not CF.judge("smoothstep", "abs1e-5", 0.5, 0.0, 1.0, 0.50002, F, False)[0]
    assert CF.judge("smoothstep", "abs1e-5", 0.5, 0.0, 1.0, 0.5, F, False)[0]


def test_clamp_step_max_exact():
    assert CF.exact_result("clamp", math.nan, -1.0, 1.0) == -1.0   # fmin(fmax(NaN, lo), hi)
    assert CF.exact_result("step", 1.0, 1.0, 0) == 1.0            # x == edge is not below it
    assert not CF.judge("max(v, s)", "exact", 1.0, 2.0, 0, 1.0, F, False)[0]


# --- geometrics ----------------------------------------------------------------------------------------

def test_length_without_overflow_avoidance_fails():
    big = [1e30, 1e30]
    assert G.judge("length", big, None, math.inf, F)            # naive sqrt(x*x + y*y) overflows
    assert G.judge("length", [1e-30, 1e-30], None, 0.0, F)      # ... or underflows
    assert G.judge("length", big, None, float(np.float32(math.sqrt(2) * 1e30)), F) == []
    assert G.judge("length", [math.inf, 1.0], None, math.inf, F) == []


def test_geometric_bounds_follow_the_spec():
    assert G.ulp_bound("length", 4) == 4.75 and G.ulp_bound("normalize", 3) == 5
    assert G.ulp_bound("distance", 2) == 6.5 and G.ulp_bound("fast_length", 1) == 8192.5
    r = float(np.float32(5.0))
    assert G.judge("length", [3.0, 4.0], None, f32_up(r, 3), F) == []        # 3 ulp <= 3.75
    assert G.judge("length", [3.0, 4.0], None, f32_up(r, 4), F)              # 4 ulp > 3.75


def test_too_loose_dot_tolerance_is_caught():
    a, b = [1.0, 2.0], [3.0, 4.0]
    eps = 2.0 ** -23
    assert G.judge("dot", a, b, 11.0 + 4 * 4 * 3 * eps * 0.9, F) == []
    assert G.judge("dot", a, b, 11.0 + 4 * 4 * 3 * eps * 1.5, F)             # beyond max*max*(2n-1)*EPS


def test_normalize_special_cases():
    assert G.judge("normalize", [0.0, -0.0], None, [0.0, -0.0], F) == []
    assert G.judge("normalize", [0.0, -0.0], None, [0.0, 0.0], F)           # zero signs must survive
    assert G.judge("normalize", [math.inf, 5.0], None, [1.0, 0.0], F) == []
    assert G.judge("normalize", [1e30, 1e30], None, [0.0, 0.0], F)
    half = float(np.float32(math.sqrt(0.5)))
    assert G.judge("normalize", [1e30, 1e30], None, [half, half], F) == []
    assert G.judge("cross", [1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 1.0], F)  # w must be 0


def test_frac_sqrt():
    s = G.frac_sqrt(Fraction(2))
    assert abs(s * s - 2) < Fraction(1, 2 ** 110)
    assert G.frac_sqrt(Fraction(1, 4)) == Fraction(1, 2)


# --- vectors -------------------------------------------------------------------------------------------

def vload_result(src, n, count, shift, local, size, ty="int"):
    want, _ = V.vload_expected(src, n, count, shift, local, size)
    sentinel = V.float_sentinel_bits(ty, size)
    return [sentinel if isinstance(w, tuple) else w for w in want]


def test_vstore3_writing_four_elements_is_caught():
    n, count, shift, local, size = 3, 4, 1, 4, 4
    src = list(range(100, 100 + (count + 3) * n))
    good = vload_result(src, n, count, shift, local, size)
    assert V.vload_problems("int", n, shift, src, good, count, local, size) == []
    broken = list(good)
    R_ = 3 * n * (count + 2)
    for i in range(count):  # the global store also writes a 4th element after each vector
        broken[shift + 2 * i * n + 3] = 0
    bad = V.vload_problems("int", n, shift, src, broken, count, local, size)
    assert bad and "vstore to __global (every other slot): element 4 is 0x0" in bad[0]
    broken = list(good)
    broken[3 * R_ + shift + 2 * n] = src[shift + 3]  # private store past the vector
    assert any("vstore to __private" in m for m in V.vload_problems("int", n, shift, src, broken, count, local, size))


def test_half_rounding_reference():
    one_and_a_bit = 1.0 + 2.0 ** -12  # below the halfway point to the next half
    assert V.half_round(one_and_a_bit, "") == 0x3C00
    assert V.half_round(one_and_a_bit, "_rtp") == 0x3C01
    assert V.half_round(-one_and_a_bit, "_rtp") == 0xBC00
    assert V.half_round(-one_and_a_bit, "_rtn") == 0xBC01
    assert V.half_round(1.0 + 2.0 ** -11, "_rte") == 0x3C00          # tie to even
    assert V.half_round(1.0 + 3 * 2.0 ** -11, "_rte") == 0x3C02
    assert V.half_round(65520.0, "") == 0x7C00 and V.half_round(65520.0, "_rtz") == 0x7BFF
    assert V.half_round(-1e10, "_rtp") == 0xFBFF and V.half_round(-1e10, "_rtn") == 0xFC00
    assert V.half_round(2.0 ** -25, "") == 0 and V.half_round(2.0 ** -25, "_rtp") == 1
    assert V.half_round(3 * 2.0 ** -26, "") == 1                      # subnormal rounding
    assert V.half_round(math.nan, "_rtz") is None


def test_half_store_wrong_rounding_is_caught():
    xs = [1.0 + 2.0 ** -12, -(1.0 + 2.0 ** -12)]
    count, n = 2, 1
    R_ = 4 * count
    right = [0xA5A5] * (10 * R_)
    for j, mode in enumerate(V.HALF_MODES):
        for i, x in enumerate(xs):
            right[j * R_ + i] = V.half_round(x, mode)
    assert V.half_store_problems("float", n, xs, right, R_, count) == []
    wrong = list(right)
    wrong[3 * R_] = V.half_round(xs[0], "_rte")  # _rtp rounding to nearest
    bad = V.half_store_problems("float", n, xs, wrong, R_, count)
    assert bad == ["vstore_half_rtp(float 1.000244140625): half bits 0x3c00, expected 0x3c01"]


def test_swizzle_model():
    rng = np.random.default_rng(3)
    cases = V.swizzle_cases(rng, 40)
    assert len(cases) > 30
    for pre, expr, lit, k, want in cases:
        assert len(want) == k
    sel, lanes = "", None
    for _ in range(20):
        sel, lanes = V.random_chain(rng, 16, True, 2)
        assert len(set(lanes)) == len(lanes)  # an lvalue never repeats a lane


# --- a quick run against PyPlat (in a child) --------------------------------------------------------------

def test_quick_run_against_installed_pyplat(run_with_pyplat, pyplat_command, tmp_path):
    out = tmp_path / "result.json"
    cats = ["relationals", "commonfns", "geometrics", "vectors"]
    r = run_with_pyplat(pyplat_command + ["conformance", "--quick", "--json", str(out)] + cats, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(out.read_text())
    assert report["failed"] == 0
    assert [c["name"] for c in report["categories"]] == cats
