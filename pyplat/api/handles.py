"""Handles: the C structs the ICD loader sees, and the registry that maps them to core objects.

Every handle begins with the pointer to the shim's dispatch table (the ICD loader calls through
it), then a magic number and a kind tag so that the C side can reject foreign pointers cheaply
(the layout, magic numbers and kinds: icd/pyplat_handle.h, read through pyplat/api/_native.pyx).
A handle's memory is owned here, but for native events (_native's until adopted). The registry is
the only way from a C pointer to a core object for the Python entries: a released, foreign or
wrongly typed pointer is simply not found and gives CL_INVALID_<OBJECT>. The native fast path's
table (_native.pyx) is fed from here alone: handle_of publishes, forget withdraws.
"""
import collections
import ctypes
import itertools
import threading

from pyplat import cl
from pyplat.api import _native
from pyplat.api.errors import CLError

MAGIC, DEAD = _native.MAGIC, _native.DEAD       # live and dead handles' magic numbers
# Kind tags.
PLATFORM, DEVICE, CONTEXT, QUEUE, MEM, PROGRAM, KERNEL, EVENT, SAMPLER = (
    _native.KINDS[k] for k in ("PLATFORM", "DEVICE", "CONTEXT", "QUEUE", "MEM", "PROGRAM", "KERNEL",
                               "EVENT", "SAMPLER"))


class HandleStruct(ctypes.Structure):
    _fields_ = [("dispatch", ctypes.c_void_p), ("magic", ctypes.c_uint32),
                ("kind", ctypes.c_uint32), ("serial", ctypes.c_uint64)]


_dispatch_address = 0
_live = {}            # handle address -> core object
_structs = {}         # handle address -> HandleStruct (None: an adopted native handle)
_by_object = {}       # id(core object) -> handle address
# Released handles' memory is kept a while so that a stale pointer is not soon reused by a new
# object (the spec leaves that undefined, but answering CL_INVALID_* is kinder).
_quarantine = collections.deque()
QUARANTINE = 4096
# Handle memory comes from C's allocator, not from Python objects: a Python host's objects may
# be released after the interpreter has torn our modules down (its final garbage collection),
# and the ICD loader reads the handle's dispatch pointer before the shim can refuse the call.
_libc = ctypes.CDLL(None)
_libc.calloc.restype = ctypes.c_void_p
_libc.calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
_libc.free.argtypes = [ctypes.c_void_p]
_serial = itertools.count(1)
_lock = threading.Lock()


def set_dispatch(address):
    """Called when the shim attaches. Handles made before (by in-process callers that went
    around the loader) get the dispatch pointer too, since a loader may see them later."""
    global _dispatch_address
    with _lock:
        _dispatch_address = address
        for struct in _structs.values():
            if struct is not None:
                struct.dispatch = address


def dispatch_address():
    return _dispatch_address


def registry():
    """handle address -> core object, live handles only (prime_ndrange reads it)."""
    return _live


def handle_of(obj, kind):
    """The handle of a core object, made on first use. 0 for None."""
    if obj is None:
        return 0
    with _lock:
        address = _by_object.get(id(obj))
        if address is not None:
            return address
        address = _libc.calloc(1, ctypes.sizeof(HandleStruct))
        if not address:
            raise CLError(cl.CL_OUT_OF_HOST_MEMORY)
        struct = HandleStruct.from_address(address)
        struct.dispatch, struct.magic, struct.kind, struct.serial = _dispatch_address, MAGIC, kind, next(_serial)
        _structs[address] = struct
        _live[address] = obj
        _by_object[id(obj)] = address
        if publisher is not None and kind in (QUEUE, KERNEL, EVENT):
            publisher(address, kind, obj)
        return address


def forget(obj):
    """Invalidate the handle of a destroyed object (its memory stays quarantined)."""
    with _lock:
        address = _by_object.pop(id(obj), None)
        if address is None:
            return
        _live.pop(address, None)
        struct = _structs.pop(address)
        if withdrawer is not None:
            withdrawer(address)
        if struct is None:                    # an adopted native handle: _native's memory
            return
        struct.magic = DEAD
        _quarantine.append(struct)
        if len(_quarantine) > QUARANTINE:
            _libc.free(ctypes.addressof(_quarantine.popleft()))


# The native fast path (pyplat/api/_native.pyx) keeps a table of queue, kernel and event handles
# (native references, read without the GIL): publisher(address, kind, obj) tells it of a new one
# and withdrawer(address) of a forgotten one (for an adopted native event, this hands its memory
# back to _native). Events it made natively are adopted on first use by Python: adopter(address)
# -> core object or None. Set by the bridge when the fast path is on.
publisher = None
withdrawer = None
adopter = None


def _adopt(address):
    with _lock:
        obj = _live.get(address)
        if obj is None:
            obj = adopter(address)
            if obj is not None:
                _live[address] = obj
                _by_object[id(obj)] = address
                _structs[address] = None      # memory owned by _native
        return obj


def lookup(address, cls, error):
    """The live core object behind a handle, or CLError(error) if it is not one of cls."""
    obj = _live.get(address)
    if obj is None and address and adopter is not None:
        obj = _adopt(address)
    if obj is None or not isinstance(obj, cls):
        raise CLError(error)
    return obj


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
