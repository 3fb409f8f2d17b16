"""clEnqueueMapBuffer and clEnqueueUnmapMemObject answered natively (pyplat/api/native_maps.pxi)
for root buffers of host-memory contexts. A program must see what the Python path gives: the
pointer (the buffer's bytes at the offset), the order (a map after earlier commands on the
buffer, later commands after an unmap), CL_MEM_MAP_COUNT, and the one set of mapping records
whichever path made a mapping (a native map unmapped by Python and the other way round), with
every error the Python entry's code."""
import ctypes

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native
from support.c_programs import run_c_program_ok
from support.capi import CL, addr, err, python_entry
from support.clobjects import (context_and_program, create_kernel, make_buffer, make_context, make_queue,
                               read, set_arg)

SOURCE = b"__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }"

if not CL._direct.get("clEnqueueMapBuffer") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

S, U32, U64, I32 = ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32
RW = cl.CL_MAP_READ | cl.CL_MAP_WRITE
DEFER_HANDLE = 1                       # icd/pyplat_handle.h's PYPLAT_DEFER_HANDLE
UNTOUCHED = err().value                # errcode_ret as a deferring native entry leaves it
_NATIVE = _native.fast_path_entries()
# The native entries themselves (what the shim calls before taking the GIL).
native_map = ctypes.CFUNCTYPE(S, S, S, U32, U64, U64, U64, U32, S, S, S)(_NATIVE["clEnqueueMapBuffer"])
native_unmap = ctypes.CFUNCTYPE(I32, S, S, S, U32, S, S)(_NATIVE["clEnqueueUnmapMemObject"])


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


def wl(events):
    return (S * max(1, len(events)))(*events)


def map_buffer(q, buf, offset, size, flags=RW, blocking=True, waits=(), event=None, fn=None):
    """(pointer, code) of a map through the public entry (or `fn`)."""
    e, events = err(), wl(waits)
    p = (fn or CL.clEnqueueMapBuffer)(q, buf, blocking, flags, offset, size, len(waits),
                                      addr(events) if waits else 0, addr(event) if event is not None else 0, addr(e))
    return p or 0, e.value


def unmap(q, buf, p, waits=(), event=None, fn=None):
    events = wl(waits)
    return (fn or CL.clEnqueueUnmapMemObject)(q, buf, p, len(waits), addr(events) if waits else 0,
                                              addr(event) if event is not None else 0)


def map_count(buf):
    n = U32(12345)
    assert CL.clGetMemObjectInfo(buf, cl.CL_MEM_MAP_COUNT, 4, addr(n), 0) == 0
    return n.value


def user_event(ctx):
    e = err()
    ev = CL.clCreateUserEvent(ctx, addr(e))
    assert e.value == 0
    return ev


def command_type(ev):
    v = U32()
    assert CL.clGetEventInfo(ev, cl.CL_EVENT_COMMAND_TYPE, 4, addr(v), 0) == 0
    return v.value


def ints(p, n):
    return np.ctypeslib.as_array((ctypes.c_int32 * n).from_address(p))


def test_the_native_entries_answer_with_the_buffers_bytes(env):
    ctx, dev, _ = env
    q = make_queue(ctx, dev)
    data = np.arange(256, dtype=np.int32)
    buf = make_buffer(ctx, data.nbytes, cl.CL_MEM_READ_WRITE | cl.CL_MEM_COPY_HOST_PTR, data)
    p0, code = map_buffer(q, buf, 0, 1024, cl.CL_MAP_READ, fn=native_map)
    assert code == 0 and p0 not in (0, DEFER_HANDLE)
    p1, code = map_buffer(q, buf, 64, 128, cl.CL_MAP_READ, fn=native_map)
    assert code == 0 and p1 == p0 + 64                     # the bytes at the offset, as Python's
    assert ints(p0, 256).tolist() == data.tolist()
    ev = S()
    assert unmap(q, buf, p1, event=ev) == 0        # (the public entry: the queue primed for events)
    assert command_type(ev.value) == cl.CL_COMMAND_UNMAP_MEM_OBJECT
    CL.clReleaseEvent(ev.value)
    assert unmap(q, buf, p0, fn=native_unmap) == 0
    p, code = map_buffer(q, buf, 0, 16, blocking=False, event=ev)   # the public entry, native
    assert code == 0 and p == p0
    assert command_type(ev.value) == cl.CL_COMMAND_MAP_BUFFER
    assert CL.clWaitForEvents(1, addr(ev)) == 0
    CL.clReleaseEvent(ev.value)
    assert unmap(q, buf, p) == 0
    assert CL.clFinish(q) == 0 and map_count(buf) == 0
    # a CL_MEM_USE_HOST_PTR buffer maps to the application's memory, as on the Python path
    host = np.zeros(64, dtype=np.int32)
    used = make_buffer(ctx, host.nbytes, cl.CL_MEM_READ_WRITE | cl.CL_MEM_USE_HOST_PTR, host)
    p, code = map_buffer(q, used, 8, 32)
    assert code == 0 and p == host.ctypes.data + 8
    assert unmap(q, used, p) == 0 and CL.clFinish(q) == 0
    for b in (buf, used):
        CL.clReleaseMemObject(b)
    CL.clReleaseCommandQueue(q)


def test_writes_through_a_native_map_reach_reads_and_kernels(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    buf = make_buffer(ctx, 4096)
    for round_ in range(3):
        p, code = map_buffer(q, buf, 0, 4096, cl.CL_MAP_WRITE_INVALIDATE_REGION, fn=native_map)
        assert code == 0
        ints(p, 1024)[:] = np.arange(1024) * (round_ + 1)
        assert unmap(q, buf, p, fn=native_unmap) == 0
        k = create_kernel(prog, b"inc")
        assert set_arg(k, 0, buf) == 0
        n = S(1024)
        assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(n), 0, 0, 0, 0) == 0
        assert read(q, buf, 4096, np.int32).tolist() == (np.arange(1024) * (round_ + 1) + 1).tolist()
        CL.clReleaseKernel(k)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_a_map_comes_after_earlier_writes(env):
    """A blocking map after a non-blocking write sees the write; a non-blocking map after a
    write held back by a user event completes only after it, and then sees it."""
    ctx, dev, _ = env
    q = make_queue(ctx, dev)
    big = np.arange(1 << 20, dtype=np.int32)
    buf = make_buffer(ctx, big.nbytes)
    assert CL.clEnqueueWriteBuffer(q, buf, 0, 0, big.nbytes, addr(big), 0, 0, 0) == 0
    p, code = map_buffer(q, buf, 0, big.nbytes, cl.CL_MAP_READ)
    assert code == 0 and np.array_equal(ints(p, big.size), big)
    assert unmap(q, buf, p) == 0
    gate = user_event(ctx)
    seven = np.full(1 << 20, 7, dtype=np.int32)
    gates = wl([gate])
    assert CL.clEnqueueWriteBuffer(q, buf, 0, 0, seven.nbytes, addr(seven), 1, addr(gates), 0) == 0
    ev = S()
    p, code = map_buffer(q, buf, 0, seven.nbytes, cl.CL_MAP_READ, blocking=False, event=ev, fn=native_map)
    assert code == 0
    st = I32()
    assert CL.clGetEventInfo(ev.value, cl.CL_EVENT_COMMAND_EXECUTION_STATUS, 4, addr(st), 0) == 0
    assert st.value > cl.CL_COMPLETE                       # waits for the gated write
    assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == 0
    assert CL.clWaitForEvents(1, addr(ev)) == 0
    assert np.array_equal(ints(p, seven.size), seven)
    assert unmap(q, buf, p) == 0 and CL.clFinish(q) == 0
    for e in (ev.value, gate):
        CL.clReleaseEvent(e)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_native_and_python_mappings_are_one_set(env):
    """CL_MEM_MAP_COUNT sees native maps (the query adopts the buffer meanwhile); a native map is
    unmapped through the Python entry's records and a Python map by the native entry; unmaps
    held back count until they ran, failed ones are let go."""
    ctx, dev, _ = env
    q = make_queue(ctx, dev)
    buf = make_buffer(ctx, 1024)
    p, code = map_buffer(q, buf, 0, 256, fn=native_map)                  # native, not adopted
    assert code == 0 and map_count(buf) == 1                             # Python's query: adopted
    p2, code = map_buffer(q, buf, 256, 256, fn=native_map)               # native, adopted buffer
    assert code == 0 and map_count(buf) == 2
    gate = user_event(ctx)
    # a Python map (blocking with a wait list: the native entry defers) ...
    assert map_buffer(q, buf, 512, 64, blocking=True, waits=[gate], fn=native_map)[0] == DEFER_HANDLE
    assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == 0
    p3, code = map_buffer(q, buf, 512, 64, blocking=True, waits=[gate])
    assert code == 0 and p3 == p + 512 and map_count(buf) == 3
    assert unmap(q, buf, p3, fn=native_unmap) == 0                       # ... unmapped natively
    # an unmap with an event of another context in its wait list: CL_INVALID_CONTEXT from
    # either entry (native_handle_rules.pxi), the mapping kept
    other_ctx, _ = make_context()
    foreign = user_event(other_ctx)
    assert unmap(q, buf, p, waits=[foreign], fn=native_unmap) == cl.CL_INVALID_CONTEXT
    assert unmap(q, buf, p, waits=[foreign], fn=python_entry("clEnqueueUnmapMemObject")) == cl.CL_INVALID_CONTEXT
    assert CL.clFinish(q) == 0 and map_count(buf) == 2
    CL.clReleaseEvent(foreign)
    CL.clReleaseContext(other_ctx)
    held = user_event(ctx)
    assert unmap(q, buf, p, waits=[held], fn=native_unmap) == 0
    assert map_count(buf) == 2                      # counted until the unmap has run
    assert unmap(q, buf, p) == cl.CL_INVALID_VALUE  # its unmap is enqueued: no second one
    assert CL.clSetUserEventStatus(held, -5) == 0   # the unmap fails: the record goes
    assert CL.clFinish(q) == 0 and map_count(buf) == 1
    assert unmap(q, buf, p2, fn=native_unmap) == 0
    assert CL.clFinish(q) == 0 and map_count(buf) == 0
    for e in (gate, held):
        CL.clReleaseEvent(e)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_rules_refuse_natively_and_unknown_pointers_stay_the_python_entries(env):
    ctx, dev, _ = env
    q = make_queue(ctx, dev)
    buf = make_buffer(ctx, 1024)
    p, code = map_buffer(q, buf, 0, 512, cl.CL_MAP_WRITE, fn=native_map)
    assert code == 0
    # an unknown pointer, a pointer of another buffer, a mid-mapping pointer: CL_INVALID_VALUE
    other = make_buffer(ctx, 1024)
    for bad_buf, bad_ptr in ((buf, 12345), (other, p), (buf, p + 4)):
        assert unmap(q, bad_buf, bad_ptr, fn=native_unmap) == _native.DEFER
        assert unmap(q, bad_buf, bad_ptr) == cl.CL_INVALID_VALUE
    # overlapping a mapping for writing: CL_INVALID_OPERATION, for maps made either way and
    # for a sub-buffer's (Python's) map
    assert map_buffer(q, buf, 256, 16, cl.CL_MAP_READ, fn=native_map) == (DEFER_HANDLE, UNTOUCHED)
    assert map_buffer(q, buf, 256, 16, cl.CL_MAP_READ) == (0, cl.CL_INVALID_OPERATION)
    region = (S * 2)(256, 256)
    e = err()
    sub = CL.clCreateSubBuffer(buf, cl.CL_MEM_READ_WRITE, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(region), addr(e))
    assert e.value == 0
    assert map_buffer(q, sub, 0, 16, cl.CL_MAP_READ, fn=native_map) == (DEFER_HANDLE, UNTOUCHED)
    assert map_buffer(q, sub, 0, 16, cl.CL_MAP_READ) == (0, cl.CL_INVALID_OPERATION)
    # bad flags, regions and host access
    read_only = make_buffer(ctx, 64, cl.CL_MEM_READ_WRITE | cl.CL_MEM_HOST_READ_ONLY)
    for args, code in (((other, 0, 16, 0x8), cl.CL_INVALID_VALUE),
                       ((other, 0, 16, cl.CL_MAP_READ | cl.CL_MAP_WRITE_INVALIDATE_REGION), cl.CL_INVALID_VALUE),
                       ((other, 1000, 64, cl.CL_MAP_READ), cl.CL_INVALID_VALUE),
                       ((other, 0, 0, cl.CL_MAP_READ), cl.CL_INVALID_VALUE),
                       ((read_only, 0, 16, cl.CL_MAP_WRITE), cl.CL_INVALID_OPERATION),
                       ((0, 0, 16, cl.CL_MAP_READ), cl.CL_INVALID_MEM_OBJECT)):
        b, offset, size, flags = args
        # the rules' refusals come from the native entry itself (native_buffer_rules.pxi,
        # native_handle_rules.pxi)
        assert map_buffer(q, b, offset, size, flags, fn=native_map) == (0, code)
        assert map_buffer(q, b, offset, size, flags) == (0, code)
    assert unmap(q, buf, p) == 0 and CL.clFinish(q) == 0
    assert map_count(buf) == 0 and map_count(other) == 0 and map_count(sub) == 0
    for b in (sub, buf, other, read_only):
        CL.clReleaseMemObject(b)
    CL.clReleaseCommandQueue(q)


def test_a_buffer_released_while_mapped(env):
    """Released with its mappings never unmapped (made natively, never adopted, and adopted):
    nothing crashes, the buffers go, later buffers work."""
    ctx, dev, _ = env
    q = make_queue(ctx, dev)
    for adopt in (False, True, False, True):
        buf = make_buffer(ctx, 4096)
        p, code = map_buffer(q, buf, 0, 4096, fn=native_map)
        assert code == 0
        ints(p, 1024)[:] = 5
        if adopt:
            assert map_count(buf) == 1
        assert CL.clReleaseMemObject(buf) == 0
        assert CL.clFinish(q) == 0
        assert unmap(q, buf, p) == cl.CL_INVALID_MEM_OBJECT
        again = make_buffer(ctx, 4096)
        p, code = map_buffer(q, again, 0, 4096, cl.CL_MAP_WRITE_INVALIDATE_REGION)
        assert code == 0
        ints(p, 1024)[:] = 9
        assert unmap(q, again, p) == 0
        assert read(q, again, 4096, np.int32).tolist() == [9] * 1024
        CL.clReleaseMemObject(again)
    CL.clReleaseCommandQueue(q)


THREADS_PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#define T 4
#define N 3000
#define INTS 1024
static cl_context ctx; static cl_device_id dev; static cl_mem bufs[T]; static int failures;
static void *host(void *arg) {
    long t = (long)arg; cl_int e;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    if (e) { __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED); return NULL; }
    for (int i = 0; i < N; i++) {
        int *p = clEnqueueMapBuffer(q, bufs[t], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, INTS * sizeof(int),
                                    0, NULL, NULL, &e);
        if (e || !p) { __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED); break; }
        if (p[i % INTS] != (i >= INTS ? (int)(t * 1000000 + i - INTS) : 0))
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        p[i % INTS] = (int)(t * 1000000 + i);
        cl_uint count = 99;
        clGetMemObjectInfo(bufs[t], CL_MEM_MAP_COUNT, sizeof count, &count, NULL);
        if (count != 1) __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        if (clEnqueueUnmapMemObject(q, bufs[t], p, 0, NULL, NULL))
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        if (clEnqueueUnmapMemObject(q, bufs[t], p, 0, NULL, NULL) != CL_INVALID_VALUE)
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        if (i % 500 == 0) clFinish(q);
    }
    clFinish(q);
    clReleaseCommandQueue(q);
    return NULL;
}
int main(int argc, char **argv) {
    cl_platform_id ps[8]; cl_uint np = 0; cl_int e;
    clGetPlatformIDs(8, ps, &np);
    cl_platform_id plat = 0;
    for (cl_uint i = 0; i < np; i++) {
        char name[128] = "";
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, argv[1])) plat = ps[i];
    }
    if (!plat) { printf("no platform\n"); return 1; }
    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    cl_command_queue first = clCreateCommandQueue(ctx, dev, 0, &e);   /* the first queue: Python's */
    for (int t = 0; t < T; t++) bufs[t] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, INTS * sizeof(int), NULL, &e);
    pthread_t th[T];
    for (long t = 0; t < T; t++) pthread_create(&th[t], NULL, host, (void *)t);
    for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < T; t++) {
        int out[INTS];
        clEnqueueReadBuffer(first, bufs[t], CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
        for (int i = N - INTS; i < N; i++)
            if (out[i % INTS] != (int)(t * 1000000 + i)) failures++;
        cl_uint count = 99;
        clGetMemObjectInfo(bufs[t], CL_MEM_MAP_COUNT, sizeof count, &count, NULL);
        if (count != 0) failures++;
        clReleaseMemObject(bufs[t]);
    }
    clReleaseCommandQueue(first);
    clReleaseContext(ctx);
    if (failures) { printf("%d failures\n", failures); return 1; }
    printf("ok\n");
    return 0;
}
"""


def test_maps_from_several_c_threads(run_with_pyplat, tmp_path):
    """Four C host threads through the loader map, write, count and unmap their own buffers."""
    run_c_program_ok(run_with_pyplat, tmp_path, "native_maps", THREADS_PROGRAM)
