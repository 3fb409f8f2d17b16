"""Operators of the function generator (a mixin of FuncGen): arithmetic, comparisons, logical
operators, assignments, increments, ?:, and contraction of a*b+c into llvm.fmuladd."""
from llvmlite import ir

from .. import types as T
from .irbuild import I1, I8, I64, PTR


def _constant_divisor_is_safe(c, e):
    """Whether c is a constant divisor (scalar or vector) with no 0 lane, and no -1 lane when
    the element type e is signed: then the division cannot trap."""
    if not isinstance(c, ir.Constant):
        return False
    vals = c.constant if isinstance(c.type, ir.VectorType) else [c.constant]
    if not isinstance(vals, (list, tuple)):
        return False
    mask = (1 << e.bits) - 1
    for v in vals:
        if isinstance(v, ir.Constant):
            v = v.constant
        if not isinstance(v, int) or v & mask == 0 or (e.signed and v & mask == mask):
            return False
    return True


class Operators:
    def fm(self, instr):
        if self.mg.fast and isinstance(instr, ir.Instruction):
            instr.flags.append("fast")
        return instr

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
        if op in ("/", "%"):
            return self.int_divide(op, a, c, t, n)
        if op == "&":
            return b.and_(a, c)
        if op == "|":
            return b.or_(a, c)
        if op == "^":
            return b.xor(a, c)
        self.err("unsupported operator '%s'" % op, n)

    def int_divide(self, op, a, c, t, n=None):
        """Integer a / c or a % c that never traps (x86 `idiv` raises SIGFPE, which would take
        the host down): division by zero and, for signed types, MIN / -1 are undefined in OpenCL
        C, so the divisor is replaced by 1 in those lanes. x / 0 then gives x and x % 0 gives 0;
        MIN / -1 gives MIN (the wrapped quotient) and MIN % -1 gives 0 (the true remainder).
        A constant divisor with no zero (and no -1 for signed types) needs no check."""
        b = self.b
        e = t.elem if t.is_vector else t
        safe_const = _constant_divisor_is_safe(c, e)
        if not safe_const:
            def splat(v):
                return ir.Constant(c.type, [v] * t.count if t.is_vector else v)
            bad = b.icmp_unsigned("==", c, splat(0))
            self.mg.instr.division(self, n, bad, e.bits // 8)     # (PYPLAT_CHECK=divzero: reported)
            if e.signed:
                lowest = splat(-(1 << (e.bits - 1)))
                overflow = b.and_(b.icmp_signed("==", a, lowest), b.icmp_signed("==", c, splat(-1)))
                bad = b.or_(bad, overflow)
            c = b.select(bad, splat(1), c)
        if op == "/":
            return b.sdiv(a, c) if e.signed else b.udiv(a, c)
        return b.srem(a, c) if e.signed else b.urem(a, c)

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
        may be fused (one rounding; a single FMA instruction where the CPU has one); where the
        pragma says OFF (compiler/pragmas.py), never."""
        t = n.type
        if n.val not in ("+", "-") or not t.is_float or (t.elem if t.is_vector else t).bits not in (32, 64):
            return None
        pragma = self.mg.fp_contract
        if pragma is not None and not pragma.allowed(n.cur):      # #pragma OPENCL FP_CONTRACT OFF
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
            # computed in the promoted left operand's type (C's integer promotions: a char or
            # short scalar shifts as an int, so its count is masked to 5 bits, not 3 or 4)
            st = T.INT if lt.is_scalar and not lt.is_float and lt.bits < 32 else lt
            r = self.arith(op, self.convert(old, lt, st, n), self.convert(rhs, rt, st, n), st, n)
            res = self.convert(r, st, lt, n)
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
        control = None if self.values is None else self.values.branch_on(b, a)     # (uninit)
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
        if self.values is not None:
            self.values.end_branch(control)
            self.values.chosen_by(b, phi, a)
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
        control = None if self.values is None else self.values.branch_on(b, c)     # (uninit)
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
        if self.values is not None:
            self.values.end_branch(control)
        if n.type.is_void:
            return None
        phi = b.phi(a.type)
        phi.add_incoming(a, t_end)
        phi.add_incoming(d, f_end)
        if self.values is not None:
            self.values.chosen_by(b, phi, c)
        return phi

