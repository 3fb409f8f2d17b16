"""Barrier-free kernels with a group-stride loop, lowered like barrier kernels (barriers.py).

`for (i = begin + get_local_id(0); i < end; i += get_local_size(0))` (pyopencl's scan update
kernel; grid-stride loops with get_global_id / get_global_size likewise) run one work-item after
the other makes each work-item walk memory with the group's stride: every pass over an interval
reads a word of each cache line, so a group of 16 reads its interval 16 times from memory. Run
with the work-items in lockstep (barriers.py, _choose_lockstep: one region per iteration over the
work-items still in the loop), consecutive work-items touch consecutive words and the region
vectorises. Both orders are the same program: without barriers, work-items may interleave freely.

Only such loops qualify (a step of the group's or the grid's width in dimension 0, a start that
adds the local or global id 0): elsewhere a work-item's own sequential walk is often the better
order, and the plain work-group function keeps it."""
from .barrier_tree import walk
from .lockstep import induction_update, lockstep_eligible

_STARTS = {"get_local_id", "get_global_id"}
_WIDTHS = {"get_local_size", "get_enqueued_local_size", "get_global_size"}


def _strip(e):
    while e is not None and e.op == "conv" and e.kids:
        e = e.kids[0]
    return e


def _dimension_zero(e):
    return len(e.kids) == 1 and _strip(e.kids[0]).op == "const" and _strip(e.kids[0]).val == 0


def _is_width(e, reqd, constants=None):
    """e is the group's or the grid's width in dimension 0: the builtin, the required size, or
    a variable declared with one and never written (pyopencl's `int gsize = get_global_size(0)`)."""
    e = _strip(e)
    if e.op == "builtin" and e.val in _WIDTHS:
        return _dimension_zero(e)
    if e.op == "load" and e.kids[0].op == "var" and constants is not None and e.kids[0].val in constants:
        return _is_width(constants[e.kids[0].val], reqd)
    return e.op == "const" and reqd is not None and e.val == reqd[0] and reqd[0] > 1


def qualifies(k, reqd):
    """Whether kernel k (no barriers) has a group-stride loop among its top-level statements."""
    if k.body is None or k.body.op != "block":
        return False
    starts, written = {}, set()

    def note_decl(n):
        if n.op == "decl" and len(n.kids) == 1:
            starts[n.val] = n.kids[0]
        elif n.op in ("assign", "cassign", "incdec", "addr", "decay") and n.kids[0].op == "var":
            written.add(n.kids[0].val)
            if n.op == "assign":
                starts.setdefault(n.kids[0].val, n.kids[1])
    walk(k.body, note_decl)
    constants = {v: e for v, e in starts.items() if v not in written}

    def uses_id(e, depth=0):
        """e adds the local or global id 0, directly or through a variable like `lid`."""
        found = []

        def visit(x):
            if x.op == "builtin" and x.val in _STARTS and _dimension_zero(x):
                found.append(x)
            elif (x.op == "load" and x.kids[0].op == "var" and x.kids[0].val in constants and depth < 4
                  and uses_id(constants[x.kids[0].val], depth + 1)):
                found.append(x)
        walk(e, visit)
        return bool(found)

    for x in k.body.kids:
        if x is None or x.op not in ("for", "while"):
            continue
        if x.op == "for":
            found = induction_update(x.kids[2])
        else:
            body = x.kids[1]
            stmts = body.kids if body is not None and body.op == "block" else [body]
            last = stmts[-1] if stmts else None
            found = induction_update(last.kids[0]) if last is not None and last.op == "expr" else None
        if found is None or found[1] < 0 or found[2] is None:
            continue
        v, _, step = found
        if (_is_width(step, reqd, constants) and v in starts and uses_id(starts[v])
                and lockstep_eligible(x)):
            return True
    return False
