"""Small helpers over capi for tests: a context and queue on PyPlat's first device, buffers,
programs and kernels made and used through the C API."""
import ctypes

from support.capi import CL, addr, err
from pyplat import cl


def first_device():
    plat, dev = ctypes.c_size_t(), ctypes.c_size_t()
    assert CL.clGetPlatformIDs(1, addr(plat), 0) == cl.CL_SUCCESS
    assert CL.clGetDeviceIDs(plat.value, cl.CL_DEVICE_TYPE_ALL, 1, addr(dev), 0) == cl.CL_SUCCESS
    return dev.value


def make_context():
    dev = ctypes.c_size_t(first_device())
    e = err()
    ctx = CL.clCreateContext(0, 1, addr(dev), 0, 0, addr(e))
    assert e.value == cl.CL_SUCCESS
    return ctx, dev.value


def make_queue(ctx, dev, properties=0):
    e = err()
    q = CL.clCreateCommandQueue(ctx, dev, properties, addr(e))
    assert e.value == cl.CL_SUCCESS
    return q


def make_buffer(ctx, size, flags=cl.CL_MEM_READ_WRITE, host=None):
    e = err()
    buf = CL.clCreateBuffer(ctx, flags, size, addr(host), addr(e))
    assert e.value == cl.CL_SUCCESS, e.value
    return buf


def event_status(event):
    st = ctypes.c_int32()
    assert CL.clGetEventInfo(event, cl.CL_EVENT_COMMAND_EXECUTION_STATUS, 4, addr(st), 0) == cl.CL_SUCCESS
    return st.value


def read(queue, buf, nbytes, dtype):
    import numpy as np
    out = np.empty(nbytes // np.dtype(dtype).itemsize, dtype=dtype)
    assert CL.clEnqueueReadBuffer(queue, buf, 1, 0, nbytes, addr(out), 0, 0, 0) == cl.CL_SUCCESS
    return out


def context_and_queue():
    """A context, its device and an in-order queue, released after use: the body of a test
    module's `env` fixture (`yield from context_and_queue()`)."""
    ctx, dev = make_context()
    q = make_queue(ctx, dev)
    yield ctx, dev, q
    CL.clReleaseCommandQueue(q)
    CL.clReleaseContext(ctx)


def context_and_program(source):
    """A context, its device and a program built from `source`, released after use: the body
    of a test module's `env` fixture (`yield from context_and_program(SOURCE)`)."""
    ctx, dev = make_context()
    prog = create_program(ctx, source)
    assert CL.clBuildProgram(prog, 0, 0, b"", 0, 0) == 0
    yield ctx, dev, prog
    CL.clReleaseProgram(prog)
    CL.clReleaseContext(ctx)


def program_binary(prog):
    """CL_PROGRAM_BINARIES of a program of one device, as bytes."""
    size = ctypes.c_size_t()
    assert CL.clGetProgramInfo(prog, cl.CL_PROGRAM_BINARY_SIZES, 8, addr(size), 0) == 0
    blob = ctypes.create_string_buffer(size.value)
    ptrs = (ctypes.c_void_p * 1)(ctypes.addressof(blob))
    assert CL.clGetProgramInfo(prog, cl.CL_PROGRAM_BINARIES, 8, addr(ptrs), 0) == 0
    return blob.raw


def create_program(ctx, source):
    src = ctypes.c_char_p(source)
    e = err()
    prog = CL.clCreateProgramWithSource(ctx, 1, addr(src), 0, addr(e))
    assert e.value == 0
    return prog


def build_log(prog, dev):
    size = ctypes.c_size_t()
    CL.clGetProgramBuildInfo(prog, dev, cl.CL_PROGRAM_BUILD_LOG, 0, 0, addr(size))
    buf = ctypes.create_string_buffer(size.value)
    CL.clGetProgramBuildInfo(prog, dev, cl.CL_PROGRAM_BUILD_LOG, size.value, addr(buf), 0)
    return buf.value.decode()


def build_status(prog, dev):
    st = ctypes.c_int32()
    CL.clGetProgramBuildInfo(prog, dev, cl.CL_PROGRAM_BUILD_STATUS, 4, addr(st), 0)
    return st.value


def create_kernel(prog, name):
    e = err()
    k = CL.clCreateKernel(prog, name, addr(e))
    assert e.value == 0, e.value
    return k


def set_arg(k, i, value):
    if isinstance(value, int):            # a cl_mem handle
        h = ctypes.c_size_t(value)
        return CL.clSetKernelArg(k, i, 8, addr(h))
    return CL.clSetKernelArg(k, i, ctypes.sizeof(value), addr(value))
