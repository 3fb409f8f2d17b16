"""IR building blocks shared by every lowering module: LLVM types, the Builder, lvalues."""
from llvmlite import ir

from .. import abi
from .. import types as T

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = T.PTR_LL
VOIDT = ir.VoidType()

# The work-item state `wi` (abi.py): the context's i64 slots, the local ids, the local-memory
# pointer, and an instrumentation's frame (Instrumentation.frame: PYPLAT_CHECK's check frame).
WI_SLOTS = abi.WI_SLOTS
WI_LID = abi.WI_LOCAL_ID
WI_SLOTS_TYPE = ir.ArrayType(I64, WI_SLOTS)
WI_TYPE = ir.LiteralStructType([WI_SLOTS_TYPE, PTR, PTR])
WI_FRAME = 2                    # the instrumentation frame's field (the tool stores it there)


class Builder(ir.IRBuilder):
    """IRBuilder whose pointers are all opaque `ptr` (no typed-pointer checks). `values`: the
    function's instrumentation.ValueHooks (PYPLAT_CHECK=uninit's), which see every instruction.
    `position`: with line tables (-g), the source (file, line, column) that instructions built
    now come from (line_tables.py makes them debug locations)."""
    values = None
    position = None

    def _insert(self, instr):
        if self.position is not None:
            instr.source_position = self.position
        d = self.values
        if d is None or d.quiet:
            super()._insert(instr)
            return
        d.quiet = True                  # (its own instructions come through here too)
        d.before(self, instr)
        super()._insert(instr)
        d.after(self, instr)
        d.quiet = False

    def gep(self, ptr, indices, inbounds=False, name="", source_etype=None):
        r = super().gep(ptr, indices, inbounds=inbounds, name=name, source_etype=source_etype)
        r.type = PTR
        return r

    def alloca(self, typ, size=None, name=""):
        r = super().alloca(typ, size, name)
        r.type = PTR
        return r


class LV:
    """An lvalue: kind 'addr' (ptr, type), 'swz' (base LV, indices, type). `align`: what is
    known of the address's alignment where it is less than the type's (a member of a packed
    struct); None: the type's own. `check`: the instrumentation's token of an access through a
    pointer (Instrumentation.access: its load and store hooks take the lvalue); None: plain."""
    __slots__ = ("kind", "ptr", "type", "base", "idx", "align", "check")

    def __init__(self, kind, ptr=None, type=None, base=None, idx=None, align=None, check=None):
        self.kind, self.ptr, self.type, self.base, self.idx = kind, ptr, type, base, idx
        self.align, self.check = align, check
