"""A GPU fault ends commands, not the program (issue 16's containment, on the GPU).

A kernel that faults on an NVIDIA GPU (an illegal or misaligned address, a trap) leaves the
process's CUDA context broken: every later call in it fails with the same error, and CUDA offers
no way back short of ending the process (a primary-context reset does not clear it; checked on
an H100 with driver 580). So the command whose work met the error fails with CL_OUT_OF_RESOURCES
and one line on stderr naming it; the context is marked broken (PrimaryContext.mark_broken); its
memory space tells the core, which marks the ranges whose only current copy was on the GPU as
lost (core/migration.py: commands that need them fail; ranges current on the host stay readable);
and every later command on that GPU fails at once with the reason, without touching CUDA. The
host program, its CPU devices and its data elsewhere carry on. Other CUDA errors (out of memory,
a bad launch) end their own command and nothing else.
"""
import sys

from pyplat import cl
from pyplat.devices.cuda import driver_api as cu

# CUresult values after which the context cannot be used again (cuda.h).
BROKEN_CONTEXT = {
    700: "illegal address", 710: "device-side assert", 714: "hardware stack error",
    715: "illegal instruction", 716: "misaligned address", 717: "invalid address space",
    718: "invalid program counter", 719: "launch failed",
}
CUDA_ERROR_OUT_OF_MEMORY = 2


def contained(context, what, action):
    """`action`, run so that a CUDA error fails its command (a CL error code returned) instead of
    escaping, and a fault that breaks the context is recorded as such."""
    def run():
        if context.broken is not None:
            sys.stderr.write(f"pyplat: {what} not run: {context.name} is unusable in this process "
                             f"since {context.broken}\n")
            return cl.CL_OUT_OF_RESOURCES
        try:
            return action()
        except cu.CudaError as e:
            return failed(context, what, e)
    return run


def hook(context):
    """The stream driver's fault hook for a GPU (runtime/sched/stream_driver.pxi): a launch or
    its wait returned CUresult `code`: the status its command fails with."""
    def fault(what, code):
        return failed(context, what, cu.CudaError(code, what))
    return fault


def failed(context, what, error):
    """A CudaError ended `what`: say so (a fault that breaks the context: marked, once, with what
    it costs) and return the CL error its command fails with."""
    note = ""
    if error.code in BROKEN_CONTEXT and context.mark_broken(f"{what} faulted ({error.name})"):
        note = ("; CUDA cannot recover from this in a running process: later commands on "
                "this GPU fail, and buffers whose only current copy was on it are lost")
    sys.stderr.write(f"pyplat: {what} failed on {context.name}: {error}{note}\n")
    return (cl.CL_MEM_OBJECT_ALLOCATION_FAILURE if error.code == CUDA_ERROR_OUT_OF_MEMORY
            else cl.CL_OUT_OF_RESOURCES)
