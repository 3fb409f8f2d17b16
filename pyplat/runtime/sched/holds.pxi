# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Holds: a plan's launches and a queue's native events need Python objects kept alive (the
# program and buffers; the queue's context), which native code cannot retain. So the references
# are taken once, with the GIL (hold_acquire: by the Python path, or by the API layer's
# prime_ndrange when a native call deferred for want of them), native users are only counted
# (hold_use / hold_done), and the reaper drops the references when it finds no user left
# (hold_drop). What "taking" and "dropping" the references means is the layer above's: it
# installs the two hooks at start-up (set_hold_hooks; pyplat/core/queue.py), so the runtime never
# calls into a layer above except through them.
# ---------------------------------------------------------------------------------------------

cdef object take_references = None     # refs -> bool: False if one of them is gone already
cdef object drop_references = None     # refs -> None


def set_hold_hooks(take, drop):
    """Install what holding means: take(refs) -> bool takes the references `refs` stands for
    (False, taking nothing, if one of them is gone), drop(refs) drops them."""
    global take_references, drop_references
    take_references, drop_references = take, drop


cdef void hold_init(hold_t *h, pthread_mutex_t *lock) noexcept nogil:
    memset(h, 0, sizeof(hold_t))
    h.lock = lock


cdef inline void hold_check_idle(hold_t *h) noexcept nogil:
    """(h.lock held) No user left: let the reaper drop the references."""
    if h.users == 0 and h.held and not h.pinned and not h.reap_queued:
        h.reap_queued = 1
        hold_reap_push(h)


cdef int hold_use(hold_t *h) noexcept nogil:
    """One more native user if the references are held; 0 if not."""
    cdef int ok
    pthread_mutex_lock(h.lock)
    ok = h.held
    if ok:
        h.users += 1
    pthread_mutex_unlock(h.lock)
    return ok


cdef void hold_done(hold_t *h) noexcept nogil:
    cdef idle_fn fn = NULL
    cdef void *arg = NULL
    pthread_mutex_lock(h.lock)
    h.users -= 1
    if h.users == 0 and h.on_idle != NULL:    # the last user of a hold whose owner went
        fn, arg, h.on_idle = h.on_idle, h.idle_arg, NULL
        h.held, h.pinned = 0, 0
    else:
        hold_check_idle(h)
    pthread_mutex_unlock(h.lock)
    if fn != NULL:
        fn(arg)                               # (may free the struct h is in: h not touched after)


cdef bint hold_acquire(hold_t *h, object owner, object refs) except -1:
    """Hold the references `refs` stands for (GIL held; the take hook), keeping `owner` (the
    Python face of the struct h is in) alive meanwhile. False if they could not be taken."""
    cdef int held
    pthread_mutex_lock(h.lock)
    held = h.held
    pthread_mutex_unlock(h.lock)
    if held:
        return True
    if take_references is None:
        raise RuntimeError("the runtime's hold hooks are not installed (set_hold_hooks)")
    if not take_references(refs):
        return False
    Py_INCREF(owner)
    Py_INCREF(refs)
    pthread_mutex_lock(h.lock)
    held = h.held
    if not held:
        h.held = 1
        h.owner = <PyObject *>owner
        h.refs = <PyObject *>refs
        hold_check_idle(h)                  # no user may come: the reaper checks later
    pthread_mutex_unlock(h.lock)
    if held:                                # another thread was first
        drop_references(refs)
        Py_XDECREF(<PyObject *>refs)
        Py_XDECREF(<PyObject *>owner)
    return True


cdef void hold_pin(hold_t *h) noexcept nogil:
    """Held with nothing to take or drop: users need no Python reference, since what they use
    lives as long as the struct h is in (a buffer made natively: its record owns its bytes).
    Until hold_unpin_idle or hold_unpin; the reaper never sees it meanwhile."""
    pthread_mutex_lock(h.lock)
    h.held, h.pinned = 1, 1
    pthread_mutex_unlock(h.lock)


cdef int hold_unpin_idle(hold_t *h) noexcept nogil:
    """Unpin and let go if no user is left (1: no new user can come now); else 0, still pinned."""
    cdef int idle
    pthread_mutex_lock(h.lock)
    idle = h.users == 0
    if idle:
        h.held, h.pinned = 0, 0
    pthread_mutex_unlock(h.lock)
    return idle


cdef int hold_unpin_or_defer(hold_t *h, idle_fn fn, void *arg) noexcept nogil:
    """The owner of a pinned hold goes (a buffer made natively, released by the application):
    with no user left it is unpinned and let go, 1 (the caller frees what it owns now); else
    fn(arg) is called by the last user's hold_done instead, 0 (no new user may come: the owner
    can no longer be found). -1, nothing done, if the hold is not pinned."""
    cdef int r
    pthread_mutex_lock(h.lock)
    if not h.pinned or h.on_idle != NULL:
        r = -1
    elif h.users == 0:
        h.held, h.pinned = 0, 0
        r = 1
    else:
        h.on_idle, h.idle_arg = fn, arg
        r = 0
    pthread_mutex_unlock(h.lock)
    return r


cdef bint hold_unpin(hold_t *h, object owner, object refs) except -1:
    """A pinned hold becomes an ordinary one (GIL held; the Python object now exists): with users
    pending it holds `refs` (the take hook) until they are done, as hold_acquire would; with
    none it is not held. False if the references could not be taken."""
    cdef int installed = 0
    if take_references is None:
        raise RuntimeError("the runtime's hold hooks are not installed (set_hold_hooks)")
    if not take_references(refs):
        return False
    Py_INCREF(owner)
    Py_INCREF(refs)
    pthread_mutex_lock(h.lock)
    if h.pinned:
        h.pinned = 0
        if h.users > 0:
            h.owner, h.refs = <PyObject *>owner, <PyObject *>refs
            installed = 1
        else:
            h.held = 0
    pthread_mutex_unlock(h.lock)
    if not installed:
        drop_references(refs)
        Py_XDECREF(<PyObject *>refs)
        Py_XDECREF(<PyObject *>owner)
    return True


cdef void hold_drop(hold_t *h):
    """Reaper: drop the references if no user is left (GIL held). h may be freed after."""
    cdef PyObject *owner = NULL
    cdef PyObject *refs = NULL
    pthread_mutex_lock(h.lock)
    h.reap_queued = 0
    if h.users == 0 and h.held:
        h.held = 0
        owner, h.owner = h.owner, NULL
        refs, h.refs = h.refs, NULL
    pthread_mutex_unlock(h.lock)
    if owner != NULL:
        try:
            drop_references(<object>refs)
        except BaseException:
            sys.stderr.write(f"pyplat: clean-up failed:\n{traceback.format_exc()}")
        Py_XDECREF(refs)
        Py_XDECREF(owner)


cdef class QueueCore:
    """A queue's ordering state (qcore_t) and its driver and tracker, shared by the Python API
    path and the native fast path. Memory keys are integers: root memory objects' order keys or
    the ids of the HOST / STDOUT pseudo-objects, resolved by the caller (core/queue.py,
    merged_accesses)."""

    def __cinit__(self, Driver driver, QueueTracker tracker, int mode, context=None, device=None):
        self.driver, self.tracker, self.mode, self.context = driver, tracker, mode, context
        self.device = device
        if tracker is None:                  # (wrap_queue_core: a queue core made natively)
            return
        self.q = qcore_new(mode, driver.d, tracker.q, context_key(context), id(device))
        if trace_on:
            trace_event(TR_QUEUE, mode, tracker.q.trace_id, 0, pp_now_ns(), 0)
        if self.q == NULL:
            raise MemoryError()

    def __dealloc__(self):
        if self.q != NULL:
            qcore_decref(self.q)

    cpdef order(self, Command cmd, bint barrier, object accesses):
        """Link `cmd` after what it must follow. accesses: ((key, writes), ...) with distinct
        integer keys (core/queue.py, merged_accesses), or None when unknown (then it is a
        barrier in the automatic in-order mode)."""
        cdef access_t local[16]
        cdef access_t *acc = local
        cdef int n = 0, unknown = accesses is None
        if not unknown:
            n = len(accesses)
            if n > 16:
                acc = <access_t *>malloc(n * sizeof(access_t))
                if acc == NULL:
                    raise MemoryError()
            for i, (key, writes) in enumerate(accesses):
                acc[i].key, acc[i].writes = key, bool(writes)
        pthread_mutex_lock(&self.q.lock)
        order_locked(self.q, cmd.c, barrier, acc, n, unknown)
        pthread_mutex_unlock(&self.q.lock)
        if acc != local:
            free(acc)

    cpdef submit(self, Command cmd):
        """Count it among the queue's unfinished commands and hand it to the driver."""
        cmd._attach(self.tracker)
        cmd._commit()

    def hold_events(self, queue, refs):
        """Let the fast path hand out native events of this queue: the references `refs` stands
        for (the hold hooks take them) are held for them until the reaper finds none left;
        `queue` (the queue's Python object) is kept alive meanwhile and is events_owner."""
        return hold_acquire(&self.q.events, queue, refs)

    @property
    def holds_events(self):
        return bool(self.q.events.held)


cdef size_t context_key(context):
    """The key a context's objects are matched by in the fast path's checks: the API layer's
    native_key of a context it made natively, else the object's id."""
    return getattr(context, "native_key", 0) or id(context)


cdef QueueCore wrap_queue_core(qcore_t *q, Driver driver, object context, object device):
    """The Python face of a queue core made natively (the API layer's clCreateCommandQueue*):
    a reference to q and to its tracker; driver must be the one q submits to."""
    if driver.d != q.driver:
        raise ValueError("a queue core wrapped with another driver than its own")
    cdef QueueTracker tracker = QueueTracker(True)
    tracker.q = q.track
    pp_add(&q.track.refs, 1)
    cdef QueueCore core = QueueCore(driver, None, q.mode, context, device)
    core.tracker = tracker
    core.q = q
    qcore_incref(q)
    return core
