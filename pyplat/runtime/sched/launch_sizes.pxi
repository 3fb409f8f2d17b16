# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Launch sizes: what a plan (launch_plans.pxi) compares a launch's global and local sizes with,
# and the native check of sizes it has not seen. A kernel's objects share a sizes_t
# (KernelSizes): the sizes validated last, and the devices its program was built for with their
# limits, so that the first launch of a kernel object -- or a launch with new sizes -- is checked
# here without the GIL. A request the check refuses goes to the Python path
# (api/enqueue.py, _geometry), which reports the error with its reason.
# ---------------------------------------------------------------------------------------------

cdef void sizes_decref(sizes_t *s) noexcept nogil:
    if s != NULL and pp_add(&s.refs, -1) == 0:
        pthread_mutex_destroy(&s.lock)
        free(s)


cdef class KernelSizes:
    """The sizes validated last for a kernel (one program build, one kernel name) on a device,
    shared natively by the plans of all its objects (LaunchPlan's `sizes`): a plan asked for a
    launch of other sizes than its own takes these when they match and its local memory fits
    the device's, so the first launch of a new object of a launched kernel needs no Python.
    With launchable_on, sizes never validated are checked natively too (check_new_sizes)."""
    cdef sizes_t *s

    def __cinit__(self):
        self.s = <sizes_t *>calloc(1, sizeof(sizes_t))
        if self.s == NULL:
            raise MemoryError()
        pthread_mutex_init(&self.s.lock, NULL)
        self.s.refs = 1

    def __dealloc__(self):
        sizes_decref(self.s)

    def launchable_on(self, devices, reqd):
        """devices: [(core Device, max work-group size, max work-item sizes (3), local memory
        size)] the kernel's program was built for (the first 4 are kept: launches on others
        are checked by the Python path); reqd: its reqd_work_group_size, or None."""
        cdef int i, d, n = min(len(devices), 4)
        pthread_mutex_lock(&self.s.lock)
        for i in range(n):
            device, max_group, max_items, local_mem = devices[i]
            self.s.devs[i].id, self.s.devs[i].max_group, self.s.devs[i].local_mem = id(device), max_group, local_mem
            for d in range(3):
                self.s.devs[i].max_items[d] = max_items[d]
        self.s.n_devs = n
        for d in range(3):
            self.s.reqd[d] = reqd[d] if reqd else 0
        pthread_mutex_unlock(&self.s.lock)

    def remember(self, device, size_t local_mem, int work_dim, size_t global_size, size_t local_size,
                 result_global, result_local, bint empty):
        """As LaunchPlan.remember_geometry, for every plan of the kernel; local_mem: the
        device's local memory size."""
        cdef uint64_t req[6]
        cdef uint64_t out[6]
        cdef int flags, d
        geometry_request(work_dim, global_size, local_size, req, &flags)
        for d in range(3):
            out[d], out[3 + d] = result_global[d], result_local[d]
        pthread_mutex_lock(&self.s.lock)
        memcpy(self.s.req, req, sizeof(req))
        memcpy(self.s.out, out, sizeof(out))
        self.s.flags, self.s.empty, self.s.dim = flags, empty, work_dim
        self.s.device, self.s.local_mem = id(device), local_mem
        pthread_mutex_unlock(&self.s.lock)


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


cdef int take_kernel_sizes(plan_t *p, size_t device, int work_dim, uint64_t *req, int flags) noexcept nogil:
    """(p.hold.lock held) Make the kernel's sizes validated last p's own if they are this
    request on this device and p's local memory fits the device's: 1 if taken."""
    cdef sizes_t *s = p.sizes
    cdef int ok = 0
    if s == NULL:
        return 0
    pthread_mutex_lock(&s.lock)
    if (s.device == device and s.dim == work_dim and s.flags == flags and p.scratch_size <= s.local_mem
            and memcmp(req, s.req, sizeof(s.req)) == 0):
        memcpy(p.geo_in, s.req, sizeof(s.req))
        memcpy(p.geo_out, s.out, sizeof(s.out))
        p.geo_dim, p.geo_flags, p.geo_empty, p.geo_device = work_dim, flags, s.empty, device
        ok = 1
    pthread_mutex_unlock(&s.lock)
    return ok


cdef void choose_local(const uint64_t *global_size, uint64_t limit, const uint64_t *item_limits,
                       uint64_t *local) noexcept nogil:
    """The local size of a launch given none (3 dimensions, unused ones 1): in each dimension,
    first dimension first, the largest divisor of the global size within the device's limits
    and what the dimensions before left of the work-group size (bigger groups: fewer calls and
    longer vectorisable loops)."""
    cdef uint64_t budget = limit, cap, candidate
    cdef int d
    for d in range(3):
        local[d] = 1
        cap = min(budget, item_limits[d], global_size[d])
        candidate = cap
        while candidate > 0:
            if global_size[d] % candidate == 0:
                local[d] = candidate
                break
            candidate -= 1
        budget //= local[d]


def choose_local_size(global_size, uint64_t limit, item_limits):
    """choose_local for Python (api/enqueue.py): the one definition both paths use."""
    cdef uint64_t g[3]
    cdef uint64_t items[3]
    cdef uint64_t local[3]
    cdef int d
    for d in range(3):
        g[d], items[d] = global_size[d], item_limits[d]
    choose_local(g, limit, items, local)
    return [local[0], local[1], local[2]]


cdef int sizes_valid(const devlim_t *dev, const uint64_t *reqd, int work_dim, const uint64_t *req,
                     int flags, uint64_t *out, int *empty) noexcept nogil:
    """Whether a request (geometry_request's) passes clEnqueueNDRangeKernel's size checks on
    a device for a kernel (api/enqueue.py, _geometry, the one that reports a refusal): 1, with
    out: the global and local sizes padded to 3 dimensions, empty: a global size is 0."""
    cdef uint64_t *g = out
    cdef uint64_t *l = out + 3
    cdef int d
    for d in range(3):
        g[d] = req[d] if d < work_dim else 1
        l[d] = req[3 + d] if d < work_dim else 1
    if flags:
        for d in range(3):
            if l[d] == 0 or l[d] > dev.max_items[d] or (reqd[0] and l[d] != reqd[d]):
                return 0
        if l[0] * l[1] * l[2] > dev.max_group:       # (each at most max_items: no overflow)
            return 0
    elif reqd[0]:
        memcpy(l, reqd, 3 * sizeof(uint64_t))
    else:
        choose_local(g, dev.max_group, dev.max_items, l)
    empty[0] = 0
    for d in range(3):
        if g[d] % l[d] != 0:
            return 0
        if d < work_dim and g[d] == 0:
            empty[0] = 1
    return 1


cdef int check_new_sizes(plan_t *p, size_t device, int work_dim, uint64_t *req, int flags) noexcept nogil:
    """(p.hold.lock held) A request neither p nor its kernel validated: check it here for a
    device the program was built for; if it passes, it becomes p's sizes and the kernel's
    latest. 1 if it passed."""
    cdef sizes_t *s = p.sizes
    cdef uint64_t out[6]
    cdef int i, empty = 0, ok = 0
    if s == NULL:
        return 0
    pthread_mutex_lock(&s.lock)
    for i in range(s.n_devs):
        if s.devs[i].id == device:
            ok = (p.scratch_size <= s.devs[i].local_mem
                  and sizes_valid(&s.devs[i], s.reqd, work_dim, req, flags, out, &empty))
            if ok:
                memcpy(s.req, req, sizeof(s.req))
                memcpy(s.out, out, sizeof(s.out))
                s.flags, s.empty, s.dim = flags, empty, work_dim
                s.device, s.local_mem = device, s.devs[i].local_mem
            break
    pthread_mutex_unlock(&s.lock)
    if ok:
        memcpy(p.geo_in, req, sizeof(p.geo_in))
        memcpy(p.geo_out, out, sizeof(p.geo_out))
        p.geo_dim, p.geo_flags, p.geo_empty, p.geo_device = work_dim, flags, empty, device
    return ok
