"""Faults in kernel code (native: sched/faults.pxi; docs/runtime.md, "Faults in kernels").

A hardware fault while a thread runs kernel code ends that command with CL_OUT_OF_RESOURCES and
one line on stderr; the thread and the host go on. Faults elsewhere go to the handlers that were
installed before ours.

    keep_fault_guard_first()    put our handler in front again where other code installed
                                signal handlers over it (contexts, builds, libclang's index)
    fault_guard_installed()     whether ours is the first for every fault signal
"""
from pyplat.runtime._sched import fault_guard_installed, keep_fault_guard_first  # noqa: F401
