# Part of pyplat/api/_native.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Native entries that wait for or ask about queues and events: clFlush, clFinish,
# clWaitForEvents, and clGetEventInfo's execution status. Like every native entry they answer
# the valid common case without the GIL and return PYPLAT_DEFER for the rest.
# ---------------------------------------------------------------------------------------------

cdef qcore_t *queue_ref(size_t queue) noexcept nogil:
    """A reference to the queue core of a published queue handle, or NULL."""
    cdef hent_t *e
    cdef qcore_t *q = NULL
    pthread_mutex_lock(&tab_lock)
    e = tab_find(queue)
    if e != NULL and e.kind == PYPLAT_KIND_QUEUE and e.ptr != NULL:
        q = <qcore_t *>e.ptr
        qcore_incref(q)
    pthread_mutex_unlock(&tab_lock)
    return q


cdef int32_t n_flush(size_t queue) noexcept nogil:
    """A driver's flush only hands queued commands to its workers: it takes no lock of this
    layer, runs no command and never waits, so it is called under the table lock, which keeps
    the queue alive meanwhile (no reference taken: one pass, two atomics fewer)."""
    cdef hent_t *e
    cdef qcore_t *q
    cdef int32_t r = PYPLAT_DEFER
    pthread_mutex_lock(&tab_lock)
    e = tab_find(queue)
    if e != NULL and e.kind == PYPLAT_KIND_QUEUE and e.ptr != NULL:
        q = <qcore_t *>e.ptr
        q.driver.flush(q.driver)
        r = CL_SUCCESS_
    pthread_mutex_unlock(&tab_lock)
    return r


cdef int32_t n_finish(size_t queue) noexcept nogil:
    """Wait for the queue; Python clean-up due (reap lists) is left to the Python clFinish, so
    that what the program released is gone when clFinish returns."""
    cdef qcore_t *q
    if PyGILState_Check():               # never block holding the GIL: commands may need it
        return PYPLAT_DEFER
    q = queue_ref(queue)
    if q == NULL:
        return PYPLAT_DEFER
    q.driver.flush(q.driver)
    track_join(q.track)
    qcore_decref(q)
    reclaim_orphans(1)                   # (native_plans.pxi)
    return PYPLAT_DEFER if reap_pending() else CL_SUCCESS_


cdef int32_t n_wait(uint32_t n_events, size_t events) noexcept nogil:
    """clWaitForEvents on published events of one context; the Python clWaitForEvents answers
    errors and callers holding the GIL. Clean-up that comes due is left to the reaper (unlike
    clFinish, a wait does not promise it)."""
    cdef cmd_t *cmds[MAX_NATIVE_WAITS]
    cdef hent_t *e
    cdef size_t context = 0
    cdef uint32_t i, n = 0
    cdef int ok = 1, failed = 0
    cdef cmd_t *c
    if n_events == 0 or events == 0 or n_events > MAX_NATIVE_WAITS or PyGILState_Check():
        return PYPLAT_DEFER
    pthread_mutex_lock(&tab_lock)
    while n < n_events:
        e = tab_find((<size_t *>events)[n])
        if e == NULL or e.kind != PYPLAT_KIND_EVENT or e.ptr == NULL or (n and e.context != context):
            ok = 0
            break
        context = e.context
        cmds[n] = <cmd_t *>e.ptr
        cmd_incref(cmds[n])
        n += 1
    pthread_mutex_unlock(&tab_lock)
    for i in range(n):
        c = cmds[i]
        if ok:
            if c.driver != NULL:
                c.driver.flush(c.driver)
                c.driver.join(c.driver, c)
            else:
                cmd_wait(c)
            failed |= pp_load_i(&c.status) < 0
        cmd_decref(c)
    if not ok:
        return PYPLAT_DEFER
    return ERR_WAIT_LIST if failed else CL_SUCCESS_


DEF EVENT_COMMAND_EXECUTION_STATUS = 0x11D3


cdef int32_t n_event_info(size_t event, uint32_t param, uint64_t size, size_t value,
                          size_t size_ret) noexcept nogil:
    """clGetEventInfo of an event's execution status, the query programs poll in loops: read
    from its command. Other queries, bad handles and short buffers are the Python entry's."""
    cdef hent_t *e
    cdef cmd_t *c = NULL
    cdef int32_t status
    if param != EVENT_COMMAND_EXECUTION_STATUS or (value != 0 and size < sizeof(int32_t)):
        return PYPLAT_DEFER
    pthread_mutex_lock(&tab_lock)
    e = tab_find(event)
    if e != NULL and e.kind == PYPLAT_KIND_EVENT and e.ptr != NULL:
        c = <cmd_t *>e.ptr
        cmd_incref(c)
    pthread_mutex_unlock(&tab_lock)
    if c == NULL:
        return PYPLAT_DEFER
    status = pp_load_i(&c.status)
    cmd_decref(c)
    if value != 0:
        (<int32_t *>value)[0] = status
    if size_ret != 0:
        (<size_t *>size_ret)[0] = sizeof(int32_t)
    return CL_SUCCESS_
