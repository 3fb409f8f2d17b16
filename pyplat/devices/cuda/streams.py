"""Streams and events: how the cuda class's commands reach the GPU and learn they are done.

Commands run as actions on the runtime's pool threads (docs/devices.md, "The cuda class"). Each
thread that works for a GPU has a lane there: a non-blocking CUDA stream of its own and two
events. A command puts its work on the lane's stream between the two events and waits for the
second: commands of different pool threads (an out-of-order queue's, other queues') run on
different streams, so the GPU overlaps them, and the events give the command's run time on the
GPU's own clock (its profiling span). The wait is `cuEventSynchronize`, a ctypes call: the GIL
is released while the GPU works.
"""
import ctypes
import threading

from pyplat.devices.cuda import driver_api as cu


class Lane:
    """One thread's stream and timing events on one GPU's primary context."""

    def __init__(self, context):
        lib = cu.api()
        context.make_current()
        self.context = context
        self.stream = ctypes.c_void_p()
        cu.check(lib.cuStreamCreate(ctypes.byref(self.stream), cu.STREAM_NON_BLOCKING), "cuStreamCreate")
        self.start, self.end = ctypes.c_void_p(), ctypes.c_void_p()
        for e in (self.start, self.end):
            cu.check(lib.cuEventCreate(ctypes.byref(e), cu.EVENT_DEFAULT), "cuEventCreate")
        self.staging = None          # pinned host buffers for transfers (memory.py), when needed

    def run(self, work, what):
        """Put `work(stream)` on the stream between the events, wait for it; returns the GPU's
        time for it in nanoseconds. CudaError if the work or the GPU failed."""
        lib = cu.api()
        self.context.make_current()
        cu.check(lib.cuEventRecord(self.start, self.stream), "cuEventRecord")
        work(self.stream)
        cu.check(lib.cuEventRecord(self.end, self.stream), "cuEventRecord")
        cu.check(lib.cuEventSynchronize(self.end), what)
        ms = ctypes.c_float()
        cu.check(lib.cuEventElapsedTime(ctypes.byref(ms), self.start, self.end), "cuEventElapsedTime")
        return int(ms.value * 1e6)


_lanes = threading.local()


def lane(context):
    """The calling thread's lane on `context` (made on first use; kept for the thread's life:
    pool threads live as long as the process)."""
    table = getattr(_lanes, "by_context", None)
    if table is None:
        table = _lanes.by_context = {}
    found = table.get(context.handle.value)
    if found is None:
        found = table[context.handle.value] = Lane(context)
    return found
