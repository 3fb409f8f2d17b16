# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# fork(): the child gets a working runtime (docs/runtime.md, "fork").
#
# POSIX: the child of a multithreaded process has one thread, the one that called fork(); the
# others (the pool's workers, the reaper, a build thread) are gone, with whatever locks they held
# and whatever they were running. So in the child the pool is emptied and gets new worker threads
# on its first command, the global locks are made anew, and the clean-up lists (of the parent's
# commands) are dropped. The commands that had not finished are lost to the child: those its
# inherited queues and events know (the API layer walks its handle table, _native._fork_child)
# are marked terminated (fork_lose_*), so nothing in the child waits for them.
# The C part runs inside fork() (pthread_atfork, for any fork: os.fork, multiprocessing, a C
# program's fork()); the Python part (new Python locks, the reaper) from os.register_at_fork,
# which the shim also runs for a C program's fork() (icd/shim.c, PyOS_AfterFork_Child).
# ---------------------------------------------------------------------------------------------

cdef extern from "<pthread.h>" nogil:
    int pthread_atfork(void (*)() noexcept nogil, void (*)() noexcept nogil, void (*)() noexcept nogil)

cdef pthread_mutex_t respawn_lock
pthread_mutex_init(&respawn_lock, NULL)
cdef int pool_respawn = 0       # set in a forked child: the pool's threads are to be made again


cdef void pool_start_threads(pool_t *p) noexcept nogil:
    """In a forked child, on the pool's first command: new worker threads (once)."""
    global pool_respawn
    cdef int i
    pthread_mutex_lock(&respawn_lock)
    if pool_respawn:
        for i in range(p.nworkers):
            pthread_create(&p.workers[i].thread, NULL, worker_main, &p.workers[i])
            pthread_detach(p.workers[i].thread)
        pool_respawn = 0
    pthread_mutex_unlock(&respawn_lock)


cdef void fork_child_native() noexcept nogil:
    """pthread_atfork child handler: only this thread exists; make every global lock anew and
    forget the work of the parent's threads."""
    global reap_head, reap_holds, reap_count, reaping, pool_respawn
    cdef pool_t *p = process_pool
    cdef int i
    pp_guard_fork_child()
    pp_code_lines_fork_child()
    pthread_mutex_init(&respawn_lock, NULL)
    pthread_mutex_init(&reap_lock, NULL)
    pthread_cond_init(&reap_cv, NULL)
    # The parent's finished commands and idle holds: their clean-up is the parent's (destructor
    # callbacks would run twice). Dropped, never freed: a dead thread may have been between
    # pushing and unlocking.
    reap_head, reap_holds, reap_count, reaping = NULL, NULL, 0, 0
    if p == NULL:
        return
    pthread_mutex_init(&p.idle_lock, NULL)
    pthread_cond_init(&p.idle_cv, NULL)
    pthread_mutex_init(&p.board_lock, NULL)
    p.n_board = 0
    p.work = p.sleepers = p.spinning = p.rr = 0
    p.hint = -1
    for i in range(p.nworkers):
        pthread_mutex_init(&p.workers[i].lock, NULL)
        p.workers[i].head = p.workers[i].tail = NULL      # the parent's commands: never run here
        p.workers[i].n = 0
    pool_respawn = 1


pthread_atfork(NULL, NULL, fork_child_native)


cdef void fork_lose_command(cmd_t *c) noexcept nogil:
    """(a forked child) c had not finished at the fork: it never runs here. It is terminated --
    status CL_OUT_OF_RESOURCES, without callbacks or notifying its dependants (which are lost
    too, or run: order links do not pass a failure on) -- and can never become ready (its wait
    count stays far from 0). A user event not set yet stays as it is: the child may set it."""
    if c == NULL or c.status <= ST_COMPLETE or c.kind == K_USER:
        return
    pthread_mutex_init(&c.lock, NULL)       # a lost thread may have held them
    pthread_cond_init(&c.done, NULL)
    c.wait_count = 1L << 40
    c.failed = 1
    c.status = ERR_OUT_OF_RESOURCES
    c.finalized = 1                          # (waits return at once)


cdef void fork_lose_queue(qcore_t *q) noexcept nogil:
    """(a forked child) An inherited queue: its unfinished commands are lost (above), so its
    order makes no later command wait for them, and it has no unfinished command (clFinish)."""
    cdef long i, j
    cdef spoint_t *sp
    pthread_mutex_init(&q.lock, NULL)
    fork_lose_command(q.last)
    fork_lose_command(q.barrier)
    for i in range(q.n_since):
        fork_lose_command(q.since[i])
    for i in range(q.sync_cap):
        sp = &q.sync[i]
        if sp.key != 0:
            fork_lose_command(sp.writer)
            for j in range(sp.n_readers):
                fork_lose_command(sp.readers[j])
    pthread_mutex_init(&q.track.lock, NULL)
    pthread_cond_init(&q.track.cv, NULL)
    q.track.count = 0


def _fork_child():
    """os.register_at_fork(after_in_child=...): the runtime's Python locks anew; the reaper
    thread is started again with the first queue (get_driver)."""
    global _reap_mutex, _drivers_lock, _reaper
    _reap_mutex = threading.RLock()
    _drivers_lock = threading.Lock()
    _reaper = None


os.register_at_fork(after_in_child=_fork_child)

