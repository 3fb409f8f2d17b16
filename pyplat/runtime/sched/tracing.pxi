# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Tracing (PYPLAT_TRACE=FILE; docs/tools.md, "Timeline"). The runtime records what happened as
# fixed-size records in per-thread buffers: no lock, no Python, no allocation but a chunk every
# TRACE_CHUNK records. Off, each place costs one test of `trace_on`. pyplat/runtime/trace.py
# turns the records into Chrome trace events at exit (or on trace.write()).
#
# Each thread appends to its own chunk list and publishes a record by storing the chunk's count
# after writing it, so a reader (the writer of the file, any thread) sees whole records only.
# Buffers are never freed: they are the trace. A forked child starts an empty trace (a new
# generation: buffers of the parent's are not used again).
# ---------------------------------------------------------------------------------------------

cdef extern from *:
    """
    #include <unistd.h>
    #include <sys/syscall.h>
    static __thread void *pp_trace_buf = NULL;
    static __thread int pp_trace_reason = 0;
    static inline long pp_gettid(void) { return (long)syscall(SYS_gettid); }
    static inline void pp_publish(long *p, long v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    #include <sys/mman.h>
    /* A chunk's pages mapped at once: faulting them in one by one as records are written cost
       the recording thread ~0.1 µs per command on the virtual machines measured. */
    static inline void *pp_trace_pages(size_t size) {
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        return p == MAP_FAILED ? NULL : p; }
    """
    void *pp_trace_buf
    int pp_trace_reason
    long pp_gettid() nogil
    void pp_publish(long *p, long v) nogil
    void *pp_trace_pages(size_t size) nogil

cdef extern from "<stdlib.h>" nogil:
    int atexit(void (*)() noexcept nogil)

DEF TRACE_CHUNK = 16384     # records (64 bytes each): 1 MiB

# Record types (trace.py reads them by these numbers).
DEF TR_CMD = 1          # a finished command: a id, b queue, sub kind, status, name, t queued/submit/start/end
DEF TR_EDGE = 2         # a dependency: a from, b to, sub reason, status 1 if linked (0: from had finished); no time
DEF TR_RUN = 3          # this thread ran (part of) command a from t[0] to t[1]
DEF TR_STEAL = 4        # this worker stole command a from worker b at t[0]
DEF TR_WAKE = 5         # this thread woke sleeping workers at t[0] (sub 1: all of them)
DEF TR_COUNT = 6        # at t[0]: sub 0: a commands ready (waiting in the pool); sub 1: this worker busy (a 1) or idle (a 0)
DEF TR_API = 7          # an API call `name` from t[0] to t[1]
DEF TR_QUEUE = 8        # queue a was made at t[0], sub its mode (ORDER_*)

# Reasons of a dependency (TR_EDGE.sub): a wait list, or the queue's own order (queue_order.pxi).
DEF R_WAIT = 0
DEF R_SERIAL = 1
DEF R_BARRIER = 2
DEF R_BUFFER = 3

cdef struct trec_t:
    int type
    int sub
    int status
    int name
    uint64_t a
    uint64_t b
    unsigned long long t[4]

cdef struct tchunk_t:
    long n
    tchunk_t *next
    trec_t recs[TRACE_CHUNK]

cdef struct tbuf_t:              # one thread's records
    tchunk_t *first
    tchunk_t *last
    long gen
    int worker                   # the pool worker's id, -1 for other threads
    long tid                     # the kernel's thread id
    tbuf_t *next

cdef int trace_on = 0
cdef long trace_gen = 0
cdef tbuf_t *trace_bufs = NULL
cdef pthread_mutex_t trace_lock
pthread_mutex_init(&trace_lock, NULL)
cdef long trace_next_id = 0
cdef long trace_next_queue = 0
cdef char **trace_names = NULL   # interned names; a record's name is an index + 1 (0: none)
cdef int trace_n_names = 0
cdef int trace_cap_names = 0


cdef tbuf_t *trace_new_buf() noexcept nogil:
    global trace_bufs, pp_trace_buf
    cdef tbuf_t *b = <tbuf_t *>calloc(1, sizeof(tbuf_t))
    if b == NULL:
        return NULL
    b.first = b.last = <tchunk_t *>pp_trace_pages(sizeof(tchunk_t))
    if b.first == NULL:
        free(b)
        return NULL
    b.worker = pp_worker_id
    b.tid = pp_gettid()
    pthread_mutex_lock(&trace_lock)
    b.gen = trace_gen
    b.next = trace_bufs
    trace_bufs = b
    pthread_mutex_unlock(&trace_lock)
    pp_trace_buf = b
    return b


cdef void trace_put(trec_t *r) noexcept nogil:
    """Append r to this thread's buffer (dropped if out of memory)."""
    cdef tbuf_t *b = <tbuf_t *>pp_trace_buf
    cdef tchunk_t *k
    cdef tchunk_t *more
    if b == NULL or b.gen != trace_gen:
        b = trace_new_buf()
        if b == NULL:
            return
    k = b.last
    if k.n == TRACE_CHUNK:
        more = <tchunk_t *>pp_trace_pages(sizeof(tchunk_t))
        if more == NULL:
            return
        b.last = more
        k.next = more
        k = more
    k.recs[k.n] = r[0]
    pp_publish(&k.n, k.n + 1)             # (a plain store on x86: no fence per record)


cdef int trace_intern(const char *name) noexcept nogil:
    """The index (+1) of a copy of name in the name table."""
    global trace_names, trace_n_names, trace_cap_names
    cdef char **grown
    cdef int i
    pthread_mutex_lock(&trace_lock)
    if trace_n_names == trace_cap_names:
        grown = <char **>realloc(trace_names, (trace_cap_names * 2 + 64) * sizeof(char *))
        if grown == NULL:
            pthread_mutex_unlock(&trace_lock)
            return 0
        trace_names = grown
        trace_cap_names = trace_cap_names * 2 + 64
    trace_names[trace_n_names] = strdup(name)
    trace_n_names += 1
    i = trace_n_names
    pthread_mutex_unlock(&trace_lock)
    return i


cdef inline void trace_command_new(cmd_t *c) noexcept nogil:
    global trace_next_id
    if trace_on:
        c.trace_id = pp_add(&trace_next_id, 1)


cdef void trace_command(cmd_t *c, int status) noexcept nogil:
    """c finished with status (its times are final)."""
    cdef trec_t r
    cdef plan_t *p = c.plan
    if c.trace_name == 0 and p != NULL:
        if p.trace_name == 0:
            p.trace_name = trace_intern(p.name)
        c.trace_name = p.trace_name
    r.type, r.sub, r.status, r.name = TR_CMD, c.kind, status, c.trace_name
    r.a = c.trace_id
    r.b = c.queue.trace_id if c.queue != NULL else 0
    memcpy(r.t, c.times, 4 * sizeof(unsigned long long))
    trace_put(&r)


cdef void trace_edge(cmd_t *waiter, cmd_t *ev, int order, int linked) noexcept nogil:
    cdef trec_t r
    memset(&r, 0, sizeof(r))
    r.type, r.sub, r.status = TR_EDGE, pp_trace_reason if order else R_WAIT, linked
    r.a, r.b = ev.trace_id, waiter.trace_id       # (no time: the flow is drawn between slices)
    trace_put(&r)


cdef void trace_event(int type, int sub, uint64_t a, uint64_t b, unsigned long long t0,
                      unsigned long long t1, int name=0) noexcept nogil:
    cdef trec_t r
    memset(&r, 0, sizeof(r))
    r.type, r.sub, r.name, r.a, r.b, r.t[0], r.t[1] = type, sub, name, a, b, t0, t1
    trace_put(&r)


cdef inline void trace_run(cmd_t *c, unsigned long long t0) noexcept nogil:
    """This thread ran c (or chunks of its work-groups) since t0."""
    if trace_on:
        trace_event(TR_RUN, 0, c.trace_id, 0, t0, pp_now_ns())


cdef void trace_api_native(int name, unsigned long long t0, unsigned long long t1) noexcept nogil:
    """An API call answered by the API layer's native entries (pyplat/api/native_trace.pxi)."""
    trace_event(TR_API, 0, 0, 0, t0, t1, name)


# --- the Python side (pyplat/runtime/trace.py) ------------------------------------------------

cdef object trace_writer = None    # trace.py's: writes the file (once)


cdef void trace_write_at_exit() noexcept nogil:
    """C atexit: a C program's interpreter is never finalised, so Python's atexit handlers never
    run; write the file here. In a Python process they ran first and this does nothing."""
    if trace_writer is None:
        return
    with gil:
        try:
            trace_writer()
        except BaseException:
            pass


def trace_start(writer):
    """Start recording (PYPLAT_TRACE; trace.py calls this at import when it is set); writer()
    writes the file at exit."""
    global trace_on, trace_writer
    trace_on = 1
    trace_writer = writer
    atexit(trace_write_at_exit)


def trace_written():
    """The file was written at exit: nothing more to do at the C level."""
    global trace_writer
    trace_writer = None


def trace_enabled():
    return bool(trace_on)


def trace_fork_child():
    """A forked child records a trace of its own (the parent's records are not its)."""
    global trace_gen, trace_bufs
    pthread_mutex_init(&trace_lock, NULL)
    trace_gen += 1
    trace_bufs = NULL


def trace_api(name, unsigned long long t0, unsigned long long t1):
    """An API call on this thread from t0 to t1 (ns, CLOCK_MONOTONIC: time.monotonic_ns)."""
    cdef int index = api_names.get(name, 0)
    if index == 0:
        index = api_names[name] = trace_intern(name.encode())
    trace_event(TR_API, 0, 0, 0, t0, t1, index)


api_names = {}
command_names = {}


cdef int trace_name_of(str name):
    """The interned index of a command's name (Python commands; with the GIL)."""
    cdef int index = command_names.get(name, 0)
    if index == 0:
        index = command_names[name] = trace_intern(name.encode())
    return index


def trace_records():
    """Everything recorded so far: (names, threads); names[i - 1] is name i; each thread is
    (worker id or -1, thread id, records as tuples (type, sub, status, name, a, b, t0..t3))."""
    cdef tbuf_t *b
    cdef tchunk_t *k
    cdef trec_t *r
    cdef long i, n
    threads = []
    pthread_mutex_lock(&trace_lock)
    names = [trace_names[i].decode(errors="replace") for i in range(trace_n_names)]
    b = trace_bufs
    pthread_mutex_unlock(&trace_lock)
    while b != NULL:
        records = []
        k = b.first
        while k != NULL:
            n = pp_load(&k.n)
            for i in range(n):
                r = &k.recs[i]
                records.append((r.type, r.sub, r.status, r.name, r.a, r.b,
                                r.t[0], r.t[1], r.t[2], r.t[3]))
            k = k.next if n == TRACE_CHUNK else NULL
        threads.append((b.worker, b.tid, records))
        b = b.next
    return names, threads
