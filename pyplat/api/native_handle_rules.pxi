# Part of pyplat/api/_native.pyx (included there, after the handle table, before the entries).
# ---------------------------------------------------------------------------------------------
# The rules of the handles an entry is given, written once: the native entries refuse with them
# (native_refusals.pxi) what they know to be no handle of the kind asked for, and the Python
# entries' lookups (lookup below, api/handles.py; api/event.py's wait lists) raise the same
# refusals. A handle is valid when the table has it with that kind; one without a native record
# (an object only Python works with) is valid too: a native entry then defers, and the Python
# entry goes on with it.
# ---------------------------------------------------------------------------------------------

DEF KIND_SLOTS = 16                # the handle kinds' tags (1 to 9, asserted below) and, in
DEF NULL_SLOT = KIND_SLOTS - 1     # the last column of each row, a NULL handle


# A kind in the reasons' words: as its core object's class is named (lookup's `cls`).
KIND_WORDS = {kind: {"QUEUE": "CommandQueue", "MEM": "Buffer"}.get(name, name.capitalize())
              for name, kind in KINDS.items()}
assert max(KIND_WORDS) < NULL_SLOT and min(KIND_WORDS) > 0

cdef const char *handle_reasons[KIND_SLOTS][KIND_SLOTS]    # [kind wanted][kind found, 0: none]
cdef list handle_reason_texts = []                          # (their memory)


cdef void write_handle_reasons():
    cdef int wanted, found
    for wanted in range(NULL_SLOT):
        if wanted in KIND_WORDS:
            word = KIND_WORDS[wanted]
            a_word = ("an " if word[0] in "AEIOU" else "a ") + word
            row = {found: f"{{a:#x}} is {KIND_WORDS[found]}, not {a_word}" for found in KIND_WORDS}
            row[0] = f"{{a:#x}} is not {a_word} handle (never made here, or released)"
            row[NULL_SLOT] = f"NULL where {a_word} handle is needed"
        else:                              # (kind 0: an object of no kind, for lookups of other classes)
            row = {found: f"{{a:#x}} is {KIND_WORDS[found]}, not the object needed" for found in KIND_WORDS}
            row[0] = "{a:#x} is not a handle (never made here, or released)"
            row[NULL_SLOT] = "NULL where a handle is needed"
        for found, text in row.items():
            kept = text.encode()
            handle_reason_texts.append(kept)
            handle_reasons[wanted][found] = kept


write_handle_reasons()


cdef int handle_valid(size_t address, const hent_t *e, int kind, int32_t code, refusal_t *why) noexcept nogil:
    """Spec (every entry, for each object it is given): CL_INVALID_<OBJECT> (code) if it is not a
    valid <object> -- NULL, never made here, released, or a handle of another kind. e: the
    table's entry of `address` (NULL: none)."""
    if e != NULL and e.kind == kind:
        return 1
    return refuse(why, code, handle_reasons[kind][NULL_SLOT if address == 0 else (0 if e == NULL else e.kind)],
                  address, 0)


cdef int wait_list_given(uint32_t n_events, size_t events, refusal_t *why) noexcept nogil:
    """Spec (the enqueues): CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and
    num_events_in_wait_list > 0, or event_wait_list is not NULL and num_events_in_wait_list is
    0 (its events: handle_valid, with this code)."""
    if (n_events == 0) != (events == 0):
        return refuse(why, CL_INVALID_EVENT_WAIT_LIST, "num_events_in_wait_list and event_wait_list disagree", 0, 0)
    return 1


cdef int buffer_context_valid(size_t queue_context, size_t buffer_context, refusal_t *why) noexcept nogil:
    """Spec (the buffer commands): CL_INVALID_CONTEXT if the context associated with
    command_queue and buffer are not the same (the core contexts' keys, context_key)."""
    if queue_context != buffer_context:
        return refuse(why, CL_INVALID_CONTEXT, "buffer and queue in different contexts", 0, 0)
    return 1


cdef int event_context_valid(size_t queue_context, size_t event_context, refusal_t *why) noexcept nogil:
    """Spec (the enqueues): CL_INVALID_CONTEXT if the context associated with command_queue and
    events in event_wait_list are not the same."""
    if queue_context != event_context:
        return refuse(why, CL_INVALID_CONTEXT, "event from another context", 0, 0)
    return 1


cdef int events_given(uint32_t n_events, size_t events, refusal_t *why) noexcept nogil:
    """Spec (clWaitForEvents): CL_INVALID_VALUE if num_events is zero or event_list is NULL (its
    events: handle_valid with CL_INVALID_EVENT)."""
    if n_events == 0 or events == 0:
        return refuse(why, CL_INVALID_VALUE, "no events to wait for", 0, 0)
    return 1


cdef int32_t checked_first(int32_t r, const char *entry, size_t h, int kind, int32_t code) noexcept nogil:
    """What an entry whose Python entry looks its handle h up first answers: r, unless r is
    PYPLAT_DEFER and h is no handle of `kind` -- then its refusal, the Python entry's first
    (looked up again only here, off the entry's own path)."""
    cdef refusal_t why
    cdef int valid
    if r != PYPLAT_DEFER:
        return r
    pthread_mutex_lock(&tab_lock)
    valid = handle_valid(h, tab_find(h), kind, code, &why)
    pthread_mutex_unlock(&tab_lock)
    return PYPLAT_DEFER if valid else refused(entry, &why, h, 0)


cdef size_t checked_first_made(size_t made, const char *entry, size_t h, int kind, int32_t code,
                               size_t errcode_ret) noexcept nogil:
    """checked_first for a creation (made: its handle, or PYPLAT_DEFER_HANDLE): a refusal is
    NULL with its code through errcode_ret."""
    cdef int32_t r
    if made != <size_t>PYPLAT_DEFER_HANDLE:
        return made
    r = checked_first(PYPLAT_DEFER, entry, h, kind, code)
    if r == PYPLAT_DEFER:
        return <size_t>PYPLAT_DEFER_HANDLE
    if errcode_ret != 0:
        (<int32_t *>errcode_ret)[0] = r
    return 0


# The faces for the Python entries: None, or the refusal (code, reason) they raise.

cdef dict class_kinds = {}


cdef int kind_of_class(cls) except -1:
    """The kind of the handles of a core class (or of a subclass: UserEvent is an Event); 0 for
    another class."""
    kind = class_kinds.get(cls)
    if kind is None:
        words = {word: k for k, word in KIND_WORDS.items()}
        kind = class_kinds[cls] = next((words[c.__name__] for c in cls.__mro__ if c.__name__ in words), 0)
    return kind


def handle_refusal(size_t address, cls, int32_t code):
    """The refusal of a handle that is no live object of cls (lookup found none): as the native
    entries refuse it."""
    cdef refusal_t why
    cdef int kind = kind_of_class(cls)
    pthread_mutex_lock(&tab_lock)
    if handle_valid(address, tab_find(address), kind, code, &why):
        handle_valid(address, NULL, kind, code, &why)   # (its kind, but no such object to be had)
    pthread_mutex_unlock(&tab_lock)
    return why.code, refusal_reason(&why)


def events_refusal(uint32_t n_events, size_t events):
    cdef refusal_t why
    return refusal_of(events_given(n_events, events, &why), &why)


def wait_list_refusal(uint32_t n_events, size_t events):
    cdef refusal_t why
    return refusal_of(wait_list_given(n_events, events, &why), &why)


def buffer_context_refusal(bint same):
    """A buffer's context and its queue's, compared in Python (`same`)."""
    cdef refusal_t why
    return refusal_of(buffer_context_valid(0, 0 if same else 1, &why), &why)


def event_context_refusal(bint same):
    cdef refusal_t why
    return refusal_of(event_context_valid(0, 0 if same else 1, &why), &why)
