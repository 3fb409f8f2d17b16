"""Common functions (OpenCL C spec, "Common Functions") written in Python: min, max and clamp,
for floating-point and integer types alike (the spec's integer min/max/clamp share the names).
mix, step, smoothstep, sign, degrees and radians are OpenCL C: kernels/builtins/common.cl."""
from .helpers import elem, intr, shaped
from .registry import builtin


def min_max(g, a, c, t, is_max):
    """min/max of a and c of type t: minnum/maxnum for floats (a NaN operand yields the other),
    a signed or unsigned comparison for integers."""
    e = elem(t)
    if e.is_float:
        return intr(g, "maxnum" if is_max else "minnum", t, [a, c])
    op = ">" if is_max else "<"
    cmp = g.b.icmp_signed(op, a, c) if e.signed else g.b.icmp_unsigned(op, a, c)
    return g.b.select(cmp, a, c)


@builtin("min", "max")
def min_or_max(g, n, name):
    a, c = shaped(g, n)
    return min_max(g, a, c, n.type, name == "max")


@builtin("clamp")
def clamp(g, n, name):
    t = n.type
    x, lo, hi = shaped(g, n)
    return min_max(g, min_max(g, x, lo, t, True), hi, t, False)
