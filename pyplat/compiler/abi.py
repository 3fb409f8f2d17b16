"""The ABI between compiled kernels and the runtime's launcher.

Each kernel compiles to a native *work-group function*::

    void f(void **args, const WorkGroupContext *ctx)

that runs all work-items of work-group ``ctx->group_id`` (loops z, y, x over
the local ids).  ``args[i]`` points to the storage of argument ``i``:

* ``__global``/``__constant`` pointer: the storage holds the 8-byte data pointer;
* ``__local`` pointer: the storage holds the pointer to local scratch the
  launcher allocated;
* by-value (scalar, vector with OpenCL size/alignment, struct): the value bytes.

Do not change this layout: the launcher depends on it exactly.
"""
import ctypes

U64x3 = ctypes.c_uint64 * 3


class WorkGroupContext(ctypes.Structure):
    _fields_ = [
        ("work_dim", ctypes.c_uint64),
        ("global_size", U64x3),
        ("local_size", U64x3),
        ("num_groups", U64x3),
        ("global_offset", U64x3),
        ("group_id", U64x3),
        ("local_mem", ctypes.c_void_p),
    ]


# Slot indices of the i64 fields (the codegen reads ctx as an array of i64).
CTX_WORK_DIM = 0
CTX_GLOBAL_SIZE = 1
CTX_LOCAL_SIZE = 4
CTX_NUM_GROUPS = 7
CTX_GLOBAL_OFFSET = 10
CTX_GROUP_ID = 13
CTX_LOCAL_MEM = 16          # pointer slot

WORK_GROUP_FUNCTION = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.POINTER(WorkGroupContext))
