# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Stream driver: a driver for a device that takes work on a stream of its own and times it with
# events of its own -- a GPU through the CUDA driver API, whose calling conventions the function
# table below has (the device class hands in the functions' addresses: the runtime links to no
# device library, and tests hand in stand-ins).
#
# A command's work is a kernel launch (K_STREAM: function, grid and block, dynamic shared
# memory, parameter block). `ready` -- called once its dependencies finished, on whichever
# thread finished the last of them -- puts it on the driver's stream between two events, without
# the GIL and without waiting; `submit` does so at commit already when all it waits for is the
# queue's order after a launch on the stream (stream_submit). A completion thread of the driver's own waits for each launched
# command's end event in launch order (the stream's order: one stream per driver), reads the
# device's time for it, and completes it through cmd_set_status: the broadcast then readies
# what waited for it, through each waiter's own driver. Waiting on the event rather than asking
# the device to call back (cuLaunchHostFunc) also hears of a fault: the wait returns the error
# that broke the context, and the command fails with it (the fault hook, in Python, says why
# and what it costs). Nothing on the way takes the GIL unless a launch fails.
# ---------------------------------------------------------------------------------------------

ctypedef int (*st_set_current_fn)(void *context) noexcept nogil
ctypedef int (*st_launch_fn)(void *function, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                             void *stream, void **params, void **extra) noexcept nogil
ctypedef int (*st_event_create_fn)(void **event, unsigned int flags) noexcept nogil
ctypedef int (*st_event_record_fn)(void *event, void *stream) noexcept nogil
ctypedef int (*st_event_sync_fn)(void *event) noexcept nogil
ctypedef int (*st_event_elapsed_fn)(float *ms, void *start, void *end) noexcept nogil

STREAM_FUNCTIONS = ("cuCtxSetCurrent", "cuLaunchKernel", "cuEventCreate", "cuEventRecord",
                    "cuEventSynchronize", "cuEventElapsedTime")


cdef struct stream_state_t:
    st_set_current_fn set_current
    st_launch_fn launch
    st_event_create_fn event_create
    st_event_record_fn event_record
    st_event_sync_fn event_sync
    st_event_elapsed_fn event_elapsed
    void *context
    void *stream
    pthread_mutex_t lock           # launches (their order on the stream is the FIFO's), the
    pthread_cond_t cv              # FIFO of launched commands and the free events
    cmd_t *head                    # launched, oldest first (linked through next)
    cmd_t *tail
    void **free_events
    int n_free
    int cap_free
    PyObject *fault_hook           # (name, CUresult) -> CL status, with the GIL


cdef void *stream_event(stream_state_t *s) noexcept nogil:
    """(s.lock held) An event to record: a recycled one, or a new one (NULL if none can be made)."""
    cdef void *e = NULL
    if s.n_free > 0:
        s.n_free -= 1
        return s.free_events[s.n_free]
    if s.event_create(&e, 0) != 0:
        return NULL
    return e


cdef void stream_recycle(stream_state_t *s, void *e) noexcept nogil:
    """(s.lock held)"""
    cdef void **grown
    if e == NULL:
        return
    if s.n_free == s.cap_free:
        grown = <void **>realloc(s.free_events, (2 * s.cap_free + 8) * sizeof(void *))
        if grown == NULL:
            return                               # (an event kept by nobody: a small leak)
        s.free_events, s.cap_free = grown, 2 * s.cap_free + 8
    s.free_events[s.n_free] = e
    s.n_free += 1


cdef int stream_fault(cmd_t *c, int code) noexcept with gil:
    """A launch or its wait failed with CUresult `code`: the status the command fails with, from
    the device's fault hook (which reports it, and marks a broken context)."""
    cdef stream_state_t *s = <stream_state_t *>c.driver.state
    name = <object>c.action if c.action != NULL else "kernel"
    try:
        return int((<object>s.fault_hook)(name, code)) if s.fault_hook != NULL else ERR_OUT_OF_RESOURCES
    except BaseException:
        sys.stderr.write(f"pyplat: the fault hook failed:\n{traceback.format_exc()}")
        return ERR_OUT_OF_RESOURCES


cdef int stream_put(stream_state_t *s, cmd_t *c) noexcept nogil:
    """(s.lock held) Put c on the stream between its two events and queue it for the completion
    thread: 0, or the CUresult that stopped it (nothing of it on the stream then)."""
    cdef void *start = stream_event(s)
    cdef void *end = stream_event(s)
    cdef int r = s.set_current(s.context)
    if r == 0 and (start == NULL or end == NULL):
        r = 2                                    # (CUDA_ERROR_OUT_OF_MEMORY)
    if r == 0:
        r = s.event_record(start, s.stream)
    if r == 0:
        r = s.launch(c.fn, <unsigned int>c.geo.num_groups[0], <unsigned int>c.geo.num_groups[1],
                     <unsigned int>c.geo.num_groups[2], <unsigned int>c.geo.local_size[0],
                     <unsigned int>c.geo.local_size[1], <unsigned int>c.geo.local_size[2],
                     <unsigned int>c.scratch_size, s.stream, <void **>c.args, NULL)
    if r == 0:
        r = s.event_record(end, s.stream)
    if r != 0:
        stream_recycle(s, start)
        stream_recycle(s, end)
        return r
    c.src, c.dst = <char *>start, <char *>end    # (the events ride with the command: a launch
    c.next = NULL                                # payload has no other use for them)
    if s.tail == NULL:
        s.head = c
    else:
        s.tail.next = c
    s.tail = c
    c.on_stream = 1
    pthread_cond_signal(&s.cv)
    return 0


cdef void stream_submit(driver_t *d, cmd_t *c) noexcept nogil:
    """At commit: a launch whose one unfinished link is the queue's order after a launch already
    on the stream goes on the stream now, behind it -- the stream keeps the order, so the GPU
    runs back-to-back launches without waiting for the host to hear of each one's end. (A
    launch with a wait list, or after anything else, waits for ready: a failed wait-list event
    must fail it before it runs.)"""
    cdef stream_state_t *s = <stream_state_t *>d.state
    cdef cmd_t *after = c.stream_after
    if after == NULL or c.stream_links_other or pp_load(&c.wait_count) != 2:
        return                                   # (2: enqueue's hold and that one link)
    cdef int put = 0
    pthread_mutex_lock(&s.lock)
    if after.on_stream:
        put = stream_put(s, c) == 0              # (failing: ready tries again, and says why)
    pthread_mutex_unlock(&s.lock)
    if put:
        cmd_set_status(c, ST_RUNNING)            # (ignored if it has finished already)


cdef void stream_ready(driver_t *d, cmd_t *c) noexcept nogil:
    """c's dependencies are done: put it on the stream (unless it is there already)."""
    cdef stream_state_t *s = <stream_state_t *>d.state
    cdef int r
    if c.on_stream:
        return                                   # (put there at commit: the completion thread has it)
    if pp_load(&c.failed):
        cmd_set_status(c, ERR_WAIT_LIST)
        return
    cmd_set_status(c, ST_RUNNING)
    pthread_mutex_lock(&s.lock)
    r = stream_put(s, c)
    pthread_mutex_unlock(&s.lock)
    if r != 0:
        c.times[3] = pp_now_ns()
        cmd_set_status(c, stream_fault(c, r))


cdef void *stream_completions(void *arg) noexcept nogil:
    """The completion thread: each launched command, in launch order, waited for and completed."""
    cdef driver_t *d = <driver_t *>arg
    cdef stream_state_t *s = <stream_state_t *>d.state
    cdef cmd_t *c
    cdef float ms
    cdef int r, status
    s.set_current(s.context)
    while True:
        pthread_mutex_lock(&s.lock)
        while s.head == NULL:
            pthread_cond_wait(&s.cv, &s.lock)
        c = s.head                               # (stays first until completed: launches add
        pthread_mutex_unlock(&s.lock)            # at the tail only)
        r = s.event_sync(<void *>c.dst)
        c.times[3] = pp_now_ns()
        ms = 0
        if r == 0 and s.event_elapsed(&ms, <void *>c.src, <void *>c.dst) == 0 and ms > 0:
            c.device_ns = <unsigned long long>(ms * 1e6)
            if c.times[2] + c.device_ns < c.times[3]:
                c.times[2] = c.times[3] - c.device_ns   # the profiled span: the device's
        pthread_mutex_lock(&s.lock)
        s.head = c.next
        if s.head == NULL:
            s.tail = NULL
        c.next = NULL
        stream_recycle(s, <void *>c.src)
        stream_recycle(s, <void *>c.dst)
        pthread_mutex_unlock(&s.lock)
        c.src = c.dst = NULL
        status = ST_COMPLETE if r == 0 else stream_fault(c, r)
        cmd_set_status(c, status)
    return NULL


cdef driver_t *make_stream_driver(size_t *functions, size_t context, size_t stream, object fault_hook) except NULL:
    cdef driver_t *d = <driver_t *>calloc(1, sizeof(driver_t))
    cdef stream_state_t *s = <stream_state_t *>calloc(1, sizeof(stream_state_t))
    cdef pthread_t thread
    if d == NULL or s == NULL:
        free(d)
        free(s)
        raise MemoryError()
    s.set_current = <st_set_current_fn>functions[0]
    s.launch = <st_launch_fn>functions[1]
    s.event_create = <st_event_create_fn>functions[2]
    s.event_record = <st_event_record_fn>functions[3]
    s.event_sync = <st_event_sync_fn>functions[4]
    s.event_elapsed = <st_event_elapsed_fn>functions[5]
    s.context, s.stream = <void *>context, <void *>stream
    pthread_mutex_init(&s.lock, NULL)
    pthread_cond_init(&s.cv, NULL)
    if fault_hook is not None:
        Py_INCREF(fault_hook)                   # (the driver lives as long as the process)
        s.fault_hook = <PyObject *>fault_hook
    d.submit = stream_submit
    d.ready = stream_ready
    d.flush = noop_flush
    d.join = default_join
    d.notify = default_notify
    d.state = s
    if pthread_create(&thread, NULL, stream_completions, d) != 0:
        raise MemoryError("no completion thread")
    pthread_detach(thread)
    return d


def stream_driver(functions, size_t context, size_t stream, fault_hook=None):
    """A Driver putting kernel launches on `stream` in `context` (see above). functions: the
    addresses of STREAM_FUNCTIONS, in that order; fault_hook(command name, CUresult) -> the
    status its command fails with (a CL error code)."""
    cdef size_t table[6]
    cdef Driver drv = Driver.__new__(Driver)
    cdef int i
    if len(functions) != len(STREAM_FUNCTIONS):
        raise ValueError(f"the stream driver needs {len(STREAM_FUNCTIONS)} functions: {STREAM_FUNCTIONS}")
    for i in range(6):
        table[i] = functions[i]
    drv.d = make_stream_driver(table, context, stream, fault_hook)
    drv.name, drv.workers = "stream", 0
    start_reaper()
    return drv


def stream_launch(Driver driver, size_t function, grid, block, unsigned int shared, params, name):
    """A Command launching `function` on a stream driver: grid and block (3 each), dynamic
    shared memory bytes, params: the bytes of each kernel parameter, in order (CUDA's
    kernelParams is built from them: an array of pointers to the values, one block)."""
    cdef Command cmd = Command(K_STREAM, driver, name)
    cdef cmd_t *c = cmd.c
    cdef size_t n = len(params), at, i
    cdef size_t size = 8 * max(n, 1)
    cdef char *block_
    offsets = []
    for value in params:
        size += -size % 16
        offsets.append(size)
        size += max(len(value), 1)
    block_ = <char *>pp_aligned(size)
    if block_ == NULL:
        raise MemoryError()
    memset(block_, 0, size)
    for i in range(n):
        at = offsets[i]
        value = bytes(params[i])
        if len(value):
            memcpy(block_ + at, <const char *>value, len(value))
        (<void **>block_)[i] = block_ + at
    c.args, c.args_size, c.n_args = block_, size, n
    c.fn = <void *>function
    c.scratch_size = shared
    for i in range(3):
        c.geo.num_groups[i] = grid[i]
        c.geo.local_size[i] = block[i]
    c.action = <PyObject *>name                # (its name for a fault report; the reaper drops it)
    Py_INCREF(name)
    return cmd
