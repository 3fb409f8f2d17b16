# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
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


cdef driver_t *make_basic() noexcept nogil:
    cdef driver_t *d = <driver_t *>calloc(1, sizeof(driver_t))
    d.submit = noop_submit
    d.ready = basic_ready
    d.flush = noop_flush
    d.join = default_join
    d.notify = default_notify
    d.runs_at_commit = 1
    return d
