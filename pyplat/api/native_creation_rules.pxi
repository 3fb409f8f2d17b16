# Part of pyplat/api/_native.pyx (included there, before native_buffers.pxi).
# ---------------------------------------------------------------------------------------------
# The rules of clCreateBuffer's and clCreateSubBuffer's requests, written once: the native
# entries (native_buffers.pxi) refuse with them, and the Python entries (api/memory.py:
# clCreateBuffer(WithProperties), clCreateSubBuffer, clGetSupportedImageFormats' flags) raise
# the same refusals through the def faces at the end. Each rule is the spec's sentence above it
# and checks in the Python entry's order; a rule returns 1, or 0 with why filled.
# ---------------------------------------------------------------------------------------------

DEF MEM_ACCESS_BITS = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY
DEF MEM_HOST_ACCESS_BITS = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS
DEF MEM_HOST_PTR_BITS = CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR
DEF MEM_KNOWN_BITS = MEM_ACCESS_BITS | MEM_HOST_ACCESS_BITS | MEM_HOST_PTR_BITS | CL_MEM_KERNEL_READ_AND_WRITE
DEF MEM_READS = CL_MEM_READ_WRITE | CL_MEM_READ_ONLY            # (a sub-buffer's flags against its
DEF MEM_WRITES = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY          # parent's)
DEF HOST_READS_OR_WRITES = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY
DEF BASE_ALIGN = 128                 # devices/spaces.py's ALIGNMENT (tests/api/native/test_native_buffers.py)


cdef inline int one_bit_at_most(uint64_t bits) noexcept nogil:
    return bits & (bits - 1) == 0


cdef int mem_flags_valid(uint64_t flags, refusal_t *why) noexcept nogil:
    """Spec (clCreateBuffer; clGetSupportedImageFormats): CL_INVALID_VALUE if values specified in
    flags are not valid as defined in the Memory Flags table: unknown bits; CL_MEM_READ_WRITE,
    CL_MEM_WRITE_ONLY and CL_MEM_READ_ONLY "are mutually exclusive", as are CL_MEM_HOST_WRITE_ONLY,
    CL_MEM_HOST_READ_ONLY and CL_MEM_HOST_NO_ACCESS; CL_MEM_USE_HOST_PTR with
    CL_MEM_ALLOC_HOST_PTR or CL_MEM_COPY_HOST_PTR: "mutually exclusive"."""
    if flags & ~(<uint64_t>MEM_KNOWN_BITS):
        return refuse(why, CL_INVALID_VALUE, "unknown memory flags {a:#x}", flags & ~(<uint64_t>MEM_KNOWN_BITS), 0)
    if not one_bit_at_most(flags & MEM_ACCESS_BITS):
        return refuse(why, CL_INVALID_VALUE, "more than one of READ_WRITE/READ_ONLY/WRITE_ONLY", 0, 0)
    if not one_bit_at_most(flags & MEM_HOST_ACCESS_BITS):
        return refuse(why, CL_INVALID_VALUE, "more than one CL_MEM_HOST_* access flag", 0, 0)
    if flags & CL_MEM_USE_HOST_PTR and flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR):
        return refuse(why, CL_INVALID_VALUE, "CL_MEM_USE_HOST_PTR excludes ALLOC_HOST_PTR and COPY_HOST_PTR", 0, 0)
    return 1


cdef int buffer_size_valid(uint64_t size, uint64_t max_alloc, refusal_t *why) noexcept nogil:
    """Spec (clCreateBuffer): CL_INVALID_BUFFER_SIZE if size is 0, or if size is greater than
    CL_DEVICE_MAX_MEM_ALLOC_SIZE (max_alloc: the least of the context's devices')."""
    if size == 0 or size > max_alloc:
        return refuse(why, CL_INVALID_BUFFER_SIZE, "size {a} is 0 or above {b}", size, max_alloc)
    return 1


cdef int host_ptr_valid(uint64_t flags, size_t host_ptr, refusal_t *why) noexcept nogil:
    """Spec (clCreateBuffer): CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or
    CL_MEM_COPY_HOST_PTR are set in flags or if host_ptr is not NULL but CL_MEM_COPY_HOST_PTR or
    CL_MEM_USE_HOST_PTR are not set in flags."""
    if ((flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)) != 0) != (host_ptr != 0):
        return refuse(why, CL_INVALID_HOST_PTR,
                      "host_ptr must be given exactly when USE_HOST_PTR or COPY_HOST_PTR is set", 0, 0)
    return 1


cdef int buffer_request_valid(uint64_t flags, uint64_t size, uint64_t max_alloc, size_t host_ptr,
                              refusal_t *why) noexcept nogil:
    """clCreateBuffer's request, its context being valid: flags, size, host_ptr."""
    return (mem_flags_valid(flags, why) and buffer_size_valid(size, max_alloc, why)
            and host_ptr_valid(flags, host_ptr, why))


cdef int sub_parent_valid(int parent_is_sub, refusal_t *why) noexcept nogil:
    """Spec (clCreateSubBuffer): CL_INVALID_MEM_OBJECT if buffer is not a buffer object or is a
    sub-buffer object (not a buffer at all: handle_valid)."""
    if parent_is_sub:
        return refuse(why, CL_INVALID_MEM_OBJECT, "buffer is itself a sub-buffer", 0, 0)
    return 1


cdef int sub_flags_valid(uint64_t flags, uint64_t parent_flags, refusal_t *why) noexcept nogil:
    """Spec (clCreateSubBuffer): CL_INVALID_VALUE if values specified in flags are not valid (as
    mem_flags_valid's, and "CL_MEM_USE_HOST_PTR, CL_MEM_ALLOC_HOST_PTR and CL_MEM_COPY_HOST_PTR
    ... are inherited" and "cannot be specified"); if buffer was created with CL_MEM_WRITE_ONLY
    and flags specifies CL_MEM_READ_WRITE or CL_MEM_READ_ONLY, or with CL_MEM_READ_ONLY and flags
    specifies CL_MEM_READ_WRITE or CL_MEM_WRITE_ONLY; if buffer was created with
    CL_MEM_HOST_WRITE_ONLY and flags specify CL_MEM_HOST_READ_ONLY, or with CL_MEM_HOST_READ_ONLY
    and flags specify CL_MEM_HOST_WRITE_ONLY, or with CL_MEM_HOST_NO_ACCESS and flags specify
    CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_WRITE_ONLY."""
    if flags & ~(<uint64_t>MEM_KNOWN_BITS):
        return refuse(why, CL_INVALID_VALUE, "unknown memory flags {a:#x}", flags & ~(<uint64_t>MEM_KNOWN_BITS), 0)
    if flags & MEM_HOST_PTR_BITS:
        return refuse(why, CL_INVALID_VALUE, "host pointer flags are inherited, not given", 0, 0)
    if not mem_flags_valid(flags, why):
        return 0
    if flags & MEM_READS and parent_flags & CL_MEM_WRITE_ONLY:
        return refuse(why, CL_INVALID_VALUE, "parent is write-only", 0, 0)
    if flags & MEM_WRITES and parent_flags & CL_MEM_READ_ONLY:
        return refuse(why, CL_INVALID_VALUE, "parent is read-only", 0, 0)
    if flags & CL_MEM_HOST_WRITE_ONLY and parent_flags & CL_MEM_HOST_READ_ONLY:
        return refuse(why, CL_INVALID_VALUE, "parent is host-read-only", 0, 0)
    if flags & CL_MEM_HOST_READ_ONLY and parent_flags & CL_MEM_HOST_WRITE_ONLY:
        return refuse(why, CL_INVALID_VALUE, "parent is host-write-only", 0, 0)
    if flags & HOST_READS_OR_WRITES and parent_flags & CL_MEM_HOST_NO_ACCESS:
        return refuse(why, CL_INVALID_VALUE, "parent has no host access", 0, 0)
    return 1


cdef int sub_region_valid(uint32_t create_type, size_t info, uint64_t parent_size, refusal_t *why) noexcept nogil:
    """Spec (clCreateSubBuffer): CL_INVALID_VALUE if the value specified in buffer_create_type
    is not valid, or if buffer_create_info is NULL; CL_INVALID_BUFFER_SIZE if the size field of
    the cl_buffer_region is 0; CL_INVALID_VALUE if the region is out of bounds in buffer;
    CL_MISALIGNED_SUB_BUFFER_OFFSET if there are no devices in context associated with buffer
    for which the origin is aligned to the CL_DEVICE_MEM_BASE_ADDR_ALIGN value (every device's
    here: BASE_ALIGN bytes)."""
    cdef uint64_t origin, size
    if create_type != CL_BUFFER_CREATE_TYPE_REGION:
        return refuse(why, CL_INVALID_VALUE, "buffer_create_type must be CL_BUFFER_CREATE_TYPE_REGION", 0, 0)
    if info == 0:
        return refuse(why, CL_INVALID_VALUE, "buffer_create_info is NULL", 0, 0)
    origin, size = (<size_t *>info)[0], (<size_t *>info)[1]
    if size == 0:
        return refuse(why, CL_INVALID_BUFFER_SIZE, "region size is 0", 0, 0)
    if size > parent_size or origin > parent_size - size:
        return refuse3(why, CL_INVALID_VALUE, "region origin {a} + size {b} is outside the buffer's {c} bytes",
                       origin, size, parent_size)
    if origin % BASE_ALIGN:
        return refuse(why, CL_MISALIGNED_SUB_BUFFER_OFFSET,
                      "origin {a} is not a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN ({b} bytes)", origin, BASE_ALIGN)
    return 1


cdef int sub_request_valid(int parent_is_sub, uint64_t parent_flags, uint64_t parent_size, uint64_t flags,
                           uint32_t create_type, size_t info, refusal_t *why) noexcept nogil:
    """clCreateSubBuffer's request, its buffer being valid: the parent, flags, region."""
    return (sub_parent_valid(parent_is_sub, why) and sub_flags_valid(flags, parent_flags, why)
            and sub_region_valid(create_type, info, parent_size, why))


cdef inline uint64_t sub_flags(uint64_t flags, uint64_t parent_flags) noexcept nogil:
    """A sub-buffer's flags: those given, and its parent's host-pointer flags, access flags
    unless some are given, host-access flags unless some are given (inherited)."""
    return flags | (parent_flags & (MEM_HOST_PTR_BITS | (0 if flags & MEM_ACCESS_BITS else MEM_ACCESS_BITS)
                                    | (0 if flags & MEM_HOST_ACCESS_BITS else MEM_HOST_ACCESS_BITS)))


# The faces for the Python entries: None, or the refusal (code, reason) they raise.

def mem_flags_refusal(uint64_t flags):
    cdef refusal_t why
    return refusal_of(mem_flags_valid(flags, &why), &why)


def host_ptr_refusal(uint64_t flags, size_t host_ptr):
    """(images: clCreateImage's host_ptr rule is clCreateBuffer's)"""
    cdef refusal_t why
    return refusal_of(host_ptr_valid(flags, host_ptr, &why), &why)


def buffer_refusal(uint64_t flags, uint64_t size, uint64_t max_alloc, size_t host_ptr):
    """clCreateBuffer(WithProperties), its context and properties valid."""
    cdef refusal_t why
    return refusal_of(buffer_request_valid(flags, size, max_alloc, host_ptr, &why), &why)


def sub_buffer_refusal(bint parent_is_sub, uint64_t parent_flags, uint64_t parent_size, uint64_t flags,
                       uint32_t create_type, size_t info):
    """clCreateSubBuffer, its buffer valid (info: the cl_buffer_region's address)."""
    cdef refusal_t why
    return refusal_of(sub_request_valid(parent_is_sub, parent_flags, parent_size, flags, create_type, info, &why),
                      &why)


def sub_buffer_flags(uint64_t flags, uint64_t parent_flags):
    return sub_flags(flags, parent_flags)
