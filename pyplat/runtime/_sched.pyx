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
    pthread_mutex_t lock         # a root plan's: guards its hold and the geometry caches of it
                                 # and its derived plans (all lock hold.lock: one per launch)
    long refs
    void *fn
    char *args                   # own copy of the argument block
    size_t args_size
    int n_args
    uint32_t *value_sizes        # per argument: its size if passed by value, else 0
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
    hold_t launches              # for its launches; owner: the LaunchPlan (a root plan's)
    hold_t *hold                 # the hold its launches use: its own, or its root's if derived
    plan_t *parent               # derived plans (a by-value argument changed natively): the
                                 # root plan they copy, whose objects and hold they share


include "native_entry_types.pxi"


# The runtime in parts, one concept each, compiled as one module (so the hot path stays inlined
# C; pyplat/runtime/sched/*.pxi):
include "sched/commands.pxi"
include "sched/execution.pxi"
include "sched/reaping.pxi"
include "sched/basic_driver.pxi"
include "sched/pool_driver.pxi"
include "sched/python_faces.pxi"
include "sched/queue_order.pxi"
include "sched/holds.pxi"
include "sched/launch_plans.pxi"
include "sched/fast_path.pxi"
