# Part of pyplat/api/_native.pyx (included there, before the entries that enqueue commands).
# ---------------------------------------------------------------------------------------------
# PYPLAT_DEBUG=events for the native entries: each command they enqueue is logged as the Python
# entries' are (core/queue.py, log_command: the line when it is queued, one when it ended), so
# turning debugging on never changes which implementation runs. Only while the category is on
# does an enqueue take the GIL, to hand its command to the logger the bridge installs.
# ---------------------------------------------------------------------------------------------

cdef int events_logged = 0
cdef object command_logger = None     # (Command, command type, device id, waits, kernel name)


def set_events_logging(bint on, logger):
    """PYPLAT_DEBUG=events on or off (read again at config.reload), and who logs."""
    global events_logged, command_logger
    command_logger = logger
    events_logged = on and logger is not None


cdef void log_command(cmd_t *c, uint32_t command_type, size_t device, uint32_t waits,
                      const char *what) noexcept with gil:
    """(before c is committed: its end is seen by the hook the logger adds)"""
    cmd_incref(c)                         # (the Command made here takes over this reference)
    try:
        command_logger(wrap_command(c, None), command_type, device, waits, what.decode() if what else "")
    except BaseException:
        pass                              # (logging must not fail a command)


# PYPLAT_DEBUG=refcounts for the native retains and releases: each one they answer is logged
# with the application's references it leaves (the core objects log their own references, as
# before). Read once per call, after the table lock is let go.
cdef int refcounts_logged = 0
cdef object count_logger = None       # (entry name, handle, the application's references left)


def set_refcounts_logging(bint on, logger):
    global refcounts_logged, count_logger
    count_logger = logger
    refcounts_logged = on and logger is not None


cdef long application_references(size_t h) noexcept nogil:
    """The application's references to a handle: a native event's own count, else the entry's
    (0: the handle is gone)."""
    cdef hent_t *e
    cdef long n = 0
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL:
        n = (<nevent_t *>h).refs if e.kind == PYPLAT_KIND_EVENT and e.flags == HF_NATIVE else e.api_refs
    pthread_mutex_unlock(&tab_lock)
    return n


cdef void log_count(const char *entry, size_t h) noexcept with gil:
    try:
        count_logger(entry.decode(), h, application_references(h))
    except BaseException:
        pass


cdef inline int32_t noted(const char *entry, size_t h, int32_t r) noexcept nogil:
    """A native retain's or release's result, logged when it answered and refcounts are on."""
    if refcounts_logged and r == CL_SUCCESS_:
        log_count(entry, h)
    return r
