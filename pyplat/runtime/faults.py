"""Faults in kernel code (native: sched/faults.pxi; docs/runtime.md, "Faults in kernels").

A hardware fault while a thread runs kernel code ends that command with CL_OUT_OF_RESOURCES and
one line on stderr; the thread and the host go on. Faults elsewhere go to the handlers that were
installed before ours.

    keep_fault_guard_first()    put our handler in front again where other code installed
                                signal handlers over it (contexts, builds, libclang's index)
    fault_guard_installed()     whether ours is the first for every fault signal
    CodeLines(start, size, rows, files)
                                a program's line table (-g), registered while the object lives,
                                so that a fault report names the source line (code_lines.pxi)
    code_line(pc)               "file:line:column" of a registered address, or None
"""
from pyplat.runtime._sched import (CodeLines, code_line, fault_guard_installed,  # noqa: F401
                                   keep_fault_guard_first)
