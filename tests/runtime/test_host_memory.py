"""Host memory for buffers (runtime/host_memory.py): zeroed, aligned, and not numpy's, so a C
host program loading PyPlat does not import numpy (~90 ms at start, a BLAS thread per core)."""
import ctypes
import subprocess
import sys

from pyplat.devices.spaces import ALIGNMENT, aligned_allocation
from pyplat.runtime.host_memory import HostMemory


def test_allocations_are_zeroed_and_aligned():
    for size in (1, 100, 4096, 3 << 20):
        owner, address = aligned_allocation(size)
        assert address % ALIGNMENT == 0
        assert ctypes.string_at(address, size) == bytes(size)
        ctypes.memset(address, 0xAB, size)                 # all of it is ours to write
        assert ctypes.string_at(address + size - 1, 1) == b"\xab"


def test_host_memory_reports_its_size_and_refuses_impossible_sizes():
    m = HostMemory(1000, 4096)
    assert m.size == 1000 and m.address % 4096 == 0
    try:
        HostMemory((1 << 64) - 16, 128)
    except MemoryError:
        pass
    else:
        raise AssertionError("an allocation larger than memory succeeded")


def test_the_platform_does_not_import_numpy():
    code = ("import sys\n"
            "from pyplat.api import bridge\n"
            "from pyplat.devices.spaces import aligned_allocation\n"
            "import pyplat.core.memory, pyplat.core.kernel, pyplat.core.queue\n"
            "aligned_allocation(64)\n"
            "print([m for m in sys.modules if m == 'numpy' or m.startswith('numpy.')])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
