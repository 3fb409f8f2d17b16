# Part of pyplat/api/_native.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# clCreateContext and clCreateContextFromType natively (docs/runtime.md, "Fast path"), for plain
# requests: no property but CL_CONTEXT_PLATFORM (of this platform), available devices of the
# platform, a notify callback or none. Everything else (errors included) is the Python entry's.
#
# A context made here has no core object: its handle's entry holds its native record (nctx_t,
# native_buffers.pxi, with its devices as native queues need them), whose own address is the
# context's key (the `context` that queues, buffers, kernels and events are matched by; a core
# Context's key is its native_key, else its id). Made, it puts the kernel fault guard in front
# again where another handler moved over it, as a core Context does (one sigaction query when
# nothing moved: most of its cost on the 2-core machine). Its count is the entry's application count;
# queues, buffers and user events made natively hold counts there. The notify callback needs
# Python only when it is called, and only a core Context calls it: it is kept here (pointer and
# user data) and handed to the core Context at adoption. The first Python entry that needs the
# context (clGetContextInfo, clCreateProgram*, a destructor callback, a query of an object of it)
# adopts it (adopt_context): a core Context of the same devices, properties and callback, with
# the record's key as its native_key, so objects made before and after adoption match. The last
# clReleaseContext of a context never adopted frees it here (every object of it holds a count,
# so none is left).
# ---------------------------------------------------------------------------------------------

from pyplat.runtime._sched cimport fault_guard_first

DEF DEVICE_TYPE_BITS = (CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU
                        | CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM)
DEF MAX_CONTEXT_DEVICES = 64

cdef struct pdev_t:               # a device of the platform, as native contexts need it
    size_t handle
    size_t id                     # id() of its core Device
    uint64_t type                 # CL_DEVICE_TYPE_* (DEFAULT added for the platform's first)
    int available
    int host_memory               # its memory is the host's
    uint64_t max_alloc            # CL_DEVICE_MAX_MEM_ALLOC_SIZE

cdef struct nctxh_t:              # a context's handle made natively
    pyplat_handle h
    size_t notify                 # pfn_notify (0: none) and its user_data
    size_t user_data
    int n_props                   # its CL_CONTEXT_PROPERTIES: 0 none, 1 an empty list,
                                  # 3 {CL_CONTEXT_PLATFORM, platform, 0}

assert sizeof(nctxh_t) <= HANDLE_BYTES

cdef pdev_t *pdevs = NULL         # (set once, before any native entry is installed)
cdef int n_pdevs = 0
cdef size_t platform_handle = 0
cdef driver_t **pdev_drivers = NULL   # (tab_lock) per pdevs entry: its driver once started
cdef object context_factory = None


def set_platform_devices(size_t platform, devices, factory, queue_modes):
    """The platform's devices for native contexts: [(handle, Device, type, available, host
    memory, max alloc, Driver or None), ...] (api/context.py, native_platform_devices);
    factory(devices, properties, notify, user_data, record, key) makes the core Context of one
    being adopted (api/context.py, adopt_native_context); queue_modes: set_queue_modes'
    arguments."""
    global pdevs, n_pdevs, platform_handle, pdev_drivers, context_factory
    cdef pdev_t *table = <pdev_t *>calloc(max(1, len(devices)), sizeof(pdev_t))
    cdef driver_t **drivers = <driver_t **>calloc(max(1, len(devices)), sizeof(driver_t *))
    if table == NULL or drivers == NULL:
        free(table)
        free(drivers)
        raise MemoryError()
    for i, (handle, device, type_, available, host_memory, max_alloc, driver) in enumerate(devices):
        table[i].handle, table[i].id, table[i].type = handle, id(device), type_
        table[i].available, table[i].host_memory, table[i].max_alloc = available, host_memory, max_alloc
        drivers[i] = NULL if driver is None else (<Driver?>driver).d
    pthread_mutex_lock(&tab_lock)
    pdevs, n_pdevs, platform_handle, pdev_drivers = table, len(devices), platform, drivers
    pthread_mutex_unlock(&tab_lock)          # (the previous tables stay: an entry may be reading)
    context_factory = factory
    set_queue_modes(*queue_modes)            # (native_queues.pxi)


cdef void note_platform_driver_locked(size_t device, driver_t *driver) noexcept nogil:
    """(tab_lock held) A device's driver started: contexts made natively from now on have it."""
    cdef int i
    for i in range(n_pdevs):
        if pdevs[i].handle == device:
            pdev_drivers[i] = driver


cdef size_t publish_context(int *chosen, int n, int n_props, size_t notify, size_t user_data,
                            size_t errcode_ret) noexcept nogil:
    """A context of the platform devices chosen[:n] (available, distinct), or
    PYPLAT_DEFER_HANDLE."""
    cdef nctx_t *x = <nctx_t *>calloc(1, sizeof(nctx_t))
    cdef qdevs_t *qd = <qdevs_t *>calloc(1, sizeof(qdevs_t))
    cdef ndev_t *dev = <ndev_t *>calloc(n, sizeof(ndev_t))
    cdef nctxh_t *h = NULL
    cdef pdev_t *p
    cdef int i
    if x == NULL or qd == NULL or dev == NULL:
        free(x)
        free(qd)
        free(dev)
        return <size_t>PYPLAT_DEFER_HANDLE
    # As a core Context does: other code may have put signal handlers over the kernel fault
    # guard since (the host program, Python's faulthandler, another platform's LLVM).
    fault_guard_first()
    x.refs, x.context, x.host_memory, x.max_alloc = 1, <size_t>x, 1, <uint64_t>-1
    qd.n, qd.dev, x.queue_devices = n, dev, qd
    pthread_mutex_lock(&tab_lock)
    for i in range(n):
        p = &pdevs[chosen[i]]
        dev[i].handle, dev[i].id, dev[i].driver = p.handle, p.id, pdev_drivers[chosen[i]]
        x.host_memory = x.host_memory and p.host_memory
        if p.max_alloc < x.max_alloc:
            x.max_alloc = p.max_alloc
    h = <nctxh_t *>hmem_take_locked()
    if h == NULL:
        pthread_mutex_unlock(&tab_lock)
        nctx_decref(x)
        return <size_t>PYPLAT_DEFER_HANDLE
    h.notify, h.user_data, h.n_props = notify, user_data, n_props
    publish_locked(&h.h, PYPLAT_KIND_CONTEXT, HF_NATIVE, x, x.context, 1)
    pthread_mutex_unlock(&tab_lock)
    if errcode_ret != 0:
        (<int32_t *>errcode_ret)[0] = CL_SUCCESS_
    return <size_t>h


cdef int context_properties(size_t properties) noexcept nogil:
    """n_props of a plain property list (nctxh_t), or -1."""
    cdef uint64_t *p = <uint64_t *>properties
    if p == NULL:
        return 0
    if p[0] == 0:
        return 1
    if p[0] == CL_CONTEXT_PLATFORM and p[1] == platform_handle and p[2] == 0:
        return 3
    return -1


cdef size_t n_create_context(size_t properties, uint32_t num_devices, size_t devices, size_t notify,
                             size_t user_data, size_t errcode_ret) noexcept nogil:
    cdef int chosen[MAX_CONTEXT_DEVICES]
    cdef int n = 0, i, j, k
    cdef int n_props = context_properties(properties)
    cdef size_t handle
    if (n_props < 0 or num_devices == 0 or num_devices > MAX_CONTEXT_DEVICES or devices == 0
            or (user_data != 0 and notify == 0)):
        return <size_t>PYPLAT_DEFER_HANDLE
    for i in range(<int>num_devices):
        handle = (<size_t *>devices)[i]
        k = -1
        for j in range(n_pdevs):
            if pdevs[j].handle == handle:
                k = j
                break
        if k < 0 or not pdevs[k].available:
            return <size_t>PYPLAT_DEFER_HANDLE
        for j in range(n):                   # duplicates are ignored (the spec)
            if chosen[j] == k:
                k = -1
                break
        if k >= 0:
            chosen[n] = k
            n += 1
    return publish_context(chosen, n, n_props, notify, user_data, errcode_ret)


cdef size_t n_create_context_from_type(size_t properties, uint64_t device_type, size_t notify,
                                       size_t user_data, size_t errcode_ret) noexcept nogil:
    cdef int chosen[MAX_CONTEXT_DEVICES]
    cdef int n = 0, j
    cdef int n_props = context_properties(properties)
    if (n_props < 0 or (user_data != 0 and notify == 0) or device_type == 0
            or (device_type != <uint64_t>CL_DEVICE_TYPE_ALL and device_type & ~(<uint64_t>DEVICE_TYPE_BITS))):
        return <size_t>PYPLAT_DEFER_HANDLE
    for j in range(min(n_pdevs, MAX_CONTEXT_DEVICES)):
        if device_type == <uint64_t>CL_DEVICE_TYPE_ALL or device_type & pdevs[j].type:
            if not pdevs[j].available:
                return <size_t>PYPLAT_DEFER_HANDLE      # (Python says which are usable)
            chosen[n] = j
            n += 1
    if n == 0:
        return <size_t>PYPLAT_DEFER_HANDLE
    return publish_context(chosen, n, n_props, notify, user_data, errcode_ret)


cdef int32_t release_native_context(size_t h) noexcept nogil:
    """The last clReleaseContext of a context never adopted; PYPLAT_DEFER for anything else."""
    cdef hent_t *e
    cdef nctx_t *x = NULL
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_CONTEXT and e.flags == HF_NATIVE and e.api_refs == 1:
        x = <nctx_t *>e.ptr
        bury(<pyplat_handle *>h)
        tab_delete(e)
    pthread_mutex_unlock(&tab_lock)
    if x == NULL:
        return PYPLAT_DEFER
    nctx_decref(x)
    return CL_SUCCESS_


def adopt_context(size_t h):
    """For the API layer (under handles.py's lock), on a handle with no core object: if h is a
    context made natively, its core Context (context_factory: the same devices, properties and
    callback; the record's key as its native_key, the record kept by it); the table keeps it and
    it is returned. None if h is no such context."""
    cdef hent_t *e
    cdef nctxh_t *c
    cdef nctx_t *x = NULL
    cdef qdevs_t *qd
    cdef ContextRecord rec
    cdef size_t notify = 0, user_data = 0
    cdef int i, n_props = 0
    device_handles = []
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_CONTEXT and e.flags == HF_NATIVE and e.obj == NULL:
        c = <nctxh_t *>h
        x = <nctx_t *>e.ptr
        pp_add(&x.refs, 1)
        notify, user_data, n_props = c.notify, c.user_data, c.n_props
    pthread_mutex_unlock(&tab_lock)
    if x == NULL:
        return None
    rec = ContextRecord()
    rec.x = x
    qd = <qdevs_t *>x.queue_devices
    for i in range(qd.n):
        device_handles.append(qd.dev[i].handle)
    properties = [] if n_props == 0 else [0] if n_props == 1 else [CL_CONTEXT_PLATFORM, platform_handle, 0]
    obj = context_factory(device_handles, properties, notify, user_data, rec, x.context)
    Py_INCREF(obj)
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)                        # (still there: only Python, holding the GIL, drops it)
    if e != NULL:
        e.obj = <PyObject *>obj
        e.flags |= HF_ADOPTED
    pthread_mutex_unlock(&tab_lock)
    if e == NULL:
        Py_XDECREF(<PyObject *>obj)
    return obj


cdef size_t context_key(context):
    """The key a core context's objects are matched by (entries' `context`): the native record's
    address of a context made natively, else its id (as the runtime's QueueCore and LaunchPlan
    compute it)."""
    return getattr(context, "native_key", 0) or id(context)
