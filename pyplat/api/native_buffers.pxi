# Part of pyplat/api/_native.pyx (included there, after native_commands.pxi).
# ---------------------------------------------------------------------------------------------
# clCreateBuffer and clCreateSubBuffer natively, for contexts whose devices all work in host
# memory.
#
# A buffer made here has no core object: its handle's entry holds only its native record
# (nmem_t), which owns its bytes (zeroed, CL_DEVICE_MEM_BASE_ADDR_ALIGN-aligned, as
# devices/spaces.py's aligned_allocation makes them), and the application's count (api_refs 1).
# It holds its context through the context entry's application count (one more there, as a
# core Buffer would hold a core reference: CL_CONTEXT_REFERENCE_COUNT is the same either way).
# Its hold is pinned (runtime holds.pxi): the native commands use it with no Python reference,
# since the record they use lives as long as the bytes.
#
# The native entries -- writes, reads, copies, fills, size and flags queries, retains and
# releases -- use it as they use any buffer's record. The first time a Python entry needs the
# buffer (a kernel argument, a map, a sub-buffer, any other query), handles.lookup *adopts* it
# (adopt_buffer): a core Buffer is made around the same bytes and record, with the record's
# ordering key, and takes over the context reference; from then on it is an ordinary buffer
# (its hold stays pinned until the application's last release, as every buffer's does once a
# native command has used it: hold_memory, let_go_memory).
# The last clReleaseMemObject of a buffer never adopted frees it here, unless native commands
# still use it or it holds its context's last reference: Python then adopts and releases it.
# ---------------------------------------------------------------------------------------------
from libc.string cimport memset as _memset

# (the flag masks and BASE_ALIGN: native_creation_rules.pxi)


cdef struct nctx_t:               # what n_create_buffer needs of a context (ContextRecord)
    long refs
    size_t context                # id of the core context (entries' `context`)
    uint64_t max_alloc            # min CL_DEVICE_MAX_MEM_ALLOC_SIZE of its devices
    int host_memory               # all its devices work in host memory
    void *queue_devices           # its devices as native queues need them (native_queues.pxi)


cdef void nctx_decref(nctx_t *x) noexcept nogil:
    if pp_add(&x.refs, -1) == 0:
        free_queue_devices(x.queue_devices)
        free(x)


cdef class ContextRecord:
    """A context's native record, kept next to its handle (bridge._native_of)."""
    cdef nctx_t *x

    def __dealloc__(self):
        if self.x != NULL:
            nctx_decref(self.x)


NATIVE_BUFFER_ALIGNMENT = BASE_ALIGN


def context_record(context, uint64_t max_alloc, bint host_memory):
    cdef ContextRecord rec = ContextRecord()
    rec.x = <nctx_t *>calloc(1, sizeof(nctx_t))
    if rec.x == NULL:
        raise MemoryError()
    rec.x.refs, rec.x.context = 1, context_key(context)      # (native_contexts.pxi)
    rec.x.max_alloc, rec.x.host_memory = max_alloc, host_memory
    return rec


cdef size_t created_or_refused(const char *entry, refusal_t *why, size_t first, size_t errcode_ret) noexcept nogil:
    """A creation refused: its code through errcode_ret, and no handle."""
    cdef int32_t r = refused(entry, why, first, 0)
    if errcode_ret != 0:
        (<int32_t *>errcode_ret)[0] = r
    return 0


cdef size_t n_create_buffer(size_t context, uint64_t flags, uint64_t size, size_t host_ptr,
                            size_t errcode_ret) noexcept nogil:
    """clCreateBuffer: refused as the rules refuse it (a context not in the table; then
    native_creation_rules.pxi), made here in a host-memory context; PYPLAT_DEFER_HANDLE for a
    context with no native record, one whose devices do not work in host memory, and memory not
    to be had (the Python entry then tries, and says CL_OUT_OF_HOST_MEMORY if it cannot)."""
    cdef hent_t *e
    cdef nctx_t *x
    cdef nmem_t *m
    cdef pyplat_handle *h = NULL
    cdef char *raw = NULL
    cdef size_t ctx_id = 0
    cdef refusal_t why
    # The context's record read without the table lock (the caller holds the context for the
    # call, and a record's limits never change: native_table_reads.pxi): one locked pass only,
    # the one that publishes the buffer.
    x = <nctx_t *>tab_read_ptr(context, PYPLAT_KIND_CONTEXT)
    if x == NULL:                          # no context (refused), or one with no record (Python's)
        return checked_first_made(<size_t>PYPLAT_DEFER_HANDLE, "clCreateBuffer", context, PYPLAT_KIND_CONTEXT,
                                  CL_INVALID_CONTEXT, errcode_ret)                 # (native_handle_rules.pxi)
    if not buffer_request_valid(flags, size, x.max_alloc, host_ptr, &why):         # (native_creation_rules.pxi)
        return created_or_refused("clCreateBuffer", &why, context, errcode_ret)
    if not x.host_memory:
        return <size_t>PYPLAT_DEFER_HANDLE             # (its devices' memory: Python's)
    if not flags & MEM_ACCESS_BITS:
        flags |= CL_MEM_READ_WRITE
    m = <nmem_t *>calloc(1, sizeof(nmem_t))
    if not flags & CL_MEM_USE_HOST_PTR and size <= <uint64_t>(<size_t>-1) - BASE_ALIGN:
        raw = host_calloc(size + BASE_ALIGN)     # (runtime: huge pages; large sizes zeroed lazily)
    if m == NULL or (raw == NULL and not flags & CL_MEM_USE_HOST_PTR):
        free(m)
        free(raw)
        return <size_t>PYPLAT_DEFER_HANDLE              # (Python says CL_OUT_OF_HOST_MEMORY)
    pthread_mutex_init(&m.lock, NULL)
    m.refs, m.size, m.flags, m.owned, m.context_handle = 1, size, flags, raw, context
    if raw != NULL:
        m.address = raw + (-(<size_t>raw) % BASE_ALIGN)
    else:
        m.address = <char *>host_ptr
    m.root = <size_t>m                                   # its ordering key, for good
    hold_init(&m.hold, &m.lock)
    hold_pin(&m.hold)
    # One pass under the table lock: the context's check and count, the handle, its entry.
    pthread_mutex_lock(&tab_lock)
    e = tab_find(context)
    if e != NULL and e.kind == PYPLAT_KIND_CONTEXT and e.ptr != NULL and e.api_refs > 0:
        x = <nctx_t *>e.ptr
        if x.host_memory and size <= x.max_alloc:
            h = <pyplat_handle *>hmem_take_locked()
    if h == NULL:
        pthread_mutex_unlock(&tab_lock)
        nmem_decref(m)                                   # (frees the bytes too)
        return <size_t>PYPLAT_DEFER_HANDLE
    e.api_refs += 1                                      # the buffer's hold on its context
    ctx_id = x.context
    publish_locked(h, PYPLAT_KIND_MEM, HF_NATIVE, m, ctx_id, 1)
    pthread_mutex_unlock(&tab_lock)
    if flags & CL_MEM_COPY_HOST_PTR:        # (only now that the size is known to be allowed;
        memcpy(m.address, <void *>host_ptr, size)   # nobody has the handle yet)
    if errcode_ret != 0:
        (<int32_t *>errcode_ret)[0] = CL_SUCCESS_
    return <size_t>h


cdef void drop_released_record(void *m) noexcept nogil:
    """(hold_done of the last command using a buffer released natively meanwhile)"""
    nmem_decref(<nmem_t *>m)                             # the entry's reference: frees the bytes


cdef int32_t release_native_buffer(size_t h) noexcept nogil:
    """The last clReleaseMemObject of a buffer never adopted, when its context (and a
    sub-buffer's parent) keeps another reference: the handle goes at once, the bytes once no
    native command uses them -- now, or when the last one is done (its hold's on_idle), so that
    releasing a temporary with launches pending (pyopencl's arrays) stays here instead of
    crossing into Python to adopt and release it. PYPLAT_DEFER otherwise (and for any other
    handle)."""
    cdef hent_t *e
    cdef hent_t *ce
    cdef hent_t *pe
    cdef nmem_t *m = NULL
    cdef int idle = 0
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_MEM and e.flags == HF_NATIVE and e.api_refs == 1:
        m = <nmem_t *>e.ptr
        ce = tab_find(m.context_handle)
        pe = tab_find(m.parent_handle) if m.parent_handle != 0 else NULL
        if ce == NULL or ce.api_refs < 2 or (m.parent_handle != 0 and (pe == NULL or pe.api_refs < 2)):
            m = NULL
        else:
            # (under tab_lock: no command can find the buffer between this and the handle's end)
            idle = hold_unpin_or_defer(&m.hold, drop_released_record, m)
            if idle < 0:
                m = NULL
            else:
                ce.api_refs -= 1
                if pe != NULL:
                    pe.api_refs -= 1             # (a sub-buffer's count on its parent)
                bury(<pyplat_handle *>h)
                tab_delete(e)
    pthread_mutex_unlock(&tab_lock)
    if m == NULL:
        return PYPLAT_DEFER
    if idle:
        nmem_decref(m)                                   # the entry's reference: frees the bytes
    return CL_SUCCESS_


def adopt_buffer(size_t h, factory):
    """For the API layer (under handles.py's lock), on a handle with no core object: if h is a
    buffer made natively, factory(context, flags, size, host_ptr, address, record, key, parent,
    origin) makes its core Buffer around the record's bytes (context: the core Context, which
    the Buffer retains; record: a MemRecord, which keeps the bytes; key: its ordering key; a
    sub-buffer's parent, adopted first if it was made natively too, and its origin); the table
    keeps it, the counts the buffer held on its context (and parent) are given back; the hold
    stays pinned until the application's last release (let_go_memory). It is returned; None if
    h is no such buffer."""
    cdef hent_t *e
    cdef nmem_t *m = NULL
    cdef PyObject *ctx = NULL
    cdef PyObject *par = NULL
    cdef MemRecord rec
    cdef size_t context_handle = 0, parent_handle = 0, unadopted_context = 0
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_MEM and e.flags == HF_NATIVE and e.obj == NULL:
        m = <nmem_t *>e.ptr
        context_handle, parent_handle = m.context_handle, m.parent_handle
        e = tab_find(context_handle)
        if e != NULL and e.obj != NULL:
            ctx = e.obj
            Py_INCREF(<object>ctx)
            pp_add(&m.refs, 1)
            tab_find(h).flags |= HF_ADOPTING    # (a native release defers meanwhile)
            e = tab_find(parent_handle) if parent_handle != 0 else NULL
            if e != NULL and e.obj != NULL:
                par = e.obj
                Py_INCREF(<object>par)
        else:                              # (its context entry lives while the buffer does)
            m, unadopted_context = NULL, context_handle
    pthread_mutex_unlock(&tab_lock)
    if unadopted_context != 0:             # made natively too (native_contexts.pxi): it first
        return adopt_buffer(h, factory) if adopt_missing(unadopted_context) is not None else None
    if m == NULL:
        return None
    context = <object>ctx
    Py_XDECREF(ctx)
    parent = None
    if par != NULL:
        parent = <object>par
        Py_XDECREF(par)
    rec = MemRecord()
    rec.m = m
    host_ptr = <size_t>m.address if m.flags & CL_MEM_USE_HOST_PTR else 0
    try:
        if par == NULL and parent_handle != 0:
            parent = adopt_missing(parent_handle)   # a parent made natively too
        obj = factory(context, m.flags, m.size, host_ptr, <size_t>m.address, rec, m.root, parent, m.origin)
        # (the hold stays pinned: the application holds the handle; its last release unpins it,
        # let_go_memory in native_commands.pxi)
    except BaseException:
        pthread_mutex_lock(&tab_lock)
        e = tab_find(h)
        if e != NULL:
            e.flags &= ~HF_ADOPTING
        pthread_mutex_unlock(&tab_lock)
        raise
    Py_INCREF(obj)
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)                        # (still there: only Python, holding the GIL, drops it,
    if e != NULL:                          # and a native release defers while adopting)
        e.obj = <PyObject *>obj
        e.flags = (e.flags | HF_ADOPTED) & ~HF_ADOPTING
    pthread_mutex_unlock(&tab_lock)
    if e == NULL:
        Py_XDECREF(<PyObject *>obj)
    # The counts the buffer held are given back: the core Buffer retains its context (and parent).
    if api_release(context_handle) == 2:
        context.release()
    if parent_handle != 0 and api_release(parent_handle) == 2:
        parent.release()
    return obj


cdef size_t n_create_sub_buffer(size_t buffer, uint64_t flags, uint32_t create_type, size_t info,
                                size_t errcode_ret) noexcept nogil:
    """clCreateSubBuffer: refused as the rules refuse it (a buffer not in the table; then
    native_creation_rules.pxi), made here of a buffer with a native record that the application
    holds, in a context it holds; PYPLAT_DEFER_HANDLE otherwise (and for memory not to be had).
    The sub-buffer holds one count on its parent's entry and one on its context's, as its core
    Buffer would hold core references; its record a reference to the parent's, which keeps the
    bytes."""
    cdef hent_t *e
    cdef hent_t *ce
    cdef nmem_t *p = NULL
    cdef nmem_t *m
    cdef pyplat_handle *h = NULL
    cdef uint64_t pflags
    cdef size_t ctx_id = 0
    cdef int valid
    cdef refusal_t why
    m = <nmem_t *>calloc(1, sizeof(nmem_t))
    pthread_mutex_lock(&tab_lock)
    e = tab_find(buffer)
    valid = handle_valid(buffer, e, PYPLAT_KIND_MEM, CL_INVALID_MEM_OBJECT, &why)     # (native_handle_rules.pxi)
    if valid and e.ptr != NULL:
        p = <nmem_t *>e.ptr
        pflags = p.flags
        valid = sub_request_valid(p.is_sub, pflags, p.size, flags, create_type, info, &why)
        ce = tab_find(p.context_handle) if p.context_handle != 0 else NULL
        if (valid and m != NULL and e.api_refs > 0 and ce != NULL and ce.kind == PYPLAT_KIND_CONTEXT
                and ce.api_refs > 0):
            h = <pyplat_handle *>hmem_take_locked()
    if h == NULL:
        pthread_mutex_unlock(&tab_lock)
        free(m)
        if not valid:
            return created_or_refused("clCreateSubBuffer", &why, buffer, errcode_ret)
        return <size_t>PYPLAT_DEFER_HANDLE
    e.api_refs += 1                                      # its counts on its parent and context
    ce.api_refs += 1
    ctx_id = e.context
    pp_add(&p.refs, 1)
    pthread_mutex_init(&m.lock, NULL)
    m.origin, m.size = (<size_t *>info)[0], (<size_t *>info)[1]        # (read by the rules)
    m.refs, m.address, m.root, m.is_sub = 1, p.address + m.origin, p.root, 1
    m.flags = sub_flags(flags, pflags)                                  # (native_creation_rules.pxi)
    m.parent, m.parent_handle, m.context_handle = p, buffer, p.context_handle
    hold_init(&m.hold, &m.lock)
    hold_pin(&m.hold)
    publish_locked(h, PYPLAT_KIND_MEM, HF_NATIVE, m, ctx_id, 1)
    pthread_mutex_unlock(&tab_lock)
    if errcode_ret != 0:
        (<int32_t *>errcode_ret)[0] = CL_SUCCESS_
    return <size_t>h
