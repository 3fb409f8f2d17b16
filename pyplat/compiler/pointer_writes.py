"""Which pointer arguments a kernel may write through: an escape analysis on the typed tree.

The in-order queue runs a kernel beside the commands around it when it only reads a buffer
(core/queue.py; recorded by metadata.py as ArgInfo.written), so an argument may be reported unwritten only when no store can reach memory
through it. The rule that keeps this sound: a pointer value derived from an argument is followed
only where every place it can go is known; everywhere else it counts as written.

Followed (flow-insensitively, to a fixpoint):
- pointer arithmetic, casts between pointer types, `?:` and `,`, `&lvalue` of memory the
  pointer designates (`&out[i]`, `&s->field`) keep the argument the value is derived from;
- private pointer variables (parameters included) hold the union of everything assigned to them;
- calls to functions with a body: the callee's own summary says which of its pointer parameters
  it writes and which it may return (computed the same way, once per function);
- builtins that only read through a pointer (vload*, prefetch, printf, an async copy's source).
Everything else counts as a write of every argument the value is derived from: a store through
it, a pointer stored into memory or into an aggregate, converted to an integer, subtracted from
another pointer, passed to any other builtin (vstore*, atomics, out parameters, async copy
destinations) or to a function without a body, and the address of a pointer variable taken.
A pointer made from an integer, or returned by a function without a body, may point anywhere:
a store through it writes every argument. A pointer loaded from memory can only hold pointers
that were stored there, and those already count as written.
"""
from .tree import Node

# Builtins that only read through their pointer arguments (by name prefix); any other builtin
# may write through each pointer it receives.
_READERS = ("vload", "prefetch", "printf")
_ASYNC_COPIES = ("async_work_group_copy", "async_work_group_strided_copy")
_COMPARISONS = ("<", ">", "<=", ">=", "==", "!=")
# Statements: their expressions are evaluated for their effects; no value flows anywhere.
_STATEMENTS = ("block", "expr", "if", "for", "while", "do", "switch", "case", "default", "label",
               "goto", "break", "continue", "nop", "barrier")

UNKNOWN = "anything"      # a root that stands for every argument


class Summary:
    """What a function does with its pointer parameters: `written` and `returned` hold parameter
    indices and possibly UNKNOWN."""
    __slots__ = ("written", "returned")

    def __init__(self, written, returned):
        self.written, self.returned = written, returned


def _tracked(v):
    """Private scalar pointer variables are followed; other storage receiving a pointer is memory."""
    return v.type.is_pointer and v.storage in ("private", "param")


class _Function:
    """The analysis of one function body; roots are its pointer parameters."""

    def __init__(self, func, summaries):
        self.func, self.summaries = func, summaries
        self.pts = {p: {p} for p in func.params if p.type.is_pointer}
        self.written, self.returned = set(), set()

    def run(self):
        while True:
            before = (len(self.written), len(self.returned), sum(len(s) for s in self.pts.values()))
            self.value(self.func.body)
            if before == (len(self.written), len(self.returned), sum(len(s) for s in self.pts.values())):
                return self

    # --- effects
    def escape(self, roots):
        self.written |= roots

    def points_to(self, v):
        return self.pts.setdefault(v, set()) if _tracked(v) else set()

    def store(self, place, roots):
        """A value derived from `roots` is stored into `place` (a Var or a set of roots)."""
        if isinstance(place, set):
            self.written |= place
            self.escape(roots)
        elif _tracked(place):
            self.pts.setdefault(place, set()).update(roots)
        else:
            self.escape(roots)      # into an aggregate or a program-scope/__local variable

    # --- expressions: value() gives the roots an expression's pointer value is derived from
    def value(self, n):
        if n is None or not isinstance(n, Node):
            return set()
        op = n.op
        if op in _STATEMENTS:
            for k in n.kids:
                self.value(k)
            return set()
        if op == "decl":
            roots = self.value(n.kids[0]) if n.kids else set()
            self.store(n.val, roots)
            return set()
        if op == "return":
            if n.kids:
                self.returned |= self.value(n.kids[0])
            return set()
        if op in ("const", "zero", "func"):
            return set()
        if n.lv or op in ("var", "str"):
            self.place(n)           # an lvalue evaluated only for its effects
            return set()
        if op == "load":
            place = self.place(n.kids[0])
            if isinstance(place, set) or not n.type.is_pointer:
                return set()        # loaded from memory: only pointers that escaped already
            return set(self.points_to(place))
        if op == "decay":
            place = self.place(n.kids[0])
            if isinstance(place, set):
                return place
            return {place} if place.storage == "param" else set()
        if op == "addr":
            place = self.place(n.kids[0])
            if isinstance(place, set):
                return place
            self.escape(self.points_to(place))     # its pointer may now be rewritten anywhere
            return {place} if place.storage == "param" and not _tracked(place) else set()
        if op == "conv":
            roots = self.value(n.kids[0])
            src = n.kids[0].type
            if n.type.is_pointer:
                return roots if src.is_pointer else {UNKNOWN}
            if src.is_pointer and not n.type.is_bool:
                self.escape(roots)  # to an integer: it may come back as a pointer
            return set()
        if op == "bin":
            a, b = (self.value(k) for k in n.kids)
            if n.val in _COMPARISONS:
                return set()
            if n.type.is_pointer:
                return a | b
            self.escape(a | b)      # pointer - pointer: an integer that can rebuild either
            return set()
        if op in ("unary", "land", "lor", "void"):
            for k in n.kids:
                self.value(k)
            return set()
        if op == "cond":
            self.value(n.kids[0])
            return self.value(n.kids[1]) | self.value(n.kids[2])
        if op == "comma":
            self.value(n.kids[0])
            return self.value(n.kids[1])
        if op == "assign":
            place = self.place(n.kids[0])
            roots = self.value(n.kids[1])
            self.store(place, roots)
            return roots
        if op in ("cassign", "incdec"):
            place = self.place(n.kids[0])
            for k in n.kids[1:]:
                self.value(k)
            if isinstance(place, set):
                self.written |= place
                return set()
            return set(self.points_to(place))
        if op == "call":
            return self.call(n)
        if op == "builtin":
            return self.builtin(n)
        # astype, veclit, initlist and anything not listed: every pointer operand escapes,
        # and a pointer result may point anywhere
        for k in n.kids:
            self.escape(self.value(k))
        return {UNKNOWN} if n.type is not None and n.type.is_pointer else set()

    def call(self, n):
        args = [self.value(k) for k in n.kids]
        s = summary(n.val, self.summaries)
        out = set()
        for i, roots in enumerate(args):
            if i in s.written or UNKNOWN in s.written:
                self.escape(roots)
            if i in s.returned:
                out |= roots
        if UNKNOWN in s.written:
            self.written.add(UNKNOWN)
        if UNKNOWN in s.returned:
            out.add(UNKNOWN)
        return out if n.type is not None and n.type.is_pointer else set()

    def builtin(self, n):
        name, out = n.val, set()
        for i, k in enumerate(n.kids):
            roots = self.value(k)
            if k.type is not None and k.type.is_pointer:
                if not (name.startswith(_READERS) or (name in _ASYNC_COPIES and i == 1)):
                    self.escape(roots)
                out |= roots
        return out if n.type is not None and n.type.is_pointer else set()

    # --- lvalues: place() gives a Var (the variable itself) or the set of roots of the memory
    def place(self, n):
        op = n.op
        if op == "var":
            return n.val
        if op == "deref":
            return self.value(n.kids[0])
        if op == "index":
            return self.value(n.kids[0]) | self.value(n.kids[1])
        if op == "member":
            return self.value(n.kids[0]) if n.val[1] else self.place(n.kids[0])
        if op in ("vindex", "swz"):
            for k in n.kids[1:]:
                self.value(k)
            return self.place(n.kids[0])
        if op == "str":
            return set()
        if not n.lv:
            self.value(n)           # an rvalue's member or component: its effects count
            return set()
        self.value(Node("void", kids=n.kids))
        return {UNKNOWN}            # an lvalue of a form not listed: it may be anywhere


def summary(func, summaries):
    """The Summary of a function (memoised in `summaries`, keyed by the function)."""
    s = summaries.get(func)
    if s is not None:
        return s
    pointers = [i for i, p in enumerate(func.params) if p.type.is_pointer]
    if func.body is None:       # defined in another compilation unit: assume the worst
        s = Summary(set(pointers) | {UNKNOWN}, set(pointers) | {UNKNOWN})
        summaries[func] = s
        return s
    summaries[func] = Summary(set(pointers) | {UNKNOWN}, set(pointers) | {UNKNOWN})   # recursion
    f = _Function(func, summaries).run()
    index = {p: i for i, p in enumerate(func.params)}

    def indices(roots):
        return {index.get(r, UNKNOWN) if r is not UNKNOWN else UNKNOWN for r in roots}
    s = Summary(indices(f.written), indices(f.returned))
    summaries[func] = s
    return s


def written_params(kernel, summaries=None):
    """The kernel's pointer parameters (Vars) that it may write through."""
    s = summary(kernel, {} if summaries is None else summaries)
    pointers = [p for p in kernel.params if p.type.is_pointer or p.type.is_array]
    if UNKNOWN in s.written:
        return set(pointers)
    return {kernel.params[i] for i in s.written}
