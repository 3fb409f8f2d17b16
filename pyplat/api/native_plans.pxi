# Part of pyplat/api/_native.pyx (included there, after native_kernel_args.pxi).
# ---------------------------------------------------------------------------------------------
# Plans derived natively for buffers their root plan does not hold, and first plans built
# natively (docs/runtime.md, "Fast path": "Arguments set natively", "Kernels made natively").
#
# A root plan's hold (or its being armed) keeps the program and the buffers it was built with
# alive for every launch of the plans derived from it. A buffer set natively that the root does
# not hold -- a *foreign* buffer -- is kept by its own record's hold instead, as the native
# buffer commands keep theirs: each launch of the derived plan uses the hold of every foreign
# buffer (cmd_t.mem_holds, done by the runtime when the launch finished). A swap to a foreign
# buffer is taken only for buffers whose hold is pinned (made natively: their record owns their
# bytes; or held by the application and used natively before: hold_memory in
# native_commands.pxi), so a use needs no Python; a release unpins it (natively only when no
# launch uses it; the application's last release of an adopted one makes it an ordinary hold
# for the launches pending: let_go_memory). Each launch checks the foreign buffers' handles (live, counting an
# application reference) and uses their holds; a buffer released since it was set makes the
# launch defer, and Python reports it (take_args: a foreign argument is never in_plan, so the
# Python side drops the derived plan and builds one of its own, holding what it needs).
#
# The slot's record (kargs_t) keeps the foreign buffers of one plan: foreign_plan, which is the
# slot's current plan or a stale pointer never compared with a live plan (every other change of
# the slot's plan clears it: foreign_clear_locked).
# ---------------------------------------------------------------------------------------------

from pyplat.runtime._sched cimport pp_aligned, pthread_mutex_init as _mutex_init

DEF MAX_FOREIGN = 4               # the length of cmd_t.mem_holds (runtime _sched.pxd)


cdef inline int foreign_candidate_locked(size_t handle, nmem_t *m) noexcept nogil:
    """(tab_lock) Whether buffer m (handle's record) may be kept by its own hold: not being
    adopted, its hold pinned (made natively, or the application holds it and a native command
    used it: hold_memory). An unpinned one lets go whenever its launches are done, so every
    later launch would cross into Python to take it again. (`pinned` read without m's lock:
    only a hint; hold_use at each launch decides.)"""
    cdef hent_t *me
    if m == NULL or handle <= 1:
        return 0
    me = tab_find(handle)
    return me != NULL and me.ptr == <void *>m and not me.flags & HF_ADOPTING and m.hold.pinned


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


cdef int foreign_set_locked(kargs_t *ka, plan_t *c, uint32_t index, nmem_t *m, size_t handle) noexcept nogil:
    """(tab_lock) Plan c, derived with buffer argument `index` set to m (handle's), becomes the
    slot's: its foreign buffers (those its root does not hold: m, or ones the arguments kept
    from the plan before) are recorded with their handles. 0 (nothing changed) if there are
    too many, or m's handle is not its live one."""
    cdef nmem_t *found[MAX_FOREIGN]
    cdef size_t handles[MAX_FOREIGN]
    cdef nmem_t *b
    cdef hent_t *me
    cdef size_t h
    cdef int j, i, n = 0
    for j in range(ka.n):
        b = m if <uint32_t>j == index else ka.a[j].mem_cur
        h = handle if <uint32_t>j == index else ka.a[j].handle
        if ka.a[j].kind != KA_MEM or b == NULL or root_holds(ka, b):
            continue
        for i in range(n):
            if found[i] == b:
                break
        else:
            if n == MAX_FOREIGN:
                return 0
            if <uint32_t>j == index:
                me = tab_find(h)
                if me == NULL or me.ptr != <void *>b:
                    return 0
            # (another argument's buffer may have been released since it was set: pyopencl
            # releases a temporary before it sets the next call's arguments one by one. It is
            # recorded all the same: the launch's foreign_take_locked finds its handle gone and
            # defers, unless the argument was set again meanwhile.)
            found[n], handles[n] = b, h
            n += 1
    for i in range(n):
        pp_add(&found[i].refs, 1)
    foreign_clear_locked(ka)
    for i in range(n):
        ka.foreign[i], ka.foreign_handle[i] = found[i], handles[i]
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
    how many (0: the root holds all of p's); -1 if one of them was released (its handle is
    gone, or counts no application reference: a buffer counted by Python alone is not one)."""
    cdef kargs_t *ka = <kargs_t *>k.args
    cdef hent_t *me
    cdef int j
    if ka == NULL or ka.n_foreign == 0 or ka.foreign_plan != p:
        return 0
    for j in range(ka.n_foreign):
        me = tab_find(ka.foreign_handle[j])
        if me == NULL or me.ptr != <void *>ka.foreign[j] or me.api_refs <= 0:
            return -1
    for j in range(ka.n_foreign):
        out[j] = ka.foreign[j]
        pp_add(&out[j].refs, 1)
    return ka.n_foreign


cdef int foreign_use(nmem_t **ms, int n) noexcept nogil:
    """A launch uses the holds of its foreign buffers: 1, or 0 (none used) if one is not held
    (a buffer made natively and released since, or one Python adopted whose hold was dropped:
    prime_native_kernel takes it again)."""
    cdef int j, i
    for j in range(n):
        if not hold_use(&ms[j].hold):
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


# ---------------------------------------------------------------------------------------------
# First plans built natively (docs/runtime.md, "Kernels made natively"). A kernel made natively
# and never adopted gets its first plan here when its last argument is set natively: the
# argument block from a template of its name's plans (ptmpl_t: learnt from the first plan
# Python built for a kernel of that name, KernelSlot.set_plan), the values set natively, the
# accesses as swap_buffer records them, the kernel's shared sizes (KernelSizes). Its objects are
# kept natively: every buffer by its record's hold, per launch (the plan's root holds none: all
# its buffers are foreign, above), the program by the kernel's count on its entry. The plan is
# armed (launches need no hold) and is the slot's `native_root`, until:
# - the kernel is adopted: hand_over_native_plan gives it a Python owner (a LaunchPlan whose
#   `retained` is the program) and disarms it, so launches pending get the hold's references,
#   and the slot forgets it (the core Kernel builds and arms its own first plan at once);
# - the kernel is released natively: with no launch pending it is disarmed and freed with the
#   slot; with launches pending the slot becomes an *orphan* (its handle gone) that keeps the
#   program's count until they finished: reclaim_orphans_locked gives it back (natively: the
#   next clCreateKernel, native kernel release or clFinish; Python: settle_native_plans, before
#   a program's release from the Python entry or a rebuild, which then also give pending
#   launches a Python owner instead). The native release of a program with orphans defers to
#   Python, so a count left to an orphan is never the program's last one.
# ---------------------------------------------------------------------------------------------

cdef struct ptmpl_t:              # what the plans of one kernel name share
    plan_t *source                # a reference: the first root plan Python built for one


cdef kslot_t *orphans = NULL      # (tab_lock) released kernels whose native plan has launches
                                  # pending, oldest first, linked through kargs_t.orphan_next
cdef kslot_t *orphans_tail = NULL


cdef inline void orphan_unlink(kslot_t **link, kslot_t *prev, kslot_t *k) noexcept nogil:
    """(tab_lock) Take orphan k (the one *link points to; prev: the one before, or NULL) off."""
    global orphans_tail
    link[0] = <kslot_t *>(<kargs_t *>k.args).orphan_next
    if orphans_tail == k:
        orphans_tail = prev


cdef void tmpl_free(void *raw) noexcept nogil:
    cdef ptmpl_t *t = <ptmpl_t *>raw
    if t != NULL:
        plan_decref(t.source)
        free(t)


cdef void learn_plan_template(kslot_t *k, plan_t *p) noexcept nogil:
    """A root plan Python built for a kernel of a known layout: kept in the layout (the first
    one stays) as the template of the native first plans of later kernels of the name (its
    code, block layout, value sizes, local memory, context, name and KernelSizes)."""
    cdef kargs_t *ka = <kargs_t *>k.args
    cdef ptmpl_t *t
    if (ka == NULL or ka.proto == NULL or p == NULL or p.parent != NULL or p.n_cells or p.acc_unknown
            or p.n_args != ka.n or ka.has_local or (<kproto_t *>ka.proto).tmpl != NULL):
        return
    t = <ptmpl_t *>calloc(1, sizeof(ptmpl_t))
    if t == NULL:
        return
    plan_incref(p)
    t.source = p
    pthread_mutex_lock(&tab_lock)
    if (<kproto_t *>ka.proto).tmpl == NULL:
        (<kproto_t *>ka.proto).tmpl, t = t, NULL
    pthread_mutex_unlock(&tab_lock)
    tmpl_free(t)


cdef inline int first_plan_wanted(kargs_t *ka) noexcept nogil:
    """(tab_lock) Whether the set completing a kernel's arguments may build its first plan here:
    a kernel made natively, not adopted, of a name with a template."""
    return (ka.proto != NULL and (<kproto_t *>ka.proto).tmpl != NULL and ka.program != 0
            and not ka.has_local and ka.native_root == NULL)


cdef int first_plan_buffers_ok(kargs_t *ka, uint32_t index, size_t value, size_t size) noexcept nogil:
    """(tab_lock) Whether every buffer of the first plan that setting argument `index` (to
    value/size) would complete can be kept by its own hold (foreign_candidate_locked). If one
    cannot (its hold not pinned yet: an ordinary one lets go whenever its launches are done),
    the set is left to Python, which adopts the kernel and arms its plan: its launches then stay
    native instead of each crossing into Python to take that hold again."""
    cdef karg_t *a
    cdef hent_t *me
    cdef size_t handle
    cdef uint32_t j
    for j in range(<uint32_t>ka.n):
        a = &ka.a[j]
        if a.kind != KA_MEM:
            continue
        if j == index:
            handle = (<size_t *>value)[0] if value != 0 and size == 8 else 0
            if handle == 0:
                continue
            me = tab_find(handle)
            if me == NULL or me.kind != PYPLAT_KIND_MEM or not foreign_candidate_locked(handle, <nmem_t *>me.ptr):
                return 0
        elif a.mem_cur != NULL and not foreign_candidate_locked(a.handle, a.mem_cur):
            return 0
    return 1


cdef plan_t *plan_from_template(ptmpl_t *t) noexcept nogil:
    """(tab_lock) A new root plan laid out as t's source (its block copied, argv pointing into
    the copy; values are written by the caller), no accesses yet; NULL when out of memory."""
    cdef plan_t *src = t.source
    cdef plan_t *p = <plan_t *>calloc(1, sizeof(plan_t))
    cdef uint64_t *argv
    cdef int j
    if p == NULL:
        return NULL
    p.args = <char *>pp_aligned(src.args_size)
    p.value_sizes = <uint32_t *>malloc(max(1, src.n_args) * sizeof(uint32_t))
    p.cells = <size_t *>malloc(sizeof(size_t))
    p.acc = <access_t *>malloc((src.n_args + 1) * sizeof(access_t))
    if p.args == NULL or p.value_sizes == NULL or p.cells == NULL or p.acc == NULL:
        free(p.args)
        free(p.value_sizes)
        free(p.cells)
        free(p.acc)
        free(p)
        return NULL
    _mutex_init(&p.lock, NULL)
    hold_init(&p.launches, &p.lock)
    p.hold = &p.launches
    p.refs = 1
    memcpy(p.args, src.args, src.args_size)
    argv = <uint64_t *>p.args
    for j in range(src.n_args):
        argv[j] = argv[j] - <uint64_t>src.args + <uint64_t>p.args
    memcpy(p.value_sizes, src.value_sizes, max(1, src.n_args) * sizeof(uint32_t))
    p.fn, p.args_size, p.n_args, p.scratch_size, p.context = src.fn, src.args_size, src.n_args, src.scratch_size, src.context
    memcpy(p.name, src.name, sizeof(p.name))
    p.sizes = src.sizes
    if p.sizes != NULL:
        pp_add(&p.sizes.refs, 1)
    return p


cdef void native_first_plan(kslot_t *k) noexcept nogil:
    """The set of k's last argument was answered natively: build its first plan (see above),
    or nothing (the first launch then defers, and Python adopts the kernel and builds one)."""
    cdef kargs_t *ka = <kargs_t *>k.args
    cdef ptmpl_t *t
    cdef plan_t *p = NULL
    cdef karg_t *a
    cdef hent_t *me
    cdef uint64_t *argv
    cdef nmem_t *b
    cdef uint64_t address
    cdef int j, i, ok = 1
    pthread_mutex_lock(&tab_lock)
    slot_lock(ka)                          # (native_arg_sets.pxi)
    if ka == NULL or not first_plan_wanted(ka) or ka.prepared or ka.unset or k.plan != NULL:
        slot_unlock(ka)
        pthread_mutex_unlock(&tab_lock)
        return
    t = <ptmpl_t *>(<kproto_t *>ka.proto).tmpl
    if t.source.n_args == ka.n:
        p = plan_from_template(t)
    if p == NULL:
        slot_unlock(ka)
        pthread_mutex_unlock(&tab_lock)
        return
    argv = <uint64_t *>p.args
    for j in range(ka.n):
        a = &ka.a[j]
        if a.kind == KA_VALUE and a.pending == P_VALUE and a.size == p.value_sizes[j]:
            memcpy(<void *>argv[j], a.value, a.size)
        elif a.kind == KA_MEM and a.pending == P_MEM:
            address = 0
            if a.handle != 0:
                me = tab_find(a.handle)
                if (me == NULL or me.kind != PYPLAT_KIND_MEM or me.ptr != <void *>a.mem_cur or a.mem_cur == NULL
                        or (<pyplat_handle *>a.handle).serial != a.serial or me.api_refs <= 0
                        or not foreign_candidate_locked(a.handle, a.mem_cur)):
                    # (a buffer Python adopted has no hold a native launch could use: every
                    # launch would cross into Python; the kernel is adopted instead, whose
                    # Python plan holds it, and its launches stay native)
                    ok = 0
                    break
                address = <uint64_t>a.mem_cur.address
            memcpy(<void *>argv[j], &address, 8)
        else:
            ok = 0
            break
    if ok:                        # the accesses, as swap_buffer records them
        for j in range(ka.n):
            b = ka.a[j].mem_cur
            if ka.a[j].kind != KA_MEM or b == NULL:
                continue
            for i in range(p.n_acc):
                if p.acc[i].key == b.root:
                    p.acc[i].writes = p.acc[i].writes or ka.a[j].writes
                    break
            else:
                p.acc[p.n_acc].key, p.acc[p.n_acc].writes = b.root, ka.a[j].writes
                p.n_acc += 1
        if ka.stdout_key:
            p.acc[p.n_acc].key, p.acc[p.n_acc].writes = ka.stdout_key, 1
            p.n_acc += 1
        ka.n_root_mems = 0                 # (a kernel never planned: none; all its buffers foreign)
        ok = foreign_set_locked(ka, p, <uint32_t>ka.n, NULL, 0)
    if ok:
        p.launches.armed = 1               # (no launch can see it yet: no lock needed)
        k.plan = p                         # the creation's reference
        plan_incref(p)
        ka.root = p
        plan_incref(p)
        ka.native_root = p
        ka.prepared = 1
        p = NULL
    slot_unlock(ka)
    pthread_mutex_unlock(&tab_lock)
    if p != NULL:
        plan_decref(p)


cdef int root_idle_disarm(plan_t *root) noexcept nogil:
    """No launch of the root (or of plans derived from it) pending: disarmed, 1; else 0."""
    cdef int idle
    pthread_mutex_lock(&root.lock)
    idle = root.launches.users == 0
    if idle:
        root.launches.armed = 0
    pthread_mutex_unlock(&root.lock)
    return idle


cdef int orphan_locked(kslot_t *k) noexcept nogil:
    """(tab_lock) The last native release of kernel k, whose native plan has launches pending:
    the slot (the entry's reference) becomes an orphan keeping the program's count. 1 if so."""
    global orphans, orphans_tail
    cdef kargs_t *ka = <kargs_t *>k.args
    cdef hent_t *pe
    if ka == NULL or ka.native_root == NULL or root_idle_disarm(ka.native_root):
        return 0
    pe = tab_find(ka.program)
    if pe == NULL or pe.ptr == NULL:
        return 0
    (<nprog_t *>pe.ptr).orphans += 1
    ka.orphan_next = NULL                 # (appended: launches mostly finish in order)
    if orphans_tail == NULL:
        orphans = k
    else:
        (<kargs_t *>orphans_tail.args).orphan_next = k
    orphans_tail = k
    return 1


cdef kslot_t *reclaim_orphans_locked(int full) noexcept nogil:
    """(tab_lock) Orphans whose launches finished give their program's count back (one that is
    not the program's last); returned as a list (through orphan_next) to kslot_decref after
    the lock. Not `full`: from the oldest, up to the first still running (cheap on every
    native clCreateKernel and kernel release); `full`: all of them."""
    cdef kslot_t *k = orphans
    cdef kslot_t *prev = NULL
    cdef kslot_t *nxt
    cdef kslot_t *done = NULL
    cdef kslot_t **link = &orphans
    cdef kargs_t *ka
    cdef hent_t *pe
    while k != NULL:
        ka = <kargs_t *>k.args
        nxt = <kslot_t *>ka.orphan_next
        pe = tab_find(ka.program)
        if pe != NULL and pe.ptr != NULL and pe.api_refs >= 2 and root_idle_disarm(ka.native_root):
            pe.api_refs -= 1
            (<nprog_t *>pe.ptr).native_kernels -= 1
            (<nprog_t *>pe.ptr).orphans -= 1
            orphan_unlink(link, prev, k)
            ka.orphan_next, done = <void *>done, k
        elif not full:
            break
        else:
            link, prev = <kslot_t **>&ka.orphan_next, k
        k = nxt
    return done


cdef void free_reclaimed(kslot_t *done) noexcept nogil:
    cdef kslot_t *nxt
    while done != NULL:
        nxt = <kslot_t *>(<kargs_t *>done.args).orphan_next
        kslot_decref(done)
        done = nxt


cdef void reclaim_orphans(int full) noexcept nogil:
    cdef kslot_t *done
    if orphans == NULL:           # (a racy peek: a later call sees what this one missed)
        return
    pthread_mutex_lock(&tab_lock)
    done = reclaim_orphans_locked(full)
    pthread_mutex_unlock(&tab_lock)
    free_reclaimed(done)


cdef LaunchPlan python_owner(plan_t *root, program):
    """A LaunchPlan for a native first plan: its objects the program (its buffers are kept per
    launch by their own holds), disarmed so that launches pending hold them."""
    cdef LaunchPlan w = LaunchPlan.__new__(LaunchPlan)
    plan_incref(root)
    w.p = root
    w.retained, w.code, w.context, w.scratch_size = Retained((program,)), program.result, program.context, root.scratch_size
    w.disarm()
    return w


cdef void hand_over_native_plan(kslot_t *k, program, kernel) except *:
    """The kernel was adopted: its native first plan, if any, gets a Python owner, and the slot
    forgets it and the plans derived from it; the core Kernel builds its own first plan now, as
    Kernel.prepare_plan does when the last argument is set (armed: its launches stay native)."""
    cdef kargs_t *ka = <kargs_t *>k.args
    cdef plan_t *root
    cdef plan_t *cur
    cdef plan_t *old_root
    if ka == NULL:
        return
    pthread_mutex_lock(&tab_lock)
    slot_lock(ka)                          # (native_arg_sets.pxi)
    root, ka.native_root = ka.native_root, NULL
    cur = old_root = NULL
    if root != NULL:
        cur, k.plan = k.plan, NULL
        if cur != NULL:
            pend_plan_values(ka, cur)     # values set natively since: the core Kernel takes them
        old_root, ka.root = ka.root, NULL
        foreign_clear_locked(ka)
        ka.prepared = 0
    slot_unlock(ka)
    pthread_mutex_unlock(&tab_lock)
    if root == NULL:
        return
    python_owner(root, program)
    kernel.prepare_plan()
    if cur != NULL:
        plan_decref(cur)
    if old_root != NULL:
        plan_decref(old_root)
    plan_decref(root)


def settle_native_plans(size_t program):
    """Before a program's release by the Python entry, or a rebuild (GIL held): orphans of it
    whose launches finished give its count back; those with launches pending get a Python owner
    (the hold keeps the program) and give it back too."""
    cdef kslot_t *done
    cdef kslot_t *k
    cdef kslot_t *prev = NULL
    cdef kslot_t *busy = NULL
    cdef kslot_t **link
    cdef kargs_t *ka
    cdef hent_t *pe
    cdef PyObject *obj = NULL
    pthread_mutex_lock(&tab_lock)
    done = reclaim_orphans_locked(1)
    pe = tab_find(program)
    if pe != NULL and pe.obj != NULL and pe.ptr != NULL and (<nprog_t *>pe.ptr).orphans > 0:
        obj = pe.obj
        Py_INCREF(<object>obj)
        link, k = &orphans, orphans
        while k != NULL:                      # this program's orphans move to `busy`
            ka = <kargs_t *>k.args
            if ka.program == program:
                orphan_unlink(link, prev, k)
                ka.orphan_next, busy = <void *>busy, k
                (<nprog_t *>pe.ptr).orphans -= 1
                (<nprog_t *>pe.ptr).native_kernels -= 1
            else:
                link, prev = <kslot_t **>&ka.orphan_next, k
            k = <kslot_t *>link[0]
    pthread_mutex_unlock(&tab_lock)
    free_reclaimed(done)
    if obj == NULL:
        return
    prog = <object>obj
    Py_XDECREF(obj)
    while busy != NULL:
        k = busy
        busy = <kslot_t *>(<kargs_t *>k.args).orphan_next
        python_owner((<kargs_t *>k.args).native_root, prog)
        if api_release(program) == 2:         # (native_refs.pxi)
            prog.release()
        kslot_decref(k)


cdef inline int program_has_orphans_locked(hent_t *e) noexcept nogil:
    return e.kind == PYPLAT_KIND_PROGRAM and e.ptr != NULL and (<nprog_t *>e.ptr).orphans > 0


def prime_native_kernel(size_t kernel):
    """A native launch of a kernel made natively deferred (GIL held): if its plan was built
    natively, the holds of the plan's buffers that are not held (buffers Python made or
    adopted) are taken, and whether one was is returned; None for other kernels."""
    cdef hent_t *e
    cdef kargs_t *ka
    cdef size_t held[4]
    cdef int j, n = 0, native = 0
    pthread_mutex_lock(&tab_lock)
    e = tab_find(kernel)
    if e != NULL and e.kind == PYPLAT_KIND_KERNEL and e.ptr != NULL and (<kslot_t *>e.ptr).args != NULL:
        ka = <kargs_t *>(<kslot_t *>e.ptr).args
        native = ka.native_root != NULL and (<kslot_t *>e.ptr).plan != NULL
        if native and ka.foreign_plan == (<kslot_t *>e.ptr).plan:
            n = ka.n_foreign
            for j in range(n):
                held[j] = ka.foreign_handle[j]
    pthread_mutex_unlock(&tab_lock)
    if not native:
        return None
    primed = False
    for j in range(n):
        primed |= hold_memory(held[j])
    return primed


def native_plan_state(size_t kernel):
    """(tests) (has a plan, its first plan built natively, prepared, unset, template known)."""
    cdef hent_t *e
    cdef kslot_t *k
    cdef kargs_t *ka
    state = None
    pthread_mutex_lock(&tab_lock)
    e = tab_find(kernel)
    if e != NULL and e.kind == PYPLAT_KIND_KERNEL and e.ptr != NULL and (<kslot_t *>e.ptr).args != NULL:
        k = <kslot_t *>e.ptr
        ka = <kargs_t *>k.args
        state = (k.plan != NULL, ka.native_root != NULL, ka.prepared, ka.unset,
                 ka.proto != NULL and (<kproto_t *>ka.proto).tmpl != NULL)
    pthread_mutex_unlock(&tab_lock)
    return state


def reclaim_native_plans():
    """What reclaim_orphans does, for Python callers (clFinish, reference counts)."""
    reclaim_orphans(1)
