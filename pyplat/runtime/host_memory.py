"""Host memory for buffers (native: _sched.pyx, sched/host_memory.pxi).

    HostMemory(size, alignment)   zeroed bytes at .address (a multiple of alignment), huge
                                  pages asked for where large; freed when the object goes
"""
from pyplat.runtime._sched import HostMemory  # noqa: F401
