"""The NVPTX kernel entry: one CUDA thread per work-item (docs/compiler.md, "NVPTX target").

Each kernel `k` becomes a PTX `.entry` named `k` (listed in `!nvvm.annotations`) whose parameters
are the kernel's arguments in order, then the launch record. The entry fills the work-item state
`wi` that every lowered function reads (the same slots as on the CPU, compiler/abi.py) from the
PTX special registers and the launch record, and calls the kernel's always-inline body; after
inlining, SROA turns every slot read into the register or parameter it came from.

Parameter forms (the launch ABI the CUDA device class is written against, abi.py):

* `__global` / `__constant` pointer: `.u64`, the device address;
* `__local` pointer: `.u64`, the byte offset of that argument's block in the launch's dynamic
  shared memory (abi.py's `shared_layout` computes offsets and the dynamic shared size);
* by-value argument (scalar, vector, struct): `byval`, `.param .align A .b8 name[size]` holding
  the argument's bytes as clSetKernelArg gave them (size = ArgInfo.size);
* last: the launch record, `.param .align 8 .b8 [56]`: seven little-endian uint64, `work_dim,
  global_size[3], global_offset[3]`.
"""
from llvmlite import ir

from ... import abi
from ...lowering.irbuild import Builder, I32, I64, PTR, VOIDT, WI_LID, WI_SLOTS_TYPE, WI_TYPE
from ...lowering.workgroup import required_size
from .abi import LAUNCH_FIELDS

SHARED = 3                      # the shared-memory address space
DYNAMIC_SHARED = "__pyplat_local_args"

_SREG = "llvm.nvvm.read.ptx.sreg.%s.%s"


class ByvalPointer(ir.PointerType):
    """An opaque `ptr` that knows the type its `byval` parameter copies (llvmlite prints the
    attribute as byval(<pointee>))."""

    def __init__(self, pointee):
        super().__init__()
        self.pointee = pointee


def param_types(k):
    """The LLVM types of the entry's parameters (kernel arguments, then the launch record)."""
    out = []
    for p, info in zip(k.params, k.param_info):
        t = p.type
        if t.is_pointer:
            out.append(I64 if info["addrspace"] == "local" else PTR)
        else:
            out.append(ByvalPointer(ir.ArrayType(ir.IntType(8), max(t.size, 1))))
    out.append(ByvalPointer(ir.ArrayType(I64, len(LAUNCH_FIELDS))))
    return out


def _sreg(mg, b, reg, d):
    fn = mg.intrinsic(_SREG % (reg, "xyz"[d]), I32, [])
    return b.zext(b.call(fn, []), I64)


def entry_function(mg, k, local_size):
    """Emit kernel k's PTX entry; local_size: bytes of its kernel-scope `__local` variables."""
    fn = ir.Function(mg.module, ir.FunctionType(VOIDT, param_types(k)), name=k.name)
    fn.attributes.add("nounwind")
    for a, p in zip(fn.args, list(k.params) + [None]):
        if isinstance(a.type, ByvalPointer):
            a.add_attribute("byval")
            a.attributes.align = max(8, p.type.align) if p is not None else 8
    b = Builder(fn.append_basic_block("entry"))
    launch = fn.args[-1]

    def word(i):          # uint64 i of the launch record
        return b.load(b.gep(launch, [I64(i)], inbounds=True, source_etype=I64), typ=I64, align=8)

    reqd = required_size(k)
    wi = b.alloca(WI_TYPE, name="wi")
    slots = b.gep(wi, [I32(0), I32(0)], inbounds=True, source_etype=WI_TYPE)

    def put(i, v):
        b.store(v, b.gep(slots, [I64(0), I64(i)], inbounds=True, source_etype=WI_SLOTS_TYPE))

    put(abi.CTX_WORK_DIM, word(0))
    exit_bb = fn.append_basic_block("exit")
    for d in range(3):
        lid, ntid = _sreg(mg, b, "tid", d), _sreg(mg, b, "ntid", d)
        group = _sreg(mg, b, "ctaid", d)
        size = I64(reqd[d]) if reqd else ntid
        gsize = word(1 + d)
        put(abi.CTX_GLOBAL_SIZE + d, gsize)
        put(abi.CTX_LOCAL_SIZE + d, size)
        put(abi.CTX_NUM_GROUPS + d, _sreg(mg, b, "nctaid", d))
        put(abi.CTX_GLOBAL_OFFSET + d, word(4 + d))
        put(abi.CTX_GROUP_ID + d, group)
        put(WI_LID + d, lid)
        # a grid rounded up past the global size: the extra threads leave at once (PTX `exit`
        # releases barriers waiting only for exited threads)
        inside = b.icmp_unsigned("<", b.add(b.mul(group, ntid), lid), gsize)
        go = fn.append_basic_block("dim%d" % d)
        b.cbranch(inside, go, exit_bb)
        b.position_at_end(go)
    static = (mg.shared_pointer(b, "__pyplat_local_" + k.name, local_size, k.local_vars) if local_size
              else ir.Constant(PTR, None))
    b.store(static, b.gep(wi, [I32(0), I32(1)], inbounds=True, source_etype=WI_TYPE))
    args = [wi]
    for i, (p, info) in enumerate(zip(k.params, k.param_info)):
        a, t = fn.args[i], p.type
        if t.is_pointer and info["addrspace"] == "local":
            args.append(b.gep(mg.shared_pointer(b, DYNAMIC_SHARED, None), [a], source_etype=ir.IntType(8)))
        elif t.is_pointer or t.is_struct:
            args.append(a)
        else:
            args.append(b.load(a, typ=t.llvm(), align=t.elem.size if t.is_vector else max(t.align, 1)))
    b.call(mg.fns[k], args)
    b.branch(exit_bb)
    b.position_at_end(exit_bb)
    b.ret_void()
    mg.annotate_kernel(fn, reqd)
    return fn.name
