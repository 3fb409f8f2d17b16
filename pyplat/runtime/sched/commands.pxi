# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Commands: reference counts, links, status
# ---------------------------------------------------------------------------------------------

cdef cmd_t *cmd_new(int kind) noexcept nogil:
    cdef cmd_t *c = <cmd_t *>calloc(1, sizeof(cmd_t))
    if c == NULL:
        return NULL
    pthread_mutex_init(&c.lock, NULL)
    pthread_cond_init(&c.done, NULL)
    c.refs = 1
    c.wait_count = 1               # enqueue's hold until linking is done
    c.status = ST_QUEUED
    c.kind = kind
    if kind != K_USER or trace_on:          # (a user event has no profiling info: no clock read)
        c.times[0] = pp_now_ns()
    trace_command_new(c)
    return c


cdef void cmd_free(cmd_t *c) noexcept nogil:
    cdef cb_t *cb = c.callbacks
    cdef cb_t *nxt
    while cb != NULL:
        nxt = cb.next
        free(cb)
        cb = nxt
    free(c.notify)
    free(c.args)
    free(c.patch)
    if c.stream_after != NULL:
        cmd_decref(c.stream_after)
    if c.plan != NULL:                       # a launch that was never committed
        hold_done(c.plan.hold)
        plan_decref(c.plan)
    mem_holds_done(c)
    pthread_mutex_destroy(&c.lock)
    pthread_cond_destroy(&c.done)
    free(c)


# cmd_incref / cmd_decref: inline in _sched.pxd.


cdef inline void mem_holds_done(cmd_t *c) noexcept nogil:
    """A native command's buffers (api/_native.pyx) are no longer used by it."""
    cdef int i
    for i in range(4):
        if c.mem_holds[i] != NULL:
            hold_done(c.mem_holds[i])
            c.mem_holds[i] = NULL


cdef void queue_done(qtrack_t *q) noexcept nogil:
    pthread_mutex_lock(&q.lock)
    q.count -= 1
    if q.count == 0:
        pthread_cond_broadcast(&q.cv)
    pthread_mutex_unlock(&q.lock)
    qtrack_decref(q)


cdef void qtrack_decref(qtrack_t *q) noexcept nogil:
    if pp_add(&q.refs, -1) == 0:
        pthread_mutex_destroy(&q.lock)
        pthread_cond_destroy(&q.cv)
        free(q)


# Two kinds of link (docs/runtime.md, "When a command fails"). OpenCL 3.0, clEnqueue*: a
# command fails with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST when "the execution status of
# any of the events in event_wait_list is a negative integer value" -- its *wait list*, so a
# wait-list link (`link`) passes a failure on. The queue's own order (the in-order predecessor,
# buffer conflicts, barriers and markers without a wait list: `link_order`) only orders
# execution: a failed predecessor is finished ("terminated"), and what follows it runs. A
# notify-list entry of an order link is tagged in the pointer's low bit (cmd_t is calloc'ed,
# so at least 8-aligned), read by the broadcast in cmd_set_status.
DEF ORDER_TAG = 1


cdef inline int link_kind(cmd_t *waiter, cmd_t *ev, size_t tag) noexcept nogil:
    """Make `waiter` wait for `ev`; an already finished event adds no link. 1 if linked."""
    cdef cmd_t **grown
    if trace_on:
        trace_edge(waiter, ev, tag, ev.status > ST_COMPLETE)
    pthread_mutex_lock(&ev.lock)
    if ev.status > ST_COMPLETE:
        if ev.n_notify == ev.cap_notify:
            ev.cap_notify = ev.cap_notify * 2 if ev.cap_notify else 4
            grown = <cmd_t **>realloc(ev.notify, ev.cap_notify * sizeof(cmd_t *))
            if grown == NULL:
                pthread_mutex_unlock(&ev.lock)
                abort_oom()
            ev.notify = grown
        ev.notify[ev.n_notify] = <cmd_t *>(<size_t>waiter | tag)
        ev.n_notify += 1
        pp_add(&waiter.wait_count, 1)
        if waiter.kind == K_STREAM:               # (stream_driver.pxi: ahead of time or not)
            if tag and ev.kind == K_STREAM and ev.driver == waiter.driver and waiter.stream_after == NULL:
                waiter.stream_after = ev
                pp_add(&ev.refs, 1)
            else:
                waiter.stream_links_other = 1
        pthread_mutex_unlock(&ev.lock)
        return 1
    if ev.status < 0 and not tag:
        pp_store(&waiter.failed, 1)
    pthread_mutex_unlock(&ev.lock)
    return 0


cdef int link(cmd_t *waiter, cmd_t *ev) noexcept nogil:
    """A wait-list entry: `waiter` waits for `ev` and fails if it failed. 1 if linked."""
    return link_kind(waiter, ev, 0)


cdef int link_order(cmd_t *waiter, cmd_t *ev) noexcept nogil:
    """The queue's order: `waiter` runs after `ev` has finished, whatever its status. 1 if linked."""
    return link_kind(waiter, ev, ORDER_TAG)


cdef extern from "<stdlib.h>" nogil:
    void abort()


cdef void abort_oom() noexcept nogil:
    abort()


cdef void fire_callbacks(cmd_t *c, int status) noexcept nogil:
    """Call each C callback due at `status` exactly once (outside the lock)."""
    cdef cb_t *cb
    cdef cb_t *due
    while True:
        due = NULL
        pthread_mutex_lock(&c.lock)
        cb = c.callbacks
        while cb != NULL:
            if not cb.fired and (status < 0 or status <= cb.trigger):
                cb.fired = 1
                due = cb
                break
            cb = cb.next
        pthread_mutex_unlock(&c.lock)
        if due == NULL:
            return
        due.fn(due.handle, status, due.user)


cdef void cmd_set_status(cmd_t *c, int status) noexcept nogil:
    """Status change; on completion or failure: C callbacks, broadcast, wake host waiters."""
    cdef cmd_t **waiters = NULL
    cdef int n = 0, i, needs_reap = 0
    cdef unsigned long long t = pp_now_ns() if c.kind != K_USER or trace_on else 0   # (as cmd_new)
    cdef cmd_t *w
    cdef size_t entry
    pthread_mutex_lock(&c.lock)
    if c.status <= ST_COMPLETE or status >= c.status:
        pthread_mutex_unlock(&c.lock)
        return
    if status == ST_SUBMITTED:
        c.times[1] = t
    elif status == ST_RUNNING:
        c.times[2] = t
    else:
        if c.times[1] == 0:
            c.times[1] = t
        if c.times[2] == 0:
            c.times[2] = t
        if c.times[3] == 0:
            c.times[3] = t
        c.times[4] = t
        waiters, n = c.notify, c.n_notify
        c.notify, c.n_notify, c.cap_notify = NULL, 0, 0
        needs_reap = c.action != NULL or c.hooks != NULL
    c.status = status
    pthread_mutex_unlock(&c.lock)
    if trace_on and status <= ST_COMPLETE:
        trace_command(c, status)
    fire_callbacks(c, status)
    if status > ST_COMPLETE:
        return
    if needs_reap:
        cmd_incref(c)
        reap_push(c)
    if c.plan != NULL:                       # before queue_done: a clFinish then sees its clean-up
        hold_done(c.plan.hold)
        plan_decref(c.plan)
        c.plan = NULL
    mem_holds_done(c)
    for i in range(n):                       # the default broadcast
        entry = <size_t>waiters[i]
        w = <cmd_t *>(entry & ~<size_t>ORDER_TAG)
        if status < 0 and not (entry & ORDER_TAG):    # a wait-list link (above)
            pp_store(&w.failed, 1)
        w.driver.notify(w.driver, w, c)
    free(waiters)
    if c.queue != NULL:                      # before waking its waiters: a program that waited
        queue_done(c.queue)                  # for it finds its queue with nothing unfinished (a
        c.queue = NULL                       # queue made natively is then released natively)
    pthread_mutex_lock(&c.lock)
    c.finalized = 1
    pthread_cond_broadcast(&c.done)
    pthread_mutex_unlock(&c.lock)
    cmd_decref(c)                            # the pending reference taken at commit


cdef void cmd_commit(cmd_t *c) noexcept nogil:
    """Linking done: SUBMITTED, hand over to the driver, drop enqueue's hold on the wait count."""
    pp_add(&c.refs, 1)                           # pending: until completion
    cmd_set_status(c, ST_SUBMITTED)
    c.driver.submit(c.driver, c)
    default_notify(c.driver, c, NULL)


cdef void cmd_commit_nop(cmd_t *c) noexcept nogil:
    """cmd_commit of a command with nothing to run (K_NOP: a marker, a barrier): when nothing
    holds it back it completes here, on the committing thread, instead of waking a worker only
    to set its status (a host loop of markers then leaves no chain of them for the pool)."""
    pp_add(&c.refs, 1)
    cmd_set_status(c, ST_SUBMITTED)
    c.driver.submit(c.driver, c)
    if pp_add(&c.wait_count, -1) == 0:
        execute(c)


cdef void cmd_attach(cmd_t *c, qtrack_t *q) noexcept nogil:
    """Count c among the queue's unfinished commands (right before commit)."""
    c.queue = q
    pp_add(&q.refs, 1)
    pthread_mutex_lock(&q.lock)
    q.count += 1
    pthread_mutex_unlock(&q.lock)


# A host thread about to block on a command or queue polls this long first: waking a blocked
# thread costs tens of µs on virtual machines (up to hundreds when its CPU idles), more than
# many waits last (bench/: kernel_imbalance with few kernels). Only while a CPU is spare
# (host_may_poll): a polling host on a CPU a worker needs would delay that worker instead.
DEF HOST_POLL_NS = 50000

cdef inline void poll_until_set(int *flag) noexcept nogil:
    cdef unsigned long long until
    if pp_load_i(flag):
        return                    # (set already: no clock read, ~20 ns of a wait on a done event)
    until = pp_now_ns() + HOST_POLL_NS
    while not pp_load_i(flag) and host_may_poll() and pp_now_ns() < until:
        pp_pause()


cdef inline void poll_until_zero(long *count) noexcept nogil:
    cdef unsigned long long until
    if pp_load(count) <= 0:
        return                    # (an idle queue's clFinish reads no clock)
    until = pp_now_ns() + HOST_POLL_NS
    while pp_load(count) > 0 and host_may_poll() and pp_now_ns() < until:
        pp_pause()


cdef void track_join(qtrack_t *q) noexcept nogil:
    """Until every command counted by q has finished."""
    poll_until_zero(&q.count)
    pthread_mutex_lock(&q.lock)
    while q.count > 0:
        pthread_cond_wait(&q.cv, &q.lock)
    pthread_mutex_unlock(&q.lock)


cdef void cmd_wait(cmd_t *c) noexcept nogil:
    poll_until_set(&c.finalized)
    pthread_mutex_lock(&c.lock)
    while not c.finalized:
        pthread_cond_wait(&c.done, &c.lock)
    pthread_mutex_unlock(&c.lock)


cdef void default_notify(driver_t *d, cmd_t *c, cmd_t *ev) noexcept nogil:
    if pp_add(&c.wait_count, -1) == 0:
        c.driver.ready(c.driver, c)


cdef void default_join(driver_t *d, cmd_t *c) noexcept nogil:
    cmd_wait(c)


cdef void noop_submit(driver_t *d, cmd_t *c) noexcept nogil:
    pass


cdef void noop_flush(driver_t *d) noexcept nogil:
    pass
