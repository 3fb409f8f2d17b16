# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Host memory for buffers: zeroed, with huge pages asked for where large. Both the buffers the
# Python path makes (HostMemory, devices/spaces.py) and those the API layer makes natively
# (host_calloc, api/native_buffers.pxi) come from here. Not numpy: a C host program would
# otherwise import numpy, ~90 ms at start and a BLAS thread per core spinning a while.
# ---------------------------------------------------------------------------------------------

cdef size_t HUGE_PAGE = 2 * 1024 * 1024


cdef char *host_calloc(size_t size) noexcept nogil:
    """calloc(1, size), with transparent huge pages asked for over the whole 2 MiB pages inside
    it (the system's policy is often `madvise`). A kernel that walks a buffer with a large
    stride (pyopencl's grid-stride elementwise loops: 32 KiB a step) otherwise misses the TLB on
    every access: pyopencl's a + b over 2^24 floats, one worker, 71 -> 36 ms. The pages are not
    touched, so calloc's lazily zeroed ones stay lazy; the advice is only advice."""
    cdef char *raw = <char *>calloc(1, size)
    cdef size_t start, end
    if raw != NULL:
        start = (<size_t>raw + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1)
        end = (<size_t>raw + size) & ~(HUGE_PAGE - 1)
        if end > start:
            madvise(<void *>start, end - start, MADV_HUGEPAGE)
    return raw


cdef class HostMemory:
    """`size` zeroed bytes of host memory at `address`, a multiple of `alignment` (a power of
    two); freed when the object goes."""
    cdef char *raw
    cdef readonly size_t address, size

    def __cinit__(self, size_t size, size_t alignment):
        if size > <size_t>-1 - alignment:
            raise MemoryError()
        self.raw = host_calloc(size + alignment)
        if self.raw == NULL:
            raise MemoryError()
        self.size = size
        self.address = <size_t>self.raw + (-(<size_t>self.raw) % alignment)

    def __dealloc__(self):
        free(self.raw)
