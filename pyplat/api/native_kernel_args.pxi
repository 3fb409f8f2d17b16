# Part of pyplat/api/_native.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Kernel arguments and per-kernel queries without the GIL (docs/runtime.md, "Fast path"):
# clSetKernelArg in every valid common case, clGetKernelWorkGroupInfo of the per-kernel
# constants, clGetKernelInfo(CL_KERNEL_NUM_ARGS).
#
# A kernel's slot (kslot_t) carries its arguments as the native side knows them (kargs_t): the
# kind of each (from the kernel's signature), whether it has a value, and the values set here
# that the Python side has not taken yet (*pending*). core/kernel.py takes them (Kernel._sync,
# KernelSlot.take_args) before any use of its arguments, so its plans are built from them by
# the Python code that always built them: the argument block, the buffers the plan holds and
# the accesses the in-order queue orders by are exactly what a Python clSetKernelArg gives.
#
# What is answered here, the rest deferring to the Python entry (the one home of validation):
# - a by-value argument of the right size: with a plan, derived as before (plan_derive); without
#   one, kept pending;
# - a buffer (a handle with a native record, nmem_t: a Buffer of a context in host memory, of
#   the kernel's context) or NULL: with a plan, the buffer the plan was built with changes
#   nothing; one of the buffers the plan's root holds gives the slot a plan derived from the
#   current one (the cell patched, the accesses recomputed: swap_buffer), so that buffers
#   swapped between launches (ping-pong) stay native; another one drops the plan (as
#   Kernel.set_arg does), the next launch builds one; without a plan, kept pending;
# - a __local size (NULL value), when the kernel has no plan.
# A set that would give the last unset argument a value before the kernel's first plan was made
# (Kernel.prepare_plan) goes to Python, which builds that plan then, so that the first launch
# stays native.
#
# Locks: the argument state (karg_t, unset, n_pending, prepared) and the slot's plan pointer are
# guarded by the slot's own lock (slot_lock, a spin lock in kargs_t) taken inside tab_lock
# wherever tab_lock holders read or change them, so that the sets programs repeat (the same
# value or buffer again, a value into a plan only the slot holds, a value, buffer or __local
# size kept pending) take the slot's lock alone (setarg_unlocked, native_arg_sets.pxi): no
# line every thread shares. The kernel is read in its handle's memory (handle_native), a buffer
# by a lock-free probe (tab_read). Everything else takes tab_lock, then the slot's lock, as
# before. The slot's lock is never held while tab_lock is taken.
# ---------------------------------------------------------------------------------------------
from libc.stdint cimport uint8_t
from libc.stdlib cimport malloc
from pyplat.runtime._sched cimport pp_load

DEF P_NONE = 0                    # what is pending
DEF P_VALUE = 1
DEF P_MEM = 2
DEF P_LOCAL = 3
DEF MAX_NATIVE_VALUE = 128        # larger by-value arguments go to Python
DEF MAX_WG_DEVICES = 4
DEF MAX_ROOT_MEMS = 16            # buffers of a root plan a swap may choose from
DEF KERNEL_NUM_ARGS = CL_KERNEL_NUM_ARGS
DEF KERNEL_WORK_GROUP_SIZE = CL_KERNEL_WORK_GROUP_SIZE
DEF KERNEL_COMPILE_WORK_GROUP_SIZE = CL_KERNEL_COMPILE_WORK_GROUP_SIZE
DEF KERNEL_LOCAL_MEM_SIZE = CL_KERNEL_LOCAL_MEM_SIZE
DEF KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE = CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
DEF KERNEL_PRIVATE_MEM_SIZE = CL_KERNEL_PRIVATE_MEM_SIZE


cdef struct karg_t:
    uint8_t kind                  # KA_*
    uint8_t is_set                # has a value (set here or through Python)
    uint8_t pending               # P_*: set here since the Python side last took them
    uint8_t mem_known             # mem_cur is the buffer of the Python side's arguments
    uint8_t writes                # a buffer the kernel may write through
    uint8_t in_plan               # pending, and the slot's plan has it already (swap_buffer)
    uint32_t value_size           # by-value: the size the signature wants
    uint64_t size                 # pending: bytes of the value, or the __local size
    size_t handle                 # pending buffer: its handle (0: NULL) and that handle's serial
    uint64_t serial
    nmem_t *mem_cur               # a reference (NULL: none, or a NULL buffer)
    char value[MAX_NATIVE_VALUE]


cdef struct wgdev_t:              # clGetKernelWorkGroupInfo's answers for one device handle
    size_t handle                 # 0: the NULL device of a program of one device
    uint64_t serial
    uint64_t wg_size
    uint64_t multiple


cdef struct kargs_t:              # (tab_lock; the argument state and k.plan: the slot's lock too)
    int lock                      # slot_lock (native_arg_sets.pxi); 0 in a layout or a copy
    size_t context                # the kernel entry's context once setarg_unlocked read it (0: not yet)
    int n
    int unset                     # arguments without a value
    int prepared                  # the Python side made (or tried) the kernel's first plan
    int n_pending
    int has_local                 # a __local argument: CL_KERNEL_LOCAL_MEM_SIZE depends on it
    int n_wg                      # device records known (learnt from the Python entry)
    wgdev_t wg[MAX_WG_DEVICES]
    uint64_t compile_wg[3]
    uint64_t local_mem
    uint64_t private_mem
    size_t stdout_key             # the STDOUT pseudo-object's key if the kernel may print, else 0
    plan_t *root                  # a reference: the root plan root_mems are the buffers of
    int n_root_mems
    nmem_t *root_mems[MAX_ROOT_MEMS]   # references
    void *proto                   # kproto_t (native_kernels.pxi): a reference to the layout this
                                  # record was copied from (kernels made natively), or NULL
    size_t program                # (made natively, until adopted) its program's handle
    plan_t *foreign_plan          # the slot's plan whose foreign buffers these are (native_plans.pxi;
    int n_foreign                 # not a reference: cleared whenever the slot's plan changes otherwise)
    nmem_t *foreign[4]            # references (MAX_FOREIGN)
    size_t foreign_handle[4]      # ... and their handles
    plan_t *native_root           # a reference: its first plan, built natively (native_plans.pxi)
    void *orphan_next             # (kslot_t) the next orphan (native_plans.pxi)
    karg_t *a


cdef kargs_t *kargs_new(bytes kinds, value_sizes, written, size_t stdout_key) except NULL:
    cdef int n = len(kinds), j
    cdef kargs_t *ka = <kargs_t *>calloc(1, sizeof(kargs_t) + max(n, 1) * sizeof(karg_t))
    if ka == NULL:
        raise MemoryError()
    ka.a = <karg_t *>(<char *>ka + sizeof(kargs_t))
    ka.n = ka.unset = n
    for j in range(n):
        ka.a[j].kind = kinds[j]
        ka.a[j].value_size = value_sizes[j]
        ka.a[j].writes = bool(written[j])
        if kinds[j] == KA_LOCAL:
            ka.has_local = 1
    ka.stdout_key = stdout_key
    return ka


cdef void kargs_free(kargs_t *ka) noexcept nogil:
    cdef int j
    if ka == NULL:
        return
    for j in range(ka.n):
        if ka.a[j].mem_cur != NULL:
            nmem_decref(ka.a[j].mem_cur)
    for j in range(ka.n_root_mems):
        nmem_decref(ka.root_mems[j])
    if ka.root != NULL:
        plan_decref(ka.root)
    foreign_clear_locked(ka)
    if ka.native_root != NULL:
        plan_decref(ka.native_root)
    kproto_decref(<kproto_t *>ka.proto)
    free(ka)


cdef inline void mark_set(kargs_t *ka, karg_t *a) noexcept nogil:
    if not a.is_set:
        a.is_set = 1
        ka.unset -= 1


cdef inline void set_pending(kargs_t *ka, karg_t *a, int what) noexcept nogil:
    if a.pending == P_NONE:
        ka.n_pending += 1
    a.pending, a.in_plan = what, 0
    mark_set(ka, a)


cdef inline nmem_t *set_mem_cur(karg_t *a, nmem_t *m) noexcept nogil:
    """(the slot's lock) The buffer the arguments hold now (a new reference taken); the old one's
    reference is returned, to be dropped after the lock."""
    cdef nmem_t *old = a.mem_cur
    a.mem_known = 1
    if old == m:
        return NULL               # (the same buffer again: no count changes hands)
    if m != NULL:
        pp_add(&m.refs, 1)
    a.mem_cur = m
    return old


cdef int pend_plan_values(kargs_t *ka, plan_t *p) noexcept nogil:
    """(tab_lock and the slot's lock) The plan is dropped here: by-value arguments the native
    path changed in it (a derived plan) become pending, so the Python side sees them. 0 if one
    is too large."""
    cdef uint64_t *argv = <uint64_t *>p.args
    cdef int j
    for j in range(ka.n):
        ka.a[j].in_plan = 0       # (pending still: the Python side has not seen them)
    if p.parent == NULL:
        return 1                  # a root plan holds the Python side's values
    for j in range(min(ka.n, p.n_args)):
        if p.value_sizes[j] > MAX_NATIVE_VALUE:
            return 0
    for j in range(min(ka.n, p.n_args)):
        if p.value_sizes[j]:
            memcpy(ka.a[j].value, <void *>argv[j], p.value_sizes[j])
            ka.a[j].size = p.value_sizes[j]
            set_pending(ka, &ka.a[j], P_VALUE)
    return 1


cdef int32_t n_setarg(size_t kernel, uint32_t index, uint64_t size, size_t value) noexcept nogil:
    return checked_first(setarg(kernel, index, size, value), "clSetKernelArg", kernel, PYPLAT_KIND_KERNEL,
                         CL_INVALID_KERNEL)


cdef int32_t setarg(size_t kernel, uint32_t index, uint64_t size, size_t value) noexcept nogil:
    """clSetKernelArg (see the top of this file)."""
    cdef hent_t *e
    cdef hent_t *me
    cdef kslot_t *k = NULL
    cdef kargs_t *ka
    cdef karg_t *a
    cdef plan_t *p = NULL
    cdef plan_t *dropped = NULL
    cdef nmem_t *m = NULL
    cdef nmem_t *old_mem = NULL
    cdef size_t handle = 0
    cdef int32_t r = PYPLAT_DEFER
    cdef int may_complete, swap = 0, foreign_ok = 0, first_plan = 0
    cdef refusal_t why
    k = <kslot_t *>handle_native(kernel, PYPLAT_KIND_KERNEL)     # (native_table_reads.pxi)
    if k != NULL and k.args != NULL:
        ka = <kargs_t *>k.args               # (its argument kinds and sizes never change)
        if not kernel_arg_valid(index, ka.n, ka.a[index].kind if index < <uint32_t>ka.n else KA_VALUE,
                                ka.a[index].value_size if index < <uint32_t>ka.n else 0, size, value, &why):
            return refused("clSetKernelArg", &why, kernel, 0)       # (native_kernel_arg_rules.pxi)
        r = setarg_unlocked(kernel, k, ka, index, size, value)       # (native_arg_sets.pxi)
        if r != PYPLAT_DEFER:
            return r
    pthread_mutex_lock(&tab_lock)
    e = tab_find(kernel)
    if e == NULL or e.kind != PYPLAT_KIND_KERNEL or e.ptr == NULL:
        pthread_mutex_unlock(&tab_lock)
        return PYPLAT_DEFER
    k = <kslot_t *>e.ptr
    ka = <kargs_t *>k.args
    if ka != NULL and not kernel_arg_valid(index, ka.n, ka.a[index].kind if index < <uint32_t>ka.n else KA_VALUE,
                                           ka.a[index].value_size if index < <uint32_t>ka.n else 0, size, value,
                                           &why):
        pthread_mutex_unlock(&tab_lock)
        return refused("clSetKernelArg", &why, kernel, 0)         # (native_kernel_arg_rules.pxi)
    if ka == NULL:
        pthread_mutex_unlock(&tab_lock)
        return PYPLAT_DEFER
    slot_lock(ka)
    a = &ka.a[index]
    # the first plan is the Python side's to build (Kernel.prepare_plan), when the last is set
    may_complete = ka.prepared or ka.unset - (0 if a.is_set else 1) > 0
    if not may_complete and first_plan_wanted(ka) and first_plan_buffers_ok(ka, index, value, size):
        # (native_plans.pxi: built below)
        may_complete = first_plan = 1
        pp_add(&k.refs, 1)
    if a.kind == KA_VALUE and value != 0 and size == a.value_size:
        if k.plan != NULL and value_in_place(k.plan, index, size, value):
            r = CL_SUCCESS_
        elif k.plan != NULL:
            p = k.plan
            plan_incref(p)
            pp_add(&k.refs, 1)
        elif size <= MAX_NATIVE_VALUE and may_complete:
            memcpy(a.value, <void *>value, size)
            a.size = size
            set_pending(ka, a, P_VALUE)
            r = CL_SUCCESS_
    elif a.kind == KA_MEM and size == 8:
        handle = (<size_t *>value)[0] if value != 0 else 0
        if handle != 0:
            me = tab_find(handle)
            if me != NULL and me.kind == PYPLAT_KIND_MEM and me.ptr != NULL and me.context == e.context:
                m = <nmem_t *>me.ptr
                foreign_ok = foreign_candidate_locked(handle, m)    # (native_plans.pxi)
            else:
                handle = 1        # not a buffer this path knows: Python's to check
        if handle != 1:
            if k.plan != NULL and a.mem_known and a.mem_cur == m:
                r = CL_SUCCESS_   # the plan's own buffer (pyopencl sets every argument each time)
            elif k.plan != NULL and ka.prepared and may_swap(ka, k.plan, index, m, foreign_ok):
                p = k.plan
                plan_incref(p)
                pp_add(&k.refs, 1)
                swap = 1
            elif k.plan != NULL and ka.prepared:
                if pend_plan_values(ka, k.plan):
                    dropped, k.plan = k.plan, NULL
                    foreign_clear_locked(ka)
                    a.handle = handle
                    a.serial = (<pyplat_handle *>handle).serial if handle else 0
                    set_pending(ka, a, P_MEM)
                    old_mem = set_mem_cur(a, m)
                    r = CL_SUCCESS_
            elif k.plan == NULL and may_complete:
                a.handle = handle
                a.serial = (<pyplat_handle *>handle).serial if handle else 0
                set_pending(ka, a, P_MEM)
                old_mem = set_mem_cur(a, m)
                r = CL_SUCCESS_
    elif a.kind == KA_LOCAL and value == 0 and size != 0 and k.plan == NULL and may_complete:
        a.size = size
        set_pending(ka, a, P_LOCAL)
        r = CL_SUCCESS_
    slot_unlock(ka)
    pthread_mutex_unlock(&tab_lock)
    if first_plan:
        if r == CL_SUCCESS_:
            native_first_plan(k)
        kslot_decref(k)
    if old_mem != NULL:
        nmem_decref(old_mem)
    if dropped != NULL:
        plan_decref(dropped)      # the slot's reference (the Python side keeps its own)
    if swap:
        r = swap_buffer(k, p, index, m, handle)
    elif p != NULL:
        r = set_plan_value(k, p, index, size, value)
    return r


cdef inline int value_in_place(plan_t *p, uint32_t index, uint64_t size, size_t value) noexcept nogil:
    """(the slot's lock) A by-value argument answered in the slot's plan itself, in the same
    pass: the value it has already, or a new one written into a derived plan that only the slot
    holds (no launch, no LaunchPlan: new references to the slot's plan are taken under its lock
    only), so that a program setting a value in a loop derives one plan, not one per call."""
    cdef void *cell
    if index >= <uint32_t>p.n_args or p.value_sizes[index] != size:
        return 0
    cell = <void *>(<uint64_t *>p.args)[index]
    if memcmp(cell, <void *>value, size) == 0:
        return 1
    if p.parent == NULL or pp_load(&p.refs) != 1:
        return 0
    memcpy(cell, <void *>value, size)
    return 1


cdef int may_swap(kargs_t *ka, plan_t *p, uint32_t index, nmem_t *m, int foreign_ok) noexcept nogil:
    """(tab_lock and the slot's lock) Whether buffer argument `index` may become m (NULL: a
    NULL buffer) in a plan derived from p: m is one of the buffers p's root holds (so its hold,
    or the armed plan's count, keeps m alive for the launches too) or, foreign_ok, one its own
    hold keeps (native_plans.pxi), and every other buffer argument is known."""
    cdef int j, found = m == NULL or foreign_ok
    if ka.root == NULL or ka.root != (p.parent if p.parent != NULL else p):
        return 0
    for j in range(ka.n_root_mems):
        found = found or ka.root_mems[j] == m
    for j in range(ka.n):
        if ka.a[j].kind == KA_MEM and <uint32_t>j != index and not ka.a[j].mem_known:
            return 0
    return found


cdef int32_t swap_buffer(kslot_t *k, plan_t *p, uint32_t index, nmem_t *m, size_t handle) noexcept nogil:
    """Buffer argument `index` of the plan p becomes m (may_swap said it may; references to k
    and p taken): the slot gets a plan derived from p with the buffer's address in the cell and
    the accesses the Python side would record (Kernel.accesses, merged_accesses: one per root,
    a writer wins, printf's output last), the argument pending for the Python side, which finds
    it in the plan (in_plan)."""
    cdef kargs_t *ka = <kargs_t *>k.args
    cdef karg_t *a = &ka.a[index]
    cdef uint64_t address = <uint64_t>m.address if m != NULL else 0
    cdef plan_t *c = plan_derive(p, index, <size_t>&address, 8)
    cdef plan_t *old = NULL
    cdef nmem_t *old_mem = NULL
    cdef nmem_t *b
    cdef access_t *acc
    cdef int j, i, n_acc = 0
    cdef int32_t r = PYPLAT_DEFER
    acc = <access_t *>malloc((ka.n + 1) * sizeof(access_t))
    if c != NULL and acc != NULL:
        pthread_mutex_lock(&tab_lock)
        slot_lock(ka)
        if (k.plan == p and may_swap(ka, p, index, m, foreign_candidate_locked(handle, m))
                and foreign_set_locked(ka, c, index, m, handle)):
            for j in range(ka.n):
                b = m if <uint32_t>j == index else ka.a[j].mem_cur
                if ka.a[j].kind != KA_MEM or b == NULL:
                    continue
                for i in range(n_acc):
                    if acc[i].key == b.root:
                        acc[i].writes = acc[i].writes or ka.a[j].writes
                        break
                else:
                    acc[n_acc].key, acc[n_acc].writes = b.root, ka.a[j].writes
                    n_acc += 1
            if ka.stdout_key:
                acc[n_acc].key, acc[n_acc].writes = ka.stdout_key, 1
                n_acc += 1
            free(c.acc)
            c.acc, c.n_acc, c.acc_unknown, acc = acc, n_acc, 0, NULL
            old, k.plan, c = p, c, NULL
            a.handle = handle
            a.serial = (<pyplat_handle *>handle).serial if handle else 0
            set_pending(ka, a, P_MEM)
            a.in_plan = m == NULL or root_holds(ka, m)   # (a foreign one: Python builds its own plan)
            old_mem = set_mem_cur(a, m)
            r = CL_SUCCESS_
        slot_unlock(ka)
        pthread_mutex_unlock(&tab_lock)
    free(acc)
    if c != NULL:
        plan_decref(c)
    if old != NULL:
        plan_decref(old)                  # the slot's reference
    if old_mem != NULL:
        nmem_decref(old_mem)
    plan_decref(p)
    kslot_decref(k)
    return r


cdef void note_plan_buffers(kslot_t *k, LaunchPlan plan):
    """The slot's plan is now `plan` (None: none): for a root plan, the native records of the
    buffers it holds, which swap_buffer may choose from."""
    cdef kargs_t *ka = <kargs_t *>k.args
    cdef nmem_t *found[MAX_ROOT_MEMS]
    cdef nmem_t *old[MAX_ROOT_MEMS]
    cdef size_t held[2 * MAX_ROOT_MEMS]
    cdef plan_t *old_root
    cdef hent_t *e
    cdef int n = 0, n_held = 0, n_old, j
    if ka == NULL:
        return
    if plan is not None and plan.root is None:
        for obj in plan.retained.objects:     # the program, then the buffers (Kernel.plan)
            if n_held < 2 * MAX_ROOT_MEMS:
                held[n_held] = getattr(obj, "_cl_handle", 0)    # (handles.HANDLE)
                n_held += 1
    else:
        plan = None
    pthread_mutex_lock(&tab_lock)
    for j in range(n_held):
        e = tab_find(held[j])
        if e != NULL and e.kind == PYPLAT_KIND_MEM and e.ptr != NULL and n < MAX_ROOT_MEMS:
            found[n] = <nmem_t *>e.ptr
            pp_add(&found[n].refs, 1)
            n += 1
    n_old, old_root = ka.n_root_mems, ka.root
    for j in range(n_old):
        old[j] = ka.root_mems[j]
    for j in range(n):
        ka.root_mems[j] = found[j]
    ka.n_root_mems = n
    ka.root = NULL if plan is None else plan.p
    if ka.root != NULL:
        plan_incref(ka.root)
    pthread_mutex_unlock(&tab_lock)
    for j in range(n_old):
        nmem_decref(old[j])
    if old_root != NULL:
        plan_decref(old_root)


cdef int32_t set_plan_value(kslot_t *k, plan_t *p, uint32_t index, uint64_t size, size_t value) noexcept nogil:
    """A by-value argument of a kernel that has a plan (references to k and p taken): the same
    value changes nothing; another one gives the slot a plan derived from p (plan_derive), which
    the Python side takes over when it next looks (KernelSlot.derived)."""
    cdef plan_t *c
    cdef plan_t *old = NULL
    cdef int32_t r = PYPLAT_DEFER
    # (a plan's block never changes: it is read without its lock)
    if index < <uint32_t>p.n_args and p.value_sizes[index] == size:
        if memcmp(<void *>(<uint64_t *>p.args)[index], <void *>value, size) == 0:
            r = CL_SUCCESS_
        else:
            c = plan_derive(p, index, value, size)
            if c != NULL:
                pthread_mutex_lock(&tab_lock)
                slot_lock(<kargs_t *>k.args)
                if k.plan == p:                   # (else the Python side changed it meanwhile)
                    foreign_follow_locked(<kargs_t *>k.args, p, c)
                    old, k.plan, c = p, c, NULL
                    r = CL_SUCCESS_
                slot_unlock(<kargs_t *>k.args)
                pthread_mutex_unlock(&tab_lock)
                if old != NULL:
                    plan_decref(old)              # the slot's reference
                if c != NULL:
                    plan_decref(c)
    plan_decref(p)
    kslot_decref(k)
    return r


class ReleasedBuffer:
    """Stands for a buffer set as an argument here and released (destroyed) before the Python
    side took the argument: like the Buffer Python would have kept, its count is 0, so the
    launch reports CL_INVALID_KERNEL_ARGS (Kernel.released_arg)."""
    reference_count = 0
    context = None


cdef object take_args(kslot_t *k):
    """The arguments set here since the last call, as Kernel.args holds them: [(index, value,
    whether the slot's plan has it already)], or None."""
    cdef kargs_t *ka = <kargs_t *>k.args
    cdef karg_t *got
    cdef int *where
    cdef int j, n = 0
    cdef hent_t *e
    cdef PyObject *obj
    if ka == NULL or ka.n_pending == 0:
        return None
    got = <karg_t *>malloc(ka.n * sizeof(karg_t))
    where = <int *>malloc(ka.n * sizeof(int))
    if got == NULL or where == NULL:
        free(got)
        free(where)
        raise MemoryError()
    try:
        pthread_mutex_lock(&tab_lock)
        slot_lock(ka)
        for j in range(ka.n):
            if ka.a[j].pending != P_NONE:
                got[n], where[n] = ka.a[j], j
                ka.a[j].pending, ka.a[j].in_plan = P_NONE, 0
                n += 1
        ka.n_pending = 0
        slot_unlock(ka)
        pthread_mutex_unlock(&tab_lock)
        out = []
        for j in range(n):
            if got[j].pending == P_VALUE:
                out.append((where[j], ("value", got[j].value[:got[j].size]), False))
            elif got[j].pending == P_LOCAL:
                out.append((where[j], ("local", got[j].size), False))
            elif got[j].handle == 0:
                out.append((where[j], ("mem", None), bool(got[j].in_plan)))
            else:
                obj = NULL
                unadopted = False
                pthread_mutex_lock(&tab_lock)
                e = tab_find(got[j].handle)
                if (e != NULL and e.kind == PYPLAT_KIND_MEM
                        and (<pyplat_handle *>got[j].handle).serial == got[j].serial):
                    if e.obj != NULL:
                        obj = e.obj
                        Py_INCREF(<object>obj)
                    else:                       # made natively, never adopted (native_buffers.pxi)
                        unadopted = e.flags & HF_NATIVE and not e.flags & HF_ADOPTED
                pthread_mutex_unlock(&tab_lock)
                if unadopted and adopt_missing is not None:
                    adopted = adopt_missing(got[j].handle)
                    if adopted is not None:
                        obj = <PyObject *>adopted
                        Py_INCREF(adopted)
                if obj == NULL:
                    out.append((where[j], ("mem", ReleasedBuffer()), bool(got[j].in_plan)))
                else:
                    out.append((where[j], ("mem", <object>obj), bool(got[j].in_plan)))
                    Py_XDECREF(obj)
        return out
    finally:
        free(got)
        free(where)


cdef void note_python_set(kslot_t *k, int index, size_t handle, int is_mem):
    """The Python entry set argument `index` (a buffer: its handle, 0 for NULL)."""
    cdef kargs_t *ka = <kargs_t *>k.args
    cdef hent_t *e
    cdef nmem_t *m = NULL
    cdef nmem_t *old = NULL
    if ka == NULL or not 0 <= index < ka.n:
        return
    pthread_mutex_lock(&tab_lock)
    slot_lock(ka)
    mark_set(ka, &ka.a[index])
    if is_mem:
        if handle != 0:
            e = tab_find(handle)
            m = <nmem_t *>e.ptr if e != NULL and e.kind == PYPLAT_KIND_MEM else NULL
        if handle == 0 or m != NULL:
            old = set_mem_cur(&ka.a[index], m)
            # (its handle too, as a native set records it: foreign_set_locked finds the buffer
            # by it when another argument becomes foreign)
            ka.a[index].handle = handle
            ka.a[index].serial = (<pyplat_handle *>handle).serial if handle else 0
        else:                         # (no native record: a native set never matches it)
            old, ka.a[index].mem_cur, ka.a[index].mem_known = ka.a[index].mem_cur, NULL, 0
    slot_unlock(ka)
    pthread_mutex_unlock(&tab_lock)
    if old != NULL:
        nmem_decref(old)


cdef void note_prepared(kslot_t *k):
    cdef kargs_t *ka = <kargs_t *>k.args
    if ka != NULL:
        pthread_mutex_lock(&tab_lock)
        slot_lock(ka)
        ka.prepared = 1
        slot_unlock(ka)
        pthread_mutex_unlock(&tab_lock)


cdef void learn_work_group_info(kslot_t *k, size_t device, uint64_t wg_size, compile_size,
                                uint64_t multiple, uint64_t local_mem, uint64_t private_mem):
    """The Python entry's answers for `device` (a handle; 0: NULL for a program of one device),
    which the native entry gives from now on -- for the kernels of its name made natively later
    too (their layout learns them: native_kernels.pxi)."""
    cdef kargs_t *ka = <kargs_t *>k.args
    cdef uint64_t compile_wg[3]
    cdef int d
    if ka == NULL:
        return
    for d in range(3):
        compile_wg[d] = compile_size[d]
    pthread_mutex_lock(&tab_lock)
    wg_learn_locked(ka, device, wg_size, compile_wg, multiple, local_mem, private_mem)
    wg_learn_locked(layout_of(ka), device, wg_size, compile_wg, multiple, local_mem, private_mem)
    pthread_mutex_unlock(&tab_lock)


cdef void wg_learn_locked(kargs_t *ka, size_t device, uint64_t wg_size, uint64_t *compile_wg,
                          uint64_t multiple, uint64_t local_mem, uint64_t private_mem) noexcept nogil:
    """(tab_lock) One device's answers into an argument record (NULL: none)."""
    cdef int j
    if ka == NULL:
        return
    for j in range(ka.n_wg):
        if ka.wg[j].handle == device:
            return
    if ka.n_wg < MAX_WG_DEVICES:
        j = ka.n_wg
        ka.wg[j].handle = device
        ka.wg[j].serial = (<pyplat_handle *>device).serial if device else 0
        ka.wg[j].wg_size, ka.wg[j].multiple = wg_size, multiple
        memcpy(ka.compile_wg, compile_wg, sizeof(ka.compile_wg))
        ka.local_mem, ka.private_mem = local_mem, private_mem
        pp_int_store_release(&ka.n_wg, j + 1)     # (its fields first: n_kernel_wg_info reads unlocked)


cdef int32_t n_kernel_wg_info(size_t kernel, size_t device, uint32_t param, uint64_t size, size_t value,
                              size_t size_ret) noexcept nogil:
    return checked_first(kernel_wg_info(kernel, device, param, size, value, size_ret), "clGetKernelWorkGroupInfo",
                         kernel, PYPLAT_KIND_KERNEL, CL_INVALID_KERNEL)


cdef int32_t kernel_wg_info(size_t kernel, size_t device, uint32_t param, uint64_t size, size_t value,
                            size_t size_ret) noexcept nogil:
    """clGetKernelWorkGroupInfo of the per-kernel constants, for a device the Python entry
    answered for before (learn_work_group_info). Other queries, devices and short buffers: the
    Python entry."""
    cdef pyplat_handle *h
    cdef kslot_t *k
    cdef kargs_t *ka
    cdef uint64_t answer[3]
    cdef uint64_t need = 8
    cdef int j, found = 0
    if (param < KERNEL_WORK_GROUP_SIZE or param > KERNEL_PRIVATE_MEM_SIZE) or (value != 0 and size < 8):
        return PYPLAT_DEFER
    k = <kslot_t *>handle_native(kernel, PYPLAT_KIND_KERNEL)    # (no probe: native_table_reads.pxi)
    if k != NULL and k.args != NULL:
        ka = <kargs_t *>k.args
        for j in range(pp_int_load_acquire(&ka.n_wg)):            # (records only added)
            if ka.wg[j].handle == device:
                if device != 0:          # the handle's own memory (its serial is read there
                    h = <pyplat_handle *>device   # anyway): no second table read
                    if h.magic != PYPLAT_HANDLE_MAGIC or h.kind != PYPLAT_KIND_DEVICE or h.serial != ka.wg[j].serial:
                        break
                found = 1
                if param == KERNEL_WORK_GROUP_SIZE:
                    answer[0] = ka.wg[j].wg_size
                elif param == KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
                    answer[0] = ka.wg[j].multiple
                elif param == KERNEL_PRIVATE_MEM_SIZE:
                    answer[0] = ka.private_mem
                elif param == KERNEL_LOCAL_MEM_SIZE:
                    answer[0] = ka.local_mem
                    found = not ka.has_local      # (then it depends on the __local arguments set)
                else:
                    memcpy(answer, ka.compile_wg, sizeof(answer))
                    need = 24
                break
    if not found or (value != 0 and size < need):
        return PYPLAT_DEFER
    if value != 0:
        memcpy(<void *>value, answer, need)
    if size_ret != 0:
        (<size_t *>size_ret)[0] = need
    return CL_SUCCESS_


cdef int32_t n_kernel_info(size_t kernel, uint32_t param, uint64_t size, size_t value,
                           size_t size_ret) noexcept nogil:
    return checked_first(kernel_info(kernel, param, size, value, size_ret), "clGetKernelInfo", kernel,
                         PYPLAT_KIND_KERNEL, CL_INVALID_KERNEL)


cdef int32_t kernel_info(size_t kernel, uint32_t param, uint64_t size, size_t value,
                         size_t size_ret) noexcept nogil:
    """clGetKernelInfo(CL_KERNEL_NUM_ARGS); the rest is the Python entry's."""
    cdef kslot_t *k
    cdef int n = -1
    if param != KERNEL_NUM_ARGS or (value != 0 and size < 4):
        return PYPLAT_DEFER
    k = <kslot_t *>handle_native(kernel, PYPLAT_KIND_KERNEL)    # (no probe: native_table_reads.pxi)
    if k != NULL and k.args != NULL:
        n = (<kargs_t *>k.args).n
    if n < 0:
        return PYPLAT_DEFER
    if value != 0:
        (<uint32_t *>value)[0] = n
    if size_ret != 0:
        (<size_t *>size_ret)[0] = 4
    return CL_SUCCESS_
