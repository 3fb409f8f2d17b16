"""Memory objects. A CPU device shares the host's address space: a buffer is host memory,
aligned for vector loads, and mapping it costs nothing."""
import ctypes

import numpy as np

from pyplat import cl
from pyplat.core.object import RefCounted

ALIGNMENT = 128   # bytes; reported as CL_DEVICE_MEM_BASE_ADDR_ALIGN (in bits)


def aligned_allocation(size):
    """Zeroed host memory of `size` bytes aligned to ALIGNMENT: (owner, address)."""
    owner = np.zeros(size + ALIGNMENT, dtype=np.uint8)
    base = owner.ctypes.data
    return owner, base + (-base % ALIGNMENT)


class Buffer(RefCounted):
    """A buffer, or a sub-buffer (a view of its parent's bytes at `origin`)."""

    def __init__(self, context, flags, size, host_ptr=0, properties=(), parent=None, origin=0):
        super().__init__()
        self.context = context.retain()
        self.flags = flags
        self.size = size
        self.host_ptr = host_ptr if flags & cl.CL_MEM_USE_HOST_PTR else 0
        self.properties = list(properties)
        self.parent = parent.retain() if parent is not None else None
        self.origin = origin
        self.map_count = 0
        self._destructors = []
        self._storage = None
        if parent is not None:
            self.address = parent.address + origin
        elif flags & cl.CL_MEM_USE_HOST_PTR:
            self.address = host_ptr
        else:
            self._storage, self.address = aligned_allocation(size)
            if flags & cl.CL_MEM_COPY_HOST_PTR:
                ctypes.memmove(self.address, host_ptr, size)

    @property
    def mem_type(self):
        return cl.CL_MEM_OBJECT_BUFFER

    def add_destructor(self, fn):
        self._destructors.append(fn)

    def destroy(self):
        for fn in reversed(self._destructors):
            fn()
        self._destructors = []
        self._storage = None
        if self.parent is not None:
            self.parent.release()
        self.context.release()
