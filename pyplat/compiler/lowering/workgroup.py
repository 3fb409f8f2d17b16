"""The exported work-group function of a kernel (abi.py): ``void f(void **args, const
WorkGroupContext *ctx)``, running every work-item of one group.

Its prologue (declaration, the work-item state filled from the context, the kernel's arguments
read from ``args``, the local sizes, skipping an empty group) and the z/y/x loop nest over the
local ids are written here once. Kernels without barriers use them for a single loop nest around
a call of the kernel's body (plain_workgroup_function); kernels with barriers (barriers.py) use
them for every parallel region.
"""
from llvmlite import ir

from .. import abi
from .irbuild import Builder, I32, I64, PTR, WI_LID, WI_SLOTS_TYPE, WI_TYPE


def name_of(k):
    return "__pyplat_wg_" + k.name


def declare(module, name):
    """The work-group function: it returns 0, or 1 when a compiled check (PYPLAT_CHECK: the
    instrumentation's group_result) found a bad access in this group, which fails the command."""
    fn = ir.Function(module, ir.FunctionType(I32, [PTR, PTR]), name=name)
    fn.attributes.add("nounwind")
    fn.args[1].add_attribute("noalias")          # ctx
    return fn


def required_size(k):
    """reqd_work_group_size as a tuple when the kernel fixes it (loop bounds become constants)."""
    return tuple(k.reqd) if k.reqd and all(k.reqd) else None


def work_item_state(alloca_b, b, ctx, reqd):
    """The work-item state `wi` (an alloca made by alloca_b), filled by b from the context: its
    i64 slots (the local size constant under reqd_work_group_size) and the local-memory pointer.
    Returns (wi, pointer to its slot array)."""
    wi = alloca_b.alloca(WI_TYPE, name="wi")
    slots = b.gep(wi, [I32(0), I32(0)], inbounds=True, source_etype=WI_TYPE)
    for i in range(abi.CTX_I64_SLOTS):
        d = i - abi.CTX_LOCAL_SIZE
        if reqd and 0 <= d < 3:
            v = I64(reqd[d])
        else:
            v = b.load(b.gep(ctx, [I64(i)], inbounds=True, source_etype=I64), typ=I64, align=8)
            if 0 <= d < 3:          # as local_sizes' loads: where `wi` stays (checked kernels)
                v.set_metadata("range", _below_2_31(b.module))   # LLVM merges the two loads
        b.store(v, b.gep(slots, [I64(0), I64(i)], inbounds=True, source_etype=WI_SLOTS_TYPE))
    lm = b.load(b.gep(ctx, [I64(abi.CTX_LOCAL_MEM)], inbounds=True, source_etype=I64), typ=PTR, align=8)
    b.store(lm, b.gep(wi, [I32(0), I32(1)], inbounds=True, source_etype=WI_TYPE))
    return wi, slots


def group_result(mg, b, frame, k, wi):
    """What the work-group function returns (see declare); frame: the instrumentation's
    (Instrumentation.frame), or None."""
    return I32(0) if frame is None else mg.instr.group_result(b, frame, k, wi)


def argument(b, args_p, i, t):
    """Kernel argument i of type t read from its storage args[i] (structs: their address)."""
    slot = b.load(b.gep(args_p, [I64(i)], inbounds=True, source_etype=PTR), typ=PTR, align=8)
    if t.is_struct:
        return slot
    if t.is_pointer:
        return b.load(slot, typ=PTR, align=8)
    return b.load(slot, typ=t.llvm(), align=t.elem.size if t.is_vector else t.align)


def local_sizes(b, ctx, reqd):
    """(x, y, z) local sizes: constants under reqd_work_group_size, else read from the context,
    marked below 2^31 (a work-group is far smaller): LLVM then knows that a local id converted
    to `uint` and back (pyopencl's `unsigned pcl_lid`) is still the loop index, so accesses
    indexed by it stay contiguous (or versioned for a unit stride) instead of gathers."""
    if reqd:
        return tuple(I64(x) for x in reqd)
    bounded = _below_2_31(b.module)
    sizes = []
    for d in range(3):
        v = b.load(b.gep(ctx, [I64(abi.CTX_LOCAL_SIZE + d)], inbounds=True, source_etype=I64), typ=I64, align=8)
        v.set_metadata("range", bounded)
        sizes.append(v)
    return tuple(sizes)


def _below_2_31(module):
    return module.add_metadata([I64(0), I64(1 << 31)])


def skip_empty_group(b, fn, sizes):
    """Branch to a new exit block when a local size is 0, else continue in a new block; returns
    the exit block (the caller ends the function there)."""
    exit_bb = fn.append_basic_block("exit")
    start_bb = fn.append_basic_block("start")
    lx, ly, lz = sizes
    empty = b.or_(b.or_(b.icmp_unsigned("==", lz, I64(0)), b.icmp_unsigned("==", ly, I64(0))),
                  b.icmp_unsigned("==", lx, I64(0)))
    b.cbranch(empty, exit_bb, start_bb)
    b.position_at_end(start_bb)
    return exit_bb


def loop_nest(b, fn, slots, sizes, body_fn, prefix):
    """Loops z, y, x over the local ids (do-while form: the group is not empty), each id stored
    into the work-item state; body_fn(z, y, x) emits the body with the ids as values."""
    lx, ly, lz = sizes
    headers = []
    for d, lim in ((2, lz), (1, ly), (0, lx)):
        hdr = fn.append_basic_block("%sloop%d" % (prefix, d))
        prev = b.block
        b.branch(hdr)
        b.position_at_end(hdr)
        phi = b.phi(I64, name="lid%d" % d)
        phi.add_incoming(I64(0), prev)
        b.store(phi, b.gep(slots, [I64(0), I64(WI_LID + d)], inbounds=True, source_etype=WI_SLOTS_TYPE))
        headers.append((d, hdr, phi, lim))
    body_fn(*(h[2] for h in headers))
    for d, hdr, phi, lim in reversed(headers):     # close loops innermost first
        nxt = b.add(phi, I64(1))
        phi.add_incoming(nxt, b.block)
        after = fn.append_basic_block("%safter%d" % (prefix, d))
        b.cbranch(b.icmp_unsigned("<", nxt, lim), hdr, after)
        b.position_at_end(after)


def plain_workgroup_function(mg, k, name=None, body=None):
    """The work-group function of a kernel without barriers: one loop nest calling the kernel's
    (always-inline) LLVM function, which LLVM vectorises across work-items. Returns its name.
    (name, body: another function around another body: Instrumentation.plain_versions.)"""
    name = name or name_of(k)
    fn = declare(mg.module, name)
    args_p, ctx = fn.args
    b = Builder(fn.append_basic_block("entry"))
    reqd = required_size(k)
    wi, slots = work_item_state(b, b, ctx, reqd)
    frame = mg.instr.frame(k, b, b, wi, args_p)
    callargs = [wi] + [argument(b, args_p, i, p.type) for i, p in enumerate(k.params)]
    body = body or mg.fns[k]
    sizes = local_sizes(b, ctx, reqd)
    exit_bb = skip_empty_group(b, fn, sizes)
    loop_nest(b, fn, slots, sizes, lambda z, y, x: b.call(body, callargs), "")
    b.branch(exit_bb)
    b.position_at_end(exit_bb)
    b.ret(group_result(mg, b, frame, k, wi))
    return name
