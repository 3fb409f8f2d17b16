"""A failed command fails only what depends on it (docs/runtime.md, "When a command fails"):
a command whose wait list holds a failed event terminates with
CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST without running, and so do the commands that list
*it*; the implicit order of a queue (in-order predecessor, buffer conflicts of the automatic
mode, barriers and markers without a wait list) only orders execution, so the queue's later
commands whose own wait lists are fine run normally, before and after clFinish, in both
in-order modes (PYPLAT_INORDER_PARALLEL=1 / 0), through the Python path and the native fast path."""
import ctypes

import numpy as np
import pytest

from pyplat import cl
from pyplat.runtime import graph
from pyplat.runtime.driver import get_driver
from support.capi import CL, addr, err
from support.clobjects import (context_and_program, create_kernel, event_status, make_buffer, make_queue,
                               read, set_arg)
from support.fake_queues import Recorder, make_queue as runtime_queue

FAILED = cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
OOO = cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
MODES = ["1", "0"]              # PYPLAT_INORDER_PARALLEL: automatic parallel, serial

SOURCE = b"__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }"


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


def user_event(ctx):
    e = err()
    ue = CL.clCreateUserEvent(ctx, addr(e))
    assert e.value == 0
    return ue


_KEEP = []


def wait_list(waits):
    """(count, address) of a cl_event array (kept alive: the address is passed on)."""
    if not waits:
        return 0, 0
    arr = (ctypes.c_size_t * len(waits))(*waits)
    _KEEP.append(arr)
    return len(waits), addr(arr)


def fill(q, buf, value, index, waits=()):
    """a[index] = value (one int); returns the event."""
    ev = ctypes.c_size_t()
    assert CL.clEnqueueFillBuffer(q, buf, addr(ctypes.c_int32(value)), 4, 4 * index, 4,
                                  *wait_list(waits), addr(ev)) == 0
    return ev.value


def launch(q, k, n, waits=()):
    g = (ctypes.c_size_t * 1)(n)
    ev = ctypes.c_size_t()
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, *wait_list(waits), addr(ev)) == 0
    return ev.value


def marker(q, waits=()):
    ev = ctypes.c_size_t()
    assert CL.clEnqueueMarkerWithWaitList(q, *wait_list(waits), addr(ev)) == 0
    return ev.value


def wait(*events):
    return CL.clWaitForEvents(*wait_list(events))


def zeroed(ctx, q, n):
    buf = make_buffer(ctx, 4 * n)
    assert CL.clEnqueueFillBuffer(q, buf, addr(ctypes.c_int32(0)), 4, 0, 4 * n, 0, 0, 0) == 0
    return buf


def release(*objects):
    for o in objects:
        CL.clReleaseEvent(o)


@pytest.mark.parametrize("mode", MODES)
def test_failure_in_the_middle_of_an_in_order_chain(env, mode, monkeypatch):
    ctx, dev, prog = env
    monkeypatch.setenv("PYPLAT_INORDER_PARALLEL", mode)
    q = make_queue(ctx, dev)
    a, b, c = (zeroed(ctx, q, 4) for _ in range(3))
    k = create_kernel(prog, b"inc")
    assert set_arg(k, 0, c) == 0
    assert CL.clFinish(q) == 0
    ue = user_event(ctx)
    k1 = launch(q, k, 4)                       # before the failure: runs
    e1 = fill(q, a, 1, 0, waits=[ue])          # fails: its wait list holds the failed user event
    e2 = fill(q, a, 2, 1)                      # same buffer, only the queue's order: runs
    e3 = fill(q, b, 3, 0)                      # another buffer: runs
    e4 = fill(q, b, 4, 1, waits=[e1])          # lists the failed command: fails
    e5 = fill(q, b, 5, 2, waits=[e4])          # ... and so on through explicit waits
    m = marker(q)                              # waits for every earlier command, lists none: runs
    k2 = launch(q, k, 4)                       # the native fast path, behind all of it: runs
    k3 = launch(q, k, 4, waits=[e1])           # a native launch listing the failed one: fails
    e6 = fill(q, a, 6, 2)
    pending = [e2, e3, m, k2, e6]
    # the queue's order holds; with automatic parallelisation (mode 1) e3, which shares no
    # buffer with anything still waiting, may already have run
    held = [e for e in pending if not (mode == "1" and e is e3)]
    assert all(event_status(e) > cl.CL_COMPLETE for e in held), [event_status(e) for e in pending]
    assert CL.clSetUserEventStatus(ue, -1234) == 0
    assert CL.clFinish(q) == cl.CL_SUCCESS
    assert event_status(ue) == -1234
    for e in (e1, e4, e5, k3):
        assert event_status(e) == FAILED
    for e in [k1] + pending:
        assert event_status(e) == cl.CL_COMPLETE
    assert read(q, a, 16, np.int32).tolist() == [0, 2, 6, 0]
    assert read(q, b, 16, np.int32).tolist() == [3, 0, 0, 0]
    assert read(q, c, 16, np.int32).tolist() == [2, 2, 2, 2]              # k1 and k2, not k3
    assert wait(e1) == FAILED
    assert wait(e2, e3) == cl.CL_SUCCESS
    assert wait(e2, e5, e3) == FAILED
    release(ue, k1, e1, e2, e3, e4, e5, m, k2, k3, e6)
    for o in (a, b, c):
        CL.clReleaseMemObject(o)
    CL.clReleaseKernel(k)
    CL.clReleaseCommandQueue(q)


@pytest.mark.parametrize("mode", MODES)
def test_queue_works_after_a_failed_command_finished(env, mode, monkeypatch):
    """The failure happened and clFinish returned: later commands with empty wait lists run, on
    the failed command's buffer and on others; one listing the failed event fails at once."""
    ctx, dev, prog = env
    monkeypatch.setenv("PYPLAT_INORDER_PARALLEL", mode)
    q = make_queue(ctx, dev)
    a, c = zeroed(ctx, q, 4), zeroed(ctx, q, 4)
    k = create_kernel(prog, b"inc")
    assert set_arg(k, 0, a) == 0
    ue = user_event(ctx)
    assert CL.clSetUserEventStatus(ue, -5) == 0              # failed before anything lists it
    e1 = launch(q, k, 4, waits=[ue])
    assert CL.clFinish(q) == cl.CL_SUCCESS
    assert event_status(e1) == FAILED
    later = [launch(q, k, 4), launch(q, k, 4), fill(q, a, 7, 3), fill(q, c, 8, 0), marker(q)]
    out = np.zeros(4, dtype=np.int32)
    assert CL.clEnqueueReadBuffer(q, a, 1, 0, 16, addr(out), 0, 0, 0) == cl.CL_SUCCESS
    assert out.tolist() == [2, 2, 2, 7]
    assert CL.clEnqueueReadBuffer(q, a, 1, 0, 16, addr(out), *wait_list([e1]), 0) == FAILED
    assert CL.clFinish(q) == cl.CL_SUCCESS
    assert [event_status(e) for e in later] == [cl.CL_COMPLETE] * len(later)
    assert read(q, c, 16, np.int32).tolist() == [8, 0, 0, 0]
    failed_marker = marker(q, waits=[e1])
    assert wait(failed_marker) == FAILED
    assert wait(fill(q, c, 9, 1)) == cl.CL_SUCCESS
    assert read(q, c, 16, np.int32).tolist() == [8, 9, 0, 0]
    release(ue, e1, failed_marker, *later)
    for o in (a, c):
        CL.clReleaseMemObject(o)
    CL.clReleaseKernel(k)
    CL.clReleaseCommandQueue(q)


@pytest.mark.parametrize("mode", MODES)
def test_blocking_call_behind_a_pending_failure(env, mode, monkeypatch):
    """A blocking read with an empty wait list behind a command that fails while it waits
    returns CL_SUCCESS with the data; one whose wait list fails returns the error."""
    ctx, dev, prog = env
    monkeypatch.setenv("PYPLAT_INORDER_PARALLEL", mode)
    q = make_queue(ctx, dev)
    a = zeroed(ctx, q, 4)
    ue = user_event(ctx)
    e1 = fill(q, a, 1, 0, waits=[ue])
    e2 = fill(q, a, 2, 1)
    assert CL.clSetUserEventStatus(ue, -1) == 0
    out = np.zeros(4, dtype=np.int32)
    assert CL.clEnqueueReadBuffer(q, a, 1, 0, 16, addr(out), 0, 0, 0) == cl.CL_SUCCESS
    assert out.tolist() == [0, 2, 0, 0]
    assert CL.clEnqueueReadBuffer(q, a, 1, 0, 16, addr(out), *wait_list([e1]), 0) == FAILED
    release(ue, e1, e2)
    CL.clReleaseMemObject(a)
    CL.clReleaseCommandQueue(q)


def test_out_of_order_chain_with_explicit_waits(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev, OOO)
    a, b = zeroed(ctx, q, 4), zeroed(ctx, q, 4)
    assert CL.clFinish(q) == 0
    ue = user_event(ctx)
    e1 = fill(q, a, 1, 0, waits=[ue])
    e2 = fill(q, a, 2, 1, waits=[e1])
    e3 = fill(q, a, 3, 2, waits=[e2])
    free = fill(q, b, 4, 0)                       # waits for nothing: runs
    both = fill(q, b, 5, 1, waits=[free, e3])     # one failed entry is enough: fails
    barrier = ctypes.c_size_t()                   # waits for all of them, lists none: runs
    assert CL.clEnqueueBarrierWithWaitList(q, 0, 0, addr(barrier)) == 0
    after = fill(q, b, 6, 2)                      # behind the barrier: runs
    waited = ctypes.c_size_t()
    assert CL.clEnqueueBarrierWithWaitList(q, *wait_list([e2]), addr(waited)) == 0   # fails
    last = fill(q, b, 7, 3)                       # behind a failed barrier, lists nothing: runs
    assert event_status(after) > cl.CL_COMPLETE and event_status(last) > cl.CL_COMPLETE
    assert CL.clSetUserEventStatus(ue, -77) == 0
    assert CL.clFinish(q) == cl.CL_SUCCESS
    for e in (e1, e2, e3, both, waited.value):
        assert event_status(e) == FAILED
    for e in (free, barrier.value, after, last):
        assert event_status(e) == cl.CL_COMPLETE
    assert read(q, a, 16, np.int32).tolist() == [0, 0, 0, 0]
    assert read(q, b, 16, np.int32).tolist() == [4, 0, 6, 7]
    assert wait(e3) == FAILED and wait(free, after) == cl.CL_SUCCESS
    release(ue, e1, e2, e3, free, both, barrier.value, after, waited.value, last)
    for o in (a, b):
        CL.clReleaseMemObject(o)
    CL.clReleaseCommandQueue(q)


@pytest.mark.parametrize("driver", ["pool", "basic"])
@pytest.mark.parametrize("mode", ["auto", "serial", "ooo"])
def test_runtime_queue_order_never_propagates_failure(driver, mode, monkeypatch):
    """Below the API, under both drivers: queue-order links (serial predecessor, buffer
    conflicts, barriers) never fail a command; wait-list links do."""
    props = OOO if mode == "ooo" else 0
    q = runtime_queue(props, get_driver(driver), monkeypatch, "0" if mode == "serial" else "1")
    rec = Recorder()
    user = graph.Command(graph.KIND_USER, None)
    mem = object()

    def enqueue(i, waits=(), barrier=False):
        c = q.new_command()
        c.set_action(rec.action(i))
        if i == 0:
            c.add_dependency(user)
        return q.enqueue(cl.CL_COMMAND_MARKER, c, waits, barrier=barrier, accesses=[(mem, True)])

    first = enqueue(0)
    plain = enqueue(1)
    listing = enqueue(2, [first])
    fenced = enqueue(3, barrier=True)
    after = enqueue(4)
    user.set_status(-1234)
    q.finish()
    late = enqueue(5)                              # the failed commands have finished by now
    late_listing = enqueue(6, [listing])
    q.finish()
    assert sorted(rec.runs) == [1, 3, 4, 5]
    assert [e.status for e in (first, listing, late_listing)] == [FAILED] * 3
    assert [e.status for e in (plain, fenced, after, late)] == [cl.CL_COMPLETE] * 4


C_PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>
static const char *SRC = "__kernel void inc(__global int *o) { o[get_global_id(0)] += 1; }";
int main(void) {
    cl_platform_id ps[16]; cl_uint np = 0, i; cl_platform_id p = 0; cl_device_id dev;
    char name[256]; cl_int e; size_t four = 4;
    clGetPlatformIDs(16, ps, &np);
    for (i = 0; i < np; i++) {
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, "PyPlat")) p = ps[i];
    }
    if (!p) { printf("FAIL no PyPlat\n"); return 1; }
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e);
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL)) { printf("FAIL build\n"); return 1; }
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    int zero[4] = {0, 0, 0, 0}, out[4];
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 16, zero, &e);
    cl_kernel k = clCreateKernel(prog, "inc", &e);
    clSetKernelArg(k, 0, sizeof(cl_mem), &buf);
    cl_event warm, ue = clCreateUserEvent(ctx, &e), bad, good, worse;
    clEnqueueNDRangeKernel(q, k, 1, NULL, &four, NULL, 0, NULL, &warm);   /* the plan: native after */
    clEnqueueNDRangeKernel(q, k, 1, NULL, &four, NULL, 1, &ue, &bad);
    clEnqueueNDRangeKernel(q, k, 1, NULL, &four, NULL, 0, NULL, &good);
    clEnqueueNDRangeKernel(q, k, 1, NULL, &four, NULL, 1, &bad, &worse);
    clSetUserEventStatus(ue, -3);
    /* native clWaitForEvents / clFinish (no GIL held by this thread) */
    printf("%d %d %d %d", clWaitForEvents(1, &good), clWaitForEvents(1, &worse),
           clWaitForEvents(1, &bad), clFinish(q));
    for (int n = 0; n < 100; n++)
        clEnqueueNDRangeKernel(q, k, 1, NULL, &four, NULL, 0, NULL, NULL);
    printf(" %d", clFinish(q));
    clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 16, out, 0, NULL, NULL);
    printf(" %d %d %d %d\n", out[0], out[1], out[2], out[3]);
    return 0;
}
"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("driver", ["pool", "basic"])
def test_c_program_native_entries(run_with_pyplat, tmp_path, mode, driver):
    """Through the loader, from a C thread without the GIL (native launches, clWaitForEvents
    and clFinish): the failure stays with the launches that list it; 100 later launches run."""
    from support.c_programs import build_c_program
    exe = build_c_program(tmp_path, "fail", C_PROGRAM)
    r = run_with_pyplat([exe], env={"PYPLAT_INORDER_PARALLEL": mode, "PYPLAT_DRIVER": driver})
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["0", str(FAILED), str(FAILED), "0", "0"] + ["102"] * 4, r.stdout + r.stderr
