# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
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
        if type(result) is int:
            if result < 0:              # a CL error: the command fails with it
                return result
            c.device_ns = result        # its run time on the device's clock
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


DEF CHECK_FINDING = -1             # c.fault of a command whose kernel's checks found a bad access


cdef struct chunk_run_t:           # run_groups' state, in memory: read back after a fault
    cmd_t *c
    char *args
    WorkGroupContext ctx               # ctx.group_id: the group being run
    long workers
    long start
    long size                          # the chunk being run (not yet counted as done)
    int last


cdef void run_chunks(void *arg) noexcept nogil:
    """Run r's chunk and the next ones grabbed until none is left (kernel code: guarded)."""
    cdef chunk_run_t *r = <chunk_run_t *>arg
    cdef cmd_t *c = r.c
    cdef work_group_fn fn = <work_group_fn>c.fn
    cdef long i, ng0 = c.geo.num_groups[0], ng1 = c.geo.num_groups[1], ng01 = ng0 * ng1
    while r.size:
        for i in range(r.start, r.start + r.size):
            r.ctx.group_id[0] = i % ng0
            r.ctx.group_id[1] = (i // ng0) % ng1
            r.ctx.group_id[2] = i // ng01
            if fn(<void **>r.args, &r.ctx):      # a compiled check's finding: the command fails
                pp_cas(&c.fault, 0, CHECK_FINDING)  # (the layer above reports it)
        if pp_add(&c.groups_done, r.size) == c.total:
            r.last = 1
        r.size = grab_chunk(c, r.workers, &r.start)


cdef long take_all_groups(cmd_t *c) noexcept nogil:
    """No more chunks for anyone: the number of groups no thread had taken."""
    cdef long n
    while True:
        n = pp_load(&c.next_group)
        if n >= c.total:
            return 0
        if pp_cas(&c.next_group, n, c.total):
            return c.total - n


cdef int run_groups(cmd_t *c, long workers) noexcept nogil:
    """Run chunks of c's work-groups until none is left. 1 if this call ran the last group. A
    fault in the kernel (faults.pxi) stops the command: the groups not yet run are counted as
    done, and c.fault says why."""
    cdef chunk_run_t r
    cdef char *own = NULL
    cdef char *scratch = NULL
    cdef int j, sig = 0
    cdef void *addr = NULL
    cdef void *pc = NULL
    cdef const char *name = ""
    r.c, r.args, r.ctx, r.workers, r.start, r.last = c, c.args, c.geo, workers, 0, 0
    r.size = grab_chunk(c, workers, &r.start)
    if r.size == 0:
        return 0
    if c.scratch_size:
        scratch = <char *>thread_scratch(c.scratch_size)
        r.ctx.local_mem = scratch
        if c.n_patch:                         # local arguments: a private argument block
            own = <char *>pp_aligned(c.args_size)
            memcpy(own, c.args, c.args_size)
            rebase_argv(own, c.n_args, c.args)
            for j in range(c.n_patch):
                (<uint64_t *>(own + c.patch[j]))[0] += <uint64_t>scratch
            r.args = own
    if pp_run_guarded(run_chunks, &r, &sig, &addr, &pc):
        if pp_cas(&c.fault, 0, sig):           # the first fault reports
            if c.plan != NULL:
                name = c.plan.name
            pp_report_fault(name, sig, addr, pc, <unsigned long long *>r.ctx.group_id)
        if pp_add(&c.groups_done, r.size + take_all_groups(c)) == c.total:
            r.last = 1
    free(own)
    return r.last


cdef inline int groups_status(cmd_t *c) noexcept nogil:
    """A kernel command's status once its groups are done."""
    return ERR_OUT_OF_RESOURCES if pp_load(&c.fault) else ST_COMPLETE


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
            return groups_status(c)
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
    if trace_on:
        trace_event(TR_RUN, 0, c.trace_id, 0, c.times[2], c.times[3])
    # a device that timed the command itself (a GPU's events): START is END less its run time,
    # so the profiled span is the device's, not the host's wait for it
    if c.device_ns and c.times[2] + c.device_ns < c.times[3]:
        c.times[2] = c.times[3] - c.device_ns
    cmd_set_status(c, status)
