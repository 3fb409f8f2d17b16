"""The tree walks the barrier passes share (barrier_tree.py, barrier_flow.py): a walk over every
node, and whether a statement contains a barrier."""


def has_barrier(n, memo):
    r = memo.get(id(n))
    if r is None:
        if n.op == "barrier":
            r = True
        elif n.op in ("expr", "decl", "return", "break", "continue", "nop", "goto"):
            r = False
        else:
            r = any(k is not None and has_barrier(k, memo) for k in n.kids
                    if k is not None and k.op in STMT_OPS)
        memo[id(n)] = r
    return r


STMT_OPS = {"block", "decl", "expr", "if", "for", "while", "do", "break", "continue", "return", "nop",
            "barrier", "switch", "case", "default", "label", "goto"}


def walk(n, fn):
    stack = [n]
    while stack:
        x = stack.pop()
        if x is None or not hasattr(x, "op"):
            continue
        fn(x)
        stack.extend(x.kids)        # (None kids are skipped when popped: no filter pass here)
