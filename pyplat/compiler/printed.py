"""Facts the front end reads from clang's printing of a function's AST (clangapi.pretty_printed),
where libclang has no call for them. The printing is of the AST after preprocessing: macros,
included files and #if branches are already as clang resolved them, so nothing here depends on
how the source was written."""
from . import swizzle as SW


def for_headers(text):
    """For each `for` statement of a printed function, in pre-order (the order of a walk of its
    AST), which of its header's three parts (init; cond; inc) are present: a tuple of 3 bools."""
    toks = [t for t, _ in SW.tokenize(text)]
    out = []
    for i, tok in enumerate(toks):
        if tok != "for" or i + 1 >= len(toks) or toks[i + 1] != "(":
            continue
        present, slot, depth = [False, False, False], 0, 0
        for t in toks[i + 1:]:
            if t == "(":
                depth += 1
                if depth == 1:
                    continue
            elif t == ")":
                depth -= 1
                if depth == 0:
                    break
            if depth == 1 and t == ";":
                slot += 1
                if slot > 2:
                    break
                continue
            present[slot] = True
        out.append(tuple(present))
    return out
