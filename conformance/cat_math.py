"""math: single-precision builtins against a correctly rounded reference (mpmath), with the ULP
bounds of the OpenCL C specification's table for the FULL_PROFILE, on edge values (zeros,
infinities, NaN, denormals, the largest and smallest normals) and sampled inputs: every
exponent range plus the function's interesting domain. --quick samples fewer.

Error in ulps is |got - exact| / ulp(exact), where ulp(x) is 2^(e - 23) for 2^e <= |x| < 2^(e+1)
(2^-149 below FLT_MIN). Without CL_FP_DENORM a device may flush denormal inputs and results to
zero; both readings are accepted then. Special values (NaN, infinities, results at poles) must
match C99 Annex F exactly."""
import math

import numpy as np

from . import clapi as C
from .framework import Category

try:
    import mpmath
    from mpmath import mp
except ImportError:  # the category skips itself
    mpmath = mp = None


def _requires(env):
    if mpmath is None:
        return "mpmath is not installed (it computes the correctly rounded reference)"
    return None


CATEGORY = Category("math", "float builtins vs a correctly rounded reference, OpenCL C ULP bounds",
                    requires=_requires)

F32_MAX = float(np.finfo(np.float32).max)
F32_MIN = float(np.finfo(np.float32).tiny)       # smallest normal
F32_DENORM = 2.0 ** -149

EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, F32_MIN, -F32_MIN, F32_DENORM, -F32_DENORM,
         F32_MAX, -F32_MAX, math.inf, -math.inf, math.nan, 3.0, 10.0, -10.0, 100.0, 1e-20, 88.5, -104.0,
         math.pi, float(np.float32(math.pi / 2)), 1e10, -1e10, 0.999999940395355, 1.00000011920929]


# --- the reference -----------------------------------------------------------------------------------

def _pi(f):
    return lambda x: f(x) / mp.pi


def _cbrt(x):
    return mp.cbrt(x) if x >= 0 else -mp.cbrt(-x)


def _pow(x, y):
    if x < 0 and y != mp.floor(y):
        raise ValueError("complex")
    if x == 0:
        raise ValueError("special")  # let C99 rules (float64) decide signs and infinities
    return mp.power(x, y)


def _logb(x):
    if x == 0:
        raise ValueError("special")
    return mp.mpf(math.frexp(float(x))[1] - 1)


def _exact(f):
    """For functions exact in float64 on float32 inputs (floor, fmod, ...): use float64."""
    def g(*a):
        raise ValueError("use float64")
    g.f64 = f
    return g


def _np(fn):
    def call(*a):
        with np.errstate(all="ignore"):
            return float(fn(*[np.float64(x) for x in a]))
    return call


def _math(fn, pole=math.nan):
    def call(*a):
        try:
            return float(fn(*a))
        except ValueError:
            return pole
        except OverflowError:
            return math.inf
    return call


def _gamma64(x):
    if x == 0:
        return math.copysign(math.inf, x)
    if x == -math.inf or (x < 0 and x == math.floor(x)):
        return math.nan
    try:
        return math.gamma(x)
    except OverflowError:
        return math.inf


def _pi64(fn, mul):
    return _np(lambda x: fn(np.pi * x) if mul else fn(x) / np.pi)


def _tanpi64(x):
    if math.isinf(x) or math.isnan(x):
        return math.nan
    if (2 * x) % 2 == 1:  # n + 1/2: +inf for even n, -inf for odd n
        return math.inf if math.floor(x) % 2 == 0 else -math.inf
    return float(np.tan(np.pi * np.float64(x)))


def _pow64(x, y):
    """C99 Annex F pow on float64 (numpy's power differs for negative bases and infinities)."""
    try:
        return math.pow(x, y)
    except ValueError:
        if x == 0 and y < 0:
            odd = y == math.floor(y) and math.fmod(y, 2) != 0
            return math.copysign(math.inf, x) if odd else math.inf
        return math.nan
    except OverflowError:
        odd = y == math.floor(y) and math.fmod(y, 2) != 0
        return -math.inf if x < 0 and odd else math.inf


def _uniform(lo, hi):
    return lambda rng, n: rng.uniform(lo, hi, n)


def _positive(rng, n):
    return np.exp(rng.uniform(-80, 80, n))


# name: arity, ulp bound, mpmath reference, float64 reference (special values), domain sampler
FUNCTIONS = {
    "sin": (1, 4, mp and mp.sin, _np(np.sin), _uniform(-100, 100)),
    "cos": (1, 4, mp and mp.cos, _np(np.cos), _uniform(-100, 100)),
    "tan": (1, 5, mp and mp.tan, _np(np.tan), _uniform(-10, 10)),
    "asin": (1, 4, mp and mp.asin, _np(np.arcsin), _uniform(-1, 1)),
    "acos": (1, 4, mp and mp.acos, _np(np.arccos), _uniform(-1, 1)),
    "atan": (1, 5, mp and mp.atan, _np(np.arctan), _uniform(-100, 100)),
    "sinh": (1, 4, mp and mp.sinh, _np(np.sinh), _uniform(-90, 90)),
    "cosh": (1, 4, mp and mp.cosh, _np(np.cosh), _uniform(-90, 90)),
    "tanh": (1, 5, mp and mp.tanh, _np(np.tanh), _uniform(-10, 10)),
    "asinh": (1, 4, mp and mp.asinh, _np(np.arcsinh), _uniform(-100, 100)),
    "acosh": (1, 4, mp and mp.acosh, _np(np.arccosh), _uniform(1, 100)),
    "atanh": (1, 5, mp and mp.atanh, _np(np.arctanh), _uniform(-1, 1)),
    "sinpi": (1, 4, mp and mp.sinpi, _pi64(np.sin, True), _uniform(-4, 4)),
    "cospi": (1, 4, mp and mp.cospi, _pi64(np.cos, True), _uniform(-4, 4)),
    "tanpi": (1, 6, mp and (lambda x: mp.sinpi(x) / mp.cospi(x)), _tanpi64, _uniform(-4, 4)),
    "asinpi": (1, 5, mp and _pi(mp.asin), _pi64(np.arcsin, False), _uniform(-1, 1)),
    "acospi": (1, 5, mp and _pi(mp.acos), _pi64(np.arccos, False), _uniform(-1, 1)),
    "atanpi": (1, 5, mp and _pi(mp.atan), _pi64(np.arctan, False), _uniform(-100, 100)),
    "exp": (1, 3, mp and mp.exp, _np(np.exp), _uniform(-104, 89)),
    "exp2": (1, 3, mp and (lambda x: mp.power(2, x)), _np(np.exp2), _uniform(-150, 128)),
    "exp10": (1, 3, mp and (lambda x: mp.power(10, x)), _np(lambda x: np.power(10.0, x)), _uniform(-45, 39)),
    "expm1": (1, 3, mp and mp.expm1, _np(np.expm1), _uniform(-20, 89)),
    "log": (1, 3, mp and mp.log, _np(np.log), _positive),
    "log2": (1, 3, mp and (lambda x: mp.log(x, 2)), _np(np.log2), _positive),
    "log10": (1, 3, mp and mp.log10, _np(np.log10), _positive),
    "log1p": (1, 2, mp and mp.log1p, _np(np.log1p), _uniform(-1, 100)),
    "sqrt": (1, 3, mp and mp.sqrt, _np(np.sqrt), _positive),
    "rsqrt": (1, 2, mp and (lambda x: 1 / mp.sqrt(x)), _np(lambda x: 1.0 / np.sqrt(x)), _positive),
    "cbrt": (1, 2, mp and _cbrt, _np(np.cbrt), _uniform(-1000, 1000)),
    "erf": (1, 16, mp and mp.erf, _math(math.erf), _uniform(-5, 5)),
    "erfc": (1, 16, mp and mp.erfc, _math(math.erfc), _uniform(-5, 10)),
    "tgamma": (1, 16, mp and mp.gamma, _gamma64, _uniform(-10, 35)),
    "logb": (1, 0, _logb, _np(lambda x: np.floor(np.log2(np.abs(x)))), _positive),
    "fabs": (1, 0, _exact(abs), _np(np.abs), _uniform(-100, 100)),
    "floor": (1, 0, _exact(None), _np(np.floor), _uniform(-100, 100)),
    "ceil": (1, 0, _exact(None), _np(np.ceil), _uniform(-100, 100)),
    "trunc": (1, 0, _exact(None), _np(np.trunc), _uniform(-100, 100)),
    "rint": (1, 0, _exact(None), _np(np.rint), _uniform(-100, 100)),
    "round": (1, 0, _exact(None), _np(lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x)
                                      if np.abs(x) < 2 ** 52 else x), _uniform(-100, 100)),
    "atan2": (2, 6, mp and (lambda y, x: mp.atan2(y, x) if (x or y) else mp_raise()), _np(np.arctan2),
              _uniform(-100, 100)),
    "pow": (2, 16, mp and _pow, _pow64, _uniform(-20, 20)),
    "hypot": (2, 4, mp and mp.hypot, _np(np.hypot), _uniform(-1e4, 1e4)),
    "fmod": (2, 0, _exact(None), _np(np.fmod), _uniform(-100, 100)),
    "remainder": (2, 0, _exact(None), _math(math.remainder), _uniform(-100, 100)),
    "fdim": (2, 0, _exact(None), _np(lambda x, y: np.where(x > y, x - y, 0.0) if not (np.isnan(x) or np.isnan(y))
                                     else np.nan), _uniform(-100, 100)),
    "fmin": (2, 0, _exact(None), _np(np.fmin), _uniform(-100, 100)),
    "fmax": (2, 0, _exact(None), _np(np.fmax), _uniform(-100, 100)),
    "copysign": (2, 0, _exact(None), _np(np.copysign), _uniform(-100, 100)),
    "fma": (3, 0, mp and (lambda a, b, c: mp.fadd(mp.fmul(a, b, exact=True), c, exact=True)),
            _np(lambda a, b, c: a * b + c), _uniform(-100, 100)),
}


def mp_raise():
    raise ValueError("special")


def reference(name, args):
    """The exact value of name(args) as an mpf, or a float64 for special cases (inf/nan/poles)."""
    arity, _, mpfn, f64, _ = FUNCTIONS[name]
    if all(math.isfinite(a) and a != 0 for a in args) and not hasattr(mpfn, "f64"):
        try:
            with mp.workprec(96):
                v = mpfn(*[mp.mpf(a) for a in args])
            if isinstance(v, mpmath.mpf) and mp.isfinite(v):
                return v
        except (ValueError, ZeroDivisionError):
            pass
    return f64(*args)


def ulp_of(exact):
    a = abs(float(exact)) if not isinstance(exact, float) else abs(exact)
    if a < F32_MIN:
        return 2.0 ** -149
    e = math.frexp(a)[1] - 1
    return 2.0 ** (min(e, 127) - 23)


def ulp_error(got, exact):
    """Error of the float32 `got` against `exact` (mpf or float64) in float32 ulps."""
    got = float(got)
    if isinstance(exact, float) and (math.isnan(exact) or math.isinf(exact)):
        if math.isnan(exact):
            return 0.0 if math.isnan(got) else math.inf
        return 0.0 if got == exact else math.inf
    if math.isnan(got):
        return math.inf
    ex = mp.mpf(exact)
    if math.isinf(got):  # an overflow: exact at or past 2^128 rounds to infinity
        if abs(ex) >= mp.mpf(2) ** 128 and (ex > 0) == (got > 0):
            return 0.0
        g = mp.mpf(2) ** 128 * (1 if got > 0 else -1)
        return float(abs(g - ex) / ulp_of(ex))
    return float(abs(mp.mpf(got) - ex) / ulp_of(ex))


def _flush(x):
    return math.copysign(0.0, x) if x != 0 and abs(x) < F32_MIN and math.isfinite(x) else x


def acceptable(name, got, exact, bound):
    """(ok, error in ulps). A float64 `exact` is representable or special: bound-0 functions and
    zeros must match it exactly (sign of zero included, but for fmin/fmax); an mpf `exact` is
    met within max(bound, 0.5) ulp (a correctly rounded result is within 0.5)."""
    err = ulp_error(got, exact)
    if isinstance(exact, float):
        if math.isnan(exact) or math.isinf(exact):
            return err == 0, err
        if bound == 0 or exact == 0:
            with np.errstate(all="ignore"):
                rounded = float(np.float32(exact))  # correctly rounded: fdim(x, y) is x - y rounded
            same_zero_sign = rounded != 0 or math.copysign(1, got) == math.copysign(1, rounded) or \
                name in ("fmin", "fmax")
            return got == rounded and same_zero_sign, err
        return err <= bound, err
    return err <= max(bound, 0.5), err


def judge(name, args, got, bound, ftz):
    """(ok, error in ulps, the reference as text) of got = name(*args)."""
    exact = reference(name, args)
    ok, err = acceptable(name, got, exact, bound)
    if not ok and ftz:
        if got == 0 and not isinstance(exact, float) and abs(exact) < F32_MIN:
            return True, err, ""
        flushed = [_flush(a) for a in args]
        if flushed != args:
            e2 = reference(name, flushed)
            ok2, _ = acceptable(name, got, e2, bound)
            if ok2 or (got == 0 and math.isfinite(float(e2)) and abs(float(e2)) < F32_MIN):
                return True, err, ""
    shown = mpmath.nstr(exact, 12) if not isinstance(exact, float) else repr(exact)
    return ok, err, shown


def inputs(name, env, n):
    """(list of argument tuples) for name: edge values, random bit patterns, the domain."""
    arity, _, _, _, domain = FUNCTIONS[name]
    rng = np.random.default_rng(env.seed + sum(map(ord, name)))
    cols = []
    for _ in range(arity):
        bits = rng.integers(0, 2 ** 32, n // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)
        dom = np.asarray(domain(rng, n - n // 2), dtype=np.float32)
        col = np.concatenate([bits, dom])
        rng.shuffle(col)
        cols.append([float(x) for x in col if math.isfinite(float(x))])
    m = min(len(c) for c in cols)
    cases = [tuple(c[i] for c in cols) for i in range(m)]
    edges = [float(np.float32(e)) for e in EDGES]
    if arity == 1:
        cases += [(e,) for e in edges]
    elif arity == 2:
        small = edges[:20]
        cases += [(a, b) for a in small for b in small]
    else:
        small = edges[:12]
        cases += [(a, b, c) for a in small for b in small[:6] for c in small[:6]]
    return cases


SIGNATURES = {1: "x[i]", 2: "x[i], y[i]", 3: "x[i], y[i], z[i]"}


def kernel_source(names):
    out = []
    for name in names:
        args = SIGNATURES[FUNCTIONS[name][0]]
        out.append(f"__kernel void m_{name}(__global const float *x, __global const float *y, "
                   f"__global const float *z, __global float *o)\n"
                   f"{{ size_t i = get_global_id(0); o[i] = {name}({args}); }}\n")
    return "".join(out)


def _kernel(env, t, name):
    """The kernel m_<name>, from one program of every function when it builds, else alone."""
    cache = env.__dict__.setdefault("_math_cache", {})
    if "all" not in cache:
        from .framework import T
        keeper = T()  # programs live for the whole run: released by no check
        try:
            cache["all"] = env.program(keeper, kernel_source(list(FUNCTIONS)), "")
        except Exception:
            cache["all"] = None
    prog = cache["all"] or env.program(t, kernel_source([name]), "")
    return env.kernel(t, prog, f"m_{name}")


def run_function(env, t, name):
    arity, bound, _, _, _ = FUNCTIONS[name]
    n = env.samples(256, 4096)
    cases = inputs(name, env, n)
    k = _kernel(env, t, name)
    m = len(cases)
    cols = [np.array([c[j] if j < arity else 0.0 for c in cases], dtype=np.float32) for j in range(3)]
    bufs = []
    import ctypes
    for col in cols:
        host = ctypes.create_string_buffer(col.tobytes(), col.nbytes)
        bufs.append(env.buffer(t, col.nbytes, C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, host))
    out = env.buffer(t, 4 * m)
    env.set_args(t, k, *[("mem", b) for b in bufs], ("mem", out))
    env.enqueue(t, k, (m,))
    got = np.frombuffer(env.read(t, out, 4 * m), dtype=np.float32)
    ftz = not env.device_info(C.CL_DEVICE_SINGLE_FP_CONFIG, "ulong") & C.CL_FP_DENORM
    return check_results(t, name, cases, got, bound, ftz)


def check_results(t, name, cases, got, bound, ftz=False):
    """Judge every result; report the worst few with their inputs. Returns the max error seen."""
    bad = []
    worst = 0.0
    for args, g in zip(cases, got):
        args = [float(np.float32(a)) for a in args]
        ok, err, ref = judge(name, args, float(g), bound, ftz)
        if not ok:
            bad.append((err, args, float(g), ref))
        elif math.isfinite(err):
            worst = max(worst, err)
    bad.sort(key=lambda b: -b[0] if math.isfinite(b[0]) else -1e300)
    for err, args, g, ref in bad[:4]:
        a = ", ".join(repr(x) for x in args)
        t.true(False, f"{name}({a}) = {g!r} ({g.hex()}); reference {ref}; error "
                      f"{'inf' if math.isinf(err) else f'{err:.2f}'} ulp, {bound} allowed")
    if len(bad) > 4:
        t.true(False, f"{name}: {len(bad)} of {len(cases)} results out of bounds")
    if not bad:
        t.note(f"max error {worst:.2f} ulp of {bound}")
    return worst


def _make(name):
    def fn(env, t):
        run_function(env, t, name)
    fn.__doc__ = f"{name}: within {FUNCTIONS[name][1]} ulp on edge values and sampled inputs"
    return fn


for _name in FUNCTIONS:
    CATEGORY.check(_make(_name), name=_name)
