# Part of pyplat/api/_native.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# User events natively: clCreateUserEvent, clSetUserEventStatus and (through n_retain_event and
# n_release_event) their retains and releases, without the GIL (docs/runtime.md, "Fast path").
#
# A native user event is a native event (nevent_t, HF_NATIVE) without a queue. Its command is the
# runtime's K_USER: CL_SUBMITTED, with a pending reference that setting the status drops, as
# Command(K_USER) has. Its context is held as one application reference of the context's handle
# (hent_t.api_refs, native_refs.pxi): so only a context whose count is kept there (made by
# clCreateContext*) serves, and CL_CONTEXT_REFERENCE_COUNT counts the event as it counts a
# Python user event's retain. Native commands, launches, clWaitForEvents and the status query use
# it like any native event. The first Python entry that needs it (info, callbacks, profiling, a
# wait list on the Python path, an error to report) adopts it (adopt_user_event): a core
# UserEvent takes over its command and whether its status was set, the context reference
# becomes that UserEvent's own retain, and the event's count becomes the application count of
# its table entry (native_refs.pxi), so that retains and releases stay native.
# ---------------------------------------------------------------------------------------------
from pyplat.runtime._sched cimport K_USER, ST_SUBMITTED, cmd_set_status

cdef extern from "pyplat_handle.h":
    void *PYPLAT_DEFER_HANDLE

cdef object user_event_factory = None


def set_user_event_factory(fn):
    """fn(context, command, status_set) -> the core UserEvent of a native user event being
    adopted, holding one reference for the application's; it takes over the context reference
    the event held (set by the bridge)."""
    global user_event_factory
    user_event_factory = fn


cdef size_t n_create_user_event(size_t context, size_t errcode_ret) noexcept nogil:
    return checked_first_made(create_user_event(context, errcode_ret), "clCreateUserEvent", context,
                              PYPLAT_KIND_CONTEXT, CL_INVALID_CONTEXT, errcode_ret)


cdef size_t create_user_event(size_t context, size_t errcode_ret) noexcept nogil:
    """clCreateUserEvent on a context whose application references are counted in the table;
    PYPLAT_DEFER_HANDLE (errcode_ret untouched) for anything else. One pass under the table lock:
    the context's check and reference, the handle's memory (a spare, as hmem_new), the entry."""
    cdef hent_t *e
    cdef size_t context_id
    cdef nevent_t *s = NULL
    cdef cmd_t *c = cmd_new(K_USER)
    if c == NULL:
        return <size_t>PYPLAT_DEFER_HANDLE
    c.status = ST_SUBMITTED
    c.times[1] = c.times[0]
    c.refs += 1                            # pending until its status is set
    pthread_mutex_lock(&tab_lock)
    e = tab_find(context)
    if e != NULL and e.kind == PYPLAT_KIND_CONTEXT and e.api_refs > 0 and (e.obj != NULL or e.ptr != NULL):
        s = <nevent_t *>hmem_take_locked()
    if s == NULL:
        pthread_mutex_unlock(&tab_lock)
        cmd_free(c)
        return <size_t>PYPLAT_DEFER_HANDLE
    e.api_refs += 1                        # the event's reference to its context
    context_id = (<nctx_t *>e.ptr).context if e.ptr != NULL else <size_t>e.obj   # its key
    s.refs = 1
    s.command_type = CL_COMMAND_USER
    s.context_handle = context
    publish_locked(&s.h, PYPLAT_KIND_EVENT, HF_NATIVE, c, context_id, 0)
    pthread_mutex_unlock(&tab_lock)
    if errcode_ret != 0:
        (<int32_t *>errcode_ret)[0] = CL_SUCCESS_
    return <size_t>s


cdef int32_t n_set_user_event_status(size_t event, int32_t status) noexcept nogil:
    return checked_first(set_user_event_status(event, status), "clSetUserEventStatus", event, PYPLAT_KIND_EVENT,
                         CL_INVALID_EVENT)


cdef int32_t set_user_event_status(size_t event, int32_t status) noexcept nogil:
    """clSetUserEventStatus(CL_COMPLETE or an error) of a native user event set for the first
    time: its dependants run, or fail with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST. Every
    other call (another status, a second set, an adopted or Python event) is the Python entry's,
    which adopts the event and answers with the spec's code."""
    cdef hent_t *e
    cdef nevent_t *s
    cdef cmd_t *c = NULL
    if status > 0:
        return PYPLAT_DEFER
    pthread_mutex_lock(&tab_lock)
    e = tab_find(event)
    if e != NULL and e.kind == PYPLAT_KIND_EVENT and e.flags == HF_NATIVE:
        s = <nevent_t *>event
        if s.context_handle != 0 and not s.status_set:
            s.status_set = 1
            c = <cmd_t *>e.ptr
            cmd_incref(c)
    pthread_mutex_unlock(&tab_lock)
    if c == NULL:
        return PYPLAT_DEFER
    cmd_set_status(c, status)              # drops the pending reference; reaping: the reaper's
    cmd_decref(c)
    return CL_SUCCESS_


cdef int32_t user_release_locked(hent_t *e, nevent_t *s, cmd_t **gone) noexcept nogil:
    """(tab_lock held) n_release_event on a native user event: one reference fewer. The last one
    lets go of the context's reference, unless that is the context's last application reference
    (the Python entry's to drop: it adopts the event, then releases it); *gone is then the
    command, whose table reference the caller drops."""
    cdef hent_t *ce
    cdef cmd_t *c
    if s.refs > 1:
        s.refs -= 1
        return CL_SUCCESS_
    ce = tab_find(s.context_handle)
    if ce == NULL or ce.api_refs <= 1:
        return PYPLAT_DEFER
    ce.api_refs -= 1
    s.refs = 0
    c = <cmd_t *>e.ptr
    if not s.status_set:                   # nothing can set it now: its pending reference goes
        pp_add(&c.refs, -1)                # (the table's keeps it until the caller's decref)
    tab_delete(e)
    bury(&s.h)
    gone[0] = c
    return CL_SUCCESS_


cdef bint is_native_user_event(size_t h) noexcept nogil:
    cdef hent_t *e
    cdef bint user = False
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_EVENT and e.flags == HF_NATIVE:
        user = (<nevent_t *>h).context_handle != 0
    pthread_mutex_unlock(&tab_lock)
    return user


cdef object adopt_user_event(size_t h):
    """adopt_event for a native user event: its core UserEvent, made by user_event_factory with
    the event's command, whether it was set and its context, the event's count kept as the
    entry's application count; None if h is not one (any more)."""
    cdef hent_t *e
    cdef hent_t *ce
    cdef nevent_t *s = NULL
    cdef cmd_t *c = NULL
    cdef PyObject *ctx = NULL
    cdef long refs = 0
    cdef int status_set = 0
    cdef size_t unadopted_context = 0
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if (e != NULL and e.kind == PYPLAT_KIND_EVENT and e.flags == HF_NATIVE
            and (<nevent_t *>h).context_handle != 0):
        s = <nevent_t *>h
        ce = tab_find(s.context_handle)    # (alive: the event holds an application reference)
        if ce != NULL and ce.obj != NULL:
            e.flags |= HF_ADOPTED
            refs, status_set = s.refs, s.status_set
            c = <cmd_t *>e.ptr
            cmd_incref(c)
            ctx = ce.obj
            Py_INCREF(<object>ctx)
        elif ce != NULL:                   # a context made natively (native_contexts.pxi)
            unadopted_context = s.context_handle
    pthread_mutex_unlock(&tab_lock)
    if unadopted_context != 0:             # ... adopted first
        return adopt_user_event(h) if adopt_missing(unadopted_context) is not None else None
    if c == NULL:
        return None
    context = <object>ctx
    Py_XDECREF(ctx)
    obj = user_event_factory(context, wrap_command(c, None), bool(status_set))
    Py_INCREF(obj)
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)                        # (still there: only Python, holding the GIL, drops it)
    if e != NULL:
        e.obj = <PyObject *>obj
        e.api_refs = refs
        obj_kept = True
    else:
        obj_kept = False
    pthread_mutex_unlock(&tab_lock)
    if not obj_kept:
        Py_XDECREF(<PyObject *>obj)
    return obj
