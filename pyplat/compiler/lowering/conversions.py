"""Value conversions of the function generator (a mixin of FuncGen: uses self.b, self.err)."""
from llvmlite import ir

from .. import types as T
from .irbuild import I8, I32, I64, PTR


class Conversions:
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

