"""barrier() on the typed tree, before lowering: which statements and functions execute it, and
inlining of barrier-using helper functions into the kernels that call them (so the loop fission
of barriers.py sees every barrier of a kernel in its own body); and the tree walks the lowering's
analyses share (`walk`, `assigned_vars`)."""
from ..tree import CompileError, Node, Var
from .statements import loop_parts
from .tree_walk import STMT_OPS as _STMT_OPS, has_barrier, walk  # noqa: F401 (shared from here too)
from . import barrier_flow


def source_order(n):
    """{id(node): its place in a walk of the tree n in source order}."""
    order, stack = {}, [n]
    while stack:
        x = stack.pop()
        if x is None or not hasattr(x, "op"):
            continue
        order[id(x)] = len(order)
        stack.extend(reversed([k for k in x.kids or () if k is not None]))
    return order


def assigned_vars(n):
    """Variables the tree n assigns to, increments, or takes the address of, in whole or in part
    (a vector's component, a struct's member: `v.x = lid` assigns v)."""
    out = set()

    def visit(x):
        if x.op in ("assign", "cassign", "incdec", "addr") and x.kids and x.kids[0] is not None:
            y = x.kids[0]
            while getattr(y, "op", None) in ("swz", "vindex", "member") and y.kids \
                    and not (y.op == "member" and y.val[1]):
                y = y.kids[0]
            if getattr(y, "op", None) == "var":
                out.add(y.val)
    walk(n, visit)
    return out


def constant_int(e):
    """e's value where it is an integer constant (through conversions), else None."""
    while e is not None and e.op == "conv" and e.kids:
        e = e.kids[0]
    return e.val if e is not None and e.op == "const" and isinstance(e.val, int) else None


def conjuncts(cond):
    """The conditions cond requires through `&&` (conversions stripped at the top)."""
    while cond is not None and cond.op == "conv" and cond.kids:
        cond = cond.kids[0]
    if cond is not None and cond.op == "land" and len(cond.kids) == 2:
        return conjuncts(cond.kids[0]) + conjuncts(cond.kids[1])
    return [cond]


# ---------------------------------------------------------------------- helpers with barriers
def func_has_barrier(f, memo):
    """Whether calling `f` may execute barrier(): its body has one, or a function it calls does."""
    key = ("func", id(f))
    r = memo.get(key)
    if r is None:
        memo[key] = False              # recursion is rejected by the front end; be safe anyway
        r = False
        if f.body is not None:
            r = has_barrier(f.body, memo)
            if not r:
                found = []
                walk(f.body, lambda x: found.append(x.val) if x.op == "call" else None)
                r = any(func_has_barrier(g, memo) for g in found)
        memo[key] = r
    return r


def uses_goto(n):
    found = []
    walk(n, lambda x: found.append(x) if x.op in ("goto", "label") else None)
    return bool(found)


def inline_barrier_functions(k):
    """Inline (on the typed tree) every call of a function that executes barrier() into kernel
    `k`, so the loop fission below sees the barriers, and make the control flow around them
    the fission's (barrier_flow.py: early returns, switch, calls in conditions). Calls are
    hoisted out of their statement (arguments first, into fresh variables of the parameter
    types); one inside `?:`, `&&`, `||` or `,` becomes an `if` around its inlined body. Kernels
    without barriers are left as they are."""
    memo = {}
    calls = []
    walk(k.body, lambda x: calls.append(x.val) if x.op == "call" else None)
    body = k.body
    if any(func_has_barrier(f, memo) for f in calls):
        body = _Inliner(memo).stmt(body)
    if has_barrier(body, {}):
        body = barrier_flow.lower_switches(body, {})
    k.body = body


class _Inliner:
    def __init__(self, memo):
        self.memo = memo

    def is_bcall(self, n):
        return n.op == "call" and func_has_barrier(n.val, self.memo)

    def contains_bcall(self, n):
        found = []
        walk(n, lambda x: found.append(x) if self.is_bcall(x) else None)
        return found

    def stmt(self, n):
        if n is None:
            return None
        op = n.op
        if op in ("expr", "decl", "return"):
            if not n.kids or not self.contains_bcall(n.kids[0]):
                return n
            pre = []
            e = n.kids[0]
            if op == "expr" and self.is_bcall(e):
                self.inline(e, pre, want_value=False)
                return Node("block", kids=pre, cur=n.cur)
            e = self.hoist(e, pre, want_value=op != "expr")
            if e is not None:
                pre.append(Node(op, n.type, [e], n.lv, n.cur, n.val))
            return Node("block", kids=pre, cur=n.cur)
        if op in ("if", "switch") and self.contains_bcall(n.kids[0]):
            pre = []                   # the condition's calls run before the statement
            c = self.hoist(n.kids[0], pre)
            pre.append(self.stmt(Node(op, n.type, [c] + n.kids[1:], n.lv, n.cur, n.val)))
            return Node("block", kids=pre, cur=n.cur)
        if op in ("for", "while", "do"):
            init, cond, inc, _ = loop_parts(n)
            if init is not None and self.contains_bcall(init):     # its calls run once, before
                return self.stmt(Node("block", kids=[init, Node(op, n.type, [None] + n.kids[1:], n.lv,
                                                                n.cur, n.val)], cur=n.cur))
            cond_moves = cond is not None and bool(self.contains_bcall(cond))
            inc_moves = inc is not None and bool(self.contains_bcall(inc))
            if cond_moves or inc_moves:    # into the body, where they run once per iteration
                return self.stmt(barrier_flow.split_loop(n, cond_moves, inc_moves))
        kids = [self.stmt(x) if x is None or x.op in _STMT_OPS else x for x in n.kids]
        return Node(op, n.type, kids, n.lv, n.cur, n.val)

    def hoist(self, e, pre, want_value=True):
        """e with its barrier-function calls replaced by their results (inlined into `pre`);
        None where e is a void expression whose calls all went into `pre`."""
        if e is None or not self.contains_bcall(e):
            return e
        if not want_value and self.is_bcall(e):        # a statement's value, discarded
            return self.inline(e, pre, want_value=False)
        if e.op == "comma" or (e.op in ("land", "lor", "cond") and not e.kids[0].type.is_vector):
            return self.conditional(e, pre, want_value)     # (vector ones evaluate every operand)
        kids = [self.hoist(x, pre) if isinstance(x, Node) else x for x in e.kids]
        n = Node(e.op, e.type, kids, e.lv, e.cur, e.val)
        if self.is_bcall(n):
            return self.inline(n, pre, want_value=True)
        return n

    def conditional(self, e, pre, want_value):
        """An operand evaluated only on some paths (`c ? a : b`, `a && b`, `a || b`, `a, b`)
        that calls a barrier-using function: an `if` (statements) computing it into a temporary;
        its branches are statements inlined like any other."""
        cur = e.cur
        if e.op == "comma":
            pre.append(self.stmt(Node("expr", kids=[e.kids[0]], cur=cur)))
            return self.hoist(e.kids[1], pre, want_value)
        c = self.hoist(e.kids[0], pre)
        rest = e.kids[1:]
        if not any(self.contains_bcall(x) for x in rest):
            return Node(e.op, e.type, [c] + rest, e.lv, cur, e.val)
        if e.op == "cond":
            if e.type.is_void or not want_value:
                arms = [self.stmt(Node("expr", kids=[x], cur=cur)) for x in rest]
                pre.append(barrier_flow.if_(c, arms[0], arms[1], cur))
                return None
            t = Var("cond", e.type, "private", cur)
            pre.append(barrier_flow.decl(t, cur=cur))
            arms = [self.stmt(barrier_flow.assign(t, x, cur)) for x in rest]
            pre.append(barrier_flow.if_(c, arms[0], arms[1], cur))
            return barrier_flow.load(t, cur)
        # a && b: t = 0; if (a) t = !!b;   a || b: t = 1; if (!a) t = !!b;
        is_and = e.op == "land"
        t = Var("and" if is_and else "or", e.type, "private", cur)
        pre.append(barrier_flow.decl(t, barrier_flow.const(e.type, 0 if is_and else 1, cur), cur))
        b = barrier_flow.not_(barrier_flow.not_(rest[0]))
        pre.append(barrier_flow.if_(c if is_and else barrier_flow.not_(c),
                                    self.stmt(barrier_flow.assign(t, b, cur)), cur=cur))
        return barrier_flow.load(t, cur)

    def inline(self, call, pre, want_value):
        f = call.val
        args = [self.hoist(a, pre) for a in call.kids]
        mapping = {}
        for p, a in zip(f.params, args):
            v = Var(p.name, p.type, "private", p.cur)
            mapping[p] = v
            init = a if (a.type == p.type or p.type.is_struct) else Node("conv", p.type, [a], cur=a.cur)
            pre.append(Node("decl", kids=[init], val=v, cur=call.cur))
        rv = None
        if want_value and not f.ret.is_void:
            rv = Var("ret." + f.name, f.ret, "private", f.cur)
            pre.append(Node("decl", kids=[], val=rv, cur=call.cur))
        elif want_value:
            raise CompileError("the void function '%s' (which uses barrier()) is used as a value" % f.name,
                               call.cur)
        body = self.copy(f.body, mapping)
        stmts = barrier_flow.remove_returns(list(body.kids) if body.op == "block" else [body], rv, f.name, f.cur)
        pre.append(self.stmt(Node("block", kids=stmts, cur=body.cur)))
        if rv is None:
            return None
        return Node("load", f.ret, [self.var(rv)], cur=call.cur)

    @staticmethod
    def var(v):
        return Node("var", v.type, lv=True, val=v)

    def copy(self, n, mapping):
        if not isinstance(n, Node):
            return n
        val = n.val
        if n.op == "decl" and isinstance(val, Var) and val.storage == "private":
            nv = Var(val.name, val.type, "private", val.cur)
            mapping[val] = nv
            val = nv
        kids = [self.copy(x, mapping) for x in n.kids]
        if n.op == "var":
            val = mapping.get(val, val)
        return Node(n.op, n.type, kids, n.lv, n.cur, val)
