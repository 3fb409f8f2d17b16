"""Math functions (OpenCL C spec, "Math Functions"): LLVM intrinsics where they exist, libm
otherwise (per element for vectors; jit.py gives the JIT libm's addresses), and the functions
the spec defines more tightly than libm computed in double and rounded once."""
import math

from llvmlite import ir

from .. import types as T
from .helpers import F32, F64, I32, cfun, elem, fconst, intr, libm, per_element, shaped, shaped_arg, store_out
from .registry import builtin

INTRINSIC_1 = {"sqrt": "sqrt", "fabs": "fabs", "sin": "sin", "cos": "cos", "exp": "exp", "exp2": "exp2",
               "log": "log", "log2": "log2", "log10": "log10", "floor": "floor", "ceil": "ceil",
               "round": "round", "trunc": "trunc", "rint": "rint"}
INTRINSIC_2 = {"pow": "pow", "fmin": "minnum", "fmax": "maxnum", "copysign": "copysign"}
LIBM = ("tan", "atan", "tanh", "asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh",
        "expm1", "log1p", "erf", "erfc", "tgamma", "lgamma", "exp10", "logb",
        "atan2", "hypot", "nextafter", "fdim", "remainder")


@builtin("__builtin_inff", "__builtin_inf", "__builtin_huge_valf", "__builtin_huge_val")
def infinity(g, n, name):
    return fconst(n.type, float("inf"))  # INFINITY, HUGE_VALF (pyplat_opencl.h)


@builtin("__builtin_nanf", "__builtin_nan")
def quiet_nan(g, n, name):
    return fconst(n.type, float("nan"))  # NAN


@builtin(*INTRINSIC_1)
def intrinsic_1(g, n, name):
    return intr(g, INTRINSIC_1[name], n.type, shaped(g, n))


@builtin(*INTRINSIC_2)
def intrinsic_2(g, n, name):
    return intr(g, INTRINSIC_2[name], n.type, shaped(g, n))


@builtin(*LIBM)
def libm_function(g, n, name):
    return libm(g, name, n.type, shaped(g, n))


@builtin("fmod")
def fmod(g, n, name):
    a, c = shaped(g, n)
    return g.mg.float_remainder(g, a, c, n.type)


@builtin("rsqrt")
def rsqrt(g, n, name):
    (a,) = shaped(g, n)
    t = n.type
    return g.fm(g.b.fdiv(fconst(t, 1.0), intr(g, "sqrt", t, [a])))


@builtin("recip")
def recip(g, n, name):
    (a,) = shaped(g, n)
    return g.fm(g.b.fdiv(fconst(n.type, 1.0), a))


@builtin("divide")
def divide(g, n, name):
    a, c = shaped(g, n)
    return g.fm(g.b.fdiv(a, c))


@builtin("fma", "mad")
def fma(g, n, name):
    return intr(g, "fma" if name == "fma" else "fmuladd", n.type, shaped(g, n))


@builtin("cbrt")
def cbrt(g, n, name):
    t = n.type
    if elem(t).bits != 64:
        return libm(g, name, t, shaped(g, n))
    b = g.b
    (xv,) = shaped(g, n)
    cb = cfun(g, "cbrt", F64, [F64])
    fma = g.mg.intrinsic("llvm.fma.f64", F64, [F64, F64, F64])
    c = lambda v: ir.Constant(F64, v)  # noqa: E731

    def one_cbrt(x):
        # glibc's cbrt is off by up to ~3 ulp (the spec allows 2): one Newton step y - r/(3y^2)
        # on the residual r = y^3 - x taken in double-double; x scaled by 2^(-+900) (y by
        # 2^(-+300), exactly) where y^3 would overflow or lose bits as a denormal
        ax = intr(g, "fabs", T.DOUBLE, [x])
        small = b.fcmp_ordered("<", ax, c(2.0 ** -900))
        large = b.fcmp_ordered(">", ax, c(2.0 ** 900))
        sc = b.select(small, c(2.0 ** 900), b.select(large, c(2.0 ** -900), c(1.0)))
        back = b.select(small, c(2.0 ** -300), b.select(large, c(2.0 ** 300), c(1.0)))
        xs = b.fmul(x, sc)
        y = b.call(cb, [xs])
        y2 = b.fmul(y, y)
        y2l = b.call(fma, [y, y, b.fneg(y2)])
        y3 = b.fmul(y2, y)
        y3l = b.fadd(b.call(fma, [y2, y, b.fneg(y3)]), b.fmul(y2l, y))
        r = b.fadd(b.fsub(y3, xs), y3l)
        yn = b.fsub(y, b.fdiv(r, b.fmul(c(3.0), y2)))
        ok = b.and_(b.fcmp_ordered(">", ax, c(0.0)), b.fcmp_ordered("<", ax, c(math.inf)))
        return b.fmul(b.select(ok, yn, y), back)
    return per_element(g, t, one_cbrt, xv)


# ------------------------------------------------------------------ with an out parameter
@builtin("sincos")
def sincos(g, n, name):
    t = n.type
    x = g.rv(n.kids[0])
    s = intr(g, "sin", t, [x])
    c = intr(g, "cos", t, [x])
    store_out(g, n.kids[1], c, t)
    return s


@builtin("fract")
def fract(g, n, name):
    b = g.b
    t = n.type
    x = g.rv(n.kids[0])
    fl = intr(g, "floor", t, [x])
    below_one = float.fromhex('0x1.fffffep-1') if elem(t).bits == 32 else float.fromhex('0x1.fffffffffffffp-1')
    r = intr(g, "minnum", t, [b.fsub(x, fl), fconst(t, below_one)])
    ax = intr(g, "fabs", t, [x])
    r = b.select(b.fcmp_ordered("==", ax, fconst(t, math.inf)), intr(g, "copysign", t, [fconst(t, 0.0), x]), r)
    r = b.select(b.fcmp_ordered("==", x, fconst(t, 0.0)), x, r)
    r = b.select(b.fcmp_unordered("uno", x, x), x, r)
    store_out(g, n.kids[1], fl, t)
    return r


@builtin("modf")
def modf(g, n, name):
    b = g.b
    t = n.type
    x = g.rv(n.kids[0])
    ip = intr(g, "trunc", t, [x])
    ax = intr(g, "fabs", t, [x])
    fr = b.select(b.fcmp_ordered("==", ax, fconst(t, math.inf)), fconst(t, 0.0), b.fsub(x, ip))
    fr = intr(g, "copysign", t, [fr, x])
    store_out(g, n.kids[1], ip, t)
    return fr


def libm_out(g, base, t, xs, out_t):
    """Call libm `base` (f for float) that writes an int through its last argument, per element.
    Returns (result vector/scalar, int results as a value of out_t)."""
    e = elem(t)
    b = g.b
    cname = base + ("f" if e.bits == 32 else "")
    if base == "lgamma_r":
        cname = "lgammaf_r" if e.bits == 32 else "lgamma_r"
    fn = cfun(g, cname, e.llvm(), [e.llvm()] * len(xs) + [T.PTR_LL])
    tmp = g.alloca(T.INT)
    res, ints = [], []
    count = t.count if t.is_vector else 1
    for i in range(count):
        args = [b.extract_element(x, I32(i)) if t.is_vector else x for x in xs]
        res.append(b.call(fn, args + [tmp]))
        ints.append(b.load(tmp, typ=I32, align=4))
    if not t.is_vector:
        return res[0], ints[0]
    rv = ir.Constant(t.llvm(), ir.Undefined)
    iv = ir.Constant(out_t.llvm(), ir.Undefined)
    for i in range(count):
        rv = b.insert_element(rv, res[i], I32(i))
        iv = b.insert_element(iv, ints[i], I32(i))
    return rv, iv


@builtin("frexp", "lgamma_r")
def frexp_lgamma_r(g, n, name):
    x = g.rv(n.kids[0])
    it = n.kids[1].type.pointee
    r, iv = libm_out(g, name, n.type, [x], it)
    store_out(g, n.kids[1], iv, it)
    return r


def signbit(g, t, x):
    """i1 (vector) of x's sign bits (also of -0 and NaNs)."""
    e = elem(t)
    it = ir.IntType(e.bits)
    ity = ir.VectorType(it, t.count) if t.is_vector else it
    return g.b.icmp_signed("<", g.b.bitcast(x, ity), ir.Constant(ity, None))


@builtin("remquo")
def remquo(g, n, name):
    """remainder(x, y) and the sign of x/y with the 7 low bits of the integral quotient (the
    spec's minimum; libm gives 3). The quotient modulo 128 is that of |x| mod 128|y| (exact, as
    fmod always is) divided by |y|: no overflow or loss for any exponent difference."""
    b = g.b
    t = n.type
    kids = n.kids
    x, y = shaped_arg(g, kids[0], t, n), shaped_arg(g, kids[1], t, n)
    it = kids[2].type.pointee
    e = elem(t)
    ax, ay = intr(g, "fabs", t, [x]), intr(g, "fabs", t, [y])
    fmax = float.fromhex("0x1.fffffep+127") if e.bits == 32 else float.fromhex("0x1.fffffffffffffp+1023")
    # 128|y| overflows only where |x| / |y| < 128 already
    big = b.fcmp_ordered(">", ay, fconst(t, fmax / 128))
    m = b.select(big, ax, g.mg.float_remainder(g, ax, b.fmul(ay, fconst(t, 128.0)), t))
    f = g.mg.float_remainder(g, m, ay, t)                # fmod(|x|, |y|), exact
    k = intr(g, "rint", t, [b.fdiv(b.fsub(m, f), ay)])   # trunc(|x| / |y|) mod 128, exactly
    ok = b.fcmp_ordered("ord", f, f)
    k = b.select(ok, k, fconst(t, 0.0))
    ki = b.fptosi(k, it.llvm())
    one = fconst(it, 1)
    odd = b.icmp_unsigned("!=", b.and_(ki, one), fconst(it, 0))
    rest = b.fsub(ay, f)
    up = b.or_(b.fcmp_ordered(">", f, rest), b.and_(b.fcmp_ordered("==", f, rest), odd))
    r = b.select(up, b.fsub(f, ay), f)
    r = b.fmul(intr(g, "copysign", t, [fconst(t, 1.0), x]), r)   # the sign of x, also on 0
    q = b.and_(b.select(up, b.add(ki, one), ki), fconst(it, 127))
    neg = b.xor(signbit(g, t, x), signbit(g, t, y))
    q = b.select(neg, b.neg(q), q)
    store_out(g, kids[2], q, it)
    return r


@builtin("powr")
def powr(g, n, name):
    """pow for x >= 0 only (IEEE 754 powr): NaN for x < 0, powr(+-0, +-0), powr(+inf, +-0),
    powr(1, +-inf) and any NaN argument; +-0 is +0."""
    b = g.b
    t = n.type
    x, y = shaped(g, n)
    ax = intr(g, "fabs", t, [x])
    r = intr(g, "pow", t, [ax, y])
    inf, zero = fconst(t, math.inf), fconst(t, 0.0)
    y0 = b.fcmp_ordered("==", y, zero)
    bad = b.or_(b.fcmp_unordered("uno", x, y), b.fcmp_ordered("<", x, zero))
    bad = b.or_(bad, b.and_(y0, b.or_(b.fcmp_ordered("==", ax, zero), b.fcmp_ordered("==", ax, inf))))
    bad = b.or_(bad, b.and_(b.fcmp_ordered("==", x, fconst(t, 1.0)),
                            b.fcmp_ordered("==", intr(g, "fabs", t, [y]), inf)))
    return b.select(bad, fconst(t, math.nan), r)


# ------------------------------------------------------------------ with an int argument
@builtin("ldexp", "pown", "rootn")
def with_int_argument(g, n, name):
    b = g.b
    t = n.type
    kids = n.kids
    x = g.rv(kids[0])
    k = g.rv(kids[1])
    kt = kids[1].type
    e = elem(t)
    if name == "ldexp":
        fn = cfun(g, "ldexp" + ("f" if e.bits == 32 else ""), e.llvm(), [e.llvm(), I32])
        return per_element(g, t, lambda a, c: b.call(fn, [a, c]), x,
                           k if (kt.is_vector or not t.is_vector) else g.convert(k, kt, T.vector(T.INT, t.count)))
    # pown / rootn: compute in double (float) for accuracy, with the spec's sign rules
    kk = k if (kt.is_vector or not t.is_vector) else g.convert(k, kt, T.vector(T.INT, t.count))
    powd = g.mg.intrinsic("pow", F64, [F64, F64])

    def one(a, c):
        ad = b.fpext(a, F64) if e.bits == 32 else a
        cd = b.sitofp(c, F64)
        if name == "pown":
            r = b.call(powd, [ad, cd])
        else:
            r = _rootn(g, ad, c, cd, e.bits == 64)
        return b.fptrunc(r, F32) if e.bits == 32 else r
    return per_element(g, t, one, x, kk)


def _rootn(g, ad, c, cd, exact_scale):
    """rootn in double: |x|^(1/n), the sign of x for odd n, NaN for x < 0 and even n or n = 0
    (rootn(+-0, n) follows: +-0 or +-inf for odd n, +0 or +inf for even). For double x
    (exact_scale) 1/n's rounding would cost up to ~60 ulp on |log x| large: x = m 2^k with m in
    [1, 2), k = q n + s, so x^(1/n) = m^(1/n) 2^(s/n) 2^q with |s/n| < 1."""
    b = g.b
    f64 = lambda v: ir.Constant(F64, v)  # noqa: E731
    powd = g.mg.intrinsic("llvm.pow.f64", F64, [F64, F64])
    fab = b.call(g.mg.intrinsic("llvm.fabs.f64", F64, [F64]), [ad])
    inv = b.fdiv(f64(1.0), cd)
    mag = b.call(powd, [fab, inv])
    if exact_scale:
        ilogb = cfun(g, "ilogb", I32, [F64])
        ldexp = cfun(g, "ldexp", F64, [F64, I32])
        normal = b.and_(b.fcmp_ordered(">", fab, f64(0.0)), b.fcmp_ordered("<", fab, f64(math.inf)))
        # ilogb(0) and ilogb(NaN) are INT_MIN, and INT_MIN / -1 traps: those lanes take 0
        k = b.select(normal, b.call(ilogb, [fab]), I32(0))
        c1 = b.select(b.icmp_signed("==", c, I32(0)), I32(1), c)
        q = b.sdiv(k, c1)
        s = b.sub(k, b.mul(q, c1))
        m = b.call(ldexp, [fab, b.neg(k)])
        two_s = b.call(g.mg.intrinsic("llvm.exp2.f64", F64, [F64]), [b.fdiv(b.sitofp(s, F64), cd)])
        scaled = b.call(ldexp, [b.fmul(b.call(powd, [m, inv]), two_s), q])
        mag = b.select(normal, scaled, mag)
    odd = b.icmp_unsigned("!=", b.and_(c, I32(1)), I32(0))
    r = b.select(odd, b.call(g.mg.intrinsic("llvm.copysign.f64", F64, [F64, F64]), [mag, ad]), mag)
    r = b.select(b.and_(b.fcmp_ordered("<", ad, f64(0.0)), b.not_(odd)), f64(math.nan), r)
    return b.select(b.icmp_signed("==", c, I32(0)), f64(math.nan), r)


@builtin("ilogb")
def ilogb(g, n, name):
    b = g.b
    x = g.rv(n.kids[0])
    s = n.kids[0].type
    e = elem(s)
    fn = cfun(g, "ilogb" + ("f" if e.bits == 32 else ""), I32, [e.llvm()])
    if not s.is_vector:
        return b.call(fn, [x])
    out = ir.Constant(n.type.llvm(), ir.Undefined)
    for i in range(s.count):
        out = b.insert_element(out, b.call(fn, [b.extract_element(x, I32(i))]), I32(i))
    return out


@builtin("nan")
def nan(g, n, name):
    b = g.b
    t = n.type
    c = g.rv(n.kids[0])
    e = elem(t)
    it = ir.IntType(e.bits)
    ct = n.kids[0].type
    c = g.convert(c, ct, T.vector(T.UINT_OF_BITS[e.bits], ct.count) if ct.is_vector else T.UINT_OF_BITS[e.bits])
    qnan = (0x7fc00000 if e.bits == 32 else 0x7ff8000000000000)
    mask = (0x003fffff if e.bits == 32 else 0x0007ffffffffffff)
    ity = ir.VectorType(it, t.count) if t.is_vector else it
    cst = (lambda v: ir.Constant(ity, [v] * t.count)) if t.is_vector else (lambda v: ir.Constant(ity, v))
    return b.bitcast(b.or_(b.and_(c, cst(mask)), cst(qnan)), t.llvm())


@builtin("maxmag", "minmag")
def maxmag_minmag(g, n, name):
    b = g.b
    t = n.type
    x, y = shaped(g, n)
    ax, ay = intr(g, "fabs", t, [x]), intr(g, "fabs", t, [y])
    gt = b.fcmp_ordered(">" if name == "maxmag" else "<", ax, ay)
    lt = b.fcmp_ordered("<" if name == "maxmag" else ">", ax, ay)
    mm = intr(g, "maxnum" if name == "maxmag" else "minnum", t, [x, y])
    return b.select(gt, x, b.select(lt, y, mm))


# ------------------------------------------------------------------ the *pi functions
@builtin("sinpi", "cospi", "tanpi", "asinpi", "acospi", "atanpi", "atan2pi")
def pi_function(g, n, name):
    """Computed in double and rounded once (double arguments: libm's double accuracy)."""
    b = g.b
    t = n.type
    xs = shaped(g, n)
    e = elem(t)

    def dfn(nm):
        return g.mg.intrinsic(nm, F64, [F64, F64] if nm == "atan2" else [F64])

    def f64(v):
        return ir.Constant(F64, v)

    def one(*a):
        ad = [b.fpext(v, F64) if e.bits == 32 else v for v in a]
        if name in ("sinpi", "cospi", "tanpi"):
            v = _trig_pi(g, dfn, ad[0])
        elif name == "atan2pi":
            v = b.fdiv(b.call(dfn("atan2"), ad), f64(math.pi))
        else:
            v = b.fdiv(b.call(dfn(name[:-2]), ad), f64(math.pi))
        return b.fptrunc(v, F32) if e.bits == 32 else v

    def _trig_pi(g, dfn, x):
        # reduce exactly: r = x - 2*round(x/2) in [-1, 1], then r = f + k/2 with f in
        # [-1/4, 1/4] and k in -2..2 (exact too): sin and cos of pi*f only, so no
        # cancellation near the zeros (pi*r next to pi is off by pi's rounding, which
        # is the whole result there in double)
        rint = g.mg.intrinsic("llvm.rint.f64", F64, [F64])
        half = b.fmul(x, f64(0.5))
        rr = b.call(rint, [half])
        r = b.fsub(x, b.fmul(rr, f64(2.0)))
        k = b.call(rint, [b.fmul(r, f64(2.0))])
        f = b.fsub(r, b.fmul(k, f64(0.5)))
        arg = b.fmul(f, f64(math.pi))
        sa, ca = b.call(dfn("sin"), [arg]), b.call(dfn("cos"), [arg])
        ak = b.call(g.mg.intrinsic("llvm.fabs.f64", F64, [F64]), [k])
        odd = b.fcmp_ordered("==", ak, f64(1.0))
        two = b.fcmp_ordered("==", ak, f64(2.0))
        kneg = b.fcmp_ordered("<", k, f64(0.0))
        # sin(pi(f + k/2)): k=0 sin, 1 cos, -1 -cos, +-2 -sin; cos: k=0 cos, 1 -sin, -1 sin, +-2 -cos
        spi = b.select(odd, b.select(kneg, b.fneg(ca), ca), b.select(two, b.fneg(sa), sa))
        cpi = b.select(odd, b.select(kneg, sa, b.fneg(sa)), b.select(two, b.fneg(ca), ca))
        if name == "sinpi":
            v = spi
            v = b.select(b.fcmp_ordered("==", r, f64(0.0)),
                         b.call(g.mg.intrinsic("llvm.copysign.f64", F64, [F64, F64]), [f64(0.0), x]), v)
            fr = b.fsub(x, b.call(g.mg.intrinsic("llvm.trunc.f64", F64, [F64]), [x]))
            v = b.select(b.fcmp_ordered("==", fr, f64(0.0)),
                         b.call(g.mg.intrinsic("llvm.copysign.f64", F64, [F64, F64]), [f64(0.0), x]), v)
        elif name == "cospi":
            v = cpi
            ar = b.call(g.mg.intrinsic("llvm.fabs.f64", F64, [F64]), [r])
            v = b.select(b.fcmp_ordered("==", ar, f64(0.5)), f64(0.0), v)
        else:
            v = b.fdiv(spi, cpi)
            # exact cases (IEEE 754 tanPi): n + 1/2 -> +inf for even n, -inf for odd n
            # (the sign of r); even n -> copysign(0, n); odd n -> copysign(0, -n)
            sign = g.mg.intrinsic("llvm.copysign.f64", F64, [F64, F64])
            ar = b.call(g.mg.intrinsic("llvm.fabs.f64", F64, [F64]), [r])
            v = b.select(b.fcmp_ordered("==", ar, f64(0.5)), b.call(sign, [f64(math.inf), r]), v)
            v = b.select(b.fcmp_ordered("==", r, f64(0.0)), b.call(sign, [f64(0.0), x]), v)
            v = b.select(b.fcmp_ordered("==", ar, f64(1.0)), b.call(sign, [f64(0.0), b.fneg(x)]), v)
        return v
    return per_element(g, t, one, *xs)
