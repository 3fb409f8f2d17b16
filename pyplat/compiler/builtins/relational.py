"""Relational functions (OpenCL C spec, "Relational Functions"): results are 1/0 for scalars and
-1/0 (all bits set) for vectors."""
from llvmlite import ir

from .. import types as T
from .helpers import I32, cmp_result, elem, fconst, intr, shaped
from .registry import builtin

# name -> LLVM fcmp condition (isnotequal is true for unordered operands, the others false)
COMPARISONS = {"isequal": "==", "isnotequal": "!=", "isgreater": ">", "isgreaterequal": ">=",
               "isless": "<", "islessequal": "<="}


@builtin("isnan", "isinf", "isfinite", "isnormal", "signbit")
def classify(g, n, name):
    b = g.b
    k = n.kids[0]
    x = g.rv(k)
    s = k.type
    e = elem(s)
    inf = fconst(s, float("inf"))
    if name == "isnan":
        r = b.fcmp_unordered("uno", x, x)
    elif name == "isinf":
        r = b.fcmp_ordered("==", intr(g, "fabs", s, [x]), inf)
    elif name == "isfinite":
        r = b.fcmp_ordered("<", intr(g, "fabs", s, [x]), inf)
    elif name == "isnormal":
        ax = intr(g, "fabs", s, [x])
        tiny = 2.0 ** -126 if e.bits == 32 else 2.0 ** -1022
        r = b.and_(b.fcmp_ordered("<", ax, inf), b.fcmp_ordered(">=", ax, fconst(s, tiny)))
    else:
        it = T.vector(T.INT_OF_BITS[e.bits], s.count) if s.is_vector else T.INT_OF_BITS[e.bits]
        r = b.icmp_signed("<", b.bitcast(x, it.llvm()), fconst(it, 0))
    return cmp_result(g, r, n.type)


@builtin(*COMPARISONS, "islessgreater", "isordered", "isunordered")
def compare(g, n, name):
    b = g.b
    a, c = g.rv(n.kids[0]), g.rv(n.kids[1])
    if name in COMPARISONS:
        op = COMPARISONS[name]
        r = b.fcmp_unordered(op, a, c) if op == "!=" else b.fcmp_ordered(op, a, c)
    elif name == "islessgreater":
        r = b.fcmp_ordered("!=", a, c)
    elif name == "isordered":
        r = b.fcmp_ordered("ord", a, c)
    else:
        r = b.fcmp_unordered("uno", a, c)
    return cmp_result(g, r, n.type)


@builtin("any", "all")
def any_all(g, n, name):
    """Test the most significant bit of each element."""
    b = g.b
    k = n.kids[0]
    x = g.rv(k)
    neg = b.icmp_signed("<", x, ir.Constant(x.type, None))
    if not k.type.is_vector:
        return b.zext(neg, I32)
    r = b.extract_element(neg, I32(0))
    for i in range(1, k.type.count):
        e = b.extract_element(neg, I32(i))
        r = b.or_(r, e) if name == "any" else b.and_(r, e)
    return b.zext(r, I32)


@builtin("select")
def select(g, n, name):
    """select(a, b, c): c's most significant bit per element for vectors, c != 0 for scalars."""
    b = g.b
    a, c = shaped(g, n)[:2]
    kc = n.kids[2]
    m = g.rv(kc)
    if kc.type.is_vector:
        cond = b.icmp_signed("<", m, ir.Constant(m.type, None))
    else:
        cond = g.truth(m, kc.type)
    return b.select(cond, c, a)


@builtin("bitselect")
def bitselect(g, n, name):
    b = g.b
    t = n.type
    a, c, m = shaped(g, n)
    e = elem(t)
    if e.is_float:
        it = T.vector(T.INT_OF_BITS[e.bits], t.count) if t.is_vector else T.INT_OF_BITS[e.bits]
        a, c, m = (b.bitcast(v, it.llvm()) for v in (a, c, m))
        return b.bitcast(b.or_(b.and_(a, b.not_(m)), b.and_(c, m)), t.llvm())
    return b.or_(b.and_(a, b.not_(m)), b.and_(c, m))
