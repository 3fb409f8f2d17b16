"""Geometric functions (OpenCL C spec, "Geometric Functions") written in Python: dot, length,
distance, normalize and their fast_ variants (same code). cross is OpenCL C:
kernels/builtins/geometric.cl."""
from .helpers import I32, elem, fconst, intr
from .registry import builtin


def dot(g, a, c, t):
    b = g.b
    m = g.fm(b.fmul(a, c))
    if not t.is_vector:
        return m
    s = b.extract_element(m, I32(0))
    for i in range(1, t.count):
        s = g.fm(b.fadd(s, b.extract_element(m, I32(i))))
    return s


def scaled(g, a, vt):
    """(a * s, 1 / s) for a power of two s that keeps the sum of squares of a clear of overflow
    and underflow: length/normalize of very large or very small components stay accurate."""
    b = g.b
    e = elem(vt)
    m = intr(g, "fabs", vt, [a])
    if vt.is_vector:
        ax = m
        m = b.extract_element(ax, I32(0))
        for i in range(1, vt.count):
            m = intr(g, "maxnum", e, [m, b.extract_element(ax, I32(i))])
    hi, down, up = (62, -80, 100) if e.bits == 32 else (500, -600, 600)
    big = b.fcmp_ordered(">", m, fconst(e, 2.0 ** hi))
    small = b.fcmp_ordered("<", m, fconst(e, 2.0 ** -hi))
    s = b.select(big, fconst(e, 2.0 ** down), b.select(small, fconst(e, 2.0 ** up), fconst(e, 1.0)))
    inv = b.select(big, fconst(e, 2.0 ** -down), b.select(small, fconst(e, 2.0 ** -up), fconst(e, 1.0)))
    return b.fmul(a, g.convert(s, e, vt) if vt.is_vector else s), inv


@builtin("dot")
def dot_product(g, n, name):
    a, c = g.rv(n.kids[0]), g.rv(n.kids[1])
    return dot(g, a, c, n.kids[0].type)


@builtin("length", "distance", "fast_length", "fast_distance")
def length(g, n, name):
    b = g.b
    vt = n.kids[0].type
    a = g.rv(n.kids[0])
    if name.endswith("distance"):
        a = g.fm(b.fsub(a, g.rv(n.kids[1])))
    q, inv = scaled(g, a, vt)
    return b.fmul(intr(g, "sqrt", elem(vt), [dot(g, q, q, vt)]), inv)


@builtin("normalize", "fast_normalize")
def normalize(g, n, name):
    b = g.b
    vt = n.kids[0].type
    e = elem(vt)
    a = g.rv(n.kids[0])
    # infinite elements count as +-1 and the others as +-0 (OpenCL C spec)
    isinf = b.fcmp_ordered("==", intr(g, "fabs", vt, [a]), fconst(vt, float("inf")))
    anyinf = isinf
    if vt.is_vector:
        anyinf = b.extract_element(isinf, I32(0))
        for i in range(1, vt.count):
            anyinf = b.or_(anyinf, b.extract_element(isinf, I32(i)))
    fixed = b.select(isinf, intr(g, "copysign", vt, [fconst(vt, 1.0), a]), b.fmul(a, fconst(vt, 0.0)))
    a2 = b.select(anyinf, fixed, a)
    q, inv = scaled(g, a2, vt)
    ln = intr(g, "sqrt", e, [dot(g, q, q, vt)])
    splat = (lambda x: g.convert(x, e, vt)) if vt.is_vector else (lambda x: x)
    r = g.fm(b.fdiv(q, splat(ln)))
    # scaled down (huge components): the small components of q may have lost bits to
    # subnormals; divide the unscaled ones instead and scale the quotient (one late rounding)
    r_down = b.fdiv(g.fm(b.fdiv(a2, splat(ln))), splat(inv))
    r = b.select(b.fcmp_ordered(">", inv, fconst(e, 1.0)), r_down, r)
    return b.select(b.fcmp_ordered("==", ln, fconst(e, 0.0)), a2, r)
