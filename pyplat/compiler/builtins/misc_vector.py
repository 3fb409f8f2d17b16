"""Miscellaneous vector functions (OpenCL C spec, "Miscellaneous Vector Functions"): shuffle and
shuffle2. (vec_step is an operator clang evaluates; it never reaches the lowering.)"""
from llvmlite import ir

from .helpers import I32
from .registry import builtin


def _lane_index(g, mask, i, bits):
    """Element i of the mask vector, only its low `bits` bits (the spec ignores the others), as
    an i32 lane number."""
    b = g.b
    m = b.extract_element(mask, I32(i))
    m = b.and_(m, ir.Constant(m.type, (1 << bits) - 1))
    w = m.type.width
    return m if w == 32 else (b.trunc(m, I32) if w > 32 else b.zext(m, I32))


@builtin("shuffle", "shuffle2")
def shuffle(g, n, name):
    """shuffle(x, mask): result[i] = x[mask[i] mod n] for x of n elements; shuffle2(x, y, mask):
    element mask[i] mod 2n of x and y concatenated. The result has as many elements as mask.
    A constant mask ends as one shufflevector once LLVM folds the per-lane extracts."""
    b = g.b
    srcs = [g.rv(k) for k in n.kids[:-1]]
    mask = g.rv(n.kids[-1])
    count = n.kids[0].type.count
    rt = n.type
    bits = (count * len(srcs) - 1).bit_length()
    out = ir.Constant(rt.llvm(), ir.Undefined)
    low = I32(count - 1)
    for i in range(rt.count):
        idx = _lane_index(g, mask, i, bits)
        v = b.extract_element(srcs[0], b.and_(idx, low))
        if len(srcs) == 2:
            second = b.icmp_unsigned("!=", b.and_(idx, I32(count)), I32(0))
            v = b.select(second, b.extract_element(srcs[1], b.and_(idx, low)), v)
        out = b.insert_element(out, v, I32(i))
    return out
