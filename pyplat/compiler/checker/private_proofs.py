"""PYPLAT_CHECK=races: a proof that no two work-items touch the same bytes of a `__global`
argument, so that its race checks can be left out (versions.py picks the version;
private_launch.py tests, per launch, what the proof leaves to the launch).

Every race-checked access of the kernel through the argument (the sites the full version
lowers: global_races.prepare notes them) must read or write bytes [base + A + c,
base + A + c + size) through one pointer variable `base` (the argument, or a pointer variable
set once from it: pyopencl's `x__base + x__offset`), where A is one *linear form* for all
sites — a sum of get_global_id(d), get_local_id(d) and get_group_id(d) each times a
coefficient made of integer constants, scalar arguments the kernel never assigns and the
launch's sizes (get_global_size, get_local_size, get_num_groups), plus such a uniform term —
and c an integer constant per site. Work-item (group g, local id l) then touches
A(g, l) + [low, high) with low, high the smallest and largest of c and c + size; the launch
test writes A over the six ids g_d, l_d (get_global_id(d) = g_d · local size d + l_d + offset
d), sorts their coefficients' magnitudes and checks that each exceeds (high - low - 1) plus the
reach of the smaller ones (the sum of |coefficient| × (range - 1)): then A is injective on
the launch's work-items with windows apart, a mixed-radix number (`c[i]`, `c[2*i]` and
`c[2*i + 1]`, a 2-D `out[y * W + x]` where W >= the global size 0, the transpose's
`out[(gx + ly) * height + gy + lx]`).

A site inside `if (get_local_id(d) == k)` (through `&&`, and variables set once from it,
pyopencl's `if (pcl_lid == 0) pcl_out[get_group_id(0)] = ...`) is reached by work-items with
local id k in dimension d only; where every site of an argument is, that id has range 1.

Exact integers: the launch also checks that every scalar argument in a coefficient is >= 0 and
below 2^32, and that the sum of every term's magnitude (each constant's, each id at its
largest: the *reach*) is below 2^31; sub-expressions narrower than 64 bits must be built
without `-` and negative constants, so that each is >= 0 and below 2^31, exact in its type;
64-bit ones are exact modulo 2^64, as addresses are. `a[i] = a[i + 1]`, `c[i / 2]`, a site the
proof cannot read (a pointer of other origin, a `vload`, an index through memory, a product of
two ids) are not private.

What the proof assumes beside, the exported work-group function checks per launch
(versions): no other argument is bound to the same buffer (its shadow header is the
argument's own). Sites the race check does not watch stay out of the proof as they stay out
of the check: atomics (they do not race) and accesses through pointers of unknown origin.
"""
from .. import abi

GID, LID, GRP = "gid", "lid", "grp"
_ATOMS = {"get_global_id": GID, "get_local_id": LID, "get_group_id": GRP}
_SIZES = {"get_global_size": abi.CTX_GLOBAL_SIZE, "get_local_size": abi.CTX_LOCAL_SIZE,
          "get_enqueued_local_size": abi.CTX_LOCAL_SIZE, "get_num_groups": abi.CTX_NUM_GROUPS}
_MAX_CONSTANT = 1 << 24      # (so that the launch test's 128-bit products cannot overflow)
_MAX_FACTORS = 2             # uniform factors per monomial
_MAX_MONOMIALS = 8


class Proof:
    """What private_launch tests for one argument: `linear` {atom: polynomial} (atom:
    (GID|LID|GRP, d); polynomial: {monomial: int}, a monomial a sorted tuple of factors
    ("arg", i) | ("ctx", slot)), in bytes; `window` high - low; `fixed` the dimensions whose
    local id every site fixes; `reach` the sum of magnitudes (same shape, None for the uniform
    term) bounding every sub-expression; `args` the scalar arguments read."""

    def __init__(self, linear, window, fixed, reach, conditions=(), args=()):
        self.linear, self.window, self.fixed, self.reach = linear, window, fixed, reach
        self.conditions = conditions    # (windows: ways, one of which must hold; window a polynomial)
        self.args = sorted(set(args) | {f[1] for poly in list(linear.values()) + list(reach.values())
                                        for mono in poly for f in mono if f[0] == "arg"})


def note(table, g, index, node, size, write):
    """Note a race-checked access of `size` bytes through argument `index` of kernel g.f: its
    window (see _window), or None where the proof cannot read it; and the access itself, for
    windows' proof."""
    sites = table.race_private_sites.setdefault(g.f.name, {})
    sites.setdefault(index, []).append(_window(table, g, node, size))
    table.race_window_sites.setdefault(g.f.name, {}).setdefault(index, []).append((g, node, size, write))


def private_arguments(table, k):
    """Indices of kernel k's arguments with a proof (see above; private_launch tests it)."""
    return sorted(proofs(table, k))


def proofs(table, k):
    """{argument index: Proof} of kernel k."""
    out = {}
    for index, sites in table.race_private_sites.get(k.name, {}).items():
        proof = _proof(sites)
        if proof is not None:
            out[index] = proof
    return out


def _proof(sites):
    if not sites or any(s is None for s in sites):
        return None
    base, linear, fixed = sites[0][0], sites[0][1], set(sites[0][5])
    for s in sites[1:]:
        if s[0] is not base or s[1] != linear:
            return None
        fixed &= s[5]
    low = min(s[2] for s in sites)
    high = max(s[2] + s[3] for s in sites)
    reach = {}
    for s in sites:                     # (coefficient-wise largest: bounds every site's reach)
        for atom, poly in s[4].items():
            into = reach.setdefault(atom, {})
            for mono, c in poly.items():
                into[mono] = max(into.get(mono, 0), c)
    dims = {d for d, _ in fixed}
    if len(dims) != len(fixed):
        return None
    for atom, poly in linear.items():     # (what no launch with that id's range > 1 can pass)
        if atom is not None and set(poly) == {()} and abs(poly[()]) < high - low \
                and not (atom[0] == LID and atom[1] in dims):
            return None
    return Proof(linear, high - low, frozenset(dims), reach)


def _window(table, g, node, size):
    """(base variable, linear form in bytes without its constant, the constant, size, reach,
    fixed local ids {(d, k)}) of an access node of `size` bytes, or None."""
    if node is None or size <= 0:
        return None
    if node.op == "index" and len(node.kids) == 2:
        pointer, index = node.kids
    elif node.op == "deref" and node.kids and node.kids[0].op == "bin" and node.kids[0].val == "+" \
            and node.type is not None and node.type.size == size:
        pointer, index = node.kids[0].kids
        if not _is_pointer(pointer):
            pointer, index = index, pointer
    else:
        return None
    if not _is_pointer(pointer) or pointer.op != "load" or pointer.kids[0].op != "var":
        return None
    base = pointer.kids[0].val
    if base in table.assigned(g):                             # (a base that moves: no proof)
        return None
    exact, reach = Forms(table, g, False), Forms(table, g, True)
    form, absolute = exact.of(index), reach.of(index)
    if form is None or absolute is None:
        return None
    form = _scaled(form[0], size)
    absolute = _scaled(absolute[0], size)
    uniform = dict(form.pop(None, {}))
    constant = uniform.pop((), 0)
    if uniform:
        form[None] = uniform
    return base, form, constant, size, absolute, _fixed_ids(table, g).get(id(node), frozenset())


def _scaled(form, scale):
    return {atom: {m: c * scale for m, c in poly.items()} for atom, poly in form.items()}


def _is_pointer(n):
    return n.type is not None and n.type.is_pointer


def _strip(e):
    while e is not None and e.op == "conv" and e.kids:
        e = e.kids[0]
    return e


def _dimension(e):
    """The constant dimension argument of a work-item builtin, 0..2, else None."""
    if len(e.kids) != 1:
        return None
    d = _strip(e.kids[0])
    return d.val if d is not None and d.op == "const" and d.val in (0, 1, 2) else None


class Forms:
    """Linear forms of index expressions of the kernel g lowers: of(e) is ({atom: polynomial},
    nonneg) or None. absolute: the reach instead (every constant's magnitude, `-` as `+`)."""

    def __init__(self, table, g, absolute):
        self.table, self.g, self.absolute = table, g, absolute

    def of(self, e, depth=0):
        if e is None or depth > 12 or e.type is None or not e.type.is_int or e.type.is_vector \
                or e.type.bits < 32:
            return None
        got = self._of(e, depth)
        if got is not None and e.type.bits < 64 and not got[1]:
            return None             # (a narrow value that may be negative: not exact)
        return got

    def _of(self, e, depth):
        op = e.op
        if op == "conv":
            return self.of(e.kids[0], depth + 1) if e.kids else None
        if op == "const":
            if not isinstance(e.val, int) or abs(e.val) > _MAX_CONSTANT:
                return None
            return {None: {(): abs(e.val) if self.absolute else e.val}}, e.val >= 0
        if op == "builtin" and e.val in _ATOMS:
            d = _dimension(e)
            return None if d is None else ({(_ATOMS[e.val], d): {(): 1}}, True)
        if op == "builtin" and e.val in _SIZES:
            d = _dimension(e)
            return None if d is None else ({None: {(("ctx", _SIZES[e.val] + d),): 1}}, True)
        if op == "load" and e.kids and e.kids[0].op == "var":
            v = e.kids[0].val
            params = list(self.g.f.params)
            if v in params:
                if v in self.table.assigned(self.g) or v.type.is_pointer or not v.type.is_int \
                        or v.type.is_vector or v.type.bits < 32:
                    return None
                return {None: {(("arg", params.index(v)),): 1}}, True    # (>= 0: the launch checks)
            init = self.table._initialiser(self.g, v)
            return self.of(init, depth + 1) if init is not None else None
        if op == "bin" and len(e.kids) == 2 and e.val in ("+", "-", "*"):
            x, y = (self.of(kid, depth + 1) for kid in e.kids)
            if x is None or y is None:
                return None
            if e.val == "*":
                return _times(x[0], y[0]), x[1] and y[1]
            sign = -1 if e.val == "-" and not self.absolute else 1
            return _plus(x[0], y[0], sign), x[1] and y[1] and e.val == "+"
        if op == "bin" and len(e.kids) == 2 and e.val == "<<":
            shift = _strip(e.kids[1])
            x = self.of(e.kids[0], depth + 1)
            if x is None or shift.op != "const" or not isinstance(shift.val, int) or not 0 <= shift.val < 24:
                return None
            return _times(x[0], {None: {(): 1 << shift.val}}), x[1]
        return None


def _plus(x, y, sign):
    out = {atom: dict(poly) for atom, poly in x.items()}
    for atom, poly in y.items():
        into = out.setdefault(atom, {})
        for mono, c in poly.items():
            into[mono] = into.get(mono, 0) + sign * c
    return _tidy(out)


def _times(x, y):
    """The product of two forms one of which is uniform (only the None atom), else None."""
    if set(x) - {None} and set(y) - {None}:
        return None
    if set(x) - {None}:
        x, y = y, x
    u = x.get(None, {})
    out = {}
    for atom, poly in y.items():
        into = out.setdefault(atom, {})
        for m1, c1 in u.items():
            for m2, c2 in poly.items():
                mono = tuple(sorted(m1 + m2))
                c = c1 * c2
                if len(mono) > _MAX_FACTORS or abs(c) > _MAX_CONSTANT:
                    return None
                into[mono] = into.get(mono, 0) + c
    return _tidy(out)


def _tidy(form):
    if form is None:
        return None
    out = {}
    for atom, poly in form.items():
        poly = {m: c for m, c in poly.items() if c}
        if poly:
            if len(poly) > _MAX_MONOMIALS:
                return None
            out[atom] = poly
    return out


def _fixed_ids(table, g):
    """{id(node): frozenset((d, k))}: the local ids fixed by the `if`s around each node of the
    kernel g lowers (a node met twice keeps what both places fix; none in a kernel with `goto`
    or `switch` labels, which may jump into an arm)."""
    fixed = getattr(g, "check_fixed_ids", None)
    if fixed is not None:
        return fixed
    fixed = g.check_fixed_ids = {}
    forms = Forms(table, g, False)
    todo = [(g.f.body, frozenset())]
    while todo:
        n, around = todo.pop()
        if n is None or not hasattr(n, "op"):
            continue
        if n.op in ("goto", "label", "case", "default"):
            fixed.clear()                # (a jump into an `if`'s arm passes no test: no guards)
            return fixed
        key = id(n)
        fixed[key] = around if key not in fixed else fixed[key] & around
        kids = list(n.kids or ())
        if n.op == "if" and len(kids) >= 2:
            todo.append((kids[0], around))
            todo.append((kids[1], around | _equalities(forms, kids[0])))
            todo.extend((kid, around) for kid in kids[2:])
        else:
            todo.extend((kid, around) for kid in kids)
    return fixed


def _equalities(forms, cond):
    """{(d, k)} for each `get_local_id(d) == k` the condition cond requires (through `&&`)."""
    cond = _strip(cond)
    if cond is None:
        return frozenset()
    if cond.op == "land" and len(cond.kids) == 2:
        return _equalities(forms, cond.kids[0]) | _equalities(forms, cond.kids[1])
    if cond.op != "bin" or cond.val != "==" or len(cond.kids) != 2:
        return frozenset()
    sides = [forms.of(kid) for kid in cond.kids]
    if any(s is None for s in sides):
        return frozenset()
    for one, other in (sides, sides[::-1]):
        form = one[0]
        constant = other[0]
        atoms = [a for a in form if a is not None]
        if len(atoms) == 1 and atoms[0][0] == LID and form[atoms[0]] == {(): 1} \
                and set(form.get(None, {})) <= {()} and set(constant) <= {None} \
                and set(constant.get(None, {})) <= {()}:
            k = constant.get(None, {}).get((), 0) - form.get(None, {}).get((), 0)
            return frozenset({(atoms[0][1], k)})
    return frozenset()
