# Part of pyplat/api/_native.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# clCreateCommandQueue and clCreateCommandQueueWithProperties natively (docs/runtime.md, "Fast
# path"), for valid plain requests: a context whose application references are counted in the
# table, one of its devices whose driver a queue made in Python started already, properties
# limited to OUT_OF_ORDER / PROFILING. A context or device that is no handle of its kind is
# refused here (queue_made); everything else (other errors included) is the Python entry's.
#
# A queue made here has no core object: its handle's entry holds the runtime's queue core
# (qcore_t, with a tracker of its own), which is all the native enqueue entries, clFlush and
# clFinish use, so they answer for it at once. Its handle is a nqueue_t (the handle layout, then
# what adoption needs). It holds its context through the context entry's application count, as
# a core CommandQueue holds a core reference (CL_CONTEXT_REFERENCE_COUNT reads the same). The
# core's hold for native events is pinned: its events need no Python reference to the context,
# since the queue cannot go while they live (below).
#
# The first Python entry that needs it (clGetCommandQueueInfo, an enqueue that defers, a native
# event's adoption) adopts it (adopt_queue): a core CommandQueue around the same queue core and
# tracker, so commands before and after adoption are ordered by one structure; the queue's
# count on its context becomes the CommandQueue's own retain, and the pinned hold an ordinary
# one holding the context while native events live. The last clReleaseCommandQueue of a queue
# never adopted frees it here when no command of it is unfinished, no native event of it lives
# and its context keeps another reference; otherwise Python adopts and releases it (its
# implicit flush, and the context released once the commands finished).
# ---------------------------------------------------------------------------------------------
from pyplat.runtime._sched cimport (driver_t, qtrack_t, Driver, qcore_new, qtrack_new, qtrack_decref,
                                    wrap_queue_core, pp_load)
from pyplat.runtime.graph import reap
cdef extern from *:
    """
    #include <pthread.h>
    #include <string.h>
    extern char **environ;
    static char pyplat_inorder_name[64];     /* the knob the in-order mode follows */
    static char pyplat_inorder_env[64];      /* its text when the modes were told */
    static int pyplat_inorder_env_set;
    static int pyplat_queue_modes[4];        /* the runtime's ordering mode, by QUEUE_MODE_BITS */

    /* Whether the knob's text is still the one told, cheap while the environment is unchanged
       (a getenv is ~70 ns on the 2-core machine, a queue ~200): the last full look's answer is
       kept with what shows a change -- the array, its length, the knob's entry and the last one
       (setenv and putenv replace an entry or append one, unsetenv moves the later ones down).
       That answer is read without the lock (a seqlock: pyplat_env_seq is odd while a look
       writes it), so that creating queues from many threads shares no lock here. */
    static pthread_mutex_t pyplat_env_lock = PTHREAD_MUTEX_INITIALIZER;
    static unsigned long pyplat_env_seq;
    static char **pyplat_env_seen;
    static long pyplat_env_n, pyplat_env_at = -1;
    static char *pyplat_env_at_entry, *pyplat_env_last;
    static int pyplat_env_current;

    static void pyplat_env_write(int begin) {  /* (pyplat_env_lock held) */
        if (begin) {
            __atomic_store_n(&pyplat_env_seq, pyplat_env_seq + 1, __ATOMIC_RELAXED);
            __atomic_thread_fence(__ATOMIC_RELEASE);
        } else {
            __atomic_store_n(&pyplat_env_seq, pyplat_env_seq + 1, __ATOMIC_RELEASE);
        }
    }

    static int pyplat_modes_known(int *current) {   /* the kept answer, if it still holds */
        unsigned long seq = __atomic_load_n(&pyplat_env_seq, __ATOMIC_ACQUIRE);
        char **seen = __atomic_load_n(&pyplat_env_seen, __ATOMIC_RELAXED);
        long n = __atomic_load_n(&pyplat_env_n, __ATOMIC_RELAXED);
        long at = __atomic_load_n(&pyplat_env_at, __ATOMIC_RELAXED);
        char *at_entry = __atomic_load_n(&pyplat_env_at_entry, __ATOMIC_RELAXED);
        char *last = __atomic_load_n(&pyplat_env_last, __ATOMIC_RELAXED);
        int answer = __atomic_load_n(&pyplat_env_current, __ATOMIC_RELAXED);
        char **env = environ;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if ((seq & 1) || __atomic_load_n(&pyplat_env_seq, __ATOMIC_RELAXED) != seq)
            return 0;                             /* (a look was writing: take the lock) */
        if (env == NULL || env != seen || env[n] != NULL || (n > 0 && env[n - 1] != last)
                || (at >= 0 && env[at] != at_entry))
            return 0;
        *current = answer;
        return 1;
    }

    static int pyplat_modes_current(void) {
        char **env;
        const char *now = NULL;
        size_t len;
        long i, at = -1;
        int current;
        if (pyplat_modes_known(&current))
            return current;
        pthread_mutex_lock(&pyplat_env_lock);
        env = environ;
        if (env != NULL && env == pyplat_env_seen && env[pyplat_env_n] == NULL
                && (pyplat_env_n == 0 || env[pyplat_env_n - 1] == pyplat_env_last)
                && (pyplat_env_at < 0 || env[pyplat_env_at] == pyplat_env_at_entry)) {
            current = pyplat_env_current;
            pthread_mutex_unlock(&pyplat_env_lock);
            return current;
        }
        len = strlen(pyplat_inorder_name);
        for (i = 0; env != NULL && env[i] != NULL; i++)
            if (at < 0 && strncmp(env[i], pyplat_inorder_name, len) == 0 && env[i][len] == '=') {
                at = i;
                now = env[i] + len + 1;
            }
        current = now == NULL ? !pyplat_inorder_env_set
                              : pyplat_inorder_env_set && strcmp(now, pyplat_inorder_env) == 0;
        pyplat_env_write(1);
        pyplat_env_seen = env;
        pyplat_env_n = i;
        pyplat_env_at = at;
        pyplat_env_at_entry = at >= 0 ? env[at] : NULL;
        pyplat_env_last = i > 0 ? env[i - 1] : NULL;
        pyplat_env_current = current;
        pyplat_env_write(0);
        pthread_mutex_unlock(&pyplat_env_lock);
        return current;
    }

    static void pyplat_modes_told(void) {      /* the text told changed: look again */
        pthread_mutex_lock(&pyplat_env_lock);
        pyplat_env_write(1);
        pyplat_env_seen = NULL;
        pyplat_env_write(0);
        pthread_mutex_unlock(&pyplat_env_lock);
    }
    """
    char pyplat_inorder_name[64]
    char pyplat_inorder_env[64]
    int pyplat_inorder_env_set
    int pyplat_queue_modes[4]
    int pyplat_modes_current() nogil
    void pyplat_modes_told() nogil

DEF QUEUE_MODE_BITS = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE

cdef struct ndev_t:               # a device of a context, as a native queue needs it
    size_t handle
    size_t id                     # id() of its core Device (qcore_t.device)
    driver_t *driver              # NULL until a queue made in Python started it (the Device's
                                  # driver lives as long as the process: drivers are shared)

cdef struct qdevs_t:              # nctx_t.queue_devices
    int n
    ndev_t *dev

cdef struct nqueue_t:             # a queue's handle made natively
    pyplat_handle h
    size_t context_handle
    size_t device_handle
    uint64_t properties
    int n_props                   # its CL_QUEUE_PROPERTIES_ARRAY: 0 none, 1 an empty list,
                                  # 3 {CL_QUEUE_PROPERTIES, properties, 0}

assert sizeof(nqueue_t) <= HANDLE_BYTES - sizeof(void *)    # (the last word: handle_native)


def set_queue_modes(modes, bytes knob, text):
    """The runtime's ordering mode of a queue, by its OUT_OF_ORDER / PROFILING bits, as
    CommandQueue chooses it now (core/queue.py, order_mode): it follows the knob `knob`, whose
    text is `text` now (None: unset), so the native entries defer (Python chooses) while the
    environment says otherwise."""
    for i in range(4):
        pyplat_queue_modes[i] = modes[i]
    memcpy(pyplat_inorder_name, <char *>knob, min(len(knob), 63))
    pyplat_inorder_name[min(len(knob), 63)] = 0
    value = text
    encoded = b"" if value is None else value.encode()[:63]
    memcpy(pyplat_inorder_env, <char *>encoded, len(encoded))
    pyplat_inorder_env[len(encoded)] = 0
    global pyplat_inorder_env_set
    pyplat_inorder_env_set = value is not None
    pyplat_modes_told()


cdef inline bint modes_current() noexcept nogil:
    return pyplat_modes_current()


cdef void free_queue_devices(void *devices) noexcept nogil:
    if devices != NULL:
        free((<qdevs_t *>devices).dev)
        free(devices)


def set_queue_devices(ContextRecord rec, devices):
    """The context's devices for native queues: [(handle, core Device, Driver or None), ...]
    (api/queue.py, native_devices)."""
    cdef qdevs_t *qd = <qdevs_t *>calloc(1, sizeof(qdevs_t))
    if qd == NULL:
        raise MemoryError()
    qd.dev = <ndev_t *>calloc(max(1, len(devices)), sizeof(ndev_t))
    if qd.dev == NULL:
        free(qd)
        raise MemoryError()
    for i, (handle, device, driver) in enumerate(devices):
        qd.dev[i].handle, qd.dev[i].id = handle, id(device)
        qd.dev[i].driver = NULL if driver is None else (<Driver?>driver).d
    qd.n = len(devices)
    rec.x.queue_devices = qd


def note_queue_driver(size_t context, size_t device, Driver driver):
    """A queue made in Python started the device's driver: native queues of the context's
    device may use it from now on."""
    cdef hent_t *e
    cdef qdevs_t *qd
    cdef int i
    pthread_mutex_lock(&tab_lock)
    e = tab_find(context)
    if e != NULL and e.kind == PYPLAT_KIND_CONTEXT and e.ptr != NULL:
        qd = <qdevs_t *>(<nctx_t *>e.ptr).queue_devices
        if qd != NULL:
            for i in range(qd.n):
                if qd.dev[i].handle == device:
                    qd.dev[i].driver = driver.d
    note_platform_driver_locked(device, driver.d)      # (native_contexts.pxi)
    pthread_mutex_unlock(&tab_lock)


cdef size_t create_native_queue(size_t context, size_t device, uint64_t properties, int n_props,
                                size_t errcode_ret) noexcept nogil:
    """A queue of a valid plain request, or PYPLAT_DEFER_HANDLE (errcode_ret untouched)."""
    cdef hent_t *e
    cdef nctx_t *x
    cdef qdevs_t *qd
    cdef ndev_t *d = NULL
    cdef nqueue_t *nq = NULL
    cdef qtrack_t *track
    cdef qcore_t *q
    cdef int i
    # (only a plain in-order queue's mode follows PYPLAT_INORDER_PARALLEL)
    if properties & ~(<uint64_t>QUEUE_MODE_BITS) or (properties == 0 and not modes_current()):
        return <size_t>PYPLAT_DEFER_HANDLE
    track = qtrack_new()
    if track == NULL:
        return <size_t>PYPLAT_DEFER_HANDLE
    q = qcore_new(0, NULL, track, 0, 0)    # (mode, driver, context and device: below)
    qtrack_decref(track)                   # (the core's reference keeps it)
    if q == NULL:
        return <size_t>PYPLAT_DEFER_HANDLE
    hold_pin(&q.events)
    # One pass under the table lock: the context's check and count, the device, the handle.
    pthread_mutex_lock(&tab_lock)
    e = tab_find(context)
    if e != NULL and e.kind == PYPLAT_KIND_CONTEXT and e.ptr != NULL and e.api_refs > 0:
        x = <nctx_t *>e.ptr
        qd = <qdevs_t *>x.queue_devices
        if qd != NULL:
            for i in range(qd.n):
                if qd.dev[i].handle == device and qd.dev[i].driver != NULL:
                    d = &qd.dev[i]
                    nq = <nqueue_t *>hmem_take_locked()
                    break
    if nq == NULL:
        pthread_mutex_unlock(&tab_lock)
        qcore_decref(q)
        return <size_t>PYPLAT_DEFER_HANDLE
    q.mode, q.driver, q.context, q.device = pyplat_queue_modes[properties], d.driver, x.context, d.id
    e.api_refs += 1                        # the queue's hold on its context
    nq.context_handle, nq.device_handle, nq.properties, nq.n_props = context, device, properties, n_props
    publish_locked(&nq.h, PYPLAT_KIND_QUEUE, HF_NATIVE, q, x.context, 1)
    pthread_mutex_unlock(&tab_lock)
    if errcode_ret != 0:
        (<int32_t *>errcode_ret)[0] = CL_SUCCESS_
    return <size_t>nq


cdef size_t queue_made(const char *entry, size_t made, size_t context, size_t device,
                       size_t errcode_ret) noexcept nogil:
    """A queue the native entry made, or not (PYPLAT_DEFER_HANDLE): then the context and the
    device, in that order, refused if either is no handle of its kind (checked_first)."""
    made = checked_first_made(made, entry, context, PYPLAT_KIND_CONTEXT, CL_INVALID_CONTEXT, errcode_ret)
    return checked_first_made(made, entry, device, PYPLAT_KIND_DEVICE, CL_INVALID_DEVICE, errcode_ret)


cdef size_t n_create_queue(size_t context, size_t device, uint64_t properties,
                           size_t errcode_ret) noexcept nogil:
    """clCreateCommandQueue."""
    return queue_made("clCreateCommandQueue", create_native_queue(context, device, properties, 0, errcode_ret),
                      context, device, errcode_ret)


cdef size_t n_create_queue_with_properties(size_t context, size_t device, size_t properties,
                                           size_t errcode_ret) noexcept nogil:
    """clCreateCommandQueueWithProperties: NULL, an empty list, or CL_QUEUE_PROPERTIES alone
    (other lists: Python's, which checks them before the context and device)."""
    cdef uint64_t *p = <uint64_t *>properties
    cdef size_t made
    if p == NULL:
        made = create_native_queue(context, device, 0, 0, errcode_ret)
    elif p[0] == 0:
        made = create_native_queue(context, device, 0, 1, errcode_ret)
    elif p[0] == CL_QUEUE_PROPERTIES and p[2] == 0:
        made = create_native_queue(context, device, p[1], 3, errcode_ret)
    else:
        return <size_t>PYPLAT_DEFER_HANDLE
    return queue_made("clCreateCommandQueueWithProperties", made, context, device, errcode_ret)


cdef qcore_t *release_native_queue_locked(hent_t *e, size_t h) noexcept nogil:
    """(tab_lock held; e: h's entry) The last clReleaseCommandQueue of a queue never adopted,
    with nothing of it unfinished or alive and its context keeping another reference: the handle
    gone, the entry's reference to the queue core returned (to drop after the lock). NULL
    otherwise (PYPLAT_DEFER: Python's)."""
    cdef hent_t *ce
    cdef qcore_t *q
    if e.kind != PYPLAT_KIND_QUEUE or e.flags != HF_NATIVE or e.api_refs != 1:
        return NULL
    q = <qcore_t *>e.ptr
    ce = tab_find((<nqueue_t *>h).context_handle)
    # (no command unfinished: its implicit flush has nothing to hand over; a command waited
    # for is done with its queue before its waiters wake, runtime commands.pxi)
    if (ce == NULL or ce.api_refs < 2 or pp_load(&q.track.count) != 0
            or not hold_unpin_idle(&q.events)):
        return NULL
    ce.api_refs -= 1
    bury(<pyplat_handle *>h)
    tab_delete(e)
    return q


def adopt_queue(size_t h, factory):
    """For the API layer (under handles.py's lock), on a handle with no core object: if h is a
    queue made natively, factory(context, device, properties, property_list, core) makes its
    core CommandQueue around `core` (a QueueCore of the same queue core and tracker), which
    retains the context; the table keeps it, the count the queue held on its context is given
    back, the pinned hold for native events becomes an ordinary one. Returned; None if h is no
    such queue."""
    cdef hent_t *e
    cdef nqueue_t *nq
    cdef qcore_t *q = NULL
    cdef PyObject *ctx = NULL
    cdef PyObject *dev = NULL
    cdef size_t context_handle = 0
    cdef uint64_t properties = 0
    cdef int n_props = 0
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_QUEUE and e.flags == HF_NATIVE and e.obj == NULL:
        nq = <nqueue_t *>h
        q = <qcore_t *>e.ptr
        e = tab_find(nq.device_handle)
        if e == NULL or e.obj == NULL:
            q = NULL
        else:
            dev = e.obj
            Py_INCREF(<object>dev)
            qcore_incref(q)
            context_handle, properties, n_props = nq.context_handle, nq.properties, nq.n_props
            e = tab_find(context_handle)   # (alive: the queue holds a reference)
            if e != NULL and e.obj != NULL:
                ctx = e.obj
                Py_INCREF(<object>ctx)
    pthread_mutex_unlock(&tab_lock)
    if q == NULL:
        return None
    device = <object>dev
    Py_XDECREF(dev)
    try:
        if ctx != NULL:
            context = <object>ctx
            Py_XDECREF(ctx)
        else:
            context = adopt_missing(context_handle)     # a context made natively
        property_list = ([] if n_props == 0 else [0] if n_props == 1
                         else [CL_QUEUE_PROPERTIES, properties, 0])
        core = wrap_queue_core(q, device.driver, context, device)
        obj = factory(context, device, properties, property_list, core)
        hold_unpin(&q.events, obj, Retained((context,)))
    finally:
        qcore_decref(q)
    Py_INCREF(obj)
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)                        # (still there: only Python, holding the GIL, drops it)
    if e != NULL:
        e.obj = <PyObject *>obj
        e.flags |= HF_ADOPTED
    pthread_mutex_unlock(&tab_lock)
    if e == NULL:
        Py_XDECREF(<PyObject *>obj)
    if api_release(context_handle) == 2:   # the CommandQueue retains its context instead
        context.release()
    return obj


def is_unadopted_queue(size_t h):
    """Whether h is a queue made natively that no core object has taken over."""
    cdef hent_t *e
    cdef bint native = False
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_QUEUE and e.flags == HF_NATIVE:
        native = True
    pthread_mutex_unlock(&tab_lock)
    return native


def finish_unadopted_queue(size_t h):
    """clFinish of a queue made natively and not adopted (its native entry deferred only for
    clean-up due): its commands waited for, the clean-up run; False for any other handle."""
    cdef hent_t *e
    cdef qcore_t *q = NULL
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_QUEUE and e.flags == HF_NATIVE:
        q = <qcore_t *>e.ptr
        qcore_incref(q)
    pthread_mutex_unlock(&tab_lock)
    if q == NULL:
        return False
    with nogil:
        q.driver.flush(q.driver)
        track_join(q.track)
        qcore_decref(q)
    reap()
    return True


cdef adopt_queue_of(qcore_t *q):
    """Adopt the queue made natively whose core is q (a native event of it is being adopted and
    needs its CommandQueue)."""
    cdef size_t i, h = 0
    pthread_mutex_lock(&tab_lock)
    for i in range(tab_cap):
        if (tab[i].key > 1 and tab[i].ptr == <void *>q and tab[i].kind == PYPLAT_KIND_QUEUE
                and tab[i].flags == HF_NATIVE):
            h = tab[i].key
            break
    pthread_mutex_unlock(&tab_lock)
    if h != 0:
        adopt_missing(h)
