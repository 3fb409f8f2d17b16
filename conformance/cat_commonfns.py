"""commonfns: clamp, degrees, max, min, mix, radians, step, smoothstep, sign on float and double,
scalars and every vector width, including the scalar-argument overloads (clamp(floatn, float,
float), max/min(floatn, float), mix(floatn, floatn, float), step(float, floatn), smoothstep(float,
float, floatn)). Tolerances are the OpenCL C spec's: 0 ulp for clamp/max/min/step/sign, 2 ulp for
degrees/radians, absolute 1e-3 for mix and 1e-5 for smoothstep; the reference is exact (fractions).
Only inputs the spec defines are used (max/min without infinities or NaN, mix with a in [0, 1],
smoothstep with edge0 < edge1)."""
import ctypes
import math
from fractions import Fraction

import numpy as np

from .cat_relationals import FP64_PRAGMA, WIDTHS, denorms, has_fp64, launch, program, report
from .framework import Category

CATEGORY = Category("commonfns", "clamp, degrees, max, min, mix, radians, step, smoothstep, sign")
check = CATEGORY.check

# pi to 60 digits: the exact reference's error is far below any ulp
PI = Fraction("3.14159265358979323846264338327950288419716939937510582097494")

# name, C call (L = this lane's vector, S = the scalar of the case), tolerance kind
FUNCS = [
    ("clamp", "clamp(L(X), L(Y), L(Z))", "exact"),
    ("clamp(v, s, s)", "clamp(L(X), S(Y), S(Z))", "exact"),
    ("degrees", "degrees(L(X))", "ulp2"),
    ("radians", "radians(L(X))", "ulp2"),
    ("max", "max(L(X), L(Y))", "exact"),
    ("max(v, s)", "max(L(X), S(Y))", "exact"),
    ("min", "min(L(X), L(Y))", "exact"),
    ("min(v, s)", "min(L(X), S(Y))", "exact"),
    ("mix", "mix(L(X), L(Y), L(Z))", "abs1e-3"),
    ("mix(v, v, s)", "mix(L(X), L(Y), S(Z))", "abs1e-3"),
    ("step", "step(L(Y), L(X))", "exact"),
    ("step(s, v)", "step(S(Y), L(X))", "exact"),
    ("smoothstep", "smoothstep(L(Y), L(Z), L(X))", "abs1e-5"),
    ("smoothstep(s, s, v)", "smoothstep(S(Y), S(Z), L(X))", "abs1e-5"),
    ("sign", "sign(L(X))", "exact"),
]
SCALAR_ARGS = {f for f, call, _ in FUNCS if "S(" in call}


def source(ftype):
    out = [FP64_PRAGMA if ftype == "double" else ""]
    for n in WIDTHS:
        if n == 1:
            lane = "(A)[f * total + i]"
            store = "O[{f} * total + i] = {e};"
        else:
            lane = f"vload{n}(i, (A) + f * total)"
            store = f"vstore{n}({{e}}, i, O + {{f}} * total);"
        lines = []
        for f, (_, call, _) in enumerate(FUNCS):
            e = call.replace("L(", f"LD{f}(").replace("S(", f"SC{f}(")
            lines.append(f"#define LD{f}(A) {lane.replace('f *', f'{f} *')}\n"
                         f"#define SC{f}(A) (A)[{f} * total + i * {n}]\n    " + store.format(f=f, e=e))
        out.append(f"__kernel void cf_{ftype}{n}(__global const {ftype} *X, __global const {ftype} *Y, "
                   f"__global const {ftype} *Z, __global {ftype} *O, uint total)\n{{\n"
                   f"    size_t i = get_global_id(0);\n" + "\n".join(lines) + "\n}\n")
        out.append("".join(f"#undef LD{f}\n#undef SC{f}\n" for f in range(len(FUNCS))))
    return "".join(out)


# --- exact reference ---------------------------------------------------------------------------------

class Fmt:
    def __init__(self, double):
        self.double = double
        self.mant = 52 if double else 23
        self.emin = -1022 if double else -126
        self.emax = 1023 if double else 127
        self.dt = np.float64 if double else np.float32
        self.tiny = 2.0 ** self.emin
        self.max = float(np.finfo(self.dt).max)

    def ulp(self, x):
        """ulp at the exact value x (a Fraction or float, finite)."""
        a = abs(x)
        if a < self.tiny:
            return Fraction(2) ** (self.emin - self.mant)
        a = Fraction(a)
        e = a.numerator.bit_length() - a.denominator.bit_length()
        if Fraction(2) ** e > a:
            e -= 1
        return Fraction(2) ** (min(e, self.emax) - self.mant)

    def ulp_error(self, got, exact):
        """|got - exact| in ulps of exact (exact: Fraction, or a float inf / nan)."""
        if isinstance(exact, float) and not math.isfinite(exact):
            if math.isnan(exact):
                return 0.0 if math.isnan(got) else math.inf
            return 0.0 if got == exact else math.inf
        if math.isnan(got):
            return math.inf
        if math.isinf(got):
            limit = Fraction(2) ** (self.emax + 1)
            if abs(exact) >= limit and (exact > 0) == (got > 0):
                return 0.0
            return float((limit - abs(exact)) / self.ulp(Fraction(self.max)))
        return float(abs(Fraction(got) - exact) / self.ulp(exact))

    def rounded(self, x):
        with np.errstate(all="ignore"):
            return float(self.dt(x))


def c_fmax(a, b):
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return b if a < b else a


def c_fmin(a, b):
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return b if b < a else a


def exact_result(name, x, y, z):
    """The exact result: a float for 0-ulp functions, a Fraction (or inf/nan) otherwise."""
    base = name.split("(")[0]
    if base == "clamp":
        return c_fmin(c_fmax(x, y), z)
    if base == "max":
        return y if x < y else x
    if base == "min":
        return y if y < x else x
    if base == "step":
        return 0.0 if x < y else 1.0
    if base == "sign":
        if math.isnan(x):
            return 0.0
        return 1.0 if x > 0 else -1.0 if x < 0 else x
    if base in ("degrees", "radians"):
        if not math.isfinite(x):
            return x
        return Fraction(x) * (180 / PI if base == "degrees" else PI / 180)
    if base == "mix":
        fx, fy = Fraction(x), Fraction(y)
        return fx + (fy - fx) * Fraction(z)
    if base == "smoothstep":
        e0, e1 = Fraction(y), Fraction(z)
        tt = (Fraction(x) - e0) / (e1 - e0)
        tt = min(max(tt, Fraction(0)), Fraction(1))
        return tt * tt * (3 - 2 * tt)
    raise KeyError(name)


def show(v):
    try:
        return repr(float(v))
    except OverflowError:
        a = abs(Fraction(v))
        return f"{'-' if v < 0 else ''}~2^{a.numerator.bit_length() - a.denominator.bit_length()}"


def same_bits(a, b, ignore_zero_sign):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a != b:
        return False
    return ignore_zero_sign or a != 0 or math.copysign(1, a) == math.copysign(1, b)


def judge(name, kind, x, y, z, got, fmt, ftz):
    """(ok, detail) of got = name(x, y, z)."""
    exact = exact_result(name, x, y, z)
    base = name.split("(")[0]
    if kind == "exact":
        ok = same_bits(got, exact, base in ("max", "min", "clamp"))
        return ok, repr(exact)
    if kind == "ulp2":
        err = fmt.ulp_error(got, exact)
        ok = err <= 2
        if not ok and ftz and not isinstance(exact, float) and abs(exact) < fmt.tiny and got == 0:
            ok = True
        if not ok and ftz and x != 0 and abs(x) < fmt.tiny and got == 0:
            ok = True
        return ok, f"{show(exact)} (error {err:.2f} ulp, 2 allowed)"
    tol = Fraction(1, 1000) if kind == "abs1e-3" else Fraction(1, 100000)
    if math.isnan(got) or math.isinf(got):
        return False, f"{show(exact)} within {float(tol)}"
    err = abs(Fraction(got) - exact)
    return err <= tol, f"{show(exact)} (absolute error {float(err):.3g}, {float(tol)} allowed)"


# --- inputs ------------------------------------------------------------------------------------------

def specials(fmt):
    tiny, big = fmt.tiny, fmt.max
    den = 2.0 ** (fmt.emin - fmt.mant)
    return [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, tiny, -tiny, den, -den, big, -big, math.inf, -math.inf,
            math.nan, 3.0, -7.25, 1e10, -1e-10, 100.0]


def inputs(name, rng, fmt, count):
    """Lane inputs (x, y, z lists) of `count` lanes for one function, within its defined domain."""
    base = name.split("(")[0]
    r = lambda lo, hi: [fmt.rounded(v) for v in rng.uniform(lo, hi, count)]  # noqa: E731
    sp = [fmt.rounded(v) for v in specials(fmt)]
    finite = [v for v in sp if math.isfinite(v)]

    def wide(k):
        bits = rng.integers(0, 2 ** 64 - 1 if fmt.double else 2 ** 32 - 1, k, dtype=np.uint64, endpoint=True)
        vals = bits.view(np.float64) if fmt.double else bits.astype(np.uint32).view(np.float32)
        return [float(v) for v in vals]

    def mixed(pool):
        out = wide(count)
        for i in range(min(count, len(pool))):
            out[(i * 7) % count] = pool[i]
        return out

    if base == "clamp":
        x = mixed(sp)
        lo, hi = r(-50, 50), r(-50, 50)
        y = [min(a, b) for a, b in zip(lo, hi)]
        z = [max(a, b) for a, b in zip(lo, hi)]
        return x, y, z
    if base in ("degrees", "radians", "sign"):
        return mixed(sp), [0.0] * count, [0.0] * count
    if base in ("max", "min"):
        x = [v if math.isfinite(v) else 1.5 for v in mixed(finite)]
        y = [v if math.isfinite(v) else -2.5 for v in mixed(finite[::-1])]
        for i in range(0, count, 5):
            y[i] = x[i]  # equal arguments
        return x, y, [0.0] * count
    if base == "step":
        x, y = mixed(sp), mixed(sp[::-1])
        for i in range(0, count, 6):
            y[i] = x[i]
        return x, y, [0.0] * count
    if base == "mix":
        a = r(0, 1)
        a[:3] = [0.0, 1.0, 0.5][: min(3, count)]
        return r(-1000, 1000), r(-1000, 1000), a
    if base == "smoothstep":
        e0 = r(-2, 1.5)
        e1 = [fmt.rounded(a + w) for a, w in zip(e0, rng.uniform(0.25, 2, count))]
        x = r(-3, 3)
        for i in range(0, count, 4):
            x[i] = e0[i] if i % 8 == 0 else e1[i]
        return x, e0, e1
    raise KeyError(name)


def run(env, t, ftype):
    double = ftype == "double"
    fmt = Fmt(double)
    ftz = not denorms(env, double)
    prog = program(env, t, source(ftype))
    rng = env.rng(200 + double)
    m = env.samples(12, 96)
    bad = []
    for n in WIDTHS:
        total = m * n
        xs, ys, zs = [], [], []
        for f, (name, _, _) in enumerate(FUNCS):
            x, y, z = inputs(name, rng, fmt, total)
            if name in SCALAR_ARGS:  # the scalar argument is the case's first lane, for every lane
                y = [y[(i // n) * n] for i in range(total)]
                z = [z[(i // n) * n] for i in range(total)]
            xs += x
            ys += y
            zs += z
        arrays = [np.array(v, dtype=fmt.dt) for v in (xs, ys, zs)]
        (o,) = launch(env, t, prog, f"cf_{ftype}{n}", arrays, [(fmt.dt, len(FUNCS) * total)], (m,),
                      scalars=[ctypes.c_uint32(total)])
        for f, (name, _, kind) in enumerate(FUNCS):
            for j in range(f * total, (f + 1) * total):
                x, y, z = (float(a[j]) for a in arrays)
                got = float(o[j])
                ok, detail = judge(name, kind, x, y, z, got, fmt, ftz)
                if not ok:
                    args = {"clamp": (x, y, z), "mix": (x, y, z), "smoothstep": (y, z, x), "step": (y, x),
                            "max": (x, y), "min": (x, y)}.get(name.split("(")[0], (x,))
                    vt = ftype if n == 1 else f"{ftype}{n}"
                    bad.append(f"{name} on {vt}, lane ({', '.join(repr(a) for a in args)}): expected "
                               f"{detail}, got {got!r}")
    report(t, bad, f"{ftype} common functions", 8)


@check
def float_common(env, t):
    """clamp, degrees, max, min, mix, radians, step, smoothstep, sign on float .. float16"""
    run(env, t, "float")


@check
def double_common(env, t):
    """the same on double .. double16"""
    if not has_fp64(env):
        t.skip("no cl_khr_fp64")
    run(env, t, "double")
