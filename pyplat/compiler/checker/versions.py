"""PYPLAT_CHECK=races: a checked kernel's work-group function in two versions, picked per group
by what the launch's check record says (docs/tools.md, "PYPLAT_CHECK";
docs/history/performance-log.md).

A `__global` argument that no race-checked access of the kernel writes through (its writes
through pointers of unknown origin, in helpers for one, are never race-checked: the core's
`race_written`, not pointer_writes.written_params, the queue's answer, which counts as written
every pointer it cannot follow) can race only with writes through another argument bound
to the same buffer; the core tracks it (check_shadows.fill_record: a shadow header in the
record) only then. Its race check is
code in the loop over work-items all the same, and LLVM's vectoriser makes it masked vector
code that runs whether the argument is tracked or not: with two read-only inputs, more than
half of a checked vector add's time, and of the transpose's. So a kernel with such arguments
gets two work-group functions: `.fast`, without their race checks, and `.full`, with every
check; the exported function (named as the kernel's) calls `.fast` where none of them is
tracked in this launch, else `.full`. Nothing is lost: where `.fast` runs, those arguments'
tags would have been skipped at run time anyway (serial 0).
"""
from llvmlite import ir

from ..lowering import workgroup
from ..lowering.irbuild import I1, I64, PTR, Builder
from . import global_races, private_launch
from .layout import GS_HEADER, rec_global_shadow


def read_only_arguments(table, k):
    """Indices of kernel k's `__global` pointer arguments without a race-checked write through
    them (after the full version's lowering: table.race_written), where their race checks are
    worth a second version (races on), else ()."""
    if not global_races.wanted(table, k):
        return ()
    written = table.race_written.get(k.name, set())
    return tuple(i for i in global_races.global_arguments(k) if i not in written)


def emit(table, k, name, emit_one):
    """Kernel k's work-group function `name` (a kernel lowered whole: barriers.py), made by
    emit_one(name): the full version first (its sites make private_proofs's proofs), then,
    where some argument's race checks can be left out, the fast one (the checker's
    Instrumentation.kernel_versions)."""
    if not global_races.wanted(table, k):
        emit_one(name)
        return
    mg = table.mg
    emit_one(name + ".full")
    read_only, private = _left_out(table, k)
    if read_only or private:
        # (the full version's group end has read them: the fast one's slots start again)
        table.forget_kernel_slots(k.name)
        table.race_skip = (k, frozenset(read_only + private))
        regions = mg.regions
        try:
            emit_one(name + ".fast")
        finally:
            table.race_skip = None
            # (a copy of the same regions: the vectoriser's threshold counts the kernel's own,
            # driver.native_object; counted twice, pyopencl's reduction lost its vector loop)
            mg.regions = regions
    _dispatch(table, k, name, read_only, private)


def plain(table, k, emit_body, emit_loop):
    """The work-group function of kernel k without barriers (emit_loop(name, body): the loop
    nest around its body, mg.fns[k], already lowered), in two versions where some argument's
    race checks can be left out: the second body lowered by emit_body(k) into a function of its
    own. Returns its name (the checker's Instrumentation.plain_versions)."""
    read_only, private = _left_out(table, k) if global_races.wanted(table, k) else ((), ())
    if not read_only and not private:
        return emit_loop()
    mg = table.mg
    name = workgroup.name_of(k)
    full_body = mg.fns[k]
    fast_body = ir.Function(mg.module, full_body.function_type, name=full_body.name + ".fast")
    for a in full_body.attributes:
        fast_body.attributes.add(a)
    fast_body.linkage = "internal"
    mg.fns[k] = fast_body
    table.race_skip = (k, frozenset(read_only + private))
    try:
        emit_body(k)
    finally:
        table.race_skip = None
        mg.fns[k] = full_body
    emit_loop(name + ".fast", fast_body)
    emit_loop(name + ".full", full_body)
    _dispatch(table, k, name, read_only, private)
    return name


def _left_out(table, k):
    """(read-only arguments, private ones: private_proofs.py) of kernel k."""
    read_only = read_only_arguments(table, k)
    from . import windows          # (numpy: imported when a checked kernel is built, not with the platform)
    private = tuple(i for i in windows.private_arguments(table, k) if i not in read_only)
    return read_only, private


def _dispatch(table, k, name, read_only, private):
    """The exported work-group function: `.fast` where the record tracks none of `read_only`,
    no other argument shares a `private` one's shadow, and each `private` one's proof holds
    for the launch (private_launch: its sizes and scalar arguments); else `.full` (the
    only version where both are empty)."""
    mg = table.mg
    full = mg.module.get_global(name + ".full")
    fn = workgroup.declare(mg.module, name)
    full.linkage = "internal"
    args_p, ctx = fn.args
    b = Builder(fn.append_basic_block("entry"))
    if not read_only and not private:
        b.ret(b.call(full, [args_p, ctx]))
        return
    fast = mg.module.get_global(name + ".fast")
    fast.linkage = "internal"
    cell = b.load(b.gep(args_p, [I64(len(k.params))], inbounds=True, source_etype=PTR), typ=PTR, align=8)
    record = b.load(cell, typ=PTR, align=8)
    n = len(k.params)

    def header(i):
        word = b.gep(record, [I64(rec_global_shadow(n, i) + GS_HEADER)], inbounds=True, source_etype=I64)
        return b.load(word, typ=I64, align=8)
    go = I1(1)
    for i in read_only:
        go = b.and_(go, b.icmp_unsigned("==", header(i), I64(0)))
    for i in private:
        own = header(i)
        for j in global_races.global_arguments(k):
            if j != i:
                go = b.and_(go, b.or_(b.icmp_unsigned("==", own, I64(0)), b.icmp_unsigned("!=", own, header(j))))
    from . import windows          # (numpy: not imported with the platform)
    proofs = windows.proofs(table, k)
    for i in private:
        go = b.and_(go, private_launch.condition(b, k, proofs[i], args_p, ctx))
    fast_bb = fn.append_basic_block("fast")
    full_bb = fn.append_basic_block("full")
    b.cbranch(go, fast_bb, full_bb)
    for bb, version in ((fast_bb, fast), (full_bb, full)):
        b.position_at_end(bb)
        b.ret(b.call(version, [args_p, ctx]))
