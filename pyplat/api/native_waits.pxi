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
    if q == NULL:
        return PYPLAT_DEFER
    q.driver.flush(q.driver)
    return CL_SUCCESS_


cdef int32_t n_finish(size_t queue) noexcept nogil:
    """Wait for the queue; Python clean-up due (reap lists) is left to the Python clFinish, so
    that what the program released is gone when clFinish returns. No reference is taken: the
    caller's keeps the queue for the call."""
    cdef qcore_t *q
    if PyGILState_Check():               # never block holding the GIL: commands may need it
        return PYPLAT_DEFER
    q = <qcore_t *>tab_read_ptr(queue, PYPLAT_KIND_QUEUE)
    if q == NULL:
        return PYPLAT_DEFER
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
        return PYPLAT_DEFER
    while n < n_events:                  # (without the table lock: the caller holds the events)
        if (not tab_read((<size_t *>events)[n], &r) or r.kind != PYPLAT_KIND_EVENT or r.ptr == NULL
                or (n and r.context != context)):
            return PYPLAT_DEFER
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


DEF EVENT_COMMAND_EXECUTION_STATUS = CL_EVENT_COMMAND_EXECUTION_STATUS


cdef int32_t n_event_info(size_t event, uint32_t param, uint64_t size, size_t value,
                          size_t size_ret) noexcept nogil:
    """clGetEventInfo of an event's execution status, the query programs poll in loops: read
    from its command. Other queries, bad handles and short buffers are the Python entry's."""
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
