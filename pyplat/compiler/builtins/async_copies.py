"""Async copies and prefetch (OpenCL C spec, "Async Copies from Global to Local Memory, Local to
Global Memory, and Prefetch"). wait_group_events is a barrier (front end, barriers.py): each
work-item copies its share of the elements, so all of them are there after the wait."""
from llvmlite import ir

from .. import abi
from .. import types as T
from .helpers import I1, I8, I64, WI_LOCAL_ID
from .registry import builtin


@builtin("async_work_group_copy", "async_work_group_strided_copy")
def async_copy(g, n, name):
    b = g.b
    kids = n.kids
    dst, src = g.rv(kids[0]), g.rv(kids[1])
    num = g.to_i64(g.rv(kids[2]), kids[2].type)
    et = kids[0].type.pointee
    size = et.size
    strided = name.endswith("strided_copy")
    stride = g.to_i64(g.rv(kids[3]), kids[3].type) if strided else None
    ls = [g.wi_slot(abi.CTX_LOCAL_SIZE + d) for d in range(3)]
    lid = [g.wi_slot(WI_LOCAL_ID + d) for d in range(3)]
    nwi = b.mul(b.mul(ls[0], ls[1]), ls[2])
    lin = b.add(b.mul(b.add(b.mul(lid[2], ls[1]), lid[1]), ls[0]), lid[0])
    chunk = b.udiv(b.add(num, b.sub(nwi, I64(1))), nwi)
    start = b.mul(lin, chunk)
    end = b.add(start, chunk)
    end = b.select(b.icmp_unsigned("<", end, num), end, num)
    fn = g.fn
    if not strided:
        go = fn.append_basic_block("acopy.go")
        done = fn.append_basic_block("acopy.done")
        b.cbranch(b.icmp_unsigned("<", start, end), go, done)
        b.position_at_end(go)
        d = b.gep(dst, [b.mul(start, I64(size))], source_etype=I8)
        s = b.gep(src, [b.mul(start, I64(size))], source_etype=I8)
        f = g.mg.intrinsic("llvm.memmove.p0.p0.i64", ir.VoidType(), [T.PTR_LL, T.PTR_LL, I64, I1])
        nbytes = b.mul(b.sub(end, start), I64(size))
        b.call(f, [d, s, nbytes, I1(0)])
        g.mark_local_written(kids[0], d, nbytes)       # (PYPLAT_CHECK=uninit)
        b.branch(done)
        b.position_at_end(done)
        return ir.Constant(I64, 1)
    # strided: global side is strided (src for global->local, dst for local->global)
    src_strided = kids[1].type.addrspace == "global"
    pre = b.block
    hdr = fn.append_basic_block("acopy.hdr")
    body = fn.append_basic_block("acopy.body")
    done = fn.append_basic_block("acopy.done")
    b.branch(hdr)
    b.position_at_end(hdr)
    i = b.phi(I64)
    i.add_incoming(start, pre)
    b.cbranch(b.icmp_unsigned("<", i, end), body, done)
    b.position_at_end(body)
    si = b.mul(i, stride) if src_strided else i
    di = i if src_strided else b.mul(i, stride)
    ll = et.llvm()
    align = max(1, et.elem.size if et.is_vector else et.align)
    v = b.load(b.gep(src, [si], source_etype=ll), typ=ll, align=align)
    dp = b.gep(dst, [di], source_etype=ll)
    b.store(v, dp, align=align)
    g.mark_local_written(kids[0], dp, I64(size))      # (PYPLAT_CHECK=uninit)
    i.add_incoming(b.add(i, I64(1)), body)
    b.branch(hdr)
    b.position_at_end(done)
    return ir.Constant(I64, 1)


@builtin("prefetch")
def prefetch(g, n, name):
    return None
