"""The conformance runner's own tests for the conversions and integer_ops categories: their exact
references, and that their checks fail, naming the input, on a deliberately broken
implementation: wrong answers fed to the validators, or PoCL behind a wrapper that rewrites the
kernel source handed to clCreateProgramWithSource (a compiler that forgets _sat, computes the
low half for mul_hi, ...). PyPlat is not run in this process."""
import ctypes
import math
import sys

import numpy as np

from support import REPO

sys.path.append(str(REPO))          # the checkout's conformance/ package

from conformance import cat_conversions as CV  # noqa: E402
from conformance import cat_integer_ops as IO  # noqa: E402
from conformance.framework import T, run_check  # noqa: E402


# --- conversions: the reference ----------------------------------------------------------------------

def test_round_ratio_ties_and_directions():
    r = CV.round_ratio
    assert r(2 ** 24 + 1, 1, "rte", "float") == 2.0 ** 24            # tie to even (down)
    assert r(2 ** 24 + 3, 1, "rte", "float") == 2.0 ** 24 + 4        # tie to even (up)
    assert r(2 ** 24 + 1, 1, "rtp", "float") == 2.0 ** 24 + 2
    assert r(-(2 ** 24 + 1), 1, "rtp", "float") == -2.0 ** 24
    assert r(-(2 ** 24 + 1), 1, "rtn", "float") == -(2.0 ** 24 + 2)
    assert r(2 ** 63 - 1, 1, "rtz", "float") == 2.0 ** 63 - 2 ** 39
    assert r(2 ** 53 + 1, 1, "rte", "double") == 2.0 ** 53
    assert r(2 ** 64 - 1, 1, "rtz", "double") == 2.0 ** 64 - 2 ** 11


def test_round_ratio_overflow_and_denormals():
    r = CV.round_ratio
    fmax = float(np.finfo(np.float32).max)
    assert r(2 ** 128 - 2 ** 103, 1, "rte", "float") == math.inf      # max + half an ulp: a tie, to even
    assert r(2 ** 128 - 2 ** 103 - 1, 1, "rte", "float") == fmax
    assert r(2 ** 200, 1, "rtz", "float") == fmax
    assert r(-2 ** 200, 1, "rtp", "float") == -fmax
    assert r(-2 ** 200, 1, "rtn", "float") == -math.inf
    assert r(1, 2 ** 150, "rte", "float") == 0.0                       # half the smallest denormal: to even
    assert r(3, 2 ** 150, "rte", "float") == 2.0 ** -148
    assert r(1, 2 ** 150, "rtp", "float") == 2.0 ** -149
    z = r(-1, 2 ** 150, "rtz", "float")
    assert z == 0.0 and math.copysign(1, z) < 0                        # keeps the sign


def test_conversion_reference_special_values():
    ref = CV.reference
    assert ref("float", "int", "_sat", math.nan) == 0
    assert ref("float", "int", "", math.nan) is CV.UNDEFINED
    assert ref("float", "uchar", "_sat", -math.inf) == 0
    assert ref("double", "long", "_sat", 1e300) == 2 ** 63 - 1
    assert ref("float", "int", "", 3e9) is CV.UNDEFINED               # out of range without _sat
    assert ref("float", "int", "_rte", -2.5) == -2 and ref("float", "int", "_rte", 3.5) == 4
    assert ref("float", "int", "", -2.7) == -2                        # the default for integers: rtz
    assert ref("float", "uint", "_sat_rtn", -0.5) == 0
    assert ref("int", "char", "", 300) == 44 and ref("int", "char", "_sat", 300) == 127
    assert ref("ulong", "long", "_sat", 2 ** 64 - 1) == 2 ** 63 - 1
    z = ref("float", "double", "", -0.0)
    assert z == 0 and math.copysign(1, z) < 0
    assert ref("double", "float", "_rtz", 1 + 2 ** -30) == 1.0
    assert ref("double", "float", "_rtp", 1 + 2 ** -30) == 1 + 2 ** -23


def test_common_types():
    ct = CV.common_type
    assert ct("char", "uchar") == "int"
    assert ct("int", "uint") == "uint"
    assert ct("uint", "long") == "long"
    assert ct("ulong", "int") == "ulong"
    assert ct("short", "float") == "float" and ct("float", "double") == "double"
    assert CV.arith_reference("<", "int", -1, "uint", 1) == ("int", 0)   # -1 becomes UINT_MAX
    assert CV.arith_reference("+", "int", 2 ** 31 - 1, "int", 1)[1] is CV.UNDEFINED


# --- conversions: broken implementations are caught -----------------------------------------------------

def broken(src, dst, xs, fn):
    """Results (modes x n) of an implementation computing fn(mode, x)."""
    host = CV.to_host(xs, src)
    rows = [[fn(m, x) for x in host] for m in CV.modes(dst)]
    return np.array(rows, dtype=CV.NP[dst])


def test_conversions_correct_results_pass():
    xs = np.array([0, 1, -1, 2 ** 24 + 1, -(2 ** 31), 2 ** 31 - 1], dtype=np.int32)
    got = broken("int", "float", xs, lambda m, x: CV.reference("int", "float", m, x))
    t = T()
    assert CV.judge_conversions(t, "int", "float", xs, got, got, 4) == 0 and not t.failures


def test_conversions_wrong_rounding_is_caught():
    xs = np.array([2 ** 24 + 1, 2 ** 25 - 1, -(2 ** 24 + 1), 7], dtype=np.int32)
    # an implementation that ignores the rounding mode (rounds to nearest always)
    got = broken("int", "float", xs, lambda m, x: CV.reference("int", "float", "", x))
    t = T()
    assert CV.judge_conversions(t, "int", "float", xs, got, None, 2) > 0
    text = "\n".join(t.failures)
    assert "convert_float_rtp((int)16777217)" in text
    assert "expected 16777218.0" in text and "got 16777216.0" in text


def test_conversions_wrong_saturation_is_caught():
    xs = np.array([300, -300, 5], dtype=np.int32)
    got = broken("int", "char", xs, lambda m, x: CV.wrap(x, "char"))   # _sat ignored
    t = T()
    CV.judge_conversions(t, "int", "char", xs, got, got, 2)
    assert any("convert_char_sat((int)300)" in f and "expected 127, got 44" in f for f in t.failures)
    assert any("convert_char2_sat((int2)-300)" in f for f in t.failures)


def test_conversions_nan_under_sat_must_be_zero():
    xs = np.array([math.nan, 1.5], dtype=np.float32)
    got = broken("float", "int", xs, lambda m, x: -2 ** 31 if math.isnan(x) else
                 CV.reference("float", "int", m, x))
    t = T()
    CV.judge_conversions(t, "float", "int", xs, got, None, 1)
    assert any("convert_int_sat((float)nan)" in f and "expected 0" in f for f in t.failures)
    assert not any("1.5" in f for f in t.failures)


def test_conversions_sign_of_zero_and_nan_are_checked():
    xs = np.array([-0.0, math.nan], dtype=np.float32)
    got = broken("float", "double", xs, lambda m, x: 0.0 if x == 0 else 1.0)
    t = T()
    CV.judge_conversions(t, "float", "double", xs, got, None, 1)
    assert any("(float)-0.0" in f and "got 0.0" in f for f in t.failures)
    assert any("(float)nan" in f and "expected nan" in f for f in t.failures)


def test_conversions_flush_to_zero_only_when_allowed():
    xs = np.array([1e-310], dtype=np.float64)
    got = broken("double", "float", xs, lambda m, x: 0.0)
    assert CV.judge_conversions(T(), "double", "float", xs, got, None, 1, ftz={"float"}) == 0
    # rounding up a tiny positive value must give the smallest denormal, not 0, with denormals
    assert CV.judge_conversions(T(), "double", "float", xs, got, None, 1) > 0


def test_conversion_inputs_cover_every_pair_and_edges():
    for src in CV.TYPES:
        for dst in CV.TYPES:
            xs = CV.edge_inputs(src, dst)
            assert xs, (src, dst)
    f = [float(x) for x in CV.edge_inputs("float", "int")]
    assert any(math.isnan(x) for x in f) and math.inf in f and -math.inf in f and 2.5 in f
    assert any(x == 0 and math.copysign(1, x) < 0 for x in f)
    ints = [int(x) for x in CV.edge_inputs("long", "float")]
    assert 2 ** 24 + 1 in ints and 2 ** 63 - 1 in ints


# --- integer_ops: the reference -------------------------------------------------------------------------

def test_integer_reference():
    ref = IO.reference
    assert ref("mul_hi(a, b)", "int", False, -1, 1, 0) == -1
    assert ref("mul_hi(a, b)", "uint", False, 2 ** 32 - 1, 2 ** 32 - 1, 0) == 2 ** 32 - 2
    assert ref("mad_sat(a, b, c)", "long", False, -1, -2 ** 63, -2 ** 32) == 2 ** 63 - 2 ** 32
    assert ref("rotate(a, b)", "uchar", False, 0x81, 1, 0) == 0x03
    assert ref("rotate(a, b)", "char", False, 1, -1, 0) == -128         # count modulo 8
    assert ref("upsample(a, ub)", "char", False, -1, 1, 0) == -255      # 0xff01 as short
    assert ref("abs(a)", "int", False, -2 ** 31, 0, 0) == 2 ** 31
    assert ref("hadd(a, b)", "char", False, -1, -2, 0) == -2
    assert ref("rhadd(a, b)", "uint", False, 2 ** 32 - 1, 2 ** 32 - 1, 0) == 2 ** 32 - 1
    assert ref("clz(a)", "short", False, 0, 0, 0) == 16 and ref("ctz(a)", "ulong", False, 0, 0, 0) == 64
    assert ref("a < b", "int", False, 1, 2, 0) == 1 and ref("a < b", "int", True, 1, 2, 0) == -1
    assert ref("a << b", "uchar", False, 1, 9, 0) == 0                  # promoted: count 9 is kept
    assert ref("a << b", "uchar", True, 1, 9, 0) == 2                   # vector: count modulo 8
    assert ref("a + b", "char", False, 127, 1, 0) == -128               # promoted, converted back
    assert ref("a + b", "char", True, 127, 1, 0) is None                # vector element overflow
    assert ref("a / d", "int", False, -7, 2, 0) == -3 and ref("a % d", "int", False, -7, 2, 0) == -1
    assert ref("mul24(a, b)", "int", False, 2 ** 23, 1, 0) is None      # outside 24 bits
    assert IO.result_type("a == b", "uchar", True) == "char" and IO.result_type("abs(a)", "long", False) == "ulong"


def test_integer_inputs_include_the_edges():
    a, b, c = IO.inputs(np.random.default_rng(1), "int", 24, "any")
    assert len(a) % 48 == 0
    pairs = set(zip(a, b))
    assert (-2 ** 31, -1) in pairs and (2 ** 31 - 1, 1) in pairs and (0, 0) in pairs
    a, b, c = IO.inputs(np.random.default_rng(1), "short", 24, "ordered")
    assert all(y <= z for y, z in zip(b, c))


class Rec:
    def __init__(self):
        self.messages = []

    def __call__(self, key, message):
        self.messages.append(message)


def judge_with(op, T_, w, a, b, c, fn):
    got = np.array([fn(x, y, z) for x, y, z in zip(a, b, c)], dtype=IO.NP[IO.result_type(op, T_, w > 1)])
    rec = Rec()
    bad = IO.judge(T(), op, T_, w, a, b, c, got, rec)
    return bad, rec.messages


def test_integer_wrong_mul_hi_is_caught():
    a, b, c = [-1, 2 ** 30, 5, 7], [1, 8, -3, 2 ** 31 - 1], [0, 0, 0, 0]
    bad, msgs = judge_with("mul_hi(a, b)", "int", 1, a, b, c,
                           lambda x, y, z: IO.wrap(x * y, "int"))   # the low half
    assert bad == 3                                                  # -1 * 1: both halves are -1
    assert not any("a=-1, b=1:" in m for m in msgs)
    assert "mul_hi(a, b) on int with a=1073741824, b=8: expected 2, got 0" in msgs
    ok, _ = judge_with("mul_hi(a, b)", "int", 1, a, b, c, lambda x, y, z: (x * y) >> 32)
    assert ok == 0


def test_integer_vector_comparison_must_be_minus_one():
    a, b, c = [1, 2, 3, 4], [2, 2, 2, 2], [0] * 4
    bad, msgs = judge_with("a < b", "int", 4, a, b, c, lambda x, y, z: int(x < y))   # scalar 1
    assert bad == 1 and "a < b on int4 with a=1, b=2 [element 0]: expected -1, got 1" in msgs[0]


def test_integer_wrong_saturation_and_rotation_are_caught():
    a, b, c = [100, -100, 3], [100, -100, 4], [0, 0, 0]
    bad, msgs = judge_with("add_sat(a, b)", "char", 2, a, b, c, lambda x, y, z: IO.wrap(x + y, "char"))
    assert bad == 2 and "expected 127, got -56" in msgs[0]
    bad, msgs = judge_with("rotate(a, b)", "uchar", 1, [0x81], [1], [0], lambda x, y, z: (x >> 1) | ((x & 1) << 7))
    assert bad == 1 and "expected 3, got 192" in msgs[0]


def test_integer_undefined_cases_are_skipped():
    # INT_MAX + 1 is undefined: any answer passes; MIN / -1 is never asked (d makes it 1)
    bad, _ = judge_with("a + b", "int", 1, [2 ** 31 - 1], [1], [0], lambda x, y, z: 12345)
    assert bad == 0
    assert IO.divisor("int", -2 ** 31, -1) == 1 and IO.divisor("uint", 5, 0) == 1


def test_broadcast_variant_uses_the_first_element():
    # max(a, b.s0) on int2: element 1 compares with b[0], not b[1]
    a, b, c = [0, 0], [5, 9], [0, 0]
    bad, _ = judge_with("max(a, b.s0)", "int", 2, a, b, c, lambda x, y, z: 5)
    assert bad == 0
    bad, _ = judge_with("max(a, b)", "int", 2, a, b, c, lambda x, y, z: 5)
    assert bad == 1


# --- PoCL behind a compiler that rewrites the source --------------------------------------------------

from support.conformance_env import env  # noqa: E402,F401 (fixture)


class Rewriting:
    """The loader's entry points, but clCreateProgramWithSource edits the source first."""

    def __init__(self, real, old, new):
        self._real, self._old, self._new = real, old, new

    def clCreateProgramWithSource(self, ctx, count, strings, lengths, err):
        text = b"".join(ctypes.string_at(strings[i], lengths[i] if lengths else -1) for i in range(count))
        text = text.replace(self._old, self._new)
        arr = (ctypes.c_char_p * 1)(text)
        lens = (ctypes.c_size_t * 1)(len(text))
        return self._real.clCreateProgramWithSource(ctx, 1, arr, lens, err)

    def __getattr__(self, name):
        return getattr(self._real, name)


def run_on(env, category, name, old, new):
    real = env.cl
    env.cl = Rewriting(real, old, new)
    try:
        check = next(c for c in category.checks if c.name == name)
        return run_check(check, env)
    finally:
        env.cl = real


def test_conversions_compiler_forgetting_sat_is_caught(env):
    r = run_on(env, CV.CATEGORY, "to_uchar", b"convert_uchar_sat", b"convert_uchar")
    assert r.status == "fail"
    assert "wrong of" in r.message and "convert_uchar_sat(" in r.message and "expected 255" in r.message


def test_integer_ops_compiler_with_a_wrong_mul_hi_is_caught(env):
    r = run_on(env, IO.CATEGORY, "mul_hi", b"mul_hi(a, b)", b"(a * b)")
    assert r.status == "fail"
    assert "mul_hi(a, b) on char with a=" in r.message and "expected" in r.message


def test_the_checks_pass_on_pocl_unchanged(env):
    for cat, name in ((CV.CATEGORY, "to_short"), (IO.CATEGORY, "rotate")):
        check = next(c for c in cat.checks if c.name == name)
        r = run_check(check, env)
        assert r.status == "pass", r.message
