"""Emission of lockstep loops in barrier kernels (barriers.py; which loops qualify and which
variables are induction variables: _choose_lockstep, _induction_steps, lowering/lockstep.py).

A region runs the loop's init and first test for every work-item, then one region per
iteration runs body, increment and test for every work-item still active, while any is.
Work-items may interleave freely between barriers, so this is the same program; break and
continue act per work-item (its `active` flag).

Tried and measured slower (docs/compiler.md, "Lockstep loops: other orders"): strips of 16
work-items running all their iterations with their state in vector registers, and two or
more iterations per region. Passes in which no work-item can leave the loop run without the
flag and the exit tests where a group-level test can tell (lockstep_exitfree.py)."""
from ..tree import Node
from .irbuild import I1, I8, I64
from .statements import loop_parts
from . import lockstep_exitfree


def lockstep_loop(gen, n, flag):
    """Emit the barrier-free loop n in lockstep; flag: its per-work-item `active` variable."""
    init, cond, inc, body = loop_parts(n)
    fn = gen.fn
    busy = gen.group_flag("busy")
    gen.b.store(I1(0), busy)

    ivs = [(v, st) for v, st in gen.induction.items() if st[0] == id(n)]
    exitfree = lockstep_exitfree.plan(gen, n, body, cond, bool(ivs))
    if exitfree is not None:
        exitfree.all_in = gen.group_flag("all_in")
        gen.b.store(I1(1), exitfree.all_in)

    def test(go_on, first=False):
        """Store go_on (i1) as this work-item's active flag; any active one keeps the loop going
        (first: one that is not clears all_in)."""
        b = gen.b
        b.store(b.zext(go_on, I8), gen.pw_ptr(flag))
        set_bb = fn.append_basic_block("ls.busy")
        stop_bb = gen.region_next
        if first and exitfree is not None:
            here, stop_bb = b.block, fn.append_basic_block("ls.out")
            b.position_at_end(stop_bb)
            b.store(I1(0), exitfree.all_in)
            b.branch(gen.region_next)
            b.position_at_end(here)
        b.cbranch(go_on, set_bb, stop_bb)
        b.position_at_end(set_bb)
        b.store(I1(1), busy)

    def start():
        if init is not None:
            gen.stmt(init)
        for v in ivs:                    # started here (`for (i = gid; ...)`): live from now on
            if v[0] in gen._for_starts and v[0] not in gen.remat_live:
                gen.remat_live.append(v[0])
        test(I1(1) if n.op == "do" else gen.truth(gen.rv(cond), cond.type), first=True)
    gen.region(start)

    trip = gen.group_flag("trip", I64) if ivs else None
    if trip is not None:
        gen.b.store(I64(0), trip)        # iterations run so far, this time through the loop

    def advance():
        b = gen.b
        for v, (_, sign, step) in ivs:       # init + trip * step
            ty = v.type.llvm()
            t = b.trunc(b.load(trip, typ=I64), ty) if ty.width < 64 else b.load(trip, typ=I64)
            d = t if step is None else b.mul(t, gen.convert(gen.rv(step), step.type, v.type, step))
            cur = b.load(gen.vars[v], typ=ty)
            b.store(b.add(cur, d) if sign > 0 else b.sub(cur, d), gen.vars[v])

    def exit_free_iteration():
        """No flag, no exit test: every work-item is in the loop and stays (predict)."""
        advance()
        gen.in_range = {id(a[0]) for a in exitfree.ranged}     # (tested for the pass: lockstep_ranges)
        gen.stmt(exitfree.body())
        gen.in_range = ()
        if inc is not None:
            gen.stmt(Node("expr", kids=[inc], cur=inc.cur))

    def iteration():
        b = gen.b
        run_bb = fn.append_basic_block("ls.run")
        brk_bb = fn.append_basic_block("ls.break")
        inc_bb = fn.append_basic_block("ls.inc")
        on = b.load(gen.pw_ptr(flag), typ=I8)
        b.cbranch(b.icmp_unsigned("!=", on, I8(0)), run_bb, gen.region_next)
        b.position_at_end(run_bb)
        advance()
        gen.loops.append((brk_bb, inc_bb))
        gen.stmt(body)
        gen.loops.pop()
        if not b.block.is_terminated:
            b.branch(inc_bb)
        b.position_at_end(brk_bb)
        b.store(I8(0), gen.pw_ptr(flag))
        b.branch(gen.region_next)
        b.position_at_end(inc_bb)
        if inc is not None:
            gen.stmt(Node("expr", kids=[inc], cur=inc.cur))
        test(gen.truth(gen.rv(cond), cond.type))

    b = gen.b
    if exitfree is not None:
        exitfree.prepare(gen.lx)
    head = fn.append_basic_block("ls.head")
    step = fn.append_basic_block("ls.step")
    end = fn.append_basic_block("ls.end")
    b.branch(head)
    b.position_at_end(head)
    b.cbranch(b.load(busy, typ=I1), step, end)
    b.position_at_end(step)
    b.store(I1(0), busy)
    if exitfree is not None:
        fast, goes_on = exitfree.predict(b.load(trip, typ=I64))
        fast_bb = fn.append_basic_block("ls.exitfree")
        slow_bb = fn.append_basic_block("ls.generic")
        join_bb = fn.append_basic_block("ls.passed")
        b.cbranch(fast, fast_bb, slow_bb)
        b.position_at_end(fast_bb)
        gen.region(exit_free_iteration)
        gen.b.store(goes_on, busy)
        gen.b.branch(join_bb)
        gen.b.position_at_end(slow_bb)
        gen.b.store(I1(0), exitfree.all_in)      # flags may clear from now on
        gen.region(iteration)
        gen.b.branch(join_bb)
        gen.b.position_at_end(join_bb)
    else:
        gen.region(iteration)
    if trip is not None:
        gen.b.store(gen.b.add(gen.b.load(trip, typ=I64), I64(1)), trip)
    gen.b.branch(head)
    gen.b.position_at_end(end)
