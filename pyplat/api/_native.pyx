# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The API layer's native module: its one handle table, and the native fast path --
clEnqueueNDRangeKernel, clRetainEvent, clReleaseEvent, clFlush, clFinish, clWaitForEvents,
clGetEventInfo, (native_kernel_args.pxi) clSetKernelArg and the kernel queries programs repeat,
(native_commands.pxi) the small buffer commands, markers and barriers, (native_buffers.pxi)
clCreateBuffer, (native_refs.pxi) clRetain*/clRelease* of contexts, queues, memory objects,
programs and kernels, (native_user_events.pxi) clCreateUserEvent and clSetUserEventStatus, and
(native_queues.pxi, native_contexts.pxi) clCreateCommandQueue* and clCreateContext*, answered in C
without the GIL (docs/runtime.md, "Fast path"). These are
implementations of OpenCL entry points; they use the runtime only through its C interface
(pyplat/runtime/_sched.pxd: commands, queues' ordering cores, launch plans, holds).

The handle table below is the API layer's only registry of handles, of every kind: address ->
kind, an owned reference to the core object (read by Python callers, holding the GIL), and for
queues, kernels, events and buffers a native reference (queue core, kernel slot, command, buffer
record: read by the n_* functions without the GIL) with the context. Handle memory is this module's (new_handle,
drop_handle; pyplat/api/handles.py is the Python face), so a handle is checked without Python
and a foreign or stale pointer is never read. Each n_* function answers the common case, refuses
what the rules written once for both entries refuse (native_handle_rules.pxi,
native_buffer_rules.pxi, native_creation_rules.pxi, the runtime's launch_sizes.pxi), and returns
PYPLAT_DEFER otherwise, having changed nothing; the caller then runs the Python implementation,
which answers what needs Python and primes the state the next native call needs (a validated
geometry, a holding plan, a queue holding references for events).

An event the fast path hands out is a native handle (the API layer's handle layout,
icd/pyplat_handle.h, then an OpenCL count and its queue core); the table maps it to its
command. The first time a Python entry needs it (info, callbacks, ...), the API layer *adopts*
it: a core Event takes over the count, and retains/releases of it go to Python from then on.
Freed handles of every kind are quarantined, so that a stale pointer reads as dead for a while
and is not soon reused by a new object. The quarantine's memory is allocated once, when this
module is loaded, and recycled: memory stays flat from the first create/release (hmem_*).
"""
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memset, memcmp, memcpy
from libc.stdint cimport uint64_t, int32_t, uint32_t
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF

from pyplat.api.errors import CLError
from pyplat.core.queue import HOST, Retained

from pyplat.runtime._sched cimport (
    pp_add, pp_load_i, pthread_mutex_t, pthread_mutex_init, pthread_mutex_lock, pthread_mutex_unlock,
    pthread_mutex_destroy,
    K_NOP, K_COPY, K_FILL, CL_SUCCESS_, CL_OUT_OF_HOST_MEMORY_, cmd_t, qcore_t, plan_t,
    hold_t, access_t, hold_init, hold_acquire, hold_pin, hold_unpin_idle, hold_unpin_or_defer, hold_unpin,
    cmd_new, cmd_free, cmd_incref, cmd_decref, link, cmd_commit, cmd_commit_nop, cmd_attach, cmd_wait,
    track_join,
    abort_oom, reap_pending, order_locked, qcore_incref, qcore_decref, key_hash, hold_use, hold_done,
    plan_incref, plan_decref, plan_derive, plan_start, fill_launch, refusal_t, refusal_reason, refuse, refuse3, fork_lose_queue, fork_lose_command,
    host_calloc, Command, Driver, QueueCore, LaunchPlan, wrap_command, wrap_derived)

# The handle layout, the handle kinds and "not answered here": one definition, shared with the
# ICD shim (icd/pyplat_handle.h); handles.py takes them from here.
cdef extern from "pyplat_handle.h":
    void *PYPLAT_DEFER_HANDLE
    enum:
        PYPLAT_DEFER
        PYPLAT_HANDLE_MAGIC
        PYPLAT_HANDLE_DEAD
    cdef struct pyplat_handle:
        const void *dispatch
        uint32_t magic
        uint32_t kind
        uint64_t serial

cdef extern from "Python.h":
    int PyGILState_Check() nogil

# Generated at build time (icd/gen_cython_decls.py): the headers' CL_* constants, the entries' C
# types, the handle kinds (KINDS) and fast_path_entries().
include "cl_constants.pxi"
include "native_entry_types.pxi"
include "native_entry_table.pxi"

DEFER = PYPLAT_DEFER
MAGIC, DEAD = PYPLAT_HANDLE_MAGIC, PYPLAT_HANDLE_DEAD

DEF HF_NATIVE = 1                 # made natively: a native event (memory and count are this
                                  # module's) or buffer (native_buffers.pxi)
DEF HF_ADOPTED = 2                # ... which a core object has taken over
DEF HF_ADOPTING = 4               # adopt_kernel / adopt_buffer is making its core object: a
                                  # native release defers, and so waits for it (handles._lock)
DEF MAX_NATIVE_WAITS = 64
DEF QUARANTINE = 8192             # released handles whose memory is kept (all kinds)
DEF SPARES = 1024                 # handle memory out of quarantine kept for the next new handles

cdef struct hent_t:
    size_t key                    # handle address; 0: free, 1: deleted
    int kind
    int flags
    void *ptr                     # a reference: qcore_t (queues), kslot_t (kernels), cmd_t (events),
                                  # nmem_t (buffers), nctx_t (contexts); NULL for other kinds and
                                  # when the fast path is off
    size_t context                # id of the core context (queues, events)
    long api_refs                 # the application's references, counted here (native_refs.pxi);
                                  # 0: counted by the core object alone
    PyObject *obj                 # owned: the core object (NULL: a native event not yet adopted);
                                  # touched only holding the GIL

cdef struct kslot_t:              # a kernel's current plan (KernelSlot)
    long refs
    plan_t *plan                  # (tab_lock) NULL when the arguments changed since
    void *args                    # kargs_t: its arguments as set natively (native_kernel_args.pxi)

cdef struct nevent_t:
    pyplat_handle h               # every handle's layout, then
    long refs                     # the OpenCL count until adopted
    qcore_t *q                    # a reference until adopted or released
    uint32_t command_type         # CL_COMMAND_*: the type of its core Event when adopted
    size_t context_handle         # user events (native_user_events.pxi): their context's handle
    int status_set                # ... whose status was set

cdef pthread_mutex_t tab_lock
pthread_mutex_init(&tab_lock, NULL)
cdef hent_t *tab = NULL
cdef size_t tab_cap = 0
cdef size_t tab_used = 0          # live and deleted slots
cdef size_t tab_live = 0
cdef pyplat_handle *dead_handles[QUARANTINE]
cdef long dead_next = 0
cdef void *spares[SPARES]         # (tab_lock) handle memory out of quarantine, for reuse
cdef long n_spares = 0
cdef size_t h_dispatch = 0        # the shim's dispatch table (0 until it attaches)
cdef long handle_serial = 0


cdef hent_t *tab_find(size_t key) noexcept nogil:
    """(tab_lock held) The live entry of a handle address, or NULL (tab_read: without the lock)."""
    cdef size_t mask, j
    if tab_cap == 0 or key <= 1:
        return NULL
    mask = tab_cap - 1
    j = key_hash(key) & mask
    while tab[j].key != 0:
        if tab[j].key == key:
            return &tab[j]
        j = (j + 1) & mask
    return NULL


include "native_table_reads.pxi"       # tab_rehash, and tab_read: lookups without tab_lock


cdef hent_t *tab_insert(size_t key) noexcept nogil:
    """(tab_lock held) A new entry for a handle address that has none."""
    global tab_used, tab_live
    cdef size_t mask, j, cap = 256
    if (tab_used + 1) * 2 > tab_cap:          # rebuilt without the deleted slots
        while cap < 4 * (tab_live + 1):
            cap *= 2
        tab_rehash(cap)
    tab_live += 1
    mask = tab_cap - 1
    j = key_hash(key) & mask
    while tab[j].key > 1:
        j = (j + 1) & mask
    if tab[j].key == 0:
        tab_used += 1
    memset(&tab[j], 0, sizeof(hent_t))
    tab[j].key = key
    return &tab[j]


cdef hent_t *publish_locked(pyplat_handle *h, int kind, int flags, void *ptr, size_t context,
                           long api_refs) noexcept nogil:
    """(tab_lock held) Make the memory h a live handle of `kind` (the dispatch pointer, magic,
    kind, a new serial) with its table entry: flags, the native reference `ptr` it takes over,
    the core context's id, the application's count; no core object yet (the caller sets obj)."""
    cdef hent_t *e
    h.dispatch = <void *>h_dispatch
    h.magic, h.kind = PYPLAT_HANDLE_MAGIC, kind
    h.serial = <uint64_t>pp_add(&handle_serial, 1)
    tab_write_begin()
    e = tab_insert(<size_t>h)
    e.kind, e.flags, e.ptr, e.context, e.api_refs = kind, flags, ptr, context, api_refs
    tab_write_end()
    handle_note_native(h, kind, ptr)       # (native_table_reads.pxi)
    return e


cdef inline void tab_delete(hent_t *e) noexcept nogil:
    """(tab_lock held)"""
    global tab_live
    tab_write_begin()
    e.key, e.ptr, e.obj = 1, NULL, NULL
    tab_write_end()
    tab_live -= 1


# Handle memory (issue 13 item 9: resident memory flat under create/release loops). Every handle,
# native events included, is one HANDLE_BYTES block. The quarantine is full from the start (blocks
# allocated and written at load, marked dead, never handed out as handles), so burying a handle
# lets the oldest block out of quarantine: it becomes a spare, which the next new handle takes
# instead of asking the allocator. A create/release loop thus cycles through the same blocks and
# the process's memory does not grow while the quarantine would otherwise fill (8192 blocks,
# ~400 kB, paid once at load). More spares than SPARES (many handles released at once) are freed.
cdef size_t HANDLE_BYTES = sizeof(nevent_t)


cdef void *hmem_take_locked() noexcept nogil:
    """(tab_lock held) Zeroed memory for a new handle: a spare, else the allocator's; or NULL.
    For creations done in one pass under the lock."""
    global n_spares
    cdef void *m
    if n_spares > 0:
        n_spares -= 1
        m = spares[n_spares]
        memset(m, 0, HANDLE_BYTES)
        return m
    return calloc(1, HANDLE_BYTES)


cdef void *hmem_new() noexcept nogil:
    """Zeroed memory for a new handle (a spare, else the allocator's), or NULL."""
    global n_spares
    cdef void *m = NULL
    pthread_mutex_lock(&tab_lock)
    if n_spares > 0:
        n_spares -= 1
        m = spares[n_spares]
    pthread_mutex_unlock(&tab_lock)
    if m == NULL:
        return calloc(1, HANDLE_BYTES)
    memset(m, 0, HANDLE_BYTES)
    return m


cdef void spare_locked(void *m) noexcept nogil:
    """(tab_lock held) Memory of no handle: kept as a spare, or freed."""
    global n_spares
    if n_spares < SPARES:
        spares[n_spares] = m
        n_spares += 1
    else:
        free(m)


cdef void hmem_unused(void *m) noexcept nogil:
    """Memory from hmem_new that never became a published handle."""
    pthread_mutex_lock(&tab_lock)
    spare_locked(m)
    pthread_mutex_unlock(&tab_lock)


cdef void bury(pyplat_handle *h) noexcept nogil:
    """(tab_lock held) A dead handle's memory into quarantine; the oldest one there becomes a
    spare."""
    global dead_next
    cdef void *oldest = dead_handles[dead_next]
    h.magic = PYPLAT_HANDLE_DEAD
    dead_handles[dead_next] = h
    dead_next = (dead_next + 1) % QUARANTINE
    spare_locked(oldest)


cdef void fill_quarantine():
    """At load: the quarantine full of dead blocks, written so that they are resident now."""
    cdef long i
    cdef pyplat_handle *h
    for i in range(QUARANTINE):
        h = <pyplat_handle *>calloc(1, HANDLE_BYTES)
        if h == NULL:
            raise MemoryError()
        h.magic = PYPLAT_HANDLE_DEAD
        dead_handles[i] = h


assert sizeof(pyplat_handle) <= HANDLE_BYTES
fill_quarantine()


cdef void kslot_decref(kslot_t *k) noexcept nogil:
    if pp_add(&k.refs, -1) == 0:
        if k.plan != NULL:
            plan_decref(k.plan)
        kargs_free(<kargs_t *>k.args)
        free(k)


cdef void entry_release(int kind, void *ptr) noexcept nogil:
    """Drop the reference an entry held (after tab_lock is released)."""
    if ptr == NULL:
        return
    if kind == PYPLAT_KIND_QUEUE:
        qcore_decref(<qcore_t *>ptr)
    elif kind == PYPLAT_KIND_KERNEL:
        kslot_decref(<kslot_t *>ptr)
    elif kind == PYPLAT_KIND_EVENT:
        cmd_decref(<cmd_t *>ptr)
    elif kind == PYPLAT_KIND_MEM:
        nmem_decref(<nmem_t *>ptr)
    elif kind == PYPLAT_KIND_CONTEXT:
        nctx_decref(<nctx_t *>ptr)
    elif kind == PYPLAT_KIND_PROGRAM:
        nprog_free(<nprog_t *>ptr)         # (native_kernels.pxi)


cdef class KernelSlot:
    """A kernel's current launch plan as the native fast path sees it: core/kernel.py keeps one
    per kernel (made by the factory the bridge installs there), n_setarg may replace its plan."""
    cdef kslot_t *k

    def __cinit__(self, bytes kinds=None, value_sizes=(), written=(), size_t stdout_key=0):
        """kinds: per argument 0 by value, 1 buffer, 2 __local (LaunchShape.kinds); value_sizes:
        the by-value sizes; written: which the kernel writes through; stdout_key: the key of
        printf's output if it may print. Without them the native entries leave every argument
        to Python."""
        self.k = <kslot_t *>calloc(1, sizeof(kslot_t))
        if self.k == NULL:
            raise MemoryError()
        self.k.refs = 1
        if kinds is not None:
            self.k.args = kargs_new(kinds, value_sizes, written, stdout_key)

    # (native_kernel_args.pxi)
    def take_args(self):
        return take_args(self.k)

    def note_set(self, int index, handle=None):
        note_python_set(self.k, index, handle or 0, handle is not None)

    def note_prepared(self):
        note_prepared(self.k)

    def learn_work_group_info(self, size_t device, uint64_t wg_size, compile_size, uint64_t multiple,
                              uint64_t local_mem, uint64_t private_mem):
        learn_work_group_info(self.k, device, wg_size, compile_size, multiple, local_mem, private_mem)

    def __dealloc__(self):
        if self.k != NULL:
            kslot_decref(self.k)

    def derived(self, LaunchPlan known):
        """(plan, {index: bytes}) when the native clSetKernelArg has changed by-value arguments
        since `known` (the kernel's plan) was set: a LaunchPlan for the slot's current plan, and
        every by-value argument's value in it; None otherwise."""
        cdef plan_t *cur
        cdef uint64_t *argv
        cdef LaunchPlan root
        cdef int j
        if known is None:
            return None
        pthread_mutex_lock(&tab_lock)
        slot_lock(<kargs_t *>self.k.args)  # (a reference to the slot's plan: native_arg_sets.pxi)
        cur = self.k.plan
        if cur != NULL:
            plan_incref(cur)
        slot_unlock(<kargs_t *>self.k.args)
        pthread_mutex_unlock(&tab_lock)
        if cur == NULL or cur == known.p:
            if cur != NULL:
                plan_decref(cur)
            return None
        try:
            root = known if known.root is None else known.root
            if cur.parent != root.p:
                raise RuntimeError("a kernel's native plan is not derived from its own")
            argv = <uint64_t *>cur.args
            values = {j: (<char *>argv[j])[:cur.value_sizes[j]] for j in range(cur.n_args)
                      if cur.value_sizes[j]}
            return wrap_derived(cur, known), values
        finally:
            plan_decref(cur)

    def set_plan(self, LaunchPlan plan):
        """The plan of the current arguments, or None when they changed."""
        cdef plan_t *new = NULL if plan is None else plan.p
        cdef plan_t *old
        if new != NULL:
            plan_incref(new)
        pthread_mutex_lock(&tab_lock)
        slot_lock(<kargs_t *>self.k.args)
        old, self.k.plan = self.k.plan, new
        if self.k.args != NULL:
            foreign_clear_locked(<kargs_t *>self.k.args)     # (native_plans.pxi)
        slot_unlock(<kargs_t *>self.k.args)
        pthread_mutex_unlock(&tab_lock)
        if old != NULL:
            plan_decref(old)
        if plan is not None and plan.root is None:
            learn_plan_template(self.k, new)                 # (native_plans.pxi)
        note_plan_buffers(self.k, plan)    # (native_kernel_args.pxi)


include "native_refusals.pxi"          # a native entry's error with its reason
include "native_handle_rules.pxi"      # the handles' rules (unknown, released, another kind), for both entries
include "native_logging.pxi"           # PYPLAT_DEBUG=events for the native entries
include "native_buffer_rules.pxi"      # the buffer commands' argument rules, for both entries
include "native_creation_rules.pxi"    # clCreateBuffer's and clCreateSubBuffer's rules, for both entries
include "native_commands.pxi"
include "native_buffers.pxi"
include "native_maps.pxi"             # clEnqueueMapBuffer, clEnqueueUnmapMemObject; the mapping tables
include "native_kernel_arg_rules.pxi"  # clSetKernelArg's rules, for both entries
include "native_kernel_args.pxi"
include "native_arg_sets.pxi"          # clSetKernelArg under the slot's lock alone
include "native_kernels.pxi"
include "native_plans.pxi"


cdef void *native_ref(int kind, native) except? NULL:
    """A new reference to the native object of a queue (QueueCore), kernel (KernelSlot), event
    (Command), buffer (MemRecord) or context (ContextRecord); NULL for None."""
    cdef void *ptr
    if native is None:
        return NULL
    if kind == PYPLAT_KIND_QUEUE:
        ptr = (<QueueCore?>native).q
        qcore_incref(<qcore_t *>ptr)
    elif kind == PYPLAT_KIND_KERNEL:
        ptr = (<KernelSlot?>native).k
        pp_add(&(<kslot_t *>ptr).refs, 1)
    elif kind == PYPLAT_KIND_EVENT:
        ptr = (<Command?>native).c
        cmd_incref(<cmd_t *>ptr)
    elif kind == PYPLAT_KIND_MEM:
        ptr = (<MemRecord?>native).m
        pp_add(&(<nmem_t *>ptr).refs, 1)
    elif kind == PYPLAT_KIND_CONTEXT:
        ptr = (<ContextRecord?>native).x
        pp_add(&(<nctx_t *>ptr).refs, 1)
    else:
        raise ValueError(f"handle kind {kind} has no native object")
    return ptr


def new_handle(obj, int kind, native=None, context=None, long api_refs=0):
    """A new handle of `kind` for the core object `obj` (the table keeps a reference to it):
    memory laid out as icd/pyplat_handle.h says. `native` is the fast path's object for a queue,
    kernel or event (None: the Python entries answer for it), `context` their core context;
    `api_refs` 1: the object's creator reference is the application's, counted here from now on
    (native_refs.pxi)."""
    cdef hent_t *e
    cdef pyplat_handle *h = <pyplat_handle *>hmem_new()
    if h == NULL:
        raise MemoryError()
    cdef void *ptr
    try:
        ptr = native_ref(kind, native)
    except BaseException:
        hmem_unused(h)
        raise
    cdef size_t context_id = 0 if context is None else context_key(context)   # (native_contexts.pxi)
    Py_INCREF(obj)
    pthread_mutex_lock(&tab_lock)
    e = publish_locked(h, kind, 0, ptr, context_id, api_refs)
    e.obj = <PyObject *>obj
    pthread_mutex_unlock(&tab_lock)
    return <size_t>h


def drop_handle(size_t address):
    """Invalidate a handle (its object was destroyed): the table lets go of the object and the
    native reference, the memory goes into quarantine."""
    cdef hent_t *e
    cdef int kind = 0
    cdef void *ptr = NULL
    cdef PyObject *obj = NULL
    pthread_mutex_lock(&tab_lock)
    e = tab_find(address)
    if e != NULL:
        kind, ptr, obj = e.kind, e.ptr, e.obj
        bury(<pyplat_handle *>address)
        tab_delete(e)
    pthread_mutex_unlock(&tab_lock)
    entry_release(kind, ptr)
    Py_XDECREF(obj)                    # may run Python code: outside the lock


cdef object adopt_missing = None      # handles.py's adoption of native events (set_adopter)


def set_adopter(fn):
    """fn(address) -> core object or None: called by lookup for a native event not yet adopted."""
    global adopt_missing
    adopt_missing = fn


cdef inline object entry_object(size_t address, int *unadopted):
    """The core object of a live handle, or None; *unadopted is set for a native event that has
    none yet."""
    cdef hent_t *e
    cdef PyObject *obj = NULL
    pthread_mutex_lock(&tab_lock)
    e = tab_find(address)
    if e != NULL:
        obj = e.obj
        if obj != NULL:
            Py_INCREF(<object>obj)
        else:
            unadopted[0] = e.flags & HF_NATIVE and not e.flags & HF_ADOPTED
    pthread_mutex_unlock(&tab_lock)
    if obj == NULL:
        return None
    result = <object>obj
    Py_XDECREF(obj)                    # the reference taken under the lock
    return result


def lookup(size_t address, cls, int error):
    """The live core object behind a handle, or CLError(error) if it is not one of cls (a native
    event is adopted on first use)."""
    cdef int unadopted = 0
    obj = entry_object(address, &unadopted)
    if obj is None and unadopted and adopt_missing is not None:
        obj = adopt_missing(address)
    if obj is None or not isinstance(obj, cls):
        raise CLError(*handle_refusal(address, cls, error))     # (native_handle_rules.pxi)
    return obj


include "native_fork.pxi"
include "native_trace.pxi"


def peek(size_t address):
    """The core object behind a handle, or None (a native event not yet adopted: None)."""
    cdef int unadopted = 0
    return entry_object(address, &unadopted)


def set_dispatch(size_t dispatch):
    """The shim attached: every handle, those made before included (in-process callers that went
    around the loader), and every later one gets its dispatch pointer."""
    global h_dispatch
    cdef size_t i
    pthread_mutex_lock(&tab_lock)
    h_dispatch = dispatch
    for i in range(tab_cap):
        if tab[i].key > 1:
            (<pyplat_handle *>tab[i].key).dispatch = <void *>dispatch
    pthread_mutex_unlock(&tab_lock)


def dispatch_address():
    return h_dispatch


def adopt_event(size_t h, factory):
    """For the API layer (under handles.py's lock), on a handle with no core object: if h is a
    native event not yet adopted, factory(queue, command, refcount, command_type) makes its core
    Event, which takes over the count (its queue is the CommandQueue); the table keeps it, it is
    returned. Else None."""
    cdef hent_t *e
    cdef nevent_t *s = NULL
    cdef cmd_t *c = NULL
    cdef qcore_t *q = NULL
    cdef long refs = 0
    cdef uint32_t command_type = 0
    if is_native_user_event(h):            # (native_user_events.pxi)
        return adopt_user_event(h)
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_EVENT and e.flags == HF_NATIVE:
        e.flags |= HF_ADOPTED
        s = <nevent_t *>h
        refs, q, s.q, command_type = s.refs, s.q, NULL, s.command_type
        c = <cmd_t *>e.ptr
        cmd_incref(c)
    pthread_mutex_unlock(&tab_lock)
    if s == NULL:
        return None
    try:
        if q.events.owner == NULL:         # a queue made natively: its CommandQueue first
            adopt_queue_of(q)              # (native_queues.pxi)
        queue = <object>q.events.owner     # held while the queue has native events (this one)
        obj = factory(queue, wrap_command(c, queue.driver), refs, command_type)
    finally:
        hold_done(&q.events)
        qcore_decref(q)
    Py_INCREF(obj)
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)                        # (still there: only Python, holding the GIL, drops it)
    if e != NULL:
        e.obj = <PyObject *>obj
        obj_kept = True
    else:
        obj_kept = False
    pthread_mutex_unlock(&tab_lock)
    if not obj_kept:
        Py_XDECREF(<PyObject *>obj)
    return obj


cdef int32_t n_ndrange(size_t queue, size_t kernel, uint32_t work_dim, size_t offset, size_t global_size,
                       size_t local_size, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    cdef cmd_t *waits[MAX_NATIVE_WAITS]
    cdef nmem_t *foreign[MAX_FOREIGN]
    cdef hent_t *e
    cdef qcore_t *q = NULL
    cdef kslot_t *ks = NULL
    cdef plan_t *p = NULL
    cdef cmd_t *c
    cdef nevent_t *s = NULL
    cdef uint64_t geo[9]
    cdef uint32_t i, n = 0
    cdef int empty = 0, ok = 0, r, n_foreign = 0, waits_taken = 0
    cdef refusal_t why, waits_why
    cdef size_t no_work_items[3]
    if global_size == 0:
        # OpenCL 2.1 on: a NULL global size is a zero-sized launch, which "will trivially
        # succeed after its event dependencies are satisfied" (the error it was is deprecated)
        memset(no_work_items, 0, sizeof(no_work_items))
        global_size = <size_t>no_work_items
    # handles -> references, under the table lock, in the Python entry's order (the queue, the
    # kernel; the wait list after the sizes, below)
    pthread_mutex_lock(&tab_lock)
    e = tab_find(queue)
    if not handle_valid(queue, e, PYPLAT_KIND_QUEUE, CL_INVALID_COMMAND_QUEUE, &why):   # (native_handle_rules.pxi)
        ok = -1
    else:
        q = <qcore_t *>e.ptr
        e = tab_find(kernel)
        if not handle_valid(kernel, e, PYPLAT_KIND_KERNEL, CL_INVALID_KERNEL, &why):
            ok = -1
        elif q != NULL and e.ptr != NULL:
            ks = <kslot_t *>e.ptr
            slot_lock(<kargs_t *>ks.args)  # (to the reference taken below: native_arg_sets.pxi)
            p = ks.plan
            if p != NULL and p.context == q.context:
                ok = 1
                waits_taken = waits_take_locked(waits, n_events, events, q.context, &waits_why)
                n = n_events if waits_taken == 1 else 0
    if ok == 1:
        n_foreign = foreign_take_locked(ks, p, foreign)   # (native_plans.pxi)
        ok = n_foreign >= 0
    if ok == 1:
        qcore_incref(q)
        plan_incref(p)
    if ks != NULL:
        slot_unlock(<kargs_t *>ks.args)
    pthread_mutex_unlock(&tab_lock)
    if ok != 1:
        for i in range(n):
            cmd_decref(waits[i])
        return refused("clEnqueueNDRangeKernel", &why, queue, kernel) if ok < 0 else PYPLAT_DEFER
    r = plan_start(p, q.device, work_dim, global_size, local_size, offset, geo, &empty, &why)
    if r == 1 and waits_taken != 1:        # the sizes passed: the wait list's turn
        hold_done(p.hold)
        r = -2 if waits_taken < 0 else 0
        if r:
            why = waits_why
    if r == 1 and n_foreign and not foreign_use(foreign, n_foreign):   # (native_plans.pxi)
        hold_done(p.hold)
        r = 0
    foreign_drop(foreign, n_foreign)       # (the holds in use keep their records alive)
    if r != 1:
        n_foreign = 0
    if r == 1 and event:
        if not hold_use(&q.events):
            hold_done(p.hold)
            foreign_unuse(foreign, n_foreign)
            r = 0
        else:
            s = <nevent_t *>hmem_new()
            if s == NULL:
                hold_done(p.hold)
                foreign_unuse(foreign, n_foreign)
                hold_done(&q.events)
                r = 0
    if r != 1:
        for i in range(n):
            cmd_decref(waits[i])
        qcore_decref(q)
        plan_decref(p)
        return refused("clEnqueueNDRangeKernel", &why, queue, kernel) if r == -2 else PYPLAT_DEFER
    # the command
    c = cmd_new(K_NOP)
    if c == NULL or fill_launch(c, p, geo, work_dim, empty) < 0:
        if c != NULL:
            cmd_free(c)
        hold_done(p.hold)
        foreign_unuse(foreign, n_foreign)
        for i in range(n):
            cmd_decref(waits[i])
        if s != NULL:
            hmem_unused(s)
            hold_done(&q.events)
        qcore_decref(q)
        plan_decref(p)
        return CL_OUT_OF_HOST_MEMORY_
    c.driver = q.driver
    c.plan = p                             # our reference: told when the launch finished
    foreign_attach(c, foreign, n_foreign)  # ... and the foreign buffers' holds
    for i in range(n):
        link(c, waits[i])
        cmd_decref(waits[i])
    pthread_mutex_lock(&q.lock)
    order_locked(q, c, 0, p.acc, p.n_acc, p.acc_unknown)
    pthread_mutex_unlock(&q.lock)
    cmd_attach(c, q.track)
    if s != NULL:                          # the event: a native handle in the table
        publish_event(s, q, c, CL_COMMAND_NDRANGE_KERNEL, event)
    if events_logged:
        log_command(c, CL_COMMAND_NDRANGE_KERNEL, q.device, n, p.name)
    cmd_commit(c)
    cmd_decref(c)                          # enqueue's reference: the queue and graph hold theirs
    qcore_decref(q)
    return CL_SUCCESS_


cdef int32_t n_retain_event(size_t h) noexcept nogil:
    return noted("clRetainEvent", h, checked_first(retain_event(h), "clRetainEvent", h, PYPLAT_KIND_EVENT,
                                                   CL_INVALID_EVENT))


cdef int32_t n_release_event(size_t h) noexcept nogil:
    return noted("clReleaseEvent", h, checked_first(release_event(h), "clReleaseEvent", h, PYPLAT_KIND_EVENT,
                                                    CL_INVALID_EVENT))


cdef int32_t retain_event(size_t h) noexcept nogil:
    cdef hent_t *e
    cdef int32_t r = PYPLAT_DEFER
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_EVENT and e.flags == HF_NATIVE:
        (<nevent_t *>h).refs += 1
        r = CL_SUCCESS_
    elif e != NULL and e.kind == PYPLAT_KIND_EVENT and e.api_refs > 0:    # (native_refs.pxi)
        e.api_refs += 1
        r = CL_SUCCESS_
    pthread_mutex_unlock(&tab_lock)
    return r


cdef int32_t release_event(size_t h) noexcept nogil:
    cdef hent_t *e
    cdef nevent_t *s
    cdef cmd_t *c = NULL
    cdef qcore_t *q = NULL
    cdef int32_t r = PYPLAT_DEFER
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_EVENT and e.flags == HF_NATIVE:
        s = <nevent_t *>h
        if s.context_handle != 0:          # a user event (native_user_events.pxi)
            r = user_release_locked(e, s, &c)
        else:
            r = CL_SUCCESS_
            s.refs -= 1
            if s.refs == 0:
                c, q, s.q = <cmd_t *>e.ptr, s.q, NULL
                tab_delete(e)
                bury(&s.h)
    elif e != NULL and e.kind == PYPLAT_KIND_EVENT and e.api_refs > 1:    # (native_refs.pxi)
        e.api_refs -= 1
        r = CL_SUCCESS_
    pthread_mutex_unlock(&tab_lock)
    if c != NULL:
        cmd_decref(c)
    if q != NULL:
        hold_done(&q.events)
        qcore_decref(q)
    return r


include "native_waits.pxi"
include "native_refs.pxi"
include "native_user_events.pxi"
include "native_queues.pxi"
include "native_contexts.pxi"


def handle_layout():
    """(size, offsets of magic, kind and serial) of a handle as icd/pyplat_handle.h lays it out."""
    cdef pyplat_handle h
    cdef size_t base = <size_t>&h
    return (sizeof(pyplat_handle), <size_t>&h.magic - base, <size_t>&h.kind - base,
            <size_t>&h.serial - base)


def table_stats():
    """(capacity, live entries) of the handle table."""
    return tab_cap, tab_live
