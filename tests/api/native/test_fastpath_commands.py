"""The native buffer commands (pyplat/api/native_commands.pxi): clEnqueueWriteBuffer,
clEnqueueReadBuffer, clEnqueueCopyBuffer, clEnqueueFillBuffer and clEnqueueMarkerWithWaitList
answered without the GIL for buffers of host-memory contexts. What a program sees must be what
the Python path gives: the bytes, the order (in-order automatic parallelisation, out-of-order
wait lists), blocking, events and their types, failures, and every error with its code."""
import contextlib
import ctypes
import threading

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native, handles
from pyplat.runtime.graph import reap
from support.c_programs import NAMED_PLATFORM_C, build_c_program, run_c_program_ok
from support.capi import CL, addr, err, python_entry
from support.clobjects import (context_and_program, create_kernel, event_status, make_buffer, make_context,
                               make_queue, read, set_arg)

SOURCE = b"__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }"

if not CL._direct.get("clEnqueueWriteBuffer") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

S, U32, U64, I32 = ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32
_NATIVE = _native.fast_path_entries()
# The native entries themselves (what the shim calls before taking the GIL): PYPLAT_DEFER when
# they leave a call to the Python entry.
native_write = ctypes.CFUNCTYPE(I32, S, S, U32, U64, U64, S, U32, S, S)(_NATIVE["clEnqueueWriteBuffer"])
native_read = ctypes.CFUNCTYPE(I32, S, S, U32, U64, U64, S, U32, S, S)(_NATIVE["clEnqueueReadBuffer"])
native_copy = ctypes.CFUNCTYPE(I32, S, S, S, U64, U64, U64, U32, S, S)(_NATIVE["clEnqueueCopyBuffer"])
native_fill = ctypes.CFUNCTYPE(I32, S, S, S, U64, U64, U64, U32, S, S)(_NATIVE["clEnqueueFillBuffer"])
native_marker = ctypes.CFUNCTYPE(I32, S, U32, S, S)(_NATIVE["clEnqueueMarkerWithWaitList"])
native_barrier = ctypes.CFUNCTYPE(I32, S, U32, S, S)(_NATIVE["clEnqueueBarrierWithWaitList"])
native_release_mem = ctypes.CFUNCTYPE(I32, S)(_NATIVE["clReleaseMemObject"])


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


@contextlib.contextmanager
def pinned(ctx, dev, *buffers):
    """Keep the buffers' native records held (a pending copy from each on another queue, behind a
    user event), so that the reaper does not drop a hold between a public call and a native one."""
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    e = err()
    gate = CL.clCreateUserEvent(ctx, addr(e))
    sink = make_buffer(ctx, 4 * len(buffers))
    for i, b in enumerate(buffers):
        assert CL.clEnqueueCopyBuffer(q, b, sink, 0, 4 * i, 4, 1, addr(wl([gate])), 0) == 0
    try:
        yield
    finally:
        CL.clSetUserEventStatus(gate, cl.CL_COMPLETE)
        CL.clFinish(q)
        CL.clReleaseEvent(gate)
        CL.clReleaseMemObject(sink)
        CL.clReleaseCommandQueue(q)


def wl(events):
    return (S * max(1, len(events)))(*events)


def command_type(ev):
    v = U32()
    assert CL.clGetEventInfo(ev, cl.CL_EVENT_COMMAND_TYPE, 4, addr(v), 0) == 0
    return v.value


def write(q, buf, data, offset=0, blocking=False, waits=(), fn=None):
    ev = S()
    code = (fn or CL.clEnqueueWriteBuffer)(q, buf, blocking, offset, data.nbytes, addr(data), len(waits),
                                           addr(wl(waits)) if waits else 0, addr(ev))
    return code, ev.value


def test_the_native_entries_answer_and_their_events_have_their_types(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    # a: made by the Python entry
    e = err()
    a, b = python_entry("clCreateBuffer")(ctx, cl.CL_MEM_READ_WRITE, 256, 0, addr(e)), make_buffer(ctx, 256)
    assert e.value == 0
    data = np.arange(64, dtype=np.int32)
    out = np.zeros(64, dtype=np.int32)
    seven = I32(7)
    # a buffer the Python path has not used yet: its record holds nothing, the entry defers
    assert native_write(q, a, 0, 0, 256, addr(data), 0, 0, 0) == _native.DEFER
    assert write(q, a, data)[0] == 0                     # primes it (Python, then native)
    evs = []
    with pinned(ctx, dev, a, b):
        enqueue_each(q, a, b, data, out, seven, evs)
    assert CL.clFinish(q) == 0
    for ev, kind in evs:
        assert command_type(ev) == kind                 # adopted with its command's type
        assert event_status(ev) == cl.CL_COMPLETE
        assert CL.clReleaseEvent(ev) == 0
    assert out.tolist() == data.tolist()
    assert read(q, a, 256, np.int32).tolist() == data[:32].tolist() + [7] * 32
    for m in (a, b):
        CL.clReleaseMemObject(m)
    CL.clReleaseCommandQueue(q)


def enqueue_each(q, a, b, data, out, seven, evs):
    """One command of each kind through its native entry, with an event (the public entry first
    where the queue's events or a buffer are not held yet)."""
    for fn, public, args, kind in (
            (native_write, CL.clEnqueueWriteBuffer, (q, a, 1, 0, 256, addr(data), 0, 0),
             cl.CL_COMMAND_WRITE_BUFFER),
            (native_copy, CL.clEnqueueCopyBuffer, (q, a, b, 0, 0, 256, 0, 0), cl.CL_COMMAND_COPY_BUFFER),
            (native_read, CL.clEnqueueReadBuffer, (q, b, 0, 0, 256, addr(out), 0, 0),
             cl.CL_COMMAND_READ_BUFFER),
            (native_marker, CL.clEnqueueMarkerWithWaitList, (q, 0, 0), cl.CL_COMMAND_MARKER),
            (native_barrier, CL.clEnqueueBarrierWithWaitList, (q, 0, 0), cl.CL_COMMAND_BARRIER),
            (native_fill, CL.clEnqueueFillBuffer, (q, a, addr(seven), 4, 128, 128, 0, 0),
             cl.CL_COMMAND_FILL_BUFFER)):
        ev = S()
        code = fn(*args, addr(ev))
        if code == _native.DEFER:                        # b and the queue's events: primed once
            assert public(*args, addr(ev)) == 0
            assert CL.clReleaseEvent(ev.value) == 0
            code = fn(*args, addr(ev))                   # ... then the native entry answers
        assert code == 0
        assert handles.peek(ev.value) is None           # a native event, not adopted yet
        evs.append((ev.value, kind))


def test_in_order_reads_see_writes_launches_copies_and_fills(env):
    """The automatic in-order parallelisation orders native transfers by buffer (sub-buffers by
    their root) and by host memory, with kernel launches in between."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    n = 256
    a, b = make_buffer(ctx, 4 * n), make_buffer(ctx, 4 * n)
    region = (S * 2)(4 * 64, 4 * 64)
    e = err()
    sub = CL.clCreateSubBuffer(a, 0, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(region), addr(e))
    assert e.value == 0
    k = create_kernel(prog, b"inc")
    set_arg(k, 0, a)
    g = S(n)
    minus_one = I32(-1)
    host = [np.full(n, i, dtype=np.int32) for i in range(20)]
    outs = [np.zeros(n, dtype=np.int32) for _ in range(20)]
    subs = [np.zeros(64, dtype=np.int32) for _ in range(20)]
    for i in range(20):
        assert CL.clEnqueueWriteBuffer(q, a, 0, 0, 4 * n, addr(host[i]), 0, 0, 0) == 0
        assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == 0
        assert CL.clEnqueueReadBuffer(q, sub, 0, 0, 4 * 64, addr(subs[i]), 0, 0, 0) == 0
        assert CL.clEnqueueCopyBuffer(q, a, b, 0, 0, 4 * n, 0, 0, 0) == 0
        assert CL.clEnqueueFillBuffer(q, a, addr(minus_one), 4, 0, 4 * n, 0, 0, 0) == 0
        assert CL.clEnqueueReadBuffer(q, b, 0, 0, 4 * n, addr(outs[i]), 0, 0, 0) == 0
    assert CL.clFinish(q) == 0
    for i in range(20):
        assert outs[i].tolist() == [i + 1] * n
        assert subs[i].tolist() == [i + 1] * 64
    assert read(q, a, 4 * n, np.int32).tolist() == [-1] * n
    for m in (sub, a, b):
        CL.clReleaseMemObject(m)
    CL.clReleaseKernel(k)
    CL.clReleaseCommandQueue(q)


def test_out_of_order_wait_lists_and_blocking_calls(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    a, b = make_buffer(ctx, 64), make_buffer(ctx, 64)
    e = err()
    gate = CL.clCreateUserEvent(ctx, addr(e))
    first, second = np.full(16, 5, dtype=np.int32), np.zeros(16, dtype=np.int32)
    for _ in range(2):                      # the second round is answered natively
        code, w = write(q, a, first, waits=[gate])
        assert code == 0
        cev = S()
        assert CL.clEnqueueCopyBuffer(q, a, b, 0, 0, 64, 1, addr(wl([w])), addr(cev)) == 0
        r = S()
        assert CL.clEnqueueReadBuffer(q, b, 0, 0, 64, addr(second), 1, addr(wl([cev.value])), addr(r)) == 0
        assert event_status(r.value) in (cl.CL_QUEUED, cl.CL_SUBMITTED)   # all behind the gate
        assert second.tolist() == [0] * 16
        marker = S()
        assert CL.clEnqueueMarkerWithWaitList(q, 1, addr(wl([r.value])), addr(marker)) == 0
        assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == 0
        assert CL.clWaitForEvents(1, addr(marker)) == 0
        assert second.tolist() == [5] * 16
        for ev in (w, cev.value, r.value, marker.value, gate):
            assert CL.clReleaseEvent(ev) == 0
        gate = CL.clCreateUserEvent(ctx, addr(e))
        second[:] = 0
    # a barrier orders what follows after what came before, wait lists or not
    with pinned(ctx, dev, a, b):
        gate = CL.clCreateUserEvent(ctx, addr(e))
        seven, got = np.full(16, 7, dtype=np.int32), np.zeros(16, dtype=np.int32)
        assert write(q, a, seven, waits=[gate])[0] == 0
        assert CL.clEnqueueBarrierWithWaitList(q, 0, 0, 0) == 0
        assert native_barrier(q, 0, 0, 0) == 0
        assert native_read(q, a, 0, 0, 64, addr(got), 0, 0, 0) == 0
        done = S()
        assert native_marker(q, 0, 0, addr(done)) == 0
        assert event_status(done.value) in (cl.CL_QUEUED, cl.CL_SUBMITTED)
        assert got.tolist() == [0] * 16
        assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == 0
        assert CL.clWaitForEvents(1, addr(done)) == 0
        assert got.tolist() == [7] * 16
        CL.clReleaseEvent(done.value)
        CL.clReleaseEvent(gate)
    gate = CL.clCreateUserEvent(ctx, addr(e))
    # blocking: the data is there when the call returns
    data = np.arange(16, dtype=np.int32)
    with pinned(ctx, dev, a):
        assert CL.clEnqueueWriteBuffer(q, a, 1, 0, 64, addr(data), 0, 0, 0) == 0
        got = np.zeros(16, dtype=np.int32)
        assert native_read(q, a, 1, 0, 64, addr(got), 0, 0, 0) == 0
        assert got.tolist() == data.tolist()
        # a blocking call with a wait list is the Python entry's (which reports failures)
        threading.Timer(0.05, CL.clSetUserEventStatus, (gate, cl.CL_COMPLETE)).start()
        got[:] = 0
        assert native_read(q, a, 1, 0, 64, addr(got), 1, addr(wl([gate])), 0) == _native.DEFER
        assert CL.clEnqueueReadBuffer(q, a, 1, 0, 64, addr(got), 1, addr(wl([gate])), 0) == 0
        assert got.tolist() == data.tolist()
    CL.clReleaseEvent(gate)
    CL.clReleaseMemObject(a)
    CL.clReleaseMemObject(b)
    CL.clReleaseCommandQueue(q)


def test_failed_wait_list_events_fail_native_commands(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    a = make_buffer(ctx, 64)
    data = np.arange(16, dtype=np.int32)
    assert write(q, a, data, blocking=True)[0] == 0
    e = err()
    pin = pinned(ctx, dev, a)
    pin.__enter__()
    for _ in range(2):
        gate = CL.clCreateUserEvent(ctx, addr(e))
        code, w = write(q, a, np.zeros(16, dtype=np.int32), waits=[gate])
        assert code == 0
        assert CL.clSetUserEventStatus(gate, -55) == 0
        assert CL.clWaitForEvents(1, addr(wl([w]))) == cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
        assert event_status(w) < 0
        # blocking with a failed event in the wait list: the Python entry's error, nothing done
        got = np.zeros(16, dtype=np.int32)
        assert native_read(q, a, 1, 0, 64, addr(got), 1, addr(wl([gate])), 0) == _native.DEFER
        assert (CL.clEnqueueReadBuffer(q, a, 1, 0, 64, addr(got), 1, addr(wl([gate])), 0)
                == cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        assert CL.clReleaseEvent(w) == 0 and CL.clReleaseEvent(gate) == 0
    pin.__exit__(None, None, None)
    assert read(q, a, 64, np.int32).tolist() == data.tolist()      # the failed writes wrote nothing
    CL.clReleaseMemObject(a)
    CL.clReleaseCommandQueue(q)


def test_both_entries_refuse_with_the_same_rules(env):
    """Arguments the rules refuse (native_buffer_rules.pxi) and handles they refuse (another
    context, another kind, a bad wait list: native_handle_rules.pxi) get their code from the
    native entry itself, as from the Python entry."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    a, b = make_buffer(ctx, 64), make_buffer(ctx, 64)
    ro = make_buffer(ctx, 64, cl.CL_MEM_READ_WRITE | cl.CL_MEM_HOST_READ_ONLY)
    wo = make_buffer(ctx, 64, cl.CL_MEM_READ_WRITE | cl.CL_MEM_HOST_WRITE_ONLY)
    other_ctx = make_context()[0]
    foreign = make_buffer(other_ctx, 64)
    h = np.zeros(16, dtype=np.int32)
    for m in (a, b, ro, wo):                               # records held: natives would answer
        CL.clEnqueueFillBuffer(q, m, addr(h), 4, 0, 64, 0, 0, 0)
    cases = [
        (native_write, CL.clEnqueueWriteBuffer, (q, a, 0, 60, 8, addr(h), 0, 0, 0), cl.CL_INVALID_VALUE),
        (native_write, CL.clEnqueueWriteBuffer, (q, a, 0, 0, 0, addr(h), 0, 0, 0), cl.CL_INVALID_VALUE),
        (native_write, CL.clEnqueueWriteBuffer, (q, a, 0, 0, 8, 0, 0, 0, 0), cl.CL_INVALID_VALUE),
        (native_write, CL.clEnqueueWriteBuffer, (q, ro, 0, 0, 8, addr(h), 0, 0, 0), cl.CL_INVALID_OPERATION),
        (native_read, CL.clEnqueueReadBuffer, (q, wo, 0, 0, 8, addr(h), 0, 0, 0), cl.CL_INVALID_OPERATION),
        (native_read, CL.clEnqueueReadBuffer, (q, foreign, 0, 0, 8, addr(h), 0, 0, 0), cl.CL_INVALID_CONTEXT),
        (native_read, CL.clEnqueueReadBuffer, (q, q, 0, 0, 8, addr(h), 0, 0, 0), cl.CL_INVALID_MEM_OBJECT),
        (native_read, CL.clEnqueueReadBuffer, (a, a, 0, 0, 8, addr(h), 0, 0, 0), cl.CL_INVALID_COMMAND_QUEUE),
        (native_read, CL.clEnqueueReadBuffer, (q, a, 0, 0, 8, addr(h), 1, 0, 0), cl.CL_INVALID_EVENT_WAIT_LIST),
        (native_copy, CL.clEnqueueCopyBuffer, (q, a, a, 0, 4, 8, 0, 0, 0), cl.CL_MEM_COPY_OVERLAP),
        (native_copy, CL.clEnqueueCopyBuffer, (q, a, b, 0, 60, 8, 0, 0, 0), cl.CL_INVALID_VALUE),
        (native_fill, CL.clEnqueueFillBuffer, (q, a, addr(h), 3, 0, 6, 0, 0, 0), cl.CL_INVALID_VALUE),
        (native_fill, CL.clEnqueueFillBuffer, (q, a, addr(h), 4, 2, 8, 0, 0, 0), cl.CL_INVALID_VALUE),
        (native_marker, CL.clEnqueueMarkerWithWaitList, (b, 0, 0, 0), cl.CL_INVALID_COMMAND_QUEUE),
        (native_barrier, CL.clEnqueueBarrierWithWaitList, (q, 2, 0, 0), cl.CL_INVALID_EVENT_WAIT_LIST),
    ]
    with pinned(ctx, dev, a, b, ro, wo):
        for native, public, args, code in cases:
            assert native(*args) == code, (public, args)
            assert public(*args) == code, (public, args)
    assert CL.clFinish(q) == 0
    CL.clReleaseMemObject(foreign)
    CL.clReleaseContext(other_ctx)
    for m in (a, b, ro, wo):
        CL.clReleaseMemObject(m)
    # a released buffer is not used: either entry says it is no buffer
    assert native_write(q, a, 0, 0, 8, addr(h), 0, 0, 0) == cl.CL_INVALID_MEM_OBJECT
    assert CL.clEnqueueWriteBuffer(q, a, 0, 0, 8, addr(h), 0, 0, 0) == cl.CL_INVALID_MEM_OBJECT
    CL.clReleaseCommandQueue(q)


def test_a_buffer_released_while_commands_wait_lives_until_they_ran(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    e, nine = err(), I32(9)
    for round_ in range(3):
        src_data = np.full(1024, round_ + 3, dtype=np.int32)
        a = make_buffer(ctx, 4096, cl.CL_MEM_READ_WRITE | cl.CL_MEM_COPY_HOST_PTR, src_data)
        b = make_buffer(ctx, 4096)
        CL.clEnqueueCopyBuffer(q, a, b, 0, 0, 4096, 0, 0, 0)          # primes both records
        assert CL.clFinish(q) == 0
        gate = CL.clCreateUserEvent(ctx, addr(e))
        assert CL.clEnqueueCopyBuffer(q, a, b, 0, 0, 4096, 1, addr(wl([gate])), 0) == 0
        assert CL.clReleaseMemObject(a) == 0                         # the program lets go of a
        other = make_buffer(ctx, 4096)                               # (memory a may have had)
        assert CL.clEnqueueFillBuffer(q, other, addr(nine), 4, 0, 4096, 0, 0, 0) == 0
        assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == 0
        assert CL.clFinish(q) == 0
        assert read(q, b, 4096, np.int32).tolist() == src_data.tolist()
        CL.clReleaseEvent(gate)
        CL.clReleaseMemObject(b)
        CL.clReleaseMemObject(other)
    CL.clReleaseCommandQueue(q)


def test_a_temporary_released_while_commands_wait_is_released_natively(env):
    """pyopencl's temporaries: a buffer made natively, used by a copy and a kernel launch still
    waiting, is released by the program. The native entry answers (no Python adoption), its
    handle is dead at once, and the commands still read and write its bytes, which go when the
    last one is done."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    e, size = err(), U64()
    k = create_kernel(prog, b"inc")
    first = make_buffer(ctx, 4096)
    assert set_arg(k, 0, first) == 0
    one = (S * 1)(1024)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(one), 0, 0, 0, 0) == 0    # the kernel's own plan
    assert CL.clFinish(q) == 0
    for round_ in range(4):
        src_data = np.full(1024, round_ + 3, dtype=np.int32)
        a = make_buffer(ctx, 4096, cl.CL_MEM_READ_WRITE | cl.CL_MEM_COPY_HOST_PTR, src_data)
        copied, launched = make_buffer(ctx, 4096), make_buffer(ctx, 4096)
        gate = CL.clCreateUserEvent(ctx, addr(e))
        first_copy, ran, after = S(), S(), S()
        assert CL.clEnqueueCopyBuffer(q, a, copied, 0, 0, 4096, 1, addr(wl([gate])), addr(first_copy)) == 0
        assert set_arg(k, 0, a) == 0                                 # (a buffer its plan does not hold)
        assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(one), 0, 1, addr(wl([first_copy.value])),
                                         addr(ran)) == 0
        assert CL.clEnqueueCopyBuffer(q, a, launched, 0, 0, 4096, 1, addr(wl([ran.value])), addr(after)) == 0
        assert native_release_mem(a) == 0                            # answered without Python
        assert CL.clGetMemObjectInfo(a, cl.CL_MEM_SIZE, 8, addr(size), 0) == cl.CL_INVALID_MEM_OBJECT
        other = make_buffer(ctx, 4096, cl.CL_MEM_READ_WRITE | cl.CL_MEM_COPY_HOST_PTR,
                            np.full(1024, -1, dtype=np.int32))       # (memory a may have had)
        assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == 0
        assert CL.clFinish(q) == 0
        assert read(q, copied, 4096, np.int32).tolist() == src_data.tolist()
        assert read(q, launched, 4096, np.int32).tolist() == (src_data + 1).tolist()
        assert read(q, other, 4096, np.int32).tolist() == [-1] * 1024
        for ev in (gate, first_copy.value, ran.value, after.value):
            CL.clReleaseEvent(ev)
        for b in (copied, launched, other):
            assert CL.clReleaseMemObject(b) == 0
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(first)
    CL.clReleaseCommandQueue(q)


def test_a_buffer_the_application_holds_stays_native_across_finishes(env):
    """Once a native command has used a buffer, its hold stays while the application holds the
    buffer: a clFinish (after which an ordinary hold lets go) does not send the next command on
    it through Python again -- for a buffer the Python entry made, and for one made natively and
    adopted since (a kernel argument set through Python)."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    python_made = make_buffer(ctx, 256, cl.CL_MEM_READ_WRITE | cl.CL_MEM_KERNEL_READ_AND_WRITE)
    adopted = make_buffer(ctx, 256)
    assert handles.adopted(adopted) is not None                    # (as a Python entry would)
    for buf in (python_made, adopted):
        data = np.zeros(64, dtype=np.int32)
        assert write(q, buf, data)[0] == 0                          # primes its record
        answered = []
        for i in range(5):              # (nothing else between: a public call could prime again)
            data = np.full(64, i, dtype=np.int32)
            answered.append(native_write(q, buf, 0, 0, 256, addr(data), 0, 0, 0))
            assert CL.clFinish(q) == 0
            reap()                                  # (as any Python entry does: idle holds go)
        assert answered == [0] * 5
        assert read(q, buf, 256, np.int32).tolist() == [4] * 64
    for m in (python_made, adopted):
        assert CL.clReleaseMemObject(m) == 0
    assert CL.clReleaseCommandQueue(q) == 0


THREADS_PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#define T 4
#define N 2000
#define W 64
static cl_context ctx; static cl_device_id dev; static cl_command_queue shared;
static cl_mem shared_buf; static int failures;
#define OK(x) do { if ((x) != CL_SUCCESS) __sync_fetch_and_add(&failures, 1); } while (0)
static void *host(void *arg) {
    long t = (long)arg; cl_int e;
    cl_command_queue own = clCreateCommandQueue(ctx, dev, 0, &e);
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, W * 4, NULL, &e);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, W * 4, NULL, &e);
    static __thread int vals[W], got[W], back[W];
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < W; j++) vals[j] = (int)(t * 100000 + i + j);
        /* in-order: write, copy, fill a, read b (the copy's), read a (the fill's) */
        OK(clEnqueueWriteBuffer(own, a, CL_FALSE, 0, W * 4, vals, 0, NULL, NULL));
        OK(clEnqueueCopyBuffer(own, a, b, 0, 0, W * 4, 0, NULL, NULL));
        int pattern = -(int)i;
        OK(clEnqueueFillBuffer(own, a, &pattern, 4, 0, W * 4, 0, NULL, NULL));
        cl_event marker;
        OK(clEnqueueMarkerWithWaitList(own, 0, NULL, &marker));
        OK(clFlush(own));
        OK(clEnqueueReadBuffer(own, b, i % 2 ? CL_TRUE : CL_FALSE, 0, W * 4, got, 0, NULL, NULL));
        /* the shared out-of-order queue: after the marker, one int of the shared buffer */
        OK(clEnqueueWriteBuffer(shared, shared_buf, CL_TRUE, t * 4, 4, &vals[0], 1, &marker, NULL));
        OK(clReleaseEvent(marker));
        OK(clEnqueueReadBuffer(own, a, CL_TRUE, 0, W * 4, back, 0, NULL, NULL));
        for (int j = 0; j < W; j++)
            if (got[j] != vals[j] || back[j] != -(int)i) { __sync_fetch_and_add(&failures, 1); break; }
    }
    OK(clFinish(own));
    clReleaseMemObject(a); clReleaseMemObject(b); clReleaseCommandQueue(own);
    return NULL;
}
int main(void) {
    cl_platform_id ps[16]; cl_uint np = 0, i; cl_platform_id p = 0; char name[256]; cl_int e;
    clGetPlatformIDs(16, ps, &np);
    for (i = 0; i < np; i++) {
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, "PyPlat")) p = ps[i];
    }
    if (!p) { printf("FAIL no PyPlat\n"); return 1; }
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    shared = clCreateCommandQueue(ctx, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &e);
    shared_buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, T * 4, NULL, &e);
    pthread_t th[T];
    for (long t = 0; t < T; t++) pthread_create(&th[t], NULL, host, (void *)t);
    for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
    int out[T];
    OK(clEnqueueReadBuffer(shared, shared_buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    printf("%d", failures);
    for (int t = 0; t < T; t++) printf(" %d", out[t]);
    printf("\n");
    return 0;
}
"""


def test_native_commands_from_several_c_threads(run_with_pyplat, tmp_path):
    """C host threads through the loader: in-order queues keep each thread's order, blocking
    and non-blocking, markers in wait lists across queues."""
    exe = build_c_program(tmp_path, "commands", THREADS_PROGRAM)
    for env in ({"PYPLAT_WORKERS": "1"}, {"PYPLAT_WORKERS": "4"}):
        r = run_with_pyplat([exe], env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.split() == ["0"] + [str(t * 100000 + 1999) for t in range(4)], r.stdout + r.stderr


def test_buffer_size_and_flags_are_answered_natively():
    """clGetMemObjectInfo(CL_MEM_SIZE / CL_MEM_FLAGS) of a buffer (pyopencl's Buffer.size reads
    it) comes from its native record, with Python's answer; other queries and short buffers stay
    Python's, a handle that is none is refused by either."""
    ctx, dev = make_context()
    flags = cl.CL_MEM_READ_ONLY | cl.CL_MEM_ALLOC_HOST_PTR
    buf = make_buffer(ctx, 4096, flags)
    info_fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64,
                               ctypes.c_size_t, ctypes.c_size_t)(_native.fast_path_entries()["clGetMemObjectInfo"])
    for param, want in ((cl.CL_MEM_SIZE, 4096), (cl.CL_MEM_FLAGS, flags)):
        for call in (info_fn, CL.clGetMemObjectInfo):
            v, n = ctypes.c_uint64(0), ctypes.c_size_t(0)
            assert call(buf, param, 8, addr(v), addr(n)) == 0
            assert (v.value, n.value) == (want, 8)
    short = ctypes.c_uint32()
    assert info_fn(buf, cl.CL_MEM_SIZE, 4, addr(short), 0) == _native.DEFER
    assert CL.clGetMemObjectInfo(buf, cl.CL_MEM_SIZE, 4, addr(short), 0) == cl.CL_INVALID_VALUE
    assert info_fn(buf, cl.CL_MEM_TYPE, 4, addr(short), 0) == _native.DEFER
    assert CL.clReleaseMemObject(buf) == 0
    for fn in (info_fn, python_entry("clGetMemObjectInfo")):       # released: refused by either
        assert fn(buf, cl.CL_MEM_SIZE, 8, addr(ctypes.c_uint64()), 0) == cl.CL_INVALID_MEM_OBJECT
    assert CL.clReleaseContext(ctx) == 0


TEMPORARIES_PROGRAM = NAMED_PLATFORM_C + r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
static const char *SRC = "__kernel void add(__global int *acc, __global const int *t) {"
                         "  acc[get_global_id(0)] += t[get_global_id(0)]; }";
#define THREADS 4
#define ROUNDS 600
#define N 256
static cl_context ctx; static cl_device_id dev; static cl_program prog; static int wrong;
static void *work(void *arg) {
    long t = (long)arg; cl_int e; int host[N], out[N];
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e);
    cl_kernel k = clCreateKernel(prog, "add", &e);
    cl_mem acc = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof out, NULL, &e);
    cl_mem copies = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof out, NULL, &e);
    int zero = 0; long want = 0;
    clEnqueueFillBuffer(q, acc, &zero, 4, 0, sizeof out, 0, NULL, NULL);
    clSetKernelArg(k, 0, sizeof acc, &acc);
    size_t n = N;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++) host[i] = (int)(t + r);
        /* a temporary: written, read by a launch and a copy, released at once while they wait */
        cl_mem tmp = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof host, host, &e);
        if (e) wrong++;
        clSetKernelArg(k, 1, sizeof tmp, &tmp);
        if (clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL)) wrong++;
        if (clEnqueueCopyBuffer(q, tmp, copies, 0, 0, sizeof host, 0, NULL, NULL)) wrong++;
        if (clReleaseMemObject(tmp)) wrong++;
        want += t + r;
        if (r % 97 == 0 || r == ROUNDS - 1) {
            clEnqueueReadBuffer(q, copies, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
            for (int i = 0; i < N; i++) if (out[i] != (int)(t + r)) { wrong++; break; }
        }
    }
    clEnqueueReadBuffer(q, acc, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
    for (int i = 0; i < N; i++) if (out[i] != (int)want) { wrong++; break; }
    clReleaseMemObject(acc); clReleaseMemObject(copies); clReleaseKernel(k); clReleaseCommandQueue(q);
    return NULL;
}
int main(int argc, char **argv) {
    cl_int e;
    cl_platform_id p = named_platform(argc, argv);
    if (!p) return 1;
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e);
    clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, work, (void *)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    if (wrong) printf("wrong %d\n", wrong); else printf("ok\n");
    clReleaseProgram(prog); clReleaseContext(ctx);
    return 0;
}
"""


def test_temporaries_released_while_used_from_several_c_threads(run_with_pyplat, tmp_path):
    """C host threads each make a temporary buffer a round, launch a kernel that reads it and
    copy it, and release it at once while both wait (the bytes live until they ran): every
    launch adds the right values and every copy has them."""
    run_c_program_ok(run_with_pyplat, tmp_path, "temporaries", TEMPORARIES_PROGRAM,
                     envs=({"PYPLAT_WORKERS": "1"}, {"PYPLAT_WORKERS": "3"}))
