"""FuncGen: lowers one OpenCL function (kernel or helper) to an LLVM function.

Every variable lives in an alloca of the entry block (mem2reg/SROA promote them); struct values
are handled by address. The function takes the hidden work-item state `wi` first (irbuild.WI_TYPE),
then (for a struct result) the result's address, then its parameters. Its methods are grouped by
concept in mixins: expressions, operators, conversions, statements; the builtins' lowering
functions (builtins) receive a FuncGen and use the same methods.
"""
from llvmlite import ir

from .. import types as T
from ..tree import CompileError
from .irbuild import Builder, I1, I8, I32, I64, PTR, VOIDT, WI_TYPE
from .conversions import Conversions
from .expressions import Expressions
from .operators import Operators
from .statements import Statements


class FuncGen(Statements, Expressions, Operators, Conversions):
    values = None           # the instrumentation's ValueHooks for this function, or None

    def __init__(self, mg, f):
        self.mg, self.f = mg, f
        self.fn = mg.fns[f]
        self.vars = {}
        self.loops = []

    def err(self, msg, n):
        raise CompileError(msg, n.cur if n is not None else self.f.cur)

    # -------------------------------------------------------------- function
    def emit(self):
        f, fn = self.f, self.fn
        entry = fn.append_basic_block("entry")
        self.entry = entry
        self.abuild = Builder(entry)          # allocas only; branch to body added at the end
        body = fn.append_basic_block("body")
        self.b = Builder(body)
        self.values = self.b.values = self.mg.instr.values(self)
        self.wi = fn.args[0]
        off = 1
        self.sret = None
        if f.ret.is_struct:
            self.sret = fn.args[1]
            off = 2
        for i, p in enumerate(f.params):
            a = fn.args[i + off]
            slot = self.alloca(p.type, p.name)
            self.store(a, slot, p.type)
            self.vars[p] = slot
        self.stmt(f.body)
        if not self.b.block.is_terminated:
            if f.ret.is_void or f.ret.is_struct:
                self.b.ret_void()
            else:
                self.b.ret(ir.Constant(f.ret.llvm(), ir.Undefined))
        if self.values is not None:
            self.values.finish()
            self.b.values = None
        self.abuild.branch(body)

    def alloca(self, t, name=""):
        a = self.abuild.alloca(T.mem_llvm(t), name=name)
        a.align = max(t.align, 1)
        if self.values is not None:
            self.values.variable(a, t)
        return a

    # -------------------------------------------------------------- memory
    def load(self, ptr, t, align=None):
        """align: the address's known alignment where below the type's (LV.align)."""
        if t.is_struct or t.is_array:
            return ptr
        return self.b.load(ptr, typ=t.llvm(), align=align or max(t.align, 1))

    def store(self, v, ptr, t, align=None):
        if t.is_struct or t.is_array:
            self.memcpy(ptr, v, t.size)
        else:
            self.b.store(v, ptr, align=align or max(t.align, 1))

    def memcpy(self, dst, src, size):
        f = self.mg.intrinsic("llvm.memcpy.p0.p0.i64", VOIDT, [PTR, PTR, I64, I1])
        self.b.call(f, [dst, src, I64(size), I1(0)])

    def memset0(self, dst, size):
        f = self.mg.intrinsic("llvm.memset.p0.i64", VOIDT, [PTR, I8, I64, I1])
        self.b.call(f, [dst, I8(0), I64(size), I1(0)])

    def wi_slot(self, i):
        """i64 slot i of the work-item state: abi.CTX_* + d (the context's fields), abi.WI_LOCAL_ID + d."""
        b = self.b
        p = b.gep(self.wi, [I32(0), I32(0), I64(i)], inbounds=True, source_etype=WI_TYPE)
        return b.load(p, typ=I64, align=8)

    def local_mem(self):
        """The work-group's local memory (kernel-scope __local variables live at fixed offsets)."""
        b = self.b
        p = b.gep(self.wi, [I32(0), I32(1)], inbounds=True, source_etype=WI_TYPE)
        return b.load(p, typ=PTR, align=8)

