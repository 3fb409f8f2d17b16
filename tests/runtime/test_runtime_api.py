"""The runtime through the C API: kernels shared between workers (local memory per worker),
in-order auto-parallelisation with the compiler's written flags, many host threads, objects
released while commands are pending, markers/barriers (1.1 forms), native kernels, migration."""
import ctypes
import threading

import numpy as np
import pytest

from pyplat import cl
from support.capi import CL, addr, err
from support.clobjects import (context_and_program, create_kernel, event_status, make_buffer, make_queue,
                               read, set_arg)

SOURCE = b"""
__kernel void group_sum(__global const int *in, __global int *out, __local int *scratch) {
    __local int total;
    size_t l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    if (l == 0) total = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        for (size_t i = 0; i < get_local_size(0); i++) total += scratch[i];
        out[get_group_id(0)] = total;
    }
}
__kernel void add(__global const int *a, __global int *b, int v) {
    size_t i = get_global_id(0);
    b[i] = a[i] + v;
}
__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }
"""


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


def write(q, buf, array, blocking=1):
    assert CL.clEnqueueWriteBuffer(q, buf, blocking, 0, array.nbytes, addr(array), 0, 0, 0) == 0


def ndrange(q, k, n, local=None, waits=(), want_event=False):
    g = (ctypes.c_size_t * 1)(n)
    l = (ctypes.c_size_t * 1)(local) if local else None
    wl = (ctypes.c_size_t * max(len(waits), 1))(*waits)
    ev = ctypes.c_size_t()
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), addr(l), len(waits), addr(wl) if waits else 0,
                                     addr(ev) if want_event else 0) == 0
    return ev.value


def test_kernel_groups_shared_between_workers_with_local_memory(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    n, local = 1 << 16, 64
    data = np.arange(n, dtype=np.int32)
    src, dst = make_buffer(ctx, data.nbytes), make_buffer(ctx, data.nbytes // local * 4)
    write(q, src, data)
    k = create_kernel(prog, b"group_sum")
    set_arg(k, 0, src)
    set_arg(k, 1, dst)
    assert CL.clSetKernelArg(k, 2, local * 4, 0) == 0
    for _ in range(3):
        ndrange(q, k, n, local)
    out = read(q, dst, n // local * 4, np.int32)
    assert (out == data.reshape(-1, local).sum(axis=1)).all()
    for o in (src, dst):
        CL.clReleaseMemObject(o)
    CL.clReleaseKernel(k)
    CL.clReleaseCommandQueue(q)


def test_in_order_auto_parallel_keeps_program_order(env):
    """Kernels reading a shared input run side by side; writers still see program order."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    n = 4096
    base = make_buffer(ctx, 4 * n)
    outs = [make_buffer(ctx, 4 * n) for _ in range(6)]
    write(q, base, np.zeros(n, np.int32))
    add = create_kernel(prog, b"add")
    inc = create_kernel(prog, b"inc")
    expected = np.zeros(n, np.int32)
    for round_ in range(20):
        for j, o in enumerate(outs):         # read base, write o: independent of each other
            set_arg(add, 0, base)
            set_arg(add, 1, o)
            assert CL.clSetKernelArg(add, 2, 4, addr(ctypes.c_int32(j))) == 0
            ndrange(q, add, n)
        set_arg(inc, 0, base)                # writes base: after every reader above
        ndrange(q, inc, n)
        expected += 1
    CL.clFinish(q)
    assert (read(q, base, 4 * n, np.int32) == expected).all()
    for j, o in enumerate(outs):
        assert (read(q, o, 4 * n, np.int32) == expected - 1 + j).all()
    for o in outs + [base]:
        CL.clReleaseMemObject(o)
    CL.clReleaseKernel(add)
    CL.clReleaseKernel(inc)
    CL.clReleaseCommandQueue(q)


def fill(q, buf, value, offset=0, size=4, waits=(), want_event=False):
    pattern = ctypes.c_int32(value)
    wl = (ctypes.c_size_t * max(len(waits), 1))(*waits)
    ev = ctypes.c_size_t()
    assert CL.clEnqueueFillBuffer(q, buf, addr(pattern), 4, offset, size, len(waits),
                                  addr(wl) if waits else 0, addr(ev) if want_event else 0) == 0
    return ev.value


@pytest.mark.parametrize("props", [0, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE])
def test_stress_thousands_of_commands_from_host_threads(env, props):
    ctx, dev, _ = env
    queues = [make_queue(ctx, dev, props) for _ in range(2)]
    slots = 8
    buf = make_buffer(ctx, 4 * slots)
    errors = []

    def worker(slot):
        try:
            q = queues[slot % 2]
            prev = []
            for i in range(400):       # a chain through explicit events on every queue kind
                ev = fill(q, buf, slot * 10000 + i, offset=4 * slot, waits=prev, want_event=True)
                for p in prev:
                    CL.clReleaseEvent(p)
                prev = [ev]
            evs = (ctypes.c_size_t * 1)(*prev)
            assert CL.clWaitForEvents(1, addr(evs)) == 0
            CL.clReleaseEvent(prev[0])
        except Exception as e:      # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(s,)) for s in range(slots)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for q in queues:
        assert CL.clFinish(q) == 0
    assert read(queues[0], buf, 4 * slots, np.int32).tolist() == [s * 10000 + 399 for s in range(slots)]
    CL.clReleaseMemObject(buf)
    for q in queues:
        CL.clReleaseCommandQueue(q)


DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_size_t, ctypes.c_void_p)


def test_released_objects_live_until_their_commands_finish(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    e = err()
    ue = CL.clCreateUserEvent(ctx, addr(e))
    buf = make_buffer(ctx, 4096)
    out = make_buffer(ctx, 4096)
    destroyed = []
    cb = DESTRUCTOR(lambda mem, user: destroyed.append(mem))
    assert CL.clSetMemObjectDestructorCallback(buf, ctypes.cast(cb, ctypes.c_void_p).value, 0) == 0
    fill(q, buf, 41, size=4096, waits=[ue])
    k = create_kernel(prog, b"add")
    set_arg(k, 0, buf)
    set_arg(k, 1, out)
    assert CL.clSetKernelArg(k, 2, 4, addr(ctypes.c_int32(1))) == 0
    ev = ndrange(q, k, 1024, want_event=True)
    assert CL.clReleaseKernel(k) == 0
    assert CL.clReleaseMemObject(buf) == 0
    assert destroyed == []                       # still used by pending commands
    CL.clSetUserEventStatus(ue, cl.CL_COMPLETE)
    assert CL.clFinish(q) == 0
    assert event_status(ev) == cl.CL_COMPLETE
    assert (read(q, out, 4096, np.int32) == 42).all()
    assert destroyed == [buf]
    for o in (ev, ue):
        CL.clReleaseEvent(o)
    CL.clReleaseMemObject(out)
    CL.clReleaseCommandQueue(q)


def test_markers_and_barriers_1_1_forms(env):
    ctx, dev, _ = env
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    buf = make_buffer(ctx, 8)
    e = err()
    ue = CL.clCreateUserEvent(ctx, addr(e))
    gated = fill(q, buf, 1, waits=[ue], want_event=True)
    marker = ctypes.c_size_t()
    assert CL.clEnqueueMarker(q, addr(marker)) == 0
    assert CL.clEnqueueBarrier(q) == 0
    after_barrier = fill(q, buf, 2, want_event=True)
    wl = (ctypes.c_size_t * 1)(gated)
    assert CL.clEnqueueWaitForEvents(q, 1, addr(wl)) == 0
    with_list = ctypes.c_size_t()
    assert CL.clEnqueueMarkerWithWaitList(q, 1, addr(wl), addr(with_list)) == 0
    barrier = ctypes.c_size_t()
    assert CL.clEnqueueBarrierWithWaitList(q, 1, addr(wl), addr(barrier)) == 0
    for ev in (marker.value, after_barrier, with_list.value, barrier.value):
        assert event_status(ev) > cl.CL_COMPLETE
    CL.clSetUserEventStatus(ue, cl.CL_COMPLETE)
    assert CL.clFinish(q) == 0
    for ev in (marker.value, after_barrier, with_list.value, barrier.value):
        assert event_status(ev) == cl.CL_COMPLETE
        CL.clReleaseEvent(ev)
    assert read(q, buf, 4, np.int32)[0] == 2
    assert CL.clEnqueueWaitForEvents(q, 0, 0) == cl.CL_INVALID_VALUE
    for o in (gated, ue):
        CL.clReleaseEvent(o)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_migrate_mem_objects(env):
    ctx, dev, _ = env
    q = make_queue(ctx, dev)
    a, b = make_buffer(ctx, 16), make_buffer(ctx, 16)
    mems = (ctypes.c_size_t * 2)(a, b)
    ev = ctypes.c_size_t()
    assert CL.clEnqueueMigrateMemObjects(q, 2, addr(mems), cl.CL_MIGRATE_MEM_OBJECT_HOST, 0, 0, addr(ev)) == 0
    assert CL.clWaitForEvents(1, addr(ev)) == 0
    assert CL.clEnqueueMigrateMemObjects(q, 0, addr(mems), 0, 0, 0, 0) == cl.CL_INVALID_VALUE
    assert CL.clEnqueueMigrateMemObjects(q, 2, addr(mems), 1 << 7, 0, 0, 0) == cl.CL_INVALID_VALUE
    CL.clReleaseEvent(ev.value)
    for o in (a, b):
        CL.clReleaseMemObject(o)
    CL.clReleaseCommandQueue(q)


NATIVE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def test_native_kernel(env, monkeypatch):
    ctx, dev, _ = env
    q = make_queue(ctx, dev)
    buf = make_buffer(ctx, 16)
    from pyplat.api.queue import lookup_queue
    device = lookup_queue(q).device
    args = (ctypes.c_uint64 * 2)(0, 7)             # [buffer, value]
    mems = (ctypes.c_size_t * 1)(buf)
    locs = (ctypes.c_size_t * 1)(ctypes.addressof(args))
    seen = []

    def body(p):
        a = (ctypes.c_uint64 * 2).from_address(p)
        ctypes.c_int32.from_address(a[0]).value = a[1] * 6
        seen.append(a[0])
    fn = NATIVE(body)
    f = ctypes.cast(fn, ctypes.c_void_p).value
    if not device.execution_capabilities & cl.CL_EXEC_NATIVE_KERNEL:
        assert CL.clEnqueueNativeKernel(q, f, addr(args), 16, 1, addr(mems), addr(locs), 0, 0, 0) == \
            cl.CL_INVALID_OPERATION
        monkeypatch.setattr(device, "execution_capabilities",
                            cl.CL_EXEC_KERNEL | cl.CL_EXEC_NATIVE_KERNEL, raising=False)
    assert CL.clEnqueueNativeKernel(q, 0, addr(args), 16, 1, addr(mems), addr(locs), 0, 0, 0) == cl.CL_INVALID_VALUE
    assert CL.clEnqueueNativeKernel(q, f, addr(args), 0, 1, addr(mems), addr(locs), 0, 0, 0) == cl.CL_INVALID_VALUE
    assert CL.clEnqueueNativeKernel(q, f, addr(args), 16, 1, 0, addr(locs), 0, 0, 0) == cl.CL_INVALID_VALUE
    assert CL.clEnqueueNativeKernel(q, f, addr(args), 16, 1, addr(mems), addr(locs), 0, 0, 0) == 0
    assert CL.clFinish(q) == 0
    assert read(q, buf, 4, np.int32)[0] == 42
    assert args[0] == 0                          # the caller's block is untouched
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)
