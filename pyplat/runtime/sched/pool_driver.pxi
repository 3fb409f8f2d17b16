# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Thread-pool driver: a queue per worker, round robin, stealing, shared kernels
# ---------------------------------------------------------------------------------------------

DEF MAX_BOARD = 256
# An idle worker polls for work this long before it sleeps: pausing at first, then yielding
# between polls. A futex wake-up costs tens to hundreds of µs on virtual machines (their idle
# vCPUs halt), more than the gaps between bursts of work (bench/: kernel_imbalance at 16 workers
# is 3-20× slower with a 50 µs window). The cost: where more threads run than there are CPUs
# (the host and as many workers as cores on a loaded machine), a polling worker can delay a
# thread that needs its CPU (sched_yield seldom hands it over), by up to a time slice: there
# PYPLAT_IDLE_US sets the window (µs; default 1000, at least the pausing part).
DEF IDLE_PAUSE_NS = 20000
cdef unsigned long long IDLE_POLL_NS = 1000000
DEF WORK_POLL_EVERY = 8         # pausing idle workers read the shared work counter 1 poll in 8
# A queued command is left to its queue's owner this long (pp_ticks: ~0.5-2 µs) before others
# may steal it: an idle owner polls its queue every few hundred ns, and a command that moves to
# another core costs cache misses (without this, a serial chain spread over every idle worker).
DEF STEAL_AFTER_TICKS = 2000

cdef struct worker_t:
    pthread_mutex_t lock
    cmd_t *head
    cmd_t *tail
    unsigned long long head_pushed   # head's pushed, for thieves (who may not read *head)
    long n
    int id
    void *pool
    pthread_t thread
    long executed
    long stolen
    long chunks

cdef struct pool_t:
    int nworkers
    worker_t *workers
    long rr
    long work
    long sleepers
    long spinning                # idle workers still looking for work (not asleep)
    pthread_mutex_t idle_lock
    pthread_cond_t idle_cv
    pthread_mutex_t board_lock
    cmd_t *board[MAX_BOARD]
    long n_board
    long wakeups
    long pad0[8]
    long hint                    # the worker that most recently went idle (on its own line)
    long pad1[8]


cdef void pool_wake(pool_t *p, int all_) noexcept nogil:
    if pp_load(&p.sleepers) > 0:
        pthread_mutex_lock(&p.idle_lock)
        if all_:
            pthread_cond_broadcast(&p.idle_cv)
        else:
            pthread_cond_signal(&p.idle_cv)
        p.wakeups += 1
        pthread_mutex_unlock(&p.idle_lock)
        if trace_on:
            trace_event(TR_WAKE, all_, 0, 0, pp_now_ns(), 0)


# Counters for the trace, from values at hand: the pool's count of waiting commands as the
# atomic that changed it returned, and each worker's own busy/idle changes (reading the shared
# counts the idle workers write would cost cache misses on every command).
cdef inline void trace_ready_count(long n) noexcept nogil:
    if trace_on:
        trace_event(TR_COUNT, 0, n, 0, pp_now_ns(), 0)


cdef inline void trace_busy(int busy) noexcept nogil:
    if trace_on:
        trace_event(TR_COUNT, 1, busy, 0, pp_now_ns(), 0)


cdef long push(worker_t *w, cmd_t *c) noexcept nogil:
    cdef long n
    c.next = NULL
    c.pushed = pp_ticks()
    pthread_mutex_lock(&w.lock)
    if w.tail != NULL:
        w.tail.next = c
    else:
        w.head = c
        w.head_pushed = c.pushed
    w.tail = c
    w.n += 1
    n = w.n
    pthread_mutex_unlock(&w.lock)
    return n


cdef cmd_t *pop(worker_t *w, unsigned long long thief_now) noexcept nogil:
    """The oldest command of w's queue, for its owner (thief_now = 0) or a thief (pp_ticks()).
    Thieves leave commands younger than STEAL_AFTER_TICKS to the owner, and give up if the queue
    is locked (its owner or another thief is there) instead of queueing on the lock."""
    cdef cmd_t *c
    if w.head == NULL:              # racy peeks: cheap for empty queues
        return NULL
    if thief_now:
        if <long long>(thief_now - w.head_pushed) < STEAL_AFTER_TICKS or pthread_mutex_trylock(&w.lock) != 0:
            return NULL
    else:
        pthread_mutex_lock(&w.lock)
    c = w.head
    if c != NULL:
        w.head = c.next
        if w.head == NULL:
            w.tail = NULL
        else:
            w.head_pushed = w.head.pushed
        w.n -= 1
    pthread_mutex_unlock(&w.lock)
    return c


cdef void pool_ready(driver_t *d, cmd_t *c) noexcept nogil:
    cdef pool_t *p = <pool_t *>d.state
    cdef long n, i
    if pool_respawn:                    # a forked child's first command (forking.pxi)
        pool_start_threads(p)
    trace_ready_count(pp_add(&p.work, 1))
    if pp_worker_pool == <void *>p:
        # A worker readied it (a dependant of what it just ran): keep it local, and wake
        # another worker only if there is more work here than this worker will take next.
        n = push(&p.workers[pp_worker_id], c)
        if n > 1:
            pool_wake(p, 0)
    else:
        # A lone command goes to the worker that went idle last: it watches its own queue, so
        # it needs no wake-up, and its caches hold the queue's previous command (a serial chain
        # stays on one core). If it is falling asleep just now, it re-reads p.work (raised
        # above, before the hint was read) under idle_lock and stays awake.
        i = pp_load(&p.hint) if pp_load(&p.work) == 1 else -1
        if i >= 0:
            push(&p.workers[i], c)
            return
        # Several are spread round robin.
        i = pp_add(&p.rr, 1) % p.nworkers
        push(&p.workers[i], c)
        # While idle workers still spinning outnumber the waiting commands, they will steal
        # this one: waking a sleeper would cost this (host) thread a futex call per command.
        # No wake-up is lost: p.work was raised before this test, and a worker leaving the spin
        # phase re-reads it under idle_lock before sleeping.
        if pp_load(&p.work) > pp_load(&p.spinning):
            pool_wake(p, 0)


cdef void board_remove(pool_t *p, cmd_t *c) noexcept nogil:
    cdef long i
    pthread_mutex_lock(&p.board_lock)
    if c.on_board:
        c.on_board = 0
        for i in range(p.n_board):
            if p.board[i] == c:
                p.board[i] = p.board[p.n_board - 1]
                p.n_board -= 1
                break
        pp_add(&p.work, -1)
        pthread_mutex_unlock(&p.board_lock)
        cmd_decref(c)                        # the board's reference
        return
    pthread_mutex_unlock(&p.board_lock)


cdef void participate(pool_t *p, worker_t *w, cmd_t *c) noexcept nogil:
    """Run chunks of a shared kernel; whoever runs its last group completes it."""
    cdef unsigned long long t0 = pp_now_ns() if trace_on else 0
    cdef int last
    w.chunks += 1
    last = run_groups(c, p.nworkers)
    trace_run(c, t0)
    if last:
        board_remove(p, c)
        c.times[3] = pp_now_ns()
        cmd_set_status(c, groups_status(c))
    elif pp_load(&c.next_group) >= c.total:
        board_remove(p, c)


cdef inline void unhint(pool_t *p, worker_t *w) noexcept nogil:
    """w is no longer idle: lone commands no longer go to it (a read first: a failed
    compare-and-swap would still take the line)."""
    if pp_load(&p.hint) == w.id:
        pp_cas(&p.hint, w.id, -1)


cdef void stop_spinning(pool_t *p, worker_t *w) noexcept nogil:
    """An idle worker found work: it no longer counts as spinning. If more work is waiting, wake
    a sleeper, since pool_ready may have skipped that while this worker was spinning."""
    unhint(p, w)
    pp_add(&p.spinning, -1)
    trace_busy(1)
    if pp_load(&p.work) > 1:
        pool_wake(p, 0)


cdef int board_work(pool_t *p, worker_t *w, int spinning) noexcept nogil:
    cdef cmd_t *c = NULL
    cdef long i
    if pp_load(&p.n_board) == 0:
        return 0
    pthread_mutex_lock(&p.board_lock)
    for i in range(p.n_board):
        if pp_load(&p.board[i].next_group) < p.board[i].total:
            c = p.board[i]
            cmd_incref(c)
            break
    pthread_mutex_unlock(&p.board_lock)
    if c == NULL:
        return 0
    if spinning:
        stop_spinning(p, w)
    participate(p, w, c)
    cmd_decref(c)
    return 1


cdef void pool_execute(pool_t *p, worker_t *w, cmd_t *c) noexcept nogil:
    cdef int shared = 0, status
    w.executed += 1
    if c.kind == K_NDRANGE and c.total > 1 and p.nworkers > 1 and not pp_load(&c.failed):
        cmd_set_status(c, ST_RUNNING)
        # Both references are taken before the command is published on the board: once it is
        # there, other workers may run every group, complete it and drop the other references
        # before this thread gets back to it.
        cmd_incref(c)                         # the board's reference
        cmd_incref(c)                         # ours while we take part
        pthread_mutex_lock(&p.board_lock)
        if p.n_board < MAX_BOARD:
            c.on_board = 1
            p.board[p.n_board] = c
            p.n_board += 1
            shared = 1
        pthread_mutex_unlock(&p.board_lock)
        if shared:
            pp_add(&p.work, 1)
            pool_wake(p, 1)
            participate(p, w, c)
            cmd_decref(c)
            return
        cmd_decref(c)
        cmd_decref(c)
        status = run_payload(c)
        trace_run(c, c.times[2])
        cmd_set_status(c, status)
        return
    execute(c)


cdef cmd_t *steal(pool_t *p, worker_t *w) noexcept nogil:
    cdef int i, k
    cdef cmd_t *c
    cdef unsigned long long now = pp_ticks()
    for k in range(1, p.nworkers):
        i = (w.id + k) % p.nworkers
        c = pop(&p.workers[i], now)
        if c != NULL:
            w.stolen += 1
            if trace_on:
                trace_event(TR_STEAL, 0, c.trace_id, i, pp_now_ns(), 0)
            return c
    return NULL


cdef void *worker_main(void *arg) noexcept nogil:
    global pp_worker_id, pp_worker_pool
    cdef worker_t *w = <worker_t *>arg
    cdef pool_t *p = <pool_t *>w.pool
    cdef cmd_t *c
    cdef unsigned long long idle_since = 0, idle_ns
    cdef long polls = 0
    cdef int k, spinning = 0, slept = 0
    cdef timespec ts
    pp_worker_id = w.id
    pp_worker_pool = p
    while True:
        if spinning:
            # Idle: look at the own queue every time (only a pushing thread writes it) and at
            # the shared work counter (written for every command) about once a microsecond:
            # one time in WORK_POLL_EVERY while pausing, at every yield after that, so that idle
            # workers take few of the cache lines the host writes as it enqueues.
            polls += 1
            idle_ns = pp_now_ns() - idle_since
            if w.head == NULL and ((idle_ns < IDLE_PAUSE_NS and polls % WORK_POLL_EVERY != 0)
                                   or pp_load(&p.work) <= 0):
                if idle_ns < IDLE_PAUSE_NS:
                    for k in range(2):
                        pp_pause()
                elif idle_ns < IDLE_POLL_NS:
                    sched_yield()
                else:
                    unhint(p, w)
                    pp_add(&p.spinning, -1)         # before the work test below: see pool_ready
                    spinning = 0
                    pthread_mutex_lock(&p.idle_lock)
                    pp_add(&p.sleepers, 1)
                    if pp_load(&p.work) <= 0:
                        pp_deadline(&ts, 200)
                        pthread_cond_timedwait(&p.idle_cv, &p.idle_lock, &ts)
                    pp_add(&p.sleepers, -1)
                    pthread_mutex_unlock(&p.idle_lock)
                    slept = 1
                continue
        if board_work(p, w, spinning):      # (it leaves the spinners first)
            spinning = slept = 0
            continue
        c = pop(w, 0)
        if c == NULL:
            if not spinning:
                # Idle from the moment the own queue is empty (before looking at others'): a
                # lone command enqueued now comes here (pool_ready).
                pp_add(&p.spinning, 1)
                spinning = 1
                trace_busy(0)
                # Woken with no work left (a time-out, or others took it): back to sleep. With
                # work left (maybe too young to steal yet), poll as usual.
                idle_since = 0 if slept and pp_load(&p.work) <= 0 else pp_now_ns()
                pp_store(&p.hint, w.id)
            c = steal(p, w)
        if c != NULL:
            if spinning:
                stop_spinning(p, w)
                spinning = 0
            slept = 0
            trace_ready_count(pp_add(&p.work, -1))
            pool_execute(p, w, c)
    return NULL


cdef pool_t *process_pool = NULL       # the pool driver, once made (one per process)
cdef long online_cpus = 1


cdef int host_may_poll() noexcept nogil:
    """Whether a host thread about to block may poll first: the pool's running workers (not
    idle, not asleep) leave a CPU over. A poller on a CPU a worker needs would delay it."""
    cdef pool_t *p = process_pool
    if p == NULL:
        return 1
    return p.nworkers - pp_load(&p.spinning) - pp_load(&p.sleepers) + 1 < online_cpus


cdef extern from "<stdio.h>" nogil:
    ctypedef struct FILE
    FILE *stderr
    int fprintf(FILE *, const char *, ...)



cdef void print_pool_stats() noexcept nogil:
    """PYPLAT_POOL_STATS=1: at exit, what each worker ran and stole, and the wake-ups."""
    cdef pool_t *p = process_pool
    cdef int i
    if p == NULL:
        return
    fprintf(stderr, "pyplat pool: %ld wake-ups; per worker executed/stolen:", p.wakeups)
    for i in range(p.nworkers):
        fprintf(stderr, " %ld/%ld", p.workers[i].executed, p.workers[i].stolen)
    fprintf(stderr, "\n")


cdef driver_t *make_pool(int nworkers) noexcept nogil:
    global process_pool
    cdef pool_t *p = <pool_t *>calloc(1, sizeof(pool_t))
    cdef driver_t *d = <driver_t *>calloc(1, sizeof(driver_t))
    cdef int i
    p.nworkers = nworkers
    p.hint = -1
    process_pool = p
    p.workers = <worker_t *>calloc(nworkers, sizeof(worker_t))
    pthread_mutex_init(&p.idle_lock, NULL)
    pthread_cond_init(&p.idle_cv, NULL)
    pthread_mutex_init(&p.board_lock, NULL)
    d.submit = noop_submit
    d.ready = pool_ready
    d.flush = noop_flush
    d.join = default_join
    d.notify = default_notify
    d.state = p
    for i in range(nworkers):
        pthread_mutex_init(&p.workers[i].lock, NULL)
        p.workers[i].id = i
        p.workers[i].pool = p
    for i in range(nworkers):
        pthread_create(&p.workers[i].thread, NULL, worker_main, &p.workers[i])
        pthread_detach(p.workers[i].thread)
    return d

