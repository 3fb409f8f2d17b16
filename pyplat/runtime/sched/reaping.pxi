# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Reap lists: Python-side clean-up, run by whichever thread holds the GIL in the runtime (waits,
# finish, enqueue) or by the reaper thread.
#   commands   with Python hooks or actions, once finished;
#   holds      with no native user left: their Python references are dropped (see "Holds").
# Native threads only push; a hold is pushed once until the reaper has looked at it.
# ---------------------------------------------------------------------------------------------

cdef pthread_mutex_t reap_lock
cdef pthread_cond_t reap_cv
cdef cmd_t *reap_head = NULL
cdef hold_t *reap_holds = NULL
cdef long reap_count = 0
DEF REAP_WAKE = 256            # wake the reaper at once when this many wait
DEF REAP_POLL_MS = 5
pthread_mutex_init(&reap_lock, NULL)
pthread_cond_init(&reap_cv, NULL)


cdef inline void reap_counted() noexcept nogil:
    """One more item (reap_lock held). The reaper polls (REAP_POLL_MS); it is woken only when the
    lists grow long, so that it does not compete for the GIL with the host after every command."""
    global reap_count
    reap_count += 1
    if reap_count == REAP_WAKE:
        pthread_cond_signal(&reap_cv)


cdef void reap_push(cmd_t *c) noexcept nogil:
    global reap_head
    pthread_mutex_lock(&reap_lock)
    c.reap_next = reap_head
    reap_head = c
    reap_counted()
    pthread_mutex_unlock(&reap_lock)


cdef void hold_reap_push(hold_t *h) noexcept nogil:
    """(h.lock held, h.reap_queued just set)"""
    global reap_holds
    pthread_mutex_lock(&reap_lock)
    h.reap_next = reap_holds
    reap_holds = h
    reap_counted()
    pthread_mutex_unlock(&reap_lock)


_reap_mutex = threading.RLock()
cdef long reaping = 0


cdef bint reap_pending() noexcept nogil:
    """Whether clean-up is waiting or under way (a finish promises it is done when it returns)."""
    return pp_load(&reap_count) != 0 or pp_load(&reaping) != 0


def reap():
    """Run the Python clean-up of the reap lists. Any thread holding the GIL."""
    cdef cmd_t *items
    cdef cmd_t *c
    cdef hold_t *holds
    cdef hold_t *h
    cdef PyObject *hooks
    cdef PyObject *action
    global reaping, reap_head, reap_holds, reap_count
    if pp_load(&reap_count) == 0 and pp_load(&reaping) == 0:
        return
    with _reap_mutex:                  # callers return only after a concurrent batch is done
        pp_add(&reaping, 1)
        with nogil:
            pthread_mutex_lock(&reap_lock)
            items, holds = reap_head, reap_holds
            reap_head, reap_holds = NULL, NULL
            reap_count = 0
            pthread_mutex_unlock(&reap_lock)
        while items != NULL:
            c = items
            items = c.reap_next
            pthread_mutex_lock(&c.lock)
            hooks, action = c.hooks, c.action
            c.hooks = NULL
            c.action = NULL
            pthread_mutex_unlock(&c.lock)
            if hooks != NULL:
                for fn in reversed(<list>hooks):
                    try:
                        fn()
                    except BaseException:
                        sys.stderr.write(f"pyplat: clean-up failed:\n{traceback.format_exc()}")
            Py_XDECREF(hooks)
            Py_XDECREF(action)
            with nogil:
                cmd_decref(c)
        while holds != NULL:
            h = holds
            holds = h.reap_next
            hold_drop(h)
        pp_add(&reaping, -1)


cdef void reap_wait(long ms) noexcept nogil:
    cdef timespec ts
    pp_deadline(&ts, ms)
    pthread_mutex_lock(&reap_lock)
    if reap_count == 0:
        pthread_cond_timedwait(&reap_cv, &reap_lock, &ts)
    pthread_mutex_unlock(&reap_lock)


_reaper = None


def _reaper_loop():
    while True:
        with nogil:
            reap_wait(REAP_POLL_MS)
        reap()


def start_reaper():
    """A daemon thread that runs clean-up when no API call does (destructor callbacks etc.)."""
    global _reaper
    if _reaper is None:
        _reaper = threading.Thread(target=_reaper_loop, name="pyplat-reaper", daemon=True)
        _reaper.start()
