"""A CUDA device's memory space: buffers in device memory (cuMemAlloc), zeroed when made;
transfers with cuMemcpy, which tells host from device addresses by itself (unified addressing,
every GPU since Fermi on 64-bit hosts). The host cannot address this memory: the API's reads,
writes, fills and copies work on host copies, and only kernels and transfers touch it
(docs/devices.md, "Memory")."""
from pyplat.devices.cuda import driver_api as cu
from pyplat.devices.spaces import MemorySpace


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

    def allocate(self, size):
        owner = DeviceAllocation(self, size)
        return owner, owner.address

    def set_transfer(self, command, dst_address, src_address, size):
        context = self.context

        def transfer():                  # (addresses now: device memory is allocated here)
            dst, src = dst_address(), src_address()
            lib = cu.api()
            context.make_current()
            cu.check(lib.cuMemcpy(dst, src, size), "cuMemcpy")
        command.set_action(transfer)
