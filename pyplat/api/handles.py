"""Handles: the pointers the ICD loader sees, and the way from them to core objects.

Every handle begins with the pointer to the shim's dispatch table (the ICD loader calls through
it), then a magic number and a kind tag so that the C side can reject foreign pointers cheaply
(the layout, magic numbers and kinds: icd/pyplat_handle.h, read through pyplat/api/_native.pyx).
There is one handle table, _native's: it owns every handle's memory (C's allocator, so that a
handle outlives the interpreter's teardown, since the ICD loader reads its dispatch pointer
before the shim can refuse a call), keeps a reference to each handle's core object, and for the
native fast path a native reference next to it. This module is its Python face and the only way
from a C pointer to a core object for the Python entries: a released, foreign or wrongly typed
pointer is simply not found and gives CL_INVALID_<OBJECT>. An object knows its own handle
(the attribute HANDLE).
"""
import ctypes
import os
import threading

from pyplat import cl, log
from pyplat.api import _native

MAGIC, DEAD = _native.MAGIC, _native.DEAD       # live and dead handles' magic numbers
# Kind tags.
PLATFORM, DEVICE, CONTEXT, QUEUE, MEM, PROGRAM, KERNEL, EVENT, SAMPLER = (
    _native.KINDS[k] for k in ("PLATFORM", "DEVICE", "CONTEXT", "QUEUE", "MEM", "PROGRAM", "KERNEL",
                               "EVENT", "SAMPLER"))
HANDLE = "_cl_handle"     # a core object's attribute: its handle's address, once it has one

# Making, forgetting and adopting handles from several host threads: one at a time (reentrant:
# a garbage collection inside may destroy another object, which forgets its handle).
_lock = threading.RLock()


def _fork_child():
    """A thread that held the lock at fork() does not exist in the child."""
    global _lock
    _lock = threading.RLock()


os.register_at_fork(after_in_child=_fork_child)

set_dispatch = _native.set_dispatch           # the shim attached: the dispatch pointer for all
dispatch_address = _native.dispatch_address
lookup = _native.lookup                       # (address, cls, error) -> core object or CLError
peek = _native.peek                           # address -> core object or None, never adopting

# The native fast path: native_of(kind, obj) -> (native object, core context) for a queue,
# kernel or event handle, or None (then the Python entries answer for it). Events the fast path
# made natively are adopted on first use: adopter(address) -> core object or None. Both set by
# the bridge when the fast path is on.
native_of = None
adopter = None


def handle_of(obj, kind, _api_refs=0):
    """The handle of a core object, made on first use. 0 for None."""
    if obj is None:
        return 0
    address = getattr(obj, HANDLE, 0)
    if address:
        return address
    with _lock:
        address = getattr(obj, HANDLE, 0)
        if not address:
            native = native_of(kind, obj) if native_of is not None else None
            context = native[1] if native else None
            address = _native.new_handle(obj, kind, native[0] if native else None, context, _api_refs)
            setattr(obj, HANDLE, address)
        return address


def created(obj, kind):
    """The handle of an object a creation entry just made, whose one reference is the
    application's: from now on the application's references are counted in the handle table
    (pyplat/api/native_refs.pxi), so that the native clRetain*/clRelease* answer them."""
    return handle_of(obj, kind, 1)


def log_application_count(what, address, count):
    """PYPLAT_DEBUG=refcounts: the application's references to a handle after `what` (a native
    entry's or the Python entries' retain or release: both count them in the table)."""
    log.say("refcounts", f"{what} {address:#x}: {count} application reference{'' if count == 1 else 's'} left"
                         + (", handle released" if count == 0 else ""))


def retain(obj):
    """clRetain*: one more application reference."""
    address = getattr(obj, HANDLE, 0)
    if not (address and _native.api_retain(address)):
        obj.retain()
    elif log.on("refcounts"):
        log_application_count("retain", address, _native.api_references(address))


def release(obj, before_last=None):
    """clRelease*: one application reference fewer; the last one lets go of the core object's
    reference held for them (which may destroy it and invalidate its handle), after
    before_last(handle) if given."""
    address = getattr(obj, HANDLE, 0)
    state = _native.api_release(address) if address else 0
    if state and log.on("refcounts"):
        log_application_count("release", address, 0 if state == 2 else _native.api_references(address))
    if state == 2 and before_last is not None:
        before_last(address)
    if state != 1:
        obj.release()


def reference_count(obj):
    """The spec's CL_*_REFERENCE_COUNT: the core object's count, with the one reference it holds
    for the application's references replaced by their number."""
    _native.reclaim_native_plans()   # (a program's counts that released kernels' plans kept)
    address = getattr(obj, HANDLE, 0)
    api = _native.api_references(address) if address else 0
    return obj.reference_count - (1 if api else 0) + api


def forget(obj):
    """Invalidate the handle of a destroyed object (its memory stays quarantined)."""
    with _lock:
        address = getattr(obj, HANDLE, 0)
        if address:
            delattr(obj, HANDLE)
            _native.drop_handle(address)


def _adopt(address):
    with _lock:
        obj = _native.peek(address)
        if obj is None and adopter is not None:
            obj = adopter(address)
            if obj is not None:
                setattr(obj, HANDLE, address)
        return obj


_native.set_adopter(_adopt)
adopted = _adopt              # address -> core object or None, adopting one made natively


def lookup_or_none(address, cls, error):
    return None if not address else lookup(address, cls, error)


def lookup_array(count, address, cls, error):
    """Objects behind an array of `count` handles at `address`."""
    if not count or not address:
        return []
    raw = (ctypes.c_size_t * count).from_address(address)
    return [lookup(a, cls, error) for a in raw]


def write_handles(address, handles):
    if address and handles:
        (ctypes.c_size_t * len(handles)).from_address(address)[:] = handles


# Error codes for objects of the wrong type, by kind name (used by the API modules).
INVALID = {
    "platform": cl.CL_INVALID_PLATFORM, "device": cl.CL_INVALID_DEVICE,
    "context": cl.CL_INVALID_CONTEXT, "queue": cl.CL_INVALID_COMMAND_QUEUE,
    "mem": cl.CL_INVALID_MEM_OBJECT, "program": cl.CL_INVALID_PROGRAM,
    "kernel": cl.CL_INVALID_KERNEL, "event": cl.CL_INVALID_EVENT, "sampler": cl.CL_INVALID_SAMPLER,
}
