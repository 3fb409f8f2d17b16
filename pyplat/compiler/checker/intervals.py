"""PYPLAT_CHECK=races: the `__local` accesses whose race checks cannot find anything, found on
the typed tree of a kernel before it is lowered (local_shadow.local_access leaves their race
checks out; their bounds and uninit checks stay).

Every access a group makes in one epoch of the race check (local_shadow.py: every barrier starts
the next one) is in one barrier-free region (barrier_regions.py), so what holds for all the
accesses of an object in a region holds in each epoch. They cannot race when
- none of them writes; or
- each is an element of the object's innermost array dimension at index `get_local_id(0) + c`
  (c the same constant >= 0 for all; a private variable set once to such a value counts), in a
  kernel whose groups are X x 1 x 1 (reqd_work_group_size) with X + c at most the dimension's
  length. Every element a work-item touches is then in a column of its own: an element inside
  the object has one row and one column, and an index outside it fails the bounds check, so the
  access is not made; or
- (reqd_work_group_size) their footprints, every byte each work-item can touch there, found by
  running their index arithmetic for every local id and counted-loop value
  (local_footprints.py), have no byte touched by two work-items one of which writes:
  pyopencl's scan's `ldata[o % K][o / K]` with o = k * WG + lid, its carry-in by work-item 0,
  its `ldata[k][lid]` next to `ldata[K][lid - 1]`.

More generally, where every access has such a column c and a number n of work-items that can
reach it (X, or B under an `if (get_local_id(0) < B)`), the accesses cannot race when any two
of different columns, one of them a write, cover disjoint ranges [c, c + n): pyopencl's
reduction tree, `if (lid < 512) t[lid] = t[lid] + t[lid + 512]`. Without reqd_work_group_size
that holds only in groups of one row (local sizes 1 in dimensions 1 and 2): those accesses
keep a race check that runs only in other groups (`ONE_ROW`, local_shadow.local_access).

An object that is used anywhere in the kernel other than by such a direct access (its address
taken, a pointer variable set from it, an atomic, an async copy, a call) never qualifies: its
bytes may then be reached by accesses this does not see.

In pyopencl's scan (scan_lev1) every use of its local array loses its race check.
"""
from . import barrier_regions
from ..lowering.barrier_tree import assigned_vars, constant_int, walk

_USES = ("load", "assign", "cassign", "incdec")


ONE_ROW = "one row"          # free of races in groups of one row only


def local_accesses(k):
    """({id(var node): _Access} of kernel k's direct `__local` accesses, the objects used
    otherwise too: their address taken, passed on, an atomic...)."""
    objects = set(k.local_vars) | {p for p, info in zip(k.params, k.param_info)
                                   if p.type.is_pointer and info["addrspace"] == "local"}
    occurrences, escaped = {}, set()
    if not objects or k.body is None:
        return occurrences, escaped
    lid_vars = _local_id_variables(k.body)

    def visit(n, path):
        if n is None or not hasattr(n, "op"):
            return
        if n.op == "var" and n.val in objects:
            a = _classify(n, path, lid_vars)
            if a is None:
                escaped.add(n.val)
            else:
                occurrences[id(n)] = a
            return
        path.append(n)
        for x in n.kids:
            visit(x, path)
        path.pop()
    visit(k.body, [])
    return occurrences, escaped


def race_free_accesses(k):
    """{id of a node of kernel k's `__local` accesses (every node of each access's chain, from
    the object's variable up): True where its race check can be left out, ONE_ROW where it can
    in groups whose local sizes in dimensions 1 and 2 are 1}."""
    occurrences, escaped = local_accesses(k)
    if not occurrences:
        return {}
    width = k.reqd[0] if tuple(k.reqd[1:]) == (1, 1) and k.reqd[0] > 0 else None
    region_of = barrier_regions.regions(k.body)
    if region_of is None:
        return {}
    by_region = {}                              # (region, object) -> [_Access]
    for key, a in occurrences.items():
        if a.var.val not in escaped:
            by_region.setdefault((region_of[key], a.var.val), []).append(a)
    from . import local_footprints   # (numpy: imported when a checked kernel is built, not with the platform)
    footprints = local_footprints.Footprints(k) if all(x > 0 for x in k.reqd) else None
    free = {}
    for (_, obj), accesses in by_region.items():
        if not any(a.write for a in accesses):
            how = True
        elif _disjoint_columns(accesses, width):
            how = True if width is not None else ONE_ROW
        elif footprints is not None and obj in k.local_vars and \
                local_footprints.conflict_free([footprints.of(a) for a in accesses], obj.type.size):
            how = True
        else:
            continue
        for a in accesses:
            free.update(dict.fromkeys(a.chain, how))
    return free


class _Access:
    __slots__ = ("var", "top", "use", "path", "chain", "write", "column", "length", "bound")

    def __init__(self, var, top, use, path, chain, write, column, length, bound):
        self.var, self.top, self.path = var, top, path      # (the lvalue accessed; its ancestors)
        self.use = use                                      # (the load, assignment... of it)
        self.chain, self.write, self.column, self.length = chain, write, column, length
        self.bound = bound          # work-items that can reach it (an `if (lid < B)` around), or None


def _disjoint_columns(accesses, width):
    """Every access is at a column get_local_id(0) + c reached by n work-items (n: the guard's
    bound, or the group's width; None: not known), and any two of different columns, one a
    write, cover disjoint ranges [c, c + n) (within the row, for arrays of rows)."""
    spans = []
    for a in accesses:
        if a.column is None:
            return False
        n = a.bound if width is None else width if a.bound is None else min(a.bound, width)
        if a.length and (n is None or a.column < 0 or a.column + n > a.length):
            return False
        spans.append((a.column, n, a.write))
    for i, (c, n, w) in enumerate(spans):
        for c2, n2, w2 in spans[i + 1:]:
            if c == c2 or not (w or w2):
                continue
            lo, n_lo, hi = (c, n, c2) if c < c2 else (c2, n2, c)
            if n_lo is None or lo + n_lo > hi:
                return False
    return True


def _classify(var, path, lid_vars):
    """The access a use of a `__local` object's variable makes (path: its ancestors, root
    first), or None where the use is not a direct access."""
    chain = [id(var)]
    at = [len(path) - 1]
    node = var

    def up(op, same_type=False):
        """Step to the parent if it is `op` with node as its first operand."""
        if at[0] < 0:
            return None
        parent = path[at[0]]
        if parent.op != op or not parent.kids or parent.kids[0] is not node:
            return None
        if same_type and not (parent.type is not None and node.type is not None and parent.type.is_pointer
                              and node.type.is_pointer and parent.type.pointee.key == node.type.pointee.key):
            return None                             # (a cast to another pointee: not followed)
        chain.append(id(parent))
        at[0] -= 1
        return parent
    if var.val.type.is_pointer:                     # a __local pointer argument: its value
        node = up("load")
        if node is None:
            return None
    column, length, dims = None, None, 0
    while node.type is not None and (node.type.is_array or node.type.is_pointer):
        count = node.type.count if node.type.is_array else None
        if node.type.is_array:                      # (an array decays to a pointer into it)
            node = up("decay")
            if node is None:
                return None
        node = up("conv", same_type=True) or node
        index = up("index")
        if index is None:
            deref = up("deref") if count is None else None
            if deref is None:
                return None
            node, column, dims = deref, None, dims + 1
            continue
        node, column, length, dims = index, _column(index.kids[1], lid_vars), count, dims + 1
    while True:                                     # (parts of the element)
        part = next((up(op) for op in ("member", "vindex", "swz")
                     if at[0] >= 0 and path[at[0]].op == op), None)
        if part is None:
            break
        if part.op == "member" and part.val[1]:     # (`->`: through a pointer in the element)
            return None
        node = part
    if at[0] < 0:
        return None
    use = path[at[0]]
    if use.op not in _USES or use.kids[0] is not node:
        return None
    return _Access(var, node, use, tuple(path), chain, use.op != "load", column, length if dims > 1 else 0,
                   _guard_bound(var, path, lid_vars))


def _guard_bound(var, path, lid_vars):
    """The least B of the `if (get_local_id(0) < B)` (B a constant) whose then-branch holds the
    access (path: its ancestors), else None."""
    bound = None
    for i, n in enumerate(path):
        if n.op != "if" or len(n.kids) < 2:
            continue
        inner = path[i + 1] if i + 1 < len(path) else var
        if inner is n.kids[1]:
            b = _below(n.kids[0], lid_vars)
            if b is not None:
                bound = b if bound is None else min(bound, b)
    return bound


def _below(cond, lid_vars):
    """B where cond holds only for local ids 0 below B (`lid < B`, `lid <= B - 1`, `B > lid`,
    and `&&` of conditions one of which is such), else None."""
    while cond is not None and cond.op == "conv":
        cond = cond.kids[0]
    if cond is None:
        return None
    if cond.op == "land":
        found = [b for b in (_below(x, lid_vars) for x in cond.kids) if b is not None]
        return min(found) if found else None
    if cond.op != "bin" or len(cond.kids) != 2:
        return None
    a, c = cond.kids
    if cond.val in (">", ">="):
        a, c = c, a
        op = "<" if cond.val == ">" else "<="
    else:
        op = cond.val
    if op not in ("<", "<=") or _column(a, lid_vars) != 0:
        return None
    k = constant_int(c)
    if k is None:
        return None
    return k if op == "<" else k + 1


def _column(e, lid_vars):
    """c where e is get_local_id(0) + c (c a constant; through conversions and variables set
    once to such a value), else None."""
    while e is not None and e.op == "conv":
        e = e.kids[0]
    if e is None:
        return None
    if e.op == "builtin" and e.val == "get_local_id":
        return 0 if _is_zero(e.kids[0]) else None
    if e.op == "load" and e.kids[0].op == "var":
        return lid_vars.get(e.kids[0].val)
    if e.op == "bin" and e.val == "+" and len(e.kids) == 2:
        for x, y in (e.kids, e.kids[::-1]):
            c, k = _column(x, lid_vars), constant_int(y)
            if c is not None and k is not None:
                return c + k
    return None


def _is_zero(e):
    return constant_int(e) == 0


def _local_id_variables(body):
    """{private variable: c} for the variables declared as get_local_id(0) + c and never
    assigned, incremented or taken the address of."""
    decls, changed = {}, assigned_vars(body)

    def visit(n):
        if n.op == "decl" and n.kids and n.kids[0] is not None:
            decls[n.val] = None if n.val in decls else n.kids[0]
    walk(body, visit)
    found = {}
    for v, init in decls.items():           # (a variable set from another one: in order)
        if init is not None and v not in changed and getattr(v, "storage", None) == "private":
            c = _column(init, found)
            if c is not None:
                found[v] = c
    return found
