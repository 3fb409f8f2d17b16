"""printf (OpenCL C spec, "printf"): the format is parsed at compile time into a C format
(vectors %vN expanded element by element, OpenCL length modifiers mapped to C's), formatted with
snprintf and written to file descriptor 1 with one write() per call (no Python-level buffering
involved)."""
import re

from llvmlite import ir

from .. import types as T
from ..tree import CompileError
from .helpers import F64, I32, I64
from .registry import builtin

CONVERSION = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d+|\*)?(?:\.(?P<prec>\d*|\*))?"
                        r"(?P<vec>v(?:16|2|3|4|8))?(?P<len>hh|hl|h|ll|l)?(?P<conv>[diouxXfFeEgGaAcsp%])")
BUFFER = 1024           # bytes on the stack; longer output is formatted again into malloc'd memory


def _format_literal(node):
    while node.op in ("conv", "decay", "load") and node.kids:
        node = node.kids[0]
    return node.val if node.op == "str" else None


@builtin("printf")
def printf(g, n, name):
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
    for m in CONVERSION.finditer(fmt):
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
    buf = g.alloca(T.Array(T.CHAR, BUFFER))
    nchars = b.call(snprintf, [buf, I64(BUFFER), gfmt] + vals)
    n64 = b.sext(nchars, I64)
    fits = b.icmp_signed("<", n64, I64(BUFFER))
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
