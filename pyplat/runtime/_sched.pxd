# cython: language_level=3
# The runtime's C interface (pyplat/runtime/_sched.pyx): the structs of commands, queues'
# ordering cores, launch plans and holds, and the cdef functions other native modules call
# (pyplat/api/_native.pyx: the API layer's native fast path). A cimporting module calls these
# through Cython's exported function pointers; the tiny reference-count helpers are inline here.
from cpython.ref cimport PyObject
from libc.stdint cimport uint64_t, int32_t, uint32_t

cdef extern from *:
    """
    #include <stdlib.h>
    #include <time.h>
    static inline long pp_add(long *p, long v) { return __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST); }
    static inline long pp_load(long *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
    static inline int pp_load_i(int *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static inline void pp_store(long *p, long v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
    static inline int pp_cas(long *p, long expected, long desired) {
        return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
    static inline unsigned long long pp_now_ns(void) {
        struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
        return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec; }
    static inline void *pp_aligned(size_t size) {
        size = (size + 127) & ~(size_t)127; if (!size) size = 128;
        return aligned_alloc(128, size); }
    typedef void (*pp_event_cb)(void *event, int status, void *user);
    typedef void (*pp_user_fn)(void *args);
    """
    long pp_add(long *p, long v) nogil
    long pp_load(long *p) nogil
    int pp_load_i(int *p) nogil
    void pp_store(long *p, long v) nogil
    int pp_cas(long *p, long expected, long desired) nogil
    unsigned long long pp_now_ns() nogil
    void *pp_aligned(size_t) nogil
    ctypedef void (*pp_event_cb)(void *event, int status, void *user) noexcept nogil
    ctypedef void (*pp_user_fn)(void *args) noexcept nogil

cdef extern from "<sys/mman.h>" nogil:
    int madvise(void *addr, size_t length, int advice)
    int MADV_HUGEPAGE

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

cdef enum:
    # Status values (OpenCL).
    ST_COMPLETE = 0
    ST_RUNNING = 1
    ST_SUBMITTED = 2
    ST_QUEUED = 3
    ERR_WAIT_LIST = -14          # CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    ERR_OUT_OF_RESOURCES = -5
    CL_SUCCESS_ = 0
    CL_OUT_OF_HOST_MEMORY_ = -6
    # clEnqueueNDRangeKernel's refusals of sizes (sched/launch_sizes.pxi)
    CL_INVALID_WORK_DIMENSION_ = -53
    CL_INVALID_WORK_GROUP_SIZE_ = -54
    CL_INVALID_WORK_ITEM_SIZE_ = -55
    CL_INVALID_GLOBAL_OFFSET_ = -56

cdef enum:
    # Command kinds.
    K_NOP = 0
    K_PY = 1
    K_COPY = 2
    K_FILL = 3
    K_RECT = 4
    K_NDRANGE = 5
    K_NATIVE = 6
    K_USER = 7
    K_STREAM = 8                 # a launch on a stream driver's device (sched/stream_driver.pxi)


cdef struct WorkGroupContext:       # pyplat/compiler/abi.py
    uint64_t work_dim
    uint64_t global_size[3]
    uint64_t local_size[3]
    uint64_t num_groups[3]
    uint64_t global_offset[3]
    uint64_t group_id[3]
    void *local_mem

# returns 0, or 1 when a check compiled into the kernel (PYPLAT_CHECK) found a bad access
ctypedef int (*work_group_fn)(void **args, const WorkGroupContext *ctx) noexcept nogil

cdef struct cb_t:
    int trigger
    pp_event_cb fn
    void *user
    void *handle
    int fired
    cb_t *next

cdef struct qtrack_t:
    long trace_id                  # PYPLAT_TRACE: the queue's number (0: not traced)
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
    int runs_at_commit           # ready may run the command on the committing thread (which
                                 # then gives up the GIL first: Command.commit)

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
    hold_t *mem_holds[4]           # native transfers and launches (api/_native.pyx): the holds of
                                   # their buffers, told when the command finished (as plan)
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
    long fault                     # kernels: the signal that stopped it (0: none; faults.pxi;
                                   # CHECK_FINDING: a compiled check's finding)
    unsigned long long device_ns   # actions on a device with its own clock: its run time (0: none)
    # stream driver launches (sched/stream_driver.pxi): put on the stream ahead of time when all
    # they wait for is one launch already there (the queue's order, no wait list)
    cmd_t *stream_after            # that launch (a reference), while it is the only link
    int stream_links_other         # another link (a wait list, a second one): not ahead of time
    int on_stream                  # on the stream (launched), until completed
    long trace_id                  # PYPLAT_TRACE (tracing.pxi): its number, 0 when not traced
    int trace_name                 # ... its name in the trace's name table (0: by its kind)


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

ctypedef void (*idle_fn)(void *) noexcept nogil

cdef struct hold_t:              # Python references held for native users ("Holds", holds.pxi)
    pthread_mutex_t *lock        # the owning struct's mutex guards the fields
    long users                   # native users: launches pending, native events alive
    int held                     # the take hook succeeded on refs, the drop hook not called yet
    int armed                    # (launch plans) users may come without refs held: the layer
                                 # above keeps the objects alive and counts them (LaunchPlan.arm)
    int reap_queued              # on the reap list (only ever while held)
    int pinned                   # held with nothing to drop (hold_pin): a buffer the API layer made
                                 # natively, whose memory its native record owns, until adopted
    PyObject *owner              # a reference while held: keeps the owning struct alive too
    PyObject *refs               # a reference while held: what the hooks take and drop
    hold_t *reap_next
    idle_fn on_idle              # (pinned, its owner gone: hold_unpin_or_defer) called once by the
    void *idle_arg               # last user's hold_done, with idle_arg

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

cdef struct devlim_t:            # a device a kernel's program was built for, with the limits a
                                 # launch's sizes are checked against (KernelSizes.launchable_on)
    size_t id                    # id() of the core Device (qcore_t.device)
    uint64_t max_group           # CL_DEVICE_MAX_WORK_GROUP_SIZE
    uint64_t max_items[3]        # CL_DEVICE_MAX_WORK_ITEM_SIZES
    uint64_t local_mem           # CL_DEVICE_LOCAL_MEM_SIZE

cdef struct refusal_t:           # why a rule refused a request (sched/launch_sizes.pxi): the
    int32_t code                 # error code, and a format naming up to three numbers, {a},
    const char *reason           # {b} and {c}
    uint64_t a
    uint64_t b
    uint64_t c

cdef struct sizes_t:             # a kernel's sizes validated last (KernelSizes), which its
                                 # objects' plans take when their own do not match a launch
    pthread_mutex_t lock
    long refs
    int n_devs                   # devices the fast path may check new sizes for, natively
    devlim_t devs[4]
    uint64_t reqd[3]             # reqd_work_group_size (0: none)
    size_t device                # 0: none yet
    size_t local_mem             # the device's local memory: a plan whose scratch fits may take them
    int dim
    int flags
    int empty
    uint64_t req[6]
    uint64_t out[6]

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
    char name[64]                 # the kernel's name (fault reports)
    int trace_name                # its index in the trace's name table (0: not yet there)
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
    sizes_t *sizes               # its kernel's (a reference; NULL: none)


# --- reference counts (inline: one atomic each; freeing is a call) -----------------------------
cdef inline void cmd_incref(cmd_t *c) noexcept nogil:
    pp_add(&c.refs, 1)

cdef void cmd_free(cmd_t *c) noexcept nogil

cdef inline void cmd_decref(cmd_t *c) noexcept nogil:
    if pp_add(&c.refs, -1) == 0:
        cmd_free(c)

cdef inline void qcore_incref(qcore_t *q) noexcept nogil:
    pp_add(&q.refs, 1)

cdef inline void plan_incref(plan_t *p) noexcept nogil:
    pp_add(&p.refs, 1)

cdef inline size_t key_hash(size_t key) noexcept nogil:
    """Hash of an address or id for open addressing (its low bits are alignment)."""
    return <size_t>(((<uint64_t>key >> 4) * <uint64_t>0x9E3779B97F4A7C15ULL) >> 24)


# --- commands (sched/commands.pxi) --------------------------------------------------------------
cdef cmd_t *cmd_new(int kind) noexcept nogil
cdef int link(cmd_t *waiter, cmd_t *ev) noexcept nogil
cdef void cmd_commit(cmd_t *c) noexcept nogil
cdef void cmd_commit_nop(cmd_t *c) noexcept nogil     # K_NOP: completes at once when it may
cdef void cmd_set_status(cmd_t *c, int status) noexcept nogil   # user events: CL_COMPLETE or < 0
cdef void cmd_attach(cmd_t *c, qtrack_t *q) noexcept nogil
cdef void cmd_wait(cmd_t *c) noexcept nogil
cdef void fork_lose_queue(qcore_t *q) noexcept nogil
cdef void fork_lose_command(cmd_t *c) noexcept nogil
cdef void track_join(qtrack_t *q) noexcept nogil
cdef void abort_oom() noexcept nogil

# --- tracing (sched/tracing.pxi) ----------------------------------------------------------------
cdef int trace_intern(const char *name) noexcept nogil
cdef void trace_api_native(int name, unsigned long long t0, unsigned long long t1) noexcept nogil

# --- the kernel fault guard (sched/faults.pxi) --------------------------------------------------
cdef int fault_guard_first() noexcept nogil

# --- reaping (sched/reaping.pxi) ----------------------------------------------------------------
cdef bint reap_pending() noexcept nogil

# --- queues' ordering cores (sched/queue_order.pxi) ---------------------------------------------
cdef void order_locked(qcore_t *q, cmd_t *c, int barrier, access_t *acc, int n_acc,
                       int unknown) noexcept nogil
cdef void qcore_decref(qcore_t *q) noexcept nogil
cdef qcore_t *qcore_new(int mode, driver_t *driver, qtrack_t *track, size_t context,
                        size_t device) noexcept nogil
cdef qtrack_t *qtrack_new() noexcept nogil          # (sched/python_faces.pxi)
cdef void qtrack_decref(qtrack_t *q) noexcept nogil  # (sched/commands.pxi)

# --- holds (sched/holds.pxi) --------------------------------------------------------------------
cdef void hold_init(hold_t *h, pthread_mutex_t *lock) noexcept nogil
cdef int hold_use(hold_t *h) noexcept nogil
cdef void hold_done(hold_t *h) noexcept nogil
cdef bint hold_acquire(hold_t *h, object owner, object refs) except -1
cdef void hold_pin(hold_t *h) noexcept nogil
cdef int hold_unpin_idle(hold_t *h) noexcept nogil
cdef int hold_unpin_or_defer(hold_t *h, idle_fn fn, void *arg) noexcept nogil
cdef bint hold_unpin(hold_t *h, object owner, object refs) except -1

# --- launch plans (sched/launch_plans.pxi) ------------------------------------------------------
cdef void plan_decref(plan_t *p) noexcept nogil
cdef plan_t *plan_derive(plan_t *p, uint32_t index, size_t value, uint64_t size) noexcept nogil
cdef int plan_start(plan_t *p, size_t device, int work_dim, size_t global_size, size_t local_size,
                    size_t offset, uint64_t *geo, int *empty, refusal_t *why) noexcept nogil
cdef str refusal_reason(const refusal_t *why)
cdef int refuse(refusal_t *why, int32_t code, const char *reason, uint64_t a, uint64_t b) noexcept nogil
cdef int refuse3(refusal_t *why, int32_t code, const char *reason, uint64_t a, uint64_t b,
                 uint64_t c) noexcept nogil
cdef int fill_launch(cmd_t *c, plan_t *p, uint64_t *geo, int work_dim, int empty) noexcept nogil


# --- Python faces (sched/python_faces.pxi, holds.pxi, launch_plans.pxi) ------------------------
cdef class Driver:
    cdef driver_t *d
    cdef readonly str name
    cdef readonly int workers

cdef class QueueTracker:
    cdef qtrack_t *q

cdef class Command:
    cdef cmd_t *c
    cdef Driver drv
    cdef public object name
    cdef void _attach(self, QueueTracker queue)
    cdef void _commit(self)

cdef class QueueCore:
    cdef qcore_t *q
    cdef readonly Driver driver
    cdef readonly QueueTracker tracker
    cdef readonly int mode
    cdef readonly object context
    cdef readonly object device
    cpdef order(self, Command cmd, bint barrier, object accesses)
    cpdef submit(self, Command cmd)

cdef class LaunchPlan:
    cdef plan_t *p
    cdef readonly object retained
    cdef readonly object code
    cdef readonly object context
    cdef readonly size_t scratch_size
    cdef readonly LaunchPlan root        # for a derived plan (wrap_derived): the plan it copies

cdef Command wrap_command(cmd_t *c, Driver driver)
cdef QueueCore wrap_queue_core(qcore_t *q, Driver driver, object context, object device)
cdef LaunchPlan wrap_derived(plan_t *c, LaunchPlan known)


# --- host memory (sched/host_memory.pxi) --------------------------------------------------------
cdef char *host_calloc(size_t size) noexcept nogil
