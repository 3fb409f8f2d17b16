# Part of pyplat/api/_native.pyx (included there, after native_kernel_args.pxi).
# ---------------------------------------------------------------------------------------------
# clCreateKernel natively, for kernel names the Python entry has made a kernel of before.
#
# What a kernel object needs natively is its slot (kslot_t) with its arguments' record
# (kargs_t): the kind, by-value size and written flag of each argument, all per kernel name of
# a program build (core/kernel.py, LaunchShape). The first clCreateKernel of a name goes to
# Python, which builds the core Kernel and leaves the fresh argument record here as that name's
# *layout* (kproto_t), in the program's native record (nprog_t, the program entry's `ptr`).
# Later clCreateKernel of that name copy the layout into a new slot and publish it as a kernel
# handle with no core object: its entry counts the application's reference (api_refs 1) and
# holds one count on the program's entry (as a core Kernel holds a core reference on its
# program: CL_PROGRAM_REFERENCE_COUNT is the same either way), and the program's record counts
# it among its kernels (nprog_t.native_kernels: clBuildProgram and clCompileProgram refuse a
# program with kernels attached, forget_kernel_layouts).
#
# clSetKernelArg (native_kernel_args.pxi) keeps the arguments pending in the slot as for any
# kernel. The first Python use of the kernel (the argument that completes it, a launch, a query
# the native entries do not answer) *adopts* it (adopt_kernel): a core Kernel is built around
# the same slot, so it takes the arguments set natively (Kernel._sync), and the program's count
# is given back: the core Kernel holds its program itself. The last clReleaseKernel of a kernel
# never adopted frees it here (release_native_kernel), unless it holds its program's last
# reference: Python then adopts and releases it.
# ---------------------------------------------------------------------------------------------
cdef extern from "<string.h>" nogil:
    size_t strnlen(const char *s, size_t maxlen)

DEF MAX_KERNEL_NAME = 256         # longer names: the Python entry's


cdef struct kproto_t:             # a kernel name's argument layout (in its program's record)
    long refs                     # the program's record and each kernel made from it
    kproto_t *next
    kargs_t *layout               # a fresh argument record (nothing set), copied per kernel
    size_t layout_bytes
    size_t name_len
    void *tmpl                    # (tab_lock) ptmpl_t: its plans' template, or NULL (native_plans.pxi)
    char name[MAX_KERNEL_NAME]


cdef struct nprog_t:              # a program handle's native record (its entry's ptr)
    size_t context                # id of the core context: its kernels' entries' `context`
    long native_kernels           # (tab_lock) kernels made here and not adopted yet (orphans too)
    long orphans                  # (tab_lock) released kernels whose native plan has launches
                                  # pending (native_plans.pxi)
    kproto_t *layouts             # (tab_lock) one per kernel name, for the current build


cdef void kproto_decref(kproto_t *pr) noexcept nogil:
    if pr != NULL and pp_add(&pr.refs, -1) == 0:
        tmpl_free(pr.tmpl)
        free(pr.layout)
        free(pr)


cdef void nprog_free(nprog_t *np) noexcept nogil:
    """The program's handle went (after tab_lock is released)."""
    cdef kproto_t *pr = np.layouts
    cdef kproto_t *nxt
    while pr != NULL:
        nxt = pr.next
        kproto_decref(pr)
        pr = nxt
    free(np)


cdef kargs_t *layout_of(kargs_t *ka) noexcept nogil:
    """(tab_lock) The layout an argument record was copied from or registered as, or NULL."""
    if ka == NULL or ka.proto == NULL:
        return NULL
    return (<kproto_t *>ka.proto).layout


cdef kargs_t *kargs_copy(kproto_t *pr) noexcept nogil:
    """A new argument record laid out as pr's (a reference to pr taken), or NULL."""
    cdef kargs_t *ka = <kargs_t *>malloc(pr.layout_bytes)
    if ka == NULL:
        return NULL
    memcpy(ka, pr.layout, pr.layout_bytes)
    ka.a = <karg_t *>(<char *>ka + sizeof(kargs_t))
    ka.proto = pr
    pp_add(&pr.refs, 1)
    return ka


cdef size_t n_create_kernel(size_t program, size_t name, size_t errcode_ret) noexcept nogil:
    return checked_first_made(create_kernel(program, name, errcode_ret), "clCreateKernel", program,
                              PYPLAT_KIND_PROGRAM, CL_INVALID_PROGRAM, errcode_ret)


cdef size_t create_kernel(size_t program, size_t name, size_t errcode_ret) noexcept nogil:
    """clCreateKernel of a kernel name whose layout is known; PYPLAT_DEFER_HANDLE for anything
    else (errors of a valid program included: the Python entry reports them)."""
    cdef hent_t *e
    cdef nprog_t *np = NULL
    cdef kproto_t *pr = NULL
    cdef kslot_t *k = NULL
    cdef kargs_t *ka = NULL
    cdef pyplat_handle *h = NULL
    cdef size_t n
    if name == 0:
        return <size_t>PYPLAT_DEFER_HANDLE
    n = strnlen(<char *>name, MAX_KERNEL_NAME)
    if n >= MAX_KERNEL_NAME:
        return <size_t>PYPLAT_DEFER_HANDLE
    reclaim_orphans(0)                                # (native_plans.pxi)
    k = <kslot_t *>calloc(1, sizeof(kslot_t))
    if k == NULL:
        return <size_t>PYPLAT_DEFER_HANDLE
    # One pass under the table lock: the program's check, the layout, the handle and its entry.
    pthread_mutex_lock(&tab_lock)
    e = tab_find(program)
    if e != NULL and e.kind == PYPLAT_KIND_PROGRAM and e.ptr != NULL and e.api_refs > 0:
        np = <nprog_t *>e.ptr
        pr = np.layouts
        while pr != NULL and not (pr.name_len == n and memcmp(pr.name, <void *>name, n) == 0):
            pr = pr.next
        if pr != NULL:
            ka = kargs_copy(pr)
            if ka != NULL:
                h = <pyplat_handle *>hmem_take_locked()
    if h == NULL:
        pthread_mutex_unlock(&tab_lock)
        free(k)
        kargs_free(ka)
        return <size_t>PYPLAT_DEFER_HANDLE
    ka.program = program
    k.refs, k.args = 1, ka
    e.api_refs += 1                                   # the kernel's hold on its program
    np.native_kernels += 1
    publish_locked(h, PYPLAT_KIND_KERNEL, HF_NATIVE, k, np.context, 1)
    pthread_mutex_unlock(&tab_lock)
    if errcode_ret != 0:
        (<int32_t *>errcode_ret)[0] = CL_SUCCESS_
    return <size_t>h


cdef int32_t release_native_kernel(size_t h) noexcept nogil:
    """The last clReleaseKernel of a kernel never adopted: freed here when its program keeps
    another reference; PYPLAT_DEFER otherwise (and for any other handle)."""
    cdef hent_t *e
    cdef hent_t *pe
    cdef kslot_t *k = NULL
    cdef int32_t r = PYPLAT_DEFER
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_KERNEL and e.flags == HF_NATIVE and e.api_refs == 1:
        k = <kslot_t *>e.ptr
        pe = tab_find((<kargs_t *>k.args).program)
        if pe != NULL and pe.api_refs >= 2 and pe.ptr != NULL:
            if orphan_locked(k):                      # (native_plans.pxi: the count stays)
                k = NULL
            else:
                pe.api_refs -= 1
                (<nprog_t *>pe.ptr).native_kernels -= 1
            bury(<pyplat_handle *>h)
            tab_delete(e)
            r = CL_SUCCESS_
        else:
            k = NULL
    pthread_mutex_unlock(&tab_lock)
    if k != NULL:
        kslot_decref(k)                               # the entry's reference
    if r == CL_SUCCESS_:
        reclaim_orphans(0)
    return r


def learn_kernel_layout(size_t program, bytes name, KernelSlot slot, context):
    """The Python clCreateKernel made a kernel of `name`: its argument layout (the slot's record,
    as a new kernel's) is kept for the native clCreateKernel of that name in this program (the
    first one kept stays; a rebuild forgets them: forget_kernel_layouts)."""
    cdef hent_t *e
    cdef nprog_t *np
    cdef nprog_t *fresh
    cdef kproto_t *pr
    cdef kproto_t *old
    cdef kargs_t *src = <kargs_t *>slot.k.args
    cdef kargs_t *layout
    cdef size_t n = len(name), nbytes
    if src == NULL or n >= MAX_KERNEL_NAME or n == 0:
        return
    nbytes = sizeof(kargs_t) + max(src.n, 1) * sizeof(karg_t)
    pr = <kproto_t *>calloc(1, sizeof(kproto_t))
    fresh = <nprog_t *>calloc(1, sizeof(nprog_t))
    layout = <kargs_t *>calloc(1, nbytes)
    if pr == NULL or fresh == NULL or layout == NULL:
        free(pr)
        free(fresh)
        free(layout)
        raise MemoryError()
    pr.refs, pr.layout, pr.layout_bytes, pr.name_len = 1, layout, nbytes, n
    memcpy(pr.name, <char *>name, n)
    fresh.context = context_key(context)
    pthread_mutex_lock(&tab_lock)
    slot_lock(src)                                    # (src's state: tab_lock and its slot's lock)
    memcpy(layout, src, nbytes)
    slot_unlock(src)
    layout_reset(layout)
    e = tab_find(program)
    if e != NULL and e.kind == PYPLAT_KIND_PROGRAM:
        if e.ptr == NULL:
            e.ptr, fresh = fresh, NULL
        np = <nprog_t *>e.ptr
        old = np.layouts
        while old != NULL and not (old.name_len == n and memcmp(old.name, pr.name, n) == 0):
            old = old.next
        if old == NULL:
            pr.next, np.layouts, old, pr = np.layouts, pr, pr, NULL
        if src.proto == NULL:             # what this kernel learns later, its layout learns
            src.proto = old               # (learn_work_group_info)
            pp_add(&old.refs, 1)
    pthread_mutex_unlock(&tab_lock)
    free(fresh)
    kproto_decref(pr)


cdef void layout_reset(kargs_t *ka) noexcept nogil:
    """A copied argument record as a new kernel's: nothing set, pending, known or held."""
    cdef int j
    if ka == NULL:
        return
    ka.lock, ka.context, ka.unset, ka.prepared, ka.n_pending, ka.n_wg = 0, 0, ka.n, 0, 0, 0
    ka.root, ka.n_root_mems, ka.proto, ka.program = NULL, 0, NULL, 0
    ka.n_foreign, ka.foreign_plan, ka.native_root, ka.orphan_next = 0, NULL, NULL, NULL
    for j in range(ka.n):
        ka.a[j].is_set = ka.a[j].pending = ka.a[j].mem_known = ka.a[j].in_plan = 0
        ka.a[j].size = ka.a[j].handle = ka.a[j].serial = 0
        ka.a[j].mem_cur = NULL


def forget_kernel_layouts(size_t program):
    """Before a (re)build of the program: False if kernels made natively are attached to it;
    else its kernel layouts are forgotten (the new build may differ) and True."""
    cdef hent_t *e
    cdef kproto_t *pr = NULL
    cdef kproto_t *nxt
    cdef bint detached = True
    settle_native_plans(program)                      # (native_plans.pxi)
    pthread_mutex_lock(&tab_lock)
    e = tab_find(program)
    if e != NULL and e.kind == PYPLAT_KIND_PROGRAM and e.ptr != NULL:
        if (<nprog_t *>e.ptr).native_kernels > 0:
            detached = False
        else:
            pr, (<nprog_t *>e.ptr).layouts = (<nprog_t *>e.ptr).layouts, NULL
    pthread_mutex_unlock(&tab_lock)
    while pr != NULL:
        nxt = pr.next
        kproto_decref(pr)
        pr = nxt
    return detached


def native_kernels_of(size_t program):
    """Kernels made natively and not adopted that hold the program."""
    cdef hent_t *e
    cdef long n = 0
    pthread_mutex_lock(&tab_lock)
    e = tab_find(program)
    if e != NULL and e.kind == PYPLAT_KIND_PROGRAM and e.ptr != NULL:
        n = (<nprog_t *>e.ptr).native_kernels
    pthread_mutex_unlock(&tab_lock)
    return n


def adopt_kernel(size_t h, factory):
    """For the API layer (under handles.py's lock), on a handle with no core object: if h is a
    kernel made natively, factory(program, name, slot) makes its core Kernel around the slot
    (program: the core Program, which the Kernel retains; slot: a KernelSlot of the same native
    record, with the arguments set so far); the table keeps it, the count the kernel held on its
    program is given back. It is returned; None if h is no such kernel."""
    cdef hent_t *e
    cdef kslot_t *k = NULL
    cdef kargs_t *ka
    cdef PyObject *prog = NULL
    cdef size_t program = 0, name_len = 0
    cdef char name[MAX_KERNEL_NAME]
    cdef KernelSlot slot
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)
    if e != NULL and e.kind == PYPLAT_KIND_KERNEL and e.flags == HF_NATIVE and e.obj == NULL:
        k = <kslot_t *>e.ptr
        ka = <kargs_t *>k.args
        program = ka.program
        e = tab_find(program)
        if e != NULL and e.obj != NULL:
            prog = e.obj
            Py_INCREF(<object>prog)
            pp_add(&k.refs, 1)
            tab_find(h).flags |= HF_ADOPTING
            name_len = (<kproto_t *>ka.proto).name_len
            memcpy(name, (<kproto_t *>ka.proto).name, name_len)
        else:
            k = NULL                       # (its program's entry lives while the kernel does)
    pthread_mutex_unlock(&tab_lock)
    if k == NULL:
        return None
    program_obj = <object>prog
    Py_XDECREF(prog)
    slot = KernelSlot()
    kslot_decref(slot.k)
    slot.k = k
    try:
        obj = factory(program_obj, name[:name_len].decode("utf-8", errors="replace"), slot)
    except BaseException:
        pthread_mutex_lock(&tab_lock)
        e = tab_find(h)
        if e != NULL:
            e.flags &= ~HF_ADOPTING
        pthread_mutex_unlock(&tab_lock)
        raise
    Py_INCREF(obj)
    kept = False
    pthread_mutex_lock(&tab_lock)
    e = tab_find(h)                        # (still there: only Python, holding the GIL, drops it)
    if e != NULL:
        e.obj = <PyObject *>obj
        e.flags = (e.flags | HF_ADOPTED) & ~HF_ADOPTING
        kept = True
        ka.program = 0
        e = tab_find(program)
        if e != NULL and e.ptr != NULL:
            (<nprog_t *>e.ptr).native_kernels -= 1
    pthread_mutex_unlock(&tab_lock)
    if not kept:
        Py_XDECREF(<PyObject *>obj)
    hand_over_native_plan(k, program_obj, obj)    # (native_plans.pxi)
    if api_release(program) == 2:          # the core Kernel holds its program itself now
        program_obj.release()
    return obj
