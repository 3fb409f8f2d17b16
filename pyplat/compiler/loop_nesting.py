"""How deeply a program's loops nest, for the optimiser's sake.

LLVM's loop passes (LICM, unswitching, rotation, SCEV, the vectoriser's checks) each walk every
loop and everything inside it, so their time grows with the square of the nesting depth: 300
`while` loops nested in one another took 21 s at O3 and 600 `for` loops 35 s at any level but
O0 (0.1 s), where PoCL-like programs of the fuzzer (tests/support/fuzz_source.py) must build in well
under 30 s. No real kernel nests loops anywhere near OPTIMISED_LOOP_DEPTH deep (at that depth
O3 costs about 0.3 s), so a program that does is compiled without optimisation (driver.py), and
its log says so at its deepest loop."""
LOOPS = ("for", "while", "do")
OPTIMISED_LOOP_DEPTH = 32


def loop_depth(func, memo=None):
    """(depth, cursor): the most loops of `func` nested in one another, and the innermost loop
    of such a nest. A helper's loops count where it is called (helpers are inlined). Iterative:
    the tree may be nested thousands of levels deep."""
    memo = {} if memo is None else memo
    if func in memo:
        return memo[func]
    memo[func] = (0, None)                 # (recursion is not OpenCL C; a cycle counts once)
    best = (0, None)
    stack = [(func.body, 0)] if func.body is not None else []
    while stack:
        n, depth = stack.pop()
        if n is None or not hasattr(n, "op"):
            continue
        if n.op in LOOPS:
            depth += 1
            if depth > best[0]:
                best = (depth, n.cur)
        if n.op == "call" and getattr(n.val, "body", None) is not None:
            inner, where = loop_depth(n.val, memo)
            if depth + inner > best[0]:
                best = (depth + inner, where if where is not None else n.cur)
        stack.extend((k, depth) for k in n.kids if k is not None)
    memo[func] = best
    return best


def deepest(funcs):
    """(depth, cursor) of the deepest loop nest among `funcs`."""
    memo, best = {}, (0, None)
    for f in funcs:
        d = loop_depth(f, memo)
        if d[0] > best[0]:
            best = d
    return best
