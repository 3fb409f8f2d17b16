"""Which barrier-free loops may run with the work-items in lockstep (barriers.py,
_choose_lockstep; group_stride.py picks barrier-free kernels by them), and the updates that make
a loop variable an induction variable (one region per iteration recomputes it)."""
from .barrier_tree import walk


def _constant(e):
    while e is not None and e.op in ("conv", "block", "decl", "expr", "assign") and e.kids:
        e = e.kids[-1]
    return e is not None and e.op == "const"


def lockstep_eligible(n):
    """Whether the barrier-free loop n may run in lockstep (_choose_lockstep): it touches
    __global memory, has no nested loop, switch, return or goto, and is not a constant-bounded
    `for` (LLVM unrolls those in their region)."""
    cond = n.kids[1] if n.op in ("for", "do") else n.kids[0]
    if cond is None or (n.op == "for" and _constant(n.kids[0]) and cond.op == "bin"
                        and any(_constant(x) for x in cond.kids)):
        return False
    seen = {"global": False, "bad": False}

    def visit(x):
        if x is not n and x.op in ("for", "while", "do", "switch", "return", "goto", "label"):
            seen["bad"] = True
        t = getattr(x, "type", None)
        if t is not None and t.is_pointer and t.addrspace == "global":
            seen["global"] = True
    walk(n, visit)
    return seen["global"] and not seen["bad"]


def induction_update(e):
    """(var, sign, step) when e is `v += s`, `v -= s`, `v++`, `--v`..., else None (step None: 1)."""
    if e is None or e.kids is None or not e.kids or e.kids[0].op != "var":
        return None
    if e.op == "incdec":
        return e.kids[0].val, e.val[0], None
    if e.op == "cassign" and e.val in ("+", "-") and e.kids[1].type.is_int:
        return e.kids[0].val, 1 if e.val == "+" else -1, e.kids[1]
    return None
