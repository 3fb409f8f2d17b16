"""Synchronisation and memory fences (OpenCL C spec, "Synchronization Functions", "Legacy
Explicit Memory Fence Functions"). barrier() and work_group_barrier() are not lowered here: the
front end makes them barrier statements and barriers.py splits the kernel at them. One thread
runs a whole work-group in program order on the CPU, so there the fences need no code
(ModuleGen.memory_fence); a target running work-items in parallel emits a fence."""
from .registry import builtin


@builtin("mem_fence", "read_mem_fence", "write_mem_fence")
def mem_fence(g, n, name):
    g.mg.memory_fence(g.b)
    return None
