# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The native runtime: event graph, driver interface, Basic and thread-pool drivers.

Everything on the path  ready -> executed -> completed -> dependants notified -> C callbacks
runs in C without the GIL. Only commands whose action is a Python callable take the GIL (to run
it), and Python-side clean-up of finished commands (releasing the objects they kept alive) is
deferred to a *reap list* processed by the next thread that holds the GIL in the runtime (waits,
finish, enqueue) or by a small reaper thread.

Driver interface (thesis Table 4.1), a struct of C function pointers (driver_t):
  submit(d, c)          a new command was handed over (it may not be ready)
  ready(d, c)           its wait count reached zero: it may run now
  flush(d)              make submitted commands eventually run
  join(d, c)            block until c has finished (the host sleeps, GIL released)
  notify(d, c, ev)      an event c waits for has finished (default: count down, ready at zero)
broadcast (cmd_set_status): on completion, notify every command of the notify list through its
own driver -- one implementation for every driver.
"""
cimport cython
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from libc.stdlib cimport malloc, free, realloc, calloc
from libc.string cimport memcpy, memset, memcmp
from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t

import os
import sys
import threading
import traceback

cdef extern from *:
    """
    #include <pthread.h>
    #include <sched.h>
    #include <time.h>
    #include <stdlib.h>
    #include <string.h>
    static inline long pp_add(long *p, long v) { return __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST); }
    static inline long pp_load(long *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
    static inline void pp_store(long *p, long v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
    static inline int pp_cas(long *p, long expected, long desired) {
        return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
    static inline void pp_pause(void) {
    #if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
    #else
        __asm__ __volatile__("" ::: "memory");
    #endif
    }
    static inline unsigned long long pp_now_ns(void) {
        struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
        return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec; }
    static __thread int pp_worker_id = -1;
    static __thread void *pp_worker_pool = NULL;
    static __thread void *pp_basic_head = NULL;
    static __thread void *pp_basic_tail = NULL;
    static __thread int pp_basic_running = 0;
    static __thread void *pp_scratch = NULL;
    static __thread size_t pp_scratch_cap = 0;
    static inline void *pp_aligned(size_t size) {
        size = (size + 127) & ~(size_t)127; if (!size) size = 128;
        return aligned_alloc(128, size); }
    static inline void pp_deadline(struct timespec *ts, long ms) {
        clock_gettime(CLOCK_REALTIME, ts);
        ts->tv_nsec += (ms % 1000) * 1000000L; ts->tv_sec += ms / 1000 + ts->tv_nsec / 1000000000L;
        ts->tv_nsec %= 1000000000L; }
    typedef void (*pp_event_cb)(void *event, int status, void *user);
    typedef void (*pp_user_fn)(void *args);
    """
    long pp_add(long *p, long v) nogil
    long pp_load(long *p) nogil
    void pp_store(long *p, long v) nogil
    int pp_cas(long *p, long expected, long desired) nogil
    void pp_pause() nogil
    unsigned long long pp_now_ns() nogil
    int pp_worker_id
    void *pp_worker_pool
    void *pp_basic_head
    void *pp_basic_tail
    int pp_basic_running
    void *pp_scratch
    size_t pp_scratch_cap
    void *pp_aligned(size_t) nogil
    ctypedef void (*pp_event_cb)(void *event, int status, void *user) noexcept nogil
    ctypedef void (*pp_user_fn)(void *args) noexcept nogil

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass
    ctypedef unsigned long pthread_t
    int pthread_mutex_init(pthread_mutex_t *, void *)
    int pthread_mutex_destroy(pthread_mutex_t *)
    int pthread_mutex_lock(pthread_mutex_t *)
    int pthread_mutex_unlock(pthread_mutex_t *)
    int pthread_cond_init(pthread_cond_t *, void *)
    int pthread_cond_destroy(pthread_cond_t *)
    int pthread_cond_wait(pthread_cond_t *, pthread_mutex_t *)
    int pthread_cond_signal(pthread_cond_t *)
    int pthread_cond_broadcast(pthread_cond_t *)
    int pthread_create(pthread_t *, void *, void *(*)(void *) noexcept nogil, void *)
    int pthread_detach(pthread_t)

cdef extern from "<time.h>" nogil:
    cdef struct timespec:
        long tv_sec
        long tv_nsec

cdef extern from *:
    int pthread_cond_timedwait(pthread_cond_t *, pthread_mutex_t *, const timespec *) nogil
    void pp_deadline(timespec *ts, long ms) nogil
    int sched_yield() nogil

# Status values (OpenCL).
DEF ST_COMPLETE = 0
DEF ST_RUNNING = 1
DEF ST_SUBMITTED = 2
DEF ST_QUEUED = 3
DEF ERR_WAIT_LIST = -14          # CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
DEF ERR_OUT_OF_RESOURCES = -5
DEF CL_SUCCESS_ = 0
DEF CL_OUT_OF_HOST_MEMORY_ = -6

# Command kinds.
DEF K_NOP = 0
DEF K_PY = 1
DEF K_COPY = 2
DEF K_FILL = 3
DEF K_RECT = 4
DEF K_NDRANGE = 5
DEF K_NATIVE = 6
DEF K_USER = 7

KIND_NOP, KIND_PY, KIND_COPY, KIND_FILL, KIND_RECT, KIND_NDRANGE, KIND_NATIVE, KIND_USER = range(8)
QUEUED, SUBMITTED, RUNNING, COMPLETE = ST_QUEUED, ST_SUBMITTED, ST_RUNNING, ST_COMPLETE


cdef struct WorkGroupContext:       # pyplat/compiler/abi.py
    uint64_t work_dim
    uint64_t global_size[3]
    uint64_t local_size[3]
    uint64_t num_groups[3]
    uint64_t global_offset[3]
    uint64_t group_id[3]
    void *local_mem

ctypedef void (*work_group_fn)(void **args, const WorkGroupContext *ctx) noexcept nogil

cdef struct cb_t:
    int trigger
    pp_event_cb fn
    void *user
    void *handle
    int fired
    cb_t *next

cdef struct qtrack_t:
    long count
    long refs
    pthread_mutex_t lock
    pthread_cond_t cv

cdef struct cmd_t
cdef struct driver_t

ctypedef void (*submit_fn)(driver_t *, cmd_t *) noexcept nogil
ctypedef void (*ready_fn)(driver_t *, cmd_t *) noexcept nogil
ctypedef void (*flush_fn)(driver_t *) noexcept nogil
ctypedef void (*join_fn)(driver_t *, cmd_t *) noexcept nogil
ctypedef void (*notify_fn)(driver_t *, cmd_t *, cmd_t *) noexcept nogil

cdef struct driver_t:
    submit_fn submit
    ready_fn ready
    flush_fn flush
    join_fn join
    notify_fn notify
    void *state

cdef struct cmd_t:
    pthread_mutex_t lock
    pthread_cond_t done
    long refs
    long wait_count
    long failed
    int status
    int finalized
    int kind
    unsigned long long times[5]
    cmd_t **notify
    int n_notify
    int cap_notify
    cb_t *callbacks
    driver_t *driver
    qtrack_t *queue
    PyObject *action
    PyObject *hooks
    cmd_t *next
    cmd_t *reap_next
    # payload: copies, fills, rectangles
    char *dst
    char *src
    size_t size
    size_t dst_row, dst_slice, src_row, src_slice
    size_t region[3]
    unsigned char pattern[128]
    size_t psize
    # payload: kernels
    void *fn
    char *args
    size_t args_size
    int n_args
    int n_patch
    size_t *patch
    size_t scratch_size
    WorkGroupContext geo
    long total
    long next_group
    long groups_done
    int on_board


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
    c.times[0] = pp_now_ns()
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
    pthread_mutex_destroy(&c.lock)
    pthread_cond_destroy(&c.done)
    free(c)


cdef inline void cmd_incref(cmd_t *c) noexcept nogil:
    pp_add(&c.refs, 1)


cdef inline void cmd_decref(cmd_t *c) noexcept nogil:
    if pp_add(&c.refs, -1) == 0:
        cmd_free(c)


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


cdef int link(cmd_t *waiter, cmd_t *ev) noexcept nogil:
    """Make `waiter` wait for `ev`; an already finished event adds no link. 1 if linked."""
    cdef cmd_t **grown
    pthread_mutex_lock(&ev.lock)
    if ev.status > ST_COMPLETE:
        if ev.n_notify == ev.cap_notify:
            ev.cap_notify = ev.cap_notify * 2 if ev.cap_notify else 4
            grown = <cmd_t **>realloc(ev.notify, ev.cap_notify * sizeof(cmd_t *))
            if grown == NULL:
                pthread_mutex_unlock(&ev.lock)
                abort_oom()
            ev.notify = grown
        ev.notify[ev.n_notify] = waiter
        ev.n_notify += 1
        pp_add(&waiter.wait_count, 1)
        pthread_mutex_unlock(&ev.lock)
        return 1
    if ev.status < 0:
        pp_store(&waiter.failed, 1)
    pthread_mutex_unlock(&ev.lock)
    return 0


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
    cdef unsigned long long t = pp_now_ns()
    cdef cmd_t *w
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
    fire_callbacks(c, status)
    if status > ST_COMPLETE:
        return
    if needs_reap:
        cmd_incref(c)
        reap_push(c)
    for i in range(n):                       # the default broadcast
        w = waiters[i]
        if status < 0:
            pp_store(&w.failed, 1)
        w.driver.notify(w.driver, w, c)
    free(waiters)
    pthread_mutex_lock(&c.lock)
    c.finalized = 1
    pthread_cond_broadcast(&c.done)
    pthread_mutex_unlock(&c.lock)
    if c.queue != NULL:
        queue_done(c.queue)
        c.queue = NULL
    cmd_decref(c)                            # the pending reference taken at commit


cdef void cmd_wait(cmd_t *c) noexcept nogil:
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


# ---------------------------------------------------------------------------------------------
# Execution of one command's work (shared by the drivers)
# ---------------------------------------------------------------------------------------------

cdef int run_python(cmd_t *c) noexcept with gil:
    cdef object action
    if c.action == NULL:
        return ST_COMPLETE
    action = <object>c.action
    try:
        result = action()
        if isinstance(result, int) and result < 0:
            return result
        return ST_COMPLETE
    except BaseException as e:
        sys.stderr.write(f"pyplat: command failed: {e}\n{traceback.format_exc()}")
        return ERR_OUT_OF_RESOURCES


cdef void copy_rect(cmd_t *c) noexcept nogil:
    cdef size_t y, z
    for z in range(c.region[2]):
        for y in range(c.region[1]):
            memcpy(c.dst + z * c.dst_slice + y * c.dst_row, c.src + z * c.src_slice + y * c.src_row,
                   c.region[0])


cdef void fill(cmd_t *c) noexcept nogil:
    cdef size_t i, p = c.psize
    cdef size_t n = c.size
    if n == 0:
        return
    if p == 1:
        memset(c.dst, c.pattern[0], n)
        return
    memcpy(c.dst, c.pattern, p)
    i = p
    while i < n:                              # doubling copies of the pattern
        if 2 * i <= n:
            memcpy(c.dst + i, c.dst, i)
            i *= 2
        else:
            memcpy(c.dst + i, c.dst, n - i)
            i = n


cdef void *thread_scratch(size_t size) noexcept nogil:
    global pp_scratch, pp_scratch_cap
    if size > pp_scratch_cap:
        free(pp_scratch)
        pp_scratch = pp_aligned(size)
        pp_scratch_cap = size
    return pp_scratch


cdef long grab_chunk(cmd_t *c, long workers, long *start) noexcept nogil:
    """Guided self-scheduling: chunks shrink with the work left. Returns the chunk's size."""
    cdef long n, left, size
    while True:
        n = pp_load(&c.next_group)
        left = c.total - n
        if left <= 0:
            return 0
        size = left // (2 * workers)
        if size < 1:
            size = 1
        if pp_cas(&c.next_group, n, n + size):
            start[0] = n
            return size


cdef int run_groups(cmd_t *c, long workers) noexcept nogil:
    """Run chunks of c's work-groups until none is left. 1 if this call ran the last group."""
    cdef WorkGroupContext ctx = c.geo
    cdef char *args = c.args
    cdef char *own = NULL
    cdef long start = 0, size, i, g, ng0 = c.geo.num_groups[0], ng01 = ng0 * c.geo.num_groups[1]
    cdef int j, last = 0
    cdef uint64_t *argv
    cdef char *scratch = NULL
    cdef work_group_fn fn = <work_group_fn>c.fn
    size = grab_chunk(c, workers, &start)
    if size == 0:
        return 0
    if c.scratch_size:
        scratch = <char *>thread_scratch(c.scratch_size)
        ctx.local_mem = scratch
        if c.n_patch:                         # local arguments: a private argument block
            own = <char *>pp_aligned(c.args_size)
            memcpy(own, c.args, c.args_size)
            argv = <uint64_t *>own
            for j in range(c.n_args):
                argv[j] = argv[j] - <uint64_t>c.args + <uint64_t>own
            for j in range(c.n_patch):
                (<uint64_t *>(own + c.patch[j]))[0] += <uint64_t>scratch
            args = own
    while size:
        for i in range(start, start + size):
            ctx.group_id[0] = i % ng0
            ctx.group_id[1] = (i // ng0) % c.geo.num_groups[1]
            ctx.group_id[2] = i // ng01
            fn(<void **>args, &ctx)
        if pp_add(&c.groups_done, size) == c.total:
            last = 1
        size = grab_chunk(c, workers, &start)
    free(own)
    return last


cdef int run_payload(cmd_t *c) noexcept nogil:
    """The command's work on the calling thread (kernels: every group). Returns the status."""
    if c.kind == K_COPY:
        memcpy(c.dst, c.src, c.size)
    elif c.kind == K_FILL:
        fill(c)
    elif c.kind == K_RECT:
        copy_rect(c)
    elif c.kind == K_NDRANGE:
        if c.total > 0:
            run_groups(c, 1)
    elif c.kind == K_NATIVE:
        (<pp_user_fn>c.fn)(c.args)
    elif c.kind == K_PY:
        return run_python(c)
    return ST_COMPLETE


cdef void execute(cmd_t *c) noexcept nogil:
    """Run a ready command to completion on the calling thread."""
    cdef int status
    if pp_load(&c.failed):
        cmd_set_status(c, ERR_WAIT_LIST)
        return
    cmd_set_status(c, ST_RUNNING)
    status = run_payload(c)
    c.times[3] = pp_now_ns()
    cmd_set_status(c, status)


# ---------------------------------------------------------------------------------------------
# Reap list: Python-side clean-up of finished commands
# ---------------------------------------------------------------------------------------------

cdef pthread_mutex_t reap_lock
cdef pthread_cond_t reap_cv
cdef cmd_t *reap_head = NULL
cdef long reap_count = 0
DEF REAP_WAKE = 256            # wake the reaper at once when this many wait
DEF REAP_POLL_MS = 5
pthread_mutex_init(&reap_lock, NULL)
pthread_cond_init(&reap_cv, NULL)


cdef void reap_push(cmd_t *c) noexcept nogil:
    global reap_head, reap_count
    pthread_mutex_lock(&reap_lock)
    c.reap_next = reap_head
    reap_head = c
    reap_count += 1
    # The reaper polls (REAP_POLL_MS); it is woken only when the list grows long, so that it does
    # not compete for the GIL with the host thread after every completed command.
    if reap_count == REAP_WAKE:
        pthread_cond_signal(&reap_cv)
    pthread_mutex_unlock(&reap_lock)


cdef cmd_t *reap_take() noexcept nogil:
    global reap_head, reap_count
    cdef cmd_t *items
    pthread_mutex_lock(&reap_lock)
    items = reap_head
    reap_head = NULL
    reap_count = 0
    pthread_mutex_unlock(&reap_lock)
    return items


_reap_mutex = threading.RLock()
cdef long reaping = 0


def reap():
    """Run the Python clean-up (hooks) of finished commands. Any thread holding the GIL."""
    cdef cmd_t *items
    cdef cmd_t *c
    cdef PyObject *hooks
    cdef PyObject *action
    global reaping
    if pp_load(&reap_count) == 0 and pp_load(&reaping) == 0:
        return
    with _reap_mutex:                  # callers return only after a concurrent batch is done
        pp_add(&reaping, 1)
        items = reap_take()
        while items != NULL:
            c = items
            items = c.reap_next
            pthread_mutex_lock(&c.lock)
            hooks, action = c.hooks, c.action
            c.hooks = NULL
            c.action = NULL
            pthread_mutex_unlock(&c.lock)
            if hooks != NULL:
                # a list of hooks (add_hook), or a kernel launch's LaunchPlan alone (_launch)
                for fn in (reversed(<list>hooks) if type(<object>hooks) is list else (<object>hooks,)):
                    if callable(fn):
                        try:
                            fn()
                        except BaseException:
                            sys.stderr.write(f"pyplat: clean-up failed:\n{traceback.format_exc()}")
            Py_XDECREF(hooks)
            Py_XDECREF(action)
            with nogil:
                cmd_decref(c)
        pp_add(&reaping, -1)


cdef void reap_wait(long ms) noexcept nogil:
    cdef timespec ts
    pp_deadline(&ts, ms)
    pthread_mutex_lock(&reap_lock)
    if reap_head == NULL:
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


# ---------------------------------------------------------------------------------------------
# Basic driver: no threads; commands run on the thread that makes them ready
# ---------------------------------------------------------------------------------------------

cdef void basic_ready(driver_t *d, cmd_t *c) noexcept nogil:
    global pp_basic_head, pp_basic_tail, pp_basic_running
    cdef cmd_t *x
    c.next = NULL
    if pp_basic_tail != NULL:
        (<cmd_t *>pp_basic_tail).next = c
    else:
        pp_basic_head = c
    pp_basic_tail = c
    if pp_basic_running:
        return                  # the outer call runs it: no recursion along chains
    pp_basic_running = 1
    while pp_basic_head != NULL:
        x = <cmd_t *>pp_basic_head
        pp_basic_head = x.next
        if pp_basic_head == NULL:
            pp_basic_tail = NULL
        execute(x)
    pp_basic_running = 0


# ---------------------------------------------------------------------------------------------
# Thread-pool driver: a queue per worker, round robin, stealing, shared kernels
# ---------------------------------------------------------------------------------------------

DEF MAX_BOARD = 256
DEF SPIN = 300
DEF YIELDS = 20

cdef struct worker_t:
    pthread_mutex_t lock
    cmd_t *head
    cmd_t *tail
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


cdef void pool_wake(pool_t *p, int all_) noexcept nogil:
    if pp_load(&p.sleepers) > 0:
        pthread_mutex_lock(&p.idle_lock)
        if all_:
            pthread_cond_broadcast(&p.idle_cv)
        else:
            pthread_cond_signal(&p.idle_cv)
        p.wakeups += 1
        pthread_mutex_unlock(&p.idle_lock)


cdef long push(worker_t *w, cmd_t *c) noexcept nogil:
    cdef long n
    c.next = NULL
    pthread_mutex_lock(&w.lock)
    if w.tail != NULL:
        w.tail.next = c
    else:
        w.head = c
    w.tail = c
    w.n += 1
    n = w.n
    pthread_mutex_unlock(&w.lock)
    return n


cdef cmd_t *pop(worker_t *w) noexcept nogil:
    cdef cmd_t *c
    if w.head == NULL:              # racy peek: cheap for empty queues
        return NULL
    pthread_mutex_lock(&w.lock)
    c = w.head
    if c != NULL:
        w.head = c.next
        if w.head == NULL:
            w.tail = NULL
        w.n -= 1
    pthread_mutex_unlock(&w.lock)
    return c


cdef void pool_ready(driver_t *d, cmd_t *c) noexcept nogil:
    cdef pool_t *p = <pool_t *>d.state
    cdef long n, i
    pp_add(&p.work, 1)
    if pp_worker_pool == <void *>p:
        # A worker readied it (a dependant of what it just ran): keep it local, and wake
        # another worker only if there is more work here than this worker will take next.
        n = push(&p.workers[pp_worker_id], c)
        if n > 1:
            pool_wake(p, 0)
    else:
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
    w.chunks += 1
    if run_groups(c, p.nworkers):
        board_remove(p, c)
        c.times[3] = pp_now_ns()
        cmd_set_status(c, ST_COMPLETE)
    elif pp_load(&c.next_group) >= c.total:
        board_remove(p, c)


cdef void stop_spinning(pool_t *p) noexcept nogil:
    """An idle worker found work: it no longer counts as spinning. If more work is waiting, wake
    a sleeper, since pool_ready may have skipped that while this worker was spinning."""
    pp_add(&p.spinning, -1)
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
        stop_spinning(p)
    participate(p, w, c)
    cmd_decref(c)
    return 1


cdef void pool_execute(pool_t *p, worker_t *w, cmd_t *c) noexcept nogil:
    cdef int shared = 0
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
        cmd_set_status(c, run_payload(c))
        return
    execute(c)


cdef cmd_t *steal(pool_t *p, worker_t *w) noexcept nogil:
    cdef int i, k
    cdef cmd_t *c
    for k in range(1, p.nworkers):
        i = (w.id + k) % p.nworkers
        c = pop(&p.workers[i])
        if c != NULL:
            w.stolen += 1
            return c
    return NULL


cdef void *worker_main(void *arg) noexcept nogil:
    global pp_worker_id, pp_worker_pool
    cdef worker_t *w = <worker_t *>arg
    cdef pool_t *p = <pool_t *>w.pool
    cdef cmd_t *c
    cdef long idle = 0
    cdef int k, spinning = 0
    cdef timespec ts
    pp_worker_id = w.id
    pp_worker_pool = p
    while True:
        if board_work(p, w, spinning):      # (it leaves the spinners first)
            if spinning:
                spinning = 0
            idle = 0
            continue
        c = pop(w)
        if c == NULL:
            c = steal(p, w)
        if c != NULL:
            if spinning:
                stop_spinning(p)
                spinning = 0
            pp_add(&p.work, -1)
            pool_execute(p, w, c)
            idle = 0
            continue
        # Back off: spin, then yield, then sleep until woken (busy workers never wait for us).
        idle += 1
        if not spinning:
            pp_add(&p.spinning, 1)
            spinning = 1
        if idle < SPIN:
            for k in range(8):
                pp_pause()
        elif idle < SPIN + YIELDS:
            sched_yield()
        else:
            pp_add(&p.spinning, -1)             # before the work test below: see pool_ready
            spinning = 0
            pthread_mutex_lock(&p.idle_lock)
            pp_add(&p.sleepers, 1)
            if pp_load(&p.work) <= 0:
                pp_deadline(&ts, 200)
                pthread_cond_timedwait(&p.idle_cv, &p.idle_lock, &ts)
            pp_add(&p.sleepers, -1)
            pthread_mutex_unlock(&p.idle_lock)
            idle = SPIN                          # after a wake-up: yield-phase first
    return NULL


cdef driver_t *make_pool(int nworkers) noexcept nogil:
    cdef pool_t *p = <pool_t *>calloc(1, sizeof(pool_t))
    cdef driver_t *d = <driver_t *>calloc(1, sizeof(driver_t))
    cdef int i
    p.nworkers = nworkers
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


cdef driver_t *make_basic() noexcept nogil:
    cdef driver_t *d = <driver_t *>calloc(1, sizeof(driver_t))
    d.submit = noop_submit
    d.ready = basic_ready
    d.flush = noop_flush
    d.join = default_join
    d.notify = default_notify
    return d


# ---------------------------------------------------------------------------------------------
# Python faces
# ---------------------------------------------------------------------------------------------

cdef class Driver:
    """A driver (C function table). `name` is 'basic' or 'pool'."""
    cdef driver_t *d
    cdef readonly str name
    cdef readonly int workers

    def flush(self):
        with nogil:
            self.d.flush(self.d)

    def join(self, commands):
        cdef Command c
        for c in commands:
            c.wait()

    def stats(self):
        """Per worker: (executed, stolen, kernel chunk participations); and wake-ups."""
        cdef pool_t *p
        cdef int i
        if self.name != "pool":
            return {}
        p = <pool_t *>self.d.state
        return {"workers": [(p.workers[i].executed, p.workers[i].stolen, p.workers[i].chunks)
                            for i in range(p.nworkers)], "wakeups": p.wakeups}


_drivers = {}
_drivers_lock = threading.Lock()


def get_driver(name="pool", workers=0):
    """The process-wide driver of that kind (CPU devices share one pool)."""
    cdef Driver drv
    cdef int n
    with _drivers_lock:
        key = name
        if key in _drivers:
            return _drivers[key]
        drv = Driver.__new__(Driver)
        if name == "basic":
            drv.d = make_basic()
            drv.workers = 0
        elif name == "pool":
            n = workers or int(os.environ.get("PYPLAT_WORKERS") or 0) or (os.cpu_count() or 1)
            drv.d = make_pool(n)
            drv.workers = n
        else:
            raise ValueError(f"unknown driver {name!r}")
        drv.name = name
        _drivers[key] = drv
        start_reaper()
        return drv


def default_driver():
    """PYPLAT_DRIVER=basic selects the thread-less driver; the thread pool otherwise."""
    name = os.environ.get("PYPLAT_DRIVER", "pool")
    if name in ("worker", "threads", "pool"):
        name = "pool"
    return get_driver(name)


cdef class QueueTracker:
    """Counts a queue's unfinished commands; join sleeps (GIL released) until none is left."""
    cdef qtrack_t *q

    def __cinit__(self):
        self.q = <qtrack_t *>calloc(1, sizeof(qtrack_t))
        self.q.refs = 1
        pthread_mutex_init(&self.q.lock, NULL)
        pthread_cond_init(&self.q.cv, NULL)

    def __dealloc__(self):
        if self.q != NULL:
            qtrack_decref(self.q)

    @property
    def pending(self):
        return pp_load(&self.q.count)

    def join(self):
        with nogil:
            pthread_mutex_lock(&self.q.lock)
            while self.q.count > 0:
                pthread_cond_wait(&self.q.cv, &self.q.lock)
            pthread_mutex_unlock(&self.q.lock)
        reap()


@cython.no_gc      # holds no Python object that could lead back to it: never in a cycle
cdef class Command:
    """A node of the graph (the native cmd_t). Payload setters are called before commit()."""
    cdef cmd_t *c
    cdef Driver drv
    cdef public object name

    def __cinit__(self, int kind=K_NOP, Driver driver=None, name=""):
        self.c = cmd_new(kind)
        if self.c == NULL:
            raise MemoryError()
        self.drv = driver
        self.name = name
        if driver is not None:
            self.c.driver = driver.d
        if kind == K_USER:
            self.c.status = ST_SUBMITTED
            self.c.times[1] = pp_now_ns()
            self.c.refs += 1                       # the pending reference, until set_status

    def __dealloc__(self):
        if self.c != NULL:
            if self.c.status == ST_QUEUED:         # never committed: Python parts are ours
                Py_XDECREF(self.c.action)
                Py_XDECREF(self.c.hooks)
                self.c.action = self.c.hooks = NULL
            cmd_decref(self.c)

    def attach(self, QueueTracker queue):
        """Count this command among the queue's unfinished ones (call right before commit)."""
        self._attach(queue)

    cdef void _attach(self, QueueTracker queue):
        self.c.queue = queue.q
        pp_add(&queue.q.refs, 1)
        pthread_mutex_lock(&queue.q.lock)
        queue.q.count += 1
        pthread_mutex_unlock(&queue.q.lock)

    # --- payloads ----------------------------------------------------------------------
    def set_copy(self, size_t dst, size_t src, size_t size):
        self.c.kind = K_COPY
        self.c.dst, self.c.src, self.c.size = <char *>dst, <char *>src, size

    def set_fill(self, size_t dst, bytes pattern, size_t size):
        cdef size_t n = len(pattern)
        if n == 0 or n > 128:
            raise ValueError("pattern size")
        self.c.kind = K_FILL
        memcpy(self.c.pattern, <char *>pattern, n)
        self.c.psize, self.c.dst, self.c.size = n, <char *>dst, size

    def set_rect(self, size_t dst, size_t dst_row, size_t dst_slice, size_t src, size_t src_row,
                 size_t src_slice, region):
        self.c.kind = K_RECT
        self.c.dst, self.c.dst_row, self.c.dst_slice = <char *>dst, dst_row, dst_slice
        self.c.src, self.c.src_row, self.c.src_slice = <char *>src, src_row, src_slice
        self.c.region[0], self.c.region[1], self.c.region[2] = region[0], region[1], region[2]

    def set_action(self, action):
        """A Python callable run (with the GIL) when the command executes."""
        self.c.kind = K_PY
        Py_INCREF(action)
        Py_XDECREF(self.c.action)
        self.c.action = <PyObject *>action

    def set_native_kernel(self, size_t fn, bytes args):
        """clEnqueueNativeKernel: fn(copy of args), natively."""
        self.c.kind = K_NATIVE
        self.c.fn = <void *>fn
        self.c.args_size = len(args)
        self.c.args = <char *>pp_aligned(len(args))
        if len(args):
            memcpy(self.c.args, <char *>args, len(args))

    def set_ndrange(self, size_t fn, size_t args, size_t args_size, int n_args, unsigned work_dim,
                    global_size, local_size, global_offset, size_t scratch_size, local_cells=()):
        """A kernel launch. `args` (args_size bytes) is copied; argv entries are rebased into
        the copy. `local_cells`: offsets in the block of local-argument pointers, stored
        relative to the start of the work-group's scratch (patched per worker)."""
        cdef int d, j
        cdef cmd_t *c = self.c
        cdef uint64_t *argv
        c.kind = K_NDRANGE
        c.fn = <void *>fn
        c.args_size = args_size
        c.args = <char *>pp_aligned(args_size)
        memcpy(c.args, <char *>args, args_size)
        c.n_args = n_args
        argv = <uint64_t *>c.args
        for j in range(n_args):
            argv[j] = argv[j] - <uint64_t>args + <uint64_t>c.args
        c.n_patch = len(local_cells)
        if c.n_patch:
            c.patch = <size_t *>malloc(c.n_patch * sizeof(size_t))
            for j in range(c.n_patch):
                c.patch[j] = local_cells[j]
        c.scratch_size = scratch_size
        c.geo.work_dim = work_dim
        c.total = 1
        for d in range(3):
            c.geo.global_size[d] = global_size[d]
            c.geo.local_size[d] = local_size[d]
            c.geo.global_offset[d] = global_offset[d]
            c.geo.num_groups[d] = c.geo.global_size[d] // c.geo.local_size[d]
            c.total *= c.geo.num_groups[d]

    # --- graph -------------------------------------------------------------------------
    def add_dependency(self, Command other):
        """Wait for `other`; no link if it finished (a failure marks this command failed)."""
        link(self.c, other.c)      # short: the event's lock is never held while waiting for the GIL

    def commit(self):
        """Linking done: SUBMITTED, hand over to the driver, drop enqueue's hold."""
        self._commit()

    cdef void _commit(self):
        cdef cmd_t *c = self.c
        if pp_load(&reap_count) != 0 or pp_load(&reaping) != 0:
            reap()
        pp_add(&c.refs, 1)                           # pending: until completion
        if c.driver.ready == pool_ready:
            # The pool only queues the command (and maybe signals a worker): no need to give up
            # the GIL, which would invite a switch to another Python thread on every enqueue.
            cmd_set_status(c, ST_SUBMITTED)
            c.driver.submit(c.driver, c)
            default_notify(c.driver, c, NULL)
            return
        with nogil:                                  # the basic driver may run it right here
            cmd_set_status(c, ST_SUBMITTED)
            c.driver.submit(c.driver, c)
            default_notify(c.driver, c, NULL)

    def set_status(self, int status):
        """User events: CL_COMPLETE or a negative error."""
        with nogil:
            cmd_set_status(self.c, status)
        reap()

    def wait(self):
        """Block until finished (GIL released); returns the final status."""
        cdef cmd_t *c = self.c
        with nogil:
            if c.driver != NULL:
                c.driver.join(c.driver, c)
            else:
                cmd_wait(c)
        reap()
        return c.status

    def add_callback(self, int trigger, size_t fn, size_t user, size_t handle):
        """A C callback fn(handle, status, user), called once when `trigger` (or a failure) is reached."""
        cdef cb_t *cb = <cb_t *>calloc(1, sizeof(cb_t))
        cdef cb_t *last
        cb.trigger, cb.fn, cb.user, cb.handle = trigger, <pp_event_cb>fn, <void *>user, <void *>handle
        with nogil:
            pthread_mutex_lock(&self.c.lock)
            if self.c.callbacks == NULL:
                self.c.callbacks = cb
            else:
                last = self.c.callbacks
                while last.next != NULL:
                    last = last.next
                last.next = cb
            pthread_mutex_unlock(&self.c.lock)
            fire_callbacks(self.c, self.c.status)

    def add_hook(self, fn):
        """Python clean-up run after the command finished (at once if it already has)."""
        cdef list hooks = []                 # made before the lock: no allocation under it
        pthread_mutex_lock(&self.c.lock)
        if self.c.status > ST_COMPLETE:
            if self.c.hooks == NULL:
                Py_INCREF(hooks)
                self.c.hooks = <PyObject *>hooks
            elif type(<object>self.c.hooks) is not list:    # a LaunchPlan alone: into the list
                hooks.append(<object>self.c.hooks)
                Py_INCREF(hooks)
                Py_XDECREF(self.c.hooks)
                self.c.hooks = <PyObject *>hooks
            (<list>self.c.hooks).append(fn)
            pthread_mutex_unlock(&self.c.lock)
            return
        pthread_mutex_unlock(&self.c.lock)
        reap()                       # its earlier hooks first
        if callable(fn):
            fn()

    @property
    def status(self):
        return self.c.status

    @property
    def finished(self):
        return self.c.status <= ST_COMPLETE

    @property
    def times(self):
        return [self.c.times[0], self.c.times[1], self.c.times[2], self.c.times[3], self.c.times[4]]

    @property
    def kind(self):
        return self.c.kind


def now_ns():
    return pp_now_ns()


# ---------------------------------------------------------------------------------------------
# Queue ordering and kernel launches: one implementation for the Python API path and the
# native fast path (docs/runtime.md, "Fast path"). Both run with the GIL held and never give it
# up inside, which is what makes a queue's ordering state consistent between host threads.
# ---------------------------------------------------------------------------------------------

ORDER_SERIAL, ORDER_AUTO, ORDER_OUT_OF_ORDER = 0, 1, 2


cdef class QueueCore:
    """A queue's ordering state (core/queue.py explains the three modes) and its driver/tracker.

    sync: memory key -> [last writer or None, [readers since]]; keys are root memory objects or
    the host pseudo-object, supplied already resolved by the caller."""
    cdef readonly Driver driver
    cdef readonly QueueTracker tracker
    cdef readonly int mode
    cdef Command last
    cdef Command barrier
    cdef list since
    cdef long prune_at
    cdef dict sync
    cdef readonly object context
    cdef readonly object device
    cdef long native_events     # live native events of this queue: they hold one context reference

    def __cinit__(self, Driver driver, QueueTracker tracker, int mode, context=None, device=None):
        self.driver, self.tracker, self.mode, self.context = driver, tracker, mode, context
        self.device = device
        self.since = []
        self.prune_at = 64
        self.sync = {}

    cdef inline void _prune_since(self):
        cdef Command x
        if len(self.since) > self.prune_at:
            self.since = [x for x in self.since if x.c.status > ST_COMPLETE]
            self.prune_at = max(64, 2 * len(self.since))

    cdef void _become_barrier(self, Command cmd):
        cdef Command other
        for other in self.since:
            link(cmd.c, other.c)
        if self.barrier is not None:
            link(cmd.c, self.barrier.c)
        self.barrier = cmd
        self.since = []
        self.sync.clear()

    cpdef order(self, Command cmd, bint barrier, object accesses):
        """Link `cmd` after what it must follow. accesses: ((key, writes), ...) with distinct
        keys, or None when unknown (then it is a barrier in the automatic in-order mode)."""
        cdef Command x
        cdef list point, readers
        cdef long n
        if self.mode == ORDER_SERIAL:
            if self.last is not None:
                link(cmd.c, self.last.c)
            self.last = cmd
            return
        if barrier or (self.mode == ORDER_AUTO and accesses is None):
            self._become_barrier(cmd)
            return
        if self.barrier is not None:
            link(cmd.c, self.barrier.c)
        if self.mode == ORDER_AUTO:
            for key, writes in accesses:
                point = self.sync.get(key)
                if writes:
                    if point is not None:
                        if point[0] is not None:
                            link(cmd.c, (<Command>point[0]).c)
                        for x in point[1]:
                            link(cmd.c, x.c)
                    self.sync[key] = [cmd, []]
                else:
                    if point is None:
                        point = self.sync[key] = [None, []]
                    elif point[0] is not None:
                        link(cmd.c, (<Command>point[0]).c)
                    readers = point[1]
                    readers.append(cmd)
                    n = len(readers)
                    if n >= 64 and n & (n - 1) == 0:        # amortised: at powers of two
                        readers[:] = [x for x in readers if x.c.status > ST_COMPLETE]
        self.since.append(cmd)
        self._prune_since()

    cpdef submit(self, Command cmd):
        """Count it among the queue's unfinished commands and hand it to the driver."""
        cmd._attach(self.tracker)
        cmd._commit()


cdef class LaunchPlan:
    """What every launch of a kernel with its current argument values shares (built by
    core/kernel.py once per change of the arguments): the argument block and its local-pointer
    cells, the code, the merged memory accesses for ordering, and the objects that must stay
    alive while launches are pending -- retained once when the first launch starts and released
    when the last one has finished (the plan is each command's clean-up hook), instead of once
    per command. It also caches the last launch geometry the Python path validated."""
    cdef size_t fn
    cdef char *args
    cdef size_t args_size
    cdef int n_args
    cdef size_t *cells
    cdef int n_cells
    cdef readonly size_t scratch_size
    cdef object owner
    cdef readonly tuple retained
    cdef readonly object code
    cdef readonly object accesses
    cdef readonly object context
    cdef readonly long pending
    # geometry cache: the request (dim, global, local, offset, which were NULL) -> the result
    cdef object geo_device
    cdef uint64_t geo_in[9]
    cdef int geo_dim, geo_flags, geo_empty
    cdef uint64_t geo_out[9]

    def __cinit__(self, size_t fn, size_t args, size_t args_size, int n_args, local_cells,
                  size_t scratch_size, owner, retained, code, accesses, context):
        cdef int j
        self.fn, self.args, self.args_size, self.n_args = fn, <char *>args, args_size, n_args
        self.n_cells = len(local_cells)
        self.cells = <size_t *>malloc(max(1, self.n_cells) * sizeof(size_t))
        for j in range(self.n_cells):
            self.cells[j] = local_cells[j]
        self.scratch_size = scratch_size
        self.owner, self.retained, self.code = owner, tuple(retained), code
        self.accesses, self.context = accesses, context
        self.geo_dim = 0

    def __dealloc__(self):
        free(self.cells)

    def __call__(self):
        """One launch finished (run by reap()): release the objects after the last one."""
        self.pending -= 1
        if self.pending == 0:
            for obj in reversed(self.retained):
                obj.release()

    cdef void _started(self):
        if self.pending == 0:
            for obj in self.retained:
                obj.retain()
        self.pending += 1

    def remember_geometry(self, device, int work_dim, size_t global_size, size_t local_size,
                          size_t offset, result_global, result_local, result_offset, bint empty):
        """Cache a geometry the caller validated (pointers to the request's size_t arrays)."""
        cdef int d
        self._request(work_dim, global_size, local_size, offset, self.geo_in, &self.geo_flags)
        for d in range(3):
            self.geo_out[d], self.geo_out[3 + d], self.geo_out[6 + d] = (
                result_global[d], result_local[d], result_offset[d])
        self.geo_empty = empty
        self.geo_device = device
        self.geo_dim = work_dim

    cdef inline void _request(self, int work_dim, size_t global_size, size_t local_size, size_t offset,
                              uint64_t *out, int *flags) noexcept:
        cdef int d
        memset(out, 0, 9 * sizeof(uint64_t))
        flags[0] = (local_size != 0) | ((offset != 0) << 1)
        for d in range(work_dim):
            out[d] = (<size_t *>global_size)[d]
            if local_size:
                out[3 + d] = (<size_t *>local_size)[d]
            if offset:
                out[6 + d] = (<size_t *>offset)[d]

    cdef bint _geometry_is(self, object device, int work_dim, size_t global_size, size_t local_size,
                           size_t offset):
        cdef uint64_t req[9]
        cdef int flags
        if work_dim != self.geo_dim or device is not self.geo_device or global_size == 0:
            return False
        self._request(work_dim, global_size, local_size, offset, req, &flags)
        return flags == self.geo_flags and memcmp(req, self.geo_in, sizeof(req)) == 0


cdef Command _launch(QueueCore q, LaunchPlan plan, uint64_t *geo, int work_dim, bint empty,
                     list waits, object name):
    """Build, link and submit a kernel command from a plan and a validated geometry."""
    cdef Command cmd = Command.__new__(Command, K_NOP, q.driver, name)
    cdef cmd_t *c = cmd.c
    cdef uint64_t *argv
    cdef int d, j
    cdef list hooks
    if not empty:
        c.kind = K_NDRANGE
        c.fn = <void *>plan.fn
        c.args_size = plan.args_size
        c.args = <char *>pp_aligned(plan.args_size)
        memcpy(c.args, plan.args, plan.args_size)
        c.n_args = plan.n_args
        argv = <uint64_t *>c.args
        for j in range(plan.n_args):
            argv[j] = argv[j] - <uint64_t>plan.args + <uint64_t>c.args
        if plan.n_cells:
            c.n_patch = plan.n_cells
            c.patch = <size_t *>malloc(plan.n_cells * sizeof(size_t))
            memcpy(c.patch, plan.cells, plan.n_cells * sizeof(size_t))
        c.scratch_size = plan.scratch_size
        c.geo.work_dim = work_dim
        c.total = 1
        for d in range(3):
            c.geo.global_size[d] = geo[d]
            c.geo.local_size[d] = geo[3 + d]
            c.geo.global_offset[d] = geo[6 + d]
            c.geo.num_groups[d] = geo[d] // geo[3 + d]
            c.total *= c.geo.num_groups[d]
    plan._started()
    Py_INCREF(plan)                      # the clean-up hook run by reap(): the plan's pending count
    c.hooks = <PyObject *>plan
    for w in waits:
        link(c, (<Command>w).c)
    q.order(cmd, False, plan.accesses)
    q.submit(cmd)
    return cmd


def launch_kernel(QueueCore q, LaunchPlan plan, device, int work_dim, size_t global_size, size_t local_size,
                  size_t offset, waits, name=""):
    """The Python API path's kernel launch, after its checks; the geometry must have been given
    to plan.remember_geometry for this request. Returns the Command."""
    if not plan._geometry_is(device, work_dim, global_size, local_size, offset):
        raise ValueError("launch geometry not validated")
    return _launch(q, plan, plan.geo_out, work_dim, plan.geo_empty, list(waits), name)


# ---------------------------------------------------------------------------------------------
# Native fast path of clEnqueueNDRangeKernel, clRetainEvent and clReleaseEvent
#
# Each try_* function answers the common case natively and returns 1 with the status set, or
# returns 0 without having done anything; the direct entries (runtime/_entries.pyx) then call the
# Python implementation, which gives the spec's codes and messages -- and, for a kernel launch,
# primes its plan and geometry cache for the next call. Core objects are found through the API
# layer's handle registry (a dict: a stale or foreign pointer is never read) and checked by
# class; all of it runs with the GIL held.
# ---------------------------------------------------------------------------------------------

cdef dict _registry = None                     # handle address -> core object (api/handles.py)
cdef type _queue_cls = None, _kernel_cls = None, _event_cls = None
ctypedef int (*try_ndrange_fn)(size_t, size_t, uint32_t, size_t, size_t, size_t, uint32_t, size_t,
                               size_t, int32_t *) noexcept
ctypedef int (*try_event_fn)(size_t, int32_t *) noexcept


cdef inline object _registered(size_t h, type cls):
    obj = _registry.get(h)
    return obj if obj is not None and isinstance(obj, cls) else None


cdef void _internal_error(const char *where) noexcept:
    try:
        sys.stderr.write(f"pyplat: internal error in the fast path of {where.decode()}:\n"
                         f"{traceback.format_exc()}")
    except BaseException:
        pass


cdef int try_ndrange(size_t queue, size_t kernel, uint32_t work_dim, size_t offset, size_t global_size,
                     size_t local_size, uint32_t n_events, size_t events, size_t event,
                     int32_t *status) noexcept with gil:
    cdef LaunchPlan plan
    cdef QueueCore core
    cdef list waits = []
    cdef uint32_t i
    try:
        q = _registered(queue, _queue_cls)
        k = _registered(kernel, _kernel_cls)
        if q is None or k is None or (n_events == 0) != (events == 0):
            return 0
        p, c = k._plan, q.core
        if type(p) is not LaunchPlan or type(c) is not QueueCore:
            return 0
        plan, core = <LaunchPlan>p, <QueueCore>c
        if plan.context is not core.context or not plan._geometry_is(core.device, work_dim, global_size,
                                                                     local_size, offset):
            return 0
        for i in range(n_events):
            w = _event_command((<size_t *>events)[i], core.context)
            if w is None:
                return 0
            waits.append(w)
    except BaseException:
        _internal_error(b"clEnqueueNDRangeKernel")
        return 0                            # nothing done yet: the Python path answers
    try:
        cmd = _launch(core, plan, plan.geo_out, work_dim, plan.geo_empty, waits, "")
        if event:
            (<size_t *>event)[0] = _new_event(q, core, cmd)
        status[0] = CL_SUCCESS_
    except BaseException:
        _internal_error(b"clEnqueueNDRangeKernel")
        status[0] = CL_OUT_OF_HOST_MEMORY_
    return 1


# ---------------------------------------------------------------------------------------------
# Native events of the fast path
#
# An event handed out by the fast path is a native handle (same leading layout as the API
# layer's handle structs) holding its command, queue and context and an OpenCL reference count.
# clRetainEvent / clReleaseEvent on it are answered here. The first time any Python API function
# needs it (info, callbacks, waits, ...), the API layer *adopts* it: it makes the core Event
# object, which takes over the count and the references, and registers it under this very
# address; from then on it is an ordinary handle whose memory the runtime frees when the API
# layer forgets it. Freed handles are quarantined like the API layer's, so that a stale pointer
# reads as dead for a while instead of as a new event.
# ---------------------------------------------------------------------------------------------

cdef struct nevent_t:
    void *dispatch
    uint32_t magic
    uint32_t kind
    uint64_t serial
    PyObject *obj                 # the adopted core Event, NULL before
    long refs                     # OpenCL reference count until adopted
    PyObject *command
    PyObject *queue
    PyObject *context
    PyObject *core

cdef size_t h_dispatch = 0
cdef uint32_t h_magic = 0, h_dead = 0, h_event = 0
cdef uint64_t _event_serial = (<uint64_t>1) << 62
cdef set _native_events = set()               # live native event handles (addresses)
cdef object _dead_events = None               # collections.deque of addresses (quarantine)
DEF EVENT_QUARANTINE = 4096


cdef size_t _new_event(object queue, QueueCore core, Command cmd) except 0:
    global _event_serial
    cdef nevent_t *s = <nevent_t *>calloc(1, sizeof(nevent_t))
    if s == NULL:
        raise MemoryError()
    if core.native_events == 0:
        core.context.retain()            # one context reference for all of the queue's
    core.native_events += 1
    s.dispatch = <void *>h_dispatch
    s.magic, s.kind = h_magic, h_event
    _event_serial += 1
    s.serial = _event_serial
    s.refs = 1
    Py_INCREF(cmd)
    Py_INCREF(queue)
    Py_INCREF(core.context)
    Py_INCREF(core)
    s.command, s.queue, s.context, s.core = (<PyObject *>cmd, <PyObject *>queue, <PyObject *>core.context,
                                             <PyObject *>core)
    _native_events.add(<size_t>s)
    return <size_t>s


cdef void _native_gone(QueueCore core):
    """A native event stopped counting on its queue's context reference."""
    core.native_events -= 1
    if core.native_events == 0:
        core.context.release()


cdef void _bury(nevent_t *s):
    """Dead handle into quarantine; the oldest one out of it is freed."""
    s.magic = h_dead
    s.obj = NULL
    _dead_events.append(<size_t>s)
    if len(_dead_events) > EVENT_QUARANTINE:
        free(<void *>(<size_t>_dead_events.popleft()))


cdef void _drop_native_refs(nevent_t *s):
    cdef PyObject *cmd = s.command
    cdef PyObject *queue = s.queue
    cdef PyObject *context = s.context
    cdef PyObject *core = s.core
    s.command = s.queue = s.context = s.core = NULL
    Py_XDECREF(cmd)
    Py_XDECREF(queue)
    Py_XDECREF(context)
    Py_XDECREF(core)


cdef inline nevent_t *_native_event(size_t h):
    """The native event at h if it is one that has not been adopted, else NULL."""
    cdef nevent_t *s
    if h == 0 or h not in _native_events:
        return NULL
    s = <nevent_t *>h
    return s if s.obj == NULL else NULL


cdef object _event_command(size_t h, object context):
    """The Command of event handle h if it belongs to `context`, else None (native or adopted)."""
    cdef nevent_t *s = _native_event(h)
    if s != NULL:
        return <object>s.command if <object>s.context is context else None
    e = _registered(h, _event_cls)
    if e is None or e.context is not context:
        return None
    return e.command


cdef int try_retain_event(size_t h, int32_t *status) noexcept with gil:
    cdef nevent_t *s = _native_event(h)
    if s == NULL:
        return 0
    s.refs += 1
    status[0] = CL_SUCCESS_
    return 1


cdef int try_release_event(size_t h, int32_t *status) noexcept with gil:
    cdef nevent_t *s = _native_event(h)
    if s == NULL:
        return 0
    status[0] = CL_SUCCESS_
    s.refs -= 1
    if s.refs == 0:
        try:
            _native_events.discard(h)
            core = <object>s.core
            _drop_native_refs(s)
            _bury(s)
            _native_gone(core)
        except BaseException:
            _internal_error(b"clReleaseEvent")
            status[0] = CL_OUT_OF_HOST_MEMORY_
    return 1


def adopt_event(size_t h, factory):
    """For the API layer's registry, on a handle it does not know: if h is a native event not yet
    adopted, factory(queue, command, refcount) makes its core Event (taking over the count and a
    context reference), which is recorded in the handle and returned; else None."""
    cdef nevent_t *s = _native_event(h)
    if s == NULL:
        return None
    event = factory(<object>s.queue, <object>s.command, s.refs)
    core = <object>s.core
    s.obj = <PyObject *>event            # borrowed: the API layer's registry keeps it alive
    _drop_native_refs(s)
    _native_gone(core)                   # the Event holds its own context reference now
    return event


def forget_native_handle(size_t h):
    """The API layer forgot an adopted native event (its Event was destroyed)."""
    if h in _native_events:
        _native_events.discard(h)
        _bury(<nevent_t *>h)


def configure_fast_path(registry, queue_cls, kernel_cls, event_cls, size_t dispatch, magic, dead_magic,
                        event_kind):
    """Describe the API layer: its handle registry (address -> core object), the core classes of
    queues, kernels and events, and its handle layout for native events (dispatch pointer, live and
    dead magic, the event kind). Returns {name: address} of the try_* functions, for _entries."""
    global _registry, _queue_cls, _kernel_cls, _event_cls, h_dispatch, h_magic, h_dead, h_event, _dead_events
    import collections
    _registry, _queue_cls, _kernel_cls, _event_cls = registry, queue_cls, kernel_cls, event_cls
    h_dispatch, h_magic, h_dead, h_event = dispatch, magic, dead_magic, event_kind
    _dead_events = collections.deque()
    return {"clEnqueueNDRangeKernel": <size_t><try_ndrange_fn>try_ndrange,
            "clRetainEvent": <size_t><try_event_fn>try_retain_event,
            "clReleaseEvent": <size_t><try_event_fn>try_release_event}
