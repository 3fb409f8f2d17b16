"""Atomic functions (OpenCL C spec, "Atomic Functions" of OpenCL 1.x: atomic_* and the
cl_khr_*_atomics atom_*), 32 and 64 bits, on global and local memory; sequentially consistent
read-modify-write instructions. On __local memory of a target where one thread runs the whole
work-group (the CPU), no other thread can see the group's local memory: a plain load, operation
and store there is atomic already, costs no locked instruction and leaves the region's loop to the
optimiser."""
from llvmlite import ir

from ..tree import CompileError
from .registry import family

# operation -> LLVM atomicrmw operation (inc/dec add/subtract 1)
RMW = {"add": "add", "sub": "sub", "xchg": "xchg", "and": "and", "or": "or", "xor": "xor",
       "min": "min", "max": "max", "inc": "add", "dec": "sub"}


@family(r"(atomic|atom)_\w+")
def atomic(g, n, name):
    p = g.rv(n.kids[0])
    pt = n.kids[0].type.pointee
    # PYPLAT_CHECK: bounds-checked; in __local memory it counts as written, not as a race
    return g.guard_access(n, n.kids[0], p, pt.size, "write", lambda: _atomic(g, n, name, p, pt), atomic=True)


def _atomic(g, n, name, p, pt):
    b = g.b
    op = name.split("_", 1)[1]
    plain = n.kids[0].type.addrspace == "local" and g.mg.GROUP_IN_ONE_THREAD
    if op == "cmpxchg":
        cmpv = g.convert(g.rv(n.kids[1]), n.kids[1].type, pt, n)
        val = g.convert(g.rv(n.kids[2]), n.kids[2].type, pt, n)
        if plain:
            old = b.load(p, typ=pt.llvm(), align=pt.align)
            b.store(b.select(b.icmp_unsigned("==", old, cmpv), val, old), p, align=pt.align)
            return old
        r = b.cmpxchg(p, cmpv, val, "seq_cst", "seq_cst")
        return b.extract_value(r, 0)
    if op not in RMW:
        raise CompileError("builtin function '%s' is not supported yet" % n.val, n.cur)
    if op in ("inc", "dec"):
        val = ir.Constant(pt.llvm(), 1)
    else:
        val = g.convert(g.rv(n.kids[1]), n.kids[1].type, pt, n)
    rop = RMW[op]
    if rop in ("min", "max") and not pt.signed:
        rop = "u" + rop
    if plain:
        old = b.load(p, typ=pt.llvm(), align=pt.align)
        b.store(_apply(b, rop, old, val), p, align=pt.align)
        return old
    return b.atomic_rmw(rop, p, val, "seq_cst")


def _apply(b, rop, old, val):
    """The value an atomicrmw `rop` stores, from the old value and the operand."""
    if rop == "xchg":
        return val
    if rop in ("add", "sub", "and", "or", "xor"):
        return getattr(b, rop + "_" if rop in ("and", "or") else rop)(old, val)
    cmp = b.icmp_signed if rop in ("min", "max") else b.icmp_unsigned
    return b.select(cmp("<" if rop.endswith("min") else ">", old, val), old, val)
