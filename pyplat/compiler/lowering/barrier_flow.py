"""Control flow around barriers, rewritten on the typed tree before the loop fission.

The fission (barriers.py) keeps only `if`, `for`, `while` and `do` as work-group-level control
flow, and `break`/`continue` of such loops from inside a region. Everything else that real code
puts around a barrier is turned into those here, on the kernel's tree (barrier_tree.py calls
these while inlining barrier-using helpers):

* early `return`s of a helper being inlined (`remove_returns`): a `return` whose `if` has
  nothing after it or whose other branch falls through takes the rest of the function into
  that branch (no flag: `if (c) {..; return a;} ..; return b;`); any other one sets a
  per-work-item `returned` flag, leaves the loops and switches around it through `break`
  (`if (returned) break;` after each of them), and the rest of the function at its top level
  runs under `if (!returned)`;
* a `switch` around a barrier (`lower_switches`): its case segments become `if`s in order,
  inside a `do { } while (0)` that its `break`s leave; a segment entered by falling through
  runs when a `matched` flag is set;
* a loop whose condition or increment calls a barrier-using helper (`split_loop`): the test
  moves into the body as `if (!c) break;`, the increment to the body's end; a `continue` must
  still reach them, so a body with one runs inside a `do { } while (0)` that the continue
  leaves (its `break`s set a flag tested after it);
* `break`/`continue` that would bind to such a new `do { } while (0)` are retargeted
  (`retarget`).

The conditions these rewrites introduce follow the program's own control flow: where the code
they guard has a barrier, they are work-group uniform exactly when the program's are (the spec
requires that); where it has none they stay per-work-item, inside a region.
"""
from .. import types as T
from ..tree import CompileError, Node, Var
from .tree_walk import has_barrier, walk

_LOOPS = ("for", "while", "do")
_BREAKS = _LOOPS + ("switch",)      # what a `break` leaves


# ---------------------------------------------------------------------- building nodes
def var(v, cur=None):
    return Node("var", v.type, lv=True, val=v, cur=cur)


def load(v, cur=None):
    return Node("load", v.type, [var(v, cur)], cur=cur)


def const(t, x, cur=None):
    return Node("const", t, val=x, cur=cur)


def converted(e, t):
    return e if e.type == t or t.is_struct or t.is_array else Node("conv", t, [e], cur=e.cur)


def assign(v, e, cur=None):
    """The statement `v = e;` (e converted to v's type)."""
    return Node("expr", kids=[Node("assign", v.type, [var(v, cur), converted(e, v.type)], cur=cur)], cur=cur)


def decl(v, init=None, cur=None):
    return Node("decl", kids=[] if init is None else [converted(init, v.type)], val=v, cur=cur)


def block(stmts, cur=None):
    return Node("block", kids=[s for s in stmts if s is not None], cur=cur)


def if_(c, then, els=None, cur=None):
    return Node("if", kids=[c, then, els], cur=cur)


def not_(e):
    return Node("unary", T.INT, [e], val="!", cur=e.cur)


def flag(name, cur=None):
    """A fresh int flag variable (its declaration sets it to 0)."""
    return Var(name, T.INT, "private", cur)


def statements(n):
    return [] if n is None else list(n.kids) if n.op == "block" else [n]


def _live(stmts):
    return any(s is not None and s.op != "nop" for s in stmts)


def _has_op(n, ops):
    found = []
    walk(n, lambda x: found.append(x) if x.op in ops else None)
    return bool(found)


def _stops(n):
    """Whether control never falls out of the end of statement n (return, break, continue, or
    blocks and if/else whose every path ends in one)."""
    if n is None:
        return False
    if n.op in ("return", "break", "continue", "goto"):
        return True
    if n.op == "block":
        live = [s for s in n.kids if s is not None and s.op != "nop"]
        return bool(live) and _stops(live[-1])
    if n.op == "if":
        return n.kids[2] is not None and _stops(n.kids[1]) and _stops(n.kids[2])
    return False


# ---------------------------------------------------------------------- early returns
def remove_returns(stmts, rv, name, cur):
    """The body `stmts` of a helper being inlined without its `return`s: `return e` assigns e to
    `rv` (the result variable, or None: e is evaluated for its side effects) and the rest of the
    helper is skipped by structured control flow (see the module's docstring)."""
    r = _Returns(rv, name, cur)
    out = r.seq(stmts, True, 0)
    if r.flag is not None:
        out.insert(0, decl(r.flag, const(T.INT, 0), cur))
    return out


class _Returns:
    def __init__(self, rv, name, cur):
        self.rv, self.name, self.cur = rv, name, cur
        self.flag = None

    def seq(self, stmts, tail, depth):
        """stmts without returns. tail: nothing of the helper runs after them; depth: how many
        loops and switches of the helper are around them (a return leaves those by `break`)."""
        out = []
        stmts = list(stmts)
        i = 0
        while i < len(stmts):
            s, rest = stmts[i], stmts[i + 1:]
            i += 1
            if s is None or not _has_op(s, ("return",)):
                out.append(s)
                continue
            at_tail = tail and not _live(rest)
            if depth == 0 and s.op == "if" and not at_tail:
                s, absorbed = self.absorb(s, rest)
                if absorbed:           # the rest now lives in the branch that falls through
                    stmts, i, rest, at_tail = stmts[:i], i, [], tail
            if s.op == "return":
                out += self.ret(s, at_tail, depth)
                if depth == 0:         # what follows is dead (case labels only exist at depth > 0)
                    return out
                continue
            out.append(self.stmt(s, at_tail, depth))
            if depth and s.op in _BREAKS:     # its return left s only: leave the enclosing one too
                out.append(if_(load(self.flag), Node("break", cur=s.cur), cur=s.cur))
            elif depth == 0 and not at_tail and _live(rest):   # a return in s set the flag
                out.append(if_(not_(load(self.flag)), block(self.seq(rest, tail, 0), s.cur), cur=s.cur))
                return out
        return out

    @staticmethod
    def absorb(s, rest):
        """`if` s with the statements after it moved into its branch that falls through, when the
        other branch never does (the rest then runs exactly where it did); (node, whether)."""
        c, then, els = s.kids
        if _stops(then) and _stops(els):
            return s, True             # the rest is dead
        if _stops(then):
            return if_(c, then, block(statements(els) + rest, s.cur), s.cur), True
        if _stops(els):
            return if_(c, block(statements(then) + rest, s.cur), els, s.cur), True
        return s, False

    def sub(self, n, tail, depth):
        if n is None:
            return None
        out = self.seq([n], tail, depth)
        return out[0] if len(out) == 1 and out[0] is not None else block(out, n.cur)

    def stmt(self, s, tail, depth):
        op, kids = s.op, list(s.kids)
        if op == "block":
            return Node("block", kids=self.seq(kids, tail, depth), val=s.val, cur=s.cur)
        if op == "if":
            kids[1:] = [self.sub(k, tail, depth) for k in kids[1:]]
        elif op in _LOOPS or op == "switch":
            at = {"for": 3, "while": 1, "do": 0, "switch": 1}[op]
            kids[at] = self.sub(kids[at], False, depth + 1)
        elif op in ("case", "default", "label"):
            kids[0] = self.sub(kids[0], tail, depth)
        else:
            raise CompileError("internal: return inside '%s'" % op, s.cur)
        return Node(op, s.type, kids, s.lv, s.cur, s.val)

    def ret(self, s, tail, depth):
        out = []
        if s.kids:
            out.append(assign(self.rv, s.kids[0], s.cur) if self.rv is not None
                       else Node("expr", kids=[s.kids[0]], cur=s.cur))
        if not tail:
            if self.flag is None:
                self.flag = flag("returned." + self.name, self.cur)
            out.append(assign(self.flag, const(T.INT, 1), s.cur))
            if depth:
                out.append(Node("break", cur=s.cur))
        return out


# ---------------------------------------------------------------------- break / continue
def retarget(n, on_break=None, on_continue=None, in_switch=False):
    """Statement n with the `break`s (on_break) and `continue`s (on_continue) that bind to the
    loop whose body n is replaced by on_x(node) (a list of statements); None keeps them."""
    if n is None:
        return None
    op = n.op
    if op == "break" and on_break is not None and not in_switch:
        return block(on_break(n), n.cur)
    if op == "continue" and on_continue is not None:
        return block(on_continue(n), n.cur)
    if op in _LOOPS:
        return n                       # both bind to the inner loop
    kids = list(n.kids)
    if op == "switch":                 # a break there leaves the switch; a continue is ours
        kids[1] = retarget(kids[1], on_break, on_continue, True)
    elif op == "block":
        kids = [retarget(k, on_break, on_continue, in_switch) for k in kids]
    elif op == "if":
        kids[1:] = [retarget(k, on_break, on_continue, in_switch) for k in kids[1:]]
    elif op in ("case", "default", "label"):
        kids[0] = retarget(kids[0], on_break, on_continue, in_switch)
    else:
        return n
    return Node(op, n.type, kids, n.lv, n.cur, n.val)


def binds(n, what):
    """Whether statement n has a `break` or `continue` (what) binding to the loop around it."""
    found = []
    hit = lambda x: found.append(x) or [x]     # noqa: E731 (record, keep)
    retarget(n, hit if what == "break" else None, hit if what == "continue" else None)
    return bool(found)


def once(body, cur):
    """`do body while (0)` (a `break` inside leaves it; barriers.py tests no condition)."""
    return Node("do", kids=[body, const(T.INT, 0, cur)], cur=cur)


def continue_to_end(body, cur):
    """Statements running `body` so that its `continue`s of the loop around it go to the end of
    these statements (instead of the loop's own continue target) and its `break`s still leave
    that loop: ([declarations before the loop], [statements for the body])."""
    if not binds(body, "continue"):
        return [], [body]
    pre, after = [], []
    on_break = None
    if binds(body, "break"):
        bf = flag("break", cur)
        pre.append(decl(bf, const(T.INT, 0, cur), cur))
        on_break = lambda n: [assign(bf, const(T.INT, 1), n.cur), Node("break", cur=n.cur)]  # noqa: E731
        after.append(if_(load(bf), Node("break", cur=cur), cur=cur))
    inner = retarget(body, on_break, lambda n: [Node("break", cur=n.cur)])
    return pre, [once(inner, cur)] + after


def split_loop(n, cond_moves, inc_moves):
    """Loop n with its condition (cond_moves) and/or its increment (inc_moves) moved into its
    body, so that what they call is inlined there: a block of statements."""
    cur = n.cur
    if n.op == "for":
        init, cond, inc, body = n.kids
    elif n.op == "while":
        (cond, body), init, inc = n.kids, None, None
    else:
        (body, cond), init, inc = n.kids, None, None
    first, after = [], []
    if cond_moves and n.op != "do":
        first.append(if_(not_(cond), Node("break", cur=cur), cur=cur))
    if inc_moves:
        after.append(Node("expr", kids=[inc], cur=cur))
    if cond_moves and n.op == "do":
        after.append(if_(not_(cond), Node("break", cur=cur), cur=cur))
    pre, run = continue_to_end(body, cur) if after else ([], [body])
    if n.op == "do" and not cond_moves:
        return block(pre + [Node("do", kids=[block(run + after, cur), cond], cur=cur)], cur)
    loop = Node("for", kids=[init, None if cond_moves else cond, None if inc_moves else inc,
                             block(first + run + after, cur)], cur=cur)
    return block(pre + [loop], cur)


# ---------------------------------------------------------------------- switch
def lower_switches(n, memo):
    """Statement n with every `switch` around a barrier made of if/do (see the docstring)."""
    if n is None or not has_barrier(n, memo):
        return n
    if n.op == "switch":
        memo.setdefault("alive", []).append(n)      # memo is by id(): keep the replaced nodes' ids taken
        return lower_switches(_lower_switch(n), memo)
    kids = [lower_switches(k, memo) if k is not None and _is_stmt(n, i) else k
            for i, k in enumerate(n.kids)]
    return Node(n.op, n.type, kids, n.lv, n.cur, n.val)


def _is_stmt(n, i):
    """Whether kid i of statement n is a statement (not an expression)."""
    op = n.op
    return (op in ("block", "case", "default", "label") or (op == "if" and i > 0)
            or (op == "for" and i in (0, 3)) or (op == "while" and i == 1) or (op == "do" and i == 0)
            or (op == "switch" and i == 1))


def _lower_switch(sw):
    cond, body = sw.kids
    cur, t = sw.cur, cond.type
    bits = t.bits
    before, segments = [], []          # segments: [labels (values; None = default), statements]
    for s in statements(body):
        labels = []
        while s is not None and s.op in ("case", "default"):
            labels.append(_case_value(s.val, t, bits) if s.op == "case" else None)
            s = s.kids[0]
        if labels:
            segments.append([labels, [s]])
        elif segments:
            segments[-1][1].append(s)
        else:
            before.append(s)
    for _, stmts in segments:
        for s in stmts:
            if s is not None and _nested_label(s):
                raise CompileError("a case label inside a nested statement of a switch around barrier() "
                                   "is not supported", s.cur)
    # statements before the first label never run; their declarations still name variables
    out = [decl(d.val, cur=d.cur) for s in before if s is not None
           for d in _decls(s)]
    v = Var("switch", t, "private", cur)
    out.insert(0, decl(v, cond, cur))
    values = [x for labels, _ in segments for x in labels if x is not None]

    def is_(x):
        return Node("bin", T.INT, [load(v, cur), const(t, x, cur)], val="==", cur=cur)

    def any_of(xs):
        e = None
        for x in xs:
            e = is_(x) if e is None else Node("lor", T.INT, [e, is_(x)], cur=cur)
        return e

    falls = [not _stops(block(stmts)) for _, stmts in segments]
    m = flag("matched", cur) if any(falls[:-1]) else None
    if m is not None:
        out.append(decl(m, const(T.INT, 0, cur), cur))
    cf = flag("continue", cur) if binds(body, "continue") else None
    if cf is not None:
        out.append(decl(cf, const(T.INT, 0, cur), cur))
    ifs = []
    for i, (labels, stmts) in enumerate(segments):
        own = [x for x in labels if x is not None]
        if None in labels:             # default: no other segment's value
            others = [x for x in values if x not in own]
            match = not_(any_of(others)) if others else const(T.INT, 1, cur)
        else:
            match = any_of(own)
        if i and falls[i - 1]:         # entered by falling through, too
            match = Node("lor", T.INT, [load(m, cur), match], cur=cur)
        seg = ([assign(m, const(T.INT, 1), cur)] if falls[i] and m is not None else []) + stmts
        seg = block(seg, cur)
        if cf is not None:
            seg = retarget(seg, None, lambda n: [assign(cf, const(T.INT, 1), n.cur), Node("break", cur=n.cur)])
        ifs.append(if_(match, seg, cur=cur))
    out.append(once(block(ifs, cur), cur))
    if cf is not None:
        out.append(if_(load(cf, cur), Node("continue", cur=cur), cur=cur))
    return block(out, cur)


def _case_value(x, t, bits):
    """A case label's value as a constant of the switch's (promoted) type."""
    x &= (1 << bits) - 1
    if t.signed and x >= 1 << (bits - 1):
        x -= 1 << bits
    return x


def _nested_label(s):
    """Whether s has a case/default label of the enclosing switch below its top level."""
    if s.op == "switch":
        return False
    if s.op in ("case", "default"):
        return True
    return any(k is not None and _is_stmt(s, i) and _nested_label(k) for i, k in enumerate(s.kids))


def _decls(s):
    found = []
    walk(s, lambda x: found.append(x) if x.op == "decl" else None)
    return found
