"""clCreateBuffer answered natively (pyplat/api/native_buffers.pxi) for host-memory contexts: the
buffer a program gets must behave exactly as one the Python entry makes -- its bytes, flags and
counts, its context's count, the order of commands before and after Python first needs it
(adoption), and its release while commands still use it."""
import ctypes

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native
from support.capi import CL, addr, err, python_entry
from support.clobjects import (context_and_program, create_kernel, make_buffer, make_context, make_queue,
                               read, set_arg)

if not CL._direct.get("clEnqueueWriteBuffer") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

S, U32, U64, I32 = ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32
DEFER_HANDLE = 1
# The native entry itself (what the shim calls before taking the GIL).
native_create = ctypes.CFUNCTYPE(S, S, U64, U64, S, S)(_native.fast_path_entries()["clCreateBuffer"])
SOURCE = b"__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }"


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


def created(ctx, flags, size, host=None):
    e = I32(12345)
    h = native_create(ctx, flags, size, addr(host) if host is not None else 0, addr(e))
    assert h not in (0, DEFER_HANDLE), "the native entry did not answer"
    assert e.value == 0
    return h


def info(obj, param, ctype=S, fn=None):
    v = ctype()
    assert (fn or CL.clGetMemObjectInfo)(obj, param, ctypes.sizeof(v), addr(v), 0) == 0
    return v.value


def context_refs(ctx):
    return info(ctx, cl.CL_CONTEXT_REFERENCE_COUNT, U32, CL.clGetContextInfo)


def test_plain_requests_are_answered_natively_with_zeroed_aligned_bytes(env):
    ctx, dev, _ = env
    q = make_queue(ctx, dev)
    data = np.arange(1024, dtype=np.int32)
    cases = [(0, None), (cl.CL_MEM_READ_ONLY, None), (cl.CL_MEM_COPY_HOST_PTR | cl.CL_MEM_WRITE_ONLY, data),
             (cl.CL_MEM_ALLOC_HOST_PTR | cl.CL_MEM_HOST_READ_ONLY, None)]
    for flags, host in cases:
        b = created(ctx, flags, 4096, host)
        got = read(q, b, 4096, np.int32)
        assert got.tolist() == (data.tolist() if host is not None else [0] * 1024)
        assert info(b, cl.CL_MEM_SIZE) == 4096
        assert info(b, cl.CL_MEM_FLAGS, U64) == (flags if flags & 7 else flags | cl.CL_MEM_READ_WRITE)
        assert info(b, cl.CL_MEM_REFERENCE_COUNT, U32) == 1      # (a Python query: adopted now)
        assert CL.clReleaseMemObject(b) == 0
    user = np.zeros(1024, dtype=np.int32)
    b = created(ctx, cl.CL_MEM_USE_HOST_PTR, 4096, user)
    assert info(b, cl.CL_MEM_HOST_PTR) == user.ctypes.data
    assert CL.clReleaseMemObject(b) == 0
    CL.clReleaseCommandQueue(q)


def refusal(fn, *args):
    """(handle, errcode_ret) of a creation that is refused."""
    e = I32(777)
    return fn(*args, addr(e)), e.value


def test_requests_the_rules_refuse_are_refused_natively_as_by_the_python_entry(env):
    """native_creation_rules.pxi: the native entry refuses with the Python entry's code itself
    (the context first: native_handle_rules.pxi)."""
    ctx, _, _ = env
    data = np.zeros(16, dtype=np.int32)
    dev_limit = U64()
    devs = S()
    assert CL.clGetContextInfo(ctx, cl.CL_CONTEXT_DEVICES, 8, addr(devs), 0) == 0
    assert CL.clGetDeviceInfo(devs.value, cl.CL_DEVICE_MAX_MEM_ALLOC_SIZE, 8, addr(dev_limit), 0) == 0
    bad = [((ctx, cl.CL_MEM_READ_ONLY | cl.CL_MEM_WRITE_ONLY, 64, 0), cl.CL_INVALID_VALUE),    # two access flags
           ((ctx, cl.CL_MEM_HOST_READ_ONLY | cl.CL_MEM_HOST_NO_ACCESS, 64, 0), cl.CL_INVALID_VALUE),
           ((ctx, cl.CL_MEM_COPY_HOST_PTR, 64, 0), cl.CL_INVALID_HOST_PTR),                 # no host pointer
           ((ctx, 0, 64, data.ctypes.data), cl.CL_INVALID_HOST_PTR),                        # a pointer not wanted
           ((ctx, cl.CL_MEM_USE_HOST_PTR | cl.CL_MEM_COPY_HOST_PTR, 64, data.ctypes.data), cl.CL_INVALID_VALUE),
           ((ctx, 1 << 40, 64, 0), cl.CL_INVALID_VALUE),                                    # unknown flag
           ((ctx, 0, 0, 0), cl.CL_INVALID_BUFFER_SIZE),
           ((ctx, 0, dev_limit.value + 1, 0), cl.CL_INVALID_BUFFER_SIZE),
           ((ctx, cl.CL_MEM_COPY_HOST_PTR, 0, 0), cl.CL_INVALID_BUFFER_SIZE),               # size before host_ptr
           ((ctx + 8, 0, 64, 0), cl.CL_INVALID_CONTEXT), ((0, 0, 64, 0), cl.CL_INVALID_CONTEXT),
           ((devs.value, 3, 0, 0), cl.CL_INVALID_CONTEXT)]                                  # the context first
    for args, code in bad:
        assert refusal(native_create, *args) == (0, code), args
        assert refusal(python_entry("clCreateBuffer"), *args) == (0, code), args
    # CL_MEM_KERNEL_READ_AND_WRITE is a flag the table knows: made natively too
    b = created(ctx, cl.CL_MEM_KERNEL_READ_AND_WRITE, 64)
    assert info(b, cl.CL_MEM_FLAGS, U64) == cl.CL_MEM_KERNEL_READ_AND_WRITE | cl.CL_MEM_READ_WRITE
    assert CL.clReleaseMemObject(b) == 0


def test_a_native_buffer_holds_its_context_as_a_python_one_does(env):
    ctx, _, _ = env
    before = context_refs(ctx)
    b = created(ctx, 0, 256)
    assert context_refs(ctx) == before + 1
    assert CL.clRetainMemObject(b) == 0 and CL.clReleaseMemObject(b) == 0
    assert CL.clReleaseMemObject(b) == 0                        # freed natively
    assert context_refs(ctx) == before
    assert CL.clRetainMemObject(b) == cl.CL_INVALID_MEM_OBJECT  # and its handle is dead
    # adopted: the core Buffer takes the context reference over
    b = created(ctx, 0, 256)
    assert info(b, cl.CL_MEM_CONTEXT) == ctx
    assert context_refs(ctx) == before + 1
    assert CL.clReleaseMemObject(b) == 0
    assert context_refs(ctx) == before


def test_the_context_lives_while_a_native_buffer_does():
    ctx, dev = make_context()
    q = make_queue(ctx, dev)
    b = created(ctx, cl.CL_MEM_COPY_HOST_PTR, 64, np.full(16, 7, dtype=np.int32))
    assert CL.clReleaseCommandQueue(q) == 0
    assert CL.clReleaseContext(ctx) == 0                        # the buffer still holds it
    assert context_refs(ctx) == 1
    assert info(b, cl.CL_MEM_SIZE) == 64
    assert CL.clReleaseMemObject(b) == 0                        # (the context's last reference)
    assert CL.clRetainContext(ctx) == cl.CL_INVALID_CONTEXT


def test_commands_before_and_after_adoption_keep_their_order(env):
    """In-order automatic parallelisation orders commands by buffer: a native write (made before
    Python knew the buffer) and a launch after adoption must share the buffer's key."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)                                    # in-order: parallel by buffer
    kernel = create_kernel(prog, b"inc")
    for _ in range(3):
        b = created(ctx, 0, 4096)
        e = err()
        gate = CL.clCreateUserEvent(ctx, addr(e))
        data = np.full(1024, 41, dtype=np.int32)
        assert CL.clEnqueueWriteBuffer(q, b, False, 0, 4096, addr(data), 1, addr((S * 1)(gate)), 0) == 0
        set_arg(kernel, 0, b)                                   # Python needs it: adopted now
        n = S(1024)
        assert CL.clEnqueueNDRangeKernel(q, kernel, 1, 0, addr(n), 0, 0, 0, 0) == 0
        CL.clFlush(q)
        assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == 0
        assert CL.clFinish(q) == 0
        assert read(q, b, 4096, np.int32).tolist() == [42] * 1024
        CL.clReleaseEvent(gate)
        assert CL.clReleaseMemObject(b) == 0
    CL.clReleaseKernel(kernel)
    CL.clReleaseCommandQueue(q)


def test_released_while_a_native_command_uses_it(env):
    ctx, dev, _ = env
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    for round_ in range(3):
        src = np.full(1024, round_ + 5, dtype=np.int32)
        a = created(ctx, cl.CL_MEM_COPY_HOST_PTR, 4096, src)
        b = created(ctx, 0, 4096)
        e = err()
        gate = CL.clCreateUserEvent(ctx, addr(e))
        assert CL.clEnqueueCopyBuffer(q, a, b, 0, 0, 4096, 1, addr((S * 1)(gate)), 0) == 0
        assert CL.clReleaseMemObject(a) == 0                    # pending: Python keeps it alive
        other = make_buffer(ctx, 4096)                          # (memory a may have had)
        nine = I32(9)
        assert CL.clEnqueueFillBuffer(q, other, addr(nine), 4, 0, 4096, 0, 0, 0) == 0
        assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == 0
        assert CL.clFinish(q) == 0
        assert read(q, b, 4096, np.int32).tolist() == src.tolist()
        CL.clReleaseEvent(gate)
        CL.clReleaseMemObject(b)
        CL.clReleaseMemObject(other)
    CL.clReleaseCommandQueue(q)


def test_sub_buffers_and_maps_of_a_native_buffer(env):
    ctx, dev, _ = env
    q = make_queue(ctx, dev)
    b = created(ctx, cl.CL_MEM_COPY_HOST_PTR, 4096, np.arange(1024, dtype=np.int32))
    region = (S * 2)(1024, 1024)
    e = err()
    sub = CL.clCreateSubBuffer(b, 0, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(region), addr(e))
    assert e.value == 0
    assert read(q, sub, 1024, np.int32).tolist() == list(range(256, 512))
    p = CL.clEnqueueMapBuffer(q, b, True, cl.CL_MAP_READ, 0, 4096, 0, 0, 0, addr(e))
    assert e.value == 0
    assert np.ctypeslib.as_array((ctypes.c_int32 * 1024).from_address(p))[1000] == 1000
    assert CL.clEnqueueUnmapMemObject(q, b, p, 0, 0, 0) == 0
    assert CL.clFinish(q) == 0
    assert CL.clReleaseMemObject(sub) == 0 and CL.clReleaseMemObject(b) == 0
    CL.clReleaseCommandQueue(q)


def test_the_alignment_is_the_devices():
    from pyplat.devices.spaces import ALIGNMENT
    assert _native.NATIVE_BUFFER_ALIGNMENT == ALIGNMENT


def test_c_programs_get_native_buffers(run_with_pyplat, tmp_path):
    """Through the loader: a C program's buffers made natively, used by commands and kernels."""
    from support.c_programs import run_c_program_ok
    run_c_program_ok(run_with_pyplat, tmp_path, "native_buffers", PROGRAM)


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
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
    cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
    if (clBuildProgram(pr, 1, &d, NULL, NULL, NULL)) return 2;
    cl_kernel k = clCreateKernel(pr, "twice", &e);
    int host[256], got[256];
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 256; i++) host[i] = i + round;
        cl_mem a = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &e);
        cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof host, NULL, &e);
        if (e || !a || !b) return 3;
        clEnqueueCopyBuffer(q, a, b, 0, 0, sizeof host, 0, NULL, NULL);
        clSetKernelArg(k, 0, sizeof b, &b);
        size_t n = 256;
        clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL);
        clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
        for (int i = 0; i < 256; i++)
            if (got[i] != 2 * (i + round)) { printf("round %d [%d] = %d\n", round, i, got[i]); return 4; }
        cl_buffer_region reg = {128, 256};
        cl_mem s = clCreateSubBuffer(b, CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &reg, &e);
        if (e || !s) return 6;
        clEnqueueReadBuffer(q, s, CL_TRUE, 0, 256, got, 0, NULL, NULL);
        for (int i = 0; i < 64; i++)
            if (got[i] != 2 * (i + 32 + round)) { printf("sub [%d] = %d\n", i, got[i]); return 7; }
        clReleaseMemObject(s);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
    }
    cl_mem bad = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, NULL, &e);
    if (bad || e != CL_INVALID_VALUE) return 5;
    clReleaseKernel(k); clReleaseProgram(pr); clReleaseCommandQueue(q); clReleaseContext(c);
    printf("ok\n");
    return 0;
}
"""


def test_a_native_buffer_set_natively_as_an_argument_is_adopted_when_python_takes_it(env):
    """clSetKernelArg of a buffer answers natively (native_kernel_args.pxi) and keeps the
    handle; the launch's plan, built in Python, must find the buffer made natively."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    kernel = create_kernel(prog, b"inc")
    first = make_buffer(ctx, 4096)
    set_arg(kernel, 0, first)                                   # a plan exists
    n = S(1024)
    assert CL.clEnqueueNDRangeKernel(q, kernel, 1, 0, addr(n), 0, 0, 0, 0) == 0
    for value in (3, 8):
        b = created(ctx, cl.CL_MEM_COPY_HOST_PTR, 4096, np.full(1024, value, dtype=np.int32))
        h = S(b)
        assert CL.clSetKernelArg(kernel, 0, ctypes.sizeof(h), addr(h)) == 0
        assert CL.clEnqueueNDRangeKernel(q, kernel, 1, 0, addr(n), 0, 0, 0, 0) == 0
        assert read(q, b, 4096, np.int32).tolist() == [value + 1] * 1024
        assert CL.clReleaseMemObject(b) == 0
    assert CL.clFinish(q) == 0
    CL.clReleaseMemObject(first)
    CL.clReleaseKernel(kernel)
    CL.clReleaseCommandQueue(q)


native_sub = ctypes.CFUNCTYPE(S, S, U64, U32, S, S)(_native.fast_path_entries()["clCreateSubBuffer"])


def sub_of(parent, origin, size, flags=0):
    region = (S * 2)(origin, size)
    e = I32(12345)
    h = native_sub(parent, flags, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(region), addr(e))
    assert h not in (0, DEFER_HANDLE), "the native entry did not answer"
    assert e.value == 0
    return h


def test_sub_buffers_made_natively_of_native_and_python_parents(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    data = np.arange(1024, dtype=np.int32)
    native_parent = created(ctx, cl.CL_MEM_COPY_HOST_PTR | cl.CL_MEM_READ_ONLY, 4096, data)
    python_parent = make_buffer(ctx, 4096, cl.CL_MEM_COPY_HOST_PTR | cl.CL_MEM_READ_WRITE, data)
    for parent in (native_parent, python_parent):
        before = info(parent, cl.CL_MEM_REFERENCE_COUNT, U32)
        ctx_before = context_refs(ctx)
        sub = sub_of(parent, 512, 1024)
        assert read(q, sub, 1024, np.int32).tolist() == list(range(128, 384))     # native read
        assert info(parent, cl.CL_MEM_REFERENCE_COUNT, U32) == before + 1
        assert context_refs(ctx) == ctx_before + 1
        assert CL.clReleaseMemObject(sub) == 0                                     # freed natively
        assert info(parent, cl.CL_MEM_REFERENCE_COUNT, U32) == before
        assert context_refs(ctx) == ctx_before
        assert CL.clRetainMemObject(sub) == cl.CL_INVALID_MEM_OBJECT
    # adopted: queries answered by the core Buffer as for a sub-buffer made in Python
    sub = sub_of(native_parent, 128, 256)
    assert info(sub, cl.CL_MEM_ASSOCIATED_MEMOBJECT) == native_parent
    assert info(sub, cl.CL_MEM_OFFSET) == 128
    assert info(sub, cl.CL_MEM_FLAGS, U64) == cl.CL_MEM_COPY_HOST_PTR | cl.CL_MEM_READ_ONLY
    assert CL.clReleaseMemObject(native_parent) == 0            # the sub-buffer still holds it
    assert read(q, sub, 256, np.int32).tolist() == list(range(32, 96))
    assert CL.clReleaseMemObject(sub) == 0
    assert CL.clFinish(q) == 0                                  # (the read's clean-up)
    assert CL.clRetainMemObject(native_parent) == cl.CL_INVALID_MEM_OBJECT
    CL.clReleaseMemObject(python_parent)
    CL.clReleaseCommandQueue(q)


def test_sub_buffer_requests_the_rules_refuse_are_refused_natively(env):
    ctx, _, _ = env
    ro = created(ctx, cl.CL_MEM_READ_ONLY | cl.CL_MEM_HOST_READ_ONLY, 4096)
    region = (S * 2)(0, 256)
    region_type = cl.CL_BUFFER_CREATE_TYPE_REGION
    bad = [((ro, cl.CL_MEM_WRITE_ONLY, region_type, addr(region)), cl.CL_INVALID_VALUE),    # vs read-only
           ((ro, cl.CL_MEM_HOST_WRITE_ONLY, region_type, addr(region)), cl.CL_INVALID_VALUE),
           ((ro, cl.CL_MEM_COPY_HOST_PTR, region_type, addr(region)), cl.CL_INVALID_VALUE),
           ((ro, 1 << 40, region_type, addr(region)), cl.CL_INVALID_VALUE),
           ((ro, 0, 0x1234, addr(region)), cl.CL_INVALID_VALUE), ((ro, 0, region_type, 0), cl.CL_INVALID_VALUE),
           ((0, 0, region_type, addr(region)), cl.CL_INVALID_MEM_OBJECT),
           ((ctx, 0, region_type, addr(region)), cl.CL_INVALID_MEM_OBJECT)]
    regions = []                                                  # (kept while used)
    for (origin, size), code in (((4, 64), cl.CL_MISALIGNED_SUB_BUFFER_OFFSET), ((0, 0), cl.CL_INVALID_BUFFER_SIZE),
                                 ((4096, 128), cl.CL_INVALID_VALUE), ((0, 8192), cl.CL_INVALID_VALUE),
                                 ((1 << 63, 1 << 63), cl.CL_INVALID_VALUE)):
        regions.append((S * 2)(origin, size))
        bad.append(((ro, 0, region_type, addr(regions[-1])), code))
    sub = sub_of(ro, 0, 256, cl.CL_MEM_HOST_NO_ACCESS)           # (host flags given: made natively)
    assert info(sub, cl.CL_MEM_FLAGS, U64) == cl.CL_MEM_READ_ONLY | cl.CL_MEM_HOST_NO_ACCESS
    bad.append(((sub, 0, region_type, addr(region)), cl.CL_INVALID_MEM_OBJECT))          # of a sub-buffer
    for args, code in bad:
        assert refusal(native_sub, *args) == (0, code), args
        assert refusal(python_entry("clCreateSubBuffer"), *args) == (0, code), args
    CL.clReleaseMemObject(sub)
    CL.clReleaseMemObject(ro)
