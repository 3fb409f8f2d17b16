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
    static inline int pp_load_i(int *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
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
    /* A cheap clock for short intervals on one machine: the time-stamp counter where there is
       one (a few ns, against ~25 for clock_gettime; its rate is ~1-4 per ns), else ns. */
    static inline unsigned long long pp_ticks(void) {
    #if defined(__x86_64__) || defined(__i386__)
        return __builtin_ia32_rdtsc();
    #else
        return pp_now_ns();
    #endif
    }
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
    int pp_load_i(int *p) nogil
    void pp_store(long *p, long v) nogil
    int pp_cas(long *p, long expected, long desired) nogil
    void pp_pause() nogil
    unsigned long long pp_now_ns() nogil
    unsigned long long pp_ticks() nogil
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

cdef extern from "Python.h":
    int PyGILState_Check() nogil

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass
    ctypedef unsigned long pthread_t
    int pthread_mutex_init(pthread_mutex_t *, void *)
    int pthread_mutex_destroy(pthread_mutex_t *)
    int pthread_mutex_lock(pthread_mutex_t *)
    int pthread_mutex_trylock(pthread_mutex_t *)
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
cdef struct plan_t
cdef struct qcore_t
cdef struct hold_t

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
    unsigned long long pushed        # when it entered a worker's queue (pool driver; pp_ticks)
    cmd_t **notify
    int n_notify
    int cap_notify
    cb_t *callbacks
    driver_t *driver
    qtrack_t *queue
    PyObject *action
    PyObject *hooks
    plan_t *plan                   # kernel launches: their plan, told when the launch finished
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


# Memory accesses of a command, for the automatic in-order mode: key = id of the root memory
# object (or of the HOST / STDOUT pseudo-objects).
cdef struct access_t:
    size_t key
    int writes

cdef struct spoint_t:            # a memory object's synchronisation point
    size_t key                   # 0: free slot
    cmd_t *writer                # the last writer (NULL: none since the last barrier)
    cmd_t **readers              # the readers since
    long n_readers
    long cap_readers

cdef struct hold_t:              # Python references held for native users ("Holds" below)
    pthread_mutex_t *lock        # the owning struct's mutex guards the fields
    long users                   # native users: launches pending, native events alive
    int held                     # owner.hold_references() succeeded, drop_references() not yet
    int reap_queued              # on the reap list (only ever while held)
    PyObject *owner              # a reference while held: keeps the owning struct alive too
    hold_t *reap_next

cdef struct qcore_t:             # a queue's ordering state (QueueCore)
    pthread_mutex_t lock
    long refs
    int mode
    driver_t *driver
    qtrack_t *track
    size_t context               # ids of the queue's core context and device (fast-path checks)
    size_t device
    cmd_t *last                  # serial mode: the command before
    cmd_t *barrier               # the last barrier
    cmd_t **since                # commands since the last barrier
    long n_since
    long cap_since
    long prune_at
    spoint_t *sync               # open addressing on key (automatic mode)
    long sync_cap
    long sync_used
    hold_t events                # for its native events; owner: the CommandQueue

cdef struct plan_t:              # a kernel launch plan (LaunchPlan)
    pthread_mutex_t lock
    long refs
    void *fn
    char *args                   # own copy of the argument block
    size_t args_size
    int n_args
    size_t *cells                # local-pointer cells (offsets in the block)
    int n_cells
    size_t scratch_size
    access_t *acc
    int n_acc
    int acc_unknown
    size_t context
    # the last launch geometry the Python path validated: request -> result
    size_t geo_device
    int geo_dim
    int geo_flags
    int geo_empty
    uint64_t geo_in[6]            # global and local sizes (0: not given)
    uint64_t geo_out[6]
    hold_t launches              # for its launches; owner: the LaunchPlan


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
    if c.plan != NULL:                       # a launch that was never committed
        hold_done(&c.plan.launches)
        plan_decref(c.plan)
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
    if c.plan != NULL:                       # before queue_done: a clFinish then sees its clean-up
        hold_done(&c.plan.launches)
        plan_decref(c.plan)
        c.plan = NULL
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


cdef void cmd_commit(cmd_t *c) noexcept nogil:
    """Linking done: SUBMITTED, hand over to the driver, drop enqueue's hold on the wait count."""
    pp_add(&c.refs, 1)                           # pending: until completion
    cmd_set_status(c, ST_SUBMITTED)
    c.driver.submit(c.driver, c)
    default_notify(c.driver, c, NULL)


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
    cdef unsigned long long until = pp_now_ns() + HOST_POLL_NS
    while not pp_load_i(flag) and host_may_poll() and pp_now_ns() < until:
        pp_pause()


cdef inline void poll_until_zero(long *count) noexcept nogil:
    cdef unsigned long long until = pp_now_ns() + HOST_POLL_NS
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
# An idle worker polls for work this long before it sleeps: pausing at first, then yielding
# between polls. A futex wake-up costs tens to hundreds of µs on virtual machines (their idle
# vCPUs halt), more than the gaps between bursts of work (bench/: kernel_imbalance at 16 workers
# is 3-20× slower with a 50 µs window). The cost: where more threads run than there are CPUs
# (the host and as many workers as cores on a loaded machine), a polling worker can delay a
# thread that needs its CPU (sched_yield seldom hands it over), by up to a time slice.
DEF IDLE_PAUSE_NS = 20000
DEF IDLE_POLL_NS = 1000000
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
    pp_add(&p.work, 1)
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
    w.chunks += 1
    if run_groups(c, p.nworkers):
        board_remove(p, c)
        c.times[3] = pp_now_ns()
        cmd_set_status(c, ST_COMPLETE)
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
    cdef unsigned long long now = pp_ticks()
    for k in range(1, p.nworkers):
        i = (w.id + k) % p.nworkers
        c = pop(&p.workers[i], now)
        if c != NULL:
            w.stolen += 1
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
            pp_add(&p.work, -1)
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

cdef extern from "<stdlib.h>" nogil:
    int atexit(void (*)() noexcept nogil)


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
            global online_cpus
            online_cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
            drv.d = make_pool(n)
            if os.environ.get("PYPLAT_POOL_STATS"):        # bench/: where the pool's time went
                atexit(print_pool_stats)
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
            track_join(self.q)
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
        cmd_attach(self.c, queue.q)

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
        if c.driver.ready == pool_ready:
            # The pool only queues the command (and maybe signals a worker): no need to give up
            # the GIL, which would invite a switch to another Python thread on every enqueue.
            cmd_commit(c)
            return
        with nogil:                                  # the basic driver may run it right here
            cmd_commit(c)

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


cdef inline size_t key_hash(size_t key) noexcept nogil:
    return <size_t>(((<uint64_t>key >> 4) * <uint64_t>0x9E3779B97F4A7C15ULL) >> 24)


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


cdef void order_locked(qcore_t *q, cmd_t *c, int barrier, access_t *acc, int n_acc,
                       int unknown) noexcept nogil:
    """Link c after what it must follow (q.lock held). acc: its accesses with distinct keys;
    unknown: they are not known (then c is a barrier in the automatic in-order mode)."""
    cdef spoint_t *sp
    cdef long i, j, n
    if q.mode == M_SERIAL:
        if q.last != NULL:
            link(c, q.last)
        cmd_replace(&q.last, c)
        return
    if barrier or (q.mode == M_AUTO and unknown):
        for i in range(q.n_since):
            link(c, q.since[i])
        if q.barrier != NULL:
            link(c, q.barrier)
        cmd_replace(&q.barrier, c)
        cmds_clear(q.since, q.n_since)
        q.n_since = 0
        if q.sync_used:
            sync_clear(q)
        return
    if q.barrier != NULL:
        link(c, q.barrier)
    if q.mode == M_AUTO:
        for i in range(n_acc):
            sp = sync_point(q, acc[i].key)
            if acc[i].writes:
                if sp.writer != NULL:
                    link(c, sp.writer)
                for j in range(sp.n_readers):
                    link(c, sp.readers[j])
                cmds_clear(sp.readers, sp.n_readers)
                sp.n_readers = 0
                cmd_replace(&sp.writer, c)
            else:
                if sp.writer != NULL:
                    link(c, sp.writer)
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


cdef inline void qcore_incref(qcore_t *q) noexcept nogil:
    pp_add(&q.refs, 1)


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


# ---------------------------------------------------------------------------------------------
# Holds: a plan's launches and a queue's native events need Python objects kept alive (the
# program and buffers; the queue and its context), which native code cannot retain. So the
# owner object takes its references once, with the GIL (hold_acquire: by the Python path, or by
# api/enqueue.prime_ndrange when a native call deferred for want of them), native users are
# only counted (hold_use / hold_done), and the reaper drops the references when it finds no
# user left (hold_drop). The owner provides hold_references() -> bool and drop_references().
# ---------------------------------------------------------------------------------------------

cdef void hold_init(hold_t *h, pthread_mutex_t *lock) noexcept nogil:
    memset(h, 0, sizeof(hold_t))
    h.lock = lock


cdef inline void hold_check_idle(hold_t *h) noexcept nogil:
    """(h.lock held) No user left: let the reaper drop the references."""
    if h.users == 0 and h.held and not h.reap_queued:
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
    pthread_mutex_lock(h.lock)
    h.users -= 1
    hold_check_idle(h)
    pthread_mutex_unlock(h.lock)


cdef bint hold_acquire(hold_t *h, object owner) except -1:
    """Hold owner's references (GIL held). False if owner could not take them."""
    cdef int held
    pthread_mutex_lock(h.lock)
    held = h.held
    pthread_mutex_unlock(h.lock)
    if held:
        return True
    if not owner.hold_references():
        return False
    Py_INCREF(owner)
    pthread_mutex_lock(h.lock)
    held = h.held
    if not held:
        h.held = 1
        h.owner = <PyObject *>owner
        hold_check_idle(h)                  # no user may come: the reaper checks later
    pthread_mutex_unlock(h.lock)
    if held:                                # another thread was first
        owner.drop_references()
        Py_XDECREF(<PyObject *>owner)
    return True


cdef void hold_drop(hold_t *h):
    """Reaper: drop the references if no user is left (GIL held). h may be freed after."""
    cdef PyObject *owner = NULL
    pthread_mutex_lock(h.lock)
    h.reap_queued = 0
    if h.users == 0 and h.held:
        h.held = 0
        owner, h.owner = h.owner, NULL
    pthread_mutex_unlock(h.lock)
    if owner != NULL:
        try:
            (<object>owner).drop_references()
        except BaseException:
            sys.stderr.write(f"pyplat: clean-up failed:\n{traceback.format_exc()}")
        Py_XDECREF(owner)


cdef class QueueCore:
    """A queue's ordering state (qcore_t) and its driver and tracker, shared by the Python API
    path and the native fast path. Memory keys are ids of root memory objects or of the HOST /
    STDOUT pseudo-objects, resolved by the caller (core/queue.py, merged_accesses)."""
    cdef qcore_t *q
    cdef readonly Driver driver
    cdef readonly QueueTracker tracker
    cdef readonly int mode
    cdef readonly object context
    cdef readonly object device

    def __cinit__(self, Driver driver, QueueTracker tracker, int mode, context=None, device=None):
        self.driver, self.tracker, self.mode, self.context = driver, tracker, mode, context
        self.device = device
        self.q = qcore_new(mode, driver.d, tracker.q, id(context), id(device))
        if self.q == NULL:
            raise MemoryError()

    def __dealloc__(self):
        if self.q != NULL:
            qcore_decref(self.q)

    cpdef order(self, Command cmd, bint barrier, object accesses):
        """Link `cmd` after what it must follow. accesses: ((key, writes), ...) with distinct
        keys, or None when unknown (then it is a barrier in the automatic in-order mode)."""
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
                acc[i].key, acc[i].writes = id(key), bool(writes)
        pthread_mutex_lock(&self.q.lock)
        order_locked(self.q, cmd.c, barrier, acc, n, unknown)
        pthread_mutex_unlock(&self.q.lock)
        if acc != local:
            free(acc)

    cpdef submit(self, Command cmd):
        """Count it among the queue's unfinished commands and hand it to the driver."""
        cmd._attach(self.tracker)
        cmd._commit()

    def hold_events(self, queue):
        """Let the fast path hand out native events of this queue: `queue` (its CommandQueue)
        holds its references for them until the reaper finds none left."""
        hold_acquire(&self.q.events, queue)

    @property
    def holds_events(self):
        return bool(self.q.events.held)


# ---------------------------------------------------------------------------------------------
# Launch plans (plan_t; a LaunchPlan for Python): what every launch of a kernel with its current
# argument values shares. A plan *holds* the objects its launches need (the program, buffers)
# from its first launch until the reaper finds none pending; launches start only on a holding
# plan, so a native launch never needs Python to keep anything alive.
# ---------------------------------------------------------------------------------------------

cdef inline void plan_incref(plan_t *p) noexcept nogil:
    pp_add(&p.refs, 1)


cdef void plan_decref(plan_t *p) noexcept nogil:
    if pp_add(&p.refs, -1) != 0:
        return
    free(p.args)
    free(p.cells)
    free(p.acc)
    pthread_mutex_destroy(&p.lock)
    free(p)


cdef inline void geometry_request(int work_dim, size_t global_size, size_t local_size,
                                  uint64_t *out, int *flags) noexcept nogil:
    """A launch request as compared with the plan's cache (pointers to size_t[work_dim]); the
    offset is not part of it: its only check (no overflow of offset + size) is made per launch."""
    cdef int d
    memset(out, 0, 6 * sizeof(uint64_t))
    flags[0] = local_size != 0
    for d in range(work_dim):
        out[d] = (<size_t *>global_size)[d]
        if local_size:
            out[3 + d] = (<size_t *>local_size)[d]


cdef int plan_start(plan_t *p, size_t device, int work_dim, size_t global_size, size_t local_size,
                    size_t offset, uint64_t *geo, int *empty) noexcept nogil:
    """A launch begins: 1 (counted as pending; geo/empty: the validated geometry with this
    launch's offset) if the request is the geometry the Python path validated and the plan holds
    its objects; 0 if it does not hold them; -1 if the geometry is another one or the offset
    would overflow (the Python path reports that)."""
    cdef uint64_t req[6]
    cdef uint64_t off[3]
    cdef int flags, d, r = 1
    if global_size == 0 or work_dim < 1 or work_dim > 3:
        return -1
    geometry_request(work_dim, global_size, local_size, req, &flags)
    for d in range(3):
        off[d] = (<size_t *>offset)[d] if offset and d < work_dim else 0
        if req[d] + off[d] < off[d]:
            return -1
    pthread_mutex_lock(&p.lock)
    if (work_dim != p.geo_dim or device != p.geo_device or flags != p.geo_flags
            or memcmp(req, p.geo_in, sizeof(req)) != 0):
        r = -1
    elif not p.launches.held:
        r = 0
    else:
        p.launches.users += 1
        memcpy(geo, p.geo_out, 6 * sizeof(uint64_t))
        memcpy(geo + 6, off, sizeof(off))
        empty[0] = p.geo_empty
    pthread_mutex_unlock(&p.lock)
    return r


cdef int fill_launch(cmd_t *c, plan_t *p, uint64_t *geo, int work_dim, int empty) noexcept nogil:
    """Make c a launch of plan p with a validated geometry (an empty range: a no-op). 0, or -1
    when out of memory."""
    cdef uint64_t *argv
    cdef int d, j
    if empty:
        return 0
    c.kind = K_NDRANGE
    c.fn = p.fn
    c.args_size = p.args_size
    c.args = <char *>pp_aligned(p.args_size)
    if c.args == NULL:
        return -1
    memcpy(c.args, p.args, p.args_size)
    c.n_args = p.n_args
    argv = <uint64_t *>c.args
    for j in range(p.n_args):
        argv[j] = argv[j] - <uint64_t>p.args + <uint64_t>c.args
    if p.n_cells:
        c.patch = <size_t *>malloc(p.n_cells * sizeof(size_t))
        if c.patch == NULL:
            return -1
        c.n_patch = p.n_cells
        memcpy(c.patch, p.cells, p.n_cells * sizeof(size_t))
    c.scratch_size = p.scratch_size
    c.geo.work_dim = work_dim
    c.total = 1
    for d in range(3):
        c.geo.global_size[d] = geo[d]
        c.geo.local_size[d] = geo[3 + d]
        c.geo.global_offset[d] = geo[6 + d]
        c.geo.num_groups[d] = geo[d] // geo[3 + d]
        c.total *= c.geo.num_groups[d]
    return 0


cdef class LaunchPlan:
    """What every launch of a kernel with its current argument values shares (built by
    core/kernel.py once per change of the arguments): a copy of the argument block and its
    local-pointer cells, the code, the merged memory accesses for ordering, and the objects that
    must stay alive while launches are pending (`retained`, a core.queue.Retained: retained when
    the plan starts holding, released by the reaper once nothing is pending). It also caches the
    last launch geometry the Python path validated, which the native fast path accepts."""
    cdef plan_t *p
    cdef readonly object retained
    cdef readonly object code
    cdef readonly object context
    cdef readonly size_t scratch_size

    def __cinit__(self, size_t fn, bytes block, int n_args, local_cells, size_t scratch_size, retained,
                  code, accesses, context):
        """block: the argument block, whose argv entries (the first n_args 64-bit words) hold
        the offsets of the values in the block (core/kernel.py, Kernel.snapshot)."""
        cdef plan_t *p = <plan_t *>calloc(1, sizeof(plan_t))
        cdef uint64_t *argv
        cdef size_t args_size = len(block)
        cdef int j
        if p == NULL:
            raise MemoryError()
        if args_size < 8 * <size_t>n_args:
            raise ValueError("argument block shorter than its argv")
        pthread_mutex_init(&p.lock, NULL)
        hold_init(&p.launches, &p.lock)
        p.refs = 1
        self.p = p
        p.fn, p.args_size, p.n_args = <void *>fn, args_size, n_args
        p.args = <char *>pp_aligned(args_size)
        p.n_cells = len(local_cells)
        p.cells = <size_t *>malloc(max(1, p.n_cells) * sizeof(size_t))
        p.n_acc = 0 if accesses is None else len(accesses)
        p.acc = <access_t *>malloc(max(1, p.n_acc) * sizeof(access_t))
        if p.args == NULL or p.cells == NULL or p.acc == NULL:
            raise MemoryError()
        memcpy(p.args, <char *>block, args_size)
        argv = <uint64_t *>p.args
        for j in range(n_args):
            argv[j] = argv[j] + <uint64_t>p.args
        for j in range(p.n_cells):
            p.cells[j] = local_cells[j]
        p.acc_unknown = accesses is None
        if accesses is not None:
            for j, (key, writes) in enumerate(accesses):
                p.acc[j].key, p.acc[j].writes = id(key), bool(writes)
        p.scratch_size = self.scratch_size = scratch_size
        p.context = id(context)
        self.retained, self.code, self.context = retained, code, context

    def __dealloc__(self):
        if self.p != NULL:
            plan_decref(self.p)

    @property
    def pending(self):
        return self.p.launches.users

    @property
    def holding(self):
        return bool(self.p.launches.held)

    def hold(self):
        """Hold the plan's objects for launches to start; False if one has been destroyed."""
        return hold_acquire(&self.p.launches, self)

    def hold_references(self):
        return self.retained.retain()

    def drop_references(self):
        self.retained.release()

    def knows_geometry(self, device, int work_dim, size_t global_size, size_t local_size):
        """Whether remember_geometry was told these sizes (the native path's test)."""
        cdef uint64_t req[6]
        cdef int flags, known
        if not 1 <= work_dim <= 3 or global_size == 0:
            return False
        geometry_request(work_dim, global_size, local_size, req, &flags)
        pthread_mutex_lock(&self.p.lock)
        known = (self.p.geo_dim == work_dim and self.p.geo_flags == flags
                 and memcmp(self.p.geo_in, req, sizeof(req)) == 0)
        pthread_mutex_unlock(&self.p.lock)
        return bool(known) and self.p.geo_device == id(device)

    def remember_geometry(self, device, int work_dim, size_t global_size, size_t local_size,
                          result_global, result_local, bint empty):
        """Cache a geometry the caller validated (pointers to the request's size_t arrays; the
        offset is taken per launch)."""
        cdef uint64_t req[6]
        cdef uint64_t out[6]
        cdef int flags, d
        geometry_request(work_dim, global_size, local_size, req, &flags)
        for d in range(3):
            out[d], out[3 + d] = result_global[d], result_local[d]
        pthread_mutex_lock(&self.p.lock)
        memcpy(self.p.geo_in, req, sizeof(req))
        memcpy(self.p.geo_out, out, sizeof(out))
        self.p.geo_flags, self.p.geo_empty = flags, empty
        self.p.geo_dim = work_dim
        pthread_mutex_unlock(&self.p.lock)
        self.p.geo_device = id(device)


def launch_kernel(QueueCore q, LaunchPlan plan, device, int work_dim, size_t global_size,
                  size_t local_size, size_t offset, waits, name=""):
    """The Python API path's kernel launch, after its checks; the geometry must have been given
    to plan.remember_geometry for this request. Returns the Command."""
    cdef uint64_t geo[9]
    cdef int empty = 0, r
    cdef Command cmd = Command(K_NOP, q.driver, name)
    cdef cmd_t *c = cmd.c
    while True:
        r = plan_start(plan.p, id(device), work_dim, global_size, local_size, offset, geo, &empty)
        if r == 1:
            break
        if r < 0:
            raise ValueError("launch geometry not validated")
        if not plan.hold():
            raise ValueError("an object of the launch plan has been destroyed")
    plan_incref(plan.p)
    c.plan = plan.p                    # told when the launch finished (or freed unlaunched)
    if fill_launch(c, plan.p, geo, work_dim, empty) < 0:
        raise MemoryError()
    for w in waits:
        link(c, (<Command>w).c)
    pthread_mutex_lock(&q.q.lock)
    order_locked(q.q, c, 0, plan.p.acc, plan.p.n_acc, plan.p.acc_unknown)
    pthread_mutex_unlock(&q.q.lock)
    q.submit(cmd)
    return cmd


# ---------------------------------------------------------------------------------------------
# Native fast path: clEnqueueNDRangeKernel, clRetainEvent, clReleaseEvent, clFlush, clFinish,
# clWaitForEvents answered in C without the GIL (docs/runtime.md, "Fast path").
#
# The API layer publishes the handles of queues, kernels and events in a native table (address
# -> queue core, kernel slot or command, with the context), so a handle is checked without
# Python and a foreign or stale pointer is never read. Each n_* function answers the common case
# and returns DEFER otherwise, having changed nothing; the caller then runs the Python
# implementation, which gives the spec's codes and messages and primes the state the next native
# call needs (a validated geometry, a holding plan, a queue holding references for events).
#
# An event the fast path hands out is a native handle (the API layer's handle layout, then an
# OpenCL count and its queue core); the table maps it to its command. The first time a Python
# entry needs it (info, callbacks, ...), the API layer *adopts* it: a core Event takes over the
# count, and retains/releases of it go to Python from then on. Freed native handles are
# quarantined like the API layer's, so that a stale pointer reads as dead for a while.
# ---------------------------------------------------------------------------------------------

DEF DEFER = 0x50594446            # "not answered here": icd/shim.h, PYPLAT_DEFER
DEF H_QUEUE = 4                   # handle kinds: pyplat/api/handles.py
DEF H_KERNEL = 7
DEF H_EVENT = 8
DEF HF_NATIVE = 1                 # a native event: memory and count are the runtime's
DEF HF_ADOPTED = 2                # ... whose count a core Event has taken over
DEF MAX_NATIVE_WAITS = 64
DEF EVENT_QUARANTINE = 4096

cdef struct hent_t:
    size_t key                    # handle address; 0: free, 1: deleted
    int kind
    int flags
    void *ptr                     # a reference: qcore_t (queues), kslot_t (kernels), cmd_t (events)
    size_t context                # id of the core context (queues, events)

cdef struct kslot_t:              # a kernel's current plan (KernelSlot)
    long refs
    plan_t *plan                  # (tab_lock) NULL when the arguments changed since

cdef struct nevent_t:
    void *dispatch                # the API layer's handle layout ...
    uint32_t magic
    uint32_t kind
    uint64_t serial
    long refs                     # ... then the OpenCL count until adopted
    qcore_t *q                    # a reference until adopted or released

cdef pthread_mutex_t tab_lock
pthread_mutex_init(&tab_lock, NULL)
cdef hent_t *tab = NULL
cdef size_t tab_cap = 0
cdef size_t tab_used = 0          # live and deleted slots
cdef size_t tab_live = 0
cdef nevent_t *dead_events[EVENT_QUARANTINE]
cdef long dead_next = 0
cdef size_t h_dispatch = 0
cdef uint32_t h_magic = 0, h_dead = 0
cdef long event_serial = (<long>1) << 62


cdef hent_t *tab_find(size_t key) noexcept nogil:
    """(tab_lock held) The live entry of a handle address, or NULL."""
    cdef size_t mask, j
    if tab_cap == 0 or key <= 1:
        return NULL
    mask = tab_cap - 1
    j = key_hash(key) & mask
    while tab[j].key != 0:
        if tab[j].key == key:
            return &tab[j]
        j = (j + 1) & mask
    return NULL


cdef void tab_rehash(size_t cap) noexcept nogil:
    global tab, tab_cap, tab_used
    cdef hent_t *old = tab
    cdef size_t n = tab_cap, i, j, mask = cap - 1
    tab = <hent_t *>calloc(cap, sizeof(hent_t))
    if tab == NULL:
        abort_oom()
    tab_cap, tab_used = cap, 0
    for i in range(n):
        if old[i].key > 1:
            j = key_hash(old[i].key) & mask
            while tab[j].key != 0:
                j = (j + 1) & mask
            tab[j] = old[i]
            tab_used += 1
    free(old)


cdef hent_t *tab_insert(size_t key) noexcept nogil:
    """(tab_lock held) A new entry for a handle address that has none."""
    global tab_used, tab_live
    cdef size_t mask, j, cap = 256
    if (tab_used + 1) * 2 > tab_cap:          # rebuilt without the deleted slots
        while cap < 4 * (tab_live + 1):
            cap *= 2
        tab_rehash(cap)
    tab_live += 1
    mask = tab_cap - 1
    j = key_hash(key) & mask
    while tab[j].key > 1:
        j = (j + 1) & mask
    if tab[j].key == 0:
        tab_used += 1
    memset(&tab[j], 0, sizeof(hent_t))
    tab[j].key = key
    return &tab[j]


cdef inline void tab_delete(hent_t *e) noexcept nogil:
    """(tab_lock held)"""
    global tab_live
    e.key, e.ptr = 1, NULL
    tab_live -= 1


cdef void bury_event(nevent_t *s) noexcept nogil:
    """(tab_lock held) A dead native handle into quarantine; the oldest one there is freed."""
    global dead_next
    s.magic = h_dead
    free(dead_events[dead_next])
    dead_events[dead_next] = s
    dead_next = (dead_next + 1) % EVENT_QUARANTINE


cdef void kslot_decref(kslot_t *k) noexcept nogil:
    if pp_add(&k.refs, -1) == 0:
        if k.plan != NULL:
            plan_decref(k.plan)
        free(k)


cdef void entry_release(int kind, void *ptr) noexcept nogil:
    """Drop the reference an entry held (after tab_lock is released)."""
    if ptr == NULL:
        return
    if kind == H_QUEUE:
        qcore_decref(<qcore_t *>ptr)
    elif kind == H_KERNEL:
        kslot_decref(<kslot_t *>ptr)
    elif kind == H_EVENT:
        cmd_decref(<cmd_t *>ptr)


cdef class KernelSlot:
    """A kernel's current launch plan as the native fast path sees it (core/kernel.py)."""
    cdef kslot_t *k

    def __cinit__(self):
        self.k = <kslot_t *>calloc(1, sizeof(kslot_t))
        if self.k == NULL:
            raise MemoryError()
        self.k.refs = 1

    def __dealloc__(self):
        if self.k != NULL:
            kslot_decref(self.k)

    def set_plan(self, LaunchPlan plan):
        """The plan of the current arguments, or None when they changed."""
        cdef plan_t *new = NULL if plan is None else plan.p
        cdef plan_t *old
        if new != NULL:
            plan_incref(new)
        pthread_mutex_lock(&tab_lock)
        old, self.k.plan = self.k.plan, new
        pthread_mutex_unlock(&tab_lock)
        if old != NULL:
            plan_decref(old)


def publish_handle(size_t address, int kind, native, context):
    """The API layer made a handle: queues with their QueueCore, kernels with their KernelSlot,
    events with their Command; `context` is the core context of queues and events."""
    cdef void *ptr
    cdef hent_t *e
    if kind == H_QUEUE:
        ptr = (<QueueCore?>native).q
        qcore_incref(<qcore_t *>ptr)
    elif kind == H_KERNEL:
        ptr = (<KernelSlot?>native).k
        pp_add(&(<kslot_t *>ptr).refs, 1)
    elif kind == H_EVENT:
        ptr = (<Command?>native).c
        cmd_incref(<cmd_t *>ptr)
    else:
        raise ValueError(f"handle kind {kind} is not published")
    cdef size_t ctx = id(context)
    pthread_mutex_lock(&tab_lock)
    e = tab_find(address)
    if e == NULL:
        e = tab_insert(address)
    else:                               # cannot happen: forgotten handles are withdrawn
        entry_release(e.kind, e.ptr)
    e.kind, e.flags, e.ptr, e.context = kind, 0, ptr, ctx
    pthread_mutex_unlock(&tab_lock)


def withdraw_handle(size_t address):
    """The API layer forgot a handle (its object was destroyed); an adopted native event's
    memory goes into the runtime's quarantine."""
    cdef hent_t *e
    cdef int kind = 0
    cdef void *ptr = NULL
    pthread_mutex_lock(&tab_lock)
    e = tab_find(address)
    if e != NULL:
        kind, ptr = e.kind, e.ptr
        if e.flags & HF_NATIVE:
            bury_event(<nevent_t *>address)
        tab_delete(e)
    pthread_mutex_unlock(&tab_lock)
    entry_release(kind, ptr)


cdef Command wrap_command(cmd_t *c, Driver driver):
    """A Command for an existing cmd_t (takes over one reference)."""
    cdef Command cmd = Command(K_NOP, driver, "")
    cmd_decref(cmd.c)
    cmd.c = c
    return cmd


def adopt_event(size_t h, factory):
    """For the API layer, on a handle it does not know: if h is a native event not yet adopted,
    factory(queue, command, refcount) makes its core Event, which takes over the count (its queue
    is the CommandQueue); it is returned. Else None."""
    cdef hent_t *e
    cdef nevent_t *s = NULL
    cdef cmd_t *c = NULL
    cdef qcore_t *q = NULL
    cdef long refs = 0
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == H_EVENT and e.flags == HF_NATIVE:
        e.flags |= HF_ADOPTED
        s = <nevent_t *>h
        refs, q, s.q = s.refs, s.q, NULL
        c = <cmd_t *>e.ptr
        cmd_incref(c)
    pthread_mutex_unlock(&tab_lock)
    if s == NULL:
        return None
    try:
        queue = <object>q.events.owner     # held while the queue has native events (this one)
        return factory(queue, wrap_command(c, queue.driver), refs)
    finally:
        hold_done(&q.events)
        qcore_decref(q)


cdef int32_t n_ndrange(size_t queue, size_t kernel, uint32_t work_dim, size_t offset, size_t global_size,
                       size_t local_size, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    cdef cmd_t *waits[MAX_NATIVE_WAITS]
    cdef hent_t *e
    cdef qcore_t *q = NULL
    cdef plan_t *p = NULL
    cdef cmd_t *c
    cdef nevent_t *s = NULL
    cdef uint64_t geo[9]
    cdef uint32_t i, n = 0
    cdef int empty = 0, ok = 0, r
    if (n_events == 0) != (events == 0) or n_events > MAX_NATIVE_WAITS:
        return DEFER
    # handles -> references, under the table lock
    pthread_mutex_lock(&tab_lock)
    e = tab_find(queue)
    if e != NULL and e.kind == H_QUEUE:
        q = <qcore_t *>e.ptr
        e = tab_find(kernel)
        if e != NULL and e.kind == H_KERNEL:
            p = (<kslot_t *>e.ptr).plan
            if p != NULL and p.context == q.context:
                ok = 1
                while n < n_events:
                    e = tab_find((<size_t *>events)[n])
                    if e == NULL or e.kind != H_EVENT or e.context != q.context:
                        ok = 0
                        break
                    waits[n] = <cmd_t *>e.ptr
                    cmd_incref(waits[n])
                    n += 1
    if ok:
        qcore_incref(q)
        plan_incref(p)
    pthread_mutex_unlock(&tab_lock)
    if not ok:
        for i in range(n):
            cmd_decref(waits[i])
        return DEFER
    r = plan_start(p, q.device, work_dim, global_size, local_size, offset, geo, &empty)
    if r == 1 and event:
        if not hold_use(&q.events):
            hold_done(&p.launches)
            r = 0
        else:
            s = <nevent_t *>calloc(1, sizeof(nevent_t))
            if s == NULL:
                hold_done(&p.launches)
                hold_done(&q.events)
                r = 0
    if r != 1:
        for i in range(n):
            cmd_decref(waits[i])
        qcore_decref(q)
        plan_decref(p)
        return DEFER
    # the command
    c = cmd_new(K_NOP)
    if c == NULL or fill_launch(c, p, geo, work_dim, empty) < 0:
        if c != NULL:
            cmd_free(c)
        hold_done(&p.launches)
        for i in range(n):
            cmd_decref(waits[i])
        if s != NULL:
            free(s)
            hold_done(&q.events)
        qcore_decref(q)
        plan_decref(p)
        return CL_OUT_OF_HOST_MEMORY_
    c.driver = q.driver
    c.plan = p                             # our reference: told when the launch finished
    for i in range(n):
        link(c, waits[i])
        cmd_decref(waits[i])
    pthread_mutex_lock(&q.lock)
    order_locked(q, c, 0, p.acc, p.n_acc, p.acc_unknown)
    pthread_mutex_unlock(&q.lock)
    cmd_attach(c, q.track)
    if s != NULL:                          # the event: a native handle in the table
        s.dispatch = <void *>h_dispatch
        s.magic, s.kind = h_magic, H_EVENT
        s.serial = <uint64_t>pp_add(&event_serial, 1)
        s.refs = 1
        s.q = q                            # our queue reference
        cmd_incref(c)
        pthread_mutex_lock(&tab_lock)
        e = tab_insert(<size_t>s)
        e.kind, e.flags, e.ptr, e.context = H_EVENT, HF_NATIVE, c, q.context
        pthread_mutex_unlock(&tab_lock)
        (<size_t *>event)[0] = <size_t>s
    cmd_commit(c)
    cmd_decref(c)                          # enqueue's reference: the queue and graph hold theirs
    if s == NULL:
        qcore_decref(q)
    return CL_SUCCESS_


cdef int32_t n_retain_event(size_t h) noexcept nogil:
    cdef hent_t *e
    cdef int32_t r = DEFER
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == H_EVENT and e.flags == HF_NATIVE:
        (<nevent_t *>h).refs += 1
        r = CL_SUCCESS_
    pthread_mutex_unlock(&tab_lock)
    return r


cdef int32_t n_release_event(size_t h) noexcept nogil:
    cdef hent_t *e
    cdef nevent_t *s
    cdef cmd_t *c = NULL
    cdef qcore_t *q = NULL
    cdef int32_t r = DEFER
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == H_EVENT and e.flags == HF_NATIVE:
        r = CL_SUCCESS_
        s = <nevent_t *>h
        s.refs -= 1
        if s.refs == 0:
            c, q, s.q = <cmd_t *>e.ptr, s.q, NULL
            tab_delete(e)
            bury_event(s)
    pthread_mutex_unlock(&tab_lock)
    if c != NULL:
        cmd_decref(c)
        hold_done(&q.events)
        qcore_decref(q)
    return r


cdef qcore_t *queue_ref(size_t queue) noexcept nogil:
    """A reference to the queue core of a published queue handle, or NULL."""
    cdef hent_t *e
    cdef qcore_t *q = NULL
    pthread_mutex_lock(&tab_lock)
    e = tab_find(queue)
    if e != NULL and e.kind == H_QUEUE:
        q = <qcore_t *>e.ptr
        qcore_incref(q)
    pthread_mutex_unlock(&tab_lock)
    return q


cdef int32_t n_flush(size_t queue) noexcept nogil:
    cdef qcore_t *q = queue_ref(queue)
    if q == NULL:
        return DEFER
    q.driver.flush(q.driver)
    qcore_decref(q)
    return CL_SUCCESS_


cdef int32_t n_finish(size_t queue) noexcept nogil:
    """Wait for the queue; Python clean-up due (reap lists) is left to the Python clFinish, so
    that what the program released is gone when clFinish returns."""
    cdef qcore_t *q
    if PyGILState_Check():               # never block holding the GIL: commands may need it
        return DEFER
    q = queue_ref(queue)
    if q == NULL:
        return DEFER
    q.driver.flush(q.driver)
    track_join(q.track)
    qcore_decref(q)
    return CL_SUCCESS_ if pp_load(&reap_count) == 0 and pp_load(&reaping) == 0 else DEFER


cdef int32_t n_wait(uint32_t n_events, size_t events) noexcept nogil:
    """clWaitForEvents on published events of one context; the Python clWaitForEvents answers
    errors and callers holding the GIL. Clean-up that comes due is left to the reaper (unlike
    clFinish, a wait does not promise it)."""
    cdef cmd_t *cmds[MAX_NATIVE_WAITS]
    cdef hent_t *e
    cdef size_t context = 0
    cdef uint32_t i, n = 0
    cdef int ok = 1, failed = 0
    cdef cmd_t *c
    if n_events == 0 or events == 0 or n_events > MAX_NATIVE_WAITS or PyGILState_Check():
        return DEFER
    pthread_mutex_lock(&tab_lock)
    while n < n_events:
        e = tab_find((<size_t *>events)[n])
        if e == NULL or e.kind != H_EVENT or (n and e.context != context):
            ok = 0
            break
        context = e.context
        cmds[n] = <cmd_t *>e.ptr
        cmd_incref(cmds[n])
        n += 1
    pthread_mutex_unlock(&tab_lock)
    for i in range(n):
        c = cmds[i]
        if ok:
            if c.driver != NULL:
                c.driver.flush(c.driver)
                c.driver.join(c.driver, c)
            else:
                cmd_wait(c)
            failed |= pp_load_i(&c.status) < 0
        cmd_decref(c)
    if not ok:
        return DEFER
    return ERR_WAIT_LIST if failed else CL_SUCCESS_


ctypedef int32_t (*wait_fn)(uint32_t, size_t) noexcept nogil
ctypedef int32_t (*ndrange_fn)(size_t, size_t, uint32_t, size_t, size_t, size_t, uint32_t, size_t,
                               size_t) noexcept nogil
ctypedef int32_t (*handle_fn)(size_t) noexcept nogil


def configure_fast_path(size_t dispatch, magic, dead_magic):
    """Describe the API layer's handle layout for native events (its dispatch pointer, live and
    dead magic). Returns {name: address} of the native entries: same C signature as the OpenCL
    function, DEFER when not answered (icd/shim.h)."""
    global h_dispatch, h_magic, h_dead
    h_dispatch, h_magic, h_dead = dispatch, magic, dead_magic
    return {"clEnqueueNDRangeKernel": <size_t><ndrange_fn>n_ndrange,
            "clRetainEvent": <size_t><handle_fn>n_retain_event,
            "clReleaseEvent": <size_t><handle_fn>n_release_event,
            "clFlush": <size_t><handle_fn>n_flush,
            "clFinish": <size_t><handle_fn>n_finish,
            "clWaitForEvents": <size_t><wait_fn>n_wait}


NATIVE_DEFER = DEFER


def table_stats():
    """(capacity, live entries) of the native handle table."""
    return tab_cap, tab_live
