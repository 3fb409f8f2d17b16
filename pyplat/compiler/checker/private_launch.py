"""PYPLAT_CHECK=races: what private_proofs's proof of an argument leaves to the launch, tested by
the exported work-group function (versions._dispatch) before it picks `.fast`.

From the launch's sizes (the context) and its scalar arguments: the proof's linear form over
the six ids (group id g_d, local id l_d; get_global_id(d) = g_d · local size d + l_d + offset
d), each id's range (the local size, the number of groups; 1 for a local id every site fixes),
the coefficients' magnitudes sorted (a sorting network of selects), and the mixed-radix test:
each coefficient of an id with range > 1 exceeds the window less one plus what the smaller
ones reach. Besides: the scalar arguments read are >= 0 and, with the sizes, below 2^32 (so
that 128-bit arithmetic here cannot overflow), and the proof's reach is below 2^31 (the kernel's
own arithmetic is exact; private_proofs's docstring). Every value tested is the same for every
group of the launch, so all its groups take the same version.
"""
from llvmlite import ir

from .. import abi
from ..lowering import workgroup
from .private_proofs import GID, GRP, LID
from ..lowering.irbuild import I1, I64

I128 = ir.IntType(128)


def condition(b, k, proof, args_p, ctx):
    """An i1: the proof holds for this launch (see above)."""
    ok = [I1(1)]

    def need(c):
        ok[0] = b.and_(ok[0], c)

    def ctx_slot(slot):
        v = b.load(b.gep(ctx, [I64(slot)], inbounds=True, source_etype=I64), typ=I64, align=8)
        return b.zext(v, I128)

    values = {}
    for i in proof.args:
        t = k.params[i].type
        v = workgroup.argument(b, args_p, i, t)
        v = b.sext(v, I128) if t.signed and t.bits < 128 else b.zext(v, I128) if t.bits < 128 else v
        need(b.icmp_signed(">=", v, I128(0)))
        need(b.icmp_signed("<", v, I128(1 << 32)))
        values[("arg", i)] = v

    def factor(f):
        if f not in values:
            v = values[f] = ctx_slot(f[1])
            need(b.icmp_unsigned("<", v, I128(1 << 32)))
        return values[f]

    def poly(p):
        total = I128(0)
        for mono, c in sorted((p or {}).items()):
            term = I128(c)
            for f in mono:
                term = b.mul(term, factor(f))
            total = b.add(total, term)
        return total

    def magnitude(v):
        return b.select(b.icmp_signed("<", v, I128(0)), b.sub(I128(0), v), v)

    one = I128(1)
    reach = poly(proof.reach.get(None))
    ids = []                                      # (|coefficient| where the range is > 1, range)
    for d in range(3):
        local = factor(("ctx", abi.CTX_LOCAL_SIZE + d))
        groups = factor(("ctx", abi.CTX_NUM_GROUPS + d))
        size = factor(("ctx", abi.CTX_GLOBAL_SIZE + d))
        offset = factor(("ctx", abi.CTX_GLOBAL_OFFSET + d))
        for atom, largest in ((GID, b.sub(b.add(offset, size), one)), (LID, b.sub(local, one)),
                              (GRP, b.sub(groups, one))):
            reach = b.add(reach, b.mul(poly(proof.reach.get((atom, d))), largest))
        per_item = poly(proof.linear.get((GID, d)))
        for coefficient, count in ((b.add(poly(proof.linear.get((LID, d))), per_item),
                                    one if d in proof.fixed else local),
                                   (b.add(poly(proof.linear.get((GRP, d))), b.mul(per_item, local)), groups)):
            many = b.icmp_unsigned(">", count, one)
            ids.append((b.select(many, magnitude(coefficient), I128(0)), count))
    need(b.icmp_signed("<", reach, I128(1 << 31)))
    for i in range(len(ids)):                     # (bubble sort by magnitude: 15 exchanges)
        for j in range(len(ids) - 1 - i):
            (x, nx), (y, ny) = ids[j], ids[j + 1]
            swap = b.icmp_unsigned(">", x, y)
            ids[j] = (b.select(swap, y, x), b.select(swap, ny, nx))
            ids[j + 1] = (b.select(swap, x, y), b.select(swap, nx, ny))
    # the farthest byte the smaller ids reach (a window of windows: a polynomial)
    window = proof.window
    below = b.sub(poly(window), one) if isinstance(window, dict) else I128(window - 1)
    for coefficient, count in ids:
        need(b.or_(b.icmp_unsigned("<=", count, one), b.icmp_unsigned(">", coefficient, below)))
        below = b.add(below, b.mul(coefficient, b.sub(count, one)))
    conditions = proof.conditions
    if conditions:                                # (windows: one of its ways holds)
        def at_least_zero(form):
            """form >= 0 for every group: its group ids' terms at their least."""
            total = poly(form.get(None))
            for d in range(3):
                a = poly(form.get((GRP, d)))
                most = b.mul(a, b.sub(factor(("ctx", abi.CTX_NUM_GROUPS + d)), one))
                total = b.add(total, b.select(b.icmp_signed("<", a, I128(0)), most, I128(0)))
            return b.icmp_signed(">=", total, I128(0))
        any_way = I1(0)
        for way in conditions:
            every = I1(1)
            for form in way:
                every = b.and_(every, at_least_zero(form))
            any_way = b.or_(any_way, every)
        need(any_way)
    return ok[0]
