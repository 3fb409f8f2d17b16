"""The barrier-free regions of a kernel body, on the typed tree before lowering (barrier-using
helpers inlined by then): two expression nodes share a region when a work-item can go from one
to the other, either way, without passing a barrier.

Every access a group's work-items make between two barriers (one epoch of the race check,
local_shadow.py) is in the region that follows the first of them: the work-items all left it
and none has reached the next. So a fact about the accesses of a region, taken together, holds
for every epoch in which any of them runs (intervals.py uses it).

Built as a union of program points: a statement with no barrier in it is one point (its jumps
out, break, continue and return, join it to their targets); `if`, loops and blocks with
barriers are followed part by part; a barrier starts a new point. A kernel with goto or labels,
a switch around a barrier, or a barrier that is not a statement gets no regions.
"""
from ..lowering.barrier_tree import has_barrier
from ..lowering.statements import loop_parts

_LOOPS = ("for", "while", "do")


class _NoRegions(Exception):
    pass


def regions(body):
    """{id(node): region} for every node of body (regions are small ints), or None (above)."""
    if body is None:
        return None
    flow = _Flow()
    try:
        flow.statement(body, flow.point(), None, None)
    except _NoRegions:
        return None
    return {key: flow.find(p) for key, p in flow.at.items()}


class _Flow:
    def __init__(self):
        self.parent = []
        self.at = {}                    # id(node) -> its point
        self.memo = {}                  # (has_barrier's)
        self.end = self.point()         # (where return goes)

    def point(self):
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def find(self, p):
        while self.parent[p] != p:
            self.parent[p] = self.parent[self.parent[p]]
            p = self.parent[p]
        return p

    def join(self, a, b):
        if a is not None and b is not None:
            self.parent[self.find(a)] = self.find(b)

    def attach(self, n, p, brk, cont):
        """Every node of n (no barrier in it) at point p; its jumps out joined to their targets."""
        def visit(x, loops, switches):
            if x is None or not hasattr(x, "op"):
                return
            if x.op in ("barrier", "goto", "label"):
                raise _NoRegions()
            self.at[id(x)] = p
            if x.op == "break" and not loops and not switches:
                self.join(p, brk if brk is not None else self.end)
            elif x.op == "continue" and not loops:
                self.join(p, cont if cont is not None else self.end)
            elif x.op == "return":
                self.join(p, self.end)
            inner_loops = loops + (x.op in _LOOPS)
            inner_switches = switches + (x.op == "switch")
            for k in x.kids or ():
                visit(k, inner_loops, inner_switches)
        visit(n, 0, 0)

    def statement(self, s, p, brk, cont):
        """Follow statement s from point p; the point after it (a fresh one where it does not
        fall through)."""
        if s is None:
            return p
        if not has_barrier(s, self.memo):
            self.attach(s, p, brk, cont)
            return p
        op = s.op
        if op == "barrier":
            self.at[id(s)] = p
            return self.point()
        if op == "block":
            for k in s.kids:
                p = self.statement(k, p, brk, cont)
            return p
        if op == "if":
            cond, then = s.kids[0], s.kids[1]
            other = s.kids[2] if len(s.kids) > 2 else None
            self.attach(cond, p, brk, cont)
            out = self.point()
            self.join(out, self.statement(then, p, brk, cont))
            self.join(out, self.statement(other, p, brk, cont))
            return out
        if op in _LOOPS:
            init, cond, inc, body = loop_parts(s)
            p = self.statement(init, p, brk, cont)
            head, after, step = self.point(), self.point(), self.point()
            self.join(head, p)
            self.attach(cond, step if op == "do" else head, brk, cont)
            self.join(after, step if op == "do" else head)
            self.join(step, self.statement(body, head, after, step))
            self.attach(inc, step, brk, cont)
            self.join(step, head)
            return after
        raise _NoRegions()              # (a switch, case or label around a barrier)
