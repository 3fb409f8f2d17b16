"""barrier() on the typed tree, before lowering: which statements and functions execute it, and
inlining of barrier-using helper functions into the kernels that call them (so the loop fission
of barriers.py sees every barrier of a kernel in its own body); and the tree walks the lowering's
analyses share (`walk`, `assigned_vars`)."""
from ..tree import CompileError, Node, Var


def has_barrier(n, memo):
    r = memo.get(id(n))
    if r is None:
        if n.op == "barrier":
            r = True
        elif n.op in ("expr", "decl", "return", "break", "continue", "nop", "goto"):
            r = False
        else:
            r = any(k is not None and has_barrier(k, memo) for k in n.kids
                    if k is not None and k.op in _STMT_OPS)
        memo[id(n)] = r
    return r


_STMT_OPS = {"block", "decl", "expr", "if", "for", "while", "do", "break", "continue", "return", "nop",
             "barrier", "switch", "case", "default", "label", "goto"}


def walk(n, fn):
    stack = [n]
    while stack:
        x = stack.pop()
        if x is None or not hasattr(x, "op"):
            continue
        fn(x)
        stack.extend(x.kids)        # (None kids are skipped when popped: no filter pass here)


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
    """Variables the tree n assigns to, increments, or takes the address of."""
    out = set()

    def visit(x):
        if x.op in ("assign", "cassign", "incdec", "addr") and x.kids and x.kids[0] is not None \
                and getattr(x.kids[0], "op", None) == "var":
            out.add(x.kids[0].val)
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
    `k`, so the loop fission below sees the barriers. Calls are hoisted out of their statement
    (arguments first, into fresh variables of the parameter types); a value-returning helper
    must return at its end only."""
    memo = {}
    calls = []
    walk(k.body, lambda x: calls.append(x.val) if x.op == "call" else None)
    if not any(func_has_barrier(f, memo) for f in calls):
        return
    k.body = _Inliner(memo).stmt(k.body)


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
            e = self.hoist(e, pre)
            pre.append(Node(op, n.type, [e], n.lv, n.cur, n.val))
            return Node("block", kids=pre, cur=n.cur)
        kids = []
        for x in n.kids:
            if x is None or x.op in _STMT_OPS:
                kids.append(self.stmt(x))
            else:
                bad = self.contains_bcall(x)
                if bad:
                    raise CompileError("call of function '%s' (which uses barrier()) in a condition or "
                                       "loop increment is not supported" % bad[0].val.name, x.cur)
                kids.append(x)
        return Node(op, n.type, kids, n.lv, n.cur, n.val)

    def hoist(self, e, pre):
        """e with its barrier-function calls replaced by their results (inlined into `pre`)."""
        if e is None or not self.contains_bcall(e):
            return e
        if e.op in ("land", "lor", "cond", "comma"):
            raise CompileError("call of function '%s' (which uses barrier()) inside a conditionally "
                               "evaluated expression is not supported" % self.contains_bcall(e)[0].val.name,
                               e.cur)
        kids = [self.hoist(x, pre) if isinstance(x, Node) else x for x in e.kids]
        n = Node(e.op, e.type, kids, e.lv, e.cur, e.val)
        if self.is_bcall(n):
            return self.inline(n, pre, want_value=True)
        return n

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
        stmts = list(body.kids) if body.op == "block" else [body]
        tail = stmts[-1] if stmts else None
        if tail is not None and tail.op == "return":
            stmts.pop()
            if tail.kids:
                e = tail.kids[0]
                if rv is not None:
                    if e.type != f.ret and not f.ret.is_struct:
                        e = Node("conv", f.ret, [e], cur=e.cur)
                    stmts.append(Node("expr", kids=[Node("assign", f.ret, [self.var(rv), e], cur=tail.cur)],
                                      cur=tail.cur))
                else:
                    stmts.append(Node("expr", kids=[e], cur=tail.cur))
        early = []
        for x in stmts:
            walk(x, lambda y: early.append(y) if y.op == "return" else None)
        if early:
            raise CompileError("function '%s' uses barrier() and returns before its end: not supported"
                               % f.name, early[0].cur)
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


