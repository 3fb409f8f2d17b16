# Part of pyplat/api/_native.pyx (included there): the native buffer commands --
# clEnqueueWriteBuffer, clEnqueueReadBuffer, clEnqueueCopyBuffer, clEnqueueFillBuffer and
# clEnqueueMarkerWithWaitList, clEnqueueBarrierWithWaitList -- answered without the GIL for
# buffers of contexts whose devices all work in host memory (docs/runtime.md, "Fast path"). Each
# refuses what the rules refuse (native_handle_rules.pxi, native_buffer_rules.pxi, shared with
# the Python entries) itself, in the Python entry's order, and defers to the Python entry
# (api/enqueue.py) only what it cannot do here: valid handles it has no native record of, and
# buffers or queues that do not hold what native commands need yet (the Python entry primes
# them: a buffer's record gets its hold, hold_memory; a queue the hold its native events need).


cdef struct nmem_t:               # a buffer as the fast path sees it (made with its handle)
    pthread_mutex_t lock          # guards hold
    long refs
    char *address                 # its bytes (a sub-buffer's: inside its root's)
    size_t size
    uint64_t flags
    size_t root                   # the ordering key of the root memory object (core/queue.py,
                                  # order_key; a buffer made natively: its record's address)
    void *owned                   # the bytes this record owns and frees (made natively), or NULL
    size_t context_handle         # (made natively) its context's handle, counted while unadopted
    int is_sub                    # a sub-buffer (it may have none of its own)
    nmem_t *parent                # (a sub-buffer made natively) a reference: its parent's record,
    size_t parent_handle          # which keeps the bytes; the parent's handle, counted while
    size_t origin                 # unadopted; its offset in the parent
    hold_t hold                   # the buffer kept alive while native commands use it;
                                  # owner: a MemRecord, refs: Retained((buffer,))
    void *maps                    # (a root buffer's) nmaps_t: its and its sub-buffers' mappings,
                                  # made once under lock, a reference (native_maps.pxi)

cdef size_t host_key = id(HOST)   # the HOST pseudo-object's key (core/queue.py, merged_accesses)


cdef void nmem_decref(nmem_t *m) noexcept nogil:
    if pp_add(&m.refs, -1) == 0:
        pthread_mutex_destroy(&m.lock)
        if m.maps != NULL:
            maps_decref(<nmaps_t *>m.maps)     # (native_maps.pxi)
        free(m.owned)
        if m.parent != NULL:
            nmem_decref(m.parent)
        free(m)


cdef class MemRecord:
    """A reference to a buffer's native record: what the handle table keeps next to a buffer's
    handle (bridge._native_of), and the owner of its hold while held."""
    cdef nmem_t *m

    def __dealloc__(self):
        if self.m != NULL:
            nmem_decref(self.m)


def mem_record(size_t address, size_t size, uint64_t flags, size_t key, bint is_sub=False,
               size_t context_handle=0):
    """A new native record of a buffer whose bytes are at `address` (host memory: its context
    moves no memory); `key` is its root memory object's ordering key; is_sub: a sub-buffer;
    context_handle: its context's (for the native clCreateSubBuffer, native_buffers.pxi)."""
    cdef MemRecord rec = MemRecord()
    cdef nmem_t *m = <nmem_t *>calloc(1, sizeof(nmem_t))
    if m == NULL:
        raise MemoryError()
    pthread_mutex_init(&m.lock, NULL)
    m.refs = 1
    m.address, m.size, m.flags, m.root, m.is_sub = <char *>address, size, flags, key, is_sub
    m.context_handle = context_handle
    hold_init(&m.hold, &m.lock)
    rec.m = m
    return rec


cdef tuple buffer_record(size_t address):
    """(GIL held) (the native record, the core Buffer, whether the application holds the
    handle) of the buffer whose handle is `address`; None if it has no record or no core
    object."""
    cdef hent_t *e
    cdef nmem_t *m = NULL
    cdef PyObject *obj = NULL
    cdef MemRecord rec
    cdef int application_holds = 0
    pthread_mutex_lock(&tab_lock)
    e = tab_find(address)
    if e != NULL and e.kind == PYPLAT_KIND_MEM and e.ptr != NULL and e.obj != NULL:
        m = <nmem_t *>e.ptr
        pp_add(&m.refs, 1)
        obj = e.obj
        Py_INCREF(<object>obj)
        application_holds = e.api_refs > 0
    pthread_mutex_unlock(&tab_lock)
    if m == NULL:
        return None
    rec = MemRecord()
    rec.m = m
    buffer = <object>obj
    Py_XDECREF(obj)
    return rec, buffer, application_holds


def hold_memory(size_t address):
    """Let native commands use the buffer of a handle (GIL held). While the application holds
    the handle, its hold is pinned: native commands and launches use it with no Python
    reference, since the application's reference keeps the buffer, until its last
    clReleaseMemObject (let_go_memory) -- so a clFinish, after which an ordinary hold lets go,
    does not send the next command through Python again. Without an application reference the
    record holds a reference to the buffer until the reaper finds no native command left. True
    if that changed anything."""
    cdef MemRecord rec
    found = buffer_record(address)
    if found is None:
        return False
    rec, buffer, application_holds = found
    if rec.m.hold.held:
        return False
    if application_holds:       # (its last release needs the GIL we hold: it cannot come between)
        hold_pin(&rec.m.hold)
        return True
    return bool(hold_acquire(&rec.m.hold, rec, Retained((buffer,))))


def let_go_memory(size_t address):
    """The application's last reference to a buffer goes (handles.release, GIL held, before the
    core reference kept for the application is released): a pinned hold becomes an ordinary
    one, so native commands still pending keep the buffer until they are done."""
    cdef MemRecord rec
    found = buffer_record(address)
    if found is None:
        return
    rec, buffer, _ = found
    if rec.m.hold.pinned:       # (only this call unpins an adopted buffer's hold: GIL held)
        hold_unpin(&rec.m.hold, rec, Retained((buffer,)))


cdef struct ncall_t:              # a native command call's references, taken from the table
    qcore_t *q
    nmem_t *m[2]
    int n_mem
    cmd_t *waits[MAX_NATIVE_WAITS]
    uint32_t n_waits
    int waits_taken               # 1: the wait list is held; 0: it is Python's; -1: refused
    refusal_t waits_why           # (-1) why


cdef void ncall_release(ncall_t *a) noexcept nogil:
    cdef uint32_t i
    for i in range(a.n_waits):
        cmd_decref(a.waits[i])
    for i in range(<uint32_t>a.n_mem):
        nmem_decref(a.m[i])
    qcore_decref(a.q)


cdef int waits_take_locked(cmd_t **waits, uint32_t n_events, size_t events, size_t context,
                           refusal_t *why) noexcept nogil:
    """(tab_lock held) A wait list's commands, of a queue of `context`, in the Python entries'
    order (api/event.py wait_list: the list, every event, then their contexts): 1 with a
    reference to each; -1 if the rules refuse the list (why); 0 if Python is to say (an event
    with no native record, or more than MAX_NATIVE_WAITS). Nothing held unless 1."""
    cdef hent_t *e
    cdef uint32_t n
    cdef int taken = n_events <= MAX_NATIVE_WAITS
    if not wait_list_given(n_events, events, why):                 # (native_handle_rules.pxi)
        return -1
    for n in range(n_events):
        if not handle_valid((<size_t *>events)[n], tab_find((<size_t *>events)[n]), PYPLAT_KIND_EVENT,
                            CL_INVALID_EVENT_WAIT_LIST, why):
            return -1
    for n in range(n_events):
        e = tab_find((<size_t *>events)[n])
        if e.ptr == NULL or e.context == 0:
            taken = 0                      # its context is Python's to compare (the same
        elif not event_context_valid(context, e.context, why):     # refusal, whichever comes first)
            return -1
        elif taken:
            waits[n] = <cmd_t *>e.ptr
    if taken:
        for n in range(n_events):
            cmd_incref(waits[n])
    return taken


cdef int ncall_take(ncall_t *a, size_t queue, int n_mem, size_t mem0, size_t mem1, uint32_t n_events,
                    size_t events, refusal_t *why) noexcept nogil:
    """Handles -> references, checked in the Python entries' order (the queue, each buffer with
    its context, then -- after the command's own rules, which the caller checks -- the wait
    list): 1 with the queue and the n_mem (0-2) buffers held (native records of one context)
    and a.waits_taken saying whether the wait list is too (ncall_waits_end: when it is not); -1
    if a handle is refused (why), 0 if Python is to answer, holding nothing."""
    cdef hent_t *e
    cdef size_t mems[2]
    cdef int i, r = 1
    mems[0], mems[1] = mem0, mem1
    a.n_mem, a.n_waits, a.waits_taken = 0, 0, 0
    pthread_mutex_lock(&tab_lock)
    e = tab_find(queue)
    if not handle_valid(queue, e, PYPLAT_KIND_QUEUE, CL_INVALID_COMMAND_QUEUE, why):
        r = -1
    else:
        a.q = <qcore_t *>e.ptr             # (NULL: Python's queue, whose context is not known here)
        for i in range(n_mem):
            e = tab_find(mems[i])
            if not handle_valid(mems[i], e, PYPLAT_KIND_MEM, CL_INVALID_MEM_OBJECT, why):
                r = -1
            elif a.q == NULL or e.ptr == NULL or e.context == 0:
                r = 0                      # (Python compares its context before the next one)
            elif not buffer_context_valid(a.q.context, e.context, why):
                r = -1
            if r != 1:
                break
            a.m[i] = <nmem_t *>e.ptr
            a.n_mem += 1
        if r == 1 and a.q == NULL:
            r = 0
    if r == 1:
        a.waits_taken = waits_take_locked(a.waits, n_events, events, a.q.context, &a.waits_why)
        a.n_waits = n_events if a.waits_taken == 1 else 0
        qcore_incref(a.q)
        for i in range(a.n_mem):
            pp_add(&a.m[i].refs, 1)
    pthread_mutex_unlock(&tab_lock)
    return r


cdef int32_t ncall_waits_end(ncall_t *a, const char *entry, size_t first, size_t second) noexcept nogil:
    """The command's own rules passed but its wait list is not held (a.waits_taken 0 or -1):
    let go of a's references; the wait list's refusal, or PYPLAT_DEFER."""
    ncall_release(a)
    if a.waits_taken < 0:
        return refused(entry, &a.waits_why, first, second)
    return PYPLAT_DEFER


cdef int32_t ncall_refused(int taken, const char *entry, refusal_t *why, size_t first, size_t second) noexcept nogil:
    """What an entry answers when ncall_take did not take the call (taken -1 or 0)."""
    return refused(entry, why, first, second) if taken < 0 else PYPLAT_DEFER


cdef void publish_event(nevent_t *s, qcore_t *q, cmd_t *c, uint32_t command_type,
                        size_t event) noexcept nogil:
    """The event of c: a native handle in the table (takes a reference to q and to c)."""
    s.refs = 1
    s.q = q
    s.command_type = command_type
    qcore_incref(q)
    cmd_incref(c)
    pthread_mutex_lock(&tab_lock)
    publish_locked(&s.h, PYPLAT_KIND_EVENT, HF_NATIVE, c, q.context, 0)
    pthread_mutex_unlock(&tab_lock)
    (<size_t *>event)[0] = <size_t>s


cdef int32_t ncall_submit(ncall_t *a, cmd_t *c, access_t *acc, int n_acc, int barrier, int unknown,
                          uint32_t command_type, int blocking, size_t event) noexcept nogil:
    """Enqueue c (payload set) as the Python path would (api/enqueue.py _submit): its buffers
    held until it finishes, the wait list linked, the queue's order, its event published; a
    blocking call (never with a wait list: see n_transfer) waits. Consumes a's references and
    c; PYPLAT_DEFER if c cannot go natively (a buffer or the queue's events not held)."""
    return ncall_submit_kept(a, c, acc, n_acc, barrier, unknown, command_type, blocking, event, NULL)


cdef int32_t ncall_submit_kept(ncall_t *a, cmd_t *c, access_t *acc, int n_acc, int barrier, int unknown,
                               uint32_t command_type, int blocking, size_t event,
                               cmd_t **kept) noexcept nogil:
    """ncall_submit; kept (not NULL): where a reference to c is left when it was enqueued (an
    unmap's record keeps its command: native_maps.pxi)."""
    cdef nevent_t *s = NULL
    cdef int i, used = 0
    cdef uint32_t j
    while used < a.n_mem:
        if not hold_use(&a.m[used].hold):
            return ncall_defer(a, c, used)
        used += 1
    if event:
        if not hold_use(&a.q.events):
            return ncall_defer(a, c, used)
        s = <nevent_t *>hmem_new()
        if s == NULL:
            hold_done(&a.q.events)
            return ncall_defer(a, c, used)
    if kept != NULL:
        cmd_incref(c)
        kept[0] = c
    c.driver = a.q.driver
    for i in range(a.n_mem):
        c.mem_holds[i] = &a.m[i].hold         # done when c finishes (the runtime's commands.pxi)
    for j in range(a.n_waits):
        link(c, a.waits[j])
    pthread_mutex_lock(&a.q.lock)
    order_locked(a.q, c, barrier, acc, n_acc, unknown)
    pthread_mutex_unlock(&a.q.lock)
    cmd_attach(c, a.q.track)
    if s != NULL:
        publish_event(s, a.q, c, command_type, event)
    if events_logged:                         # (native_logging.pxi)
        log_command(c, command_type, a.q.device, a.n_waits, NULL)
    if c.kind == K_NOP:                       # a marker or barrier: done here when it may be
        cmd_commit_nop(c)
    else:
        cmd_commit(c)
    if blocking:                              # (no wait list, order links only: it cannot fail)
        c.driver.flush(c.driver)
        c.driver.join(c.driver, c)
    cmd_decref(c)
    ncall_release(a)
    return CL_SUCCESS_


cdef int32_t ncall_defer(ncall_t *a, cmd_t *c, int used) noexcept nogil:
    cdef int i
    for i in range(used):
        hold_done(&a.m[i].hold)
    cmd_free(c)
    ncall_release(a)
    return PYPLAT_DEFER


cdef int32_t n_transfer(size_t queue, size_t buffer, uint32_t blocking, uint64_t offset, uint64_t size,
                        size_t ptr, uint32_t n_events, size_t events, size_t event,
                        int to_buffer) noexcept nogil:
    cdef ncall_t a
    cdef access_t acc[2]
    cdef nmem_t *m
    cdef cmd_t *c
    cdef refusal_t why
    cdef const char *name = "clEnqueueWriteBuffer" if to_buffer else "clEnqueueReadBuffer"
    cdef int taken = ncall_take(&a, queue, 1, buffer, 0, n_events, events, &why)
    if taken != 1:
        return ncall_refused(taken, name, &why, queue, buffer)
    m = a.m[0]
    if not (region_valid(m.size, offset, size, &why) and pointer_given(ptr, &why)
            and host_may(m.flags, to_buffer, &why)):                 # (native_buffer_rules.pxi)
        ncall_release(&a)
        return refused(name, &why, queue, buffer)
    # A blocking call waits natively only without a wait list: then nothing can fail it (the
    # queue's order passes no failure on), and an event of a wait list that fails meanwhile
    # stays the Python entry's to report. Never block holding the GIL.
    if a.waits_taken != 1 or (blocking and (n_events != 0 or PyGILState_Check())):
        return ncall_waits_end(&a, name, queue, buffer)
    c = cmd_new(K_COPY)
    if c == NULL:
        ncall_release(&a)
        return CL_OUT_OF_HOST_MEMORY_
    c.size = size
    if to_buffer:
        c.dst, c.src = m.address + offset, <char *>ptr
    else:
        c.dst, c.src = <char *>ptr, m.address + offset
    acc[0].key, acc[0].writes = m.root, to_buffer
    acc[1].key, acc[1].writes = host_key, not to_buffer
    return ncall_submit(&a, c, acc, 2, 0, 0,
                        CL_COMMAND_WRITE_BUFFER if to_buffer else CL_COMMAND_READ_BUFFER,
                        blocking, event)


cdef int32_t n_write(size_t queue, size_t buffer, uint32_t blocking, uint64_t offset, uint64_t size,
                     size_t ptr, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    return n_transfer(queue, buffer, blocking, offset, size, ptr, n_events, events, event, 1)


cdef int32_t n_read(size_t queue, size_t buffer, uint32_t blocking, uint64_t offset, uint64_t size,
                    size_t ptr, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    return n_transfer(queue, buffer, blocking, offset, size, ptr, n_events, events, event, 0)


cdef int32_t n_copy(size_t queue, size_t src, size_t dst, uint64_t src_offset, uint64_t dst_offset,
                    uint64_t size, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    cdef ncall_t a
    cdef access_t acc[2]
    cdef cmd_t *c
    cdef char *s
    cdef char *d
    cdef refusal_t why
    cdef int taken = ncall_take(&a, queue, 2, src, dst, n_events, events, &why)
    if taken != 1:
        return ncall_refused(taken, "clEnqueueCopyBuffer", &why, queue, src)
    s, d = a.m[0].address + src_offset, a.m[1].address + dst_offset
    if not (region_valid(a.m[0].size, src_offset, size, &why) and region_valid(a.m[1].size, dst_offset, size, &why)
            and copy_apart(<size_t>s, <size_t>d, size, &why)):      # (native_buffer_rules.pxi)
        ncall_release(&a)
        return refused("clEnqueueCopyBuffer", &why, queue, src)
    if a.waits_taken != 1:
        return ncall_waits_end(&a, "clEnqueueCopyBuffer", queue, src)
    c = cmd_new(K_COPY)
    if c == NULL:
        ncall_release(&a)
        return CL_OUT_OF_HOST_MEMORY_
    c.dst, c.src, c.size = d, s, size
    acc[0].key, acc[0].writes = a.m[0].root, 0
    acc[1].key, acc[1].writes = a.m[1].root, 1
    if acc[0].key == acc[1].key:                            # one root: one access, a write
        acc[0].writes = 1
    return ncall_submit(&a, c, acc, 1 if acc[0].key == acc[1].key else 2, 0, 0,
                        CL_COMMAND_COPY_BUFFER, 0, event)


cdef int32_t n_fill(size_t queue, size_t buffer, size_t pattern, uint64_t pattern_size, uint64_t offset,
                    uint64_t size, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    cdef ncall_t a
    cdef access_t acc[1]
    cdef cmd_t *c
    cdef refusal_t why
    cdef int taken = ncall_take(&a, queue, 1, buffer, 0, n_events, events, &why)
    if taken != 1:
        return ncall_refused(taken, "clEnqueueFillBuffer", &why, queue, buffer)
    if not (fill_pattern_valid(pattern, pattern_size, offset, size, &why)
            and region_valid(a.m[0].size, offset, size, &why)):     # (native_buffer_rules.pxi)
        ncall_release(&a)
        return refused("clEnqueueFillBuffer", &why, queue, buffer)
    if a.waits_taken != 1:
        return ncall_waits_end(&a, "clEnqueueFillBuffer", queue, buffer)
    c = cmd_new(K_FILL)
    if c == NULL:
        ncall_release(&a)
        return CL_OUT_OF_HOST_MEMORY_
    memcpy(c.pattern, <void *>pattern, pattern_size)
    c.psize, c.dst, c.size = pattern_size, a.m[0].address + offset, size
    acc[0].key, acc[0].writes = a.m[0].root, 1
    return ncall_submit(&a, c, acc, 1, 0, 0, CL_COMMAND_FILL_BUFFER, 0, event)


cdef int32_t n_marker(size_t queue, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    """A marker: with no wait list it waits for every earlier command of the queue."""
    cdef ncall_t a
    cdef cmd_t *c
    cdef refusal_t why
    cdef int taken = ncall_take(&a, queue, 0, 0, 0, n_events, events, &why)
    if taken != 1:
        return ncall_refused(taken, "clEnqueueMarkerWithWaitList", &why, queue, 0)
    if a.waits_taken != 1:
        return ncall_waits_end(&a, "clEnqueueMarkerWithWaitList", queue, 0)
    c = cmd_new(K_NOP)
    if c == NULL:
        ncall_release(&a)
        return CL_OUT_OF_HOST_MEMORY_
    return ncall_submit(&a, c, NULL, 0, n_events == 0, 1, CL_COMMAND_MARKER, 0, event)


cdef int32_t n_barrier(size_t queue, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    """A barrier: later commands of the queue wait for it, it for every earlier one."""
    cdef ncall_t a
    cdef cmd_t *c
    cdef refusal_t why
    cdef int taken = ncall_take(&a, queue, 0, 0, 0, n_events, events, &why)
    if taken != 1:
        return ncall_refused(taken, "clEnqueueBarrierWithWaitList", &why, queue, 0)
    if a.waits_taken != 1:
        return ncall_waits_end(&a, "clEnqueueBarrierWithWaitList", queue, 0)
    c = cmd_new(K_NOP)
    if c == NULL:
        ncall_release(&a)
        return CL_OUT_OF_HOST_MEMORY_
    return ncall_submit(&a, c, NULL, 0, 1, 1, CL_COMMAND_BARRIER, 0, event)


DEF MEM_FLAGS = CL_MEM_FLAGS
DEF MEM_SIZE = CL_MEM_SIZE


cdef int32_t n_mem_info(size_t mem, uint32_t param, uint64_t size, size_t value,
                        size_t size_ret) noexcept nogil:
    return checked_first(mem_info(mem, param, size, value, size_ret), "clGetMemObjectInfo", mem, PYPLAT_KIND_MEM,
                         CL_INVALID_MEM_OBJECT)


cdef int32_t mem_info(size_t mem, uint32_t param, uint64_t size, size_t value,
                      size_t size_ret) noexcept nogil:
    """clGetMemObjectInfo of a buffer's size or flags (pyopencl reads Buffer.size through it),
    from its native record. Other queries and short buffers: the Python entry."""
    cdef nmem_t *m
    cdef uint64_t answer
    if (param != MEM_SIZE and param != MEM_FLAGS) or (value != 0 and size < 8):
        return PYPLAT_DEFER
    m = <nmem_t *>handle_native(mem, PYPLAT_KIND_MEM)  # (no probe: size and flags never change)
    if m == NULL:
        return PYPLAT_DEFER
    answer = m.size if param == MEM_SIZE else m.flags
    if value != 0:
        (<uint64_t *>value)[0] = answer
    if size_ret != 0:
        (<size_t *>size_ret)[0] = 8
    return CL_SUCCESS_
