"""clCreateCommandQueue(WithProperties) answered natively (pyplat/api/native_queues.pxi): the queue
a program gets must behave exactly as one the Python entry makes -- every native enqueue at once,
the order of commands before and after Python first needs it (adoption), its info, its context's
count, its release while commands are pending -- and every request that is not plain must still
get the spec's code from the Python entry."""
import ctypes
import time

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native, handles
from support.c_programs import run_c_program_ok
from support.capi import CL, addr, err
from support.clobjects import (context_and_program, create_kernel, event_status, make_buffer, make_context,
                               read, set_arg)
from support.native import context_refs, native_queue, queue_info, settled_context_refs

SOURCE = b"__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }"

if not CL._direct.get("clCreateCommandQueue") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

S, U32, U64, I32 = ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32
_NATIVE = _native.fast_path_entries()
native_create = ctypes.CFUNCTYPE(S, S, S, U64, S)(_NATIVE["clCreateCommandQueue"])
native_create_props = ctypes.CFUNCTYPE(S, S, S, S, S)(_NATIVE["clCreateCommandQueueWithProperties"])
DEFER_HANDLE = 1
OOO, PROFILING = cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, cl.CL_QUEUE_PROFILING_ENABLE


@pytest.fixture(scope="module")
def env():
    for ctx, dev, prog in context_and_program(SOURCE):
        e = err()        # (the device's driver started: a process's first queue is Python's)
        CL.clReleaseCommandQueue(CL.clCreateCommandQueue(ctx, dev, 0, addr(e)))
        yield ctx, dev, prog


def props(*values):
    return (U64 * (len(values) + 1))(*values, 0)


def wl(events):
    return (S * max(1, len(events)))(*events)


def gate(ctx):
    e = err()
    u = CL.clCreateUserEvent(ctx, addr(e))
    assert e.value == cl.CL_SUCCESS
    return u


def test_plain_requests_are_answered_natively_and_read_as_python_queues(env):
    ctx, dev, _ = env
    cases = [(None, 0, []), (props(), 0, [0]), (props(cl.CL_QUEUE_PROPERTIES, OOO), OOO, [cl.CL_QUEUE_PROPERTIES, OOO, 0]),
             (props(cl.CL_QUEUE_PROPERTIES, OOO | PROFILING), OOO | PROFILING,
              [cl.CL_QUEUE_PROPERTIES, OOO | PROFILING, 0]),
             (props(cl.CL_QUEUE_PROPERTIES, PROFILING), PROFILING, [cl.CL_QUEUE_PROPERTIES, PROFILING, 0])]
    for plist, bits, array in cases:
        e = I32(12345)
        q = native_create_props(ctx, dev, addr(plist) if plist is not None else 0, addr(e))
        assert q not in (0, DEFER_HANDLE) and e.value == 0 and handles.peek(q) is None
        assert queue_info(q, cl.CL_QUEUE_PROPERTIES, U64) == bits          # (adopted now)
        assert handles.peek(q) is not None
        assert queue_info(q, cl.CL_QUEUE_CONTEXT) == ctx and queue_info(q, cl.CL_QUEUE_DEVICE) == dev
        assert queue_info(q, cl.CL_QUEUE_REFERENCE_COUNT, U32) == 1
        n = S()
        assert CL.clGetCommandQueueInfo(q, cl.CL_QUEUE_PROPERTIES_ARRAY, 0, 0, addr(n)) == 0
        got = (U64 * max(1, n.value // 8))()
        assert CL.clGetCommandQueueInfo(q, cl.CL_QUEUE_PROPERTIES_ARRAY, n.value, addr(got), 0) == 0
        assert list(got)[:n.value // 8] == array
        assert CL.clReleaseCommandQueue(q) == 0
    q = native_queue(ctx, dev, OOO, with_list=False)
    assert queue_info(q, cl.CL_QUEUE_PROPERTIES, U64) == OOO
    assert CL.clReleaseCommandQueue(q) == 0


def test_a_changed_inorder_knob_is_left_to_python(env, monkeypatch):
    """PYPLAT_INORDER_PARALLEL is read when a queue is made: while it says otherwise than at
    start-up, plain in-order queues are the Python entry's (which applies it)."""
    ctx, dev, _ = env
    e = I32(12345)
    told = config.reading("PYPLAT_INORDER_PARALLEL").text           # (as the suite started)
    for text in [t for t in ("0", "1", "0") if t != told]:
        monkeypatch.setenv("PYPLAT_INORDER_PARALLEL", text)
        assert native_create(ctx, dev, 0, addr(e)) == DEFER_HANDLE and e.value == 12345
        q = native_queue(ctx, dev, OOO)                             # (its mode does not follow it)
        assert CL.clReleaseCommandQueue(q) == 0
    monkeypatch.undo()
    q = native_queue(ctx, dev)
    assert CL.clReleaseCommandQueue(q) == 0


def test_what_is_not_plain_is_left_to_the_python_entry_untouched(env):
    """Property lists the native entry does not read are the Python entry's (errcode_ret
    untouched); a context or device that is no handle of its kind is refused natively
    (native_handle_rules.pxi) with the Python entry's code."""
    ctx, dev, _ = env
    other_ctx, _ = make_context()
    bad = [(ctx, dev, props(cl.CL_QUEUE_PROPERTIES, 1 << 20), cl.CL_INVALID_VALUE),
           (ctx, dev, props(cl.CL_QUEUE_PROPERTIES, OOO | cl.CL_QUEUE_ON_DEVICE), cl.CL_INVALID_QUEUE_PROPERTIES),
           (ctx, dev, props(cl.CL_QUEUE_SIZE, 16), cl.CL_INVALID_QUEUE_PROPERTIES),
           (ctx, dev, props(cl.CL_QUEUE_PROPERTIES, 0, cl.CL_QUEUE_PROPERTIES, 0), cl.CL_INVALID_PROPERTY),
           (ctx, dev, props(0x7777, 1), cl.CL_INVALID_VALUE),
           (ctx + 8, dev, None, cl.CL_INVALID_CONTEXT), (0, dev, None, cl.CL_INVALID_CONTEXT),
           (ctx, 0, None, cl.CL_INVALID_DEVICE), (ctx, ctx, None, cl.CL_INVALID_DEVICE)]
    handle_codes = (cl.CL_INVALID_CONTEXT, cl.CL_INVALID_DEVICE)
    for c, d, plist, code in bad:
        e = I32(12345)
        made = native_create_props(c, d, addr(plist) if plist is not None else 0, addr(e))
        assert (made, e.value) == ((0, code) if code in handle_codes else (DEFER_HANDLE, 12345))
        assert CL.clCreateCommandQueueWithProperties(c, d, addr(plist) if plist is not None else 0,
                                                     addr(e)) == 0
        assert e.value == code, (plist and list(plist), e.value)
    e = I32(12345)
    assert native_create(ctx, dev, 1 << 20, addr(e)) == DEFER_HANDLE and e.value == 12345
    assert CL.clCreateCommandQueue(ctx, dev, 1 << 20, addr(e)) == 0 and e.value == cl.CL_INVALID_VALUE
    # a device that is not the context's: the Python entry's CL_INVALID_DEVICE
    assert CL.clReleaseContext(other_ctx) == 0


def test_every_native_enqueue_answers_on_a_native_queue_without_adopting_it(env):
    ctx, dev, prog = env
    kernel = create_kernel(prog, b"inc")
    a, b = make_buffer(ctx, 4096), make_buffer(ctx, 4096)
    set_arg(kernel, 0, a)
    n = S(1024)
    first = native_queue(ctx, dev)                 # the kernel's sizes, validated once (Python)
    assert CL.clEnqueueNDRangeKernel(first, kernel, 1, 0, addr(n), 0, 0, 0, 0) == 0
    assert CL.clFinish(first) == 0 and CL.clReleaseCommandQueue(first) == 0
    for properties in (0, OOO, PROFILING, OOO | PROFILING):
        q = native_queue(ctx, dev, properties)
        data = np.arange(1024, dtype=np.int32)
        seven = I32(7)
        ev = [S() for _ in range(6)]
        assert CL.clEnqueueWriteBuffer(q, a, 0, 0, 4096, addr(data), 0, 0, addr(ev[0])) == 0
        assert CL.clEnqueueNDRangeKernel(q, kernel, 1, 0, addr(n), 0, 1, addr(wl([ev[0].value])), addr(ev[1])) == 0
        assert CL.clEnqueueCopyBuffer(q, a, b, 0, 0, 4096, 1, addr(wl([ev[1].value])), addr(ev[2])) == 0
        assert CL.clEnqueueFillBuffer(q, a, addr(seven), 4, 0, 4096, 1, addr(wl([ev[2].value])), addr(ev[3])) == 0
        assert CL.clEnqueueMarkerWithWaitList(q, 0, 0, addr(ev[4])) == 0
        assert CL.clEnqueueBarrierWithWaitList(q, 0, 0, addr(ev[5])) == 0
        assert all(handles.peek(e.value) is None for e in ev)         # native events
        assert CL.clFlush(q) == 0
        got = np.empty(1024, dtype=np.int32)
        waits = [ev[5].value] if properties & OOO else []             # (a blocking read waits natively
        if waits:                                                      # without a wait list only)
            assert event_status(ev[5].value) >= cl.CL_COMPLETE
            assert CL.clWaitForEvents(1, addr(wl(waits))) == 0
        code = CL.clEnqueueReadBuffer(q, b, 1, 0, 4096, addr(got), 0, 0, 0)
        assert code == 0, code
        assert CL.clFinish(q) == 0
        assert got.tolist() == (data + 1).tolist()
        assert read(q, a, 4096, np.int32).tolist() == [7] * 1024
        assert all(event_status(e.value) == cl.CL_COMPLETE for e in ev)
        for e in ev:
            assert CL.clReleaseEvent(e.value) == 0
        assert handles.peek(q) is None                                  # never adopted
        assert CL.clReleaseCommandQueue(q) == 0                         # released natively
        assert CL.clRetainCommandQueue(q) == cl.CL_INVALID_COMMAND_QUEUE
    CL.clReleaseKernel(kernel)
    CL.clReleaseMemObject(a)
    CL.clReleaseMemObject(b)


def test_commands_before_and_after_adoption_keep_their_order(env):
    """An in-order queue orders by buffer: a native write gated by a user event, then the queue
    adopted (an info query), then a launch and a read through the adopted queue -- the launch
    must still come after the write."""
    ctx, dev, prog = env
    kernel = create_kernel(prog, b"inc")
    for properties in (0, PROFILING):
        for round_ in range(3):
            q = native_queue(ctx, dev, properties)
            b = make_buffer(ctx, 4096)
            set_arg(kernel, 0, b)
            u = gate(ctx)
            data = np.full(1024, 40 + round_, dtype=np.int32)
            assert CL.clEnqueueWriteBuffer(q, b, 0, 0, 4096, addr(data), 1, addr(wl([u])), 0) == 0
            assert queue_info(q, cl.CL_QUEUE_REFERENCE_COUNT, U32) == 1          # adopted here
            assert handles.peek(q) is not None
            n = S(1024)
            assert CL.clEnqueueNDRangeKernel(q, kernel, 1, 0, addr(n), 0, 0, 0, 0) == 0
            e = err()
            p = CL.clEnqueueMapBuffer(q, b, 0, cl.CL_MAP_READ, 0, 4096, 0, 0, 0, addr(e))   # (Python's)
            assert e.value == 0
            time.sleep(0.02)
            assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == 0
            assert CL.clFinish(q) == 0
            assert np.ctypeslib.as_array((ctypes.c_int32 * 1024).from_address(p)).tolist() == [41 + round_] * 1024
            assert CL.clEnqueueUnmapMemObject(q, b, p, 0, 0, 0) == 0
            assert CL.clFinish(q) == 0
            CL.clReleaseEvent(u)
            CL.clReleaseMemObject(b)
            assert CL.clReleaseCommandQueue(q) == 0
    CL.clReleaseKernel(kernel)


def test_a_native_event_of_a_native_queue_adopts_its_queue(env):
    ctx, dev, _ = env
    q = native_queue(ctx, dev)
    ev = S()
    assert CL.clEnqueueMarkerWithWaitList(q, 0, 0, addr(ev)) == 0
    v = S()
    assert CL.clGetEventInfo(ev.value, cl.CL_EVENT_COMMAND_QUEUE, 8, addr(v), 0) == 0   # Python's
    assert v.value == q and handles.peek(q) is not None
    assert CL.clGetEventInfo(ev.value, cl.CL_EVENT_CONTEXT, 8, addr(v), 0) == 0 and v.value == ctx
    assert CL.clReleaseCommandQueue(q) == 0
    assert event_status(ev.value) == cl.CL_COMPLETE
    assert CL.clReleaseEvent(ev.value) == 0
    # a native event adopted while its queue is not: the queue is adopted first
    q = native_queue(ctx, dev)
    assert CL.clEnqueueMarkerWithWaitList(q, 0, 0, addr(ev)) == 0
    t = U64()
    assert CL.clGetEventProfilingInfo(ev.value, cl.CL_PROFILING_COMMAND_QUEUED, 8, addr(t), 0) \
        == cl.CL_PROFILING_INFO_NOT_AVAILABLE                       # (not a profiling queue)
    assert handles.peek(q) is not None
    assert CL.clReleaseEvent(ev.value) == 0 and CL.clReleaseCommandQueue(q) == 0


def test_counts_of_the_queue_and_its_context(env):
    ctx, dev, _ = env
    before = settled_context_refs(ctx)
    q = native_queue(ctx, dev)
    assert context_refs(ctx) == before + 1                          # as a Python queue holds it
    assert CL.clRetainCommandQueue(q) == 0 and CL.clRetainCommandQueue(q) == 0
    assert CL.clReleaseCommandQueue(q) == 0 and CL.clReleaseCommandQueue(q) == 0
    assert handles.peek(q) is None
    assert CL.clReleaseCommandQueue(q) == 0                         # freed natively
    assert context_refs(ctx) == before
    assert CL.clReleaseCommandQueue(q) == cl.CL_INVALID_COMMAND_QUEUE
    # adopted: the CommandQueue takes the context reference over
    q = native_queue(ctx, dev)
    assert CL.clRetainCommandQueue(q) == 0
    assert queue_info(q, cl.CL_QUEUE_REFERENCE_COUNT, U32) == 2
    assert context_refs(ctx) == before + 1
    assert CL.clReleaseCommandQueue(q) == 0 and CL.clReleaseCommandQueue(q) == 0
    assert context_refs(ctx) == before


def test_released_while_its_commands_are_pending(env):
    """The release flushes and never waits; the context count the queue holds drops once its
    commands have finished."""
    _, dev, _ = env
    ctx, _ = make_context()                                         # (its counts: this test's alone)
    b = make_buffer(ctx, 4096)
    before = context_refs(ctx)
    for properties in (0, OOO):
        q = native_queue(ctx, dev, properties)
        u = gate(ctx)
        data = np.full(1024, 5, dtype=np.int32)
        assert CL.clEnqueueWriteBuffer(q, b, 0, 0, 4096, addr(data), 1, addr(wl([u])), 0) == 0
        assert CL.clReleaseCommandQueue(q) == 0                     # returns at once
        assert context_refs(ctx) == before + 2                      # the queue's and the event's
        assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == 0
        CL.clReleaseEvent(u)
        deadline = time.monotonic() + 5
        while context_refs(ctx) != before and time.monotonic() < deadline:
            time.sleep(0.01)
        assert context_refs(ctx) == before
        other = native_queue(ctx, dev)
        assert read(other, b, 4096, np.int32).tolist() == [5] * 1024   # the write ran
        assert CL.clReleaseCommandQueue(other) == 0
    CL.clReleaseMemObject(b)
    assert CL.clReleaseContext(ctx) == 0


def test_the_context_lives_while_a_native_queue_does(env):
    _, dev, _ = env
    ctx, _ = make_context()
    q = native_queue(ctx, dev)
    assert CL.clReleaseContext(ctx) == 0                            # the queue still holds it
    assert context_refs(ctx) == 1
    b = make_buffer(ctx, 64)
    assert read(q, b, 64, np.int32).tolist() == [0] * 16
    assert CL.clReleaseMemObject(b) == 0
    assert CL.clFinish(q) == 0                                      # (so that the release is at once)
    assert CL.clReleaseCommandQueue(q) == 0                         # (the context's last reference)
    assert CL.clRetainContext(ctx) == cl.CL_INVALID_CONTEXT


def test_c_programs_get_native_queues(run_with_pyplat, tmp_path):
    """Through the loader: queues made natively, used by every command, released; the spec's
    codes for requests that are not plain."""
    run_c_program_ok(run_with_pyplat, tmp_path, "native_queues", PROGRAM)


PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
static const char *src = "__kernel void twice(__global int *a) { a[get_global_id(0)] *= 2; }";
int main(void) {
    cl_platform_id p; cl_device_id d; cl_int e;
    clGetPlatformIDs(1, &p, NULL);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
    if (clBuildProgram(pr, 1, &d, NULL, NULL, NULL)) return 2;
    cl_kernel k = clCreateKernel(pr, "twice", &e);
    int host[256], got[256];
    cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof host, NULL, &e);
    clSetKernelArg(k, 0, sizeof b, &b);
    cl_queue_properties kinds[4] = {0, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, CL_QUEUE_PROFILING_ENABLE,
                                    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE};
    for (int round = 0; round < 200; round++) {
        cl_queue_properties list[] = {CL_QUEUE_PROPERTIES, kinds[round % 4], 0};
        cl_command_queue q = round % 3 ? clCreateCommandQueueWithProperties(c, d, list, &e)
                                       : clCreateCommandQueue(c, d, kinds[round % 4], &e);
        if (e || !q) return 3;
        for (int i = 0; i < 256; i++) host[i] = i + round;
        cl_event w, l, m;
        size_t n = 256;
        clEnqueueWriteBuffer(q, b, CL_FALSE, 0, sizeof host, host, 0, NULL, &w);
        clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 1, &w, &l);
        clEnqueueMarkerWithWaitList(q, 1, &l, &m);
        clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof got, got, 1, &m, NULL);
        for (int i = 0; i < 256; i++)
            if (got[i] != 2 * (i + round)) { printf("round %d [%d] = %d\n", round, i, got[i]); return 4; }
        clReleaseEvent(w); clReleaseEvent(l); clReleaseEvent(m);
        if (clFlush(q) || clFinish(q) || clRetainCommandQueue(q) || clReleaseCommandQueue(q)) return 5;
        if (clReleaseCommandQueue(q)) return 6;
    }
    cl_queue_properties device_queue[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE, 0};
    cl_command_queue bad = clCreateCommandQueueWithProperties(c, d, device_queue, &e);
    if (bad || e != CL_INVALID_QUEUE_PROPERTIES) return 7;
    bad = clCreateCommandQueue(c, (cl_device_id)c, 0, &e);
    if (bad || e != CL_INVALID_DEVICE) return 8;
    cl_uint refs = 0;
    clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    clReleaseMemObject(b); clReleaseKernel(k); clReleaseProgram(pr); clReleaseContext(c);
    printf("%u ok\n", refs);
    return 0;
}
"""
