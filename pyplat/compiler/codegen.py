"""Lowering: our typed tree -> LLVM IR (llvmlite.ir).

Every variable lives in an alloca (mem2reg/SROA promote them); struct values
are handled by address; each OpenCL function becomes an internal, always-inline
LLVM function taking a hidden `wi` pointer (work-item state) first; each kernel
also gets an exported work-group function following pyplat.compiler.abi.
"""
import struct as _struct
from llvmlite import ir

from . import types as T
from .tree import CompileError
from . import builtins as B

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = T.PTR_LL
VOIDT = ir.VoidType()
WI_SLOTS = 19                  # ctx i64 fields (16) + local ids x,y,z
WI_LID = 16
WI_TYPE = ir.LiteralStructType([ir.ArrayType(I64, WI_SLOTS), PTR])


class Builder(ir.IRBuilder):
    """IRBuilder whose pointers are all opaque `ptr` (no typed-pointer checks)."""

    def gep(self, ptr, indices, inbounds=False, name="", source_etype=None):
        r = super().gep(ptr, indices, inbounds=inbounds, name=name, source_etype=source_etype)
        r.type = PTR
        return r

    def alloca(self, typ, size=None, name=""):
        r = super().alloca(typ, size, name)
        r.type = PTR
        return r


_STMT_LIKE = {"block", "if", "for", "while", "do", "case", "default", "switch", "expr", "decl", "return",
              "break", "continue", "nop", "barrier", "label", "goto"}


class LV:
    """An lvalue: kind 'addr' (ptr, type), 'swz' (base LV, indices, type)."""
    __slots__ = ("kind", "ptr", "type", "base", "idx")

    def __init__(self, kind, ptr=None, type=None, base=None, idx=None):
        self.kind, self.ptr, self.type, self.base, self.idx = kind, ptr, type, base, idx


class ModuleGen:
    def __init__(self, opts, triple="", data_layout=""):
        self.module = ir.Module(name="pyplat")
        self.module.triple = triple
        self.module.data_layout = data_layout
        self.opts = opts
        self.fast = opts.fast_math
        self.fns = {}
        self.globals = {}
        self.intrinsics = {}
        self.pending = []
        self.regions = 0               # parallel regions emitted for kernels with barriers
        self.linkage = {}              # Func -> LLVM linkage when not internal (compiled objects)

    # -------------------------------------------------------------- helpers
    def intrinsic(self, name, ret, args, var_arg=False):
        f = self.intrinsics.get(name)
        if f is None:
            f = self.module.globals.get(name)
            if f is None:
                f = ir.Function(self.module, ir.FunctionType(ret, args, var_arg=var_arg or name == "snprintf"),
                                name=name)
            self.intrinsics[name] = f
        return f

    def global_var(self, v):
        g = self.globals.get(v)
        if g is None:
            t = v.type
            size = t.size
            buf = bytearray(size)
            if v.init is not None:
                _pack(buf, 0, t, v.init)
            g = ir.GlobalVariable(self.module, ir.ArrayType(I8, size), name="__const.%s.%d" % (v.name, len(self.globals)))
            g.initializer = ir.Constant(ir.ArrayType(I8, size), buf)
            g.global_constant = True
            g.linkage = "internal"
            g.align = max(t.align, 1)
            self.globals[v] = g
        return g

    def string(self, data):
        g = self.globals.get(("str", data))
        if g is None:
            ty = ir.ArrayType(I8, len(data))
            g = ir.GlobalVariable(self.module, ty, name="__str.%d" % len(self.globals))
            g.initializer = ir.Constant(ty, bytearray(data))
            g.global_constant = True
            g.linkage = "internal"
            self.globals[("str", data)] = g
        return g

    def function(self, f):
        fn = self.fns.get(f)
        if fn is None:
            args = [PTR]
            if f.ret.is_struct:
                args.append(PTR)
            for p in f.params:
                args.append(PTR if p.type.is_struct else p.type.llvm())
            ret = VOIDT if (f.ret.is_struct or f.ret.is_void) else f.ret.llvm()
            fn = ir.Function(self.module, ir.FunctionType(ret, args), name=("k." if f.is_kernel else "f.") + f.name)
            fn.attributes.add("nounwind")
            if f.body is None:         # declared only: defined in another compilation unit
                self.fns[f] = fn
                return fn
            fn.linkage = self.linkage.get(f, "internal")
            fn.attributes.add("alwaysinline")
            off = 2 if f.ret.is_struct else 1
            for i, p in enumerate(f.params):
                if p.restrict and p.type.is_pointer:
                    fn.args[i + off].add_attribute("noalias")
            self.fns[f] = fn
            self.pending.append(f)
        return fn

    def generate(self, kernels, exported=()):
        """Emit the kernels' work-group functions and every function they use; `exported`:
        further functions to emit (compiled objects: callable from other units)."""
        from . import barriers
        for f in exported:
            self.function(f)
        for k in kernels:
            barriers.inline_barrier_functions(k)
        memo = {}
        with_barriers = [k for k in kernels if barriers.has_barrier(k.body, memo)]
        for k in with_barriers:
            if barriers.uses_goto(k.body):
                raise CompileError("kernel '%s' uses goto together with barrier() (also counted: goto in "
                                   "barrier-using functions it calls, which are inlined): not supported" % k.name, k.cur)
        names = {}
        for k in kernels:
            if k not in with_barriers:
                self.function(k)
        for k in with_barriers:
            names[k.name] = "__pyplat_wg_" + k.name
            barriers.BarrierKernelGen(self, k, names[k.name]).emit()
        while self.pending:
            f = self.pending.pop()
            FuncGen(self, f).emit()
        for k in kernels:
            if k not in with_barriers:
                names[k.name] = self.workgroup_function(k)
        return names

    def workgroup_function(self, k):
        name = "__pyplat_wg_" + k.name
        fn = ir.Function(self.module, ir.FunctionType(VOIDT, [PTR, PTR]), name=name)
        fn.attributes.add("nounwind")
        args_p, ctx = fn.args
        ctx.add_attribute("noalias")
        b = Builder(fn.append_basic_block("entry"))
        wi = b.alloca(WI_TYPE, name="wi")
        slots = b.gep(wi, [I32(0), I32(0)], inbounds=True, source_etype=WI_TYPE)
        reqd = tuple(k.reqd) if k.reqd and all(k.reqd) else None
        for i in range(16):
            if reqd and 4 <= i < 7:
                v = I64(reqd[i - 4])          # reqd_work_group_size: constant loop bounds
            else:
                v = b.load(b.gep(ctx, [I64(i)], inbounds=True, source_etype=I64), typ=I64, align=8)
            b.store(v, b.gep(slots, [I64(0), I64(i)], inbounds=True, source_etype=ir.ArrayType(I64, WI_SLOTS)))
        lm = b.load(b.gep(ctx, [I64(16)], inbounds=True, source_etype=I64), typ=PTR, align=8)
        b.store(lm, b.gep(wi, [I32(0), I32(1)], inbounds=True, source_etype=WI_TYPE))
        callargs = [wi]
        for i, p in enumerate(k.params):
            slot = b.load(b.gep(args_p, [I64(i)], inbounds=True, source_etype=PTR), typ=PTR, align=8)
            t = p.type
            if t.is_struct:
                callargs.append(slot)
            elif t.is_pointer:
                callargs.append(b.load(slot, typ=PTR, align=8))
            else:
                callargs.append(b.load(slot, typ=t.llvm(), align=t.elem.size if t.is_vector else t.align))

        def lsize(d):
            return b.load(b.gep(slots, [I64(0), I64(4 + d)], inbounds=True,
                                source_etype=ir.ArrayType(I64, WI_SLOTS)), typ=I64)

        body = self.fns[k]
        limits = [lsize(2), lsize(1), lsize(0)]
        exit_bb = fn.append_basic_block("exit")
        start_bb = fn.append_basic_block("start")
        empty = b.or_(b.or_(b.icmp_unsigned("==", limits[0], I64(0)), b.icmp_unsigned("==", limits[1], I64(0))),
                      b.icmp_unsigned("==", limits[2], I64(0)))
        b.cbranch(empty, exit_bb, start_bb)
        b.position_at_end(start_bb)
        headers = []
        for level, lim in enumerate(limits):          # loop nest z, y, x (do-while form)
            d = 2 - level
            hdr = fn.append_basic_block("loop%d" % d)
            prev = b.block
            b.branch(hdr)
            b.position_at_end(hdr)
            phi = b.phi(I64, name="lid%d" % d)
            phi.add_incoming(I64(0), prev)
            b.store(phi, b.gep(slots, [I64(0), I64(WI_LID + d)], inbounds=True,
                               source_etype=ir.ArrayType(I64, WI_SLOTS)))
            headers.append((hdr, phi, lim))
        b.call(body, callargs)
        for idx in range(len(headers) - 1, -1, -1):   # close loops innermost first
            hdr, phi, lim = headers[idx]
            nxt = b.add(phi, I64(1))
            phi.add_incoming(nxt, b.block)
            after = fn.append_basic_block("after%d" % (2 - idx))
            b.cbranch(b.icmp_unsigned("<", nxt, lim), hdr, after)
            b.position_at_end(after)
        b.branch(exit_bb)
        b.position_at_end(exit_bb)
        b.ret_void()
        return name


def _pack(buf, off, t, v):
    if t.is_scalar:
        if t.is_float:
            _struct.pack_into({16: "<e", 32: "<f", 64: "<d"}[t.bits], buf, off, float(v))
        else:
            _struct.pack_into("<" + {8: "B", 16: "H", 32: "I", 64: "Q"}[t.bits], buf, off,
                              int(v) & ((1 << t.bits) - 1))
    elif t.is_vector:
        vals = v if isinstance(v, list) else [v] * t.count
        for i, x in enumerate(vals[:t.count]):
            _pack(buf, off + i * t.elem.size, t.elem, x)
    elif t.is_array:
        vals = v if isinstance(v, list) else [v]
        for i, x in enumerate(vals[:t.count]):
            _pack(buf, off + i * t.elem.size, t.elem, x)
    elif t.is_struct:
        vals = v if isinstance(v, list) else [v]
        fields = sorted(t.fields.values(), key=lambda p: p[0])
        for (foff, ft), x in zip(fields, vals):
            _pack(buf, off + foff, ft, x)
    elif t.is_pointer:
        _struct.pack_into("<Q", buf, off, int(v))


class FuncGen:
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
        self.abuild.branch(body)

    def alloca(self, t, name=""):
        a = self.abuild.alloca(T.mem_llvm(t), name=name)
        a.align = max(t.align, 1)
        return a

    # -------------------------------------------------------------- memory
    def load(self, ptr, t):
        if t.is_struct or t.is_array:
            return ptr
        return self.b.load(ptr, typ=t.llvm(), align=max(t.align, 1))

    def store(self, v, ptr, t):
        if t.is_struct or t.is_array:
            self.memcpy(ptr, v, t.size)
        else:
            self.b.store(v, ptr, align=max(t.align, 1))

    def memcpy(self, dst, src, size):
        f = self.mg.intrinsic("llvm.memcpy.p0.p0.i64", VOIDT, [PTR, PTR, I64, I1])
        self.b.call(f, [dst, src, I64(size), I1(0)])

    def memset0(self, dst, size):
        f = self.mg.intrinsic("llvm.memset.p0.i64", VOIDT, [PTR, I8, I64, I1])
        self.b.call(f, [dst, I8(0), I64(size), I1(0)])

    def wi_slot(self, i):
        b = self.b
        p = b.gep(self.wi, [I32(0), I32(0), I64(i)], inbounds=True, source_etype=WI_TYPE)
        return b.load(p, typ=I64, align=8)

    def local_mem(self):
        b = self.b
        p = b.gep(self.wi, [I32(0), I32(1)], inbounds=True, source_etype=WI_TYPE)
        return b.load(p, typ=PTR, align=8)

    # -------------------------------------------------------------- lvalues
    def lvalue(self, n):
        op = n.op
        b = self.b
        if op == "str":
            return LV("addr", self.mg.string(n.val), n.type)
        if op == "var":
            v = n.val
            if v.storage in ("private", "param"):
                p = self.vars.get(v)
                if p is None:
                    self.err("use of variable '%s' before its declaration" % v.name, n)
                return LV("addr", p, n.type)
            if v.storage == "local":
                return LV("addr", b.gep(self.local_mem(), [I64(v.index)], inbounds=True, source_etype=I8), n.type)
            if v.storage == "constant":
                return LV("addr", self.mg.global_var(v), n.type)
            self.err("unsupported variable storage", n)
        if op == "index":
            p = self.rv(n.kids[0])
            i = self.to_i64(self.rv(n.kids[1]), n.kids[1].type)
            return LV("addr", b.gep(p, [i], source_etype=T.mem_llvm(n.type)), n.type)
        if op == "vindex":
            base = self.lvalue(n.kids[0])
            if base.kind != "addr":
                self.err("subscript of a vector swizzle is not supported", n)
            i = self.to_i64(self.rv(n.kids[1]), n.kids[1].type)
            return LV("addr", b.gep(base.ptr, [i], source_etype=n.type.llvm()), n.type)
        if op == "deref":
            return LV("addr", self.rv(n.kids[0]), n.type)
        if op == "member":
            off, arrow, _ = n.val
            if arrow:
                base = self.rv(n.kids[0])
            else:
                base = self.addr_of(n.kids[0])
            p = b.gep(base, [I64(off)], inbounds=True, source_etype=I8) if off else base
            return LV("addr", p, n.type)
        if op == "swz":
            if n.val is None:
                self.err("cannot determine the vector component accessor", n)
            return LV("swz", base=self.lvalue(n.kids[0]), idx=n.val, type=n.type)
        if n.type is not None and (n.type.is_struct or n.type.is_array):
            return LV("addr", self.rv(n), n.type)
        self.err("expression is not assignable (unsupported lvalue '%s')" % op, n)

    def addr_of(self, n):
        if n.lv:
            lv = self.lvalue(n)
            if lv.kind != "addr":
                self.err("cannot take the address of a vector swizzle", n)
            return lv.ptr
        return self.rv(n)      # struct rvalues are addresses

    def load_lv(self, lv):
        if lv.kind == "addr":
            return self.load(lv.ptr, lv.type)
        base = self.load_lv(lv.base)
        return self.shuffle(base, lv.idx, lv.type)

    def shuffle(self, vec, idx, t):
        b = self.b
        if not t.is_vector:
            return b.extract_element(vec, I32(idx[0]))
        return b.shuffle_vector(vec, ir.Constant(vec.type, ir.Undefined),
                                ir.Constant(ir.VectorType(I32, len(idx)), idx))

    def store_lv(self, lv, v):
        if lv.kind == "addr":
            self.store(v, lv.ptr, lv.type)
            return
        b = self.b
        base = self.load_lv(lv.base)
        for j, i in enumerate(lv.idx):
            e = b.extract_element(v, I32(j)) if lv.type.is_vector else v
            base = b.insert_element(base, e, I32(i))
        self.store_lv(lv.base, base)

    # -------------------------------------------------------------- conversions
    def to_i64(self, v, t):
        if t.bits == 64:
            return v
        return self.b.sext(v, I64) if (t.signed and not t.is_bool) else self.b.zext(v, I64)

    def truth(self, v, t):
        """i1 (or <n x i1>) of v != 0."""
        b = self.b
        if t.is_pointer:
            return b.icmp_unsigned("!=", v, ir.Constant(PTR, None))
        if t.is_float:
            return b.fcmp_unordered("!=", v, ir.Constant(v.type, None))
        return b.icmp_unsigned("!=", v, ir.Constant(v.type, None))

    def splat(self, v, t):
        b = self.b
        vt = t.llvm()
        u = b.insert_element(ir.Constant(vt, ir.Undefined), v, I32(0))
        return b.shuffle_vector(u, ir.Constant(vt, ir.Undefined), ir.Constant(ir.VectorType(I32, t.count), None))

    def convert(self, v, s, t, n=None):
        if s == t or t.is_void:
            return v
        b = self.b
        if t.is_bool:
            return b.zext(self.truth(v, s), I8)
        if t.is_pointer:
            if s.is_pointer:
                return v
            if s.is_int:
                return b.inttoptr(v, PTR)
        if s.is_pointer and t.is_int:
            return self.conv_elem(b.ptrtoint(v, I64), T.ULONG, t, t.llvm())
        if t.is_vector and s.is_scalar:
            return self.splat(self.convert(v, s, t.elem), t)
        if t.is_vector and s.is_vector and t.count == s.count:
            return self.conv_elem(v, s.elem, t.elem, t.llvm())
        if t.is_scalar and s.is_scalar:
            return self.conv_elem(v, s, t, t.llvm())
        self.err("unsupported conversion from %s to %s" % (s, t), n)

    def conv_elem(self, v, se, te, lt):
        b = self.b
        if te.is_bool:
            return b.zext(self.truth(v, se), lt)
        if se.is_int and te.is_int:
            if se.bits == te.bits:
                return v
            if se.bits > te.bits:
                return b.trunc(v, lt)
            return b.sext(v, lt) if (se.signed and not se.is_bool) else b.zext(v, lt)
        if se.is_int and te.is_float:
            return b.sitofp(v, lt) if (se.signed and not se.is_bool) else b.uitofp(v, lt)
        if se.is_float and te.is_int:
            return b.fptosi(v, lt) if te.signed else b.fptoui(v, lt)
        if se.bits < te.bits:
            return b.fpext(v, lt)
        if se.bits > te.bits:
            return b.fptrunc(v, lt)
        return v

    def fm(self, instr):
        if self.mg.fast and isinstance(instr, ir.Instruction):
            instr.flags.append("fast")
        return instr

    # -------------------------------------------------------------- rvalues
    def rv(self, n):
        if n.lv:
            return self.load_lv(self.lvalue(n))
        h = getattr(self, "x_" + n.op, None)
        if h is None:
            self.err("unsupported expression '%s'" % n.op, n)
        return h(n)

    def x_const(self, n):
        t = n.type
        if t.is_float:
            return ir.Constant(t.llvm(), float(n.val))
        if t.is_pointer:
            return ir.Constant(PTR, None) if n.val == 0 else self.b.inttoptr(I64(n.val), PTR)
        return ir.Constant(t.llvm(), int(n.val) & ((1 << t.bits) - 1))

    def x_load(self, n):
        return self.load_lv(self.lvalue(n.kids[0]))

    def x_decay(self, n):
        return self.addr_of(n.kids[0])

    def x_addr(self, n):
        return self.addr_of(n.kids[0])

    def x_conv(self, n):
        k = n.kids[0]
        return self.convert(self.rv(k), k.type, n.type, n)

    def x_astype(self, n):
        k = n.kids[0]
        v = self.rv(k)
        s, t = k.type, n.type
        b = self.b
        if s.is_vector and s.count == 3:
            v = self.shuffle(v, [0, 1, 2, 2], T.vector(s.elem, 4))
        if t.is_vector and t.count == 3:
            wide = T.vector(t.elem, 4)
            return self.shuffle(b.bitcast(v, wide.llvm()), [0, 1, 2], t)
        return b.bitcast(v, t.llvm())

    def x_swz(self, n):
        if n.val is None:
            self.err("cannot determine the vector component accessor", n)
        return self.shuffle(self.rv(n.kids[0]), n.val, n.type)

    def x_zero(self, n):
        if n.type.is_struct or n.type.is_array:
            p = self.alloca(n.type)
            self.memset0(p, n.type.size)
            return p
        return ir.Constant(n.type.llvm(), None)

    def x_void(self, n):
        k = n.kids[0]
        if not k.lv:
            self.rv(k)
        return None

    def x_comma(self, n):
        a = n.kids[0]
        if not a.lv:
            self.rv(a)
        return self.rv(n.kids[1])

    def x_veclit(self, n):
        b = self.b
        t = n.type
        vec = ir.Constant(t.llvm(), ir.Undefined)
        i = 0
        for k in n.kids:
            v = self.rv(k)
            if k.type.is_vector:
                for j in range(k.type.count):
                    if i < t.count:
                        vec = b.insert_element(vec, b.extract_element(v, I32(j)), I32(i))
                    i += 1
            else:
                v = self.convert(v, k.type, t.elem, k)
                if i < t.count:
                    vec = b.insert_element(vec, v, I32(i))
                i += 1
        if i == 1 and t.count > 1:
            return self.splat(b.extract_element(vec, I32(0)), t)
        return vec

    def x_initlist(self, n):
        p = self.alloca(n.type)
        self.init_mem(p, n.type, n)
        return p

    def init_mem(self, p, t, n):
        b = self.b
        if n.op == "initlist":
            self.memset0(p, t.size)
            if t.is_array:
                for i, k in enumerate(n.kids[:t.count]):
                    q = b.gep(p, [I64(i)], inbounds=True, source_etype=T.mem_llvm(t.elem))
                    self.init_mem(q, t.elem, k)
            elif t.is_struct:
                fields = sorted(t.fields.values(), key=lambda f: f[0])
                if t.union:
                    fields = fields[:1]
                for (off, ft), k in zip(fields, n.kids):
                    q = b.gep(p, [I64(off)], inbounds=True, source_etype=I8)
                    self.init_mem(q, ft, k)
            else:
                self.store(self.convert(self.rv(n.kids[0]), n.kids[0].type, t, n), p, t)
        elif n.op == "zero":
            self.memset0(p, t.size)
        else:
            self.store(self.rv(n), p, t)

    def x_func(self, n):
        self.err("function designator used as a value", n)

    # arithmetic -------------------------------------------------------
    def arith(self, op, a, c, t, n):
        b = self.b
        if t.is_float:
            f = {"+": b.fadd, "-": b.fsub, "*": b.fmul, "/": b.fdiv, "%": b.frem}.get(op)
            if f is None:
                self.err("invalid operator '%s' for floating-point operands" % op, n)
            return self.fm(f(a, c))
        e = t.elem if t.is_vector else t
        if op in ("<<", ">>"):
            c = b.and_(c, ir.Constant(c.type, e.bits - 1) if not t.is_vector else
                       ir.Constant(c.type, [e.bits - 1] * t.count))
            if op == "<<":
                return b.shl(a, c)
            return b.ashr(a, c) if e.signed else b.lshr(a, c)
        if op == "+":
            return b.add(a, c)
        if op == "-":
            return b.sub(a, c)
        if op == "*":
            return b.mul(a, c)
        if op == "/":
            return b.sdiv(a, c) if e.signed else b.udiv(a, c)
        if op == "%":
            return b.srem(a, c) if e.signed else b.urem(a, c)
        if op == "&":
            return b.and_(a, c)
        if op == "|":
            return b.or_(a, c)
        if op == "^":
            return b.xor(a, c)
        self.err("unsupported operator '%s'" % op, n)

    def compare(self, op, a, c, ot, rt):
        b = self.b
        if ot.is_float:
            r = b.fcmp_unordered(op, a, c) if op == "!=" else b.fcmp_ordered(op, a, c)
        elif ot.is_pointer or not (ot.elem if ot.is_vector else ot).signed or \
                (ot.elem if ot.is_vector else ot).is_bool:
            r = b.icmp_unsigned(op, a, c)
        else:
            r = b.icmp_signed(op, a, c)
        if rt.is_vector:
            return b.sext(r, rt.llvm())
        return b.zext(r, rt.llvm())

    def x_bin(self, n):
        op = n.val
        ka, kc = n.kids
        fused = self.contracted(n)
        if fused is not None:
            return fused
        a, c = self.rv(ka), self.rv(kc)
        at, ct, t = ka.type, kc.type, n.type
        b = self.b
        if at.is_pointer or ct.is_pointer:
            if op in ("<", ">", "<=", ">=", "==", "!="):
                if not at.is_pointer:
                    a = b.inttoptr(a, PTR)
                if not ct.is_pointer:
                    c = b.inttoptr(c, PTR)
                return self.compare(op, a, c, T.Pointer(T.VOID), t)
            if at.is_pointer and ct.is_pointer and op == "-":
                d = b.sub(b.ptrtoint(a, I64), b.ptrtoint(c, I64))
                size = max(at.pointee.size, 1)
                return b.sdiv(d, I64(size)) if size > 1 else d
            if ct.is_pointer:
                a, c, at, ct = c, a, ct, at
            i = self.to_i64(c, ct)
            if op == "-":
                i = b.neg(i)
            elif op != "+":
                self.err("invalid pointer arithmetic", n)
            pe = at.pointee
            return b.gep(a, [i], source_etype=T.mem_llvm(pe) if not pe.is_void else I8)
        if op in ("<", ">", "<=", ">=", "==", "!="):
            if at != ct:
                c = self.convert(c, ct, at, n)
            return self.compare(op, a, c, at, t)
        if op in ("<<", ">>"):
            c = self.convert(c, ct, at, n)
            return self.arith(op, a, c, at, n)
        if at != t:
            a = self.convert(a, at, t, n)
        if ct != t:
            c = self.convert(c, ct, t, n)
        return self.arith(op, a, c, t, n)

    def contracted(self, n):
        """a*b + c, c + a*b, a*b - c, c - a*b in floating point -> llvm.fmuladd, as clang emits
        it: OpenCL C's FP_CONTRACT is on by default, so a multiply and an add of one expression
        may be fused (one rounding; a single FMA instruction where the CPU has one)."""
        t = n.type
        if n.val not in ("+", "-") or not t.is_float or (t.elem if t.is_vector else t).bits not in (32, 64):
            return None
        ka, kc = n.kids
        for mul, other in ((ka, kc), (kc, ka)):
            if mul.op == "bin" and mul.val == "*" and not mul.lv and mul.type == t and other.type == t:
                break
        else:
            return None
        x, y = (self.convert(self.rv(k), k.type, t, k) for k in mul.kids)
        z = self.rv(other)
        b = self.b
        if n.val == "-":
            if mul is ka:
                z = self.fm(b.fneg(z))
            else:
                x = self.fm(b.fneg(x))
        ll = t.llvm()
        fn = self.mg.intrinsic("llvm.fmuladd." + ("v%df%d" % (t.count, t.elem.bits) if t.is_vector
                                                  else "f%d" % t.bits), ll, [ll, ll, ll])
        return self.fm(b.call(fn, [x, y, z]))

    def x_unary(self, n):
        k = n.kids[0]
        v = self.rv(k)
        b = self.b
        t = k.type
        if n.val == "-":
            if t.is_float:
                return self.fm(b.fneg(v))
            return b.neg(v)
        if n.val == "~":
            return b.not_(v)
        # logical not
        if t.is_vector:
            z = b.fcmp_ordered("==", v, ir.Constant(v.type, None)) if t.is_float else \
                b.icmp_unsigned("==", v, ir.Constant(v.type, None))
            return b.sext(z, n.type.llvm())
        return b.zext(b.not_(self.truth(v, t)), n.type.llvm())

    def x_assign(self, n):
        lv = self.lvalue(n.kids[0])
        v = self.rv(n.kids[1])
        st, dt = n.kids[1].type, n.kids[0].type
        if st != dt and not (dt.is_struct or dt.is_array):
            v = self.convert(v, st, dt, n)
        self.store_lv(lv, v)
        return v

    def x_cassign(self, n):
        lk, rk = n.kids
        lv = self.lvalue(lk)
        old = self.load_lv(lv)
        rhs = self.rv(rk)
        lt, rt = lk.type, rk.type
        op = n.val
        b = self.b
        if lt.is_pointer:
            i = self.to_i64(rhs, rt)
            if op == "-":
                i = b.neg(i)
            res = b.gep(old, [i], source_etype=T.mem_llvm(lt.pointee) if not lt.pointee.is_void else I8)
        elif op in ("<<", ">>"):
            res = self.arith(op, old, self.convert(rhs, rt, lt, n), lt, n)
        else:
            ct = rt if not (lt.is_vector and rt.is_scalar) else lt
            a = self.convert(old, lt, ct, n)
            r = self.arith(op, a, self.convert(rhs, rt, ct, n), ct, n)
            res = self.convert(r, ct, lt, n)
        self.store_lv(lv, res)
        return res

    def x_incdec(self, n):
        k = n.kids[0]
        lv = self.lvalue(k)
        old = self.load_lv(lv)
        t = k.type
        delta, post = n.val
        b = self.b
        if t.is_pointer:
            new = b.gep(old, [I64(delta)], source_etype=T.mem_llvm(t.pointee))
        elif t.is_float or (t.is_vector and t.elem.is_float):
            one = ir.Constant(old.type, float(delta)) if t.is_scalar else \
                ir.Constant(old.type, [float(delta)] * t.count)
            new = self.fm(b.fadd(old, one))
        elif t.is_bool:
            new = I8(1) if delta > 0 else b.xor(old, I8(1))
        else:
            one = ir.Constant(old.type, delta) if t.is_scalar else ir.Constant(old.type, [delta] * t.count)
            new = b.add(old, one)
        self.store_lv(lv, new)
        return old if post else new

    def x_land(self, n):
        return self.logic(n, True)

    def x_lor(self, n):
        return self.logic(n, False)

    def logic(self, n, is_and):
        ka, kc = n.kids
        b = self.b
        if n.type.is_vector:
            a = self.truth(self.rv(ka), ka.type)
            c = self.truth(self.rv(kc), kc.type)
            r = b.and_(a, c) if is_and else b.or_(a, c)
            return b.sext(r, n.type.llvm())
        a = self.truth(self.rv(ka), ka.type)
        start = b.block
        rhs_bb = b.append_basic_block("logic.rhs")
        end_bb = b.append_basic_block("logic.end")
        if is_and:
            b.cbranch(a, rhs_bb, end_bb)
        else:
            b.cbranch(a, end_bb, rhs_bb)
        b.position_at_end(rhs_bb)
        c = self.truth(self.rv(kc), kc.type)
        rhs_end = b.block
        b.branch(end_bb)
        b.position_at_end(end_bb)
        phi = b.phi(I1)
        phi.add_incoming(I1(0 if is_and else 1), start)
        phi.add_incoming(c, rhs_end)
        return b.zext(phi, n.type.llvm())

    def x_cond(self, n):
        kc, ka, kb = n.kids
        b = self.b
        if kc.type.is_vector:
            c = self.rv(kc)
            a, d = self.rv(ka), self.rv(kb)
            m = b.icmp_signed("<", c, ir.Constant(c.type, None))
            return b.select(m, a, d)
        c = self.truth(self.rv(kc), kc.type)
        t_bb = b.append_basic_block("cond.true")
        f_bb = b.append_basic_block("cond.false")
        e_bb = b.append_basic_block("cond.end")
        b.cbranch(c, t_bb, f_bb)
        b.position_at_end(t_bb)
        a = self.convert(self.rv(ka), ka.type, n.type, n) if not n.type.is_void else self.rv(ka)
        t_end = b.block
        b.branch(e_bb)
        b.position_at_end(f_bb)
        d = self.convert(self.rv(kb), kb.type, n.type, n) if not n.type.is_void else self.rv(kb)
        f_end = b.block
        b.branch(e_bb)
        b.position_at_end(e_bb)
        if n.type.is_void:
            return None
        phi = b.phi(a.type)
        phi.add_incoming(a, t_end)
        phi.add_incoming(d, f_end)
        return phi

    def x_call(self, n):
        f = n.val
        fn = self.mg.function(f)
        args = [self.wi]
        res = None
        if f.ret.is_struct:
            res = self.alloca(f.ret)
            args.append(res)
        for k, p in zip(n.kids, f.params):
            v = self.rv(k)
            if k.type != p.type and not p.type.is_struct:
                v = self.convert(v, k.type, p.type, k)
            args.append(v)
        r = self.b.call(fn, args)
        if f.ret.is_struct:
            return res
        return None if f.ret.is_void else r

    def x_barrier(self, n):
        self.err("barrier() must be a statement of its own", n)

    def x_builtin(self, n):
        return B.lower(self, n)

    # -------------------------------------------------------------- statements
    def stmt(self, n):
        if n is None:
            return
        b = self.b
        if b.block.is_terminated:
            b.position_at_end(b.append_basic_block("dead"))
        op = n.op
        if op == "block":
            for k in n.kids:
                self.stmt(k)
        elif op == "nop":
            pass
        elif op == "label":
            bb = self.label_block(n.val)
            if not b.block.is_terminated:
                b.branch(bb)
            b.position_at_end(bb)
            self.stmt(n.kids[0])
        elif op == "goto":
            b.branch(self.label_block(n.val))
        elif op == "barrier":
            self.err("barrier() in a function called from a kernel is not supported yet "
                     "(call it in the kernel itself)", n)
        elif op == "expr":
            e = n.kids[0]
            if e.lv:
                self.lvalue(e)
            else:
                self.rv(e)
        elif op == "decl":
            v = n.val
            slot = self.alloca(v.type, v.name)
            self.vars[v] = slot
            if n.kids:
                self.init_mem(slot, v.type, n.kids[0])
        elif op == "if":
            c, then, els = n.kids
            cv = self.truth(self.rv(c), c.type)
            t_bb = b.append_basic_block("if.then")
            e_bb = b.append_basic_block("if.else") if els is not None else None
            end = b.append_basic_block("if.end")
            b.cbranch(cv, t_bb, e_bb or end)
            b.position_at_end(t_bb)
            self.stmt(then)
            if not b.block.is_terminated:
                b.branch(end)
            if els is not None:
                b.position_at_end(e_bb)
                self.stmt(els)
                if not b.block.is_terminated:
                    b.branch(end)
            b.position_at_end(end)
        elif op in ("for", "while", "do"):
            self.loop(n)
        elif op == "switch":
            self.switch(n)
        elif op in ("case", "default"):
            if not getattr(self, "cases", None):
                self.err("case label outside of a switch", n)
            bb = self.cases[-1][id(n)]
            if not b.block.is_terminated:
                b.branch(bb)
            b.position_at_end(bb)
            self.stmt(n.kids[0])
        elif op == "break":
            if not self.loops:
                self.err("break outside of a loop", n)
            b.branch(self.loops[-1][0])
        elif op == "continue":
            tgt = self.continue_target()
            if tgt is None:
                self.err("continue outside of a loop", n)
            b.branch(tgt[1])
        elif op == "return":
            if n.kids:
                k = n.kids[0]
                v = self.rv(k)
                if self.sret is not None:
                    self.memcpy(self.sret, v, self.f.ret.size)
                    b.ret_void()
                else:
                    b.ret(self.convert(v, k.type, self.f.ret, n))
            else:
                b.ret_void()
        else:
            self.err("unsupported statement '%s'" % op, n)

    def label_block(self, name):
        labels = self.__dict__.setdefault("labels", {})
        bb = labels.get(name)
        if bb is None:
            bb = labels[name] = self.b.append_basic_block("label." + name)
        return bb

    def continue_target(self):
        """The innermost loop (not switch) entry of the loop stack, or None."""
        for e in reversed(self.loops):
            if not (isinstance(e, tuple) and len(e) == 3):
                return e
        return None

    def switch(self, n):
        b = self.b
        cond, body = n.kids
        v = self.rv(cond)
        end_bb = b.append_basic_block("sw.end")
        labels, default = {}, None
        found = []

        def collect(x):
            if x is None or not hasattr(x, "op") or x.op == "switch":
                return
            if x.op in ("case", "default"):
                found.append(x)
            for k in x.kids:
                if k is not None and hasattr(k, "op") and k.op in _STMT_LIKE:
                    collect(k)
        collect(body)
        blocks = {}
        for c in found:
            blocks[id(c)] = b.append_basic_block("sw.case" if c.op == "case" else "sw.default")
            if c.op == "default":
                default = blocks[id(c)]
        sw = b.switch(v, default or end_bb)
        seen = set()
        for c in found:
            if c.op == "case":
                cv = c.val & ((1 << cond.type.bits) - 1)
                if cv in seen:
                    continue
                seen.add(cv)
                sw.add_case(ir.Constant(v.type, cv), blocks[id(c)])
        if not hasattr(self, "cases"):
            self.cases = []
        self.cases.append(blocks)
        self.loops.append((end_bb, None, "switch"))
        b.position_at_end(b.append_basic_block("sw.body"))
        self.stmt(body)
        self.loops.pop()
        self.cases.pop()
        if not b.block.is_terminated:
            b.branch(end_bb)
        b.position_at_end(end_bb)

    def loop(self, n):
        def body(stmt, end_bb, inc_bb):
            self.loops.append((end_bb, inc_bb))
            self.stmt(stmt)
            self.loops.pop()

        def inc(expr):
            if expr.lv:
                self.lvalue(expr)
            else:
                self.rv(expr)
        self.emit_loop(n, "loop", self.stmt, lambda c: self.truth(self.rv(c), c.type), body, inc)

    def emit_loop(self, n, prefix, init_fn, cond_fn, body_fn, inc_fn):
        """The block skeleton of for / while / do, shared by plain and barrier-split code:
        init; cond -> body -> inc -> cond; end. body_fn(stmt, end_bb, inc_bb) gets the targets
        of break and continue."""
        b = self.b
        if n.op == "for":
            init, cond, inc, body = n.kids
        elif n.op == "while":
            (cond, body), init, inc = n.kids, None, None
        else:
            (body, cond), init, inc = n.kids, None, None
        if init is not None:
            init_fn(init)
        cond_bb, body_bb, inc_bb, end_bb = (b.append_basic_block(f"{prefix}.{part}")
                                            for part in ("cond", "body", "inc", "end"))
        b.branch(body_bb if n.op == "do" else cond_bb)
        b.position_at_end(cond_bb)
        if cond is not None:
            b.cbranch(cond_fn(cond), body_bb, end_bb)
        else:
            b.branch(body_bb)
        b.position_at_end(body_bb)
        body_fn(body, end_bb, inc_bb)
        if not b.block.is_terminated:
            b.branch(inc_bb)
        b.position_at_end(inc_bb)
        if inc is not None:
            inc_fn(inc)
        b.branch(cond_bb)
        b.position_at_end(end_bb)
