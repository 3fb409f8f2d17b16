# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Launch sizes: what a plan (launch_plans.pxi) compares a launch's global and local sizes with,
# and the native check of sizes it has not seen. A kernel's objects share a sizes_t
# (KernelSizes): the sizes validated last, and the devices its program was built for with their
# limits, so that the first launch of a kernel object -- or a launch with new sizes -- is checked
# here without the GIL. The rules themselves (sizes_valid, offset_valid) are written once, below,
# for the native and the Python entry alike.
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


# clEnqueueNDRangeKernel's rules for the sizes and the offset, written once: the native entry
# reports a refusal itself (api/native_refusals.pxi) and the Python entry raises it
# (api/enqueue.py, _geometry, through launch_geometry below). A refusal's reason is a format
# naming up to three numbers, {a}, {b} and {c}, filled in where it is reported; other rules
# refuse through refuse() and refuse3() too (api/native_buffer_rules.pxi).
cdef int refuse(refusal_t *why, int32_t code, const char *reason, uint64_t a, uint64_t b) noexcept nogil:
    """Record a refusal (its reason naming a and b); 0, what a rule returns then."""
    return refuse3(why, code, reason, a, b, 0)


cdef int refuse3(refusal_t *why, int32_t code, const char *reason, uint64_t a, uint64_t b,
                 uint64_t c) noexcept nogil:
    if why != NULL:
        why.code, why.reason, why.a, why.b, why.c = code, reason, a, b, c
    return 0


cdef int dimensions_valid(int work_dim, refusal_t *why) noexcept nogil:
    """Spec: CL_INVALID_WORK_DIMENSION if work_dim is not a valid value (1 to 3)."""
    if work_dim < 1 or work_dim > 3:
        return refuse(why, CL_INVALID_WORK_DIMENSION_, "work_dim is {a}, not 1, 2 or 3", <uint64_t>work_dim, 0)
    return 1


cdef str refusal_reason(const refusal_t *why):
    """A refusal's reason, its numbers filled in."""
    return why.reason.decode().format(a=why.a, b=why.b, c=why.c)


def dimensions_refusal(int work_dim):
    """dimensions_valid for Python (api/enqueue.py): None, or (code, reason)."""
    cdef refusal_t why
    return None if dimensions_valid(work_dim, &why) else (why.code, refusal_reason(&why))


cdef int offset_valid(int work_dim, const uint64_t *global_size, const uint64_t *offset,
                      refusal_t *why) noexcept nogil:
    """Spec: CL_INVALID_GLOBAL_OFFSET if global_work_size[i] + global_work_offset[i] exceeds
    the largest size_t value."""
    cdef int d
    for d in range(work_dim):
        if global_size[d] + offset[d] < offset[d]:
            return refuse(why, CL_INVALID_GLOBAL_OFFSET_, "global size {a} + offset {b} overflows size_t",
                          global_size[d], offset[d])
    return 1


cdef int sizes_valid(const devlim_t *dev, const uint64_t *reqd, int work_dim, const uint64_t *req,
                     int flags, uint64_t *out, int *empty, refusal_t *why) noexcept nogil:
    """Whether a request (geometry_request's) passes clEnqueueNDRangeKernel's size checks on
    a device for a kernel (work_dim valid): 1, with out: the global and local sizes padded to
    3 dimensions, empty: a global size is 0; else 0 and why."""
    cdef uint64_t *g = out
    cdef uint64_t *l = out + 3
    cdef int d
    for d in range(3):
        g[d] = req[d] if d < work_dim else 1
        l[d] = req[3 + d] if d < work_dim else 1
    if flags:
        for d in range(3):
            if l[d] == 0:
                return refuse(why, CL_INVALID_WORK_GROUP_SIZE_, "local size {a} is 0", d, 0)
        if reqd[0]:
            for d in range(3):
                if l[d] != reqd[d]:
                    return refuse(why, CL_INVALID_WORK_GROUP_SIZE_,
                                  "the kernel requires reqd_work_group_size {a} in dimension {b}", reqd[d], d)
        for d in range(3):
            # Spec: CL_INVALID_WORK_ITEM_SIZE if a local size exceeds CL_DEVICE_MAX_WORK_ITEM_SIZES.
            if l[d] > dev.max_items[d]:
                return refuse(why, CL_INVALID_WORK_ITEM_SIZE_, "local size {a} above the device's {b}",
                              l[d], dev.max_items[d])
        if l[0] * l[1] * l[2] > dev.max_group:       # (each at most max_items: no overflow)
            return refuse(why, CL_INVALID_WORK_GROUP_SIZE_, "work-group size {a} above the device's {b}",
                          l[0] * l[1] * l[2], dev.max_group)
    elif reqd[0]:
        memcpy(l, reqd, 3 * sizeof(uint64_t))
    else:
        choose_local(g, dev.max_group, dev.max_items, l)
    empty[0] = 0
    for d in range(3):
        # Uniform work-groups: the global size a multiple of the local size in every dimension.
        if g[d] % l[d] != 0:
            return refuse(why, CL_INVALID_WORK_GROUP_SIZE_, "global size {a} is not a multiple of local size {b}",
                          g[d], l[d])
        if d < work_dim and g[d] == 0:
            empty[0] = 1
    return 1


def launch_geometry(int work_dim, global_size, local_size, offset, uint64_t max_group, max_items, reqd):
    """The rules above for the Python entry (api/enqueue.py): global_size, local_size (None when
    not given), offset: lists of work_dim sizes; max_group, max_items: the device's limits; reqd:
    the kernel's reqd_work_group_size or None. (None, (global (3), local (3), offset (3), empty))
    if the launch passes, else ((code, reason), None)."""
    cdef devlim_t dev
    cdef uint64_t req[6]
    cdef uint64_t off[3]
    cdef uint64_t need[3]
    cdef uint64_t out[6]
    cdef refusal_t why
    cdef int d, empty = 0
    memset(req, 0, sizeof(req))
    memset(off, 0, sizeof(off))
    dev.max_group = max_group
    for d in range(3):
        dev.max_items[d] = max_items[d]
        need[d] = reqd[d] if reqd else 0
    for d in range(work_dim if 1 <= work_dim <= 3 else 0):
        req[d] = global_size[d]
        req[3 + d] = local_size[d] if local_size is not None else 0
        off[d] = offset[d] if offset is not None else 0
    if not dimensions_valid(work_dim, &why) or not sizes_valid(
            &dev, need, work_dim, req, local_size is not None, out, &empty, &why) or (
            not offset_valid(work_dim, req, off, &why)):
        return (why.code, refusal_reason(&why)), None
    return None, ([out[0], out[1], out[2]], [out[3], out[4], out[5]], [off[0], off[1], off[2]], bool(empty))


cdef int check_new_sizes(plan_t *p, size_t device, int work_dim, uint64_t *req, int flags,
                         refusal_t *why) noexcept nogil:
    """(p.hold.lock held) A request neither p nor its kernel validated: check it here for a
    device the program was built for; if it passes, it becomes p's sizes and the kernel's
    latest. 1 if it passed, -1 if the rules refuse it (why), 0 if it cannot be checked here
    (a device beyond the first four, or a kernel's local memory above the device's)."""
    cdef sizes_t *s = p.sizes
    cdef uint64_t out[6]
    cdef int i, empty = 0, ok = 0
    if s == NULL:
        return 0
    pthread_mutex_lock(&s.lock)
    for i in range(s.n_devs):
        if s.devs[i].id == device:
            if p.scratch_size <= s.devs[i].local_mem:   # (too much: the Python entry says so)
                ok = 1 if sizes_valid(&s.devs[i], s.reqd, work_dim, req, flags, out, &empty, why) else -1
            if ok == 1:
                memcpy(s.req, req, sizeof(s.req))
                memcpy(s.out, out, sizeof(s.out))
                s.flags, s.empty, s.dim = flags, empty, work_dim
                s.device, s.local_mem = device, s.devs[i].local_mem
            break
    pthread_mutex_unlock(&s.lock)
    if ok == 1:
        memcpy(p.geo_in, req, sizeof(p.geo_in))
        memcpy(p.geo_out, out, sizeof(p.geo_out))
        p.geo_dim, p.geo_flags, p.geo_empty, p.geo_device = work_dim, flags, empty, device
    return ok
