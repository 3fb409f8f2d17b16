"""Which helpers are forced inline (`alwaysinline`) and which LLVM's inliner decides on
(issue 31 part 4).

Forcing every helper inline is what makes work-item loops vectorise (the loop body must be
free of calls) and lets SROA split the work-item state, so it stays the rule. But the size of a
fully inlined program is the product of call counts down the call graph: sha512crypt-like
kernels (a 3,000-line compression called from a dozen helpers) grew from 1.75 MB of IR to 31 MB
and took minutes in LLVM. So when full inlining would make the program larger than BUDGET
typed-tree nodes, the helpers whose copies cost most are left to LLVM's cost model (which
still inlines what is small or called once) until the estimate fits. Programs under the
budget, every usual kernel, are compiled exactly as before.

Sizes are typed-tree nodes; a call left out counts as one node."""
from .tree_walk import walk

# Fully inlined size (typed-tree nodes) up to which every helper stays forced inline. Measured:
# the test suite's kernels and pyopencl's (scan ~1,500) are far below it except clrandom's
# threefry (22,500: its two copies of a 11,000-node round function; built and run as fast left
# to LLVM, 4M normals in 67 ms); a helper of 2,100 nodes called from 8 places (17,000) took 2.9 s
# to build forced inline (the work-item loop vectorised around 8 copies), 0.2 s left to LLVM.
BUDGET = 12000
# A helper whose extra copies add fewer nodes than this stays forced even over the budget:
# leaving it to LLVM would not make the program smaller (LLVM inlines it by cost anyway) and
# could keep a work-item loop from vectorising.
MIN_GAIN = 1000


def left_to_llvm(roots):
    """The helpers (tree.Func, reachable from roots: kernels and exported functions) that should
    not be forced inline. Kernels are always forced: each is one call from its work-group
    function."""
    own, calls = {}, {}
    _collect(roots, own, calls)
    unforced = set()
    while True:
        total, copies, expanded = _estimate(roots, own, calls, unforced)
        if total <= BUDGET:
            return unforced
        # the forced helper whose extra copies weigh most; a helper inlined once costs nothing
        best, gain = None, 0
        for f, n in copies.items():
            if f in unforced or f.is_kernel or n <= 1:
                continue
            g = (n - 1) * expanded[f]
            if g > max(gain, MIN_GAIN - 1):
                best, gain = f, g
        if best is None:
            return unforced
        unforced.add(best)


def _collect(roots, own, calls):
    """own[f]: f's node count; calls[f]: {callee: call sites in f} (defined callees only)."""
    todo = list(roots)
    while todo:
        f = todo.pop()
        if f in own or f.body is None:
            continue
        counts = {"n": 0}
        sites = {}

        def visit(x, counts=counts, sites=sites):
            counts["n"] += 1
            if x.op == "call" and getattr(x.val, "body", None) is not None:
                sites[x.val] = sites.get(x.val, 0) + 1
        walk(f.body, visit)
        own[f], calls[f] = counts["n"], sites
        todo.extend(sites)


def _estimate(roots, own, calls, unforced):
    """(total size, copies of each function's body, expanded size of each) when every function
    but those in `unforced` is inlined into its callers. A function left out is a root of its
    own: one body, reached by calls."""
    expanded = {}

    def size(f):                    # f's body with its forced callees inlined (no recursion in
        s = expanded.get(f)         # OpenCL C: the front end rejects it)
        if s is None:
            s = own[f] + sum(n * (1 if g in unforced else size(g)) for g, n in calls[f].items())
            expanded[f] = s
        return s
    starts = [f for f in roots if f in own] + [f for f in unforced if f not in roots]
    copies = {}
    order = _topological(starts, calls)
    for f in order:
        copies.setdefault(f, 0)
    for f in starts:
        copies[f] += 1
    for f in order:                 # callers before callees: copies flow down forced calls
        for g, n in calls[f].items():
            if g not in unforced:
                copies[g] += copies[f] * n
    total = sum(size(f) for f in starts)
    for f in order:
        size(f)
    return total, copies, expanded


def _topological(starts, calls):
    """Every function reachable from starts, each after all its callers."""
    seen, post = set(), []
    for s in starts:
        stack = [(s, iter(calls[s]))]
        seen.add(s)
        while stack:
            f, it = stack[-1]
            g = next(it, None)
            if g is None:
                stack.pop()
                post.append(f)
            elif g not in seen:
                seen.add(g)
                stack.append((g, iter(calls[g])))
    return post[::-1]
