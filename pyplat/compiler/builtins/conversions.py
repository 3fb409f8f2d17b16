"""Explicit conversions (OpenCL C spec, "Explicit Conversions"): convert_<type>[_sat][_rte|_rtz|
_rtp|_rtn]. as_<type> reinterpretations are not builtins here: the header marks them and the
front end lowers them as a bit cast."""
from .. import types as T
from .helpers import elem, fconst, intr
from .registry import family

ROUNDING_INTRINSIC = {"rte": "rint", "rtp": "ceil", "rtn": "floor"}   # float -> integer


def directed_float(g, v, s, t, mode):
    """convert_<float type>_rtz/_rtp/_rtn: convert to nearest, compare the result with the exact
    source, then step one ulp (the next float, via the bits) toward the source where the mode
    says; the nearest value is always the directed result or its neighbour on the source's side."""
    b = g.b
    se, te = elem(s), elem(t)
    r = g.convert(v, s, t)
    mant = 24 if te.bits == 32 else 53
    if (se.is_float and se.bits <= te.bits) or (se.is_int and se.bits - (1 if se.signed else 0) <= mant):
        return r  # exact
    it = T.vector(T.INT_OF_BITS[te.bits], t.count) if t.is_vector else T.INT_OF_BITS[te.bits]
    if se.is_float:
        back = g.convert(r, t, s)
        gt, lt = b.fcmp_ordered(">", back, v), b.fcmp_ordered("<", back, v)
        xneg = b.fcmp_ordered("<", v, fconst(s, 0.0))
    else:
        big = b.fcmp_ordered(">=", r, fconst(t, 2.0 ** (se.bits - (1 if se.signed else 0))))
        ri = g.convert(b.select(big, fconst(t, 0.0), r), t, s)
        cmp = b.icmp_signed if se.signed else b.icmp_unsigned
        gt = b.or_(big, cmp(">", ri, v))
        lt = b.and_(b.not_(big), cmp("<", ri, v))
        xneg = b.icmp_signed("<", v, fconst(s, 0)) if se.signed else None
    if mode == "rtp":
        up, down = lt, None
    elif mode == "rtn":
        up, down = None, gt
    else:  # rtz: toward zero
        up = b.and_(lt, xneg) if xneg is not None else None
        down = b.and_(gt, b.not_(xneg)) if xneg is not None else gt
    bits = b.bitcast(r, it.llvm())
    neg = b.icmp_signed("<", bits, fconst(it, 0))
    one, minus, zero = fconst(it, 1), fconst(it, -1), fconst(it, 0)
    delta = zero
    if down is not None:  # toward -inf: a smaller magnitude when positive, larger when negative
        delta = b.select(down, b.select(neg, one, minus), delta)
    if up is not None:
        delta = b.select(up, b.select(neg, minus, one), delta)
    return b.bitcast(b.add(bits, delta), t.llvm())


@family(r"convert_\w+")
def convert(g, n, name):
    parts = name[len("convert_"):].split("_")
    sat = "sat" in parts
    rnd = [p for p in parts if p.startswith("rt")]
    k = n.kids[0]
    v = g.rv(k)
    s, t = k.type, n.type
    b = g.b
    se, te = elem(s), elem(t)
    if se.is_float and te.is_int and rnd and rnd[0] != "rtz":
        v = intr(g, ROUNDING_INTRINSIC[rnd[0]], s, [v])
    if te.is_float and rnd and rnd[0] != "rte":
        return directed_float(g, v, s, t, rnd[0])
    if not sat or te.is_float:
        return g.convert(v, s, t, n)
    tmin = -(1 << (te.bits - 1)) if te.signed else 0
    tmax = (1 << (te.bits - 1)) - 1 if te.signed else (1 << te.bits) - 1
    if se.is_float:
        r = g.convert(v, s, t, n)
        lo = b.fcmp_ordered("<", v, fconst(s, float(tmin)))
        hi = b.fcmp_ordered(">=", v, fconst(s, float(tmax + 1)))
        r = b.select(lo, fconst(t, tmin), r)
        r = b.select(hi, fconst(t, tmax), r)
        nan = b.fcmp_unordered("uno", v, v)
        return b.select(nan, fconst(t, 0), r)
    smin = -(1 << (se.bits - 1)) if se.signed else 0
    smax = (1 << (se.bits - 1)) - 1 if se.signed else (1 << se.bits) - 1
    lo, hi = max(tmin, smin), min(tmax, smax)
    if lo > smin:
        c = b.icmp_signed("<", v, fconst(s, lo)) if se.signed else b.icmp_unsigned("<", v, fconst(s, lo))
        v = b.select(c, fconst(s, lo), v)
    if hi < smax:
        c = b.icmp_signed(">", v, fconst(s, hi)) if se.signed else b.icmp_unsigned(">", v, fconst(s, hi))
        v = b.select(c, fconst(s, hi), v)
    return g.convert(v, s, t, n)
