"""math: single- and double-precision builtins against a correctly rounded reference (mpmath),
with the ULP bounds of the OpenCL C specification's tables for the FULL_PROFILE ("ULP values for
single precision built-in math functions" and "... for double precision ..."), on edge values
(zeros, infinities, NaN, denormals, the largest and smallest normals, near-integers) and sampled
inputs: random bit patterns (every exponent range) plus the function's interesting domain.
--quick samples fewer. The double checks (named <function>_double) run where the device reports
cl_khr_fp64 and skip otherwise.

Error in ulps is |got - exact| / ulp(exact), where ulp(x) is 2^(e - p) for 2^e <= |x| < 2^(e+1),
p = 23 for float and 52 for double (2^-149, 2^-1074 below FLT_MIN, DBL_MIN). Without CL_FP_DENORM
a device may flush denormal inputs and results to zero; both readings are accepted then. Special
values (NaN, infinities, results at poles) must match C99 Annex F exactly."""
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

F64_MAX = float(np.finfo(np.float64).max)
F64_MIN = float(np.finfo(np.float64).tiny)
F64_DENORM = 2.0 ** -1074

# the first 12 and 20 are crossed with each other for 3- and 2-argument functions
EDGES64 = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, F64_MIN, -F64_MIN, F64_DENORM, -F64_DENORM,
           F64_MAX, -F64_MAX, math.inf, -math.inf, math.nan, 3.0, 2.5, -0.49999999999999994,
           10.0, -10.0, 100.0, 1e-300, 709.5, -745.0, 1023.5, -1074.5, math.pi, math.pi / 2, 1e300, -1e300,
           1 - 2.0 ** -53, 1 + 2.0 ** -52, 2.0 ** 52 - 0.5, -(2.0 ** 52 + 1), 2.0 ** 53, 0.49999999999999994,
           -2.5, 3.5, F64_MIN * (1 - 2.0 ** -52), 2.0 ** -1022 * 1.5, 1e15 + 0.5, 6.5, -7.5, 1e-5]


class FType:
    """One floating-point type under test: its C name, numpy types, precision and ranges."""

    def __init__(self, name, dtype, bits, mant, emax, fmin, denorm, edges, prec, config, suffix):
        self.name, self.dtype, self.bits, self.mant, self.emax = name, dtype, bits, mant, emax
        self.fmin, self.denorm, self.edges, self.prec, self.config = fmin, denorm, edges, prec, config
        self.suffix = suffix  # of the check's and the kernel's names

    def round(self, x):
        """x (a float64) correctly rounded to this type."""
        with np.errstate(all="ignore"):
            return float(self.dtype(x))


FLOAT = FType("float", np.float32, 32, 23, 128, F32_MIN, F32_DENORM, EDGES, 96,
              C.CL_DEVICE_SINGLE_FP_CONFIG, "")
DOUBLE = FType("double", np.float64, 64, 52, 1024, F64_MIN, F64_DENORM, EDGES64, 192,
               C.CL_DEVICE_DOUBLE_FP_CONFIG, "_double")


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


def _round64(x):
    """round(): half-way cases away from zero, exactly (x + 0.5 is not exact in double)."""
    if not math.isfinite(x) or abs(x) >= 2.0 ** 52:
        return x
    r = math.floor(abs(x))
    if abs(x) - r >= 0.5:  # exact: both are doubles of the same binade or r is 0
        r += 1
    return math.copysign(float(r), x)


def _fma64(a, b, c):
    """fma where an argument is zero or special: exact, with IEEE's sign of an exact zero sum."""
    if not all(math.isfinite(v) for v in (a, b, c)):
        with np.errstate(all="ignore"):
            return float(np.float64(a) * np.float64(b) + np.float64(c))
    p = mp.fmul(a, b, exact=True)
    v = mp.fadd(p, c, exact=True)
    if v != 0:
        return v
    if p == 0 and c == 0:  # (+-0) + (+-0): -0 only when both are -0
        neg_p = (math.copysign(1, a) < 0) != (math.copysign(1, b) < 0)
        return -0.0 if neg_p and math.copysign(1, c) < 0 else 0.0
    return 0.0  # an exact cancellation rounds to +0


def _uniform(lo, hi):
    return lambda rng, n: rng.uniform(lo, hi, n)


def _positive(rng, n):
    return np.exp(rng.uniform(-80, 80, n))


def _positive64(rng, n):
    return np.exp(rng.uniform(-700, 700, n))


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
    "round": (1, 0, _exact(None), _round64, _uniform(-100, 100)),
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
            _fma64, _uniform(-100, 100)),
}

# where the double table differs from the single one (for these functions): sqrt is correctly rounded
DOUBLE_BOUNDS = {"sqrt": 0}

# double domains where the float one is about float's range
DOUBLE_DOMAINS = {
    "sinh": _uniform(-711, 711), "cosh": _uniform(-711, 711), "exp": _uniform(-746, 710),
    "exp2": _uniform(-1076, 1025), "exp10": _uniform(-324, 309), "expm1": _uniform(-40, 710),
    "log": _positive64, "log2": _positive64, "log10": _positive64, "sqrt": _positive64,
    "rsqrt": _positive64, "logb": _positive64, "tgamma": _uniform(-20, 172), "sin": _uniform(-1e4, 1e4),
    "cos": _uniform(-1e4, 1e4), "pow": _uniform(-40, 40), "hypot": _uniform(-1e200, 1e200),
}


def bound_of(name, ty=FLOAT):
    """The spec's ulp bound of name on ty (0: exact or correctly rounded)."""
    b = FUNCTIONS[name][1]
    return DOUBLE_BOUNDS.get(name, b) if ty is DOUBLE else b


def domain_of(name, ty=FLOAT):
    d = FUNCTIONS[name][4]
    return DOUBLE_DOMAINS.get(name, d) if ty is DOUBLE else d


def mp_raise():
    raise ValueError("special")


# inputs past which the result is 0, +-1, +-2 or +-inf in any precision (float64's answer is exact
# there): mpmath would take seconds on exp(1e300) and friends
_HUGE = {"exp": 2000, "exp2": 2000, "exp10": 2000, "expm1": 2000, "sinh": 2000, "cosh": 2000,
         "erf": 30, "erfc": 30}


def _saturated(name, args):
    lim = _HUGE.get(name)
    if lim is not None:
        return abs(args[0]) > lim
    if name == "tgamma":
        return args[0] > 200
    if name == "pow":  # |x^y| beyond 2^+-4000
        x, y = args
        return x != 0 and abs(y) * abs(math.log2(abs(x))) > 4000
    return False


def _exact_zero(name, args):
    """The signed zero of an exact zero result on finite nonzero inputs (spec: sinpi(-n) = -0,
    tanpi(n) = copysign(0, n) for even n and copysign(0, -n) for odd n; log(1), acos(1),
    cospi(n + 1/2), an exact fma cancellation ... = +0)."""
    x = args[0]
    if name == "sinpi":
        return math.copysign(0.0, x)
    if name == "tanpi":
        return math.copysign(0.0, x if math.fmod(x, 2) == 0 else -x)
    return 0.0


def reference(name, args, ty=FLOAT):
    """The exact value of name(args) as an mpf (ty.prec bits), or a float64 for special cases
    (inf/nan/poles) and for the functions exact in float64 (on double inputs too: floor, fmod...)."""
    arity, _, mpfn, f64, _ = FUNCTIONS[name]
    if all(math.isfinite(a) and a != 0 for a in args) and not hasattr(mpfn, "f64") and \
            not _saturated(name, args):
        try:
            with mp.workprec(ty.prec):
                v = mpfn(*[mp.mpf(a) for a in args])
            if isinstance(v, mpmath.mpf) and mp.isfinite(v):
                return v if v != 0 else _exact_zero(name, args)
        except (ValueError, ZeroDivisionError, OverflowError):  # mpmath's erfc(1e300) overflows
            pass
    return f64(*args)


def ulp_of(exact, ty=FLOAT):
    """ulp(exact) in ty: 2^(e - mant) for 2^e <= |exact| < 2^(e+1), the denormal step below ty.fmin."""
    if isinstance(exact, float):
        a = abs(exact)
        if a < ty.fmin:
            return ty.denorm
        e = math.frexp(a)[1] - 1
    else:
        if abs(exact) < ty.fmin:
            return ty.denorm
        e = int(mp.frexp(exact)[1]) - 1  # of the mpf itself: float() could round it up a binade
    return 2.0 ** (min(e, ty.emax - 1) - ty.mant)


def ulp_error(got, exact, ty=FLOAT):
    """Error of the ty value `got` against `exact` (mpf or float64) in ulps of ty."""
    got = float(got)
    if isinstance(exact, float) and (math.isnan(exact) or math.isinf(exact)):
        if math.isnan(exact):
            return 0.0 if math.isnan(got) else math.inf
        return 0.0 if got == exact else math.inf
    if math.isnan(got):
        return math.inf
    with mp.workprec(ty.prec):
        ex = mp.mpf(exact)
        top = mp.mpf(2) ** ty.emax
        if math.isinf(got):  # an overflow: exact at or past 2^emax rounds to infinity
            if abs(ex) >= top and (ex > 0) == (got > 0):
                return 0.0
            g = top * (1 if got > 0 else -1)
            return float(abs(g - ex) / ulp_of(ex, ty))
        return float(abs(mp.mpf(got) - ex) / ulp_of(ex, ty))


def _flush(x, ty=FLOAT):
    return math.copysign(0.0, x) if x != 0 and abs(x) < ty.fmin and math.isfinite(x) else x


def acceptable(name, got, exact, bound, ty=FLOAT):
    """(ok, error in ulps). A float64 `exact` is representable or special: bound-0 functions and
    zeros must match it exactly (sign of zero included, but for fmin/fmax); an mpf `exact` is
    met within max(bound, 0.5) ulp (a correctly rounded result is within 0.5)."""
    err = ulp_error(got, exact, ty)
    if isinstance(exact, float):
        if math.isnan(exact) or math.isinf(exact):
            return err == 0, err
        if bound == 0 or exact == 0:
            rounded = ty.round(exact)  # correctly rounded: fdim(x, y) is x - y rounded
            same_zero_sign = rounded != 0 or math.copysign(1, got) == math.copysign(1, rounded) or \
                name in ("fmin", "fmax")
            return got == rounded and same_zero_sign, err
        return err <= bound, err
    if bound == 0 and got == 0 and (math.copysign(1, got) < 0) != (exact < 0):
        return False, err  # correctly rounded: a tiny result rounds to the zero of its sign
    return err <= max(bound, 0.5), err


def judge(name, args, got, bound, ftz, ty=FLOAT):
    """(ok, error in ulps, the reference as text) of got = name(*args) computed in ty."""
    exact = reference(name, args, ty)
    ok, err = acceptable(name, got, exact, bound, ty)
    if not ok and ftz:
        if got == 0 and not isinstance(exact, float) and abs(exact) < ty.fmin:
            return True, err, ""
        flushed = [_flush(a, ty) for a in args]
        if flushed != args:
            e2 = reference(name, flushed, ty)
            ok2, _ = acceptable(name, got, e2, bound, ty)
            if ok2 or (got == 0 and math.isfinite(float(e2)) and abs(float(e2)) < ty.fmin):
                return True, err, ""
    digits = 12 if ty is FLOAT else 20
    shown = mpmath.nstr(exact, digits) if not isinstance(exact, float) else repr(exact)
    return ok, err, shown


def inputs(name, env, n, ty=FLOAT):
    """(list of argument tuples) for name: edge values, random bit patterns, the domain."""
    arity = FUNCTIONS[name][0]
    domain = domain_of(name, ty)
    rng = np.random.default_rng(env.seed + sum(map(ord, name)) + (7 if ty is DOUBLE else 0))
    cols = []
    for _ in range(arity):
        if ty is DOUBLE:
            bits = rng.integers(0, 2 ** 63, n // 2, dtype=np.uint64)
            bits |= rng.integers(0, 2, n // 2, dtype=np.uint64) << np.uint64(63)
            bits = bits.view(np.float64)
        else:
            bits = rng.integers(0, 2 ** 32, n // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)
        dom = np.asarray(domain(rng, n - n // 2), dtype=ty.dtype)
        col = np.concatenate([bits, dom])
        rng.shuffle(col)
        cols.append([float(x) for x in col if math.isfinite(float(x))])
    m = min(len(c) for c in cols)
    cases = [tuple(c[i] for c in cols) for i in range(m)]
    edges = [ty.round(e) for e in ty.edges]
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


def kernel_source(names, ty=FLOAT):
    out = ["#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"] if ty is DOUBLE else []
    T = ty.name
    for name in names:
        args = SIGNATURES[FUNCTIONS[name][0]]
        out.append(f"__kernel void m_{name}{ty.suffix}(__global const {T} *x, __global const {T} *y, "
                   f"__global const {T} *z, __global {T} *o)\n"
                   f"{{ size_t i = get_global_id(0); o[i] = {name}({args}); }}\n")
    return "".join(out)


def _kernel(env, t, name, ty=FLOAT):
    """The kernel m_<name>, from one program of every function when it builds, else alone."""
    cache = env.__dict__.setdefault("_math_cache", {})
    if ty.name not in cache:
        from .framework import T
        keeper = T()  # programs live for the whole run: released by no check
        try:
            cache[ty.name] = env.program(keeper, kernel_source(list(FUNCTIONS), ty), "")
        except Exception:
            cache[ty.name] = None
    prog = cache[ty.name] or env.program(t, kernel_source([name], ty), "")
    return env.kernel(t, prog, f"m_{name}{ty.suffix}")


def has_fp64(env):
    return "cl_khr_fp64" in env.extensions


def run_function(env, t, name, ty=FLOAT):
    if ty is DOUBLE and not has_fp64(env):
        t.skip("the device does not report cl_khr_fp64")
    arity = FUNCTIONS[name][0]
    bound = bound_of(name, ty)
    n = env.samples(256, 4096)
    cases = inputs(name, env, n, ty)
    k = _kernel(env, t, name, ty)
    m = len(cases)
    cols = [np.array([c[j] if j < arity else 0.0 for c in cases], dtype=ty.dtype) for j in range(3)]
    bufs = []
    import ctypes
    for col in cols:
        host = ctypes.create_string_buffer(col.tobytes(), col.nbytes)
        bufs.append(env.buffer(t, col.nbytes, C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, host))
    size = np.dtype(ty.dtype).itemsize
    out = env.buffer(t, size * m)
    env.set_args(t, k, *[("mem", b) for b in bufs], ("mem", out))
    env.enqueue(t, k, (m,))
    got = np.frombuffer(env.read(t, out, size * m), dtype=ty.dtype)
    ftz = not env.device_info(ty.config, "ulong") & C.CL_FP_DENORM
    return check_results(t, name, cases, got, bound, ftz, ty)


def check_results(t, name, cases, got, bound, ftz=False, ty=FLOAT):
    """Judge every result; report the worst few with their inputs. Returns the max error seen."""
    bad = []
    worst = 0.0
    for args, g in zip(cases, got):
        args = [ty.round(a) for a in args]
        ok, err, ref = judge(name, args, float(g), bound, ftz, ty)
        if not ok:
            bad.append((err, args, float(g), ref))
        elif math.isfinite(err):
            worst = max(worst, err)
    bad.sort(key=lambda b: -b[0] if math.isfinite(b[0]) else -1e300)
    label = name if ty is FLOAT else f"{name} ({ty.name})"
    for err, args, g, ref in bad[:4]:
        a = ", ".join(repr(x) for x in args)
        t.true(False, f"{label}({a}) = {g!r} ({g.hex()}); reference {ref}; error "
                      f"{'inf' if math.isinf(err) else f'{err:.2f}'} ulp, {bound} allowed")
    if len(bad) > 4:
        t.true(False, f"{label}: {len(bad)} of {len(cases)} results out of bounds")
    if not bad:
        t.note(f"max error {worst:.2f} ulp of {bound}")
    return worst


def _make(name, ty):
    def fn(env, t):
        run_function(env, t, name, ty)
    fn.__doc__ = f"{name} on {ty.name}: within {bound_of(name, ty)} ulp on edge values and sampled inputs"
    return fn


for _ty in (FLOAT, DOUBLE):
    for _name in FUNCTIONS:
        CATEGORY.check(_make(_name, _ty), name=_name + _ty.suffix)
