"""Helpers of the native fast path's tests (pyplat/api/_native.pyx, native_*.pxi): the layout of
a handle as icd/pyplat_handle.h declares it, a one-dimensional launch through the C API, queues
made by the native entry, queue and context counts read back."""
import ctypes
import time

from pyplat import cl
from pyplat.api import _native, handles
from support.capi import CL, addr

S, U32, U64, I32 = ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32
DEFER_HANDLE = 1                       # icd/pyplat_handle.h's PYPLAT_DEFER_HANDLE


class HandleStruct(ctypes.Structure):       # icd/pyplat_handle.h's struct pyplat_handle
    _fields_ = [("dispatch", ctypes.c_void_p), ("magic", ctypes.c_uint32),
                ("kind", ctypes.c_uint32), ("serial", ctypes.c_uint64)]


def launch(q, k, n, local=None, waits=(), want_event=True):
    g = (ctypes.c_size_t * 1)(n)
    lo = (ctypes.c_size_t * 1)(local) if local else None
    wl = (ctypes.c_size_t * max(1, len(waits)))(*waits)
    ev = ctypes.c_size_t()
    code = CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), addr(lo), len(waits), addr(wl) if waits else 0,
                                     addr(ev) if want_event else 0)
    return code, ev.value


def native_queue(ctx, dev, properties=0, with_list=True):
    """A queue made by the native entry (never through Python)."""
    entries = _native.fast_path_entries()
    e = I32(12345)
    if with_list:
        plist = (U64 * 3)(cl.CL_QUEUE_PROPERTIES, properties, 0)
        create = ctypes.CFUNCTYPE(S, S, S, S, S)(entries["clCreateCommandQueueWithProperties"])
        q = create(ctx, dev, addr(plist), addr(e))
    else:
        create = ctypes.CFUNCTYPE(S, S, S, U64, S)(entries["clCreateCommandQueue"])
        q = create(ctx, dev, properties, addr(e))
    assert q not in (0, DEFER_HANDLE), "the native entry did not answer"
    assert e.value == cl.CL_SUCCESS and handles.peek(q) is None
    return q


def queue_info(q, param, ctype=S):
    v = ctype()
    assert CL.clGetCommandQueueInfo(q, param, ctypes.sizeof(v), addr(v), 0) == cl.CL_SUCCESS
    return v.value


def context_refs(ctx):
    v = U32()
    assert CL.clGetContextInfo(ctx, cl.CL_CONTEXT_REFERENCE_COUNT, 4, addr(v), 0) == cl.CL_SUCCESS
    return v.value


def settled_context_refs(ctx, timeout=5.0):
    """The context's count once the releases earlier tests left pending are done: a released
    queue gives its context reference back when its commands have finished (the reaper, every
    few ms), later on a loaded machine."""
    last, end = context_refs(ctx), time.monotonic() + timeout
    while time.monotonic() < end:
        time.sleep(0.05)
        now = context_refs(ctx)
        if now == last:
            break
        last = now
    return last
