"""What NVPTX code and the CUDA device class agree on (docs/compiler.md, "NVPTX target"): how a
kernel is launched and where its printf records are. The lowering writes code to this contract
(the kernel entry, printf's records); devices/cuda reads and fills it. Plain Python: nothing
here needs LLVM or a GPU.

Launch. A kernel's PTX `.entry` takes the kernel's arguments in order (buffers as device
addresses, `__local` pointers as byte offsets into the launch's dynamic shared memory, values
as their bytes), then the launch record: seven little-endian uint64, LAUNCH_FIELDS. One thread
block runs one work-group.

printf. A module whose kernels print defines PRINTF_SYMBOL in global memory:
PRINTF_BUFFER_BYTES bytes, 8-aligned, zero-initialised. Its first PRINTF_HEADER_BYTES hold the
cursor (CURSOR_FORMAT): the bytes of records claimed so far, counted from PRINTF_HEADER_BYTES.
Records follow, each 8-aligned: RECORD_HEADER_FORMAT (format id, record size in bytes, header
included), then VALUE_BYTES per value, read as VALUE_FORMATS[kind] from the value's first bytes:
'i' int32 (stored zero-extended), 'l' int64, 'd' double, 'p' pointer (its 64-bit address). The
cursor keeps counting past the buffer's end: records that did not fit are dropped, and the host
can tell.
"""
import struct

# ----------------------------------------------------------------------------- launch
LAUNCH_FIELDS = ("work_dim", "global_size_x", "global_size_y", "global_size_z",
                 "global_offset_x", "global_offset_y", "global_offset_z")
LAUNCH_RECORD_SIZE = 8 * len(LAUNCH_FIELDS)
LOCAL_ARG_ALIGN = 128           # the largest alignment of an OpenCL C type (long16, double16)


def shared_layout(local_arg_sizes):
    """(offsets, dynamic shared bytes) of the `__local` pointer arguments, in argument order,
    each block starting at a multiple of LOCAL_ARG_ALIGN."""
    offsets, end = [], 0
    for size in local_arg_sizes:
        end = (end + LOCAL_ARG_ALIGN - 1) // LOCAL_ARG_ALIGN * LOCAL_ARG_ALIGN
        offsets.append(end)
        end += int(size)
    return offsets, end


def launch_record(work_dim, global_size, global_offset=None):
    """The launch record's 56 bytes for an NDRange of work_dim dimensions (sizes and offsets
    given for those dimensions; the others are 1 and 0)."""
    sizes = list(global_size)[:work_dim] + [1] * (3 - work_dim)
    offsets = list(global_offset or [])[:work_dim]
    offsets += [0] * (3 - len(offsets))
    return struct.pack("<7Q", work_dim, *sizes, *offsets)


def launch_dimensions(work_dim, global_size, local_size):
    """(gridDim, blockDim) as 3-tuples for cuLaunchKernel: one block per work-group."""
    block = list(local_size)[:work_dim] + [1] * (3 - work_dim)
    grid = [g // l for g, l in zip(list(global_size)[:work_dim], block)] + [1] * (3 - work_dim)
    return tuple(grid), tuple(block)


# ----------------------------------------------------------------------------- printf records
PRINTF_SYMBOL = "__pyplat_printf_buffer"
PRINTF_HEADER_BYTES = 8          # the cursor (and padding to the records' alignment)
# records get 1 MiB, the spec's minimum CL_DEVICE_PRINTF_BUFFER_SIZE (full profile)
PRINTF_BUFFER_BYTES = (1 << 20) + PRINTF_HEADER_BYTES
CURSOR_FORMAT = "<Q"
RECORD_HEADER_FORMAT = "<II"     # format id, record size
RECORD_HEADER_BYTES = struct.calcsize(RECORD_HEADER_FORMAT)
VALUE_BYTES = 8
VALUE_FORMATS = {"i": "<i", "l": "<q", "d": "<d", "p": "<Q"}
