"""Memory objects. A CPU device shares the host's address space: a buffer is host memory,
aligned for vector loads, and mapping it costs nothing."""
import ctypes
import threading

from pyplat import cl
from pyplat.core.object import RefCounted
from pyplat.devices.spaces import ALIGNMENT, aligned_allocation  # noqa: F401  (ALIGNMENT: api)
from pyplat.runtime.graph import reap


class Mapping:
    """One clEnqueueMapBuffer: the object mapped, the pointer it returned, the region and flags.
    `unmapping` is set when its unmap is enqueued (the pointer is then no longer a mapped pointer
    the host may unmap); the record goes when that unmap command has finished, successfully or
    not."""
    __slots__ = ("owner", "pointer", "offset", "size", "flags", "unmapping")

    def __init__(self, owner, offset, size, flags):
        self.owner, self.offset, self.size, self.flags = owner, offset, size, flags
        self.pointer = owner.address + offset
        self.unmapping = False

    @property
    def writes(self):
        return bool(self.flags & (cl.CL_MAP_WRITE | cl.CL_MAP_WRITE_INVALIDATE_REGION))

    def conflicts(self, other):
        """Both mapped (neither unmap enqueued), their bytes overlap and one maps for writing."""
        return (not other.unmapping and (self.writes or other.writes)
                and self.pointer < other.pointer + other.size and other.pointer < self.pointer + self.size)


class Buffer(RefCounted):
    """A buffer, or a sub-buffer (a view of its parent's bytes at `origin`)."""

    native_key = 0     # (adopted from the native fast path) its ordering key: core/queue.py, order_key

    def __init__(self, context, flags, size, host_ptr=0, properties=(), parent=None, origin=0,
                 native_bytes=None):
        """native_bytes: (address, owner) of bytes the API layer's native clCreateBuffer made
        (owner keeps them), for a buffer adopted from it."""
        super().__init__()
        self.context = context.retain()
        self.flags = flags
        self.size = size
        self.host_ptr = host_ptr if flags & cl.CL_MEM_USE_HOST_PTR else 0
        self.properties = list(properties)
        self.parent = parent.retain() if parent is not None else None
        self.origin = origin
        self._mappings = []          # Mapping records of this buffer and its sub-buffers, oldest first
        self._mappings_lock = threading.Lock()
        self._destructors = []
        self._storage = None
        if parent is not None:
            self.address = parent.address + origin
        elif flags & cl.CL_MEM_USE_HOST_PTR:
            self.address = host_ptr
        elif native_bytes is not None:
            self.address, self._storage = native_bytes
        else:
            self._storage, self.address = aligned_allocation(size)
            if flags & cl.CL_MEM_COPY_HOST_PTR:
                ctypes.memmove(self.address, host_ptr, size)

    @property
    def mem_type(self):
        return cl.CL_MEM_OBJECT_BUFFER

    # --- mappings ---------------------------------------------------------------------------
    # "clEnqueueMapBuffer ... increment[s] the mapped count of the memory object ...
    # clEnqueueUnmapMemObject decrements the mapped count" and the count "should be considered
    # immediately stale" (OpenCL 3.0, clEnqueueUnmapMemObject, CL_MEM_MAP_COUNT). We count a
    # mapping from its map's enqueue until its unmap command has finished (as PoCL does).

    @property
    def _root(self):
        """The buffer that holds the records of itself and of its sub-buffers (which overlap it)."""
        return self.parent if self.parent is not None else self

    @property
    def map_count(self):
        reap()                       # unmaps that have finished drop their records in their hooks
        return sum(1 for r in self._root._mappings if r.owner is self)

    def add_mapping(self, offset, size, flags):
        """Record a map of [offset, offset + size) of this object; returns the record, or None
        if it would overlap a mapping for writing of this buffer, its parent or a sibling:
        "Mapping (and unmapping) overlapped regions in a memory object and/or associated memory
        objects ... for writing is an error and will result in CL_INVALID_OPERATION error
        returned by clEnqueueMapBuffer" (OpenCL 3.0, 5.5.4)."""
        root = self._root
        record = Mapping(self, offset, size, flags)
        with root._mappings_lock:
            if any(record.conflicts(r) for r in root._mappings):
                return None
            root._mappings.append(record)
        return record

    def begin_unmap(self, pointer):
        """The oldest mapping of this object whose pointer is `pointer` and whose unmap has not
        been enqueued, now marked as unmapping; None if there is none."""
        root = self._root
        with root._mappings_lock:
            for record in root._mappings:
                if record.owner is self and record.pointer == pointer and not record.unmapping:
                    record.unmapping = True
                    return record
        return None

    def cancel_unmap(self, record):
        """The unmap of `record` was not enqueued after all: it is mapped again."""
        record.unmapping = False

    def drop_mapping(self, record):
        """The record's map failed to return a pointer, or its unmap has finished."""
        root = self._root
        with root._mappings_lock:
            for i, r in enumerate(root._mappings):
                if r is record:
                    del root._mappings[i]
                    return

    def add_destructor(self, fn):
        self._destructors.append(fn)

    def destroy(self):
        root = self._root
        with root._mappings_lock:    # mappings never unmapped end with the object
            root._mappings[:] = [r for r in root._mappings if r.owner is not self]
        for fn in reversed(self._destructors):
            fn()
        self._destructors = []
        self._storage = None
        if self.parent is not None:
            self.parent.release()
        self.context.release()
