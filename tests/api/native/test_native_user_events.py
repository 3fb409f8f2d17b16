"""Native user events (pyplat/api/native_user_events.pxi): clCreateUserEvent and
clSetUserEventStatus answered without the GIL, their retains and releases native, and the events
usable everywhere a user event is -- in the wait lists of native commands and launches, in
clWaitForEvents, and, once a Python entry adopts them, in info queries, callbacks and counts."""
import ctypes
import threading
import time

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native, handles
from support.c_programs import build_c_program
from support.capi import CL, addr, err
from support.clobjects import (context_and_program, create_kernel, event_status, make_buffer, make_context,
                               make_queue, read, set_arg)

SOURCE = b"__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }"

if not CL._direct.get("clCreateUserEvent") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

S, U32, I32 = ctypes.c_size_t, ctypes.c_uint32, ctypes.c_int32
_NATIVE = _native.fast_path_entries()
native_create = ctypes.CFUNCTYPE(S, S, S)(_NATIVE["clCreateUserEvent"])
native_set = ctypes.CFUNCTYPE(I32, S, I32)(_NATIVE["clSetUserEventStatus"])
native_release = ctypes.CFUNCTYPE(I32, S)(_NATIVE["clReleaseEvent"])
native_retain = ctypes.CFUNCTYPE(I32, S)(_NATIVE["clRetainEvent"])
DEFER_HANDLE = 1


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


def wl(events):
    return (S * max(1, len(events)))(*events)


def user_event(ctx):
    """A user event made by the native entry (never through Python)."""
    e = err()
    u = native_create(ctx, addr(e))
    assert u not in (0, DEFER_HANDLE) and e.value == cl.CL_SUCCESS
    return u


def info_u32(ev, param):
    v = U32()
    assert CL.clGetEventInfo(ev, param, 4, addr(v), 0) == cl.CL_SUCCESS
    return v.value


def context_refs(ctx):
    v = U32()
    assert CL.clGetContextInfo(ctx, cl.CL_CONTEXT_REFERENCE_COUNT, 4, addr(v), 0) == cl.CL_SUCCESS
    return v.value


def test_the_entries_answer_natively_without_adopting(env):
    ctx, dev, prog = env
    u = user_event(ctx)
    assert handles.peek(u) is None                            # no core object: native
    assert event_status(u) == cl.CL_SUBMITTED                # (the native status query)
    assert native_retain(u) == 0 and native_release(u) == 0
    assert native_set(u, cl.CL_COMPLETE) == 0
    assert event_status(u) == cl.CL_COMPLETE
    assert handles.peek(u) is None
    assert native_release(u) == 0
    # a bad context: refused here (native_handle_rules.pxi) as by the public entry
    e = err()
    assert native_create(12345, addr(e)) == 0 and e.value == cl.CL_INVALID_CONTEXT     # (refused natively)
    e.value = 12345
    assert CL.clCreateUserEvent(12345, addr(e)) == 0 and e.value == cl.CL_INVALID_CONTEXT


def test_a_user_event_gates_native_writes_and_launches(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    a, b = make_buffer(ctx, 64), make_buffer(ctx, 64)
    zeros = np.zeros(16, dtype=np.int32)
    assert CL.clEnqueueWriteBuffer(q, a, 1, 0, 64, addr(zeros), 0, 0, 0) == 0
    assert CL.clEnqueueWriteBuffer(q, b, 1, 0, 64, addr(zeros), 0, 0, 0) == 0
    k = create_kernel(prog, b"inc")
    set_arg(k, 0, a)
    data = np.arange(16, dtype=np.int32) + 7
    for _ in range(2):                                        # (the second: everything primed)
        u = user_event(ctx)
        w, launch = S(), S()
        assert CL.clEnqueueWriteBuffer(q, b, 0, 0, 64, addr(data), 1, addr(wl([u])), addr(w)) == 0
        size = S(16)
        assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(size), 0, 1, addr(wl([u])), addr(launch)) == 0
        assert handles.peek(w.value) is None and handles.peek(launch.value) is None   # native commands
        time.sleep(0.05)
        assert event_status(w.value) > cl.CL_COMPLETE and event_status(launch.value) > cl.CL_COMPLETE
        before = np.zeros(16, dtype=np.int32)
        q2 = make_queue(ctx, dev)
        assert CL.clEnqueueReadBuffer(q2, b, 1, 0, 64, addr(before), 0, 0, 0) == 0
        assert before.tolist() == zeros.tolist()              # nothing ran behind the unset event
        assert native_retain(u) == 0
        assert native_set(u, cl.CL_COMPLETE) == 0
        assert CL.clWaitForEvents(2, addr(wl([w.value, launch.value]))) == cl.CL_SUCCESS
        assert read(q2, b, 64, np.int32).tolist() == data.tolist()
        CL.clReleaseCommandQueue(q2)
        for ev in (w.value, launch.value, u, u):
            assert CL.clReleaseEvent(ev) == 0
        zeros = data
    assert read(q, a, 64, np.int32).tolist() == [2] * 16
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(a)
    CL.clReleaseMemObject(b)
    CL.clReleaseCommandQueue(q)


def test_an_error_status_fails_the_dependants(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    a = make_buffer(ctx, 64)
    data = np.arange(16, dtype=np.int32)
    assert CL.clEnqueueWriteBuffer(q, a, 1, 0, 64, addr(data), 0, 0, 0) == 0
    k = create_kernel(prog, b"inc")
    set_arg(k, 0, a)
    u = user_event(ctx)
    w, launch, marker = S(), S(), S()
    zeros = np.zeros(16, dtype=np.int32)
    assert CL.clEnqueueWriteBuffer(q, a, 0, 0, 64, addr(zeros), 1, addr(wl([u])), addr(w)) == 0
    size = S(16)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(size), 0, 1, addr(wl([u])), addr(launch)) == 0
    assert CL.clEnqueueMarkerWithWaitList(q, 1, addr(wl([launch.value])), addr(marker)) == 0
    assert native_set(u, -55) == 0
    fail = cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    assert CL.clWaitForEvents(1, addr(wl([marker.value]))) == fail
    assert CL.clWaitForEvents(1, addr(wl([u]))) == fail
    assert event_status(u) == -55
    for ev in (w.value, launch.value, marker.value):
        assert event_status(ev) == fail
    assert read(q, a, 64, np.int32).tolist() == data.tolist()     # neither the write nor the launch ran
    # a command enqueued after the failure fails at once
    assert CL.clEnqueueWriteBuffer(q, a, 0, 0, 64, addr(zeros), 1, addr(wl([u])), addr(w)) == 0
    assert CL.clWaitForEvents(1, addr(wl([w.value]))) == fail
    assert read(q, a, 64, np.int32).tolist() == data.tolist()
    for ev in (w.value, launch.value, marker.value, u):
        assert CL.clReleaseEvent(ev) == 0
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(a)
    CL.clReleaseCommandQueue(q)


def test_adoption_keeps_info_callbacks_and_status(env):
    ctx, dev, prog = env
    # adopted before it is set: info, a callback, then the set (now the Python entry's)
    u = user_event(ctx)
    assert info_u32(u, cl.CL_EVENT_COMMAND_TYPE) == cl.CL_COMMAND_USER
    assert handles.peek(u) is not None                       # adopted, same handle
    c = S()
    assert CL.clGetEventInfo(u, cl.CL_EVENT_CONTEXT, 8, addr(c), 0) == 0 and c.value == ctx
    assert CL.clGetEventInfo(u, cl.CL_EVENT_COMMAND_QUEUE, 8, addr(c), 0) == 0 and c.value == 0
    t = ctypes.c_uint64()
    assert (CL.clGetEventProfilingInfo(u, cl.CL_PROFILING_COMMAND_QUEUED, 8, addr(t), 0)
            == cl.CL_PROFILING_INFO_NOT_AVAILABLE)                # a user event has no queue
    seen = []
    callback = ctypes.CFUNCTYPE(None, S, I32, ctypes.c_void_p)(lambda ev, st, user: seen.append((ev, st)))
    assert CL.clSetEventCallback(u, cl.CL_COMPLETE, ctypes.cast(callback, ctypes.c_void_p).value, 0) == 0
    assert native_set(u, cl.CL_COMPLETE) == _native.DEFER       # adopted: Python's now
    assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == 0
    assert seen == [(u, cl.CL_COMPLETE)]
    assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == cl.CL_INVALID_OPERATION
    assert CL.clReleaseEvent(u) == 0
    # set natively first, adopted after: the Python side knows it was set
    u = user_event(ctx)
    assert native_set(u, -3) == 0
    seen.clear()
    assert CL.clSetEventCallback(u, cl.CL_COMPLETE, ctypes.cast(callback, ctypes.c_void_p).value, 0) == 0     # adopts
    assert seen == [(u, -3)]                                  # a finished event calls at once
    assert event_status(u) == -3
    assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == cl.CL_INVALID_OPERATION
    assert CL.clReleaseEvent(u) == 0


def test_a_python_path_wait_list_adopts_it(env):
    """A blocking read with a wait list is the Python entry's: it adopts the native user event
    and waits for it, set natively from another thread meanwhile."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    a = make_buffer(ctx, 64)
    data = np.arange(16, dtype=np.int32) * 3
    assert CL.clEnqueueWriteBuffer(q, a, 1, 0, 64, addr(data), 0, 0, 0) == 0
    u = user_event(ctx)
    setter = threading.Timer(0.05, CL.clSetUserEventStatus, (u, cl.CL_COMPLETE))
    setter.start()
    got = np.zeros(16, dtype=np.int32)
    assert CL.clEnqueueReadBuffer(q, a, 1, 0, 64, addr(got), 1, addr(wl([u])), 0) == 0
    setter.join()
    assert got.tolist() == data.tolist()
    assert handles.peek(u) is not None                       # adopted by the Python entry
    assert event_status(u) == cl.CL_COMPLETE
    assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == cl.CL_INVALID_OPERATION
    assert CL.clReleaseEvent(u) == 0
    CL.clReleaseMemObject(a)
    CL.clReleaseCommandQueue(q)


def test_double_set_and_bad_status_are_the_python_entrys_errors(env):
    ctx, dev, prog = env
    u = user_event(ctx)
    assert native_set(u, 1) == _native.DEFER                 # not CL_COMPLETE or negative
    assert handles.peek(u) is None
    assert CL.clSetUserEventStatus(u, cl.CL_SUBMITTED) == cl.CL_INVALID_VALUE
    assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == 0
    assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == cl.CL_INVALID_OPERATION
    assert CL.clSetUserEventStatus(u, -1) == cl.CL_INVALID_OPERATION
    assert CL.clReleaseEvent(u) == 0
    u = user_event(ctx)                                       # set natively, second set through C
    assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == 0 and handles.peek(u) is None
    assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == cl.CL_INVALID_OPERATION
    assert CL.clReleaseEvent(u) == 0
    # not a user event: a marker's event
    q = make_queue(ctx, dev)
    m = S()
    assert CL.clEnqueueMarkerWithWaitList(q, 0, 0, addr(m)) == 0
    assert CL.clSetUserEventStatus(m.value, cl.CL_COMPLETE) == cl.CL_INVALID_EVENT
    assert CL.clReleaseEvent(m.value) == 0
    CL.clReleaseCommandQueue(q)


def test_released_before_set():
    ctx, dev = make_context()                                # (its count: no queue's hold in it)
    base = context_refs(ctx)
    u = user_event(ctx)
    assert context_refs(ctx) == base + 1                     # the event holds its context
    assert CL.clRetainEvent(u) == 0 and CL.clReleaseEvent(u) == 0
    assert native_set(u, cl.CL_COMPLETE) == 0                # one reference left: still settable
    assert native_release(u) == 0
    assert context_refs(ctx) == base
    # released unset: the handle is dead for every entry
    u = user_event(ctx)
    assert native_release(u) == 0
    assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == cl.CL_INVALID_EVENT
    st = I32()
    assert CL.clGetEventInfo(u, cl.CL_EVENT_COMMAND_EXECUTION_STATUS, 4, addr(st), 0) == cl.CL_INVALID_EVENT
    assert CL.clReleaseEvent(u) == cl.CL_INVALID_EVENT
    assert CL.clWaitForEvents(1, addr(wl([u]))) == cl.CL_INVALID_EVENT
    assert context_refs(ctx) == base
    assert CL.clReleaseContext(ctx) == 0


def test_reference_counts_across_adoption():
    ctx, dev = make_context()
    base = context_refs(ctx)
    u = user_event(ctx)
    assert native_retain(u) == 0 and native_retain(u) == 0
    assert info_u32(u, cl.CL_EVENT_REFERENCE_COUNT) == 3     # adopted with its count
    assert context_refs(ctx) == base + 1                     # the reference is the UserEvent's now
    assert CL.clReleaseEvent(u) == 0
    assert info_u32(u, cl.CL_EVENT_REFERENCE_COUNT) == 2
    assert CL.clRetainEvent(u) == 0
    assert info_u32(u, cl.CL_EVENT_REFERENCE_COUNT) == 3
    for _ in range(2):
        assert CL.clReleaseEvent(u) == 0
    assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == 0
    assert CL.clReleaseEvent(u) == 0
    assert CL.clReleaseEvent(u) == cl.CL_INVALID_EVENT
    assert context_refs(ctx) == base
    assert CL.clReleaseContext(ctx) == 0


def test_the_context_released_first(env):
    """The event's context reference is its context's last: the event's last release is the
    Python entry's, which lets the context go."""
    ctx, dev = make_context()
    u = user_event(ctx)
    assert CL.clReleaseContext(ctx) == 0                     # the application's: the event's remains
    assert native_set(u, cl.CL_COMPLETE) == 0
    assert native_release(u) == _native.DEFER                # the context's last reference
    assert CL.clReleaseEvent(u) == 0
    v = U32()
    assert CL.clGetContextInfo(ctx, cl.CL_CONTEXT_REFERENCE_COUNT, 4, addr(v), 0) == cl.CL_INVALID_CONTEXT


def test_markers_behind_user_events_and_at_once(env):
    """A native marker with nothing to wait for is complete when the call returns (it needs no
    worker); one behind a user event completes when the event is set, or fails with it."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    m = S()
    assert CL.clEnqueueMarkerWithWaitList(q, 0, 0, addr(m)) == 0
    assert CL.clFinish(q) == 0 and CL.clReleaseEvent(m.value) == 0
    for _ in range(3):
        assert CL.clEnqueueMarkerWithWaitList(q, 0, 0, addr(m)) == 0
        assert handles.peek(m.value) is None                  # native
        assert event_status(m.value) == cl.CL_COMPLETE
        assert CL.clReleaseEvent(m.value) == 0
    for status in (cl.CL_COMPLETE, -9):
        u = user_event(ctx)
        gated, after = S(), S()
        assert CL.clEnqueueMarkerWithWaitList(q, 1, addr(wl([u])), addr(gated)) == 0
        assert CL.clEnqueueBarrierWithWaitList(q, 0, 0, addr(after)) == 0
        time.sleep(0.02)
        assert event_status(gated.value) > cl.CL_COMPLETE and event_status(after.value) > cl.CL_COMPLETE
        assert native_set(u, status) == 0
        want = cl.CL_SUCCESS if status == cl.CL_COMPLETE else cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
        assert CL.clWaitForEvents(1, addr(wl([gated.value]))) == want
        assert CL.clWaitForEvents(1, addr(wl([after.value]))) == cl.CL_SUCCESS   # order: no failure
        for ev in (gated.value, after.value, u):
            assert CL.clReleaseEvent(ev) == 0
    CL.clReleaseCommandQueue(q)


C_PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#define CHECK(x) do { cl_int r_ = (x); if (r_ != CL_SUCCESS) { printf("%s: %d\n", #x, r_); return 1; } } while (0)
static const char *SRC = "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }";
static cl_event gate;
static void *setter(void *status) { usleep(20000); clSetUserEventStatus(gate, (cl_int)(long)status); return NULL; }
int main(void) {
    cl_platform_id ps[8]; cl_uint np = 0; char name[64]; cl_platform_id p = 0;
    clGetPlatformIDs(8, ps, &np);
    for (cl_uint i = 0; i < np; i++) {
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, "PyPlat")) p = ps[i];
    }
    if (!p) { printf("no PyPlat\n"); return 1; }
    cl_device_id dev; cl_int e;
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e); CHECK(e);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e); CHECK(e);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e); CHECK(e);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "inc", &e); CHECK(e);
    int host[64] = {0}, got[64];
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &e); CHECK(e);
    CHECK(clSetKernelArg(k, 0, sizeof m, &m));
    size_t n = 64;
    cl_uint before = 0, after = 0;
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof before, &before, NULL));
    for (int round = 0; round < 20; round++) {
        long status = round % 4 == 3 ? -7 : CL_COMPLETE;
        gate = clCreateUserEvent(ctx, &e); CHECK(e);
        cl_event launch, w;
        for (int i = 0; i < 64; i++) host[i] = round;
        CHECK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, sizeof host, host, 1, &gate, &w));
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 1, &gate, &launch));
        pthread_t t; pthread_create(&t, NULL, setter, (void *)status);
        cl_int waited = clWaitForEvents(1, &launch);
        pthread_join(t, NULL);
        cl_int want = status < 0 ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS;
        if (waited != want) { printf("round %d: wait gave %d, want %d\n", round, waited, want); return 1; }
        if (clSetUserEventStatus(gate, CL_COMPLETE) != CL_INVALID_OPERATION) { printf("set twice\n"); return 1; }
        CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
        if (status == CL_COMPLETE && got[5] != round + 1) { printf("round %d: %d\n", round, got[5]); return 1; }
        if (status < 0 && got[5] != (round > 0 ? round : 0)) { printf("round %d ran: %d\n", round, got[5]); return 1; }
        CHECK(clReleaseEvent(w)); CHECK(clReleaseEvent(launch)); CHECK(clReleaseEvent(gate));
    }
    for (int i = 0; i < 20000; i++) {
        cl_event u = clCreateUserEvent(ctx, &e); CHECK(e);
        CHECK(clRetainEvent(u)); CHECK(clReleaseEvent(u));
        if (i & 1) CHECK(clSetUserEventStatus(u, CL_COMPLETE));
        CHECK(clReleaseEvent(u));
    }
    CHECK(clFinish(q));     /* (the queue's hold for native events goes with its clean-up) */
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof after, &after, NULL));
    if (after != before) { printf("context count %u, was %u\n", after, before); return 1; }
    CHECK(clReleaseMemObject(m)); CHECK(clReleaseKernel(k)); CHECK(clReleaseProgram(prog));
    CHECK(clReleaseCommandQueue(q)); CHECK(clReleaseContext(ctx));
    printf("ok\n");
    return 0;
}
"""


def test_user_events_from_a_c_program(run_with_pyplat, tmp_path):
    """Through the loader: user events gate a write and a launch, set from another thread, to
    CL_COMPLETE or an error; a second set is refused; create/set/release loops balance counts."""
    exe = build_c_program(tmp_path, "user_events", C_PROGRAM)
    result = run_with_pyplat([exe])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split() == ["ok"]
