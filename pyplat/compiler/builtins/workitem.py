"""Work-item functions (OpenCL C spec, "Work-Item Functions"): read the work-item state `wi`
(the work-group context's fields, then the local ids; see helpers.WI_LOCAL_ID)."""
from llvmlite import ir

from .. import abi
from .helpers import I32, I64, WI_LOCAL_ID, const_value
from .registry import builtin

# slot of dimension 0 in wi, value for a dimension >= get_work_dim()
DIM_QUERIES = {
    "get_global_size": (abi.CTX_GLOBAL_SIZE, 1), "get_local_size": (abi.CTX_LOCAL_SIZE, 1),
    "get_enqueued_local_size": (abi.CTX_LOCAL_SIZE, 1), "get_num_groups": (abi.CTX_NUM_GROUPS, 1),
    "get_global_offset": (abi.CTX_GLOBAL_OFFSET, 0), "get_group_id": (abi.CTX_GROUP_ID, 0),
    "get_local_id": (WI_LOCAL_ID, 0),
}


@builtin(*DIM_QUERIES)
def dim_query(g, n, name):
    slot0, default = DIM_QUERIES[name]
    k = n.kids[0]
    cv = const_value(k)
    b = g.b
    rt = n.type
    dflt = ir.Constant(I64, default)
    wd = g.wi_slot(abi.CTX_WORK_DIM)
    if cv is not None:
        d = cv
        if d < 0 or d > 2:
            v = dflt
        else:
            v = g.wi_slot(slot0 + d)
            if d > 0:
                v = b.select(b.icmp_unsigned(">", wd, I64(d)), v, dflt)
    else:
        d = g.to_i64(g.rv(k), k.type)
        v = dflt
        for i in (2, 1, 0):
            v = b.select(b.icmp_unsigned("==", d, I64(i)), g.wi_slot(slot0 + i), v)
        v = b.select(b.icmp_unsigned("<", d, wd), v, dflt)
    return v if rt.bits == 64 else b.trunc(v, rt.llvm())


def _global_id(g, d):
    """group_id * local_size + local_id + global_offset in dimension d (a Python int)."""
    b = g.b
    return b.add(b.add(b.mul(g.wi_slot(abi.CTX_GROUP_ID + d), g.wi_slot(abi.CTX_LOCAL_SIZE + d)),
                       g.wi_slot(WI_LOCAL_ID + d)), g.wi_slot(abi.CTX_GLOBAL_OFFSET + d))


@builtin("get_global_id")
def global_id(g, n, name):
    k = n.kids[0]
    b = g.b
    cv = const_value(k)
    if cv is not None:
        d = cv
        if d < 0 or d > 2:
            return ir.Constant(n.type.llvm(), 0)
        v = _global_id(g, d)
        if d > 0:
            v = b.select(b.icmp_unsigned(">", g.wi_slot(abi.CTX_WORK_DIM), I64(d)), v, I64(0))
        return v
    d = g.to_i64(g.rv(k), k.type)
    v = I64(0)
    for i in (2, 1, 0):
        gi = _global_id(g, i)
        v = b.select(b.icmp_unsigned("==", d, I64(i)), gi, v)
    return b.select(b.icmp_unsigned("<", d, g.wi_slot(abi.CTX_WORK_DIM)), v, I64(0))


@builtin("get_work_dim")
def work_dim(g, n, name):
    return g.b.trunc(g.wi_slot(abi.CTX_WORK_DIM), I32)


@builtin("get_global_linear_id", "get_local_linear_id")
def linear_id(g, n, name):
    """OpenCL C 2.0's linear ids: (id2 * size1 + id1) * size0 + id0, with the global ids taken
    relative to the global offset (group_id * local_size + local_id) and the local ids within
    the work-group; a dimension >= get_work_dim() has id 0 and size 1."""
    b = g.b
    wd = g.wi_slot(abi.CTX_WORK_DIM)
    v = I64(0)
    for d in (2, 1, 0):
        if name == "get_global_linear_id":
            i = b.add(b.mul(g.wi_slot(abi.CTX_GROUP_ID + d), g.wi_slot(abi.CTX_LOCAL_SIZE + d)),
                      g.wi_slot(WI_LOCAL_ID + d))
            size = g.wi_slot(abi.CTX_GLOBAL_SIZE + d)
        else:
            i, size = g.wi_slot(WI_LOCAL_ID + d), g.wi_slot(abi.CTX_LOCAL_SIZE + d)
        if d > 0:
            present = b.icmp_unsigned(">", wd, I64(d))
            i, size = b.select(present, i, I64(0)), b.select(present, size, I64(1))
        v = b.add(b.mul(v, size), i)
    return v if n.type.bits == 64 else b.trunc(v, n.type.llvm())
