"""PYPLAT_CHECK=races: a second proof that no two work-items touch the same bytes of a `__global`
argument (beside private_proofs's linear forms), for the accesses that move in loops: each group
stays inside a window of its own, and a group's work-items stay apart in each barrier-free
region. pyopencl's scan writes its partial sums so: `partial[unit_base + k * WG + lid]` in
loops over units and k, `partial[interval_end - 1]` read by work-item 0. Kernels with
reqd_work_group_size only (the lanes below need the group's ids).

An access's index is split into a *uniform* part U (the same for every work-item of a group in
the access's region) and *lane* parts, run for every local id and counted-loop value that
reaches it (local_footprints.py). U is a linear form of the group ids, scalar arguments, the
launch's sizes, private variables set once, and two kinds of atoms:
- an *induction* variable: set at its declaration and stepped by a positive constant in the
  step of one `for` (pyopencl's `unit_base += unit_size`), under uniform control; it is at least
  its first value, and below what that loop's condition allows in its body;
- `min(a, b)`: at most a, at most b, at least both's lower bound.
U's variables must not change in the access's region: every work-item then has the same U there.

Inside a group: the accesses of one region that share U are apart when no byte of U + lanes is
touched by two lanes' work-items of which one writes (the lanes give the bytes exactly).
Across groups: a window W (a linear form of the group ids) and its size S (no group ids) are
read off the first access's lower and upper bounds; every access is then shown to lie in
[W, W + S), using the `if` and loop conditions around it as facts (`a < b`: b - a - 1 >= 0). What
the proof cannot settle at compile time is left as conditions the launch tests (linear in the
group ids: tested at the extreme groups); the windows are apart when the group ids' coefficients
pass private_launch's mixed-radix test with window S.

Exact integers: every value compared or taken the minimum of is a sum without `-` of
non-negative terms, and the launch checks that the sum of every term's magnitude is below 2^31
(the reach); the index itself may subtract, since its value is shown to be in [W, W + S).
"""
import numpy as np

from .. import abi
from . import barrier_regions, local_footprints
from ..lowering.barrier_tree import assigned_vars, conjuncts, constant_int, has_barrier, walk
from . import private_proofs
from .private_proofs import GRP, Proof

_PRIMITIVE = ("grp", "arg", "ctx")
_WAYS = 8                       # alternatives the prover keeps
_DEPTH = 24
_SIZES = {"get_global_size": 0, "get_local_size": 1, "get_enqueued_local_size": 1, "get_num_groups": 2}


def private_arguments(table, k):
    """Indices of kernel k's arguments with a proof, private_proofs's or this module's."""
    return sorted(proofs(table, k))


def proofs(table, k):
    """{argument index: Proof} of kernel k: private_proofs's, else this module's (once the full
    version is lowered: its sites are all noted then)."""
    out = private_proofs.proofs(table, k)
    for index, sites in table.race_window_sites.get(k.name, {}).items():
        key = (k.name, index)
        if index in out or not sites or k.body is None or not all(x > 0 for x in k.reqd):
            continue
        if key not in table.race_proofs:
            try:
                table.race_proofs[key] = _kernel(table, k).proof(sites)
            except _NoProof:
                table.race_proofs[key] = None
        if table.race_proofs[key] is not None:
            out[index] = table.race_proofs[key]
    return out


def _kernel(table, k):
    if k.name not in table.window_kernels:
        table.window_kernels[k.name] = _Kernel(k)
    return table.window_kernels[k.name]


class _NoProof(Exception):
    pass


class _Kernel:
    def __init__(self, k):
        self.k = k
        self.fp = local_footprints.Footprints(k)
        self.region = barrier_regions.regions(k.body) or {}
        self.parents = {}
        walk(k.body, lambda n: self.parents.update((id(x), n) for x in n.kids or () if x is not None))
        self.atoms = {}                         # id -> the variable or `min` node of an atom
        self.seen = {}                          # an atom's id -> when parsing first met it: the
                                                # proof's order of atoms (ids differ run to run)
        self.compared = []                      # forms of values one proof's facts compare (its reach)
        self.inductions, self.strided = {}, {}  # (filled by _find_inductions, which reads them)
        self._find_inductions()

    # ------------------------------------------------------------------ the tree
    def path(self, node):
        out = [node]
        while id(out[-1]) in self.parents:
            out.append(self.parents[id(out[-1])])
        return out[::-1]

    def _find_inductions(self):
        """self.inductions {variable: (its declaration's initialiser, step, the `for` stepping
        it)} and self.strided {variable: (uniform part, first values per lane, step, the `for`)}."""
        steps = {}

        def visit(n):
            if n.op == "for" and len(n.kids) == 4 and n.kids[2] is not None:
                inc = n.kids[2]
                if inc.op == "cassign" and inc.val == "+" and inc.kids[0].op == "var":
                    steps.setdefault(inc.kids[0].val, []).append((n, inc.kids[1]))
                elif inc.op == "incdec" and inc.val[0] > 0 and inc.kids[0].op == "var":
                    steps.setdefault(inc.kids[0].val, []).append((n, None))
        walk(self.k.body, visit)
        assigns = {}
        walk(self.k.body, lambda x: assigns.setdefault(x.kids[0].val, []).append(x)
             if x.op in ("assign", "cassign", "incdec", "addr") and x.kids and x.kids[0] is not None
             and getattr(x.kids[0], "op", None) == "var" else None)
        self.inductions = {}
        for v, found in steps.items():
            if len(found) != 1 or len(assigns.get(v, ())) != 1 or getattr(v, "storage", None) != "private":
                continue
            loop, by = found[0]
            step = 1 if by is None else self.fp.constant(by)
            init = self.fp.decls.get(v)
            if init is None or not step or step <= 0 or v.type is None or not v.type.is_int \
                    or v.type.bits < 32:
                continue
            self.inductions[v] = (init, step, loop)
        candidates = dict(self.inductions)
        changed = True
        while changed:                  # (each one's uniformity may rest on the others')
            changed = False
            for v, (init, step, loop) in list(self.inductions.items()):
                if not self._uniform(init) or not self._uniform_control(loop):
                    del self.inductions[v]
                    changed = True
        start = self.fp.env_at([self.k.body])
        for v, (init, step, loop) in candidates.items():
            if v in self.inductions or start is None:
                continue
            lanes = {}
            got = self.parse(init, lanes, start)
            if got is None or any(f[0] in ("ind", "str") for m in got[0] for f in m):
                continue
            form, first = dict(got[0]), np.zeros(len(start.mask), dtype=np.int64)
            for key, e in lanes.items():
                value = start.value(e, None)
                if value is None:
                    break
                first = first + form.pop((key,), 0) * value
            else:
                self.strided[v] = (form, first, step, loop)

    def _uniform_control(self, loop):
        """Every condition deciding whether and how often `loop` steps is uniform: those around it,
        its own, and those of the `if`s around its jumps out (break, continue, return)."""
        path = self.path(loop)
        for n, inner in zip(path, path[1:]):
            if n.op in ("if", "for", "while", "do", "cond", "land", "lor", "switch") and \
                    not self._uniform(_condition_of(n)):
                return False
        ok = [True]

        def visit(x, conds):
            if x is None or not hasattr(x, "op") or not ok[0]:
                return
            if x.op in ("break", "continue", "return", "goto") and not all(self._uniform(c) for c in conds):
                ok[0] = False
            inner = conds + ([_condition_of(x)] if x.op in ("if", "while", "do", "switch", "for") else [])
            for kid in x.kids or ():
                visit(kid, inner)
        visit(loop.kids[3], [])
        return ok[0] and self._uniform(loop.kids[1])

    def _uniform(self, e, depth=0):
        """e has one value for every work-item of a group (constants, group ids, sizes, scalar
        arguments, variables set once from such, induction variables)."""
        if e is None:
            return True
        if depth > 40 or not hasattr(e, "op"):
            return False
        if e.op == "builtin":
            if e.val in ("get_local_id", "get_global_id", "get_local_linear_id", "get_global_linear_id"):
                return False
            return all(self._uniform(x, depth + 1) for x in e.kids or ())
        if e.op in ("call", "index", "deref", "member", "assign", "cassign", "incdec", "addr"):
            return False
        if e.op == "load" and e.kids and e.kids[0].op == "var":
            v = e.kids[0].val
            if v in self.k.params:
                return not v.type.is_pointer and v not in self.fp.assigned
            if v in self.inductions:
                return True
            init = self.fp.decls.get(v)
            return init is not None and v not in self.fp.assigned and \
                getattr(v, "storage", None) == "private" and self._uniform(init, depth + 1)
        if e.op == "load":
            return False
        return all(self._uniform(x, depth + 1) for x in e.kids or ())

    # ------------------------------------------------------------------ linear forms
    def parse(self, e, lanes=None, env=None, depth=0):
        """(form, plus_only) of e, a form {monomial: coefficient} (a monomial: a sorted tuple of
        factors, primitive ones ("grp" | "arg" | "ctx", n) or one atom ("ind" | "min" | "lane",
        id)), or None. lanes: a dict collecting the lane atoms' nodes, where they are allowed
        (env: the lanes at the access, whose loop counters are lane atoms)."""
        if e is None or depth > 30 or e.type is None or not e.type.is_int or e.type.is_vector \
                or e.type.is_bool:
            return None
        op, kids = e.op, e.kids or ()
        if op == "conv" and kids:
            if e.type.bits < 32 or kids[0].type is None or not kids[0].type.is_int or kids[0].type.bits < 32:
                return None
            got = self.parse(kids[0], lanes, env, depth + 1)
            if got is not None and e.type.bits != kids[0].type.bits and not got[1]:
                return None             # (a value that may wrap, then widened: not exact)
            return got
        if op == "const" and isinstance(e.val, int):
            return {(): e.val}, e.val >= 0
        if op == "builtin" and e.val == "get_group_id" and len(kids) == 1 and constant_int(kids[0]) in (0, 1, 2):
            return {(("grp", constant_int(kids[0])),): 1}, True
        if op == "builtin" and e.val in _SIZES and len(kids) == 1 and constant_int(kids[0]) in (0, 1, 2):
            base = (abi.CTX_GLOBAL_SIZE, abi.CTX_LOCAL_SIZE, abi.CTX_NUM_GROUPS)[_SIZES[e.val]]
            return {(("ctx", base + constant_int(kids[0])),): 1}, True
        if op == "builtin" and e.val == "min" and len(kids) == 2 and self._uniform(e):
            sides = [self.parse(x, None, None, depth + 1) for x in kids]
            if any(s is None or not s[1] for s in sides):
                return None
            self.atoms[id(e)] = e
            return {(("min", self._met(id(e))),): 1}, True
        if op == "load" and kids and kids[0].op == "var":
            v = kids[0].val
            if v in self.k.params:
                if v.type.is_pointer or v in self.fp.assigned or v.type.bits < 32:
                    return None
                return {(("arg", list(self.k.params).index(v)),): 1}, True
            if lanes is not None and env is not None and v in env.counters:
                key = ("lane", self._met(id(v)))
                lanes[key] = e
                return {(key,): 1}, True
            if v in self.inductions:
                self.atoms[id(v)] = v
                return {(("ind", self._met(id(v))),): 1}, True
            if v in self.strided:
                self.atoms[id(v)] = v
                return {(("str", self._met(id(v))),): 1}, True
            init = self.fp.decls.get(v)
            if init is not None and v not in self.fp.assigned and getattr(v, "storage", None) == "private":
                got = self.parse(init, lanes, env, depth + 1)
                if got is not None or lanes is None:
                    return got
        if op == "bin" and len(kids) == 2 and e.val in ("+", "-", "*"):
            x, y = (self.parse(kid, lanes, env, depth + 1) for kid in kids)
            if x is not None and y is not None:
                if e.val == "*":
                    return _times(x[0], y[0]), x[1] and y[1]
                return _plus(x[0], y[0], -1 if e.val == "-" else 1), x[1] and y[1] and e.val == "+"
        if lanes is not None and not self._uniform(e):
            key = ("lane", self._met(_lane_key(e)))
            lanes[key] = e
            return {(key,): 1}, True            # (its values are checked >= 0 where it counts)
        return None

    def _met(self, ident):
        """An atom's id, noted the first time parsing meets it (self.seen)."""
        self.seen.setdefault(ident, len(self.seen))
        return ident

    # ------------------------------------------------------------------ the proof
    def proof(self, sites):
        self.compared = []
        by_region, bounds, forms = {}, [], []
        for g, node, size, write in sites:
            got = self._site(node, size)
            if got is None:
                raise _NoProof()
            base, uniform, form, (flat, part), ranges, facts = got
            if not len(flat):
                continue                        # (no lane reaches it)
            by_region.setdefault(self.region[id(node)], []).append((base, _frozen(uniform), flat, part, write, size))
            bounds.append((form, size, facts, ranges))
            forms.append(form)
        for accesses in by_region.values():
            if any(a[1] != accesses[0][1] for a in accesses) and any(a[4] for a in accesses):
                raise _NoProof()
            if any(f[0] == "str" for m, _ in accesses[0][1] for f in m) and \
                    len({a[5] for a in accesses}) != 1:
                raise _NoProof()                # (residues of one element size only)
            if not _apart([(flat, part * size, write, size) for _, _, flat, part, write, size in accesses]):
                raise _NoProof()
        if not bounds or len({id(a[0]) for accesses in by_region.values() for a in accesses}) != 1:
            raise _NoProof()
        return self._windows(bounds, forms)

    def _site(self, node, size):
        """(base variable, U, the index's form with its lane atoms, (lane ids, lane part) where
        lanes reach it, the lane atoms' ranges, facts) of a site, or None."""
        if node is None or node.op != "index" or len(node.kids) != 2 or size <= 0 or id(node) not in self.region:
            return None
        pointer, index = node.kids
        if pointer.op != "load" or pointer.kids[0].op != "var" or pointer.kids[0].val in self.fp.assigned:
            return None
        path = self.path(node)
        env = self.fp.env_at(path)
        if env is None:
            return None
        lane_nodes = {}
        got = self.parse(index, lane_nodes, env)
        if got is None:
            return None
        form, uniform = got[0], dict(got[0])
        part = np.zeros(len(env.mask), dtype=np.int64)
        ranges = {}
        for key, e in lane_nodes.items():
            v = env.value(e, None)
            if v is None:
                return None
            part = part + uniform.pop((key,), 0) * v
            if env.mask.any():
                ranges[key] = (int(v[env.mask].min()), int(v[env.mask].max()))
        region = self.region[id(node)]
        for m in uniform:                       # (U is the same for all work-items in the region)
            for f in m:
                if f[0] == "ind" and not self._one_value(self.atoms[f[1]], node, path, region):
                    return None
        facts = []
        for fact, lanes in self._facts(path, env):
            for key, e in lanes.items():        # (its lanes' values, >= 0: compared exactly)
                v = env.value(e, None)
                if v is None or not env.mask.any() or v[env.mask].min() < 0:
                    break
                ranges.setdefault(key, (int(v[env.mask].min()), int(v[env.mask].max())))
            else:
                facts.append(fact)
        keep = env.mask
        flat, part = env.lanes["flat"][keep], part[keep]
        strided = [f for m in uniform for f in m if f[0] == "str"]
        if strided:                             # (U0 + first(lane) + step * turns + d)
            d = uniform.get((), 0)
            if lane_nodes.keys() & {k for m in form for k in m} or set(uniform) - {(strided[0],), ()} \
                    or uniform[(strided[0],)] != 1:
                return None
            _, first, step, _ = self.strided[self.atoms[strided[0][1]]]
            part = (first[flat] + d) % step     # (two work-items meet only on one residue)
        return pointer.kids[0].val, uniform, form, (flat, part), ranges, facts

    def _one_value(self, v, node, path, region):
        """Whether induction variable v has one value for every work-item at `node` in an epoch
        of its region: its step is in another region; or its loop's body has a barrier (one step
        per epoch, taken by every work-item before the access) and node is not in that body
        after a barrier (where the step is still to come)."""
        loop = self.inductions[v][2]
        if self.region.get(id(loop.kids[2])) != region:
            return True
        body = loop.kids[3]
        if not has_barrier(body, {}):
            return False
        if body not in path:
            return True
        inner = path[path.index(body) + 1] if body.op == "block" and path.index(body) + 1 < len(path) else None
        if inner is None:
            return False
        for s in body.kids:
            if s is inner:
                return not has_barrier(s, {})
            if s is not None and has_barrier(s, {}):
                return False
        return False

    def _facts(self, path, env):
        """(form >= 0, its lane atoms' nodes) that hold at path[-1]: the `if` conditions it is under
        (then-arms), and the conditions of the `for` loops whose bodies hold it and do not
        change what they compare."""
        facts = []
        for n, inner in zip(path, path[1:]):
            cond = None
            if n.op == "if" and len(n.kids) >= 2 and inner is n.kids[1]:
                cond = n.kids[0]
            elif n.op == "for" and len(n.kids) == 4 and inner is n.kids[3]:
                cond = n.kids[1]
                changed = assigned_vars(n.kids[3])
                if any(x.op == "var" and x.val in changed for x in _nodes(cond)):
                    cond = None
            for c in conjuncts(cond) if cond is not None else ():
                lanes = {}
                f = self._fact(c, lanes, env)
                if f is not None:
                    facts.append((f, lanes))
        return facts

    def _fact(self, c, lanes, env):
        if c is None or c.op != "bin" or c.val not in ("<", "<=", ">", ">=") or len(c.kids) != 2:
            return None
        a, b = c.kids
        if c.val in (">", ">="):
            a, b = b, a
        sides = [self.parse(x, lanes, env) for x in (a, b)]
        if any(s is None or not s[1] for s in sides):
            return None
        self.compared.extend(side[0] for side in sides)
        return _plus(sides[1][0], _plus(sides[0][0], {(): 1 if c.val in ("<", ">") else 0}, 1), -1)

    def _windows(self, bounds, forms):
        """The Proof of the windows (above), from each site's (index form, size, facts, lane
        ranges): W and S from the first site's bounds, then every site shown inside."""
        def extent(form, size):                 # (its first and one past its last byte)
            return _scale(form, size), _plus(_scale(form, size), {(): size}, 1)
        form, size, facts, ranges = bounds[0]
        low, high = extent(form, size)
        chosen = None
        for w in self._extremes(low, False, facts, ranges):
            for top in self._extremes(high, True, facts, ranges):
                length = _plus(top, w, -1)
                if chosen is None and not any(f[0] == "grp" for m in length for f in m):
                    chosen = (w, length)
        if chosen is None:
            raise _NoProof()
        base, length = chosen
        ways = [[]]
        for form, size, facts, ranges in bounds:
            low, high = extent(form, size)
            for goal in (_plus(low, base, -1), _plus(_plus(base, length, 1), high, -1)):
                found = self._prove(goal, facts, ranges)
                if not found:
                    raise _NoProof()
                ways = _fewest([w + x for w in ways for x in found])
        linear = {}
        for m, c in base.items():
            groups = [f for f in m if f[0] == "grp"]
            if len(groups) > 1:
                raise _NoProof()
            if groups:
                rest = tuple(sorted(_factor(f) for f in m if f[0] != "grp"))
                into = linear.setdefault((GRP, groups[0][1]), {})
                into[rest] = into.get(rest, 0) + c
        everything = forms + [base, length] + [c for w in ways for c in w]
        reach = self._reach(forms, [r for _, _, _, r in bounds])     # (what the kernel computes)
        conditions = [[_split(c) for c in way] for way in ways]
        extra = {f[1] for form in everything for m in form for f in m if f[0] == "arg"}
        return Proof(linear, _poly(length), frozenset((0, 1, 2)), reach, conditions, extra)

    def _reach(self, forms, lane_ranges):
        """{None: polynomial, (GRP, d): polynomial} bounding the magnitude of every form (each
        term's: atoms at their largest, their own bounding forms' reach), coefficient-wise the
        largest of them all (all coefficients >= 0, so it bounds each)."""
        largest = {}
        for ranges in lane_ranges:
            for low, high in ranges.values():
                largest[("lane",)] = max(largest.get(("lane",), 0), abs(low), abs(high))
        memo = {}

        def of_atom(atom):
            if atom[0] == "lane":
                return {(): largest.get(("lane",), 0)}
            if atom not in memo:
                memo[atom] = {}                 # (a cycle: the other bounding forms count)
                total = {}
                extra, bounding = self._atom_forms(atom)
                for form in bounding:
                    total = _widest(total, of_form(form))
                memo[atom] = _plus(total, {(): extra}, 1)
            return memo[atom]

        def of_form(form):
            total = {}
            for m, c in form.items():
                if len(m) == 1 and m[0][0] in ("ind", "str", "min", "lane"):
                    total = _plus(total, _scale(of_atom(m[0]), abs(c)), 1)
                else:
                    total = _plus(total, {m: abs(c)}, 1)
            return total
        total = {}
        for form in forms + self.compared:
            total = _widest(total, of_form(form))
        out = {}
        for m, c in total.items():
            groups = [f for f in m if f[0] == "grp"]
            if len(groups) > 1:
                raise _NoProof()
            key = (GRP, groups[0][1]) if groups else None
            rest = tuple(sorted(_factor(f) for f in m if f[0] != "grp"))
            into = out.setdefault(key, {})
            into[rest] = into.get(rest, 0) + c
        return out

    def _first_value(self, atom):
        """A form an induction or strided variable never falls below: its first value (the
        least of a strided one's lanes)."""
        v = self.atoms[atom[1]]
        if atom[0] == "str":
            form, first, _, _ = self.strided[v]
            return _plus(form, {(): int(first.min())}, 1)
        got = self.parse(self.inductions[v][0])
        return None if got is None else got[0]

    def _atom_forms(self, atom):
        """(what its value may exceed them by, the forms an atom's value is bounded by)."""
        node = self.atoms[atom[1]]
        if atom[0] == "min":
            return 0, [self.parse(x)[0] for x in node.kids]
        if atom[0] == "str":
            form, first, step, loop = self.strided[node]
            out = [_plus(form, {(): int(abs(first).max())}, 1)]
        else:
            init, step, loop = self.inductions[node]
            out = [self.parse(init)[0]]
        for c in conjuncts(loop.kids[1]):
            if c.op == "bin" and len(c.kids) == 2:
                out.extend(s[0] for s in (self.parse(x) for x in c.kids) if s is not None)
        return step, out

    def _extremes(self, form, upper, facts, ranges, depth=0):
        """Forms of primitive factors only that bound `form` from above (upper) or below."""
        atom = _first_atom(form, self.seen)
        if atom is None:
            return [form]
        if depth > _DEPTH:
            return []
        c = form[(atom,)]
        rest = {m: v for m, v in form.items() if m != (atom,)}
        up = (c > 0) == upper                   # (a bound of the atom from above is wanted)
        out = []
        if atom[0] == "lane":
            if atom not in ranges:
                return []
            out = self._extremes(_plus(rest, {(): c * ranges[atom][1 if up else 0]}, 1), upper, facts, ranges,
                                 depth + 1)
        elif atom[0] == "min":
            if up:
                for x in self.atoms[atom[1]].kids:
                    out += self._extremes(_plus(rest, _scale(self.parse(x)[0], c), 1), upper, facts, ranges,
                                          depth + 1)
        elif not up:
            init = self._first_value(atom)
            if init is not None:
                out = self._extremes(_plus(rest, _scale(init, c), 1), upper, facts, ranges, depth + 1)
        else:
            for f in facts:
                k = f.get((atom,), 0)
                if k < 0 and c % k == 0:
                    m = abs(c // k)
                    out += self._extremes(_plus(form, _scale(f, m if upper else -m), 1), upper, facts, ranges,
                                          depth + 1)
        return out[:_WAYS]

    def _prove(self, goal, facts, ranges, depth=0):
        """Ways in which goal >= 0 follows: each a list of forms of primitive factors, linear in
        the group ids, that the launch must find >= 0 ([] where nothing is left)."""
        goal = _tidy(goal)
        atom = _first_atom(goal, self.seen)
        if atom is None:
            if all(c >= 0 for c in goal.values()):
                return [[]]
            if all(c <= 0 for c in goal.values()) or any(sum(f[0] == "grp" for f in m) > 1 for m in goal):
                return []                       # (never: every factor is >= 0)
            return [[goal]]
        if depth > _DEPTH:
            return []
        c = goal[(atom,)]
        rest = {m: v for m, v in goal.items() if m != (atom,)}
        out = []
        if atom[0] == "lane":
            if atom in ranges:
                out = self._prove(_plus(rest, {(): c * ranges[atom][0 if c > 0 else 1]}, 1), facts, ranges, depth + 1)
        elif atom[0] == "min":
            sides = [_scale(self.parse(x)[0], c) for x in self.atoms[atom[1]].kids]
            if c > 0:                           # (both sides)
                first = self._prove(_plus(rest, sides[0], 1), facts, ranges, depth + 1)
                second = self._prove(_plus(rest, sides[1], 1), facts, ranges, depth + 1) if first else []
                out = [x + y for x in first for y in second]
            else:
                for side in sides:
                    out += self._prove(_plus(rest, side, 1), facts, ranges, depth + 1)
        elif c > 0:
            init = self._first_value(atom)
            if init is not None:
                out = self._prove(_plus(rest, _scale(init, c), 1), facts, ranges, depth + 1)
        if atom[0] != "min" and c < 0:
            for f in facts:                     # (goal - m * f >= 0 gives goal >= 0)
                k = f.get((atom,), 0)
                if k < 0 and c % k == 0:
                    out += self._prove(_plus(goal, _scale(f, c // k), -1), facts, ranges, depth + 1)
        return _fewest(out)


def _fewest(ways):
    """The _WAYS ways with the fewest conditions, each condition once."""
    out, seen = [], set()
    for way in ways:
        unique = {_frozen(c): c for c in way}
        key = frozenset(unique)
        if key not in seen:
            seen.add(key)
            out.append(list(unique.values()))
    out.sort(key=len)
    return out[:_WAYS]


# ---------------------------------------------------------------------- forms
def _first_atom(form, seen):
    """A non-primitive factor of the form (`ind` and `min` before lanes, each in the order
    parsing met them: the same proof, and the same IR, in every run), or None."""
    found = [m[0] for m in form if len(m) == 1 and m[0][0] not in _PRIMITIVE]
    found.sort(key=lambda a: (a[0] == "lane", seen.get(a[1], len(seen)), str(a)))
    return found[0] if found else None


def _plus(x, y, sign):
    out = dict(x)
    for m, c in y.items():
        out[m] = out.get(m, 0) + sign * c
    return _tidy(out)


def _scale(x, c):
    return _tidy({m: v * c for m, v in x.items()})


def _times(x, y):
    """The product of two forms, where it stays one (a constant times anything, primitive
    factors times primitive factors), else None."""
    out = {}
    for m1, c1 in x.items():
        for m2, c2 in y.items():
            m = tuple(sorted(m1 + m2, key=str))
            if len(m) > 2 or (len(m) > 1 and any(f[0] not in _PRIMITIVE for f in m)):
                return None
            out[m] = out.get(m, 0) + c1 * c2
    return _tidy(out)


def _tidy(form):
    return {m: c for m, c in form.items() if c}


def _widest(x, y):
    """Coefficient-wise the larger of two forms with coefficients >= 0."""
    out = dict(x)
    for m, c in y.items():
        out[m] = max(out.get(m, 0), c)
    return out


def _frozen(form):
    return frozenset(form.items())


def _factor(f):
    """A primitive factor as private_launch reads it: ("arg", i) or ("ctx", slot)."""
    return (f[0], f[1])


def _poly(form):
    """A form without group ids as a private_proofs polynomial {monomial: coefficient}."""
    out = {}
    for m, c in form.items():
        if any(f[0] not in ("arg", "ctx") for f in m):
            raise _NoProof()
        key = tuple(sorted(_factor(f) for f in m))
        out[key] = out.get(key, 0) + c
    return out


def _split(form):
    """A condition's form as {None: polynomial, (GRP, d): polynomial}."""
    out = {}
    for m, c in form.items():
        groups = [f for f in m if f[0] == "grp"]
        key = (GRP, groups[0][1]) if groups else None
        rest = tuple(sorted(_factor(f) for f in m if f[0] != "grp"))
        into = out.setdefault(key, {})
        into[rest] = into.get(rest, 0) + c
    return out


def _lane_key(e):
    while e.op == "conv" and e.kids:
        e = e.kids[0]
    if e.op == "load" and e.kids and e.kids[0].op == "var":
        return id(e.kids[0].val)
    return id(e)


def _condition_of(n):
    if n.op in ("if", "cond", "switch"):
        return n.kids[0]
    if n.op == "for":
        return n.kids[1]
    if n.op == "while":
        return n.kids[0]
    if n.op == "do":
        return n.kids[1]
    if n.op in ("land", "lor"):
        return n.kids[0]
    return None


def _nodes(e):
    out = []
    walk(e, out.append)
    return out


def _apart(footprints):
    """No byte is touched by two lanes' work-items of which one writes (footprints: (lane ids,
    first bytes, written, size) per access; bytes relative to one base)."""
    owners, at, writes = [], [], []
    for lid, start, write, n in footprints:
        for j in range(n):
            owners.append(lid)
            at.append(start + j)
            writes.append(np.full(len(start), write, dtype=bool))
    if not owners:
        return True
    owners, at, writes = np.concatenate(owners), np.concatenate(at), np.concatenate(writes)
    if not writes.any():
        return True
    order = np.lexsort((owners, at))
    at, owners, writes = at[order], owners[order], writes[order]
    starts = np.flatnonzero(np.r_[True, at[1:] != at[:-1]])
    low = np.minimum.reduceat(owners, starts)
    high = np.maximum.reduceat(owners, starts)
    written = np.maximum.reduceat(writes.astype(np.int8), starts) > 0
    return not (written & (low != high)).any()
