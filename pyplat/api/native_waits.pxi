# Part of pyplat/api/_native.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Native entries that wait for or ask about queues and events: clFlush, clFinish,
# clWaitForEvents, and clGetEventInfo's execution status. Like every native entry they answer
# the valid common case without the GIL and return PYPLAT_DEFER for the rest.
# ---------------------------------------------------------------------------------------------

cdef int32_t n_flush(size_t queue) noexcept nogil:
    """A driver's flush only hands queued commands to its workers: it takes no lock of this
    layer, runs no command and never waits. The queue's core is read in its handle's memory
    (handle_native, native_table_reads.pxi: no table probe): the caller's reference keeps it for
    the call."""
    cdef qcore_t *q = <qcore_t *>handle_native(queue, PYPLAT_KIND_QUEUE)
    if q == NULL:                        # (a handle that is none: refused, native_handle_rules.pxi)
        return checked_first(PYPLAT_DEFER, "clFlush", queue, PYPLAT_KIND_QUEUE, CL_INVALID_COMMAND_QUEUE)
    q.driver.flush(q.driver)
    return CL_SUCCESS_


cdef int32_t n_finish(size_t queue) noexcept nogil:
    """Wait for the queue; Python clean-up due (reap lists) is left to the Python clFinish, so
    that what the program released is gone when clFinish returns. No reference is taken: the
    caller's keeps the queue for the call."""
    cdef qcore_t *q = NULL
    if not PyGILState_Check():           # never block holding the GIL: commands may need it
        q = <qcore_t *>tab_read_ptr(queue, PYPLAT_KIND_QUEUE)
    if q == NULL:
        return checked_first(PYPLAT_DEFER, "clFinish", queue, PYPLAT_KIND_QUEUE, CL_INVALID_COMMAND_QUEUE)
    q.driver.flush(q.driver)
    track_join(q.track)
    reclaim_orphans(1)                   # (native_plans.pxi)
    return PYPLAT_DEFER if reap_pending() else CL_SUCCESS_


cdef int32_t n_wait(uint32_t n_events, size_t events) noexcept nogil:
    """clWaitForEvents on published events of one context; the Python clWaitForEvents answers
    errors and callers holding the GIL. Clean-up that comes due is left to the reaper (unlike
    clFinish, a wait does not promise it), but for a failed command's: when one failed, the
    Python entry answers (its wait finds them finished), so that the failure's report (a check
    finding, its hook) is out and PYPLAT_DEBUG=err has logged the error when the call returns."""
    cdef cmd_t *cmds[MAX_NATIVE_WAITS]
    cdef tab_read_t r
    cdef size_t context = 0
    cdef uint32_t i, n = 0
    cdef int failed = 0
    cdef cmd_t *c
    if n_events == 0 or events == 0 or n_events > MAX_NATIVE_WAITS or PyGILState_Check():
        return wait_refused(n_events, events)
    while n < n_events:                  # (without the table lock: the caller holds the events)
        if (not tab_read((<size_t *>events)[n], &r) or r.kind != PYPLAT_KIND_EVENT or r.ptr == NULL
                or (n and r.context != context)):
            return wait_refused(n_events, events)
        context = r.context
        cmds[n] = <cmd_t *>r.ptr
        n += 1
    for i in range(n):
        c = cmds[i]
        if c.driver != NULL:
            c.driver.flush(c.driver)
            c.driver.join(c.driver, c)
        else:
            cmd_wait(c)
        failed |= pp_load_i(&c.status) < 0
    return PYPLAT_DEFER if failed else CL_SUCCESS_


cdef int32_t wait_refused(uint32_t n_events, size_t events) noexcept nogil:
    """A wait n_wait does not answer: refused if the list or an event is refused (in the Python
    entry's order: the list, then each event), else PYPLAT_DEFER (contexts: Python's)."""
    cdef refusal_t why
    cdef uint32_t n
    cdef int valid = events_given(n_events, events, &why)           # (native_handle_rules.pxi)
    if valid:
        pthread_mutex_lock(&tab_lock)
        for n in range(n_events):
            valid = handle_valid((<size_t *>events)[n], tab_find((<size_t *>events)[n]), PYPLAT_KIND_EVENT,
                                 CL_INVALID_EVENT, &why)
            if not valid:
                break
        pthread_mutex_unlock(&tab_lock)
    return PYPLAT_DEFER if valid else refused("clWaitForEvents", &why, 0, 0)


DEF EVENT_COMMAND_EXECUTION_STATUS = CL_EVENT_COMMAND_EXECUTION_STATUS


cdef int32_t n_event_info(size_t event, uint32_t param, uint64_t size, size_t value,
                          size_t size_ret) noexcept nogil:
    return checked_first(event_info(event, param, size, value, size_ret), "clGetEventInfo", event,
                         PYPLAT_KIND_EVENT, CL_INVALID_EVENT)


cdef int32_t event_info(size_t event, uint32_t param, uint64_t size, size_t value,
                        size_t size_ret) noexcept nogil:
    """clGetEventInfo of an event's execution status, the query programs poll in loops: read
    from its command. Other queries and short buffers are the Python entry's."""
    cdef cmd_t *c
    cdef int32_t status
    if param != EVENT_COMMAND_EXECUTION_STATUS or (value != 0 and size < sizeof(int32_t)):
        return PYPLAT_DEFER
    c = <cmd_t *>tab_read_ptr(event, PYPLAT_KIND_EVENT)     # (the caller holds the event)
    if c == NULL:
        return PYPLAT_DEFER
    status = pp_load_i(&c.status)
    if value != 0:
        (<int32_t *>value)[0] = status
    if size_ret != 0:
        (<size_t *>size_ret)[0] = sizeof(int32_t)
    return CL_SUCCESS_
