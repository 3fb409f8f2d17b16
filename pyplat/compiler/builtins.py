"""Lowering of OpenCL C builtin functions (clang declares them; we define them).

Work-item functions read the work-item state; math uses LLVM intrinsics where
they exist and libm otherwise (scalarised for vectors; the JIT is told the libm
addresses explicitly, see jit.py).
"""
from llvmlite import ir

from . import types as T
from .tree import CompileError

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)

# work-item functions: slot of dim 0 in the wi array, default for dims out of range
WORKITEM = {
    "get_global_size": (1, 1), "get_local_size": (4, 1), "get_enqueued_local_size": (4, 1),
    "get_num_groups": (7, 1), "get_global_offset": (10, 0), "get_group_id": (13, 0),
    "get_local_id": (16, 0),
}
INTR1 = {"sqrt": "sqrt", "fabs": "fabs", "sin": "sin", "cos": "cos", "exp": "exp", "exp2": "exp2",
         "log": "log", "log2": "log2", "log10": "log10", "floor": "floor", "ceil": "ceil",
         "round": "round", "trunc": "trunc", "rint": "rint"}
INTR2 = {"pow": "pow", "powr": "pow", "fmin": "minnum", "fmax": "maxnum", "copysign": "copysign"}
LIBM1 = ("tan", "atan", "tanh", "asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh", "cbrt",
         "expm1", "log1p", "erf", "erfc", "tgamma", "lgamma", "exp10", "logb")
LIBM2 = ("atan2", "hypot", "nextafter", "fdim", "remainder")
LIBM_USED = set()
RELATIONAL2 = {"isequal": ("==", True), "isnotequal": ("!=", False), "isgreater": (">", True),
               "isgreaterequal": (">=", True), "isless": ("<", True), "islessequal": ("<=", True)}
ATOMIC_OPS = {"add": "add", "sub": "sub", "xchg": "xchg", "and": "and", "or": "or", "xor": "xor",
              "min": "min", "max": "max", "inc": "add", "dec": "sub"}


def suffix(t):
    e = t.elem if t.is_vector else t
    s = ("f%d" % e.bits) if e.is_float else ("i%d" % e.bits)
    return ("v%d%s" % (t.count, s)) if t.is_vector else s


def intr(g, base, t, args):
    ll = [a.type for a in args]
    fn = g.mg.intrinsic("llvm.%s.%s" % (base, suffix(t)), t.llvm(), ll)
    return g.b.call(fn, args)


def libm(g, name, t, args):
    e = t.elem if t.is_vector else t
    if not e.is_float or e.bits not in (32, 64):
        raise CompileError("%s is only supported for float and double" % name)
    cname = name + ("f" if e.bits == 32 else "")
    LIBM_USED.add(cname)
    fn = g.mg.intrinsic(cname, e.llvm(), [e.llvm()] * len(args))
    b = g.b
    if not t.is_vector:
        return b.call(fn, args)
    out = ir.Constant(t.llvm(), ir.Undefined)
    for i in range(t.count):
        r = b.call(fn, [b.extract_element(a, I32(i)) for a in args])
        out = b.insert_element(out, r, I32(i))
    return out


def fconst(t, v):
    e = t.elem if t.is_vector else t
    if t.is_vector:
        return ir.Constant(t.llvm(), [float(v) if e.is_float else int(v)] * t.count)
    return ir.Constant(t.llvm(), float(v) if e.is_float else int(v))


def shaped(g, n, t=None):
    """Argument values converted to the result shape (scalars splatted)."""
    t = t or n.type
    out = []
    for k in n.kids:
        v = g.rv(k)
        if t.is_vector and k.type.is_scalar:
            v = g.convert(v, k.type, t, n)
        out.append(v)
    return out


def cmp_result(g, r, rt):
    return g.b.sext(r, rt.llvm()) if rt.is_vector else g.b.zext(r, rt.llvm())


def imin(g, a, c, t, is_max):
    e = t.elem if t.is_vector else t
    op = ">" if is_max else "<"
    cmp = g.b.icmp_signed(op, a, c) if e.signed else g.b.icmp_unsigned(op, a, c)
    return g.b.select(cmp, a, c)


def fmin_(g, a, c, t, is_max):
    e = t.elem if t.is_vector else t
    if e.is_float:
        return intr(g, "maxnum" if is_max else "minnum", t, [a, c])
    return imin(g, a, c, t, is_max)


def dot(g, a, c, t):
    b = g.b
    m = g.fm(b.fmul(a, c))
    if not t.is_vector:
        return m
    s = b.extract_element(m, I32(0))
    for i in range(1, t.count):
        s = g.fm(b.fadd(s, b.extract_element(m, I32(i))))
    return s


def geom_scaled(g, a, vt):
    """(a * s, 1 / s) for a power of two s that keeps the sum of squares of a clear of overflow
    and underflow: length/normalize of very large or very small components stay accurate."""
    b = g.b
    e = vt.elem if vt.is_vector else vt
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


def const_value(k):
    while k.op == "conv" and k.type.is_scalar:
        k = k.kids[0]
    return int(k.val) if k.op == "const" else None


def dim_query(g, n, slot0, default):
    k = n.kids[0]
    cv = const_value(k)
    b = g.b
    rt = n.type
    dflt = ir.Constant(I64, default)
    wd = g.wi_slot(0)
    if cv is not None:
        d = cv
        if d < 0 or d > 2:
            v = dflt
        else:
            v = g.wi_slot(slot0 + d)
            if d > 0:
                v = b.select(b.icmp_unsigned(">", wd, I64(d)), v, dflt)
    else:
        d = g.to_i64(g.rv(k), k.type)
        v = dflt
        for i in (2, 1, 0):
            v = b.select(b.icmp_unsigned("==", d, I64(i)), g.wi_slot(slot0 + i), v)
        v = b.select(b.icmp_unsigned("<", d, wd), v, dflt)
    return v if rt.bits == 64 else b.trunc(v, rt.llvm())


def global_id(g, n):
    k = n.kids[0]
    b = g.b
    cv = const_value(k)
    if cv is not None:
        d = cv
        if d < 0 or d > 2:
            return ir.Constant(n.type.llvm(), 0)
        v = b.add(b.add(b.mul(g.wi_slot(13 + d), g.wi_slot(4 + d)), g.wi_slot(16 + d)), g.wi_slot(10 + d))
        if d > 0:
            v = b.select(b.icmp_unsigned(">", g.wi_slot(0), I64(d)), v, I64(0))
        return v
    d = g.to_i64(g.rv(k), k.type)
    v = I64(0)
    for i in (2, 1, 0):
        gi = b.add(b.add(b.mul(g.wi_slot(13 + i), g.wi_slot(4 + i)), g.wi_slot(16 + i)), g.wi_slot(10 + i))
        v = b.select(b.icmp_unsigned("==", d, I64(i)), gi, v)
    return b.select(b.icmp_unsigned("<", d, g.wi_slot(0)), v, I64(0))


def directed_float(g, v, s, t, mode):
    """convert_<float type>_rtz/_rtp/_rtn: convert to nearest, compare the result with the exact
    source, then step one ulp (the next float, via the bits) toward the source where the mode
    says; the nearest value is always the directed result or its neighbour on the source's side."""
    b = g.b
    se, te = (s.elem if s.is_vector else s), (t.elem if t.is_vector else t)
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


def convert_builtin(g, n, name):
    parts = name[len("convert_"):].split("_")
    sat = "sat" in parts
    rnd = [p for p in parts if p.startswith("rt")]
    k = n.kids[0]
    v = g.rv(k)
    s, t = k.type, n.type
    b = g.b
    se, te = (s.elem if s.is_vector else s), (t.elem if t.is_vector else t)
    if se.is_float and te.is_int and rnd and rnd[0] != "rtz":
        v = intr(g, {"rte": "rint", "rtp": "ceil", "rtn": "floor"}[rnd[0]], s, [v])
    if te.is_float and rnd and rnd[0] != "rte":
        return directed_float(g, v, s, t, rnd[0])
    if not sat or te.is_float:
        return g.convert(v, s, t, n)
    tmin = -(1 << (te.bits - 1)) if te.signed else 0
    tmax = (1 << (te.bits - 1)) - 1 if te.signed else (1 << te.bits) - 1
    if se.is_float:
        r = g.convert(v, s, t, n)
        lo = g.b.fcmp_ordered("<", v, fconst(s, float(tmin)))
        hi = g.b.fcmp_ordered(">=", v, fconst(s, float(tmax + 1)))
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


def lower(g, n):
    from . import builtins2 as B2
    name = n.val
    b = g.b
    t = n.type
    for pre in ("native_", "half_"):
        if name.startswith(pre):
            name = name[len(pre):]
    r = B2.lower2(g, n, name)
    if r is not NotImplemented:
        return r
    if name in ("__builtin_inff", "__builtin_inf", "__builtin_huge_valf", "__builtin_huge_val"):
        return fconst(t, float("inf"))  # INFINITY, HUGE_VALF (pyplat_opencl.h)
    if name in ("__builtin_nanf", "__builtin_nan"):
        return fconst(t, float("nan"))  # NAN
    if name in WORKITEM:
        slot, dflt = WORKITEM[name]
        return dim_query(g, n, slot, dflt)
    if name == "get_global_id":
        return global_id(g, n)
    if name == "get_work_dim":
        return b.trunc(g.wi_slot(0), I32)
    if name in ("mem_fence", "read_mem_fence", "write_mem_fence"):
        return None
    if name in INTR1:
        return intr(g, INTR1[name], t, shaped(g, n))
    if name in INTR2:
        return intr(g, INTR2[name], t, shaped(g, n))
    if name in LIBM1 or name in LIBM2:
        return libm(g, name, t, shaped(g, n))
    if name == "fmod":
        a, c = shaped(g, n)
        return b.frem(a, c)
    if name == "rsqrt":
        (a,) = shaped(g, n)
        return g.fm(b.fdiv(fconst(t, 1.0), intr(g, "sqrt", t, [a])))
    if name == "recip":
        (a,) = shaped(g, n)
        return g.fm(b.fdiv(fconst(t, 1.0), a))
    if name == "divide":
        a, c = shaped(g, n)
        return g.fm(b.fdiv(a, c))
    if name in ("fma", "mad"):
        args = shaped(g, n)
        return intr(g, "fma" if name == "fma" else "fmuladd", t, args)
    if name == "pown":
        a = g.rv(n.kids[0])
        e = g.convert(g.rv(n.kids[1]), n.kids[1].type, t, n)
        return intr(g, "pow", t, [a, e])
    if name in ("min", "max"):
        a, c = shaped(g, n)
        return fmin_(g, a, c, t, name == "max")
    if name == "clamp":
        x, lo, hi = shaped(g, n)
        return fmin_(g, fmin_(g, x, lo, t, True), hi, t, False)
    if name == "mix":
        a, c, w = shaped(g, n)
        return g.fm(b.fadd(a, g.fm(b.fmul(g.fm(b.fsub(c, a)), w))))
    if name == "step":
        edge, x = shaped(g, n)
        return b.select(b.fcmp_ordered("<", x, edge), fconst(t, 0.0), fconst(t, 1.0))
    if name == "smoothstep":
        e0, e1, x = shaped(g, n)
        tt = g.fm(b.fdiv(g.fm(b.fsub(x, e0)), g.fm(b.fsub(e1, e0))))
        tt = fmin_(g, fmin_(g, tt, fconst(t, 0.0), t, True), fconst(t, 1.0), t, False)
        return g.fm(b.fmul(g.fm(b.fmul(tt, tt)), g.fm(b.fsub(fconst(t, 3.0), g.fm(b.fmul(fconst(t, 2.0), tt))))))
    if name == "sign":
        (x,) = shaped(g, n)
        pos = b.select(b.fcmp_ordered(">", x, fconst(t, 0.0)), fconst(t, 1.0), x)  # +-0 keep their sign
        r = b.select(b.fcmp_ordered("<", x, fconst(t, 0.0)), fconst(t, -1.0), pos)
        return b.select(b.fcmp_unordered("uno", x, x), fconst(t, 0.0), r)
    if name in ("degrees", "radians"):
        (x,) = shaped(g, n)
        f = 57.29577951308232 if name == "degrees" else 0.017453292519943295
        return g.fm(b.fmul(x, fconst(t, f)))
    if name == "abs":
        k = n.kids[0]
        x = g.rv(k)
        e = k.type.elem if k.type.is_vector else k.type
        if e.signed:
            x = b.select(b.icmp_signed("<", x, fconst(k.type, 0)), b.neg(x), x)
        return x
    if name in ("popcount", "clz", "ctz"):
        (x,) = shaped(g, n)
        if name == "popcount":
            return intr(g, "ctpop", t, [x])
        fn = g.mg.intrinsic("llvm.%s.%s" % ("ctlz" if name == "clz" else "cttz", suffix(t)), t.llvm(),
                            [t.llvm(), I1])
        return b.call(fn, [x, I1(0)])
    if name == "rotate":
        x, c = shaped(g, n)
        return intr(g, "fshl", t, [x, x, c])
    if name in ("add_sat", "sub_sat"):
        a, c = shaped(g, n)
        e = t.elem if t.is_vector else t
        return intr(g, ("s" if e.signed else "u") + name[:3] + ".sat", t, [a, c])
    if name in ("mul24", "mad24"):
        args = shaped(g, n)
        r = b.mul(args[0], args[1])
        return b.add(r, args[2]) if name == "mad24" else r
    if name in ("hadd", "rhadd"):
        a, c = shaped(g, n)
        e = t.elem if t.is_vector else t
        one = fconst(t, 1)
        sh = (lambda v: b.ashr(v, one)) if e.signed else (lambda v: b.lshr(v, one))
        low = b.and_(b.and_(a, c) if name == "hadd" else b.or_(a, c), one)
        return b.add(b.add(sh(a), sh(c)), low)
    if name == "mul_hi":
        a, c = shaped(g, n)
        e = t.elem if t.is_vector else t
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
    if name in ("dot", "length", "distance", "normalize", "fast_length", "fast_distance", "fast_normalize"):
        base = name.replace("fast_", "")
        k = n.kids[0]
        vt = k.type
        if base == "dot":
            a, c = g.rv(n.kids[0]), g.rv(n.kids[1])
            return dot(g, a, c, vt)
        a = g.rv(k)
        if base == "distance":
            a = g.fm(b.fsub(a, g.rv(n.kids[1])))
        e = vt.elem if vt.is_vector else vt
        if base in ("length", "distance"):
            q, inv = geom_scaled(g, a, vt)
            return b.fmul(intr(g, "sqrt", e, [dot(g, q, q, vt)]), inv)
        # normalize: infinite elements count as +-1 and the others as +-0 (OpenCL C spec)
        isinf = b.fcmp_ordered("==", intr(g, "fabs", vt, [a]), fconst(vt, float("inf")))
        anyinf = isinf
        if vt.is_vector:
            anyinf = b.extract_element(isinf, I32(0))
            for i in range(1, vt.count):
                anyinf = b.or_(anyinf, b.extract_element(isinf, I32(i)))
        fixed = b.select(isinf, intr(g, "copysign", vt, [fconst(vt, 1.0), a]), b.fmul(a, fconst(vt, 0.0)))
        a2 = b.select(anyinf, fixed, a)
        q, _ = geom_scaled(g, a2, vt)
        ln = intr(g, "sqrt", e, [dot(g, q, q, vt)])
        r = g.fm(b.fdiv(q, g.convert(ln, e, vt) if vt.is_vector else ln))
        return b.select(b.fcmp_ordered("==", ln, fconst(e, 0.0)), a2, r)
    if name == "cross":
        a, c = g.rv(n.kids[0]), g.rv(n.kids[1])
        ex = lambda v, i: b.extract_element(v, I32(i))
        comps = []
        for i, j in ((1, 2), (2, 0), (0, 1)):
            comps.append(g.fm(b.fsub(g.fm(b.fmul(ex(a, i), ex(c, j))), g.fm(b.fmul(ex(a, j), ex(c, i))))))
        out = ir.Constant(t.llvm(), None)
        for i, v in enumerate(comps):
            out = b.insert_element(out, v, I32(i))
        return out
    if name in ("isnan", "isinf", "isfinite", "isnormal", "signbit"):
        k = n.kids[0]
        x = g.rv(k)
        s = k.type
        e = s.elem if s.is_vector else s
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
        return cmp_result(g, r, t)
    if name in RELATIONAL2 or name in ("islessgreater", "isordered", "isunordered"):
        a, c = g.rv(n.kids[0]), g.rv(n.kids[1])
        if name in RELATIONAL2:
            op, _ = RELATIONAL2[name]
            r = b.fcmp_unordered(op, a, c) if op == "!=" else b.fcmp_ordered(op, a, c)
        elif name == "islessgreater":
            r = b.fcmp_ordered("!=", a, c)
        elif name == "isordered":
            r = b.fcmp_ordered("ord", a, c)
        else:
            r = b.fcmp_unordered("uno", a, c)
        return cmp_result(g, r, t)
    if name in ("any", "all"):
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
    if name == "select":
        a, c = shaped(g, n)[:2]
        kc = n.kids[2]
        m = g.rv(kc)
        if kc.type.is_vector:
            cond = b.icmp_signed("<", m, ir.Constant(m.type, None))
        else:
            cond = g.truth(m, kc.type)
        return b.select(cond, c, a)
    if name == "bitselect":
        a, c, m = shaped(g, n)
        e = t.elem if t.is_vector else t
        if e.is_float:
            it = T.vector(T.INT_OF_BITS[e.bits], t.count) if t.is_vector else T.INT_OF_BITS[e.bits]
            a, c, m = (b.bitcast(v, it.llvm()) for v in (a, c, m))
            return b.bitcast(b.or_(b.and_(a, b.not_(m)), b.and_(c, m)), t.llvm())
        return b.or_(b.and_(a, b.not_(m)), b.and_(c, m))
    if name.startswith("convert_"):
        return convert_builtin(g, n, name)
    if name.startswith("vload") and name[5:].isdigit():
        cnt = int(name[5:])
        off = g.to_i64(g.rv(n.kids[0]), n.kids[0].type)
        p = g.rv(n.kids[1])
        e = t.elem
        addr = b.gep(p, [b.mul(off, I64(cnt))], source_etype=e.llvm())
        return b.load(addr, typ=t.llvm(), align=e.size)
    if name.startswith("vstore") and name[6:].isdigit():
        cnt = int(name[6:])
        data = g.rv(n.kids[0])
        dt = n.kids[0].type
        off = g.to_i64(g.rv(n.kids[1]), n.kids[1].type)
        p = g.rv(n.kids[2])
        addr = b.gep(p, [b.mul(off, I64(cnt))], source_etype=dt.elem.llvm())
        b.store(data, addr, align=dt.elem.size)
        return None
    if name.startswith("atomic_") or name.startswith("atom_"):
        op = name.split("_", 1)[1]
        p = g.rv(n.kids[0])
        pt = n.kids[0].type.pointee
        if op == "cmpxchg":
            cmpv = g.convert(g.rv(n.kids[1]), n.kids[1].type, pt, n)
            val = g.convert(g.rv(n.kids[2]), n.kids[2].type, pt, n)
            r = b.cmpxchg(p, cmpv, val, "seq_cst", "seq_cst")
            return b.extract_value(r, 0)
        if op not in ATOMIC_OPS:
            raise CompileError("builtin function '%s' is not supported yet" % n.val, n.cur)
        if op in ("inc", "dec"):
            val = ir.Constant(pt.llvm(), 1)
        else:
            val = g.convert(g.rv(n.kids[1]), n.kids[1].type, pt, n)
        rop = ATOMIC_OPS[op]
        if rop in ("min", "max") and not pt.signed:
            rop = "u" + rop
        if pt.is_float and rop == "xchg":
            pass
        return b.atomic_rmw(rop, p, val, "seq_cst")
    raise CompileError("builtin function '%s' is not supported yet" % n.val, n.cur)
