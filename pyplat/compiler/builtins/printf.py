"""printf (OpenCL C spec, "printf"): the format is parsed at compile time into a C format
(vectors %vN expanded element by element, OpenCL length modifiers mapped to C's, string-literal
%s arguments folded into the text) and a list of C vararg values; the module generator emits the
call (`mg.emit_printf`): on the host `emit_host_printf` below, snprintf and one write() to file
descriptor 1 per call (no Python-level buffering involved); on NVPTX a record in a device buffer
that the host formats after the launch (targets/nvptx/printf.py)."""
import re

from llvmlite import ir

from .. import types as T
from ..tree import CompileError
from .helpers import F64, I32, I64
from .registry import builtin

CONVERSION = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d+|\*)?(?:\.(?P<prec>\d*|\*))?"
                        r"(?P<vec>v(?:16|2|3|4|8))?(?P<len>hh|hl|h|ll|l)?(?P<conv>[diouxXfFeEgGaAcsp%])")
BUFFER = 1024           # bytes on the stack; longer output is formatted again into malloc'd memory


def _string_literal(node):
    """The bytes of a string literal argument (up to its first NUL), else None."""
    while node.op in ("conv", "decay", "load") and node.kids:
        node = node.kids[0]
    return node.val.split(b"\0", 1)[0] if node.op == "str" else None


@builtin("printf")
def printf(g, n, name):
    kids = n.kids
    fmt = _string_literal(kids[0]) if kids else None
    if fmt is None:
        raise CompileError("printf: the format must be a string literal", n.cur)
    c_format, values = parse(g, n, fmt.decode("latin-1"), list(kids[1:]))
    return g.mg.emit_printf(g, c_format, values)


def parse(g, n, fmt, args):
    """(C format bytes without the terminating NUL, C vararg values) of OpenCL format `fmt`
    applied to argument nodes `args` (lowered here, in order)."""
    out, vals = [], []
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
        literal = _string_literal(a) if conv == "s" and not m.group("vec") else None
        if literal is not None:
            out.append(_padded_string(m, literal.decode("latin-1")).replace("%", "%%"))
            continue
        if conv == "s" and not g.mg.PRINTF_STRING_POINTERS:
            raise CompileError("printf: the argument of %s must be a string literal on this device "
                               "(OpenCL C requires one)" % m.group(0), n.cur)
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
                x = g.b.extract_element(v, I32(i))
                pieces.append(_c_spec(head, ln, conv, x, t.elem, vals, g))
            out.append(",".join(pieces))
        else:
            if t.is_vector:
                raise CompileError("printf: vector argument needs a %vN conversion", n.cur)
            out.append(_c_spec(head, ln, conv, v, t, vals, g))
    out.append(fmt[pos:].replace("%", "%%"))
    return "".join(out).encode("latin-1"), vals


def _padded_string(m, text):
    """What C prints for conversion m (an %s) of string `text`: cut to the precision, padded
    with spaces to the width (on the right with '-'; the other flags do nothing for %s)."""
    prec = m.group("prec")
    if prec is not None:
        text = text[:int(prec or 0)]
    width = int(m.group("width") or 0)
    return text.ljust(width) if "-" in m.group("flags") else text.rjust(width)


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


def emit_host_printf(g, c_format, values):
    """The host's printf: snprintf into a stack buffer (malloc'd memory when longer), then one
    write(1, ...); returns 0, or -1 when snprintf fails."""
    b = g.b
    gfmt = g.mg.string(c_format + b"\0")
    snprintf = g.mg.intrinsic("snprintf", I32, [T.PTR_LL, I64, T.PTR_LL])
    if not snprintf.function_type.var_arg:
        raise CompileError("internal: snprintf declared without varargs")
    write = g.mg.intrinsic("write", I64, [I32, T.PTR_LL, I64])
    buf = g.alloca(T.Array(T.CHAR, BUFFER))
    nchars = b.call(snprintf, [buf, I64(BUFFER), gfmt] + values)
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
    b.call(snprintf, [heap, size, gfmt] + values)
    b.call(write, [I32(1), heap, n64])
    b.call(g.mg.intrinsic("free", ir.VoidType(), [T.PTR_LL]), [heap])
    b.branch(done_bb)
    b.position_at_end(done_bb)
    return b.select(neg, I32(-1), I32(0))
