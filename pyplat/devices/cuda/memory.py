"""A CUDA device's memory space: buffers in device memory (cuMemAlloc), zeroed when made;
transfers on the running thread's stream (streams.py), large host ones through pinned staging
buffers. The host cannot address this memory: the API's reads,
writes, fills and copies work on host copies, and only kernels and transfers touch it
(docs/devices.md, "Memory")."""
import ctypes

from pyplat.devices.cuda import driver_api as cu
from pyplat.devices.cuda import faults, streams
from pyplat.devices.spaces import MemorySpace

STAGING_CHUNK = 8 << 20          # bytes per pinned staging buffer (two per lane)
DIRECT_LIMIT = 1 << 20           # smaller host transfers: one call, the driver stages them


class DeviceAllocation:
    """Owns `size` bytes of device memory at `address`; freed when dropped."""

    def __init__(self, space, size):
        lib = cu.api()
        self.space, self.address = space, None
        ptr = cu.ctypes.c_uint64()
        space.context.make_current()
        cu.check(lib.cuMemAlloc_v2(cu.ctypes.byref(ptr), max(size, 1)), "cuMemAlloc")
        self.address = ptr.value
        cu.check(lib.cuMemsetD8_v2(self.address, 0, max(size, 1)), "cuMemsetD8")

    def __del__(self):
        if self.address is not None and cu.api() is not None:
            try:
                self.space.context.make_current()
                cu.api().cuMemFree_v2(self.address)
            except Exception:        # at interpreter exit the driver may be gone: nothing to do
                pass


class CudaSpace(MemorySpace):
    host_addressable = False

    def __init__(self, index, context):
        super().__init__(f"cuda:{index}")
        self.context = context
        context.on_break.append(self.lose_contents)

    def allocate(self, size):
        owner = DeviceAllocation(self, size)
        return owner, owner.address

    def set_transfer(self, command, dst_address, src_address, size, source, destination):
        if destination is self and source.host_addressable:
            copy = _host_to_device
        elif source is self and destination.host_addressable:
            copy = _device_to_host
        else:
            copy = _device_to_device
        context = self.context

        def transfer():                  # (addresses now: device memory is allocated here)
            dst, src = dst_address(), src_address()
            lane = streams.lane(context)
            return lane.run(lambda stream: copy(lane, dst, src, size, stream), "transfer")
        command.set_action(faults.contained(context, "transfer", transfer))


class Staging:
    """A lane's two pinned host buffers, each with an event marking when the GPU is done with it:
    a large host transfer goes through them chunk by chunk, the host's copy into (or out of) one
    overlapping the GPU's DMA from (or into) the other. Pageable memory cannot be the target of
    an asynchronous DMA; pinned memory is, at the bus's full rate."""

    def __init__(self):
        lib = cu.api()
        self.buffers, self.events = [], []
        for _ in range(2):
            p, e = ctypes.c_void_p(), ctypes.c_void_p()
            cu.check(lib.cuMemHostAlloc(ctypes.byref(p), STAGING_CHUNK, 0), "cuMemHostAlloc")
            cu.check(lib.cuEventCreate(ctypes.byref(e), cu.EVENT_DISABLE_TIMING), "cuEventCreate")
            self.buffers.append(p.value)
            self.events.append(e)


def _staging(lane):
    if lane.staging is None:
        lane.staging = Staging()
    return lane.staging


def _chunks(size):
    return [(offset, min(STAGING_CHUNK, size - offset)) for offset in range(0, size, STAGING_CHUNK)]


def _host_to_device(lane, dst, src, size, stream):
    lib = cu.api()
    if size <= DIRECT_LIMIT:        # the driver's own staging: one call
        cu.check(lib.cuMemcpyHtoDAsync_v2(dst, src, size, stream), "cuMemcpyHtoDAsync")
        return
    staging = _staging(lane)
    for i, (offset, n) in enumerate(_chunks(size)):
        buffer, event = staging.buffers[i % 2], staging.events[i % 2]
        if i >= 2:                    # its previous chunk has left it
            cu.check(lib.cuEventSynchronize(event), "transfer to the GPU")
        ctypes.memmove(buffer, src + offset, n)
        cu.check(lib.cuMemcpyHtoDAsync_v2(dst + offset, buffer, n, stream), "cuMemcpyHtoDAsync")
        cu.check(lib.cuEventRecord(event, stream), "cuEventRecord")


def _device_to_host(lane, dst, src, size, stream):
    lib = cu.api()
    if size <= DIRECT_LIMIT:
        cu.check(lib.cuMemcpyDtoHAsync_v2(dst, src, size, stream), "cuMemcpyDtoHAsync")
        return
    staging = _staging(lane)
    chunks = _chunks(size)

    def fetch(i):                     # the GPU copies chunk i into its buffer
        offset, n = chunks[i]
        cu.check(lib.cuMemcpyDtoHAsync_v2(staging.buffers[i % 2], src + offset, n, stream),
                 "cuMemcpyDtoHAsync")
        cu.check(lib.cuEventRecord(staging.events[i % 2], stream), "cuEventRecord")
    fetch(0)
    for i, (offset, n) in enumerate(chunks):
        if i + 1 < len(chunks):       # (into the other buffer, emptied by the previous round)
            fetch(i + 1)
        cu.check(lib.cuEventSynchronize(staging.events[i % 2]), "transfer from the GPU")
        ctypes.memmove(dst + offset, staging.buffers[i % 2], n)


def _device_to_device(lane, dst, src, size, stream):
    cu.check(cu.api().cuMemcpyAsync(dst, src, size, stream), "cuMemcpyAsync")
