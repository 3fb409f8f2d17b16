"""Queues and events: ordering, user events, failure propagation, callbacks, profiling."""
import ctypes
import threading

import numpy as np
import pytest

from support.capi import CL, addr, err
from support.clobjects import event_status, make_buffer, make_context, make_queue, read
from pyplat import cl

EVENT_CB = ctypes.CFUNCTYPE(None, ctypes.c_size_t, ctypes.c_int32, ctypes.c_void_p)


@pytest.fixture(scope="module")
def ctx_dev():
    ctx, dev = make_context()
    yield ctx, dev
    CL.clReleaseContext(ctx)


def user_event(ctx):
    e = err()
    ue = CL.clCreateUserEvent(ctx, addr(e))
    assert e.value == 0
    return ue


def fill(q, buf, value, offset=0, size=4, waits=(), want_event=False):
    pattern = ctypes.c_int32(value)
    wl = (ctypes.c_size_t * max(len(waits), 1))(*waits)
    ev = ctypes.c_size_t()
    code = CL.clEnqueueFillBuffer(q, buf, addr(pattern), 4, offset, size, len(waits),
                                  addr(wl) if waits else 0, addr(ev) if want_event else 0)
    assert code == 0
    return ev.value


@pytest.mark.parametrize("props", [0, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE])
def test_user_event_gates_commands(ctx_dev, props):
    ctx, dev = ctx_dev
    q = make_queue(ctx, dev, props)
    buf = make_buffer(ctx, 16)
    ue = user_event(ctx)
    assert event_status(ue) == cl.CL_SUBMITTED
    ev = fill(q, buf, 5, waits=[ue], want_event=True)
    assert event_status(ev) > cl.CL_COMPLETE
    assert CL.clSetUserEventStatus(ue, cl.CL_COMPLETE) == 0
    evs = (ctypes.c_size_t * 1)(ev)
    assert CL.clWaitForEvents(1, addr(evs)) == 0
    assert event_status(ev) == cl.CL_COMPLETE
    assert read(q, buf, 4, np.int32)[0] == 5
    assert CL.clSetUserEventStatus(ue, cl.CL_COMPLETE) == cl.CL_INVALID_OPERATION
    for o in (ev, ue):
        CL.clReleaseEvent(o)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_in_order_queue_keeps_order(ctx_dev):
    ctx, dev = ctx_dev
    q = make_queue(ctx, dev)
    buf = make_buffer(ctx, 4)
    ue = user_event(ctx)
    fill(q, buf, 1, waits=[ue])
    for v in range(2, 50):
        fill(q, buf, v)                  # must all wait behind the gated first fill
    CL.clSetUserEventStatus(ue, cl.CL_COMPLETE)
    assert CL.clFinish(q) == 0
    assert read(q, buf, 4, np.int32)[0] == 49
    CL.clReleaseEvent(ue)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_failed_user_event_fails_dependants_transitively(ctx_dev):
    ctx, dev = ctx_dev
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    buf = make_buffer(ctx, 8)
    fill(q, buf, 0, size=8)
    CL.clFinish(q)
    ue = user_event(ctx)
    first = fill(q, buf, 7, waits=[ue], want_event=True)
    second = fill(q, buf, 9, offset=4, waits=[first], want_event=True)
    CL.clSetUserEventStatus(ue, -1234)
    evs = (ctypes.c_size_t * 1)(second)
    assert CL.clWaitForEvents(1, addr(evs)) == cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    assert event_status(first) == cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    assert event_status(second) < 0
    assert read(q, buf, 8, np.int32).tolist() == [0, 0]     # neither fill ran
    out = np.zeros(1, dtype=np.int32)
    wl = (ctypes.c_size_t * 1)(first)
    assert CL.clEnqueueReadBuffer(q, buf, 1, 0, 4, addr(out), 1, addr(wl), 0) == \
        cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    for o in (first, second, ue):
        CL.clReleaseEvent(o)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_callbacks_called_once_each_with_status(ctx_dev):
    ctx, dev = ctx_dev
    q = make_queue(ctx, dev)
    buf = make_buffer(ctx, 4)
    ue = user_event(ctx)
    ev = fill(q, buf, 3, waits=[ue], want_event=True)
    seen = []
    done = threading.Event()

    def on(event, status, user):          # user_data carries 100 + the callback type
        seen.append((user - 100, status))
        if user - 100 == cl.CL_COMPLETE:
            done.set()
    cb = EVENT_CB(on)
    for kind in (cl.CL_SUBMITTED, cl.CL_RUNNING, cl.CL_COMPLETE):
        assert CL.clSetEventCallback(ev, kind, ctypes.cast(cb, ctypes.c_void_p).value, 100 + kind) == 0
    assert [u for u, _ in seen] == [cl.CL_SUBMITTED]        # already submitted: called at once
    CL.clSetUserEventStatus(ue, cl.CL_COMPLETE)
    assert done.wait(10)
    CL.clFinish(q)
    assert sorted(u for u, _ in seen) == sorted([cl.CL_SUBMITTED, cl.CL_RUNNING, cl.CL_COMPLETE])
    assert dict(seen)[cl.CL_COMPLETE] == cl.CL_COMPLETE
    assert CL.clSetEventCallback(ev, 99, ctypes.cast(cb, ctypes.c_void_p).value, 0) == cl.CL_INVALID_VALUE
    assert CL.clSetEventCallback(ev, cl.CL_COMPLETE, 0, 0) == cl.CL_INVALID_VALUE
    for o in (ev, ue):
        CL.clReleaseEvent(o)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_profiling_timestamps_are_ordered(ctx_dev):
    ctx, dev = ctx_dev
    q = make_queue(ctx, dev, cl.CL_QUEUE_PROFILING_ENABLE)
    buf = make_buffer(ctx, 1 << 20)
    ev = fill(q, buf, 1, size=1 << 20, want_event=True)
    CL.clFinish(q)
    stamps = []
    for p in (cl.CL_PROFILING_COMMAND_QUEUED, cl.CL_PROFILING_COMMAND_SUBMIT, cl.CL_PROFILING_COMMAND_START,
              cl.CL_PROFILING_COMMAND_END, cl.CL_PROFILING_COMMAND_COMPLETE):
        t = ctypes.c_uint64()
        assert CL.clGetEventProfilingInfo(ev, p, 8, addr(t), 0) == 0
        stamps.append(t.value)
    assert stamps == sorted(stamps) and stamps[0] > 0
    plain = make_queue(ctx, dev)
    ev2 = fill(plain, buf, 1, want_event=True)
    CL.clFinish(plain)
    t = ctypes.c_uint64()
    assert CL.clGetEventProfilingInfo(ev2, cl.CL_PROFILING_COMMAND_END, 8, addr(t), 0) == \
        cl.CL_PROFILING_INFO_NOT_AVAILABLE
    for o in (ev, ev2):
        CL.clReleaseEvent(o)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)
    CL.clReleaseCommandQueue(plain)


def test_out_of_order_barrier_waits_for_earlier_commands(ctx_dev):
    ctx, dev = ctx_dev
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    buf = make_buffer(ctx, 4)
    ue = user_event(ctx)
    gated = fill(q, buf, 1, waits=[ue], want_event=True)
    barrier = ctypes.c_size_t()
    assert CL.clEnqueueBarrierWithWaitList(q, 0, 0, addr(barrier)) == 0
    after = fill(q, buf, 2, want_event=True)
    assert event_status(barrier.value) > 0 and event_status(after) > 0
    CL.clSetUserEventStatus(ue, cl.CL_COMPLETE)
    CL.clFinish(q)
    assert read(q, buf, 4, np.int32)[0] == 2
    marker = ctypes.c_size_t()
    assert CL.clEnqueueMarker(q, addr(marker)) == 0
    CL.clFinish(q)
    assert event_status(marker.value) == cl.CL_COMPLETE
    ctype = ctypes.c_uint32()
    CL.clGetEventInfo(marker.value, cl.CL_EVENT_COMMAND_TYPE, 4, addr(ctype), 0)
    assert ctype.value == cl.CL_COMMAND_MARKER
    for o in (gated, barrier.value, after, marker.value, ue):
        CL.clReleaseEvent(o)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_wait_list_validation(ctx_dev):
    ctx, dev = ctx_dev
    q = make_queue(ctx, dev)
    buf = make_buffer(ctx, 4)
    pattern = ctypes.c_int32(0)
    bogus = (ctypes.c_size_t * 1)(0xbad0)
    assert CL.clEnqueueFillBuffer(q, buf, addr(pattern), 4, 0, 4, 1, 0, 0) == cl.CL_INVALID_EVENT_WAIT_LIST
    assert CL.clEnqueueFillBuffer(q, buf, addr(pattern), 4, 0, 4, 0, addr(bogus), 0) == cl.CL_INVALID_EVENT_WAIT_LIST
    assert CL.clEnqueueFillBuffer(q, buf, addr(pattern), 4, 0, 4, 1, addr(bogus), 0) == cl.CL_INVALID_EVENT_WAIT_LIST
    assert CL.clWaitForEvents(0, 0) == cl.CL_INVALID_VALUE
    assert CL.clWaitForEvents(1, addr(bogus)) == cl.CL_INVALID_EVENT
    assert CL.clFinish(0xbad0) == cl.CL_INVALID_COMMAND_QUEUE
    e = err()
    assert CL.clCreateCommandQueue(ctx, dev, 1 << 20, addr(e)) == 0 and e.value == cl.CL_INVALID_VALUE
    assert CL.clCreateCommandQueue(ctx, 0xbad0, 0, addr(e)) == 0 and e.value == cl.CL_INVALID_DEVICE
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_many_host_threads_enqueue_and_wait(ctx_dev):
    ctx, dev = ctx_dev
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    buf = make_buffer(ctx, 4 * 64)
    errors = []

    def worker(slot):
        try:
            for i in range(50):
                ev = fill(q, buf, slot * 1000 + i, offset=4 * slot, want_event=True)
                evs = (ctypes.c_size_t * 1)(ev)
                assert CL.clWaitForEvents(1, addr(evs)) == 0
                CL.clReleaseEvent(ev)
        except Exception as e:      # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    CL.clFinish(q)
    assert read(q, buf, 4 * 8, np.int32).tolist() == [s * 1000 + 49 for s in range(8)]
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)
