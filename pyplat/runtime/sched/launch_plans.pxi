# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Launch plans (plan_t; a LaunchPlan for Python): what every launch of a kernel with its current
# argument values shares. A plan *holds* the objects its launches need (the program, buffers)
# from its first launch until the reaper finds none pending; launches start only on a holding
# plan, so a native launch never needs Python to keep anything alive.
# ---------------------------------------------------------------------------------------------

cdef inline void rebase_argv(char *block, int n_args, const char *old) noexcept nogil:
    """An argument block starts with argv, one 64-bit pointer per argument into the block: make
    pointers into `old` (a copy it was made from; NULL: argv holds offsets) point into `block`."""
    cdef uint64_t *argv = <uint64_t *>block
    cdef uint64_t delta = <uint64_t>block - <uint64_t>old
    cdef int j
    for j in range(n_args):
        argv[j] += delta


cdef void plan_decref(plan_t *p) noexcept nogil:
    if pp_add(&p.refs, -1) != 0:
        return
    sizes_decref(p.sizes)
    free(p.args)
    free(p.value_sizes)
    free(p.cells)
    free(p.acc)
    if p.parent != NULL:
        plan_decref(p.parent)
    else:
        pthread_mutex_destroy(&p.lock)
    free(p)


cdef plan_t *plan_derive(plan_t *p, uint32_t index, size_t value, uint64_t size) noexcept nogil:
    """A copy of plan p with by-value argument `index` set to the bytes at `value` (its size
    checked by the caller): the block copied and patched, the geometry cache copied, the
    objects and hold those of p's root (a derived plan's parent is always a root, so chains of
    changes never grow). NULL when out of memory."""
    cdef plan_t *root = p.parent if p.parent != NULL else p
    cdef plan_t *c = <plan_t *>calloc(1, sizeof(plan_t))
    if c == NULL:
        return NULL
    c.args = <char *>pp_aligned(p.args_size)
    c.value_sizes = <uint32_t *>malloc(max(1, p.n_args) * sizeof(uint32_t))
    c.cells = <size_t *>malloc(max(1, p.n_cells) * sizeof(size_t))
    c.acc = <access_t *>malloc(max(1, p.n_acc) * sizeof(access_t))
    if c.args == NULL or c.value_sizes == NULL or c.cells == NULL or c.acc == NULL:
        free(c.args)
        free(c.value_sizes)
        free(c.cells)
        free(c.acc)
        free(c)
        return NULL
    memcpy(c.args, p.args, p.args_size)
    rebase_argv(c.args, p.n_args, p.args)
    memcpy(<void *>(<uint64_t *>c.args)[index], <void *>value, size)
    memcpy(c.value_sizes, p.value_sizes, max(1, p.n_args) * sizeof(uint32_t))
    memcpy(c.cells, p.cells, max(1, p.n_cells) * sizeof(size_t))
    memcpy(c.acc, p.acc, max(1, p.n_acc) * sizeof(access_t))
    c.fn, c.args_size, c.n_args, c.n_cells = p.fn, p.args_size, p.n_args, p.n_cells
    c.n_acc, c.acc_unknown, c.scratch_size, c.context = p.n_acc, p.acc_unknown, p.scratch_size, p.context
    memcpy(c.name, p.name, sizeof(c.name))
    pthread_mutex_lock(p.hold.lock)
    c.geo_device, c.geo_dim, c.geo_flags, c.geo_empty = p.geo_device, p.geo_dim, p.geo_flags, p.geo_empty
    memcpy(c.geo_in, p.geo_in, sizeof(c.geo_in))
    memcpy(c.geo_out, p.geo_out, sizeof(c.geo_out))
    pthread_mutex_unlock(p.hold.lock)
    c.refs = 1
    plan_incref(root)
    c.parent, c.hold = root, root.hold
    c.sizes = p.sizes
    if c.sizes != NULL:
        pp_add(&c.sizes.refs, 1)
    return c


cdef int plan_start(plan_t *p, size_t device, int work_dim, size_t global_size, size_t local_size,
                    size_t offset, uint64_t *geo, int *empty, refusal_t *why) noexcept nogil:
    """A launch begins: 1 (counted as pending; geo/empty: the validated geometry with this
    launch's offset) if the request is a geometry validated for the plan (by the Python path or
    check_new_sizes) and the plan holds its objects; 0 if it does not hold them; -2 if the
    sizes or the offset fail their rules (why: launch_sizes.pxi); -1 if they cannot be checked
    here (the Python path checks them)."""
    cdef uint64_t req[6]
    cdef uint64_t off[3]
    cdef int flags, d, r = 1, checked
    if global_size == 0:
        return -1
    if not dimensions_valid(work_dim, why):                                    # (launch_sizes.pxi)
        return -2
    geometry_request(work_dim, global_size, local_size, req, &flags)
    for d in range(3):
        off[d] = (<size_t *>offset)[d] if offset and d < work_dim else 0
    pthread_mutex_lock(p.hold.lock)
    if ((work_dim != p.geo_dim or device != p.geo_device or flags != p.geo_flags
            or memcmp(req, p.geo_in, sizeof(req)) != 0) and not take_kernel_sizes(p, device, work_dim, req, flags)):
        checked = check_new_sizes(p, device, work_dim, req, flags, why)       # (launch_sizes.pxi)
        r = 1 if checked == 1 else (-2 if checked < 0 else -1)
    if r == 1 and not offset_valid(work_dim, req, off, why):
        r = -2
    if r == 1 and not p.hold.held and not p.hold.armed:
        r = 0
    elif r == 1:
        p.hold.users += 1
        memcpy(geo, p.geo_out, 6 * sizeof(uint64_t))
        memcpy(geo + 6, off, sizeof(off))
        empty[0] = p.geo_empty
    pthread_mutex_unlock(p.hold.lock)
    return r


cdef int fill_launch(cmd_t *c, plan_t *p, uint64_t *geo, int work_dim, int empty) noexcept nogil:
    """Make c a launch of plan p with a validated geometry (an empty range: a no-op). 0, or -1
    when out of memory."""
    cdef int d
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
    rebase_argv(c.args, p.n_args, p.args)
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
    def __init__(self, size_t fn, bytes block, int n_args, local_cells, size_t scratch_size, retained,
                 code, accesses, context, value_sizes=(), name="", KernelSizes sizes=None):
        """block: the argument block, whose argv entries (the first n_args 64-bit words) hold
        the offsets of the values in the block (core/kernel.py, Kernel.snapshot); value_sizes:
        per argument, its size if passed by value, else 0 (n_setarg compares those); name: the
        kernel's, for fault reports; sizes: its kernel's KernelSizes."""
        cdef plan_t *p = <plan_t *>calloc(1, sizeof(plan_t))
        cdef size_t args_size = len(block)
        cdef int j
        if p == NULL:
            raise MemoryError()
        if args_size < 8 * <size_t>n_args:
            raise ValueError("argument block shorter than its argv")
        pthread_mutex_init(&p.lock, NULL)
        hold_init(&p.launches, &p.lock)
        p.hold = &p.launches
        p.refs = 1
        self.p = p
        p.fn, p.args_size, p.n_args = <void *>fn, args_size, n_args
        p.args = <char *>pp_aligned(args_size)
        p.n_cells = len(local_cells)
        p.cells = <size_t *>malloc(max(1, p.n_cells) * sizeof(size_t))
        p.value_sizes = <uint32_t *>calloc(max(1, n_args), sizeof(uint32_t))
        p.n_acc = 0 if accesses is None else len(accesses)
        p.acc = <access_t *>malloc(max(1, p.n_acc) * sizeof(access_t))
        if p.args == NULL or p.cells == NULL or p.acc == NULL or p.value_sizes == NULL:
            raise MemoryError()
        for j, size in enumerate(value_sizes[:n_args]):
            p.value_sizes[j] = size
        memcpy(p.args, <char *>block, args_size)
        rebase_argv(p.args, n_args, NULL)
        for j in range(p.n_cells):
            p.cells[j] = local_cells[j]
        p.acc_unknown = accesses is None
        if accesses is not None:
            for j, (key, writes) in enumerate(accesses):
                p.acc[j].key, p.acc[j].writes = key, bool(writes)
        p.scratch_size = self.scratch_size = scratch_size
        p.context = context_key(context)           # (holds.pxi)
        encoded = name.encode("utf-8", "replace")[:sizeof(p.name) - 1]
        memcpy(p.name, <char *>encoded, len(encoded))
        self.retained, self.code, self.context = retained, code, context
        if sizes is not None:
            p.sizes = sizes.s
            pp_add(&p.sizes.refs, 1)

    def __dealloc__(self):
        if self.p != NULL:
            plan_decref(self.p)

    @property
    def pending(self):
        return self.p.hold.users

    @property
    def holding(self):
        """Whether its objects are kept for launches now: held, or armed with launches pending."""
        return bool(self.p.hold.held) or (bool(self.p.hold.armed) and self.p.hold.users > 0)

    @property
    def armed(self):
        return bool(self.p.hold.armed)

    @property
    def armed_pending(self):
        """Armed, launches pending and no references held: its objects count one more each."""
        cdef int r
        pthread_mutex_lock(self.p.hold.lock)
        r = self.p.hold.armed and self.p.hold.users > 0 and not self.p.hold.held
        pthread_mutex_unlock(self.p.hold.lock)
        return bool(r)

    def arm(self):
        """Let launches start without the hold's references (GIL held): the caller keeps the
        objects alive and has them count this plan's pending launches (core/object.py,
        arm_plan), and disarms it before one of them could go."""
        pthread_mutex_lock(self.p.hold.lock)
        self.p.hold.armed = 1
        pthread_mutex_unlock(self.p.hold.lock)

    def disarm(self):
        """Launches need the hold again; those pending get its references now (GIL held)."""
        cdef LaunchPlan owner = self if self.root is None else self.root
        cdef long users
        cdef int was
        pthread_mutex_lock(self.p.hold.lock)
        was, users = self.p.hold.armed, self.p.hold.users
        self.p.hold.armed = 0
        pthread_mutex_unlock(self.p.hold.lock)
        if was and users > 0:
            hold_acquire(self.p.hold, owner, owner.retained)

    def hold(self):
        """Hold the plan's objects (`retained`, through the hold hooks) for launches to start;
        False if one has been destroyed."""
        cdef LaunchPlan owner = self if self.root is None else self.root
        return hold_acquire(self.p.hold, owner, owner.retained)

    def knows_geometry(self, device, int work_dim, size_t global_size, size_t local_size):
        """Whether remember_geometry was told these sizes (the native path's test)."""
        cdef uint64_t req[6]
        cdef int flags, known
        if not 1 <= work_dim <= 3 or global_size == 0:
            return False
        geometry_request(work_dim, global_size, local_size, req, &flags)
        pthread_mutex_lock(self.p.hold.lock)
        known = (self.p.geo_dim == work_dim and self.p.geo_flags == flags
                 and memcmp(self.p.geo_in, req, sizeof(req)) == 0)
        pthread_mutex_unlock(self.p.hold.lock)
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
        pthread_mutex_lock(self.p.hold.lock)
        memcpy(self.p.geo_in, req, sizeof(req))
        memcpy(self.p.geo_out, out, sizeof(out))
        self.p.geo_flags, self.p.geo_empty = flags, empty
        self.p.geo_dim = work_dim
        pthread_mutex_unlock(self.p.hold.lock)
        self.p.geo_device = id(device)


cdef LaunchPlan wrap_derived(plan_t *c, LaunchPlan known):
    """A LaunchPlan for plan c, which the native clSetKernelArg derived from known's root: it
    shares the root's objects, and the root is the owner of their hold."""
    cdef LaunchPlan root = known if known.root is None else known.root
    cdef LaunchPlan w = LaunchPlan.__new__(LaunchPlan)
    plan_incref(c)
    w.p = c
    w.retained, w.code, w.context, w.scratch_size = root.retained, root.code, root.context, root.scratch_size
    w.root = root
    return w


def launch_kernel(QueueCore q, LaunchPlan plan, device, int work_dim, size_t global_size,
                  size_t local_size, size_t offset, waits, name=""):
    """The Python API path's kernel launch, after its checks; the geometry must have been given
    to plan.remember_geometry for this request. Returns the Command."""
    cdef uint64_t geo[9]
    cdef int empty = 0, r
    cdef Command cmd = Command(K_NOP, q.driver, name)
    cdef cmd_t *c = cmd.c
    while True:
        r = plan_start(plan.p, id(device), work_dim, global_size, local_size, offset, geo, &empty, NULL)
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
