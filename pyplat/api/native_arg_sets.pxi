# Part of pyplat/api/_native.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# clSetKernelArg without tab_lock (issue 15): the sets programs repeat in loops answered under
# the kernel slot's own lock alone (native_kernel_args.pxi, "Locks"). Under tab_lock that call
# took the mutex every thread's creations, releases and launches take; the slot's lock is one
# exchange on the kernel's own record.
#
# Answered here (the rest, and any doubt, goes to n_setarg's pass under tab_lock, which decides
# exactly as before):
# - a by-value argument of the right size: the value the slot's plan has already, or a new one
#   written into a derived plan only the slot holds (value_in_place); without a plan, kept
#   pending when the set cannot be the one that completes a kernel's first arguments;
# - the buffer (or NULL) the argument holds already (mem_cur): with a plan, nothing changes;
#   without, pending again; another buffer of the kernel's context, without a plan, pending (with
#   a plan, the foreign-buffer rules and the plan's swap are the locked pass's);
# - a __local size, without a plan, under the same condition as a value.
# What the slot's plan is never changes here, so holders of tab_lock that only compare the
# pointer need not take the slot's lock; those that take a reference to it (a launch, the
# Python side's derived plan) or change it do, since value_in_place writes a plan nobody else
# holds.
# ---------------------------------------------------------------------------------------------

cdef extern from *:
    """
    #include <sched.h>
    /* A spin lock of one int: held for a few stores at most, so waiting spins (pausing), and
       yields now and then in case the holder was preempted. */
    static inline void pp_spin_lock(int *lock) {
        int spins = 0;
        while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE)) {
            while (__atomic_load_n(lock, __ATOMIC_RELAXED)) {
                if (++spins < 128) {
    #if defined(__x86_64__) || defined(__i386__)
                    __builtin_ia32_pause();
    #endif
                } else {
                    sched_yield();
                    spins = 0;
                }
            }
        }
    }
    static inline void pp_spin_unlock(int *lock) { __atomic_store_n(lock, 0, __ATOMIC_RELEASE); }
    """
    void pp_spin_lock(int *lock) nogil
    void pp_spin_unlock(int *lock) nogil


cdef inline void slot_lock(kargs_t *ka) noexcept nogil:
    """The slot's lock (no record: nothing to guard). Inside tab_lock, or alone."""
    if ka != NULL:
        pp_spin_lock(&ka.lock)


cdef inline void slot_unlock(kargs_t *ka) noexcept nogil:
    if ka != NULL:
        pp_spin_unlock(&ka.lock)


cdef int32_t setarg_unlocked(size_t kernel, kslot_t *k, kargs_t *ka, uint32_t index, uint64_t size,
                             size_t value) noexcept nogil:
    """clSetKernelArg's repeated cases under the slot's lock alone (see above; index checked by
    the caller, whose reference to the kernel keeps k): CL_SUCCESS, or PYPLAT_DEFER, having
    changed nothing, for the locked pass."""
    cdef karg_t *a = &ka.a[index]
    cdef tab_read_t r
    cdef tab_read_t kr
    cdef nmem_t *m = NULL
    cdef nmem_t *old = NULL
    cdef nmem_t *last
    cdef size_t handle = 0, context = 0
    cdef int same_context = 0
    cdef int32_t res = PYPLAT_DEFER
    cdef int may_complete
    if a.kind == KA_MEM:
        if size != 8:
            return PYPLAT_DEFER
        handle = (<size_t *>value)[0] if value != 0 else 0
        last = <nmem_t *>pp_ptr_load(<void **>&a.mem_cur)
        if (handle != 0 and last != NULL and handle == pp_word_load(&a.handle)
                and handle_native(handle, PYPLAT_KIND_MEM) == <void *>last):
            # the buffer set last, its handle still live (a handle the argument held: its memory
            # is ours to read even once released, so no table probe; decided under the lock)
            m = last
        elif handle != 0:             # (a plain argument: any pointer may come, so no handle_native)
            if not tab_read(handle, &r) or r.kind != PYPLAT_KIND_MEM or r.ptr == NULL:
                return PYPLAT_DEFER
            m = <nmem_t *>r.ptr
            # a buffer the argument does not hold (a hint here, decided under the lock): the
            # kernel's context to compare, kept once read (it never changes), read before the
            # lock (tab_read may take tab_lock)
            if pp_ptr_load(<void **>&a.mem_cur) != <void *>m:
                context = pp_word_load(&ka.context)
                if context == 0 and tab_read(kernel, &kr) and kr.kind == PYPLAT_KIND_KERNEL and kr.ptr == <void *>k:
                    context = kr.context
                same_context = context != 0 and context == r.context
    elif a.kind == KA_VALUE:
        if value == 0 or size != a.value_size:
            return PYPLAT_DEFER
    elif value != 0 or size == 0:     # (KA_LOCAL)
        return PYPLAT_DEFER
    slot_lock(ka)
    # (as n_setarg: a set that may complete the first arguments is the locked pass's)
    may_complete = ka.prepared or ka.unset - (0 if a.is_set else 1) > 0
    if a.kind == KA_VALUE:
        if k.plan != NULL:
            if value_in_place(k.plan, index, size, value):
                res = CL_SUCCESS_
        elif size <= MAX_NATIVE_VALUE and may_complete:
            memcpy(a.value, <void *>value, size)
            a.size = size
            set_pending(ka, a, P_VALUE)
            res = CL_SUCCESS_
    elif a.kind == KA_MEM:
        # the buffer the argument holds already: checked against the kernel's context when set
        if a.mem_known and a.mem_cur == m and k.plan != NULL:
            res = CL_SUCCESS_
        elif k.plan == NULL and may_complete and (
                (a.mem_known and a.mem_cur == m) or m == NULL or same_context):
            a.handle = handle
            a.serial = (<pyplat_handle *>handle).serial if handle else 0
            set_pending(ka, a, P_MEM)
            old = set_mem_cur(a, m)
            if same_context:
                ka.context = context
            res = CL_SUCCESS_
    elif k.plan == NULL and may_complete:
        a.size = size
        set_pending(ka, a, P_LOCAL)
        res = CL_SUCCESS_
    slot_unlock(ka)
    if old != NULL:
        nmem_decref(old)
    return res
