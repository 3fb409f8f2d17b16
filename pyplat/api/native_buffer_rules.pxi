# Part of pyplat/api/_native.pyx (included there, before native_commands.pxi).
# ---------------------------------------------------------------------------------------------
# The rules of the buffer commands' arguments, written once: the native entries
# (native_commands.pxi, native_maps.pxi) refuse with them (native_refusals.pxi), and the Python
# entries (api/enqueue.py) raise the same refusals through the def faces at the end. Each rule
# is the spec's sentence above it; a rule returns 1, or 0 with why filled.
# ---------------------------------------------------------------------------------------------

DEF MAP_WRITES = CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION


cdef int region_valid(uint64_t buffer_size, uint64_t offset, uint64_t size, refusal_t *why) noexcept nogil:
    """Spec: CL_INVALID_VALUE if the region being read or written specified by (offset, size)
    is out of bounds or if size is 0."""
    if size == 0 or size > buffer_size or offset > buffer_size - size:
        return refuse3(why, CL_INVALID_VALUE, "region offset {a} + size {b} is empty or beyond the buffer's {c} bytes",
                       offset, size, buffer_size)
    return 1


cdef int pointer_given(size_t ptr, refusal_t *why) noexcept nogil:
    """Spec (clEnqueueReadBuffer, clEnqueueWriteBuffer): CL_INVALID_VALUE if ptr is NULL."""
    if ptr == 0:
        return refuse(why, CL_INVALID_VALUE, "ptr is NULL", 0, 0)
    return 1


cdef int host_may(uint64_t flags, bint writes, refusal_t *why) noexcept nogil:
    """Spec: CL_INVALID_OPERATION if clEnqueueReadBuffer is called on a buffer created with
    CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS, clEnqueueWriteBuffer on one created with
    CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS (maps: as the access they ask for)."""
    if flags & (CL_MEM_HOST_NO_ACCESS | (CL_MEM_HOST_READ_ONLY if writes else CL_MEM_HOST_WRITE_ONLY)):
        return refuse(why, CL_INVALID_OPERATION,
                      "the buffer's flags forbid host writes" if writes else "the buffer's flags forbid host reads", 0, 0)
    return 1


cdef int copy_apart(uint64_t source, uint64_t destination, uint64_t size, refusal_t *why) noexcept nogil:
    """Spec (clEnqueueCopyBuffer): CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same
    buffer or sub-buffer object and the source and destination regions overlap, or if they are
    different sub-buffers of the same associated buffer object and they overlap (source and
    destination: the regions' addresses, which share one allocation exactly then)."""
    if source < destination + size and destination < source + size:
        return refuse(why, CL_MEM_COPY_OVERLAP, "source and destination regions overlap", 0, 0)
    return 1


cdef int fill_pattern_valid(size_t pattern, uint64_t pattern_size, uint64_t offset, uint64_t size,
                            refusal_t *why) noexcept nogil:
    """Spec (clEnqueueFillBuffer): CL_INVALID_VALUE if pattern is NULL or pattern_size is 0 or
    not one of {1, 2, 4, 8, 16, 32, 64, 128}, or if offset and size are not a multiple of
    pattern_size."""
    if pattern == 0 or pattern_size == 0:
        return refuse(why, CL_INVALID_VALUE, "pattern is NULL or pattern_size is 0", 0, 0)
    if pattern_size > 128 or pattern_size & (pattern_size - 1):
        return refuse(why, CL_INVALID_VALUE, "pattern_size {a} is not 1, 2, 4, 8, 16, 32, 64 or 128",
                      pattern_size, 0)
    if offset % pattern_size or size % pattern_size:
        return refuse3(why, CL_INVALID_VALUE, "offset {a} and size {b} must be multiples of pattern_size {c}",
                       offset, size, pattern_size)
    return 1


cdef int map_valid(uint64_t map_flags, uint64_t buffer_flags, refusal_t *why) noexcept nogil:
    """Spec (clEnqueueMapBuffer): CL_INVALID_VALUE if values specified in map_flags are not
    valid (unknown bits; CL_MAP_WRITE_INVALIDATE_REGION "is mutually exclusive with CL_MAP_READ
    or CL_MAP_WRITE"); CL_INVALID_OPERATION if the buffer's host-access flags forbid the access
    the map asks for (as host_may)."""
    if map_flags & ~(<uint64_t>(CL_MAP_READ | MAP_WRITES)):
        return refuse(why, CL_INVALID_VALUE, "unknown map flags {a:#x}", map_flags & ~(<uint64_t>(CL_MAP_READ | MAP_WRITES)), 0)
    if map_flags & CL_MAP_WRITE_INVALIDATE_REGION and map_flags & (CL_MAP_READ | CL_MAP_WRITE):
        return refuse(why, CL_INVALID_VALUE, "CL_MAP_WRITE_INVALIDATE_REGION excludes READ and WRITE", 0, 0)
    return ((not map_flags & CL_MAP_READ or host_may(buffer_flags, False, why))
            and (not map_flags & MAP_WRITES or host_may(buffer_flags, True, why)))


# The faces for the Python entries: None, or the refusal (code, reason) they raise.

def transfer_refusal(uint64_t buffer_size, uint64_t offset, uint64_t size, size_t ptr, uint64_t flags, bint writes):
    """clEnqueueReadBuffer / clEnqueueWriteBuffer (writes: into the buffer)."""
    cdef refusal_t why
    return refusal_of(region_valid(buffer_size, offset, size, &why) and pointer_given(ptr, &why)
                      and host_may(flags, writes, &why), &why)


def copy_refusal(uint64_t source_size, uint64_t source_offset, uint64_t destination_size,
                 uint64_t destination_offset, uint64_t size, uint64_t source, uint64_t destination):
    """clEnqueueCopyBuffer (source, destination: the buffers' addresses)."""
    cdef refusal_t why
    return refusal_of(region_valid(source_size, source_offset, size, &why)
                      and region_valid(destination_size, destination_offset, size, &why)
                      and copy_apart(source + source_offset, destination + destination_offset, size, &why), &why)


def fill_refusal(size_t pattern, uint64_t pattern_size, uint64_t buffer_size, uint64_t offset, uint64_t size):
    """clEnqueueFillBuffer."""
    cdef refusal_t why
    return refusal_of(fill_pattern_valid(pattern, pattern_size, offset, size, &why)
                      and region_valid(buffer_size, offset, size, &why), &why)


def map_refusal(uint64_t buffer_size, uint64_t offset, uint64_t size, uint64_t map_flags, uint64_t buffer_flags):
    """clEnqueueMapBuffer."""
    cdef refusal_t why
    return refusal_of(region_valid(buffer_size, offset, size, &why) and map_valid(map_flags, buffer_flags, &why),
                      &why)


def pattern_refusal(size_t pattern, uint64_t pattern_size, uint64_t offset, uint64_t size):
    """A fill's pattern alone (clEnqueueSVMMemFill: no buffer)."""
    cdef refusal_t why
    return refusal_of(fill_pattern_valid(pattern, pattern_size, offset, size, &why), &why)


def map_flags_refusal(uint64_t map_flags):
    """A map's flags alone (clEnqueueSVMMap: no buffer flags)."""
    cdef refusal_t why
    return refusal_of(map_valid(map_flags, 0, &why), &why)


def host_access_refusal(uint64_t buffer_flags, bint writes):
    """The host's access alone (rectangular reads and writes)."""
    cdef refusal_t why
    return refusal_of(host_may(buffer_flags, writes, &why), &why)
