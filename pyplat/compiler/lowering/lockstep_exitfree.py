"""Exit-free passes of lockstep loops (lockstep_regions.py): a group-level test per pass that
no work-item can leave the loop in it, and then a version of the pass without the per-work-item
`active` flag and without the exit tests.

A lockstep pass pays per work-item for the loop's exits: the flag's load and store, the exit
test (pyopencl's `if (i >= pcl_stop) break;` on a 64-bit index) and the masks that the
vectoriser puts on the accumulator. Where the only exits are a leading `if (c) break;` and the
loop's condition, and each test compares an expression that is affine in the local id 0 (through
rematerialised variables and the loop's induction variables: init + trip * step) with a uniform
one (or another such expression), the test is monotone in the local id, so its values for the
first and the last work-item of the group bound everyone's. They are computed once per pass in
128-bit arithmetic, every intermediate value checked to fit its C type (so the program's
wrapping arithmetic gives the same values for every work-item between the two); where one does
not fit, or either end may leave early, the pass is the generic one. The exit-free pass also
needs every work-item still in the loop: a group flag, set when the loop starts with all
work-items' conditions true and cleared for good by the first generic pass.

Kernels with `return` (finished work-items skip passes) keep the generic passes only. Checked
kernels (PYPLAT_CHECK) have exit-free passes too: the pass lowers the same accesses again, with
the same checks, and each such twin shares its site's slot (the checker's CheckTable.twin_slot); an
access whose address is affine in the local id 0 is bounds-checked once for the whole pass, at
group level, and the pass is exit-free only where it is inside (lockstep_ranges.py)."""
from llvmlite import ir

from .. import types as T
from ..tree import Node
from . import lockstep_ranges
from .barrier_tree import walk
from .irbuild import I1, I64, WI_LID, WI_SLOTS_TYPE

I128 = ir.IntType(128)
_ORDERS = {"<": "<", "<=": "<=", ">": ">", ">=": ">="}
_SPATIAL = {"get_local_id", "get_global_id"}


def _integer(t):
    return t is not None and t.is_scalar and t.is_int and not t.is_bool and t.bits <= 64


def _is_break(s):
    while s is not None and s.op == "block" and len(s.kids) == 1:
        s = s.kids[0]
    return s is not None and s.op == "break"


def _dimension_zero(e):
    k = e.kids[0] if len(e.kids) == 1 else None
    while k is not None and k.op == "conv":
        k = k.kids[0]
    return k is not None and k.op == "const" and k.val == 0


class ExitPlan:
    """The predictable exits of one lockstep loop: `top` (the leading break's condition, or
    None), `rest` (the body without it) and `cond` (the loop's condition)."""

    def __init__(self, gen, loop, top, rest, cond):
        self.gen, self.loop, self.top, self.rest, self.cond = gen, loop, top, rest, cond
        self.all_in = None     # group flag (i1): every work-item is still in the loop
        self._memo = {}        # values computed before the loop (prepare) or earlier in predict()
        self.ends = None       # the first and the last local id 0
        self.ranged = []       # checked accesses whose whole pass is tested at once (lockstep_ranges)

    # ------------------------------------------------------------------ analysis
    def affine(self, e, in_start=False):
        """e is an integer expression affine in the local id 0 that predict() can evaluate
        (in_start: part of a variable's initialiser, where this loop's variables have no value)."""
        g = self.gen
        if not _integer(e.type):
            return False
        if g._uniform(e):
            return self._uniform_vars_known(e)
        op = e.op
        if op == "builtin":
            return e.val in _SPATIAL and _dimension_zero(e)
        if op == "load":
            v = e.kids[0].val if e.kids[0].op == "var" else None
            if v is None or v not in g.remat or not _integer(v.type):
                return False
            if in_start and v in g.induction and g.induction[v][0] == id(self.loop):
                return False
            return g.remat[v] is not None and self.affine(g.remat[v], True)
        if op == "conv":
            return self.affine(e.kids[0], in_start)
        if op == "bin" and e.val in ("+", "-") and len(e.kids) == 2:
            return all(x.type == e.type and self.affine(x, in_start) for x in e.kids)
        if op == "bin" and e.val == "*" and len(e.kids) == 2:
            a, c = e.kids
            return a.type == c.type == e.type and self.affine(a, in_start) and self.affine(c, in_start) and \
                (g._uniform(a) or g._uniform(c))
        return False

    def _uniform_vars_known(self, e):
        """Its uniform variables have a register to materialise their value in (_materialise)."""
        ok = [True]

        def visit(x):
            if x.op == "load" and x.kids[0].op == "var" and x.kids[0].val in self.gen._uniform_vars:
                ok[0] = ok[0] and x.kids[0].val in self.gen.vars
        walk(e, visit)
        return ok[0]

    def predictable(self, c):
        if c.op == "unary" and c.val == "!":
            return self.predictable(c.kids[0])
        return c.op == "bin" and c.val in _ORDERS and len(c.kids) == 2 and all(self.affine(x) for x in c.kids)

    # ------------------------------------------------------------------ emission (group level)
    def _fits(self, x, t):
        """x (i128) is a value of C type t."""
        key = ("fits", id(x), t.signed, t.bits)
        if key not in self._memo:
            b = self.gen.b
            n = b.trunc(x, t.llvm())
            back = b.sext(n, I128) if t.signed else b.zext(n, I128)
            self._memo[key] = b.icmp_signed("==", back, x)
        return self._memo[key]

    def _exact(self, e, lid, trip):
        """(e's value for the work-item with local id 0 `lid` in pass `trip`, as i128; i1: every
        intermediate value fits its type)."""
        g = self.gen
        b = g.b
        if g._uniform(e):
            x = self._memo.get(id(e))          # one value per pass: computed once
            if x is None:
                self._materialise(e)
                v = g.rv(e)
                x = self._memo[id(e)] = b.sext(v, I128) if e.type.signed else b.zext(v, I128)
            return x, I1(1)
        op = e.op
        if op == "builtin":
            b.store(lid, b.gep(g.slots, [I64(0), I64(WI_LID)], inbounds=True, source_etype=WI_SLOTS_TYPE))
            v = g.rv(e)
            return (b.sext(v, I128) if e.type.signed else b.zext(v, I128)), I1(1)
        if op == "load":
            v = e.kids[0].val
            x, ok = self._start_value(v, lid)
            st = g.induction.get(v)
            if st is not None and st[0] == id(self.loop):
                _, sign, step = st
                s, s_ok = self._step(v, step)
                ok = b.and_(ok, s_ok)
                d = b.mul(b.zext(trip, I128), s)
                x = b.add(x, d) if sign > 0 else b.sub(x, d)
                ok = b.and_(ok, self._fits(x, v.type))
            return x, ok
        if op == "conv":
            x, ok = self._exact(e.kids[0], lid, trip)
            return x, b.and_(ok, self._fits(x, e.type))
        (a, oka), (c, okc) = (self._exact(x, lid, trip) for x in e.kids)
        ok = b.and_(oka, okc)
        if e.val == "*":
            ok = b.and_(ok, b.and_(self._fits(a, T.LONG), self._fits(c, T.LONG)))
            r = b.mul(a, c)
        else:
            r = b.add(a, c) if e.val == "+" else b.sub(a, c)
        return r, b.and_(ok, self._fits(r, e.type))

    def _start_value(self, v, lid):
        """(the value v is initialised with, i1: exact and it fits v): the same in every pass."""
        key = ("var", v, id(lid))
        if key not in self._memo:
            x, ok = self._exact(self.gen.remat[v], lid, None)
            self._memo[key] = x, self.gen.b.and_(ok, self._fits(x, v.type))
        return self._memo[key]

    def _step(self, v, step):
        """The step of induction variable v, as i128 (i1: it fits a long, so trip * step fits)."""
        if step is None:
            return I128(1), I1(1)
        if ("step", id(step)) not in self._memo:
            b = self.gen.b
            s = self.gen.convert(self.gen.rv(step), step.type, v.type, step)
            s = b.sext(s, I128) if v.type.signed else b.zext(s, I128)
            self._memo["step", id(step)] = s, self._fits(s, T.LONG)
        return self._memo["step", id(step)]

    def _materialise(self, e):
        """Store the value of each uniform variable e reads into its register (they are
        rematerialised in regions; here, between regions, the register may not hold it yet)."""
        g = self.gen
        found = []

        def visit(x):
            if x.op == "load" and x.kids[0].op == "var" and x.kids[0].val in g._uniform_vars:
                found.append(x.kids[0].val)
        walk(e, visit)
        for v in found:
            init = g._uniform_vars[v]
            self._materialise(init)
            g.init_mem(g.vars[v], v.type, init)

    def _test(self, c, lid, trip):
        """(c's truth for that work-item, i1: exact)."""
        b = self.gen.b
        if c.op == "unary":
            v, ok = self._test(c.kids[0], lid, trip)
            return b.not_(v), ok
        (a, oka), (d, okd) = (self._exact(x, lid, trip) for x in c.kids)
        return b.icmp_signed(_ORDERS[c.val], a, d), b.and_(oka, okd)

    def prepare(self, lx):
        """At group level before the loop: what predict() needs that no pass changes (the
        values of the tests' variables before the first pass, for the first and last work-item)."""
        g = self.gen
        b = g.b
        slot = b.gep(g.slots, [I64(0), I64(WI_LID)], inbounds=True, source_etype=WI_SLOTS_TYPE)
        saved = b.load(slot, typ=I64)
        self.ends = (I64(0), b.sub(lx, I64(1)))
        for c in (self.top, self.cond):
            if c is not None:
                for lid in self.ends:
                    self._prime(c, lid)
        b.store(saved, slot)

    def _prime(self, e, lid):
        """Compute the pass-independent parts of e for local id 0 `lid` into the memo."""
        if _integer(e.type) and self.gen._uniform(e):
            self._exact(e, lid, None)
        elif e.op == "load":
            self._start_value(e.kids[0].val, lid)
        else:
            for x in e.kids:
                self._prime(x, lid)

    def predict(self, trip):
        """At group level before a pass: (i1 the pass may run exit-free, i1 the loop goes on
        after it)."""
        g = self.gen
        b = g.b
        slot = b.gep(g.slots, [I64(0), I64(WI_LID)], inbounds=True, source_etype=WI_SLOTS_TYPE)
        saved = b.load(slot, typ=I64)
        fast = b.load(self.all_in, typ=I1)
        first, last = self.ends
        if self.top is not None:
            for lid in (first, last):
                leave, ok = self._test(self.top, lid, trip)
                fast = b.and_(fast, b.and_(ok, b.not_(leave)))
        fast = b.and_(fast, lockstep_ranges.all_inside(self, self.ranged, trip))
        nxt = b.add(trip, I64(1))
        stay0, ok0 = self._test(self.cond, first, nxt)
        stay1, ok1 = self._test(self.cond, last, nxt)
        fast = b.and_(fast, b.and_(b.and_(ok0, ok1), b.icmp_unsigned("==", stay0, stay1)))
        b.store(saved, slot)
        return fast, stay0

    def body(self):
        """The exit-free pass's statements (no break or continue: plan())."""
        return Node("block", kids=self.rest, cur=self.loop.cur)


def plan(gen, n, body, cond, has_ivs):
    """An ExitPlan for lockstep loop n, or None where some pass must stay generic."""
    if not has_ivs or gen.track_returns or cond is None:
        return None
    stmts = list(body.kids) if body.op == "block" else [body]
    top = None
    if stmts and stmts[0] is not None and stmts[0].op == "if" and stmts[0].kids[2] is None \
            and _is_break(stmts[0].kids[1]):
        top = stmts.pop(0).kids[0]
    exits = []
    for s in stmts:
        if s is not None:
            walk(s, lambda x: exits.append(x) if x.op in ("break", "continue", "return", "goto") else None)
    p = ExitPlan(gen, n, top, stmts, cond)
    if exits or (top is not None and not p.predictable(top)) or not p.predictable(cond):
        return None
    p.ranged = lockstep_ranges.ranged_accesses(p)
    return p

