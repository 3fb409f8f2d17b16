"""PYPLAT_CHECK=races: a static proof that no two work-items touch the same bytes of a `__global`
argument, so that its race checks can be left out (check_versions.py picks the version).

An argument is *private* when every race-checked access of the kernel through it (the sites the
full version lowers: check_global_races.prepare notes them) reads or writes the bytes
[base + S·x + c, base + S·x + c + size) with x = get_global_id(0), through one pointer variable
`base` (the argument, or a pointer variable set once from it: pyopencl's `x__base + x__offset`),
one constant stride S ≠ 0 (the base assigned nowhere else) for all sites and constants c whose bytes, over all sites, fit in
|S| bytes: work-item x's bytes then lie in [S·x + m, S·x + m + |S|) for one m, which no other x
reaches. `c[i] = a[i] + b[i]` is private; `a[i] = a[i + 1]` (the neighbour's word), `c[i / 2]`
(two work-items, one word) and a site the proof cannot read (a pointer of other origin, a
`vload`, an index through memory or a non-constant term) are not.

What the proof assumes, the exported work-group function checks per launch (check_versions):
get_global_id(0) tells the work-items apart (global sizes 1 in dimensions 1 and 2), and no
other argument is bound to the same buffer (its shadow header is the argument's own). Sites the
race check does not watch stay out of the proof as they stay out of the check: atomics (they
do not race) and accesses through pointers of unknown origin. The index is taken as an exact
integer: a 32-bit index variable could wrap only past 2^32 work-items.
"""
from . import group_stride


def note(table, g, index, node, size):
    """Note a race-checked access of `size` bytes through argument `index` of kernel g.f: its
    (base variable, stride, offset, size), or None where the proof cannot read it."""
    sites = table.race_private_sites.setdefault(g.f.name, {})
    sites.setdefault(index, []).append(_window(table, g, node, size))


def private_arguments(table, k):
    """Indices of kernel k's arguments every noted site of which is private (see above)."""
    out = []
    for index, sites in table.race_private_sites.get(k.name, {}).items():
        if not sites or any(s is None for s in sites):
            continue
        bases = {base for base, _, _, _ in sites}
        strides = {stride for _, stride, _, _ in sites}
        if len(bases) != 1 or len(strides) != 1 or 0 in strides:
            continue
        stride = abs(next(iter(strides)))
        low = min(offset for _, _, offset, _ in sites)
        high = max(offset + size for _, _, offset, size in sites)
        if high - low <= stride:
            out.append(index)
    return sorted(out)


def _window(table, g, node, size):
    if node is None or size <= 0:
        return None
    if node.op == "index" and len(node.kids) == 2:
        pointer, index, scale = node.kids[0], node.kids[1], size
    elif node.op == "deref" and node.kids and node.kids[0].op == "bin" and node.kids[0].val == "+" \
            and node.type is not None and node.type.size == size:
        pointer, index = node.kids[0].kids
        if not _is_pointer(pointer):
            pointer, index = index, pointer
        scale = size
    else:
        return None
    if not _is_pointer(pointer) or pointer.op != "load" or pointer.kids[0].op != "var":
        return None
    base = pointer.kids[0].val
    if base in table.assigned(g):                             # (a base that moves: no proof)
        return None
    form = _affine(table, g, index, 0)
    if form is None:
        return None
    per_item, constant = form
    return base, scale * per_item, scale * constant, size


def _is_pointer(n):
    return n.type is not None and n.type.is_pointer


def _affine(table, g, e, depth):
    """(a, b) with e = a · get_global_id(0) + b, integers, else None."""
    if e is None or depth > 8 or e.type is None or not e.type.is_int or e.type.is_vector:
        return None
    if e.op == "conv":
        return _affine(table, g, e.kids[0], depth + 1) if e.kids else None
    if e.op == "const":
        return (0, e.val) if isinstance(e.val, int) else None
    if e.op == "builtin" and e.val == "get_global_id" and group_stride._dimension_zero(e):
        return (1, 0)
    if e.op == "load" and e.kids and e.kids[0].op == "var":
        init = table._initialiser(g, e.kids[0].val)
        return _affine(table, g, init, depth + 1) if init is not None else None
    if e.op == "bin" and len(e.kids) == 2 and e.val in ("+", "-", "*"):
        x, y = (_affine(table, g, kid, depth + 1) for kid in e.kids)
        if x is None or y is None:
            return None
        if e.val == "+":
            return (x[0] + y[0], x[1] + y[1])
        if e.val == "-":
            return (x[0] - y[0], x[1] - y[1])
        if x[0] and y[0]:
            return None
        return (x[0] * y[1] + y[0] * x[1], x[1] * y[1])
    return None
