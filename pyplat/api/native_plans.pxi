# Part of pyplat/api/_native.pyx (included there, after native_kernel_args.pxi).
# ---------------------------------------------------------------------------------------------
# Plans derived natively for buffers their root plan does not hold (docs/runtime.md, "Fast
# path", "Arguments set natively").
#
# A root plan's hold (or its being armed) keeps the program and the buffers it was built with
# alive for every launch of the plans derived from it. A buffer set natively that the root does
# not hold -- a *foreign* buffer -- is kept by its own record's hold instead, as the native
# buffer commands keep theirs: each launch of the derived plan uses the hold of every foreign
# buffer (cmd_t.mem_holds, done by the runtime when the launch finished). Only buffers made
# natively and not adopted qualify: their hold is pinned (their record owns their bytes), so a
# use needs no Python, and a native release unpins it only when no launch uses it. A buffer
# released (or adopted) since it was set is seen at the launch (pinned_use fails): the launch
# defers, and Python reports or rebuilds (take_args: a foreign argument is never in_plan, so the
# Python side drops the derived plan and builds one of its own, holding what it needs).
#
# The slot's record (kargs_t) keeps the foreign buffers of one plan: foreign_plan, which is the
# slot's current plan or a stale pointer never compared with a live plan (every other change of
# the slot's plan clears it: foreign_clear_locked).
# ---------------------------------------------------------------------------------------------

DEF MAX_FOREIGN = 4               # the length of cmd_t.mem_holds (runtime _sched.pxd)


cdef inline int foreign_candidate_locked(size_t handle, nmem_t *m) noexcept nogil:
    """(tab_lock) Whether buffer m (handle's record) may be kept by its own hold: made natively,
    neither adopted nor being adopted."""
    cdef hent_t *me
    if m == NULL or handle <= 1:
        return 0
    me = tab_find(handle)
    return me != NULL and me.ptr == <void *>m and me.flags == HF_NATIVE


cdef inline int root_holds(kargs_t *ka, nmem_t *m) noexcept nogil:
    """(tab_lock) Whether the slot's root plan holds buffer m."""
    cdef int j
    for j in range(ka.n_root_mems):
        if ka.root_mems[j] == m:
            return 1
    return 0


cdef void foreign_clear_locked(kargs_t *ka) noexcept nogil:
    """(tab_lock) The slot's plan changed otherwise than here: no plan has foreign buffers."""
    cdef int j
    for j in range(ka.n_foreign):
        nmem_decref(ka.foreign[j])        # (frees memory only: no lock is taken)
    ka.n_foreign = 0
    ka.foreign_plan = NULL


cdef int foreign_set_locked(kargs_t *ka, plan_t *c, uint32_t index, nmem_t *m) noexcept nogil:
    """(tab_lock) Plan c, derived with buffer argument `index` set to m, becomes the slot's:
    its foreign buffers (those its root does not hold: m, or ones the arguments kept from the
    plan before) are recorded. 0 (nothing changed) if there are too many."""
    cdef nmem_t *found[MAX_FOREIGN]
    cdef nmem_t *b
    cdef int j, i, n = 0
    for j in range(ka.n):
        b = m if <uint32_t>j == index else ka.a[j].mem_cur
        if ka.a[j].kind != KA_MEM or b == NULL or root_holds(ka, b):
            continue
        for i in range(n):
            if found[i] == b:
                break
        else:
            if n == MAX_FOREIGN:
                return 0
            found[n] = b
            n += 1
    for i in range(n):
        pp_add(&found[i].refs, 1)
    foreign_clear_locked(ka)
    for i in range(n):
        ka.foreign[i] = found[i]
    ka.n_foreign = n
    ka.foreign_plan = c if n else NULL
    return 1


cdef inline void foreign_follow_locked(kargs_t *ka, plan_t *p, plan_t *c) noexcept nogil:
    """(tab_lock) Plan c, derived from p with a by-value argument changed, replaces p as the
    slot's plan: it uses the same buffers."""
    if ka != NULL and ka.foreign_plan == p and p != NULL:
        ka.foreign_plan = c


cdef int foreign_take_locked(kslot_t *k, plan_t *p, nmem_t **out) noexcept nogil:
    """(tab_lock) For a launch of p, the slot's plan: references to its foreign buffers in out;
    how many (0: the root holds all of p's)."""
    cdef kargs_t *ka = <kargs_t *>k.args
    cdef int j
    if ka == NULL or ka.n_foreign == 0 or ka.foreign_plan != p:
        return 0
    for j in range(ka.n_foreign):
        out[j] = ka.foreign[j]
        pp_add(&out[j].refs, 1)
    return ka.n_foreign


cdef inline int pinned_use(hold_t *h) noexcept nogil:
    """One more user of a pinned hold (a buffer made natively, neither released nor adopted);
    0 if it is not pinned."""
    cdef int ok
    pthread_mutex_lock(h.lock)
    ok = h.pinned
    if ok:
        h.users += 1
    pthread_mutex_unlock(h.lock)
    return ok


cdef int foreign_use(nmem_t **ms, int n) noexcept nogil:
    """A launch uses the holds of its foreign buffers: 1, or 0 (none used) if one of them was
    released or adopted since it was set."""
    cdef int j, i
    for j in range(n):
        if not pinned_use(&ms[j].hold):
            for i in range(j):
                hold_done(&ms[i].hold)
            return 0
    return 1


cdef inline void foreign_attach(cmd_t *c, nmem_t **ms, int n) noexcept nogil:
    """The launch's command is done with the holds when it finished (the runtime's commands.pxi)."""
    cdef int j
    for j in range(n):
        c.mem_holds[j] = &ms[j].hold


cdef void foreign_unuse(nmem_t **ms, int n) noexcept nogil:
    cdef int j
    for j in range(n):
        hold_done(&ms[j].hold)


cdef void foreign_drop(nmem_t **ms, int n) noexcept nogil:
    """The references foreign_take_locked took."""
    cdef int j
    for j in range(n):
        nmem_decref(ms[j])
