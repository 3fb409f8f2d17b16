# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Queue ordering (qcore_t; core/queue.py explains the three modes): one implementation for the
# Python API path and the native fast path. The queue's mutex guards it. Lock rule of the
# native structures (queue, plan, handle table, command locks): no Python code runs while one is
# held, and no thread waits for the GIL while holding one -- so a thread holding the GIL may
# take them without releasing it (their sections are short), and no deadlock can arise.
# ---------------------------------------------------------------------------------------------

ORDER_SERIAL, ORDER_AUTO, ORDER_OUT_OF_ORDER = 0, 1, 2
DEF M_SERIAL = 0
DEF M_AUTO = 1
DEF M_OUT_OF_ORDER = 2
DEF PRUNE_MIN = 64


cdef void cmds_push(cmd_t ***arr, long *n, long *cap, cmd_t *c) noexcept nogil:
    """Append c to a growable array of command references (takes one)."""
    cdef cmd_t **grown
    if n[0] == cap[0]:
        cap[0] = cap[0] * 2 if cap[0] else 8
        grown = <cmd_t **>realloc(arr[0], cap[0] * sizeof(cmd_t *))
        if grown == NULL:
            abort_oom()
        arr[0] = grown
    cmd_incref(c)
    arr[0][n[0]] = c
    n[0] += 1


cdef long cmds_prune(cmd_t **arr, long n) noexcept nogil:
    """Drop the finished commands of arr[:n]; returns how many are left."""
    cdef long i, k = 0
    for i in range(n):
        if pp_load_i(&arr[i].status) > ST_COMPLETE:
            arr[k] = arr[i]
            k += 1
        else:
            cmd_decref(arr[i])
    return k


cdef void cmds_clear(cmd_t **arr, long n) noexcept nogil:
    cdef long i
    for i in range(n):
        cmd_decref(arr[i])


cdef inline void cmd_replace(cmd_t **slot, cmd_t *c) noexcept nogil:
    cdef cmd_t *old = slot[0]
    cmd_incref(c)
    slot[0] = c
    if old != NULL:
        cmd_decref(old)


cdef void sync_grow(qcore_t *q) noexcept nogil:
    cdef spoint_t *old = q.sync
    cdef long n = q.sync_cap, i
    cdef size_t mask, j
    q.sync_cap = n * 2 if n else 16
    q.sync = <spoint_t *>calloc(q.sync_cap, sizeof(spoint_t))
    if q.sync == NULL:
        abort_oom()
    mask = q.sync_cap - 1
    for i in range(n):
        if old[i].key != 0:
            j = key_hash(old[i].key) & mask
            while q.sync[j].key != 0:
                j = (j + 1) & mask
            q.sync[j] = old[i]
    free(old)


cdef spoint_t *sync_point(qcore_t *q, size_t key) noexcept nogil:
    """The synchronisation point of a memory key, made empty if it has none."""
    cdef size_t mask, j
    if (q.sync_used + 1) * 2 > q.sync_cap:
        sync_grow(q)
    mask = q.sync_cap - 1
    j = key_hash(key) & mask
    while q.sync[j].key != 0 and q.sync[j].key != key:
        j = (j + 1) & mask
    if q.sync[j].key == 0:
        q.sync[j].key = key
        q.sync_used += 1
    return &q.sync[j]


cdef void sync_clear(qcore_t *q) noexcept nogil:
    cdef long i
    cdef spoint_t *sp
    for i in range(q.sync_cap):
        sp = &q.sync[i]
        if sp.key != 0:
            if sp.writer != NULL:
                cmd_decref(sp.writer)
            cmds_clear(sp.readers, sp.n_readers)
            free(sp.readers)
            memset(sp, 0, sizeof(spoint_t))
    q.sync_used = 0


cdef inline void order_reason(int reason) noexcept nogil:
    """What the next order links are, for the trace (R_*, tracing.pxi)."""
    global pp_trace_reason
    if trace_on:
        pp_trace_reason = reason


cdef void order_locked(qcore_t *q, cmd_t *c, int barrier, access_t *acc, int n_acc,
                       int unknown) noexcept nogil:
    """Link c after what it must follow (q.lock held). acc: its accesses with distinct keys;
    unknown: they are not known (then c is a barrier in the automatic in-order mode). Order
    links only: a failed command before c does not fail c (link_order, commands.pxi)."""
    cdef spoint_t *sp
    cdef long i, j, n
    if q.mode == M_SERIAL:
        order_reason(R_SERIAL)
        if q.last != NULL:
            link_order(c, q.last)
        cmd_replace(&q.last, c)
        return
    order_reason(R_BARRIER)
    if barrier or (q.mode == M_AUTO and unknown):
        for i in range(q.n_since):
            link_order(c, q.since[i])
        if q.barrier != NULL:
            link_order(c, q.barrier)
        cmd_replace(&q.barrier, c)
        cmds_clear(q.since, q.n_since)
        q.n_since = 0
        if q.sync_used:
            sync_clear(q)
        return
    if q.barrier != NULL:
        link_order(c, q.barrier)
    if q.mode == M_AUTO:
        order_reason(R_BUFFER)
        for i in range(n_acc):
            sp = sync_point(q, acc[i].key)
            if acc[i].writes:
                if sp.writer != NULL:
                    link_order(c, sp.writer)
                for j in range(sp.n_readers):
                    link_order(c, sp.readers[j])
                cmds_clear(sp.readers, sp.n_readers)
                sp.n_readers = 0
                cmd_replace(&sp.writer, c)
            else:
                if sp.writer != NULL:
                    link_order(c, sp.writer)
                cmds_push(&sp.readers, &sp.n_readers, &sp.cap_readers, c)
                n = sp.n_readers
                if n >= PRUNE_MIN and n & (n - 1) == 0:      # amortised: at powers of two
                    sp.n_readers = cmds_prune(sp.readers, n)
    cmds_push(&q.since, &q.n_since, &q.cap_since, c)
    if q.n_since > q.prune_at:
        q.n_since = cmds_prune(q.since, q.n_since)
        q.prune_at = max(PRUNE_MIN, 2 * q.n_since)


cdef qcore_t *qcore_new(int mode, driver_t *driver, qtrack_t *track, size_t context,
                        size_t device) noexcept nogil:
    cdef qcore_t *q = <qcore_t *>calloc(1, sizeof(qcore_t))
    if q == NULL:
        return NULL
    pthread_mutex_init(&q.lock, NULL)
    q.refs = 1
    q.mode, q.driver, q.track, q.context, q.device = mode, driver, track, context, device
    pp_add(&track.refs, 1)
    q.prune_at = PRUNE_MIN
    hold_init(&q.events, &q.lock)
    return q


cdef void qcore_decref(qcore_t *q) noexcept nogil:
    if pp_add(&q.refs, -1) != 0:
        return
    if q.last != NULL:
        cmd_decref(q.last)
    if q.barrier != NULL:
        cmd_decref(q.barrier)
    cmds_clear(q.since, q.n_since)
    free(q.since)
    sync_clear(q)
    free(q.sync)
    qtrack_decref(q.track)
    pthread_mutex_destroy(&q.lock)
    free(q)
