"""printf on NVPTX: each call appends a record to a device buffer, which the host formats with
the C library's snprintf after the launch (devices/cuda/printf_output.py). The buffer and its
records are laid out as abi.py says.

A call claims its record's size with one atomic add on the cursor; when the record fits in the
buffer it is stored and printf returns 0, else nothing is stored and printf returns -1 (the
cursor keeps counting, so the host knows output was dropped). The format id is a hash of the C
format and the kinds, so the same printf has the same id in every program; the module generator
keeps the table {id: (C format, kinds)} that travels with the build result (printf_formats).
"""
import zlib

from llvmlite import ir

from ...lowering.irbuild import I32, I64, PTR
from ...tree import CompileError
from .abi import PRINTF_BUFFER_BYTES, PRINTF_HEADER_BYTES, PRINTF_SYMBOL, RECORD_HEADER_BYTES, VALUE_BYTES

GLOBAL = 1                       # the global-memory address space
_KINDS = {"i32": "i", "i64": "l", "double": "d", "ptr": "p"}


def value_kind(v):
    """The record kind of a printf vararg value (what builtins/printf.py makes: i32, i64, double
    or a pointer)."""
    kind = "p" if isinstance(v.type, ir.PointerType) else _KINDS.get(str(v.type))
    if kind is None:
        raise CompileError("internal: printf value of type %s" % v.type)
    return kind


def format_id(c_format, kinds, taken):
    """A 32-bit id of (C format bytes, kinds) stable across programs; `taken`: the module's
    table, so that the (unlikely) collision of two formats in one program gets the next id."""
    fid = zlib.crc32(c_format + b"\0" + kinds.encode())
    entry = (c_format.decode("latin-1"), kinds)
    while fid in taken and taken[fid] != entry:
        fid = (fid + 1) & 0xFFFFFFFF
    taken[fid] = entry
    return fid


def printf_buffer(module):
    g = module.globals.get(PRINTF_SYMBOL)
    if g is None:
        ty = ir.ArrayType(I64, PRINTF_BUFFER_BYTES // 8)
        g = ir.GlobalVariable(module, ty, name=PRINTF_SYMBOL, addrspace=GLOBAL)
        g.initializer = ir.Constant(ty, None)
        g.align = 8
    return g


def emit_record(mg, g, c_format, values):
    """printf's call on NVPTX: claim a record, store it when it fits; returns 0 or -1 (i32)."""
    b = g.b
    kinds = "".join(value_kind(v) for v in values)
    fid = format_id(c_format, kinds, mg.printf_formats)
    size = RECORD_HEADER_BYTES + VALUE_BYTES * len(values)
    capacity = PRINTF_BUFFER_BYTES - PRINTF_HEADER_BYTES
    if size > capacity:
        raise CompileError("printf: too many values for the device's printf buffer")
    buf = b.addrspacecast(printf_buffer(mg.module), PTR)
    offset = b.atomic_rmw("add", buf, I64(size), "monotonic")
    fits = b.icmp_unsigned("<=", offset, I64(capacity - size))
    store_bb = g.fn.append_basic_block("printf.store")
    done_bb = g.fn.append_basic_block("printf.done")
    b.cbranch(fits, store_bb, done_bb)
    b.position_at_end(store_bb)
    record = b.gep(buf, [b.add(offset, I64(PRINTF_HEADER_BYTES))], source_etype=ir.IntType(8))
    b.store(I32(fid), record, align=8)
    b.store(I32(size), b.gep(record, [I64(4)], source_etype=ir.IntType(8)), align=4)
    for i, v in enumerate(values):
        if isinstance(v.type, ir.PointerType):
            v = b.ptrtoint(v, I64)
        elif v.type == I32:
            v = b.zext(v, I64)
        slot = b.gep(record, [I64(RECORD_HEADER_BYTES + VALUE_BYTES * i)], source_etype=ir.IntType(8))
        b.store(v, slot, align=8)
    b.branch(done_bb)
    b.position_at_end(done_bb)
    return b.select(fits, I32(0), I32(-1))
