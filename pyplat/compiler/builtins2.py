"""More OpenCL C builtins: pointer-output math (sincos fract modf frexp remquo lgamma_r), ldexp,
ilogb, nan, rootn, *pi functions, maxmag/minmag; integer abs_diff mad_hi mad_sat upsample;
vload_half/vstore_half with rounding modes; async work-group copies.

`lower2(g, n, name)` returns the value, or NotImplemented when the name is not one of ours.
"""
import math

from llvmlite import ir

from . import types as T
from .tree import CompileError
from . import builtins as B

I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
F32, F64 = ir.FloatType(), ir.DoubleType()
HALF_LL = ir.HalfType()


def elem(t):
    return t.elem if t.is_vector else t


def per_element(g, t, fn, *vals):
    """Apply fn(scalars...) -> scalar to each element (vals may be vectors of t's width)."""
    b = g.b
    if not t.is_vector:
        return fn(*vals)
    out = ir.Constant(t.llvm(), ir.Undefined)
    for i in range(t.count):
        xs = [b.extract_element(v, I32(i)) if isinstance(v.type, ir.VectorType) else v for v in vals]
        out = b.insert_element(out, fn(*xs), I32(i))
    return out


def cfun(g, name, ret, args):
    B.LIBM_USED.add(name)
    return g.mg.intrinsic(name, ret, args)


def libm_out(g, base, t, xs, out_t, extra_ret_int=False):
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


def store_out(g, ptr_node, v, vt):
    p = g.rv(ptr_node)
    g.b.store(v, p, align=elem(vt).size)


def fpconst(t, v):
    return B.fconst(t, v)


def lower2(g, n, name):
    b = g.b
    t = n.type
    kids = n.kids
    if name == "sincos":
        x = g.rv(kids[0])
        s = B.intr(g, "sin", t, [x])
        c = B.intr(g, "cos", t, [x])
        store_out(g, kids[1], c, t)
        return s
    if name == "fract":
        x = g.rv(kids[0])
        fl = B.intr(g, "floor", t, [x])
        r = B.intr(g, "minnum", t, [b.fsub(x, fl), fpconst(t, float.fromhex('0x1.fffffep-1') if elem(t).bits == 32
                                                            else float.fromhex('0x1.fffffffffffffp-1'))])
        ax = B.intr(g, "fabs", t, [x])
        r = b.select(b.fcmp_ordered("==", ax, fpconst(t, math.inf)), B.intr(g, "copysign", t, [fpconst(t, 0.0), x]), r)
        r = b.select(b.fcmp_ordered("==", x, fpconst(t, 0.0)), x, r)
        r = b.select(b.fcmp_unordered("uno", x, x), x, r)
        store_out(g, kids[1], fl, t)
        return r
    if name == "modf":
        x = g.rv(kids[0])
        ip = B.intr(g, "trunc", t, [x])
        ax = B.intr(g, "fabs", t, [x])
        fr = b.select(b.fcmp_ordered("==", ax, fpconst(t, math.inf)), fpconst(t, 0.0), b.fsub(x, ip))
        fr = B.intr(g, "copysign", t, [fr, x])
        store_out(g, kids[1], ip, t)
        return fr
    if name in ("frexp", "lgamma_r"):
        x = g.rv(kids[0])
        it = kids[1].type.pointee
        r, iv = libm_out(g, "frexp" if name == "frexp" else "lgamma_r", t, [x], it)
        store_out(g, kids[1], iv, it)
        return r
    if name == "remquo":
        x, y = g.rv(kids[0]), g.rv(kids[1])
        it = kids[2].type.pointee
        r, iv = libm_out(g, "remquo", t, [x, y], it)
        store_out(g, kids[2], iv, it)
        return r
    if name in ("ldexp", "pown", "rootn"):
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
        B.LIBM_USED.add("pow")

        def one(a, c):
            ad = b.fpext(a, F64) if e.bits == 32 else a
            cd = b.sitofp(c, F64)
            if name == "pown":
                r = b.call(powd, [ad, cd])
            else:
                inv = b.fdiv(ir.Constant(F64, 1.0), cd)
                mag = b.call(powd, [b.call(g.mg.intrinsic("llvm.fabs.f64", F64, [F64]), [ad]), inv])
                odd = b.icmp_unsigned("!=", b.and_(c, I32(1)), I32(0))
                neg = b.fcmp_ordered("<", ad, ir.Constant(F64, 0.0))
                r = b.select(b.and_(neg, odd), b.fneg(mag), mag)
                r = b.select(b.and_(neg, b.not_(odd)), ir.Constant(F64, math.nan), r)
                zero = b.fcmp_ordered("==", ad, ir.Constant(F64, 0.0))
                # rootn(+-0, n) = +-0 for odd n>0, +0 for even n>0, +-inf for n<0 (sign per odd)
                r = b.select(zero, b.call(powd, [ad, inv]), r)
                r = b.select(b.icmp_signed("==", c, I32(0)), ir.Constant(F64, math.nan), r)
            return b.fptrunc(r, F32) if e.bits == 32 else r
        return per_element(g, t, one, x, kk)
    if name == "ilogb":
        x = g.rv(kids[0])
        s = kids[0].type
        e = elem(s)
        fn = cfun(g, "ilogb" + ("f" if e.bits == 32 else ""), I32, [e.llvm()])
        return per_element(g, s, lambda a: b.call(fn, [a]), x) if not s.is_vector else \
            _vec_int(g, s, lambda a: b.call(fn, [a]), x, t)
    if name == "nan":
        c = g.rv(kids[0])
        e = elem(t)
        it = ir.IntType(e.bits)
        ct = kids[0].type
        c = g.convert(c, ct, T.vector(T.UINT_OF_BITS[e.bits], ct.count) if ct.is_vector else T.UINT_OF_BITS[e.bits])
        qnan = (0x7fc00000 if e.bits == 32 else 0x7ff8000000000000)
        mask = (0x003fffff if e.bits == 32 else 0x0007ffffffffffff)
        ity = ir.VectorType(it, t.count) if t.is_vector else it
        cst = (lambda v: ir.Constant(ity, [v] * t.count)) if t.is_vector else (lambda v: ir.Constant(ity, v))
        return b.bitcast(b.or_(b.and_(c, cst(mask)), cst(qnan)), t.llvm())
    if name == "cbrt" and elem(t).bits == 64:
        (xv,) = B.shaped(g, n)
        cb = cfun(g, "cbrt", F64, [F64])
        fma = g.mg.intrinsic("llvm.fma.f64", F64, [F64, F64, F64])
        c = lambda v: ir.Constant(F64, v)  # noqa: E731

        def one_cbrt(x):
            # glibc's cbrt is off by up to ~3 ulp (the spec allows 2): one Newton step y - r/(3y^2)
            # on the residual r = y^3 - x taken in double-double; x scaled by 2^(-+900) (y by
            # 2^(-+300), exactly) where y^3 would overflow or lose bits as a denormal
            ax = B.intr(g, "fabs", T.DOUBLE, [x])
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
    if name in ("sinpi", "cospi", "tanpi", "asinpi", "acospi", "atanpi", "atan2pi"):
        xs = B.shaped(g, n)
        e = elem(t)

        def dfn(nm):
            B.LIBM_USED.add(nm)
            return g.mg.intrinsic(nm, F64, [F64, F64] if nm == "atan2" else [F64])

        def one(*a):
            ad = [b.fpext(v, F64) if e.bits == 32 else v for v in a]
            if name in ("sinpi", "cospi", "tanpi"):
                x = ad[0]
                # reduce exactly: r = x - 2*round(x/2) in [-1, 1], then r = f + k/2 with f in
                # [-1/4, 1/4] and k in -2..2 (exact too): sin and cos of pi*f only, so no
                # cancellation near the zeros (pi*r next to pi is off by pi's rounding, which
                # is the whole result there in double)
                rint = g.mg.intrinsic("llvm.rint.f64", F64, [F64])
                half = b.fmul(x, ir.Constant(F64, 0.5))
                rr = b.call(rint, [half])
                r = b.fsub(x, b.fmul(rr, ir.Constant(F64, 2.0)))
                k = b.call(rint, [b.fmul(r, ir.Constant(F64, 2.0))])
                f = b.fsub(r, b.fmul(k, ir.Constant(F64, 0.5)))
                arg = b.fmul(f, ir.Constant(F64, math.pi))
                sa, ca = b.call(dfn("sin"), [arg]), b.call(dfn("cos"), [arg])
                ak = b.call(g.mg.intrinsic("llvm.fabs.f64", F64, [F64]), [k])
                odd = b.fcmp_ordered("==", ak, ir.Constant(F64, 1.0))
                two = b.fcmp_ordered("==", ak, ir.Constant(F64, 2.0))
                kneg = b.fcmp_ordered("<", k, ir.Constant(F64, 0.0))
                # sin(pi(f + k/2)): k=0 sin, 1 cos, -1 -cos, +-2 -sin; cos: k=0 cos, 1 -sin, -1 sin, +-2 -cos
                spi = b.select(odd, b.select(kneg, b.fneg(ca), ca), b.select(two, b.fneg(sa), sa))
                cpi = b.select(odd, b.select(kneg, sa, b.fneg(sa)), b.select(two, b.fneg(ca), ca))
                if name == "sinpi":
                    v = spi
                    v = b.select(b.fcmp_ordered("==", r, ir.Constant(F64, 0.0)),
                                 b.call(g.mg.intrinsic("llvm.copysign.f64", F64, [F64, F64]),
                                        [ir.Constant(F64, 0.0), x]), v)
                    fr = b.fsub(x, b.call(g.mg.intrinsic("llvm.trunc.f64", F64, [F64]), [x]))
                    v = b.select(b.fcmp_ordered("==", fr, ir.Constant(F64, 0.0)),
                                 b.call(g.mg.intrinsic("llvm.copysign.f64", F64, [F64, F64]),
                                        [ir.Constant(F64, 0.0), x]), v)
                elif name == "cospi":
                    v = cpi
                    ar = b.call(g.mg.intrinsic("llvm.fabs.f64", F64, [F64]), [r])
                    v = b.select(b.fcmp_ordered("==", ar, ir.Constant(F64, 0.5)), ir.Constant(F64, 0.0), v)
                else:
                    v = b.fdiv(spi, cpi)
                    # exact cases (IEEE 754 tanPi): n + 1/2 -> +inf for even n, -inf for odd n
                    # (the sign of r); even n -> copysign(0, n); odd n -> copysign(0, -n)
                    sign = g.mg.intrinsic("llvm.copysign.f64", F64, [F64, F64])
                    ar = b.call(g.mg.intrinsic("llvm.fabs.f64", F64, [F64]), [r])
                    v = b.select(b.fcmp_ordered("==", ar, ir.Constant(F64, 0.5)),
                                 b.call(sign, [ir.Constant(F64, math.inf), r]), v)
                    v = b.select(b.fcmp_ordered("==", r, ir.Constant(F64, 0.0)),
                                 b.call(sign, [ir.Constant(F64, 0.0), x]), v)
                    v = b.select(b.fcmp_ordered("==", ar, ir.Constant(F64, 1.0)),
                                 b.call(sign, [ir.Constant(F64, 0.0), b.fneg(x)]), v)
            elif name == "atan2pi":
                v = b.fdiv(b.call(dfn("atan2"), ad), ir.Constant(F64, math.pi))
            else:
                v = b.fdiv(b.call(dfn(name[:-2]), ad), ir.Constant(F64, math.pi))
            return b.fptrunc(v, F32) if e.bits == 32 else v
        if e.bits == 64:
            # double: libm in double directly (accuracy of the double path is bounded by libm)
            pass
        return per_element(g, t, one, *xs)
    if name in ("maxmag", "minmag"):
        x, y = B.shaped(g, n)
        ax, ay = B.intr(g, "fabs", t, [x]), B.intr(g, "fabs", t, [y])
        gt = b.fcmp_ordered(">" if name == "maxmag" else "<", ax, ay)
        lt = b.fcmp_ordered("<" if name == "maxmag" else ">", ax, ay)
        mm = B.intr(g, "maxnum" if name == "maxmag" else "minnum", t, [x, y])
        return b.select(gt, x, b.select(lt, y, mm))
    # ---------------------------------------------------------------- integer
    if name == "abs_diff":
        x, y = (g.rv(k) for k in kids)
        s = kids[0].type
        e = elem(s)
        gt = b.icmp_signed(">", x, y) if e.signed else b.icmp_unsigned(">", x, y)
        return b.select(gt, b.sub(x, y), b.sub(y, x))
    if name == "mad_hi":
        hi = B.lower(g, _Fake("mul_hi", t, kids[:2], n.cur))
        return b.add(hi, B.shaped(g, _Fake("", t, kids[2:], n.cur))[0])
    if name == "mad_sat":
        x, y, z = B.shaped(g, n)
        e = elem(t)
        if e.bits < 64:
            wt = T.vector((T.INT_OF_BITS if e.signed else T.UINT_OF_BITS)[e.bits * 2], t.count) \
                if t.is_vector else (T.INT_OF_BITS if e.signed else T.UINT_OF_BITS)[e.bits * 2]
            w = b.add(b.mul(g.convert(x, t, wt), g.convert(y, t, wt)), g.convert(z, t, wt))
            lo = -(1 << (e.bits - 1)) if e.signed else 0
            hi = (1 << (e.bits - 1)) - 1 if e.signed else (1 << e.bits) - 1
            if e.signed:
                w = b.select(b.icmp_signed("<", w, B.fconst(wt, lo)), B.fconst(wt, lo), w)
                w = b.select(b.icmp_signed(">", w, B.fconst(wt, hi)), B.fconst(wt, hi), w)
            else:
                w = b.select(b.icmp_unsigned(">", w, B.fconst(wt, hi)), B.fconst(wt, hi), w)
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
    if name == "upsample":
        hi, lo = (g.rv(k) for k in kids)
        s = kids[0].type
        e = elem(s)
        hi_w = g.convert(hi, s, t)
        lt = kids[1].type
        lo_w = g.convert(lo, lt, T.vector(T.UINT_OF_BITS[elem(t).bits], t.count) if t.is_vector
                         else T.UINT_OF_BITS[elem(t).bits])
        return b.or_(b.shl(hi_w, B.fconst(t, e.bits)), lo_w)
    # ---------------------------------------------------------------- half
    if name.startswith(("vload_half", "vloada_half")):
        return vload_half(g, n, name)
    if name.startswith(("vstore_half", "vstorea_half")):
        return vstore_half(g, n, name)
    if name in ("vload_half", "vstore_half"):
        pass
    # ---------------------------------------------------------------- async copies
    if name in ("async_work_group_copy", "async_work_group_strided_copy"):
        return async_copy(g, n, name)
    if name == "prefetch":
        return None
    if name == "printf":
        return lower_printf(g, n)
    return NotImplemented


class _Fake:
    def __init__(self, val, type, kids, cur):
        self.op, self.val, self.type, self.kids, self.cur = "builtin", val, type, list(kids), cur
        self.lv = False


def _vec_int(g, s, fn, x, rt):
    b = g.b
    out = ir.Constant(rt.llvm(), ir.Undefined)
    for i in range(s.count):
        out = b.insert_element(out, fn(b.extract_element(x, I32(i))), I32(i))
    return out


def _half_count(name):
    digits = "".join(ch for ch in name.split("half", 1)[1].split("_")[0] if ch.isdigit())
    return int(digits) if digits else 1


def vload_half(g, n, name):
    b = g.b
    cnt = _half_count(name)
    aligned = name.startswith("vloada")
    off = g.to_i64(g.rv(n.kids[0]), n.kids[0].type)
    p = g.rv(n.kids[1])
    step = 4 if (aligned and cnt == 3) else cnt
    addr = b.gep(p, [b.mul(off, I64(step))], source_etype=I16)
    t = n.type
    if cnt == 1:
        h = b.bitcast(b.load(addr, typ=I16, align=2), HALF_LL)
        return b.fpext(h, t.llvm())
    vt = ir.VectorType(I16, cnt)
    v = b.load(addr, typ=vt, align=2)
    return b.fpext(b.bitcast(v, ir.VectorType(HALF_LL, cnt)), t.llvm())


def double_to_float_odd(g, x, st):
    """double -> float rounded to odd (an inexact result gets its last bit set): rounding that float
    to half in any mode then equals rounding the double directly (24 bits >= 11 + 2), without the
    double -> half conversion, which the JIT has no runtime routine for."""
    b = g.b
    ft = T.vector(T.FLOAT, st.count) if st.is_vector else T.FLOAT
    it = T.vector(T.INT, st.count) if st.is_vector else T.INT
    f = b.fptrunc(x, ft.llvm())
    back = b.fpext(f, x.type)
    bits = b.bitcast(f, it.llvm())
    inexact = b.fcmp_unordered("une", back, x)
    over = b.fcmp_ordered(">", B.intr(g, "fabs", st, [back]), B.intr(g, "fabs", st, [x]))
    toward_zero = b.select(over, b.sub(bits, B.fconst(it, 1)), bits)
    odd = b.or_(toward_zero, B.fconst(it, 1))
    return b.bitcast(b.select(inexact, odd, bits), ft.llvm()), ft


def to_half_bits(g, x, st, mode):
    """float/double (scalar or vector) -> i16 bits with rounding mode rte/rtz/rtp/rtn."""
    b = g.b
    if (st.elem if st.is_vector else st).bits == 64:
        x, st = double_to_float_odd(g, x, st)
    cnt = st.count if st.is_vector else 1
    hty = ir.VectorType(HALF_LL, cnt) if st.is_vector else HALF_LL
    ity = ir.VectorType(I16, cnt) if st.is_vector else I16
    h = b.fptrunc(x, hty)
    bits = b.bitcast(h, ity)
    if mode in (None, "rte"):
        return bits

    def ic(v):
        return ir.Constant(ity, [v] * cnt) if st.is_vector else ir.Constant(ity, v)
    back = b.fpext(h, x.type)
    neg = b.icmp_unsigned("!=", b.and_(bits, ic(0x8000)), ic(0))
    mag = b.and_(bits, ic(0x7fff))
    isnan = b.fcmp_unordered("uno", x, x)
    if mode == "rtz":
        fix = b.fcmp_ordered(">", B.intr(g, "fabs", st, [back]), B.intr(g, "fabs", st, [x]))
        new = b.sub(bits, ic(1))
    elif mode == "rtp":
        fix = b.fcmp_ordered("<", back, x)
        # toward +inf: positive -> bits+1; negative -> magnitude-1; -0 -> smallest positive
        new = b.select(neg, b.select(b.icmp_unsigned("==", mag, ic(0)), ic(1), b.sub(bits, ic(1))),
                       b.add(bits, ic(1)))
    else:
        fix = b.fcmp_ordered(">", back, x)
        new = b.select(neg, b.add(bits, ic(1)),
                       b.select(b.icmp_unsigned("==", mag, ic(0)), ic(0x8001), b.sub(bits, ic(1))))
    fix = b.and_(fix, b.not_(isnan))
    return b.select(fix, new, bits)


def vstore_half(g, n, name):
    b = g.b
    cnt = _half_count(name)
    aligned = name.startswith("vstorea")
    parts = name.split("_")
    mode = parts[-1] if parts[-1] in ("rte", "rtz", "rtp", "rtn") else None
    data = g.rv(n.kids[0])
    dt = n.kids[0].type
    off = g.to_i64(g.rv(n.kids[1]), n.kids[1].type)
    p = g.rv(n.kids[2])
    step = 4 if (aligned and cnt == 3) else cnt
    addr = b.gep(p, [b.mul(off, I64(step))], source_etype=I16)
    bits = to_half_bits(g, data, dt, mode)
    b.store(bits, addr, align=2)
    return None


def async_copy(g, n, name):
    """Each work-item copies its share of the elements; wait_group_events is a barrier."""
    b = g.b
    kids = n.kids
    dst, src = g.rv(kids[0]), g.rv(kids[1])
    num = g.to_i64(g.rv(kids[2]), kids[2].type)
    et = kids[0].type.pointee
    size = et.size
    strided = name.endswith("strided_copy")
    stride = g.to_i64(g.rv(kids[3]), kids[3].type) if strided else None
    ls = [g.wi_slot(4 + d) for d in range(3)]
    lid = [g.wi_slot(16 + d) for d in range(3)]
    nwi = b.mul(b.mul(ls[0], ls[1]), ls[2])
    lin = b.add(b.mul(b.add(b.mul(lid[2], ls[1]), lid[1]), ls[0]), lid[0])
    chunk = b.udiv(b.add(num, b.sub(nwi, I64(1))), nwi)
    start = b.mul(lin, chunk)
    end = b.add(start, chunk)
    end = b.select(b.icmp_unsigned("<", end, num), end, num)
    fn = g.fn
    if not strided:
        go = fn.append_basic_block("acopy.go")
        done = fn.append_basic_block("acopy.done")
        b.cbranch(b.icmp_unsigned("<", start, end), go, done)
        b.position_at_end(go)
        d = b.gep(dst, [b.mul(start, I64(size))], source_etype=I8)
        s = b.gep(src, [b.mul(start, I64(size))], source_etype=I8)
        f = g.mg.intrinsic("llvm.memmove.p0.p0.i64", ir.VoidType(), [T.PTR_LL, T.PTR_LL, I64, I1])
        b.call(f, [d, s, b.mul(b.sub(end, start), I64(size)), I1(0)])
        b.branch(done)
        b.position_at_end(done)
        return ir.Constant(I64, 1)
    # strided: global side is strided (src for global->local, dst for local->global)
    src_strided = kids[1].type.addrspace == "global"
    pre = b.block
    hdr = fn.append_basic_block("acopy.hdr")
    body = fn.append_basic_block("acopy.body")
    done = fn.append_basic_block("acopy.done")
    b.branch(hdr)
    b.position_at_end(hdr)
    i = b.phi(I64)
    i.add_incoming(start, pre)
    b.cbranch(b.icmp_unsigned("<", i, end), body, done)
    b.position_at_end(body)
    si = b.mul(i, stride) if src_strided else i
    di = i if src_strided else b.mul(i, stride)
    ll = et.llvm()
    v = b.load(b.gep(src, [si], source_etype=ll), typ=ll, align=max(1, et.elem.size if et.is_vector else et.align))
    b.store(v, b.gep(dst, [di], source_etype=ll), align=max(1, et.elem.size if et.is_vector else et.align))
    i.add_incoming(b.add(i, I64(1)), body)
    b.branch(hdr)
    b.position_at_end(done)
    return ir.Constant(I64, 1)


# ---------------------------------------------------------------------------------------- printf
import re as _re

_SPEC = _re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d+|\*)?(?:\.(?P<prec>\d*|\*))?"
                    r"(?P<vec>v(?:16|2|3|4|8))?(?P<len>hh|hl|h|ll|l)?(?P<conv>[diouxXfFeEgGaAcsp%])")
PRINTF_BUF = 1024


def _format_literal(node):
    while node.op in ("conv", "decay", "load") and node.kids:
        node = node.kids[0]
    return node.val if node.op == "str" else None


def lower_printf(g, n):
    """OpenCL printf: the format is parsed at compile time into a C format (vectors %vN expanded
    element by element, OpenCL length modifiers mapped to C's), formatted with snprintf and written
    to file descriptor 1 with one write() per call (no Python-level buffering involved)."""
    b = g.b
    kids = n.kids
    fmt = _format_literal(kids[0]) if kids else None
    if fmt is None:
        raise CompileError("printf: the format must be a string literal", n.cur)
    fmt = fmt.split(b"\0", 1)[0].decode("latin-1")
    out, vals = [], []
    args = list(kids[1:])
    pos = 0
    ai = 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()].replace("%", "%%"))
        pos = m.end()
        conv = m.group("conv")
        if conv == "%":
            out.append("%%")
            continue
        if m.group("width") == "*" or m.group("prec") == "*":
            raise CompileError("printf: '*' width/precision is not allowed in OpenCL C", n.cur)
        if ai >= len(args):
            raise CompileError("printf: fewer arguments than conversions", n.cur)
        a = args[ai]
        ai += 1
        v = g.rv(a)
        t = a.type
        head = "%" + m.group("flags") + (m.group("width") or "") + \
            ("." + m.group("prec") if m.group("prec") is not None else "")
        ln = m.group("len") or ""
        if m.group("vec"):
            cnt = int(m.group("vec")[1:])
            if not t.is_vector or t.count != cnt:
                raise CompileError("printf: %s needs a vector of %d elements" % (m.group(0), cnt), n.cur)
            pieces = []
            for i in range(cnt):
                x = b.extract_element(v, I32(i))
                pieces.append(_c_spec(head, ln, conv, x, t.elem, vals, g))
            out.append(",".join(pieces))
        else:
            if t.is_vector:
                raise CompileError("printf: vector argument needs a %vN conversion", n.cur)
            out.append(_c_spec(head, ln, conv, v, t, vals, g))
    out.append(fmt[pos:].replace("%", "%%"))
    cfmt = "".join(out).encode("latin-1") + b"\0"
    gfmt = g.mg.string(cfmt)
    snprintf = g.mg.intrinsic("snprintf", I32, [T.PTR_LL, I64, T.PTR_LL])
    if not snprintf.function_type.var_arg:
        raise CompileError("internal: snprintf declared without varargs", n.cur)
    write = g.mg.intrinsic("write", I64, [I32, T.PTR_LL, I64])
    buf = g.alloca(T.Array(T.CHAR, PRINTF_BUF))
    nchars = b.call(snprintf, [buf, I64(PRINTF_BUF), gfmt] + vals)
    n64 = b.sext(nchars, I64)
    fits = b.icmp_signed("<", n64, I64(PRINTF_BUF))
    small_bb = g.fn.append_basic_block("printf.small")
    big_bb = g.fn.append_basic_block("printf.big")
    done_bb = g.fn.append_basic_block("printf.done")
    neg = b.icmp_signed("<", n64, I64(0))
    b.cbranch(b.or_(fits, neg), small_bb, big_bb)
    b.position_at_end(small_bb)
    b.call(write, [I32(1), buf, b.select(neg, I64(0), n64)])
    b.branch(done_bb)
    b.position_at_end(big_bb)
    size = b.add(n64, I64(1))
    heap = b.call(g.mg.intrinsic("malloc", T.PTR_LL, [I64]), [size])
    b.call(snprintf, [heap, size, gfmt] + vals)
    b.call(write, [I32(1), heap, n64])
    b.call(g.mg.intrinsic("free", ir.VoidType(), [T.PTR_LL]), [heap])
    b.branch(done_bb)
    b.position_at_end(done_bb)
    return b.select(neg, I32(-1), I32(0))


def _c_spec(head, ln, conv, x, et, vals, g):
    """C conversion for one (scalar) value; appends the C vararg value to vals."""
    b = g.b
    if conv in "fFeEgGaA":
        if et.is_float:
            vals.append(b.fpext(x, F64) if et.bits < 64 else x)
        else:
            vals.append(b.sitofp(x, F64))
        return head + conv
    if conv in "diouxXc":
        bits = et.bits if et.is_int else 32
        signed = conv in "di"
        if et.is_float:
            x = b.bitcast(x, ir.IntType(et.bits))
        if ln == "l" or ln == "ll" or (bits == 64 and not ln):
            w = I64
            cl = "l"
        else:
            w = I32
            cl = {"hh": "hh", "h": "h"}.get(ln, "")
        xt = x.type
        if xt.width < w.width:
            x = b.sext(x, w) if (et.is_int and et.signed and not et.is_bool) else b.zext(x, w)
        elif xt.width > w.width:
            x = b.trunc(x, w)
        vals.append(x)
        return head + (cl if conv != "c" else "") + conv
    if conv in "sp":
        if not isinstance(x.type, ir.PointerType):
            x = b.inttoptr(x, T.PTR_LL) if isinstance(x.type, ir.IntType) else x
        vals.append(x)
        return head + conv
    raise CompileError("printf: unsupported conversion %%%s" % conv)
