"""PYPLAT_CHECK=uninit: the `__local` reads whose bytes the group has surely written, with defined
values, before they run: their flags need no load (local_shadow.local_access), and the values
they read are defined. Kernels with reqd_work_group_size only (footprints need the group's ids:
local_footprints.py); found on the typed tree before lowering.

A read R is *written* where the writes that surely run before it, with a barrier between, cover
every byte R can read (R's footprint, more lanes where it is not known: never fewer). A write W
surely runs before R when, below their closest common statement block, W's statement comes
first, holds no jump, and W's lanes are known exactly there (no unknown condition, no loop that
may run no turn or leave early, between that block and W); and no counted loop holds both (its
turns would be taken together: W's later turns too). Different barrier-free regions
(barrier_regions.py) put a barrier on every way from W to R.

Written is not yet defined: uninit follows undefined values into memory (a store of one clears
the bytes' flags). So, from the reads found written, those are taken out again (until none
is) that a write of a maybe-undefined value can reach: one coming earlier in the kernel or in a
loop around both. A value is maybe-undefined where it comes from a `__local` read not (or no
longer) taken as defined, directly or through private variables assigned from one.

pyopencl's scan: the main loop's reads (the scan along k, the tree, the update, the copy out)
read what its read phase wrote from `__global` memory; its last, partial unit's are still
checked (they read slots it did not write).
"""
from . import barrier_regions, intervals, local_footprints
from ..lowering.barrier_tree import conjuncts, source_order, walk

import numpy as np


def surely_written(k):
    """(ids of the nodes of kernel k's `__local` reads found defined, ids of its writes whose
    flags are already set, by defined values, and whose own value is defined: their flag
    store would change nothing); every node of each access's chain."""
    if k.body is None or not all(x > 0 for x in k.reqd):
        return set(), set()
    occurrences, escaped = intervals.local_accesses(k)
    if escaped:                     # (reads through pointers would feed values not seen here)
        return set(), set()
    accesses = list(occurrences.values())
    if not any(a.var.val in k.local_vars for a in accesses):
        return set(), set()
    region = barrier_regions.regions(k.body)
    if region is None:
        return set(), set()
    fp = local_footprints.Footprints(k)
    order = source_order(k.body)
    reads = [a for a in accesses if a.use.op != "assign"]            # (cassign, incdec read too)
    writes = [a for a in accesses if a.write]

    def covered(a):
        return a.var.val in k.local_vars and \
            _covered(fp, region, a, [w for w in writes if w.var is not a.var and w.var.val is a.var.val])
    written = {id(r) for r in reads if covered(r)}
    while True:
        maybe = {id(r.var) for r in reads if id(r) not in written}     # (their var nodes)
        tainted = _tainted(k, maybe)
        taken = {id(r) for r in reads if id(r) in written and _reached_by_undefined(order, r, writes, maybe, tainted)}
        if not taken:
            break
        written -= taken
    settled = [w for w in writes if covered(w) and not _undefined_value(w, maybe, tainted)
               and not _reached_by_undefined(order, w, writes, maybe, tainted)]
    return ({n for r in reads if id(r) in written for n in r.chain},
            {n for w in settled for n in w.chain})


def _reached_by_undefined(order, a, writes, maybe, tainted):
    """Whether a write of a maybe-undefined value to a's object may come before access a."""
    return any(w.var.val is a.var.val and w.var is not a.var and _may_reach(order, w, a)
               and _undefined_value(w, maybe, tainted) for w in writes)


def _covered(fp, region, r, writes):
    """Every (lane's work-item, byte) R reads is written before: by any work-item with a barrier
    between (_before, _before_this_turn), or by the same work-item earlier in R's region."""
    got = fp.of(r)
    size = r.var.val.type.size if r.var.val.type is not None else 0
    if got is None or not size:
        return False
    lanes, start, _, n = got
    need = [(lanes, start + j) for j in range(n)]
    if any(((at < 0) | (at >= size)).any() for _, at in need):
        return False
    anyone = np.zeros(size, dtype=bool)
    own = set()
    for w in writes:
        how = _before(fp, region, w, r)
        if how is None:
            continue
        got = fp.of(w)
        if got is None:
            continue
        w_lanes, w_start, _, w_n = got
        for j in range(w_n):
            at = w_start + j
            inside = (at >= 0) & (at < size)
            if how == "barrier":
                anyone[at[inside]] = True
            else:
                own.update(zip(w_lanes[inside].tolist(), at[inside].tolist()))
    for lanes_, at in need:
        missing = ~anyone[at]
        if missing.any() and not all(pair in own for pair in zip(lanes_[missing].tolist(), at[missing].tolist())):
            return False
    return True


def _before(fp, region, w, r):
    """How W surely runs before R: "barrier" (a barrier between: every work-item's W before
    every R), "same" (in R's region: each work-item's W before its own R), or None."""
    rw, rr = region.get(id(w.var)), region.get(id(r.var))
    if rw is None or rr is None:
        return None
    pw, pr = list(w.path) + [w.var], list(r.path) + [r.var]
    common = 0
    while common < min(len(pw), len(pr)) and pw[common] is pr[common]:
        common += 1
    if common == 0 or common >= min(len(pw), len(pr)):
        return None
    env = fp.env_at(pw)
    if env is None:
        return None
    bound = {id(loop) for loop, _ in env.counters.values()}
    if any(id(n) in bound for n in pw[:common]):   # (no counted loop around both)
        return None
    block = pw[common - 1]
    if block.op == "block":
        kids = list(block.kids)
        first, then = pw[common], pr[common]
        if kids.index(first) < kids.index(then) and not _has_jump(first) and _exact(fp, pw, common):
            return "barrier" if rw != rr else "same"
    return "barrier" if rw != rr and _before_this_turn(fp, pw, pr, common) else None


def _exact(fp, pw, below):
    """W's lanes are known exactly below pw[below - 1]."""
    env = fp.env_at(pw)
    loose = {id(n) for n in env.loose} if env is not None else None
    return loose is not None and not any(id(n) in loose for n in pw[below:])


def _before_this_turn(fp, pw, pr, common):
    """W is in the body of a loop around both, runs in each of its turns (no jump in the body,
    its lanes exact), and R only in turns after the first: under `if (v != first)`, v the loop's
    variable stepped by a positive constant from `first` (pyopencl's scan: its carry-in,
    `if (... && unit_base != interval_begin)`, reads what the last turn wrote)."""
    for at in range(common - 2, -1, -1):       # (a loop whose body holds both)
        loop = pw[at]
        if loop.op != "for" or len(loop.kids) != 4 or pw[at + 1] is not loop.kids[3]:
            continue
        body, inc = loop.kids[3], loop.kids[2]
        if _has_jump(body) or inc is None or inc.kids is None or not inc.kids or inc.kids[0].op != "var":
            return False
        v = inc.kids[0].val
        step = inc.val[0] if inc.op == "incdec" else \
            fp.constant(inc.kids[1]) if inc.op == "cassign" and inc.val == "+" else None
        first = fp.decls.get(v)
        changed = [x for x in _assignments(fp.k.body, v) if x is not inc]
        if not step or step <= 0 or first is None or changed or not _exact(fp, pw, at + 1):
            return False
        for n, inner in zip(pr[at + 1:], pr[at + 2:]):
            if n.op == "if" and inner is n.kids[1]:
                for c in conjuncts(n.kids[0]):
                    if c.op == "bin" and c.val == "!=" and _same(c.kids[0], v, first, c.kids[1]):
                        return True
        return False
    return False


def _same(a, v, first, b):
    """Whether {a, b} is {v, first} (through conversions; first the expression v was set to)."""
    def strip(e):
        while e is not None and e.op == "conv" and e.kids:
            e = e.kids[0]
        return e
    a, b = strip(a), strip(b)
    for x, y in ((a, b), (b, a)):
        if x.op == "load" and x.kids[0].op == "var" and x.kids[0].val is v and _equal(y, strip(first)):
            return True
    return False


def _equal(x, y):
    x = x.kids[0] if x.op == "conv" and x.kids else x
    if x.op != y.op or x.val is not y.val and x.val != y.val or len(x.kids or ()) != len(y.kids or ()):
        return False
    return all(_equal(a, b) for a, b in zip(x.kids or (), y.kids or ()))


def _assignments(body, v):
    out = []
    walk(body, lambda x: out.append(x) if x.op in ("assign", "cassign", "incdec", "addr") and x.kids
         and getattr(x.kids[0], "op", None) == "var" and x.kids[0].val is v else None)
    return out


def _has_jump(s):
    found = []
    walk(s, lambda x: found.append(x) if x.op in ("break", "continue", "return", "goto", "label") else None)
    return bool(found)


def _may_reach(order, w, r):
    """A write may come before a read in some run: earlier in source order, or in a loop with it."""
    if order.get(id(w.var), 0) < order.get(id(r.var), 0):
        return True
    loops = {id(n) for n in w.path if n.op in ("for", "while", "do")}
    return any(id(n) in loops for n in r.path)


def _undefined_value(w, maybe, tainted):
    """Whether write w may store a maybe-undefined value."""
    use = w.use
    if use.op == "incdec":
        return id(w.var) in maybe
    value = use.kids[1] if len(use.kids) > 1 else None
    if use.op == "cassign" and id(w.var) in maybe:
        return True
    return _mentions(value, maybe, tainted)


def _mentions(e, maybe, tainted):
    found = []

    def visit(x):
        if x.op == "var" and (id(x) in maybe or x.val in tainted):
            found.append(x)
    if e is not None:
        walk(e, visit)
    return bool(found)


def _tainted(k, maybe):
    """Private variables a maybe-undefined value may be assigned to, directly or through others."""
    assigns = []

    def visit(x):
        if x.op == "decl" and x.kids and x.kids[0] is not None and hasattr(x.kids[0], "op"):
            assigns.append((x.val, x.kids[0]))
        elif x.op in ("assign", "cassign") and x.kids and getattr(x.kids[0], "op", None) == "var":
            assigns.append((x.kids[0].val, x.kids[1]))
    walk(k.body, visit)
    tainted, changed = set(), True
    while changed:
        changed = False
        for v, e in assigns:
            if v not in tainted and _mentions(e, maybe, tainted):
                tainted.add(v)
                changed = True
    return tainted
