"""clCreateContext(FromType) answered natively (pyplat/api/native_contexts.pxi): a context made
without a core object must serve native queues and buffers as one made in Python does, read the
same once Python needs it (adoption: devices, properties, counts, its notify callback), match
the objects made before adoption, and every request that is not plain must still get the spec's
code from the Python entry."""
import ctypes
import time

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native, handles
from support.c_programs import run_c_program_ok
from support.capi import CL, addr, err
from support.clobjects import create_kernel, create_program, first_device, make_buffer, read, set_arg
from support.native import native_queue, queue_info

if not CL._direct.get("clCreateContext") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

S, U32, U64, I32 = ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32
_NATIVE = _native.fast_path_entries()
native_create = ctypes.CFUNCTYPE(S, S, U32, S, S, S, S)(_NATIVE["clCreateContext"])
native_from_type = ctypes.CFUNCTYPE(S, S, U64, S, S, S)(_NATIVE["clCreateContextFromType"])
DEFER_HANDLE = 1
NOTIFY = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)


@pytest.fixture(scope="module")
def dev():
    d = first_device()
    e = err()         # (a process's first context and queue are Python's: the driver started)
    ctx = CL.clCreateContext(0, 1, addr(S(d)), 0, 0, addr(e))
    CL.clReleaseCommandQueue(CL.clCreateCommandQueue(ctx, d, 0, addr(e)))
    CL.clReleaseContext(ctx)
    return d


def platform():
    p = S()
    assert CL.clGetPlatformIDs(1, addr(p), 0) == 0
    return p.value


def native_context(dev, properties=None, notify=0, user_data=0):
    e = I32(12345)
    devices = (S * 2)(dev, dev)                                    # (a duplicate: ignored)
    c = native_create(addr(properties) if properties is not None else 0, 2, addr(devices), notify,
                      user_data, addr(e))
    assert c not in (0, DEFER_HANDLE), "the native entry did not answer"
    assert e.value == cl.CL_SUCCESS and handles.peek(c) is None
    return c


def context_info(c, param, ctype=U32):
    v = ctype()
    assert CL.clGetContextInfo(c, param, ctypes.sizeof(v), addr(v), 0) == cl.CL_SUCCESS
    return v.value


def test_a_native_context_serves_native_queues_and_buffers_without_python(dev):
    for _ in range(3):
        c = native_context(dev)
        q = native_queue(c, dev)
        b = make_buffer(c, 4096)
        data = np.arange(1024, dtype=np.int32)
        assert CL.clEnqueueWriteBuffer(q, b, 0, 0, 4096, addr(data), 0, 0, 0) == 0
        assert CL.clFlush(q) == 0
        got = np.empty_like(data)
        e = S()
        assert CL.clEnqueueReadBuffer(q, b, 0, 0, 4096, addr(got), 0, 0, addr(e)) == 0
        assert CL.clWaitForEvents(1, addr(S(e.value))) == 0 and CL.clReleaseEvent(e.value) == 0
        assert got.tolist() == data.tolist()
        assert CL.clRetainContext(c) == 0 and CL.clReleaseContext(c) == 0
        assert CL.clReleaseMemObject(b) == 0 and CL.clReleaseCommandQueue(q) == 0
        assert handles.peek(c) is None and handles.peek(q) is None       # never adopted
        assert CL.clReleaseContext(c) == 0                              # freed natively
        assert CL.clRetainContext(c) == cl.CL_INVALID_CONTEXT


def test_adopted_it_reads_as_a_python_context(dev):
    plat = platform()
    for plist, expected in ((None, []), ((S * 1)(0), [0]),
                            ((S * 3)(cl.CL_CONTEXT_PLATFORM, plat, 0), [cl.CL_CONTEXT_PLATFORM, plat, 0])):
        c = native_context(dev, plist)
        assert context_info(c, cl.CL_CONTEXT_REFERENCE_COUNT) == 1       # (adopted now)
        assert handles.peek(c) is not None
        assert context_info(c, cl.CL_CONTEXT_NUM_DEVICES) == 1
        assert context_info(c, cl.CL_CONTEXT_DEVICES, S) == dev
        n = S()
        assert CL.clGetContextInfo(c, cl.CL_CONTEXT_PROPERTIES, 0, 0, addr(n)) == 0
        got = (U64 * max(1, n.value // 8))()
        assert CL.clGetContextInfo(c, cl.CL_CONTEXT_PROPERTIES, n.value, addr(got), 0) == 0
        assert list(got)[:n.value // 8] == expected
        assert CL.clReleaseContext(c) == 0
        assert CL.clRetainContext(c) == cl.CL_INVALID_CONTEXT


def test_objects_made_before_adoption_match_those_made_after(dev):
    """A native queue and buffer of a native context; then the context adopted (a program), a
    kernel launched on them: the keys they were made with must be the adopted context's."""
    c = native_context(dev)
    q = native_queue(c, dev)
    b = make_buffer(c, 4096)
    data = np.full(1024, 4, dtype=np.int32)
    assert CL.clEnqueueWriteBuffer(q, b, 0, 0, 4096, addr(data), 0, 0, 0) == 0
    before = context_info(c, cl.CL_CONTEXT_REFERENCE_COUNT)              # the queue's and buffer's
    assert before == 3
    prog = create_program(c, b"__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }")
    assert CL.clBuildProgram(prog, 0, 0, b"", 0, 0) == 0
    k = create_kernel(prog, b"inc")
    set_arg(k, 0, b)
    n = S(1024)
    for _ in range(2):                          # (the second launch: native, on the adopted plan)
        assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(n), 0, 0, 0, 0) == 0
    assert read(q, b, 4096, np.int32).tolist() == [6] * 1024
    assert queue_info(q, cl.CL_QUEUE_CONTEXT) == c
    assert CL.clReleaseKernel(k) == 0 and CL.clReleaseProgram(prog) == 0
    assert CL.clReleaseMemObject(b) == 0 and CL.clReleaseCommandQueue(q) == 0
    deadline = time.monotonic() + 5              # (the launches' plan lets go from the reaper)
    while context_info(c, cl.CL_CONTEXT_REFERENCE_COUNT) != 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert context_info(c, cl.CL_CONTEXT_REFERENCE_COUNT) == 1
    assert CL.clReleaseContext(c) == 0


def test_released_before_its_objects(dev):
    """The context's last count goes with its last object, made natively or adopted."""
    for adopt in (False, True):
        c = native_context(dev)
        q = native_queue(c, dev)
        b = make_buffer(c, 64)
        if adopt:
            assert queue_info(q, cl.CL_QUEUE_REFERENCE_COUNT, U32) == 1
        assert CL.clReleaseContext(c) == 0                           # the queue and buffer hold it
        assert read(q, b, 64, np.int32).tolist() == [0] * 16
        assert CL.clReleaseMemObject(b) == 0 and CL.clFinish(q) == 0   # (a release at once)
        assert CL.clReleaseCommandQueue(q) == 0                      # (its last count)
        assert CL.clRetainContext(c) == cl.CL_INVALID_CONTEXT


def test_the_notify_callback_is_handed_to_the_adopted_context(dev):
    seen = []
    callback = NOTIFY(lambda message, info, size, user: seen.append((message, user)))
    c = native_context(dev, notify=ctypes.cast(callback, ctypes.c_void_p).value, user_data=77)
    handles.lookup(c, object, cl.CL_INVALID_CONTEXT).notify_error("a test message")
    assert seen == [(b"a test message", 77)]
    assert CL.clReleaseContext(c) == 0


def test_user_events_of_a_native_context(dev):
    c = native_context(dev)
    e = err()
    u = CL.clCreateUserEvent(c, addr(e))
    assert e.value == 0 and handles.peek(u) is None and handles.peek(c) is None    # both native
    assert CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == 0
    v = S()
    assert CL.clGetEventInfo(u, cl.CL_EVENT_CONTEXT, 8, addr(v), 0) == 0 and v.value == c   # adopted
    assert handles.peek(c) is not None
    assert CL.clReleaseEvent(u) == 0
    assert context_info(c, cl.CL_CONTEXT_REFERENCE_COUNT) == 1
    assert CL.clReleaseContext(c) == 0
    # released before its user event: the event keeps it
    c = native_context(dev)
    u = CL.clCreateUserEvent(c, addr(e))
    assert CL.clReleaseContext(c) == 0 and CL.clSetUserEventStatus(u, cl.CL_COMPLETE) == 0
    assert CL.clReleaseEvent(u) == 0
    assert CL.clRetainContext(c) == cl.CL_INVALID_CONTEXT


def test_from_type(dev):
    for device_type in (cl.CL_DEVICE_TYPE_ALL, cl.CL_DEVICE_TYPE_DEFAULT, cl.CL_DEVICE_TYPE_CPU):
        e = I32(12345)
        c = native_from_type(0, device_type, 0, 0, addr(e))
        assert c not in (0, DEFER_HANDLE) and e.value == 0
        assert context_info(c, cl.CL_CONTEXT_DEVICES, S) == dev
        assert CL.clReleaseContext(c) == 0


def test_what_is_not_plain_is_left_to_the_python_entry_untouched(dev):
    devices = (S * 1)(dev)
    keep = []

    def plist(*values):
        keep.append((S * (len(values) + 1))(*values, 0))
        return addr(keep[-1])
    bad = [((plist(0x7777, 1), 1, addr(devices), 0, 0), cl.CL_INVALID_PROPERTY),
           ((plist(cl.CL_CONTEXT_PLATFORM, dev), 1, addr(devices), 0, 0), cl.CL_INVALID_PLATFORM),
           ((plist(cl.CL_CONTEXT_PLATFORM, platform(), cl.CL_CONTEXT_PLATFORM, platform()), 1, addr(devices), 0, 0),
            cl.CL_INVALID_PROPERTY),
           ((0, 0, addr(devices), 0, 0), cl.CL_INVALID_VALUE),
           ((0, 1, 0, 0, 0), cl.CL_INVALID_VALUE),
           ((0, 1, addr(devices), 0, 5), cl.CL_INVALID_VALUE),             # user_data, no callback
           ((0, 1, addr((S * 1)(dev + 8)), 0, 0), cl.CL_INVALID_DEVICE)]
    for args, code in bad:
        e = I32(12345)
        assert native_create(*args, addr(e)) == DEFER_HANDLE and e.value == 12345
        assert CL.clCreateContext(*args, addr(e)) == 0 and e.value == code, (args, e.value)
    for args, code in [((0, 0, 0, 0), cl.CL_INVALID_DEVICE_TYPE), ((0, 1 << 40, 0, 0), cl.CL_INVALID_DEVICE_TYPE),
                       ((0, cl.CL_DEVICE_TYPE_GPU, 0, 0), cl.CL_DEVICE_NOT_FOUND),
                       ((0, cl.CL_DEVICE_TYPE_CPU, 0, 9), cl.CL_INVALID_VALUE)]:
        e = I32(12345)
        assert native_from_type(*args, addr(e)) == DEFER_HANDLE and e.value == 12345
        assert CL.clCreateContextFromType(*args, addr(e)) == 0 and e.value == code, (args, e.value)


def test_c_programs_get_native_contexts(run_with_pyplat, tmp_path):
    run_c_program_ok(run_with_pyplat, tmp_path, "native_contexts", PROGRAM)


PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
static const char *src = "__kernel void twice(__global int *a) { a[get_global_id(0)] *= 2; }";
int main(void) {
    cl_platform_id p; cl_device_id d; cl_int e;
    clGetPlatformIDs(1, &p, NULL);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, 0};
    int host[256], got[256];
    for (int round = 0; round < 100; round++) {
        cl_context c = round % 2 ? clCreateContext(props, 1, &d, NULL, NULL, &e)
                                 : clCreateContextFromType(NULL, CL_DEVICE_TYPE_DEFAULT, NULL, NULL, &e);
        if (e || !c) return 2;
        cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
        cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof host, NULL, &e);
        for (int i = 0; i < 256; i++) host[i] = i + round;
        clEnqueueWriteBuffer(q, b, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL);
        if (round % 10 == 0) {                       /* a program: the context adopted */
            cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
            if (clBuildProgram(pr, 1, &d, NULL, NULL, NULL)) return 3;
            cl_kernel k = clCreateKernel(pr, "twice", &e);
            clSetKernelArg(k, 0, sizeof b, &b);
            size_t n = 256;
            clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL);
            clReleaseKernel(k); clReleaseProgram(pr);
        }
        clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
        for (int i = 0; i < 256; i++)
            if (got[i] != (round % 10 ? 1 : 2) * (i + round)) { printf("round %d [%d] = %d\n", round, i, got[i]); return 4; }
        cl_uint refs = 0;
        clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL);
        if (refs < 3 || (round % 10 && refs != 3)) { printf("refs %u\n", refs); return 5; }
        if (clFinish(q)) return 9;                   /* (so that the releases are at once) */
        if (clReleaseContext(c) || clReleaseMemObject(b) || clReleaseCommandQueue(q)) return 6;
        if (clRetainContext(c) != CL_INVALID_CONTEXT) return 7;
    }
    cl_context bad = clCreateContext(props, 0, &d, NULL, NULL, &e);
    if (bad || e != CL_INVALID_VALUE) return 8;
    printf("ok\n");
    return 0;
}
"""
