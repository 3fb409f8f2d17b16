"""The dispatch of a `switch`: one LLVM `switch` instruction, or for a very large one a tree of
range tests over switches of at most CHUNK cases (issue 31 part 4).

Why: LLVM 22's SimplifyCFG looks for duplicate switch arms in every run (simplifyDuplicateSwitchArms)
through a hash that gives every arm which is only a branch the same value, so a switch of n
such arms (`case k: r = CONST; break;` once SROA has made `r` a phi) costs n^2 comparisons each
time the pass runs: 10,000 cases took minutes to optimise. Bounding each switch at CHUNK cases
makes that n * CHUNK; each chunk still becomes a jump or lookup table, and the range tests
are the binary search LLVM's own lowering of a sparse switch does anyway."""
from llvmlite import ir

# Switches up to this many distinct cases stay one instruction (nothing changes for them).
LARGE = 256
# Cases per switch of a split one: small enough that n * CHUNK is cheap, large enough that the
# tree above the chunks is a handful of compares (10,000 cases: 157 chunks, 8 levels; 128 and
# 32 measured within 10 % of it).
CHUNK = 64


def emit(b, v, cases, default):
    """Branch on integer value v: to cases' block for each (value, block) (values as unsigned
    bit patterns of v's type, distinct), else to default. Leaves b's block terminated."""
    if len(cases) <= LARGE:
        sw = b.switch(v, default)
        for val, bb in cases:
            sw.add_case(ir.Constant(v.type, val), bb)
        return
    ordered = sorted(cases)
    chunks = [ordered[i:i + CHUNK] for i in range(0, len(ordered), CHUNK)]
    _tree(b, v, chunks, default)


def _tree(b, v, chunks, default):
    """Binary search over chunks (sorted, disjoint, ascending): a value below the first case of
    the right half goes left. Values between chunks reach a chunk's switch and its default."""
    if len(chunks) == 1:
        sw = b.switch(v, default)
        for val, bb in chunks[0]:
            sw.add_case(ir.Constant(v.type, val), bb)
        return
    mid = len(chunks) // 2
    left, right = b.append_basic_block("sw.lo"), b.append_basic_block("sw.hi")
    b.cbranch(b.icmp_unsigned("<", v, ir.Constant(v.type, chunks[mid][0][0])), left, right)
    for part, bb in ((chunks[:mid], left), (chunks[mid:], right)):
        b.position_at_end(bb)
        _tree(b, v, part, default)
