"""Memory spaces: where a device's buffers live (docs/devices.md, "Memory").

Every device declares its space. CPU devices share the host's (`HOST`): a buffer's bytes are
the host memory the program maps, and nothing ever moves. A device with its own memory has a
space of its own: a buffer gets an allocation there when a command on that device first uses it,
and the core (core/migration.py) makes transfers, as commands in the event graph, when a command
needs the contents where they are not.

A space says how to allocate and free, and how to set a transfer command's payload between two
addresses of spaces it can reach. Spaces of the CPU device classes are all host-addressable, so
their transfers are the runtime's copy commands.

A space can lose everything it holds at once (a GPU whose context a kernel fault broke): `lose_contents` tells the listeners (the core's migration registers one) so that no
command reads what is gone.
"""
from pyplat.runtime.host_memory import HostMemory

ALIGNMENT = 128   # bytes; reported as CL_DEVICE_MEM_BASE_ADDR_ALIGN (in bits)


def aligned_allocation(size):
    """Zeroed host memory of `size` bytes aligned to ALIGNMENT: (owner, address)."""
    owner = HostMemory(size, ALIGNMENT)
    return owner, owner.address


class MemorySpace:
    """A space of host-addressable memory. `shares_host`: its addresses are the host's buffers
    themselves (the host space); otherwise a buffer has an allocation of its own here.
    `host_addressable`: the host can read and write its addresses (spaces of device memory are
    not: their subclasses say so, and make their own transfers)."""

    host_addressable = True

    def __init__(self, name, shares_host=False):
        self.name = name
        self.shares_host = shares_host
        self.loss_listeners = []

    def lose_contents(self, reason):
        """Every allocation made here is gone or unreadable: each listener is called with
        (space, reason)."""
        for listener in list(self.loss_listeners):
            listener(self, reason)

    def allocate(self, size):
        """(owner, address) of `size` zeroed bytes; dropping the owner frees them."""
        return aligned_allocation(size)

    def set_transfer(self, command, dst_address, src_address, size, source, destination):
        """Make `command` copy `size` bytes from space `source` to space `destination` (one of
        them this one), addresses given as callables: host memory's are taken now, for a native
        copy."""
        command.set_copy(dst_address(), src_address(), size)

    def __repr__(self):
        return f"<MemorySpace {self.name}>"


HOST = MemorySpace("host", shares_host=True)
