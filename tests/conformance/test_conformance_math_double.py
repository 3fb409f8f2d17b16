"""The math category's double-precision side, as pure validator tests (no platform): the spec's
double ULP table, double ulps and overflow, the correctly rounded double reference, and that a
wrong double result or a wrong bound is caught."""
import math
import sys

import numpy as np
import pytest

from support import REPO

sys.path.append(str(REPO))          # the checkout's conformance/ package

mpmath = pytest.importorskip("mpmath")

from conformance import cat_math as M  # noqa: E402
from conformance.framework import T  # noqa: E402

D = M.DOUBLE


def up(x, n=1):
    """x moved n doubles towards +inf."""
    for _ in range(n):
        x = float(np.nextafter(x, math.inf))
    return x


def test_double_bounds_follow_the_spec_table():
    # the double table equals the single one for these functions but for sqrt (correctly rounded)
    assert M.bound_of("sqrt", D) == 0 and M.bound_of("sqrt", M.FLOAT) == 3
    assert M.bound_of("cbrt", D) == 2 and M.bound_of("log1p", D) == 2 and M.bound_of("rsqrt", D) == 2
    assert M.bound_of("pow", D) == 16 and M.bound_of("tgamma", D) == 16 and M.bound_of("erf", D) == 16
    assert M.bound_of("tanpi", D) == 6 and M.bound_of("atan2", D) == 6 and M.bound_of("exp10", D) == 3
    assert all(M.bound_of(f, D) == 0 for f in ("fma", "fmod", "remainder", "floor", "round", "fdim"))


def test_double_ulps():
    assert M.ulp_of(1.0, D) == 2.0 ** -52
    with mpmath.mp.workprec(200):
        below2 = mpmath.mpf(2) - mpmath.mpf(2) ** -80
    assert M.ulp_of(below2, D) == 2.0 ** -52                                  # below 2, not rounded up
    assert M.ulp_of(1e-310, D) == 2.0 ** -1074                               # denormal step
    assert M.ulp_of(mpmath.mpf(2) ** 2000, D) == 2.0 ** (1023 - 52)           # past DBL_MAX
    with mpmath.mp.workprec(200):
        ex = mpmath.mpf(1) + mpmath.mpf(2) ** -60
    assert M.ulp_error(1.0, ex, D) == pytest.approx(2.0 ** -8)  # 2^-60 is 1/256 of a double ulp
    assert M.ulp_error(math.inf, mpmath.mpf(2) ** 1024, D) == 0                # overflow to inf
    assert M.ulp_error(math.inf, mpmath.mpf(M.F64_MAX), D) == 1.0   # inf counts as 2^1024
    assert M.ulp_error(math.inf, mpmath.mpf(1e300), D) > 1e10


def test_correct_double_results_pass():
    for name, args, f in [("sin", [1.0], math.sin), ("exp", [700.0], math.exp), ("log", [1e-310], math.log),
                          ("sqrt", [2.0], math.sqrt), ("atan2", [1.0, -3.0], math.atan2),
                          ("pow", [1.5, 100.25], math.pow), ("cbrt", [2.0], lambda x: x ** (1 / 3))]:
        with mpmath.mp.workprec(200):
            ref = M.reference(name, args, D)
        got = float(ref) if not isinstance(ref, float) else ref
        assert M.judge(name, args, got, M.bound_of(name, D), False, D)[0], name
    assert M.judge("sinpi", [-3.0], -0.0, 4, False, D)[0]
    assert M.judge("exp", [1000.0], math.inf, 3, False, D)[0]
    assert M.judge("round", [0.49999999999999994], 0.0, 0, False, D)[0]
    assert M.judge("round", [-2.5], -3.0, 0, False, D)[0]
    assert M.judge("fma", [-(2.0 ** -1074), 0.5, 0.0], -0.0, 0, False, D)[0]


def test_wrong_double_results_are_caught():
    s = float(mpmath.sin(1.0))
    ok, err, ref = M.judge("sin", [1.0], up(s, 5), 4, False, D)
    assert not ok and 4.4 < err < 5.6 and ref.startswith("0.8414709848078965")
    # a float-precision answer is millions of double ulps off
    assert not M.judge("sin", [1.0], float(np.float32(s)), 4, False, D)[0]
    # sqrt is correctly rounded in double: one ulp off fails (passes float's 3-ulp bound)
    r = math.sqrt(2.0)
    assert not M.judge("sqrt", [2.0], up(r), M.bound_of("sqrt", D), False, D)[0]
    assert M.judge("sqrt", [2.0], up(r), 3, False, D)[0]
    # sinpi near its zeros: sin(pi * x) with pi rounded is far off
    assert not M.judge("sinpi", [1.0000000000000002], math.sin(math.pi * 1.0000000000000002), 4, False, D)[0]
    assert not M.judge("round", [0.49999999999999994], 1.0, 0, False, D)[0]   # x + 0.5 then floor
    assert not M.judge("sinpi", [-3.0], 0.0, 4, False, D)[0]                   # sign of zero
    assert not M.judge("tanpi", [3.0], 0.0, 6, False, D)[0]                    # odd n: copysign(0, -n)
    assert M.judge("tanpi", [3.0], -0.0, 6, False, D)[0] and M.judge("tanpi", [-4.0], -0.0, 6, False, D)[0]
    assert not M.judge("fma", [-(2.0 ** -1074), 0.5, 0.0], 0.0, 0, False, D)[0]
    assert not M.judge("exp", [700.0], math.inf, 3, False, D)[0]               # spurious overflow
    assert not M.judge("fabs", [-1e-310], 0.0, 0, False, D)[0]                 # denormals kept


def test_a_wrong_bound_is_caught():
    # cbrt within 2.5 ulp: fails the spec's 2, would pass a mistaken 3 (glibc's cbrt is like that)
    ex = M.reference("cbrt", [204.32279853952355], D)
    got = float(ex)
    for _ in range(3):
        got = up(got)
    err = M.ulp_error(got, ex, D)
    assert 2 < err < 3.5
    assert not M.judge("cbrt", [204.32279853952355], got, M.bound_of("cbrt", D), False, D)[0]
    assert M.judge("cbrt", [204.32279853952355], got, 4, False, D)[0]


def test_check_results_reports_the_double_input():
    t = T()
    c = float(mpmath.cos(2.0))
    M.check_results(t, "cos", [(2.0,), (0.0,)], [up(c, 9), 1.0], 4, False, D)
    assert len(t.failures) == 1 and "cos (double)(2.0)" in t.failures[0] and "4 allowed" in t.failures[0]
    t = T()
    worst = M.check_results(t, "cos", [(2.0,), (0.0,)], [up(c, 1), 1.0], 4, False, D)
    assert not t.failures and 0.5 < worst < 1.5


def test_double_inputs_cover_edges_and_bit_patterns():
    class E:
        seed = 1234
    cases = M.inputs("log", E, 512, D)
    xs = [c[0] for c in cases]
    assert M.F64_DENORM in xs and M.F64_MAX in xs and any(math.isnan(x) for x in xs)
    assert 0.49999999999999994 in xs and 2.0 ** 52 - 0.5 in xs
    assert any(abs(x) > 1e300 for x in xs) and any(0 < abs(x) < 1e-300 for x in xs)
    assert any(abs(x) > 3.5e38 for x in xs)   # beyond float's range: real double inputs
    src = M.kernel_source(["sin", "fma"], D)
    assert "cl_khr_fp64" in src and "__global const double *x" in src and "m_fma_double" in src
