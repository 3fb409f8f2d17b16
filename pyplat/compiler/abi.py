"""The work-group ABI: the one definition the code generator and the runtime's launcher share.

Each kernel compiles to a native *work-group function*::

    void f(void **args, const WorkGroupContext *ctx)

that runs all work-items of work-group ``ctx->group_id`` (loops z, y, x over
the local ids).  ``args[i]`` points to the storage of argument ``i``:

* ``__global``/``__constant`` pointer: the storage holds the 8-byte data pointer;
* ``__local`` pointer: the storage holds the pointer to local scratch the
  launcher allocated;
* by-value (scalar, vector with OpenCL size/alignment, struct): the value bytes.

``WorkGroupContext`` is a run of ``uint64_t`` fields (``CONTEXT_FIELDS``) followed by the
local-memory pointer.  The code generator reads the ``uint64_t`` part as an array of i64 slots
(``CTX_*`` are slot indices); the runtime declares the same struct in C
(``pyplat/runtime``, checked against this file by ``tests/runtime/test_abi_mirror.py``).
"""
import ctypes

# (field name, number of uint64_t elements), in memory order
CONTEXT_FIELDS = (
    ("work_dim", 1),
    ("global_size", 3),
    ("local_size", 3),
    ("num_groups", 3),
    ("global_offset", 3),
    ("group_id", 3),
)
LOCAL_MEM_FIELD = "local_mem"       # void *, after the uint64_t fields


def _first_slots():
    slots, i = {}, 0
    for name, count in CONTEXT_FIELDS:
        slots[name] = i
        i += count
    return slots, i


_SLOT, CTX_I64_SLOTS = _first_slots()      # CTX_I64_SLOTS: how many i64 slots precede local_mem

# Slot indices of the i64 fields (dimension d of a 3-element field is slot + d).
CTX_WORK_DIM = _SLOT["work_dim"]
CTX_GLOBAL_SIZE = _SLOT["global_size"]
CTX_LOCAL_SIZE = _SLOT["local_size"]
CTX_NUM_GROUPS = _SLOT["num_groups"]
CTX_GLOBAL_OFFSET = _SLOT["global_offset"]
CTX_GROUP_ID = _SLOT["group_id"]
CTX_LOCAL_MEM = CTX_I64_SLOTS               # the pointer slot

# The work-item state every compiled function receives as its hidden first parameter (`wi`, in
# compiled code only; the runtime never sees it): the context's i64 slots copied at the same
# indices (so CTX_* index it too), then the local ids x, y, z; and the local-memory pointer.
WI_LOCAL_ID = CTX_I64_SLOTS
WI_SLOTS = WI_LOCAL_ID + 3


class WorkGroupContext(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64 if count == 1 else ctypes.c_uint64 * count)
                for name, count in CONTEXT_FIELDS] + [(LOCAL_MEM_FIELD, ctypes.c_void_p)]


# int f(void **args, const WorkGroupContext *ctx): 0, or 1 when a compiled check (PYPLAT_CHECK)
# found a bad access in the group
WORK_GROUP_FUNCTION = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.POINTER(WorkGroupContext))
