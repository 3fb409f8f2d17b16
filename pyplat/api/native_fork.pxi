# Included by _native.pyx: the handle table across fork().

# fork() (docs/runtime.md, "fork"). The table is consistent in the child: fork waits for
# tab_lock (pthread_atfork). In the child, the commands of the inherited queues and events that
# had not finished are lost (the runtime's fork_lose_*: terminated, not run), so that nothing in
# the child waits for them; the queues and events themselves keep working.
cdef void fork_prepare() noexcept nogil:
    pthread_mutex_lock(&tab_lock)


cdef void fork_parent() noexcept nogil:
    pthread_mutex_unlock(&tab_lock)


cdef void fork_child() noexcept nogil:
    cdef size_t i
    pthread_mutex_init(&tab_lock, NULL)
    for i in range(tab_cap):              # a kernel slot's lock a thread of the parent held
        if tab[i].key > 1 and tab[i].kind == PYPLAT_KIND_KERNEL and tab[i].ptr != NULL:
            slot_unlock(<kargs_t *>(<kslot_t *>tab[i].ptr).args)


def _fork_child():
    """os.register_at_fork(after_in_child=...): lose the inherited queues' and events' unfinished
    commands."""
    cdef size_t i
    cdef list objects = []
    cdef QueueCore core
    cdef Command command
    pthread_mutex_lock(&tab_lock)
    for i in range(tab_cap):
        if tab[i].key <= 1 or tab[i].ptr == NULL:
            if tab[i].key > 1 and tab[i].obj != NULL and tab[i].kind in (PYPLAT_KIND_QUEUE, PYPLAT_KIND_EVENT):
                objects.append(<object>tab[i].obj)      # Python path only: through the object
            continue
        if tab[i].kind == PYPLAT_KIND_QUEUE:
            fork_lose_queue(<qcore_t *>tab[i].ptr)
        elif tab[i].kind == PYPLAT_KIND_EVENT:
            fork_lose_command(<cmd_t *>tab[i].ptr)
    pthread_mutex_unlock(&tab_lock)
    for obj in objects:
        native = getattr(obj, "core", None) if hasattr(obj, "core") else getattr(obj, "command", None)
        if isinstance(native, QueueCore):
            core = native
            fork_lose_queue(core.q)
        elif isinstance(native, Command):
            command = native
            fork_lose_command(command.c)


cdef extern from "<pthread.h>" nogil:
    int pthread_atfork(void (*)() noexcept nogil, void (*)() noexcept nogil, void (*)() noexcept nogil)

pthread_atfork(fork_prepare, fork_parent, fork_child)
import os as _os
_os.register_at_fork(after_in_child=_fork_child)
