# Part of pyplat/api/_native.pyx (included there, after native_buffers.pxi): clEnqueueMapBuffer
# and clEnqueueUnmapMemObject natively, and the one table of mappings both paths keep.
# ---------------------------------------------------------------------------------------------
# One set of records. A map is a record (who mapped: the root buffer or one of its sub-buffers;
# the pointer returned; its size; whether it maps for writing; whether its unmap is enqueued;
# that unmap's command). The records of a root buffer and of all its sub-buffers live in ONE
# native table (nmaps_t), whoever made them:
#   - a buffer with a native record (nmem_t: buffers of host-memory contexts, made natively or in
#     Python, bridge._native_of) keeps the table in its root record (nmem_t.maps, made on first
#     use under the record's lock and never replaced). The native entries below use it;
#   - the core Buffer (core/memory.py) asks the API layer for its root's table on first use
#     (api/memory.py: map_table_of -> map_table below): the record's table when its handle has a
#     record, else a table of its own (contexts that move memory, PYPLAT_FAST_PATH=0), which
#     only the Python entries then see. A core Buffer made by adoption (adopt_buffer) finds the
#     records its native maps made, a native unmap finds those Python made, and
#     CL_MEM_MAP_COUNT (Python's) counts both. The rules (overlap of maps for writing, the
#     oldest mapping of a pointer, counting) are written once, here.
# A record counts (CL_MEM_MAP_COUNT) from its map's enqueue until its unmap command has finished
# or failed: the record keeps a reference to that command and reads its status, so no hook, no
# Python and no reaper is needed to let it go; finished records are pruned by later calls.
# Owners: 0 is the root buffer itself (the only owner the native entries serve: a sub-buffer's
# map or unmap goes to Python), a sub-buffer's number is given by Python (id of its Buffer,
# whose records go with it: Buffer.destroy).
# Locks: a table's lock is taken alone (maps_of takes the record's lock and lets it go first);
# under it a command may be let go (cmd_decref), whose last reference, once it has finished,
# touches no lock of ours.
# Anything unusual defers to the Python entry (api/enqueue.py), which reports it: sub-buffers,
# unknown or conflicting flags, host access the buffer's flags forbid, a region outside the
# buffer, an overlap with a mapping for writing, a pointer this buffer has no mapping of, a
# blocking map with a wait list or called holding the GIL, foreign handles.
# ---------------------------------------------------------------------------------------------
from libc.stdlib cimport realloc
from libc.string cimport memmove
from pyplat.runtime._sched cimport ST_COMPLETE



cdef uint64_t MAPS_NO_MEMORY = ~(<uint64_t>0)     # maps_add: the table could not grow


cdef struct nmap_t:               # one mapping
    uint64_t id                   # its number in its table (from 1)
    size_t owner                  # 0: the root buffer; else a sub-buffer's number
    char *pointer                 # what the map returned
    uint64_t size
    int writes                    # mapped with CL_MAP_WRITE or CL_MAP_WRITE_INVALIDATE_REGION
    int unmapping                 # its unmap enqueued (or being enqueued)
    cmd_t *unmap                  # a reference to that unmap, once enqueued

cdef struct nmaps_t:              # the mappings of a root buffer and its sub-buffers
    pthread_mutex_t lock
    long refs
    nmap_t *recs                  # oldest first
    int n
    int cap
    uint64_t next_id


cdef nmaps_t *maps_new() noexcept nogil:
    cdef nmaps_t *t = <nmaps_t *>calloc(1, sizeof(nmaps_t))
    if t != NULL:
        pthread_mutex_init(&t.lock, NULL)
        t.refs, t.next_id = 1, 1
    return t


cdef void maps_decref(nmaps_t *t) noexcept nogil:
    cdef int i
    if pp_add(&t.refs, -1) == 0:
        for i in range(t.n):
            if t.recs[i].unmap != NULL:
                cmd_decref(t.recs[i].unmap)
        free(t.recs)
        pthread_mutex_destroy(&t.lock)
        free(t)


cdef nmaps_t *maps_of(nmem_t *m) noexcept nogil:
    """A new reference to a root record's table, made on first use; NULL without memory."""
    cdef nmaps_t *t
    pthread_mutex_lock(&m.lock)
    if m.maps == NULL:
        m.maps = maps_new()
    t = <nmaps_t *>m.maps
    if t != NULL:
        pp_add(&t.refs, 1)
    pthread_mutex_unlock(&m.lock)
    return t


cdef inline int unmapped(nmap_t *r) noexcept nogil:
    """Its unmap has finished or failed: the record no longer counts."""
    return r.unmap != NULL and pp_load_i(&r.unmap.status) <= ST_COMPLETE


cdef void remove_locked(nmaps_t *t, int i) noexcept nogil:
    """(t.lock held) Record i goes (its command let go); the order of the others is kept."""
    if t.recs[i].unmap != NULL:
        cmd_decref(t.recs[i].unmap)
    if i + 1 < t.n:
        memmove(&t.recs[i], &t.recs[i + 1], (t.n - i - 1) * sizeof(nmap_t))
    t.n -= 1


cdef void prune_locked(nmaps_t *t) noexcept nogil:
    """(t.lock held) The records whose unmap has finished go."""
    cdef int i = t.n - 1
    while i >= 0:
        if unmapped(&t.recs[i]):
            remove_locked(t, i)
        i -= 1


cdef int find_locked(nmaps_t *t, uint64_t id) noexcept nogil:
    cdef int i
    for i in range(t.n):
        if t.recs[i].id == id:
            return i
    return -1


cdef uint64_t maps_add(nmaps_t *t, size_t owner, char *pointer, uint64_t size, uint64_t flags) noexcept nogil:
    """A record of a new map; its id. 0 if it overlaps a mapping not being unmapped and one of
    the two maps for writing ("Mapping ... overlapped regions ... for writing is an error",
    OpenCL 3.0 5.5.4: CL_INVALID_OPERATION); MAPS_NO_MEMORY if the table cannot grow."""
    cdef int i, writes = (flags & MAP_WRITES) != 0
    cdef uint64_t id = 0
    cdef nmap_t *r
    cdef nmap_t *grown
    pthread_mutex_lock(&t.lock)
    prune_locked(t)
    for i in range(t.n):
        r = &t.recs[i]
        if (not r.unmapping and (writes or r.writes)
                and pointer < r.pointer + r.size and r.pointer < pointer + size):
            pthread_mutex_unlock(&t.lock)
            return 0
    if t.n == t.cap:
        grown = <nmap_t *>realloc(t.recs, (t.cap * 2 + 4) * sizeof(nmap_t))
        if grown == NULL:
            pthread_mutex_unlock(&t.lock)
            return MAPS_NO_MEMORY
        t.recs, t.cap = grown, t.cap * 2 + 4
    r = &t.recs[t.n]
    t.n += 1
    memset(r, 0, sizeof(nmap_t))
    id = t.next_id
    t.next_id += 1
    r.id, r.owner, r.pointer, r.size, r.writes = id, owner, pointer, size, writes
    pthread_mutex_unlock(&t.lock)
    return id


cdef uint64_t maps_begin_unmap(nmaps_t *t, size_t owner, char *pointer, int *writes) noexcept nogil:
    """The oldest mapping of `owner` at `pointer` whose unmap is not enqueued, now unmapping (a
    pointer mapped twice takes two unmaps); its id and *writes, or 0 if there is none."""
    cdef int i
    cdef uint64_t id = 0
    pthread_mutex_lock(&t.lock)
    for i in range(t.n):
        if t.recs[i].owner == owner and t.recs[i].pointer == pointer and not t.recs[i].unmapping:
            t.recs[i].unmapping = 1
            writes[0] = t.recs[i].writes
            id = t.recs[i].id
            break
    pthread_mutex_unlock(&t.lock)
    return id


cdef void maps_cancel_unmap(nmaps_t *t, uint64_t id) noexcept nogil:
    """The unmap of record `id` was not enqueued after all: mapped again."""
    cdef int i
    pthread_mutex_lock(&t.lock)
    i = find_locked(t, id)
    if i >= 0 and t.recs[i].unmap == NULL:
        t.recs[i].unmapping = 0
    pthread_mutex_unlock(&t.lock)


cdef void maps_unmap_enqueued(nmaps_t *t, uint64_t id, cmd_t *c) noexcept nogil:
    """Record `id`'s unmap is c (the reference passed is the record's): it counts until c has
    finished."""
    cdef int i
    pthread_mutex_lock(&t.lock)
    i = find_locked(t, id)
    if i >= 0 and t.recs[i].unmap == NULL:
        t.recs[i].unmap = c
        c = NULL
    pthread_mutex_unlock(&t.lock)
    if c != NULL:                              # (the record went meanwhile: its buffer did)
        cmd_decref(c)


cdef void maps_drop(nmaps_t *t, uint64_t id) noexcept nogil:
    """Record `id` goes (its map returned no pointer)."""
    cdef int i
    pthread_mutex_lock(&t.lock)
    i = find_locked(t, id)
    if i >= 0:
        remove_locked(t, i)
    pthread_mutex_unlock(&t.lock)


cdef size_t map_answer(int32_t r, size_t errcode_ret) noexcept nogil:
    """A map not made: its refusal's code through errcode_ret and a NULL pointer, or deferred."""
    if r == PYPLAT_DEFER:
        return <size_t>PYPLAT_DEFER_HANDLE
    if errcode_ret != 0:
        (<int32_t *>errcode_ret)[0] = r
    return 0


cdef size_t n_map(size_t queue, size_t buffer, uint32_t blocking, uint64_t flags, uint64_t offset,
                  uint64_t size, uint32_t n_events, size_t events, size_t event,
                  size_t errcode_ret) noexcept nogil:
    """clEnqueueMapBuffer of a root buffer with a native record: a record in its table, then a
    command ordered as the Python entry's (it writes the buffer and the host: later commands on
    either wait for it), which has nothing to run (one address space). The pointer is the
    buffer's bytes at `offset`, as api/enqueue.py returns it."""
    cdef ncall_t a
    cdef access_t acc[2]
    cdef nmem_t *m
    cdef nmaps_t *t
    cdef cmd_t *c
    cdef char *pointer
    cdef uint64_t id
    cdef int32_t r
    cdef refusal_t why
    cdef int taken = ncall_take(&a, queue, 1, buffer, 0, n_events, events, &why)
    if taken != 1:
        return map_answer(ncall_refused(taken, "clEnqueueMapBuffer", &why, queue, buffer), errcode_ret)
    m = a.m[0]
    if not (region_valid(m.size, offset, size, &why) and map_valid(flags, m.flags, &why)):
        ncall_release(&a)                      # (native_buffer_rules.pxi)
        return map_answer(refused("clEnqueueMapBuffer", &why, queue, buffer), errcode_ret)
    pointer = m.address + offset
    t = NULL
    if not m.is_sub and <size_t>pointer != <size_t>PYPLAT_DEFER_HANDLE:
        t = maps_of(m)
    if t == NULL:
        ncall_release(&a)
        return <size_t>PYPLAT_DEFER_HANDLE
    id = maps_add(t, 0, pointer, size, flags)
    if (id != 0 and id != MAPS_NO_MEMORY
            and (a.waits_taken != 1 or (blocking and (n_events != 0 or PyGILState_Check())))):
        maps_drop(t, id)                       # the wait list (checked last), or a blocking call
        maps_decref(t)                         # that must not wait here (as n_transfer)
        return map_answer(ncall_waits_end(&a, "clEnqueueMapBuffer", queue, buffer), errcode_ret)
    c = NULL
    if id != 0 and id != MAPS_NO_MEMORY:
        c = cmd_new(K_NOP)
    if c == NULL:
        if id != 0 and id != MAPS_NO_MEMORY:
            maps_drop(t, id)
        maps_decref(t)
        ncall_release(&a)
        return <size_t>PYPLAT_DEFER_HANDLE
    acc[0].key, acc[0].writes = m.root, 1
    acc[1].key, acc[1].writes = host_key, 1
    r = ncall_submit(&a, c, acc, 2, 0, 0, CL_COMMAND_MAP_BUFFER, blocking, event)
    if r != CL_SUCCESS_:
        maps_drop(t, id)                       # no pointer returned: nothing to unmap
        maps_decref(t)
        return <size_t>PYPLAT_DEFER_HANDLE
    maps_decref(t)
    if errcode_ret != 0:
        (<int32_t *>errcode_ret)[0] = CL_SUCCESS_
    return <size_t>pointer


cdef int32_t n_unmap(size_t queue, size_t mem, size_t ptr, uint32_t n_events, size_t events,
                     size_t event) noexcept nogil:
    """clEnqueueUnmapMemObject of a mapping of a root buffer: the oldest one of that pointer
    not being unmapped; its command (the Python entry's accesses) counts the record until it
    has finished. A pointer without such a mapping: the Python entry (CL_INVALID_VALUE)."""
    cdef ncall_t a
    cdef access_t acc[2]
    cdef nmem_t *m
    cdef nmaps_t *t = NULL
    cdef cmd_t *c
    cdef cmd_t *kept = NULL
    cdef uint64_t id = 0
    cdef int writes = 0
    cdef int32_t r
    cdef refusal_t why
    cdef int taken = ncall_take(&a, queue, 1, mem, 0, n_events, events, &why)
    if taken != 1:
        return ncall_refused(taken, "clEnqueueUnmapMemObject", &why, queue, mem)
    m = a.m[0]
    if not m.is_sub:
        t = maps_of(m)
    if t != NULL:
        id = maps_begin_unmap(t, 0, <char *>ptr, &writes)
    if id != 0 and a.waits_taken != 1:        # (the pointer passed: the wait list is checked last)
        maps_cancel_unmap(t, id)
        maps_decref(t)
        return ncall_waits_end(&a, "clEnqueueUnmapMemObject", queue, mem)
    c = NULL
    if id != 0:
        c = cmd_new(K_NOP)
    if c == NULL:
        if id != 0:
            maps_cancel_unmap(t, id)
        if t != NULL:
            maps_decref(t)
        ncall_release(&a)
        return PYPLAT_DEFER
    acc[0].key, acc[0].writes = m.root, writes
    acc[1].key, acc[1].writes = host_key, 1
    r = ncall_submit_kept(&a, c, acc, 2, 0, 0, CL_COMMAND_UNMAP_MEM_OBJECT, 0, event, &kept)
    if r == CL_SUCCESS_:
        maps_unmap_enqueued(t, id, kept)
    else:
        maps_cancel_unmap(t, id)
    maps_decref(t)
    return r


cdef class MapTable:
    """The mapping table of a root buffer, for core/memory.py's Buffer (map_table)."""
    cdef nmaps_t *t

    def __dealloc__(self):
        if self.t != NULL:
            maps_decref(self.t)

    def add(self, size_t owner, size_t pointer, uint64_t size, uint64_t flags):
        """The record of a new map: its id; 0 if it overlaps a mapping for writing (maps_add)."""
        cdef uint64_t id = maps_add(self.t, owner, <char *>pointer, size, flags)
        if id == MAPS_NO_MEMORY:
            raise MemoryError()
        return id

    def begin_unmap(self, size_t owner, size_t pointer):
        """(id, writes) of the mapping an unmap of `pointer` by `owner` takes, now unmapping;
        None if there is none."""
        cdef int writes = 0
        cdef uint64_t id = maps_begin_unmap(self.t, owner, <char *>pointer, &writes)
        return (id, bool(writes)) if id else None

    def cancel_unmap(self, uint64_t id):
        maps_cancel_unmap(self.t, id)

    def unmap_enqueued(self, uint64_t id, Command command):
        """The record counts until `command` (its unmap) has finished or failed."""
        cmd_incref(command.c)
        maps_unmap_enqueued(self.t, id, command.c)

    def drop(self, uint64_t id):
        maps_drop(self.t, id)

    def count(self, size_t owner):
        """The mappings of `owner` whose unmap has not finished (CL_MEM_MAP_COUNT)."""
        cdef int i
        cdef long n = 0
        with nogil:
            pthread_mutex_lock(&self.t.lock)
            prune_locked(self.t)
            for i in range(self.t.n):
                n += self.t.recs[i].owner == owner
            pthread_mutex_unlock(&self.t.lock)
        return n

    def drop_owner(self, size_t owner):
        """The mappings of `owner` end with it (never unmapped, or unmaps still pending)."""
        cdef int i
        with nogil:
            pthread_mutex_lock(&self.t.lock)
            i = self.t.n - 1
            while i >= 0:
                if self.t.recs[i].owner == owner:
                    remove_locked(self.t, i)
                i -= 1
            pthread_mutex_unlock(&self.t.lock)


def map_table(size_t handle):
    """The mapping table of the root buffer whose handle this is: its native record's, which
    the native entries use, when it has one; else a new table of its own."""
    cdef hent_t *e
    cdef nmem_t *m = NULL
    cdef MapTable table = MapTable()
    pthread_mutex_lock(&tab_lock)
    e = tab_find(handle)
    if e != NULL and e.kind == PYPLAT_KIND_MEM and e.ptr != NULL and not (<nmem_t *>e.ptr).is_sub:
        m = <nmem_t *>e.ptr
        pp_add(&m.refs, 1)
    pthread_mutex_unlock(&tab_lock)
    if m != NULL:
        table.t = maps_of(m)
        nmem_decref(m)
    else:
        table.t = maps_new()
    if table.t == NULL:
        raise MemoryError()
    return table
