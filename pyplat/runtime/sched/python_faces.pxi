# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Python faces
# ---------------------------------------------------------------------------------------------

cdef class Driver:
    """A driver (C function table) of one of the kinds below; `name` is its kind's."""

    def flush(self):
        with nogil:
            self.d.flush(self.d)

    def join(self, commands):
        cdef Command c
        for c in commands:
            c.wait()

    def stats(self):
        """What its kind counts (the pool: per worker (executed, stolen, kernel chunk
        participations), and wake-ups); {} for a kind that counts nothing."""
        return DRIVER_KINDS[self.name].stats(self)


cdef class DriverKind:
    """How a kind of driver is made and read: a registry entry, so that no generic code asks
    which kind a driver is."""
    cdef readonly object make        # workers -> (driver_t address, workers)
    cdef readonly object stats       # Driver -> dict

    def __init__(self, make, stats):
        self.make, self.stats = make, stats


def _make_basic(int workers):
    return <size_t>make_basic(), 0


def _make_pool(int workers):
    global online_cpus, IDLE_POLL_NS
    cdef int n = workers or config.value("PYPLAT_WORKERS")
    online_cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    IDLE_POLL_NS = max(IDLE_PAUSE_NS, int(config.value("PYPLAT_IDLE_US") * 1000))
    address = <size_t>make_pool(n)
    if config.value("PYPLAT_POOL_STATS"):        # bench/: where the pool's time went
        atexit(print_pool_stats)
    return address, n


def _pool_stats(Driver drv):
    cdef pool_t *p = <pool_t *>drv.d.state
    cdef int i
    return {"workers": [(p.workers[i].executed, p.workers[i].stolen, p.workers[i].chunks)
                        for i in range(p.nworkers)], "wakeups": p.wakeups}


DRIVER_KINDS = {"basic": DriverKind(_make_basic, lambda drv: {}),
                "pool": DriverKind(_make_pool, _pool_stats)}
_drivers = {}
_drivers_lock = threading.Lock()


def get_driver(name="pool", workers=0):
    """The process-wide driver of that kind (CPU devices share one pool)."""
    cdef Driver drv
    with _drivers_lock:
        if name in _drivers:
            start_reaper()               # (again in a forked child)
            return _drivers[name]
        if name not in DRIVER_KINDS:
            raise ValueError(f"unknown driver {name!r}")
        address, made_workers = DRIVER_KINDS[name].make(workers)
        drv = Driver.__new__(Driver)
        drv.d = <driver_t *><size_t>address
        drv.workers = made_workers
        drv.name = name
        _drivers[name] = drv
        start_reaper()
        return drv


def default_driver():
    """PYPLAT_DRIVER=basic selects the thread-less driver; the thread pool otherwise."""
    return get_driver(config.value("PYPLAT_DRIVER"))


cdef qtrack_t *qtrack_new() noexcept nogil:
    """A queue's tracker of unfinished commands (one reference), or NULL."""
    global trace_next_queue
    cdef qtrack_t *q = <qtrack_t *>calloc(1, sizeof(qtrack_t))
    if q == NULL:
        return NULL
    q.refs = 1
    if trace_on:
        q.trace_id = pp_add(&trace_next_queue, 1)
    pthread_mutex_init(&q.lock, NULL)
    pthread_cond_init(&q.cv, NULL)
    return q


cdef class QueueTracker:
    """Counts a queue's unfinished commands; join sleeps (GIL released) until none is left."""

    def __cinit__(self, bint empty=False):
        """empty: no tracker yet (wrap_queue_core gives it one made natively)."""
        if not empty:
            self.q = qtrack_new()
            if self.q == NULL:
                raise MemoryError()

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

    def __cinit__(self, int kind=K_NOP, Driver driver=None, name=""):
        self.c = cmd_new(kind)
        if self.c == NULL:
            raise MemoryError()
        self.drv = driver
        self.name = name
        if trace_on and name:
            self.c.trace_name = trace_name_of(str(name))
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
        """A Python callable run (with the GIL) when the command executes. It returns None, a
        negative CL error code (the command fails with it), or its run time on a device with its
        own clock in ns (the command's profiled span, START to END)."""
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
        if not c.driver.runs_at_commit:
            # The driver only queues the command (the pool: and maybe signals a worker): no need
            # to give up the GIL, which would invite a switch to another Python thread on every
            # enqueue.
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
    def address(self):
        """The native command's address: who it is in logs (its Python faces come and go)."""
        return <size_t>self.c

    @property
    def kind(self):
        return self.c.kind


cdef Command wrap_command(cmd_t *c, Driver driver):
    """A Command for an existing cmd_t (takes over one reference)."""
    cdef Command cmd = Command(K_NOP, driver, "")
    cmd_decref(cmd.c)
    cmd.c = c
    return cmd


def now_ns():
    return pp_now_ns()
