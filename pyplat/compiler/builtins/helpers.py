"""IR helpers the builtin lowerings share: LLVM intrinsics and libm calls by OpenCL type,
constants of a type, arguments brought to the result's shape, per-element application, and the
work-item state's slots (pyplat.compiler.abi)."""
from llvmlite import ir

from .. import abi
from ..tree import CompileError

I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
F32, F64 = ir.FloatType(), ir.DoubleType()
HALF_LL = ir.HalfType()

# The work-item state `wi` the generated code reads (g.wi_slot) is the context's i64 fields
# (every field before local_mem) followed by the local ids x, y, z.
WI_LOCAL_ID = abi.WI_LOCAL_ID


def elem(t):
    return t.elem if t.is_vector else t


def suffix(t):
    """LLVM intrinsic type suffix: f32, i64, v4f32 ..."""
    e = elem(t)
    s = ("f%d" % e.bits) if e.is_float else ("i%d" % e.bits)
    return ("v%d%s" % (t.count, s)) if t.is_vector else s


def intr(g, base, t, args):
    """Call llvm.<base>.<suffix of t> (result of type t)."""
    ll = [a.type for a in args]
    fn = g.mg.intrinsic("llvm.%s.%s" % (base, suffix(t)), t.llvm(), ll)
    return g.b.call(fn, args)


def cfun(g, name, ret, args):
    """A C library function (jit.py registers libm's and libc's addresses with the JIT)."""
    return g.mg.intrinsic(name, ret, args)


def libm(g, name, t, args):
    """libm's `name` (`namef` for float) applied per element."""
    e = elem(t)
    if not e.is_float or e.bits not in (32, 64):
        raise CompileError("%s is only supported for float and double" % name)
    cname = name + ("f" if e.bits == 32 else "")
    fn = cfun(g, cname, e.llvm(), [e.llvm()] * len(args))
    b = g.b
    if not t.is_vector:
        return b.call(fn, args)
    out = ir.Constant(t.llvm(), ir.Undefined)
    for i in range(t.count):
        r = b.call(fn, [b.extract_element(a, I32(i)) for a in args])
        out = b.insert_element(out, r, I32(i))
    return out


def fconst(t, v):
    """The constant v of type t (splatted for vectors)."""
    e = elem(t)
    if t.is_vector:
        return ir.Constant(t.llvm(), [float(v) if e.is_float else int(v)] * t.count)
    return ir.Constant(t.llvm(), float(v) if e.is_float else int(v))


def shaped(g, n, t=None):
    """Argument values converted to the result shape (scalars splatted)."""
    t = t or n.type
    return [shaped_arg(g, k, t, n) for k in n.kids]


def shaped_arg(g, k, t, n):
    """The value of argument k of call n, splatted when t is a vector and k a scalar."""
    v = g.rv(k)
    if t.is_vector and k.type.is_scalar:
        v = g.convert(v, k.type, t, n)
    return v


def per_element(g, t, fn, *vals):
    """Apply fn(scalars...) -> scalar to each element (vals may be vectors of t's width)."""
    b = g.b
    if not t.is_vector:
        return fn(*vals)
    out = ir.Constant(t.llvm(), ir.Undefined)
    for i in range(t.count):
        xs = [b.extract_element(v, I32(i)) if isinstance(v.type, ir.VectorType) else v for v in vals]
        out = b.insert_element(out, fn(*xs), I32(i))
    return out


def cmp_result(g, r, rt):
    """An i1 comparison as OpenCL's result: -1/0 for vectors, 1/0 for scalars."""
    return g.b.sext(r, rt.llvm()) if rt.is_vector else g.b.zext(r, rt.llvm())


def const_value(k):
    """The integer value of a constant argument (through scalar conversions), else None."""
    while k.op == "conv" and k.type.is_scalar:
        k = k.kids[0]
    return int(k.val) if k.op == "const" else None


def store_out(g, ptr_node, v, vt):
    """Store v through the pointer argument ptr_node (the spec's out parameters)."""
    p = g.rv(ptr_node)
    g.b.store(v, p, align=elem(vt).size)
