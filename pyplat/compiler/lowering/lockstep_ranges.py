"""Bounds of a whole exit-free lockstep pass tested at once, for an instrumentation that
guards accesses (PYPLAT_CHECK=bounds; lockstep_exitfree.py).

In an exit-free pass every work-item of the group runs the body once. An access `p[e]` in it
whose pointer p is uniform and whose index e is affine in the local id 0 (ExitPlan.affine, so
monotone in it) touches, for each work-item, an address between those of the first and the
last work-item, computed exactly (128-bit, every intermediate value checked to fit its C type,
as the exit tests are). If both ends' bytes are inside the object the access's provenance names,
every work-item's are. The group tests that before the pass, and the pass is exit-free only
where it holds; otherwise the generic pass runs, whose per-access checks find and report what
is outside. In the exit-free copy such an access then checks no bounds (the generator's
`in_range`, which the checker's guard reads), and its loop over work-items is the unchecked
one's: pyopencl's stage-1 reduction's `x[i]`. The instrumentation names the objects
(Instrumentation.object_of, object_range).
"""
from llvmlite import ir

from .barrier_tree import walk
from .irbuild import I1, I64

I128 = ir.IntType(128)
_SPACES = ("global", "constant", "local")


def ranged_accesses(plan):
    """[(index node, pointer expression, index expression, hint)] of the plan's pass body whose
    bounds can be tested for the whole pass (none without an instrumentation's frame)."""
    g = plan.gen
    instr = g.mg.instr
    if getattr(g, "group_frame", None) is None:
        return []
    found = []

    def visit(n):
        if n.op != "index" or len(n.kids) != 2:
            return
        ptr, idx = n.kids
        t = ptr.type
        if t is None or not t.is_pointer or t.addrspace not in _SPACES or n.type is None or not n.type.size:
            return
        hint = instr.object_of(g, ptr)
        if hint is None or not g._uniform(ptr) or not plan._uniform_vars_known(ptr) or not plan.affine(idx):
            return
        found.append((n, ptr, idx, hint))
    for s in plan.rest:
        if s is not None:
            walk(s, visit)
    return found


def all_inside(plan, ranged, trip):
    """i1, at group level before pass `trip`: every work-item's access of each ranged entry is
    inside its object (with the local id slot as predict() has it: set per end here)."""
    g = plan.gen
    b = g.b
    ok = I1(1)
    if not ranged:
        return ok
    for n, ptr, idx, hint in ranged:
        plan._materialise(ptr)
        p = b.zext(b.ptrtoint(g.rv(ptr), I64), I128)
        base, limit = g.mg.instr.object_range(g, hint)
        base, limit = b.zext(base, I128), b.zext(limit, I128)
        size = I128(n.type.size)
        for lid in plan.ends:
            x, fits = plan._exact(idx, lid, trip)
            off = b.sub(b.add(p, b.mul(x, size)), base)
            inside = b.and_(b.icmp_signed(">=", off, I128(0)), b.icmp_signed("<=", b.add(off, size), limit))
            ok = b.and_(ok, b.and_(fits, inside))
    return ok
