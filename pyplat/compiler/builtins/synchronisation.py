"""Synchronisation and memory fences (OpenCL C spec, "Synchronization Functions", "Legacy
Explicit Memory Fence Functions"). barrier() and work_group_barrier() are not lowered here: the
front end makes them barrier statements and barriers.py splits the kernel at them. One thread
runs a whole work-group in program order, so the fences need no code."""
from .registry import builtin


@builtin("mem_fence", "read_mem_fence", "write_mem_fence")
def mem_fence(g, n, name):
    return None
