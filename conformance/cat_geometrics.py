"""geometrics: cross (3 and 4 components), dot, distance, length, normalize on float and double
vectors of 1-4 components, and fast_distance, fast_length, fast_normalize on float, against an
exact reference (fractions, an integer square root), with the OpenCL C spec's bounds:
dot within max*max*(2n-1)*EPSILON and cross within max*max*3*EPSILON absolute (max: the largest input
magnitude), length 2.75 + 0.5n ulp, distance 2.5 + 2n, normalize 2 + n per component,
fast_length 8191.5 + n, fast_distance 8191.5 + 2n, fast_normalize 8192 + n. length and normalize
get components near the overflow and underflow limits (their squares overflow or underflow, the
results do not), zero vectors (normalize returns them unchanged), infinities (length is inf;
normalize treats infinite elements as +-1 and the others as 0) and NaN (length and every component
of normalize are NaN: the infinitely precise result, whose ulp is NaN; the OpenCL C++ spec's
normalize states the zero, NaN and infinity rules explicitly)."""
import ctypes
import math
from fractions import Fraction

import numpy as np

from .cat_commonfns import Fmt, show
from .cat_relationals import FP64_PRAGMA, denorms, has_fp64, launch, program, report
from .framework import Category

CATEGORY = Category("geometrics", "cross, dot, distance, length, normalize and their fast_ variants")
check = CATEGORY.check

GEO_WIDTHS = (1, 2, 3, 4)
# name, arguments, result is a vector
FUNCS = [("dot", 2, False), ("length", 1, False), ("distance", 2, False), ("normalize", 1, True),
         ("cross", 2, True), ("fast_length", 1, False), ("fast_distance", 2, False),
         ("fast_normalize", 1, True)]


def functions(ftype, n):
    out = []
    for name, nargs, vec in FUNCS:
        if name == "cross" and n not in (3, 4):
            continue
        if name.startswith("fast_") and ftype == "double":
            continue
        out.append((name, nargs, vec))
    return out


def source(ftype):
    out = [FP64_PRAGMA if ftype == "double" else ""]
    for n in GEO_WIDTHS:
        lines = []
        for f, (name, nargs, vec) in enumerate(functions(ftype, n)):
            ld = (lambda A: f"{A}[{f} * total + i]") if n == 1 else \
                (lambda A: f"vload{n}(i, {A} + {f} * total)")  # noqa: E731
            call = f"{name}({ld('X')}" + (f", {ld('Y')})" if nargs == 2 else ")")
            if vec and n > 1:
                lines.append(f"    vstore{n}({call}, i, O + {f} * total);")
            else:
                lines.append(f"    O[{f} * total + i * {n}] = {call};")
        out.append(f"__kernel void geo_{ftype}{n}(__global const {ftype} *X, __global const {ftype} *Y, "
                   f"__global {ftype} *O, uint total)\n{{\n    size_t i = get_global_id(0);\n"
                   + "\n".join(lines) + "\n}\n")
    return "".join(out)


# --- the exact reference -----------------------------------------------------------------------------

def frac_sqrt(s):
    """sqrt of a non-negative Fraction to a relative error below 2^-120."""
    if s == 0:
        return Fraction(0)
    bits = s.numerator.bit_length() - s.denominator.bit_length()
    k = (250 - bits) // 2
    if k >= 0:
        v = s.numerator * 4 ** k // s.denominator
    else:
        v = s.numerator // (s.denominator * 4 ** (-k))
    return Fraction(math.isqrt(v)) / Fraction(2) ** k


def ulp_bound(name, n):
    return {"length": 2.75 + 0.5 * n, "distance": 2.5 + 2 * n, "normalize": 2 + n,
            "fast_length": 8191.5 + n, "fast_distance": 8191.5 + 2 * n, "fast_normalize": 8192 + n}[name]


def length_exact(v):
    """Exact length of the list v of floats (inf / nan as floats)."""
    if any(math.isnan(c) for c in v):
        return math.nan
    if any(math.isinf(c) for c in v):
        return math.inf
    return frac_sqrt(sum(Fraction(c) ** 2 for c in v))


def normalize_exact(v):
    """List of exact components, or None when the result is v itself (all zeros)."""
    if any(math.isnan(c) for c in v):
        return [math.nan] * len(v)
    if any(math.isinf(c) for c in v):
        v = [math.copysign(1.0, c) if math.isinf(c) else 0.0 for c in v]
    if all(c == 0 for c in v):
        return None
    ln = frac_sqrt(sum(Fraction(c) ** 2 for c in v))
    return [Fraction(c) / ln for c in v]


def cross_exact(a, b):
    fa, fb = [Fraction(c) for c in a[:3]], [Fraction(c) for c in b[:3]]
    r = [fa[1] * fb[2] - fa[2] * fb[1], fa[2] * fb[0] - fa[0] * fb[2], fa[0] * fb[1] - fa[1] * fb[0]]
    return r + ([Fraction(0)] if len(a) == 4 else [])


def judge(name, a, b, got, fmt):
    """Messages for what is wrong with got = name(a[, b]) (a, b: lists of floats; got: a float
    or a list of floats)."""
    n = len(a)
    eps = Fraction(2) ** -fmt.mant
    if name in ("dot", "cross"):
        big = max(abs(Fraction(c)) for c in a + b)
        tol = big * big * (2 * n - 1 if name == "dot" else 3) * eps
        exact = [sum(Fraction(x) * Fraction(y) for x, y in zip(a, b))] if name == "dot" else cross_exact(a, b)
        gots = [got] if name == "dot" else got
        bad = []
        for i, (g, e) in enumerate(zip(gots, exact)):
            if not math.isfinite(g) or abs(Fraction(g) - e) > tol:
                bad.append(f"component {i}: {g!r}, exact {show(e)}, allowed absolute error {show(tol)}")
        if name == "cross" and n == 4 and not (gots[3] == 0):
            bad.append(f"w = {gots[3]!r}, expected 0.0")
        return bad
    bound = ulp_bound(name, n)
    if name.endswith("normalize"):
        exact = normalize_exact(a)
        if exact is None:
            same = all(g == c and math.copysign(1, g) == math.copysign(1, c) for g, c in zip(got, a))
            return [] if same else [f"a zero vector must come back unchanged: got {got}"]
        bad = []
        for i, (g, e) in enumerate(zip(got, exact)):
            err = fmt.ulp_error(g, e)
            if err > bound:
                bad.append(f"component {i}: {g!r}, exact {show(e) if not isinstance(e, float) else e}, "
                           f"error {err:.2f} ulp, {bound} allowed")
        return bad
    exact = length_exact_diff(a, b) if name.endswith("distance") else length_exact(a)
    err = fmt.ulp_error(got, exact)
    if err > bound:
        return [f"{got!r}, exact {show(exact) if not isinstance(exact, float) else exact}, "
                f"error {err:.2f} ulp, {bound} allowed"]
    return []


def length_exact_diff(a, b):
    if any(math.isnan(c) for c in a + b):
        return math.nan
    return frac_sqrt(sum((Fraction(x) - Fraction(y)) ** 2 for x, y in zip(a, b)))


# --- inputs ------------------------------------------------------------------------------------------

def vectors_for(name, rng, fmt, n, m):
    """(m vectors a, m vectors b) of n float components within what the spec defines for name."""
    dbl = fmt.double
    big_e = 1000 if dbl else 126   # squares overflow, the length does not
    small_e = -1060 if dbl else -140  # squares underflow (denormal or zero)

    def rnd(lo_e, hi_e):
        mag = np.exp2(rng.uniform(lo_e, hi_e, n)) * rng.choice([-1.0, 1.0], n)
        return [fmt.rounded(x) for x in mag]

    a, b = [], []
    for i in range(m):
        kind = i % 10
        if name.startswith("fast_"):
            x, y = rnd(-20, 20), rnd(-20, 20)
            if kind == 1:
                x = [fmt.rounded(v) for v in rng.uniform(-1000, 1000, n)]
        elif name in ("dot", "cross"):
            x, y = rnd(-30, 30), rnd(-30, 30)
            if kind == 1:
                x = [0.0] * n
            elif kind == 2:
                x, y = [fmt.rounded(v) for v in rng.uniform(-1, 1, n)], [fmt.rounded(v) for v in rng.uniform(-1, 1, n)]
        else:
            x, y = rnd(-40, 40), rnd(-40, 40)
            if kind == 1:
                x = rnd(big_e - 3, big_e)
                y = [fmt.rounded(-v) for v in x] if name == "distance" else y
                if name == "distance":  # the difference 2x must stay finite
                    x = [fmt.rounded(v / 4) for v in x]
                    y = [fmt.rounded(v / 4) for v in y]
            elif kind == 2:
                x, y = rnd(small_e, small_e + 8), rnd(small_e, small_e + 8)
            elif kind == 3:
                x = [0.0 if j % 2 else -0.0 for j in range(n)]
                y = list(x)
            elif kind == 4 and name != "distance":
                x[rng.integers(0, n)] = -math.inf if i % 20 < 10 else math.inf
            elif kind == 5 and name != "distance":
                x[rng.integers(0, n)] = math.nan
            elif kind == 6:
                x = [0.0] * n
                x[i % n] = fmt.rounded(2.0 ** (big_e + 1) if i % 20 < 10 else 2.0 ** small_e)
        a.append(x)
        b.append(y)
    return a, b


def run(env, t, ftype):
    double = ftype == "double"
    fmt = Fmt(double)
    ftz = not denorms(env, double)
    prog = program(env, t, source(ftype))
    rng = env.rng(300 + double)
    m = env.samples(20, 200)
    bad = []
    for n in GEO_WIDTHS:
        fns = functions(ftype, n)
        total = m * n
        xs, ys = [], []
        cases = []
        for name, _, _ in fns:
            a, b = vectors_for(name, rng, fmt, n, m)
            cases.append((a, b))
            xs += [c for v in a for c in v]
            ys += [c for v in b for c in v]
        arrays = [np.array(v, dtype=fmt.dt) for v in (xs, ys)]
        (o,) = launch(env, t, prog, f"geo_{ftype}{n}", arrays, [(fmt.dt, len(fns) * total)], (m,),
                      scalars=[ctypes.c_uint32(total)])
        for f, ((name, nargs, vec), (a, b)) in enumerate(zip(fns, cases)):
            for i in range(m):
                base = f * total + i * n
                got = [float(v) for v in o[base:base + n]] if vec else float(o[base])
                msgs = judge(name, a[i], b[i], got, fmt)
                if msgs and ftz:
                    fa = [0.0 if abs(c) < fmt.tiny else c for c in a[i]]
                    fb = [0.0 if abs(c) < fmt.tiny else c for c in b[i]]
                    tiny_result = not vec and got == 0 and (a[i] != fa or b[i] != fb)
                    if tiny_result or not judge(name, fa, fb, got, fmt):
                        msgs = []
                if msgs:
                    vt = ftype if n == 1 else f"{ftype}{n}"
                    shown = f"({', '.join(repr(c) for c in a[i])})"
                    if nargs == 2:
                        shown += f", ({', '.join(repr(c) for c in b[i])})"
                    bad.append(f"{name}({vt} {shown}): " + "; ".join(msgs))
    report(t, bad, f"{ftype} geometric functions", 8)


@check
def float_geometrics(env, t):
    """cross, dot, distance, length, normalize, fast_* on float .. float4 within the spec's bounds"""
    run(env, t, "float")


@check
def double_geometrics(env, t):
    """cross, dot, distance, length, normalize on double .. double4"""
    if not has_fp64(env):
        t.skip("no cl_khr_fp64")
    run(env, t, "double")
