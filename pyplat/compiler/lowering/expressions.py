"""Expressions of the function generator (a mixin of FuncGen): lvalues and loads, constants,
casts, swizzles, literals and initialisers, calls of user functions and of builtins. Operators
are in operators.py."""
from llvmlite import ir

from .. import builtins as B
from .. import types as T
from .irbuild import LV, I8, I32, I64, PTR


def member_alignment(n, offset, arrow):
    """The alignment a member access may assume where it is below the member type's own: a
    member of a packed struct (alignment 1) at any offset, or at an offset its struct's
    alignment does not cover. None otherwise. x86 forgives a misaligned load; a GPU does not."""
    record = n.kids[0].type
    if arrow and record is not None and record.is_pointer:
        record = record.pointee
    if record is None or not record.is_struct or n.type is None:
        return None
    known = max(record.align, 1)
    while offset % known:
        known //= 2
    return known if known < max(n.type.align, 1) else None


class Expressions:
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
            return LV("addr", b.gep(p, [i], source_etype=T.mem_llvm(n.type)), n.type,
                      check=self.access_check(n, n.kids[0]))
        if op == "vindex":
            base = self.lvalue(n.kids[0])
            if base.kind != "addr":
                self.err("subscript of a vector swizzle is not supported", n)
            i = self.to_i64(self.rv(n.kids[1]), n.kids[1].type)
            return LV("addr", b.gep(base.ptr, [i], source_etype=n.type.llvm()), n.type, check=base.check)
        if op == "deref":
            return LV("addr", self.rv(n.kids[0]), n.type, check=self.access_check(n, n.kids[0]))
        if op == "member":
            off, arrow, _ = n.val
            check = None
            if arrow:
                base = self.rv(n.kids[0])
                check = self.access_check(n, n.kids[0])
            elif n.kids[0].lv:
                base_lv = self.lvalue(n.kids[0])
                if base_lv.kind != "addr":
                    self.err("cannot take the address of a vector swizzle", n)
                base, check = base_lv.ptr, base_lv.check
            else:
                base = self.addr_of(n.kids[0])
            p = b.gep(base, [I64(off)], inbounds=True, source_etype=I8) if off else base
            return LV("addr", p, n.type, align=member_alignment(n, off, arrow), check=check)
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

    def access_check(self, n, pointer):
        """LV.check of an access n through the pointer expression `pointer`: the
        instrumentation's token (PYPLAT_CHECK: a guarded access), else None."""
        return self.mg.instr.access(self, n, pointer)

    def guard_access(self, n, pointer, addr, nbytes, access, do, atomic=False):
        """do() (a load: returns its value; a store: None) of `nbytes` at `addr` through the
        pointer expression `pointer` of call n (vloadN/vstoreN, atomics), instrumented."""
        return self.mg.instr.builtin_access(self, n, pointer, addr, nbytes, access, do, atomic)

    def mark_local_written(self, pointer, addr, nbytes):
        """A builtin wrote `nbytes` (an i64 value) at `addr` through the pointer expression
        `pointer` (PYPLAT_CHECK=uninit: __local bytes then count as written)."""
        self.mg.instr.local_written(self, pointer, addr, nbytes)

    def load_lv(self, lv):
        if lv.kind == "addr":
            if lv.check is not None:
                return self.mg.instr.load(self, lv)
            return self.load(lv.ptr, lv.type, lv.align)
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
            if lv.check is not None:
                self.mg.instr.store(self, lv, v)
                return
            self.store(v, lv.ptr, lv.type, lv.align)
            return
        b = self.b
        base = self.load_lv(lv.base)
        for j, i in enumerate(lv.idx):
            e = b.extract_element(v, I32(j)) if lv.type.is_vector else v
            base = b.insert_element(base, e, I32(i))
        self.store_lv(lv.base, base)

    # -------------------------------------------------------------- rvalues
    def rv(self, n):
        lines = self.mg.line_tables
        if lines is not None:           # -g: this node's instructions come from its position
            before = lines.mark(self.b, n)
            v = self._rv(n)
            self.b.position = before
            return v
        return self._rv(n)

    def _rv(self, n):
        if n.lv:
            v = self.load_lv(self.lvalue(n))
        else:
            h = getattr(self, "x_" + n.op, None)
            if h is None:
                self.err("unsupported expression '%s'" % n.op, n)
            v = h(n)
        if self.values is not None:         # (uninit: a use of v is reported at n)
            self.values.node = n
        return v

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

