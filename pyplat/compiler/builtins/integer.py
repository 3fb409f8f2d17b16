"""Integer functions (OpenCL C spec, "Integer Functions"). min, max and clamp, which the spec
lists both here and among the common functions, are lowered for both in common.py."""
from llvmlite import ir

from .. import types as T
from .helpers import I1, elem, fconst, intr, shaped, shaped_arg, suffix
from .registry import builtin


@builtin("abs")
def abs_(g, n, name):
    b = g.b
    k = n.kids[0]
    x = g.rv(k)
    if elem(k.type).signed:
        x = b.select(b.icmp_signed("<", x, fconst(k.type, 0)), b.neg(x), x)
    return x


@builtin("abs_diff")
def abs_diff(g, n, name):
    b = g.b
    x, y = (g.rv(k) for k in n.kids)
    e = elem(n.kids[0].type)
    gt = b.icmp_signed(">", x, y) if e.signed else b.icmp_unsigned(">", x, y)
    return b.select(gt, b.sub(x, y), b.sub(y, x))


@builtin("popcount", "clz", "ctz")
def bit_count(g, n, name):
    t = n.type
    (x,) = shaped(g, n)
    if name == "popcount":
        return intr(g, "ctpop", t, [x])
    fn = g.mg.intrinsic("llvm.%s.%s" % ("ctlz" if name == "clz" else "cttz", suffix(t)), t.llvm(),
                        [t.llvm(), I1])
    return g.b.call(fn, [x, I1(0)])


@builtin("rotate")
def rotate(g, n, name):
    x, c = shaped(g, n)
    return intr(g, "fshl", n.type, [x, x, c])


@builtin("add_sat", "sub_sat")
def add_sub_sat(g, n, name):
    t = n.type
    a, c = shaped(g, n)
    return intr(g, ("s" if elem(t).signed else "u") + name[:3] + ".sat", t, [a, c])


@builtin("mul24", "mad24")
def mul24_mad24(g, n, name):
    b = g.b
    args = shaped(g, n)
    r = b.mul(args[0], args[1])
    return b.add(r, args[2]) if name == "mad24" else r


@builtin("hadd", "rhadd")
def hadd_rhadd(g, n, name):
    b = g.b
    t = n.type
    a, c = shaped(g, n)
    one = fconst(t, 1)
    sh = (lambda v: b.ashr(v, one)) if elem(t).signed else (lambda v: b.lshr(v, one))
    low = b.and_(b.and_(a, c) if name == "hadd" else b.or_(a, c), one)
    return b.add(b.add(sh(a), sh(c)), low)


def mul_hi_of(g, a, c, t):
    """The high half of the product a*c of type t (in twice the width; 128 bits for 64)."""
    b = g.b
    e = elem(t)
    wt = T.vector((T.INT_OF_BITS if e.signed else T.UINT_OF_BITS)[e.bits * 2], t.count) \
        if e.bits < 64 else None
    if wt is None:
        w = ir.IntType(128) if not t.is_vector else ir.VectorType(ir.IntType(128), t.count)
        ext = b.sext if e.signed else b.zext
        p = b.mul(ext(a, w), ext(c, w))
        sh = ir.Constant(w, 64) if not t.is_vector else ir.Constant(w, [64] * t.count)
        return b.trunc(b.lshr(p, sh), t.llvm())
    p = b.mul(g.convert(a, t, wt), g.convert(c, t, wt))
    return g.convert(b.lshr(p, fconst(wt, e.bits)), wt, t)


@builtin("mul_hi")
def mul_hi(g, n, name):
    a, c = shaped(g, n)
    return mul_hi_of(g, a, c, n.type)


@builtin("mad_hi")
def mad_hi(g, n, name):
    t = n.type
    a, c = (shaped_arg(g, k, t, n) for k in n.kids[:2])
    hi = mul_hi_of(g, a, c, t)
    return g.b.add(hi, shaped_arg(g, n.kids[2], t, n))


@builtin("mad_sat")
def mad_sat(g, n, name):
    b = g.b
    t = n.type
    x, y, z = shaped(g, n)
    e = elem(t)
    if e.bits < 64:
        wt = T.vector((T.INT_OF_BITS if e.signed else T.UINT_OF_BITS)[e.bits * 2], t.count) \
            if t.is_vector else (T.INT_OF_BITS if e.signed else T.UINT_OF_BITS)[e.bits * 2]
        w = b.add(b.mul(g.convert(x, t, wt), g.convert(y, t, wt)), g.convert(z, t, wt))
        lo = -(1 << (e.bits - 1)) if e.signed else 0
        hi = (1 << (e.bits - 1)) - 1 if e.signed else (1 << e.bits) - 1
        if e.signed:
            w = b.select(b.icmp_signed("<", w, fconst(wt, lo)), fconst(wt, lo), w)
            w = b.select(b.icmp_signed(">", w, fconst(wt, hi)), fconst(wt, hi), w)
        else:
            w = b.select(b.icmp_unsigned(">", w, fconst(wt, hi)), fconst(wt, hi), w)
        return g.convert(w, wt, t)
    # 64-bit: in 128 bits (a saturated product plus z may come back in range), then clamp
    w = ir.IntType(128) if not t.is_vector else ir.VectorType(ir.IntType(128), t.count)
    ext = b.sext if e.signed else b.zext
    r = b.add(b.mul(ext(x, w), ext(y, w)), ext(z, w))
    wc = lambda v: ir.Constant(w, v) if not t.is_vector else ir.Constant(w, [v] * t.count)  # noqa: E731
    lo, hi = (-(1 << 63), (1 << 63) - 1) if e.signed else (0, (1 << 64) - 1)
    if e.signed:
        r = b.select(b.icmp_signed("<", r, wc(lo)), wc(lo), r)
    r = b.select((b.icmp_signed if e.signed else b.icmp_unsigned)(">", r, wc(hi)), wc(hi), r)
    return b.trunc(r, t.llvm())


@builtin("upsample")
def upsample(g, n, name):
    b = g.b
    t = n.type
    hi, lo = (g.rv(k) for k in n.kids)
    s = n.kids[0].type
    hi_w = g.convert(hi, s, t)
    lt = n.kids[1].type
    lo_w = g.convert(lo, lt, T.vector(T.UINT_OF_BITS[elem(t).bits], t.count) if t.is_vector
                     else T.UINT_OF_BITS[elem(t).bits])
    return b.or_(b.shl(hi_w, fconst(t, elem(s).bits)), lo_w)
