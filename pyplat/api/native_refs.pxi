# Part of pyplat/api/_native.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# clRetain*/clRelease* of contexts, queues, memory objects, programs and kernels, natively.
#
# The spec's reference count of an object is the application's references plus the
# implementation's own (a kernel holds its program, a queue its context, a pending command its
# buffers). The core object (pyplat/core/object.py) counts the implementation's; the handle entry
# counts the application's (hent_t.api_refs), and while that count is above 0 the core object
# holds exactly one reference on behalf of all of them. So a retain, and a release that is not
# the last, change a number under the table lock without Python; the last release (1 -> 0)
# is deferred to the Python entry, which lets go of that one core reference: it may destroy the
# object (destructor callbacks, handle invalidated), as a release always did.
#
# A handle the creation entries made (handles.created) starts with api_refs 1, the creator's
# reference. Any other handle (made on first use for an object the application never created)
# has 0: its count stays the core object's alone and the Python entries answer as they always
# did. PYPLAT_DEBUG=refcounts logs the counts the entries here change (native_logging.pxi). The Python entries go through
# the same counter (api_retain / api_release below): native or not, one count.
# ---------------------------------------------------------------------------------------------

cdef inline int32_t retain_counted(size_t h, int kind) noexcept nogil:
    """One more application reference to a handle of `kind` whose count is here."""
    cdef hent_t *e
    cdef int32_t r = PYPLAT_DEFER
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == kind and e.api_refs > 0:
        e.api_refs += 1
        r = CL_SUCCESS_
    pthread_mutex_unlock(&tab_lock)
    return r


cdef inline int32_t release_counted(size_t h, int kind) noexcept nogil:
    """One application reference fewer, unless it is the last one (that is Python's)."""
    cdef hent_t *e
    cdef int32_t r = PYPLAT_DEFER
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == kind and e.api_refs > 1:
        e.api_refs -= 1
        r = CL_SUCCESS_
    pthread_mutex_unlock(&tab_lock)
    return r


# What none of them answers is checked_first (native_handle_rules.pxi): a handle that is no
# handle of the kind is refused here, as the Python entry's lookup refuses it.

cdef int32_t n_retain_context(size_t h) noexcept nogil:
    return noted("clRetainContext", h, checked_first(retain_counted(h, PYPLAT_KIND_CONTEXT), "clRetainContext", h,
                                                     PYPLAT_KIND_CONTEXT, CL_INVALID_CONTEXT))


cdef int32_t n_release_context(size_t h) noexcept nogil:
    cdef int32_t r = release_counted(h, PYPLAT_KIND_CONTEXT)
    if r == PYPLAT_DEFER:
        r = release_native_context(h)                    # (native_contexts.pxi)
    return noted("clReleaseContext", h, checked_first(r, "clReleaseContext", h, PYPLAT_KIND_CONTEXT,
                                                      CL_INVALID_CONTEXT))


cdef int32_t n_retain_queue(size_t h) noexcept nogil:
    return noted("clRetainCommandQueue", h, checked_first(retain_counted(h, PYPLAT_KIND_QUEUE), "clRetainCommandQueue",
                                                          h, PYPLAT_KIND_QUEUE, CL_INVALID_COMMAND_QUEUE))


cdef int32_t n_release_queue(size_t h) noexcept nogil:
    return checked_first(release_queue(h), "clReleaseCommandQueue", h, PYPLAT_KIND_QUEUE, CL_INVALID_COMMAND_QUEUE)


cdef int32_t release_queue(size_t h) noexcept nogil:
    """clReleaseCommandQueue flushes the queue (the spec's implicit flush): only a queue the
    native clFlush can flush is released here; the last release of a queue made natively in
    the same pass under the table lock (native_queues.pxi)."""
    cdef hent_t *e
    cdef qcore_t *q = NULL
    cdef qcore_t *gone = NULL
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_QUEUE and e.api_refs > 1 and e.ptr != NULL:
        e.api_refs -= 1
        q = <qcore_t *>e.ptr
        qcore_incref(q)
    elif e != NULL:
        gone = release_native_queue_locked(e, h)
    pthread_mutex_unlock(&tab_lock)
    if gone != NULL:
        qcore_decref(gone)                 # the entry's reference
        return noted("clReleaseCommandQueue", h, CL_SUCCESS_)
    if q == NULL:
        return PYPLAT_DEFER
    q.driver.flush(q.driver)
    qcore_decref(q)
    return noted("clReleaseCommandQueue", h, CL_SUCCESS_)


cdef int32_t n_retain_mem(size_t h) noexcept nogil:
    return noted("clRetainMemObject", h, checked_first(retain_counted(h, PYPLAT_KIND_MEM), "clRetainMemObject", h,
                                                       PYPLAT_KIND_MEM, CL_INVALID_MEM_OBJECT))


cdef int32_t n_release_mem(size_t h) noexcept nogil:
    cdef int32_t r = release_counted(h, PYPLAT_KIND_MEM)
    if r == PYPLAT_DEFER:
        r = release_native_buffer(h)                     # (native_buffers.pxi)
    return noted("clReleaseMemObject", h, checked_first(r, "clReleaseMemObject", h, PYPLAT_KIND_MEM,
                                                        CL_INVALID_MEM_OBJECT))


cdef int32_t n_retain_program(size_t h) noexcept nogil:
    return noted("clRetainProgram", h, checked_first(retain_counted(h, PYPLAT_KIND_PROGRAM), "clRetainProgram", h,
                                                     PYPLAT_KIND_PROGRAM, CL_INVALID_PROGRAM))


cdef int32_t n_release_program(size_t h) noexcept nogil:
    cdef hent_t *e
    cdef int orphaned = 0
    if orphans != NULL:                   # (native_plans.pxi: Python settles them first)
        pthread_mutex_lock(&tab_lock)
        e = tab_find(h)
        orphaned = e != NULL and program_has_orphans_locked(e)
        pthread_mutex_unlock(&tab_lock)
        if orphaned:
            return PYPLAT_DEFER
    return noted("clReleaseProgram", h, checked_first(release_counted(h, PYPLAT_KIND_PROGRAM), "clReleaseProgram", h,
                                                      PYPLAT_KIND_PROGRAM, CL_INVALID_PROGRAM))


cdef int32_t n_retain_kernel(size_t h) noexcept nogil:
    return noted("clRetainKernel", h, checked_first(retain_counted(h, PYPLAT_KIND_KERNEL), "clRetainKernel", h,
                                                    PYPLAT_KIND_KERNEL, CL_INVALID_KERNEL))


cdef int32_t n_release_kernel(size_t h) noexcept nogil:
    cdef int32_t r = release_counted(h, PYPLAT_KIND_KERNEL)
    if r == PYPLAT_DEFER:
        r = release_native_kernel(h)                     # (native_kernels.pxi)
    return noted("clReleaseKernel", h, checked_first(r, "clReleaseKernel", h, PYPLAT_KIND_KERNEL, CL_INVALID_KERNEL))


# The Python entries' side of the same count (pyplat/api/handles.py: retain, release,
# reference_count), holding the GIL.

def api_retain(size_t h):
    """True if the handle's application references are counted here (one more now); False: the
    caller retains the core object itself."""
    cdef hent_t *e
    cdef bint counted = False
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.api_refs > 0:
        e.api_refs += 1
        counted = True
    pthread_mutex_unlock(&tab_lock)
    return counted


def api_release(size_t h):
    """One application reference fewer: 1 if that was all (others remain), 2 if it was the last
    one (the caller releases the core object's reference held for them), 0 if the count is not
    here (the caller releases the core object)."""
    cdef hent_t *e
    cdef int state = 0
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.api_refs > 0:
        e.api_refs -= 1
        state = 1 if e.api_refs > 0 else 2
    pthread_mutex_unlock(&tab_lock)
    return state


def api_references(size_t h):
    """The application references counted for a handle (0: none here)."""
    cdef hent_t *e
    cdef long n = 0
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL:
        n = e.api_refs
    pthread_mutex_unlock(&tab_lock)
    return n
