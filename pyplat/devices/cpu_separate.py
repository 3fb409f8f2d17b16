"""The `cpu-separate` device class: CPU execution, but memory of its own. Its buffers live in
allocations of the device's space, and every host access or use on another device goes
through the transfers the core makes (core/migration.py), as a GPU's would. It exists to test
the migration logic without a GPU, and must pass the conformance subset like any device."""
from pyplat.devices.cpu import CPU
from pyplat.devices.spaces import MemorySpace


class CPUSeparate(CPU):
    name = "cpu-separate"

    def __init__(self):
        self._spaces = {}

    def memory_space(self, index):
        """One space per device: two cpu-separate devices copy between them too."""
        if index not in self._spaces:
            self._spaces[index] = MemorySpace(f"cpu-separate:{index}")
        return self._spaces[index]

    def describe(self, index):
        info = super().describe(index)
        info["name"] = f"PyPlat CPU, own memory ({info['cpu_model']})"
        return info
