"""clang's own `__builtin_*` functions that its OpenCL mode accepts and real kernels use (the
OpenCL C spec does not list them): branch hints, type-generic classification, bit counts, byte
swaps and the C math library's `__builtin_<fn>[f]`, lowered like the OpenCL builtin of the same
meaning. Others (`__builtin_trap`, `__builtin_memcpy`, ...) stay a clear build-log error
(registry.lower)."""
import re

from llvmlite import ir

from .helpers import I1, const_value, suffix
from .registry import REGISTRY, builtin, family
from . import relational

# C math functions clang knows as __builtin_<name> and __builtin_<name>f, with an OpenCL builtin
# of the same name and meaning (registered by math.py)
C_MATH = ("sqrt", "fabs", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
          "asinh", "acosh", "atanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logb",
          "pow", "fmod", "remainder", "remquo", "hypot", "cbrt", "erf", "erfc", "tgamma", "lgamma",
          "floor", "ceil", "round", "trunc", "rint", "fmin", "fmax", "fdim", "fma", "copysign",
          "nextafter", "frexp", "ldexp", "ilogb", "modf")


@builtin("__builtin_expect", "__builtin_expect_with_probability")
def expect(g, n, name):
    """A branch hint: the value of its first argument."""
    k = n.kids[0]
    v = g.rv(k)
    return v if k.type == n.type else g.convert(v, k.type, n.type, n)


@builtin("__builtin_assume", "__builtin_unreachable", "__builtin_prefetch")
def assumption(g, n, name):
    """Promises and hints to the optimiser; nothing to do (the argument of __builtin_assume is never
    evaluated, as in C)."""
    return None


@builtin("__builtin_constant_p")
def constant_p(g, n, name):
    return ir.Constant(n.type.llvm(), 1 if const_value(n.kids[0]) is not None else 0)


@builtin("__builtin_isnan", "__builtin_isinf", "__builtin_isfinite", "__builtin_isnormal",
         "__builtin_signbit", "__builtin_signbitf")
def classify(g, n, name):
    """clang's type-generic classification: 1/0 like OpenCL's scalar forms."""
    base = name[len("__builtin_"):]
    return relational.classify(g, n, "signbit" if base == "signbitf" else base)


_BITS = re.compile(r"__builtin_(popcount|clz|ctz)(l|ll)?")


@family(_BITS.pattern)
def bit_count(g, n, name):
    """__builtin_popcount/clz/ctz[l|ll] of an unsigned argument, an int result (clz and ctz of 0
    give the width, where C leaves them undefined)."""
    what = _BITS.fullmatch(name).group(1)
    k = n.kids[0]
    x = g.rv(k)
    t = k.type
    if what == "popcount":
        r = g.b.call(g.mg.intrinsic("llvm.ctpop." + suffix(t), t.llvm(), [t.llvm()]), [x])
    else:
        fn = g.mg.intrinsic("llvm.%s.%s" % ("ctlz" if what == "clz" else "cttz", suffix(t)), t.llvm(),
                            [t.llvm(), I1])
        r = g.b.call(fn, [x, I1(0)])
    return g.convert(r, t, n.type, n)


@builtin("__builtin_bswap16", "__builtin_bswap32", "__builtin_bswap64")
def bswap(g, n, name):
    k = n.kids[0]
    t = k.type
    r = g.b.call(g.mg.intrinsic("llvm.bswap." + suffix(t), t.llvm(), [t.llvm()]), [g.rv(k)])
    return r if t == n.type else g.convert(r, t, n.type, n)


_MATH = re.compile(r"__builtin_(%s)f?" % "|".join(C_MATH))


@family(_MATH.pattern)
def c_math(g, n, name):
    """__builtin_sqrtf(x) is sqrt(x) of its (float) argument."""
    base = _MATH.fullmatch(name).group(1)
    return REGISTRY.find(base).lower(g, n, base)
