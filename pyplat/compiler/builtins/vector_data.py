"""Vector data load and store functions (OpenCL C spec, "Vector Data Load and Store
Functions"): vloadN/vstoreN, vload_half[N]/vloada_halfN and vstore_half[N]/vstorea_halfN with
the rounding modes _rte/_rtz/_rtp/_rtn."""
from llvmlite import ir

from .. import types as T
from .helpers import HALF_LL, I16, I64, elem, fconst, intr
from .registry import family

ROUNDING_MODES = ("rte", "rtz", "rtp", "rtn")


@family(r"vload[0-9]+")
def vload(g, n, name):
    b = g.b
    t = n.type
    cnt = int(name[5:])
    off = g.to_i64(g.rv(n.kids[0]), n.kids[0].type)
    p = g.rv(n.kids[1])
    e = t.elem
    addr = b.gep(p, [b.mul(off, I64(cnt))], source_etype=e.llvm())
    return g.guard_access(n, n.kids[1], addr, cnt * e.size, "read",
                          lambda: b.load(addr, typ=t.llvm(), align=e.size))


@family(r"vstore[0-9]+")
def vstore(g, n, name):
    b = g.b
    cnt = int(name[6:])
    data = g.rv(n.kids[0])
    dt = n.kids[0].type
    off = g.to_i64(g.rv(n.kids[1]), n.kids[1].type)
    p = g.rv(n.kids[2])
    addr = b.gep(p, [b.mul(off, I64(cnt))], source_etype=dt.elem.llvm())
    g.guard_access(n, n.kids[2], addr, cnt * dt.elem.size, "write",
                   lambda: _store(b, data, addr, dt.elem.size))
    return None


def _store(b, value, addr, align):
    """A store for g.guard_access, which takes None as what a store returns."""
    b.store(value, addr, align=align)


def _half_count(name):
    digits = "".join(ch for ch in name.split("half", 1)[1].split("_")[0] if ch.isdigit())
    return int(digits) if digits else 1


@family(r"vloada?_half\w*")
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
        bits = g.guard_access(n, n.kids[1], addr, 2, "read", lambda: b.load(addr, typ=I16, align=2))
        return b.fpext(b.bitcast(bits, HALF_LL), t.llvm())
    vt = ir.VectorType(I16, cnt)
    v = g.guard_access(n, n.kids[1], addr, 2 * cnt, "read", lambda: b.load(addr, typ=vt, align=2))
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
    over = b.fcmp_ordered(">", intr(g, "fabs", st, [back]), intr(g, "fabs", st, [x]))
    toward_zero = b.select(over, b.sub(bits, fconst(it, 1)), bits)
    odd = b.or_(toward_zero, fconst(it, 1))
    return b.bitcast(b.select(inexact, odd, bits), ft.llvm()), ft


def to_half_bits(g, x, st, mode):
    """float/double (scalar or vector) -> i16 bits with rounding mode rte/rtz/rtp/rtn."""
    b = g.b
    if elem(st).bits == 64:
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
        fix = b.fcmp_ordered(">", intr(g, "fabs", st, [back]), intr(g, "fabs", st, [x]))
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


@family(r"vstorea?_half\w*")
def vstore_half(g, n, name):
    b = g.b
    cnt = _half_count(name)
    aligned = name.startswith("vstorea")
    parts = name.split("_")
    mode = parts[-1] if parts[-1] in ROUNDING_MODES else None
    data = g.rv(n.kids[0])
    dt = n.kids[0].type
    off = g.to_i64(g.rv(n.kids[1]), n.kids[1].type)
    p = g.rv(n.kids[2])
    step = 4 if (aligned and cnt == 3) else cnt
    addr = b.gep(p, [b.mul(off, I64(step))], source_etype=I16)
    bits = to_half_bits(g, data, dt, mode)
    g.guard_access(n, n.kids[2], addr, 2 * cnt, "write", lambda: _store(b, bits, addr, 2))
    return None
