"""The bytes of a `__local` array each work-item of a group touches at an access, found by
running the access's index arithmetic for every local id and every value of the counted loops
around it, at once as numpy arrays (a *lane* per local id and loop iteration). For kernels
with reqd_work_group_size only: the group's ids are then known when the kernel is compiled.

intervals.py takes the footprints of all accesses to one object in one barrier-free region
(barrier_regions.py): where no byte is touched by two work-items one of which writes, none of
those accesses can race, and their race checks are left out. pyopencl's scan, for one: its
`ldata[o % K][o / K]` with o = k * WG + lid, its carry-in by work-item 0, and its update of
`ldata[k][lid]` next to a read of `ldata[K][lid - 1]`.

What is known, and so evaluated, at an access:
- constants, get_local_id and get_local_size (reqd), and C's integer arithmetic on them
  (`+ - * / % << >> & | ^ ~ !`, comparisons, `?:`, `&&`, `||`, conversions), exact in each
  node's type: two's complement wrapping, division toward zero, shift counts modulo the width;
- a counted loop's counter, in its body: `for (k = a; cond; k += c)` (or `++`, `--`, `-= c`)
  where the body never assigns k and nothing takes its address; every value from a while cond
  holds, per lane (a break only leaves some out);
- a private variable set once, at its declaration, from known values (evaluated with only the
  counters of the loops around that declaration: those it saw);
- the `if`, `?:`, `&&` and `||` conditions that lead to the access: a lane where a known one
  fails does not reach it. An unknown condition (a uniform value, a loaded one) is taken as
  reached: more lanes, more bytes, never fewer.
Anything else (arguments, group or global ids, loads of memory, loops with unknown counts) makes
the access unknown, and its object in that region keeps its race checks.
"""
import numpy as np

from ..lowering.barrier_tree import assigned_vars, conjuncts, constant_int, walk

_MAX_LANES = 1 << 16          # local ids x loop iterations per access
_MAX_BYTES = 1 << 21          # bytes per object and region
_BITS_OF_INT = 32


class Footprints:
    """Footprints of the `__local` accesses of kernel k (reqd_work_group_size set)."""

    def __init__(self, k):
        self.k = k
        self.shape = tuple(int(x) for x in k.reqd)
        self.assigned = assigned_vars(k.body)
        self.decls, self.decl_loops = {}, {}
        self._find_decls(k.body, ())

    def _find_decls(self, body, loops):
        stack = [(body, loops)]
        while stack:
            n, loops = stack.pop()
            if n is None or not hasattr(n, "op"):
                continue
            if n.op == "decl" and n.kids and n.kids[0] is not None and hasattr(n.kids[0], "op"):
                seen = n.val in self.decls
                self.decls[n.val] = None if seen else n.kids[0]     # (declared twice: no)
                self.decl_loops[n.val] = loops
            inner = loops + (n,) if n.op in ("for", "while", "do") else loops
            stack.extend((x, inner) for x in n.kids or ())

    def of(self, access):
        """(lane's local linear id, first byte, whether written, size) of an access, the arrays
        over its lanes that reach it, or None where it is not known."""
        env = self.env_at(list(access.path) + [access.var])
        if env is None:
            return None
        top = access.top
        while top.op in ("swz", "vindex"):
            top = top.kids[0]
        start = env.offset(top)
        if start is None or top.type is None or not top.type.size:
            return None
        keep = env.mask
        return env.lanes["flat"][keep], start[keep], access.write, top.type.size

    def constant(self, e):
        """e's value where it is one integer for every work-item, from constants and the private
        variables set once from them (`unit_size = K * WG`), else None."""
        env = self.env_at([self.k.body])
        v = env.value(e, ()) if env is not None else None
        return int(v[0]) if v is not None and len(v) and (v == v[0]).all() else None

    def env_at(self, path):
        """The lanes that reach path[-1] (path: from the kernel's body down to it), or None."""
        x, y, z = self.shape
        volume = x * y * z
        if volume <= 0 or volume > _MAX_LANES:
            return None
        flat = np.arange(volume, dtype=np.int64)
        env = _Env(self, {"lid": (flat % x, flat // x % y, flat // (x * y)), "flat": flat},
                   np.ones(volume, dtype=bool))
        for i, n in enumerate(path[:-1]):
            env = self._step(env, n, path[i + 1])
            if env is None:
                return None
        return env

    def _step(self, env, n, inner):
        """env as it is inside n's child `inner` (path from the root to the access)."""
        kids = n.kids or ()
        if n.op == "if" and len(kids) >= 2 and inner is not kids[0]:
            return env.where(kids[0], inner is kids[1], n)
        if n.op == "cond" and len(kids) == 3 and inner is not kids[0]:
            return env.where(kids[0], inner is kids[1], n)
        if n.op in ("land", "lor") and len(kids) == 2 and inner is kids[1]:
            return env.where(kids[0], n.op == "land", n)
        if n.op == "for" and len(kids) == 4 and inner is kids[3]:
            counter = self._counter(n)
            if counter is None:
                return env.loosened(n)
            counted = env.counted(n, *counter)
            if counted is None:                 # (turns not known: its counter is not either)
                return env.loosened(n)
            return counted.loosened(n) if _breaks(kids[3]) else counted
        if n.op in ("while", "do") and inner is loop_body(n):
            return env.loosened(n)
        return env

    def _counter(self, loop):
        """(counter variable, its first value's expression, its step) of a counted `for`."""
        init, cond, inc, body = loop.kids
        var, first = None, None
        if init is not None and init.op == "block" and len(init.kids) == 1:
            init = init.kids[0]
        if init is not None and init.op == "expr" and init.kids:
            init = init.kids[0]
        if init is not None and init.op == "decl":
            var, first = init.val, init.kids[0] if init.kids else None
        elif init is not None and init.op == "assign" and init.kids[0].op == "var":
            var, first = init.kids[0].val, init.kids[1]
        if var is None or first is None or cond is None or inc is None:
            return None
        if inc.op == "expr" and inc.kids:
            inc = inc.kids[0]
        if inc.kids is None or not inc.kids or inc.kids[0].op != "var" or inc.kids[0].val is not var:
            return None
        if inc.op == "incdec":
            step = inc.val[0]
        elif inc.op == "cassign" and inc.val in ("+", "-") and constant_int(inc.kids[1]) is not None:
            step = constant_int(inc.kids[1]) * (1 if inc.val == "+" else -1)
        else:
            return None
        t = var.type
        if not step or t is None or not t.is_scalar or not t.is_int or t.is_bool or \
                getattr(var, "storage", None) != "private" or var in assigned_vars(body) or \
                _address_taken(self.k.body, var):
            return None
        return var, first, step, cond


class _Env:
    """Lanes and what is known in them: the local ids, the counters bound so far, and which
    lanes reach this point (mask)."""

    def __init__(self, fp, lanes, mask, counters=None, loose=()):
        self.fp, self.lanes, self.mask = fp, lanes, mask
        self.counters = counters or {}          # var -> (its loop, values)
        self.loose = loose                      # the nodes where lanes were kept for want of knowing
        self.memo = {}

    def loosened(self, at):
        """This env, noting that at `at` some of its lanes may in fact not go on (a condition not
        known, a loop that may run no turn or leave early)."""
        return _Env(self.fp, self.lanes, self.mask, self.counters, self.loose + (at,))

    def where(self, cond, holds, at):
        """The lanes where cond (of node `at`) is known to fail (holds) or to hold (not holds)
        are dropped."""
        parts = conjuncts(cond) if holds else [cond]
        mask, loose = self.mask, self.loose
        for c in parts:
            v = self.value(c, None)
            if v is not None:
                mask = mask & ((v != 0) == holds)
            elif at not in loose:
                loose = loose + (at,)
        if mask is self.mask and loose is self.loose:
            return self
        return _Env(self.fp, self.lanes, mask, self.counters, loose)

    def counted(self, loop, var, first, step, cond):
        """The lanes of each iteration of a counted loop's body, or None (too many, unknown)."""
        start = self.value(first, None)
        if start is None:
            return None
        start = _wrap(start, var.type)
        n = len(self.mask)
        values, alive, masks = start, self.mask.copy(), []
        while alive.any():
            if (len(masks) + 1) * n > _MAX_LANES:
                return None
            trial = _Env(self.fp, self.lanes, alive, {**self.counters, var: (loop, values)}, self.loose)
            holds = trial.value(cond, None)
            if holds is None:
                return None
            alive = alive & (holds != 0)
            masks.append((values, alive))
            values = _wrap(values + step, var.type)
        if not masks:                               # (no lane reaches the loop)
            return _Env(self.fp, self.lanes, alive, self.counters, self.loose)
        t = len(masks)
        lanes = {"lid": tuple(np.tile(a, t) for a in self.lanes["lid"]), "flat": np.tile(self.lanes["flat"], t)}
        counters = {v: (lp, np.tile(a, t)) for v, (lp, a) in self.counters.items()}
        counters[var] = (loop, np.concatenate([v for v, _ in masks]))
        return _Env(self.fp, lanes, np.concatenate([m for _, m in masks]), counters, self.loose)

    def offset(self, n):
        """The byte offset of lvalue n in its `__local` array, per lane, or None."""
        op = n.op
        if op == "var":
            return np.zeros(len(self.mask), dtype=np.int64) if n.val in self.fp.k.local_vars else None
        if op in ("decay", "conv", "deref") and n.kids:
            return self.offset(n.kids[0])
        if op == "member" and n.kids and not n.val[1]:
            base = self.offset(n.kids[0])
            return None if base is None else base + n.val[0]
        if op == "index" and len(n.kids) == 2 and n.type is not None and n.type.size:
            base, i = self.offset(n.kids[0]), self.value(n.kids[1], None)
            if base is None or i is None:
                return None
            # (an unsigned 64-bit index above 2^63 is negative here: outside every object)
            return base + i * n.type.size
        return None

    def value(self, e, loops):
        """e's value per lane, as C computes it in e's type, or None (not known). loops: the
        loops whose counters may be read (None: all bound)."""
        if e is None or e.type is None or not e.type.is_scalar or e.type.is_float:
            return None
        key = (id(e), loops)
        if key not in self.memo:
            v = self._value(e, loops)
            self.memo[key] = None if v is None else _wrap(v, e.type)
        return self.memo[key]

    def _value(self, e, loops):
        op, kids = e.op, e.kids or ()
        if op == "const":
            return np.full(len(self.mask), int(e.val), dtype=np.int64) if isinstance(e.val, int) \
                and -(1 << 63) <= e.val < (1 << 64) else None
        if op == "conv" and kids:
            v = self.value(kids[0], loops)
            if v is not None and e.type.is_bool:
                return (v != 0).astype(np.int64)
            return v
        if op == "builtin" and e.val in ("get_local_id", "get_local_size") and len(kids) == 1:
            d = constant_int(kids[0])
            if d not in (0, 1, 2):
                return None
            if e.val == "get_local_size":
                return np.full(len(self.mask), self.fp.shape[d], dtype=np.int64)
            return self.lanes["lid"][d]
        if op == "load" and kids and kids[0].op == "var":
            return self._variable(kids[0].val, loops)
        if op == "bin" and len(kids) == 2:
            a, b = self.value(kids[0], loops), self.value(kids[1], loops)
            return None if a is None or b is None else _binary(e.val, a, b, kids[0].type, kids[1].type)
        if op == "unary" and kids:
            a = self.value(kids[0], loops)
            if a is None:
                return None
            return -a if e.val == "-" else ~a if e.val == "~" else (a == 0).astype(np.int64) \
                if e.val == "!" else a if e.val == "+" else None
        if op in ("land", "lor") and len(kids) == 2:
            a, b = self.value(kids[0], loops), self.value(kids[1], loops)
            if a is None or b is None:
                return None
            return ((a != 0) & (b != 0) if op == "land" else (a != 0) | (b != 0)).astype(np.int64)
        if op == "cond" and len(kids) == 3:
            c, a, b = (self.value(x, loops) for x in kids)
            return None if c is None or a is None or b is None else np.where(c != 0, a, b)
        return None

    def _variable(self, v, loops):
        bound = self.counters.get(v)
        if bound is not None:
            return bound[1] if loops is None or bound[0] in loops else None
        fp = self.fp
        init = fp.decls.get(v)
        if init is None or v in fp.assigned or getattr(v, "storage", None) != "private":
            return None
        # (its initialiser saw the counters of the loops around its declaration only)
        return self.value(init, fp.decl_loops.get(v, ()))


def _binary(op, a, b, ta, tb):
    unsigned = ta is not None and ta.is_int and not ta.signed
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op in ("/", "%"):
        if (b == 0).any():
            return None
        if unsigned and ta.bits == 64:
            x, y = a.view(np.uint64), b.view(np.uint64)
            return (x // y if op == "/" else x % y).view(np.int64)
        q = np.abs(a) // np.abs(b) * np.sign(a) * np.sign(b)        # (toward zero)
        return q if op == "/" else a - b * q
    if op in ("<<", ">>"):
        bits = ta.bits if ta is not None and ta.is_int else _BITS_OF_INT
        s = b & (bits - 1)                                          # (OpenCL: modulo the width)
        if op == "<<":
            return a << s
        return (a.view(np.uint64) >> s.view(np.uint64)).view(np.int64) if unsigned and bits == 64 else a >> s
    if op in ("&", "|", "^"):
        return a & b if op == "&" else a | b if op == "|" else a ^ b
    if op in ("<", "<=", ">", ">=", "==", "!="):
        if unsigned or (tb is not None and tb.is_int and not tb.signed):
            a, b = a.view(np.uint64), b.view(np.uint64)
        r = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
             "==": np.equal, "!=": np.not_equal}[op](a, b)
        return r.astype(np.int64)
    return None


def _wrap(v, t):
    """v (int64 lanes) as a value of integer type t: narrower types are sign- or zero-extended
    into the int64; 64-bit ones keep their two's complement bits."""
    if t is None or not t.is_int or t.bits >= 64:
        return v
    if t.is_bool:
        return (v != 0).astype(np.int64)
    mask = (1 << t.bits) - 1
    v = v & mask
    if t.signed:
        v = np.where(v >= (1 << (t.bits - 1)), v - (1 << t.bits), v)
    return v


def loop_body(n):
    """The body of a for / while / do node."""
    return n.kids[3] if n.op == "for" else n.kids[1] if n.op == "while" else n.kids[0]


def _breaks(body):
    """Whether body has a break (or return, goto) that leaves the loop around it early."""
    found = []

    def visit(x, inner):
        if x is None or not hasattr(x, "op") or found:
            return
        if x.op in ("return", "goto") or (x.op == "break" and not inner):
            found.append(x)
        for k in x.kids or ():
            visit(k, inner or x.op in ("for", "while", "do", "switch"))
    visit(body, False)
    return bool(found)


def _address_taken(body, var):
    found = []
    walk(body, lambda x: found.append(x) if x.op == "addr" and x.kids and x.kids[0] is not None
         and getattr(x.kids[0], "op", None) == "var" and x.kids[0].val is var else None)
    return bool(found)


def conflict_free(footprints, size):
    """Whether no byte of an object of `size` bytes is touched by two lanes' work-items of
    which one writes, given the footprints (Footprints.of) of every access to it in a region."""
    if any(f is None for f in footprints):
        return False
    total = sum(len(lid) * n for lid, _, _, n in footprints)
    if total > _MAX_BYTES:
        return False
    if total == 0:
        return True
    owners, byte_at, writes = [], [], []
    for lid, start, write, n in footprints:
        if len(start) and (start.min() < 0 or start.max() + n > size):
            return False          # (outside the object: its bytes are not known to be its own)
        for j in range(n):
            owners.append(lid)
            byte_at.append(start + j)
            writes.append(np.full(len(start), write, dtype=bool))
    owners, byte_at, writes = np.concatenate(owners), np.concatenate(byte_at), np.concatenate(writes)
    if not writes.any():
        return True
    low = np.full(size, np.iinfo(np.int64).max, dtype=np.int64)
    high = np.full(size, -1, dtype=np.int64)
    np.minimum.at(low, byte_at, owners)
    np.maximum.at(high, byte_at, owners)
    written = np.zeros(size, dtype=bool)
    written[byte_at[writes]] = True
    return not (written & (low != high)).any()
