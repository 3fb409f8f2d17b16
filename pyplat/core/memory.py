"""Memory objects. A CPU device shares the host's address space: a buffer is host memory,
aligned for vector loads, and mapping it costs nothing."""
import ctypes
import threading

from pyplat import cl
from pyplat.core.object import RefCounted
from pyplat.devices.spaces import ALIGNMENT, aligned_allocation  # noqa: F401  (ALIGNMENT: api)


# The table of a root buffer's mappings (its own and its sub-buffers'): map_table_of(root) -> a
# table (api/native_maps.pxi's MapTable: the records and their rules, shared with the native
# clEnqueueMapBuffer / clEnqueueUnmapMemObject). Installed by the API layer (api/memory.py),
# which makes every Buffer.
map_table_of = None


class Mapping:
    """One clEnqueueMapBuffer as its Buffer's caller sees it: the table's record number, the
    pointer returned, whether it maps for writing."""
    __slots__ = ("id", "pointer", "writes")

    def __init__(self, id, pointer, writes):
        self.id, self.pointer, self.writes = id, pointer, writes


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
        self._maps = None            # (a root buffer) the table of its and its sub-buffers' mappings
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
    # mapping from its map's enqueue until its unmap command has finished (as PoCL does). The
    # records live in the root's table (map_table_of), with those the native entries make.

    @property
    def _root(self):
        """The buffer that holds the records of itself and of its sub-buffers (which overlap it)."""
        return self.parent if self.parent is not None else self

    @property
    def _owner(self):
        """Who mapped, in the table: 0 the root buffer (as the native entries say), else this
        sub-buffer (its records go with it: destroy)."""
        return 0 if self.parent is None else id(self)

    def _table(self):
        root = self._root
        if root._maps is None:
            with root._mappings_lock:
                if root._maps is None:
                    root._maps = map_table_of(root)
        return root._maps

    @property
    def map_count(self):
        return self._table().count(self._owner)

    def add_mapping(self, offset, size, flags):
        """Record a map of [offset, offset + size) of this object; returns the record, or None
        if it would overlap a mapping for writing of this buffer, its parent or a sibling:
        "Mapping (and unmapping) overlapped regions in a memory object and/or associated memory
        objects ... for writing is an error and will result in CL_INVALID_OPERATION error
        returned by clEnqueueMapBuffer" (OpenCL 3.0, 5.5.4)."""
        pointer = self.address + offset
        id = self._table().add(self._owner, pointer, size, flags)
        if not id:
            return None
        return Mapping(id, pointer, bool(flags & (cl.CL_MAP_WRITE | cl.CL_MAP_WRITE_INVALIDATE_REGION)))

    def begin_unmap(self, pointer):
        """The oldest mapping of this object whose pointer is `pointer` and whose unmap has not
        been enqueued, now marked as unmapping; None if there is none."""
        found = self._table().begin_unmap(self._owner, pointer)
        return None if found is None else Mapping(found[0], pointer, found[1])

    def cancel_unmap(self, record):
        """The unmap of `record` was not enqueued after all: it is mapped again."""
        self._table().cancel_unmap(record.id)

    def unmap_enqueued(self, record, command):
        """`command` unmaps `record`: counted until it has finished or failed."""
        self._table().unmap_enqueued(record.id, command)

    def drop_mapping(self, record):
        """The record's map failed to return a pointer."""
        self._table().drop(record.id)

    def add_destructor(self, fn):
        self._destructors.append(fn)

    def destroy(self):
        if self._root._maps is not None:     # mappings never unmapped end with the object
            self._root._maps.drop_owner(self._owner)
        for fn in reversed(self._destructors):
            fn()
        self._destructors = []
        self._storage = None
        if self.parent is not None:
            self.parent.release()
        self.context.release()
