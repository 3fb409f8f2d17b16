# Part of pyplat/api/_native.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Reading the handle table without tab_lock (docs/runtime.md, "Fast path", "Reads without the
# table lock"). The small calls programs repeat (clFlush, clFinish, clWaitForEvents,
# clGetEventInfo, clGetMemObjectInfo, clGetKernelInfo, clGetKernelWorkGroupInfo) only look an
# entry up; taking the mutex for that cost two atomic read-modify-writes on one line every thread
# shares. Instead:
#
# - a sequence count (a seqlock): every writer that inserts, deletes or moves entries makes it
#   odd while it works and even again after (writers still hold tab_lock, so they never race each
#   other); a reader copies what it needs out of the entry and keeps it only if the count was the
#   same even number before and after;
# - the table's arrays are never freed: one per capacity (a power of two), reused when the table
#   comes back to that capacity, so a reader still probing an array the table left reads memory
#   that exists (its answer is then thrown away by the count). Memory stays bounded: at most one
#   array per capacity reached, less than twice the largest;
# - a probe never runs longer than the array, whatever a writer does meanwhile;
# - after a few failed tries (writers busy) the reader takes the lock, so it always finishes.
#
# What a reader does with the entry afterwards is safe because the caller holds a reference to
# the handle for the call (the spec's rule): the entry, and the native object it references,
# stay while the call runs; only OTHER handles' inserts and deletes can race with it, and those
# the count catches. A handle released before the call has no entry: the read says so and the
# entry refuses it (checked_first, native_handle_rules.pxi) as the Python entry would. The reader then uses only what is immutable for
# the handle's life (a queue core's driver, a buffer record's size and flags, a kernel slot's
# argument record) or read atomically (a command's status, the count of work-group records).
# ---------------------------------------------------------------------------------------------

cdef extern from *:
    """
    /* Seqlock orderings (C11 atomics through GCC builtins): a writer's stores between its odd and
       even count are ordered by a release fence after the odd one and a release store of the even
       one; a reader's loads by an acquire load of the count before and an acquire fence after. */
    static inline size_t pp_seq_read_begin(size_t *seq) { return __atomic_load_n(seq, __ATOMIC_ACQUIRE); }
    static inline int pp_seq_read_valid(size_t *seq, size_t was) {
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        return __atomic_load_n(seq, __ATOMIC_RELAXED) == was; }
    static inline void pp_seq_write_begin(size_t *seq) {
        __atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE); }
    static inline void pp_seq_write_end(size_t *seq) { __atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE); }
    static inline size_t pp_word_load(size_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static inline int pp_int_load(int *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static inline void *pp_ptr_load(void **p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static inline void *pp_ptr_load_acquire(void **p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void pp_ptr_store_release(void **p, void *v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline int pp_int_load_acquire(int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void pp_int_store_release(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline void pp_cpu_relax(void) {
    #if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
    #endif
    }
    """
    size_t pp_seq_read_begin(size_t *seq) nogil
    int pp_seq_read_valid(size_t *seq, size_t was) nogil
    void pp_seq_write_begin(size_t *seq) nogil
    void pp_seq_write_end(size_t *seq) nogil
    size_t pp_word_load(size_t *p) nogil
    int pp_int_load(int *p) nogil
    void *pp_ptr_load(void **p) nogil
    void *pp_ptr_load_acquire(void **p) nogil
    void pp_ptr_store_release(void **p, void *v) nogil
    int pp_int_load_acquire(int *p) nogil
    void pp_int_store_release(int *p, int v) nogil
    void pp_cpu_relax() nogil

DEF READ_TRIES = 8                # lock-free tries before a reader takes the lock
DEF MAX_TAB_ORDER = 48            # capacities up to 2**47 entries

cdef struct tab_view_t:           # one array of the table, as readers find it
    hent_t *slots
    size_t mask

cdef size_t tab_seq = 0           # odd while a writer (holding tab_lock) changes entries
cdef tab_view_t tab_views[MAX_TAB_ORDER]   # per capacity 2**i: its array, kept once made
cdef tab_view_t *tab_view = NULL  # the array in use (published with a release store)
cdef size_t tab_arrays_made = 0   # arrays ever allocated, and rebuilds (table_read_stats)
cdef size_t tab_rebuilds = 0

cdef struct tab_read_t:           # what a lock-free read copied out of an entry
    int kind
    void *ptr
    size_t context


cdef inline void tab_write_begin() noexcept nogil:
    """(tab_lock held) Entries are about to move, appear or go."""
    pp_seq_write_begin(&tab_seq)


cdef inline void tab_write_end() noexcept nogil:
    pp_seq_write_end(&tab_seq)


cdef inline int tab_order(size_t cap) noexcept nogil:
    cdef int i = 0
    while (<size_t>1 << i) < cap:
        i += 1
    return i


cdef void tab_rehash(size_t cap) noexcept nogil:
    """(tab_lock held, inside a write) The table rebuilt at `cap` without its deleted slots: into
    the array kept for that capacity (made on first need), or, at the same capacity, in place
    from a private copy. The array left behind stays for readers still probing it."""
    global tab, tab_cap, tab_used, tab_view, tab_arrays_made, tab_rebuilds
    cdef tab_view_t *v = &tab_views[tab_order(cap)]
    cdef hent_t *src = tab
    cdef hent_t *copy = NULL
    cdef size_t n = tab_cap, i, j, mask = cap - 1
    if v.slots == NULL:
        v.slots = <hent_t *>calloc(cap, sizeof(hent_t))
        if v.slots == NULL:
            abort_oom()
        v.mask = mask
        tab_arrays_made += 1
    if v.slots == tab:                         # same capacity: from a copy nobody else sees
        copy = <hent_t *>malloc(n * sizeof(hent_t))
        if copy == NULL:
            abort_oom()
        memcpy(copy, tab, n * sizeof(hent_t))
        src = copy
    memset(v.slots, 0, cap * sizeof(hent_t))
    tab, tab_cap, tab_used = v.slots, cap, 0
    for i in range(n):
        if src[i].key > 1:
            j = key_hash(src[i].key) & mask
            while tab[j].key != 0:
                j = (j + 1) & mask
            tab[j] = src[i]
            tab_used += 1
    free(copy)
    tab_rebuilds += 1
    pp_ptr_store_release(<void **>&tab_view, v)


cdef int tab_read(size_t key, tab_read_t *out) noexcept nogil:
    """Without tab_lock: 1 and the entry's kind, native reference and context in *out if `key`
    is a live handle, else 0 (never made, or released). See the top of this file for why the
    caller may then use what the reference points to."""
    cdef tab_view_t *v
    cdef hent_t *slots
    cdef hent_t *e
    cdef size_t was, mask, j, n, k
    cdef int tries, found
    if key <= 1:
        return 0
    for tries in range(READ_TRIES):
        was = pp_seq_read_begin(&tab_seq)
        if was & 1:
            pp_cpu_relax()
            continue
        v = <tab_view_t *>pp_ptr_load_acquire(<void **>&tab_view)
        if v == NULL:
            return 0                           # no handle was ever made
        slots, mask, found = v.slots, v.mask, 0
        j = key_hash(key) & mask
        for n in range(mask + 1):              # bounded even while a writer changes the array
            k = pp_word_load(&slots[j].key)
            if k == 0:
                break
            if k == key:
                out.kind = pp_int_load(&slots[j].kind)
                out.ptr = pp_ptr_load(&slots[j].ptr)
                out.context = pp_word_load(&slots[j].context)
                found = 1
                break
            j = (j + 1) & mask
        if pp_seq_read_valid(&tab_seq, was):
            return found
    pthread_mutex_lock(&tab_lock)              # writers kept it busy: as before
    e = tab_find(key)
    if e != NULL:
        out.kind, out.ptr, out.context = e.kind, e.ptr, e.context
    pthread_mutex_unlock(&tab_lock)
    return e != NULL


cdef inline void *tab_read_ptr(size_t key, int kind) noexcept nogil:
    """Without tab_lock: the native reference of a live handle of `kind`, or NULL."""
    cdef tab_read_t r
    if tab_read(key, &r) and r.kind == kind:
        return r.ptr
    return NULL


# ---------------------------------------------------------------------------------------------
# The native reference in the handle's own memory. A queue's, buffer's or kernel's handle keeps,
# in its last word, the native reference its entry was published with (publish_locked; an
# entry's reference never changes while the handle lives). A call given such a handle *as the
# object it dispatches on* reads it there: the loader has read the handle's first word to reach
# us, so the memory is there, and a handle released meanwhile reads "DEAD" (quarantined) or, its
# memory reused, another serial's magic and kind -- as a table probe would, without the probe.
# Handles passed as plain arguments (a buffer given to clSetKernelArg) are never read this way:
# any pointer may come there.
# ---------------------------------------------------------------------------------------------

cdef inline void **handle_native_word(size_t handle) noexcept nogil:
    # (the last word of HANDLE_BYTES: nqueue_t ends before it, asserted in native_queues.pxi;
    # only native events use it, and their kind is never read through it)
    return <void **>(<char *>handle + sizeof(nevent_t) - sizeof(void *))


cdef inline void handle_note_native(pyplat_handle *h, int kind, void *ptr) noexcept nogil:
    """(publish_locked) The handle's native reference into its own memory."""
    if kind == PYPLAT_KIND_QUEUE or kind == PYPLAT_KIND_MEM or kind == PYPLAT_KIND_KERNEL:
        handle_native_word(<size_t>h)[0] = ptr


cdef inline void *handle_native(size_t handle, int kind) noexcept nogil:
    """The native reference of a live handle of `kind` (a queue, buffer or kernel the call
    dispatches on) read in its own memory, or NULL: see above."""
    cdef pyplat_handle *h = <pyplat_handle *>handle
    if handle < 4096 or h.magic != PYPLAT_HANDLE_MAGIC or h.kind != <uint32_t>kind:   # (page 0: never)
        return NULL
    return handle_native_word(handle)[0]


def table_read_stats():
    """{"seq": sequence count, "rebuilds": rebuilds so far, "arrays": arrays ever allocated,
    "capacities": those whose arrays are kept} of the handle table."""
    with nogil:
        pthread_mutex_lock(&tab_lock)
    stats = {"seq": tab_seq, "rebuilds": tab_rebuilds, "arrays": tab_arrays_made,
             "capacities": [<size_t>1 << i for i in range(MAX_TAB_ORDER) if tab_views[i].slots != NULL]}
    pthread_mutex_unlock(&tab_lock)
    return stats
