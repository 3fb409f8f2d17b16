"""The runtime's native fast path of clEnqueueNDRangeKernel and its native events (runtime/_sched.pyx):
repeats of a launch the Python path validated are answered natively, events it hands out are
retained / released natively and adopted by the API layer on first use from Python; every answer
must be the one the Python path gives. capi calls the same direct C entries the shim installs."""
import ctypes
import time

import numpy as np
import pytest

from capi import CL, addr, err
from clobjects import make_buffer, make_context, make_queue, read
from pyplat import cl
from pyplat.api import handles
from test_programs_kernels import create_kernel, create_program, set_arg

SOURCE = b"""
__kernel void add(__global const int *a, __global int *b, int v) {
    size_t i = get_global_id(0);
    b[i] = a[i] + v;
}
__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }
"""

if not CL._direct.get("clEnqueueNDRangeKernel"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)


@pytest.fixture(scope="module")
def env():
    ctx, dev = make_context()
    prog = create_program(ctx, SOURCE)
    assert CL.clBuildProgram(prog, 0, 0, b"", 0, 0) == 0
    yield ctx, dev, prog
    CL.clReleaseProgram(prog)
    CL.clReleaseContext(ctx)


def launch(q, k, n, local=None, waits=(), want_event=True):
    g = (ctypes.c_size_t * 1)(n)
    lo = (ctypes.c_size_t * 1)(local) if local else None
    wl = (ctypes.c_size_t * max(1, len(waits)))(*waits)
    ev = ctypes.c_size_t()
    code = CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), addr(lo), len(waits), addr(wl) if waits else 0,
                                     addr(ev) if want_event else 0)
    return code, ev.value


def info_u32(fn, obj, param):
    v = ctypes.c_uint32()
    assert fn(obj, param, 4, addr(v), 0) == 0
    return v.value


def test_native_events_count_adopt_and_release(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    buf = make_buffer(ctx, 4 * 64)
    assert CL.clEnqueueFillBuffer(q, buf, addr(ctypes.c_int(0)), 4, 0, 4 * 64, 0, 0, 0) == 0
    set_arg(k, 0, buf)
    ctx_refs = info_u32(CL.clGetContextInfo, ctx, cl.CL_CONTEXT_REFERENCE_COUNT)
    code, first = launch(q, k, 64)                # the Python path: validates, primes the plan
    assert code == 0 and first in handles._live
    code, ev = launch(q, k, 64)                   # the native path: a native event
    assert code == 0 and ev not in handles._live
    assert CL.clRetainEvent(ev) == 0 and CL.clRetainEvent(ev) == 0 and CL.clReleaseEvent(ev) == 0
    # first use from Python adopts it, with the count the native side kept (1 + 2 - 1)
    assert info_u32(CL.clGetEventInfo, ev, cl.CL_EVENT_REFERENCE_COUNT) == 2
    assert ev in handles._live
    assert info_u32(CL.clGetEventInfo, ev, cl.CL_EVENT_COMMAND_TYPE) == cl.CL_COMMAND_NDRANGE_KERNEL
    evs = (ctypes.c_size_t * 2)(first, ev)
    assert CL.clWaitForEvents(2, addr(evs)) == 0
    assert info_u32(CL.clGetEventInfo, ev, cl.CL_EVENT_COMMAND_EXECUTION_STATUS) == cl.CL_COMPLETE
    for e in (first, ev, ev):
        assert CL.clReleaseEvent(e) == 0
    assert CL.clGetEventInfo(ev, cl.CL_EVENT_REFERENCE_COUNT, 4, addr(ctypes.c_uint32()), 0) == cl.CL_INVALID_EVENT
    # native events never adopted: released natively, then dead
    natives = [launch(q, k, 64)[1] for _ in range(50)]
    assert all(e not in handles._live for e in natives)
    assert CL.clFinish(q) == 0
    for e in natives:
        assert CL.clReleaseEvent(e) == 0
    assert CL.clReleaseEvent(natives[0]) == cl.CL_INVALID_EVENT
    assert CL.clRetainEvent(natives[-1]) == cl.CL_INVALID_EVENT
    assert read(q, buf, 4 * 64, np.int32).tolist() == [52] * 64
    # every event gone: the context's count is back where it was
    assert info_u32(CL.clGetContextInfo, ctx, cl.CL_CONTEXT_REFERENCE_COUNT) == ctx_refs
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_native_launches_follow_arguments_sizes_and_wait_lists(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    k = create_kernel(prog, b"add")
    n = 256
    a = np.arange(n, dtype=np.int32)
    ba = make_buffer(ctx, a.nbytes, cl.CL_MEM_READ_ONLY | cl.CL_MEM_COPY_HOST_PTR, a)
    outs = [make_buffer(ctx, a.nbytes) for _ in range(3)]
    e = err()
    user = CL.clCreateUserEvent(ctx, addr(e))
    assert e.value == 0
    set_arg(k, 0, ba)
    events = []
    for i, out in enumerate(outs):        # a chain gated by a user event, the arguments changing
        set_arg(k, 1, out)
        for v in (1, 2):
            set_arg(k, 2, ctypes.c_int(10 * i + v))
            code, ev = launch(q, k, n, 64, waits=[events[-1] if events else user])
            assert code == 0
            events.append(ev)
    # sizes and wait lists the native path must hand to the Python one for their error codes
    assert launch(q, k, n, 48)[0] == cl.CL_INVALID_WORK_GROUP_SIZE
    bad = (ctypes.c_size_t * 1)(12345)
    g = (ctypes.c_size_t * 1)(n)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 1, addr(bad), 0) == cl.CL_INVALID_EVENT_WAIT_LIST
    # the same with the launch's validated sizes: the native path must not read a foreign pointer
    lo = (ctypes.c_size_t * 1)(64)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), addr(lo), 1, addr(bad), 0) == \
        cl.CL_INVALID_EVENT_WAIT_LIST
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 1, 0, 0) == cl.CL_INVALID_EVENT_WAIT_LIST
    assert info_u32(CL.clGetEventInfo, events[-1], cl.CL_EVENT_COMMAND_EXECUTION_STATUS) != cl.CL_COMPLETE
    assert CL.clSetUserEventStatus(user, cl.CL_COMPLETE) == 0
    last = (ctypes.c_size_t * 1)(events[-1])
    assert CL.clWaitForEvents(1, addr(last)) == 0
    for i, out in enumerate(outs):
        assert read(q, out, a.nbytes, np.int32).tolist() == (a + 10 * i + 2).tolist()
    for ev in events + [user]:
        assert CL.clReleaseEvent(ev) == 0
    CL.clReleaseKernel(k)
    for b in [ba] + outs:
        CL.clReleaseMemObject(b)
    CL.clReleaseCommandQueue(q)


def test_failed_user_event_reaches_native_launches(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    buf = make_buffer(ctx, 4 * 16)
    set_arg(k, 0, buf)
    assert launch(q, k, 16)[0] == 0
    e = err()
    user = CL.clCreateUserEvent(ctx, addr(e))
    code, ev = launch(q, k, 16, waits=[user])
    assert code == 0 and ev not in handles._live
    assert CL.clSetUserEventStatus(user, -55) == 0
    evs = (ctypes.c_size_t * 1)(ev)
    assert CL.clWaitForEvents(1, addr(evs)) == cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    assert ctypes.c_int32(info_u32(CL.clGetEventInfo, ev, cl.CL_EVENT_COMMAND_EXECUTION_STATUS)).value < 0
    for x in (ev, user):
        CL.clReleaseEvent(x)
    CL.clFinish(q)
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_size_t, ctypes.c_void_p)


def test_buffers_of_native_launches_live_until_they_finish(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    buf = make_buffer(ctx, 4 * 16)
    fired = []
    cb = DESTRUCTOR(lambda mem, user: fired.append(mem))
    assert CL.clSetMemObjectDestructorCallback(buf, ctypes.cast(cb, ctypes.c_void_p).value, 0) == 0
    set_arg(k, 0, buf)
    e = err()
    user = CL.clCreateUserEvent(ctx, addr(e))
    assert launch(q, k, 16, waits=[user], want_event=False)[0] == 0      # Python path
    assert launch(q, k, 16, waits=[user], want_event=False)[0] == 0      # native
    assert CL.clReleaseMemObject(buf) == 0
    assert CL.clReleaseKernel(k) == 0
    assert not fired                          # pending launches keep it alive
    assert CL.clSetUserEventStatus(user, cl.CL_COMPLETE) == 0
    assert CL.clFinish(q) == 0
    for _ in range(200):                      # clean-up runs after completion (reap)
        if fired:
            break
        time.sleep(0.01)
    assert fired == [buf]
    CL.clReleaseEvent(user)
    CL.clReleaseCommandQueue(q)
