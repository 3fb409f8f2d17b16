"""Programs and kernels through the C API: building, logs, binaries, arguments, NDRange checks."""
import ctypes

import numpy as np
import pytest

from support.capi import CL, addr, err
from support.clobjects import (build_log, build_status, context_and_queue, create_kernel, create_program,
                               make_buffer, program_binary, read, set_arg)
from pyplat import cl

SOURCE = b"""
__kernel void scale(__global float *data, float factor) {
    size_t i = get_global_id(0);
    data[i] = data[i] * factor;
}
__kernel __attribute__((reqd_work_group_size(4, 1, 1)))
void fixed(__global int *out) { out[get_global_id(0)] = (int)get_local_size(0); }
"""


@pytest.fixture(scope="module")
def env():
    yield from context_and_queue()


def test_build_run_and_info(env):
    ctx, dev, q = env
    prog = create_program(ctx, SOURCE)
    assert build_status(prog, dev) == cl.CL_BUILD_NONE
    assert CL.clBuildProgram(prog, 0, 0, b"-DUNUSED=1", 0, 0) == 0
    assert build_status(prog, dev) == cl.CL_BUILD_SUCCESS
    names = ctypes.create_string_buffer(64)
    assert CL.clGetProgramInfo(prog, cl.CL_PROGRAM_KERNEL_NAMES, 64, addr(names), 0) == 0
    assert sorted(names.value.decode().split(";")) == ["fixed", "scale"]
    k = create_kernel(prog, b"scale")
    nargs = ctypes.c_uint32()
    CL.clGetKernelInfo(k, cl.CL_KERNEL_NUM_ARGS, 4, addr(nargs), 0)
    assert nargs.value == 2
    data = np.arange(64, dtype=np.float32)
    buf = make_buffer(ctx, data.nbytes, cl.CL_MEM_COPY_HOST_PTR, data)
    assert set_arg(k, 0, buf) == 0 and set_arg(k, 1, ctypes.c_float(0.5)) == 0
    gws = (ctypes.c_size_t * 1)(64)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(gws), 0, 0, 0, 0) == 0
    np.testing.assert_array_equal(read(q, buf, data.nbytes, np.float32), data * 0.5)
    # a program with kernels attached cannot be rebuilt
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == cl.CL_INVALID_OPERATION
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(buf)
    CL.clReleaseProgram(prog)


def test_syntax_error_gives_build_failure_and_log(env):
    ctx, dev, _ = env
    prog = create_program(ctx, b"__kernel void k(__global int *a) {\n  a[0] = 1 +;\n}\n")
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == cl.CL_BUILD_PROGRAM_FAILURE
    assert build_status(prog, dev) == cl.CL_BUILD_ERROR
    log = build_log(prog, dev)
    assert ":2:" in log and "error:" in log and "Traceback" not in log
    e = err()
    assert CL.clCreateKernel(prog, b"k", addr(e)) == 0 and e.value == cl.CL_INVALID_PROGRAM_EXECUTABLE
    CL.clReleaseProgram(prog)


def test_invalid_options_and_arguments(env):
    ctx, dev, _ = env
    prog = create_program(ctx, SOURCE)
    assert CL.clBuildProgram(prog, 0, 0, b"-no-such-option", 0, 0) == cl.CL_INVALID_BUILD_OPTIONS
    assert CL.clBuildProgram(prog, 1, 0, 0, 0, 0) == cl.CL_INVALID_VALUE
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 1) == cl.CL_INVALID_VALUE
    e = err()
    assert CL.clCreateProgramWithSource(ctx, 0, 0, 0, addr(e)) == 0 and e.value == cl.CL_INVALID_VALUE
    nulls = (ctypes.c_char_p * 1)()
    assert CL.clCreateProgramWithSource(ctx, 1, addr(nulls), 0, addr(e)) == 0 and e.value == cl.CL_INVALID_VALUE
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == 0
    assert CL.clCreateKernel(prog, b"missing", addr(e)) == 0 and e.value == cl.CL_INVALID_KERNEL_NAME
    assert CL.clCreateKernel(prog, 0, addr(e)) == 0 and e.value == cl.CL_INVALID_VALUE
    k = create_kernel(prog, b"scale")
    assert set_arg(k, 2, ctypes.c_float(1)) == cl.CL_INVALID_ARG_INDEX
    assert set_arg(k, 1, ctypes.c_double(1)) == cl.CL_INVALID_ARG_SIZE
    assert CL.clSetKernelArg(k, 1, 4, 0) == cl.CL_INVALID_ARG_VALUE
    assert set_arg(k, 0, 0xbad0) == cl.CL_INVALID_MEM_OBJECT
    CL.clReleaseKernel(k)
    CL.clReleaseProgram(prog)


def test_ndrange_validation(env):
    ctx, dev, q = env
    prog = create_program(ctx, SOURCE)
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == 0
    k = create_kernel(prog, b"scale")
    buf = make_buffer(ctx, 4 * 64)
    gws = (ctypes.c_size_t * 3)(64, 1, 1)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(gws), 0, 0, 0, 0) == cl.CL_INVALID_KERNEL_ARGS
    set_arg(k, 0, buf)
    set_arg(k, 1, ctypes.c_float(2))
    assert CL.clEnqueueNDRangeKernel(q, k, 0, 0, addr(gws), 0, 0, 0, 0) == cl.CL_INVALID_WORK_DIMENSION
    assert CL.clEnqueueNDRangeKernel(q, k, 4, 0, addr(gws), 0, 0, 0, 0) == cl.CL_INVALID_WORK_DIMENSION
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, 0, 0, 0, 0, 0) == cl.CL_SUCCESS   # NULL: zero-sized (2.1 on)
    lws = (ctypes.c_size_t * 1)(5)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(gws), addr(lws), 0, 0, 0) == cl.CL_INVALID_WORK_GROUP_SIZE
    huge = (ctypes.c_size_t * 1)(1 << 20)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(huge), addr(huge), 0, 0, 0) in (
        cl.CL_INVALID_WORK_GROUP_SIZE, cl.CL_INVALID_WORK_ITEM_SIZE)
    fixed = create_kernel(prog, b"fixed")
    set_arg(fixed, 0, buf)
    lws8 = (ctypes.c_size_t * 1)(8)
    assert CL.clEnqueueNDRangeKernel(q, fixed, 1, 0, addr(gws), addr(lws8), 0, 0, 0) == cl.CL_INVALID_WORK_GROUP_SIZE
    assert CL.clEnqueueNDRangeKernel(q, fixed, 1, 0, addr(gws), 0, 0, 0, 0) == 0
    assert read(q, buf, 4 * 64, np.int32).tolist() == [4] * 64
    wg = (ctypes.c_size_t * 3)()
    CL.clGetKernelWorkGroupInfo(fixed, dev, cl.CL_KERNEL_COMPILE_WORK_GROUP_SIZE, 24, addr(wg), 0)
    assert list(wg) == [4, 1, 1]
    for o in (k, fixed):
        CL.clReleaseKernel(o)
    CL.clReleaseMemObject(buf)
    CL.clReleaseProgram(prog)


def test_binary_round_trip(env):
    ctx, dev, q = env
    prog = create_program(ctx, SOURCE)
    assert CL.clBuildProgram(prog, 0, 0, b"-DX=1", 0, 0) == 0
    size = ctypes.c_size_t()
    assert CL.clGetProgramInfo(prog, cl.CL_PROGRAM_BINARY_SIZES, 8, addr(size), 0) == 0
    blob = ctypes.create_string_buffer(size.value)
    ptrs = (ctypes.c_void_p * 1)(ctypes.addressof(blob))
    assert CL.clGetProgramInfo(prog, cl.CL_PROGRAM_BINARIES, 8, addr(ptrs), 0) == 0
    devs = (ctypes.c_size_t * 1)(dev)
    lengths = (ctypes.c_size_t * 1)(size.value)
    status = (ctypes.c_int32 * 1)(99)
    e = err()
    again = CL.clCreateProgramWithBinary(ctx, 1, addr(devs), addr(lengths), addr(ptrs), addr(status), addr(e))
    assert e.value == 0 and status[0] == 0
    assert CL.clBuildProgram(again, 0, 0, 0, 0, 0) == 0
    k = create_kernel(again, b"scale")
    junk = ctypes.create_string_buffer(b"not a binary")
    jptr = (ctypes.c_void_p * 1)(ctypes.addressof(junk))
    jlen = (ctypes.c_size_t * 1)(12)
    assert CL.clCreateProgramWithBinary(ctx, 1, addr(devs), addr(jlen), addr(jptr), addr(status), addr(e)) == 0
    assert e.value == cl.CL_INVALID_BINARY and status[0] == cl.CL_INVALID_BINARY
    CL.clReleaseKernel(k)
    CL.clReleaseProgram(again)
    CL.clReleaseProgram(prog)


def test_kernel_arg_info(env):
    ctx, dev, _ = env
    prog = create_program(ctx, b"__kernel void k(__global const float *in, __local int *tmp, uint n) {}")
    assert CL.clBuildProgram(prog, 0, 0, b"-cl-kernel-arg-info", 0, 0) == 0
    k = create_kernel(prog, b"k")
    expected = [(cl.CL_KERNEL_ARG_ADDRESS_GLOBAL, "in"), (cl.CL_KERNEL_ARG_ADDRESS_LOCAL, "tmp"),
                (cl.CL_KERNEL_ARG_ADDRESS_PRIVATE, "n")]
    for i, (space, name) in enumerate(expected):
        q = ctypes.c_uint32()
        assert CL.clGetKernelArgInfo(k, i, cl.CL_KERNEL_ARG_ADDRESS_QUALIFIER, 4, addr(q), 0) == 0
        assert q.value == space
        buf = ctypes.create_string_buffer(32)
        assert CL.clGetKernelArgInfo(k, i, cl.CL_KERNEL_ARG_NAME, 32, addr(buf), 0) == 0
        assert buf.value.decode() == name
    assert CL.clGetKernelArgInfo(k, 3, cl.CL_KERNEL_ARG_NAME, 32, addr(buf), 0) == cl.CL_INVALID_ARG_INDEX
    CL.clReleaseKernel(k)
    CL.clReleaseProgram(prog)


ARG_QUERIES = (cl.CL_KERNEL_ARG_ADDRESS_QUALIFIER, cl.CL_KERNEL_ARG_ACCESS_QUALIFIER, cl.CL_KERNEL_ARG_TYPE_NAME,
               cl.CL_KERNEL_ARG_TYPE_QUALIFIER, cl.CL_KERNEL_ARG_NAME)


def arg_info_codes(prog):
    """clGetKernelArgInfo's code for each of the five queries of kernel k's argument 0."""
    k = create_kernel(prog, b"k")
    buf = ctypes.create_string_buffer(64)
    codes = [CL.clGetKernelArgInfo(k, 0, p, 64, addr(buf), 0) for p in ARG_QUERIES]
    CL.clReleaseKernel(k)
    return codes


def from_binary(ctx, dev, blob, options=b""):
    data = ctypes.create_string_buffer(blob, len(blob))
    ptrs = (ctypes.c_void_p * 1)(ctypes.addressof(data))
    devs = (ctypes.c_size_t * 1)(dev)
    lengths = (ctypes.c_size_t * 1)(len(blob))
    status = (ctypes.c_int32 * 1)(99)
    e = err()
    prog = CL.clCreateProgramWithBinary(ctx, 1, addr(devs), addr(lengths), addr(ptrs), addr(status), addr(e))
    assert e.value == 0 and status[0] == 0
    assert CL.clBuildProgram(prog, 0, 0, options, 0, 0) == 0
    return prog


def test_kernel_arg_info_needs_the_option(env):
    # all five queries answer CL_KERNEL_ARG_INFO_NOT_AVAILABLE without -cl-kernel-arg-info (as
    # PoCL does); a binary answers as the build it was made from
    ctx, dev, _ = env
    src = b"__kernel void k(__global const float *in, int n) {} /* arg-info-needs-option */"
    plain = create_program(ctx, src)
    assert CL.clBuildProgram(plain, 0, 0, b"", 0, 0) == 0
    assert arg_info_codes(plain) == [cl.CL_KERNEL_ARG_INFO_NOT_AVAILABLE] * 5
    k = create_kernel(plain, b"k")
    size = ctypes.c_size_t()
    # the other errors keep their precedence: an unknown query, a wrong index
    assert CL.clGetKernelArgInfo(k, 0, 0xdead, 0, 0, addr(size)) == cl.CL_INVALID_VALUE
    assert CL.clGetKernelArgInfo(k, 2, cl.CL_KERNEL_ARG_NAME, 0, 0, addr(size)) == cl.CL_INVALID_ARG_INDEX
    CL.clReleaseKernel(k)
    with_info = create_program(ctx, src)
    assert CL.clBuildProgram(with_info, 0, 0, b"-cl-kernel-arg-info", 0, 0) == 0
    assert arg_info_codes(with_info) == [0] * 5
    for prog, expected in ((plain, cl.CL_KERNEL_ARG_INFO_NOT_AVAILABLE), (with_info, 0)):
        again = from_binary(ctx, dev, program_binary(prog))
        assert arg_info_codes(again) == [expected] * 5
        CL.clReleaseProgram(again)
        CL.clReleaseProgram(prog)


def test_local_mem_size_before_arguments_are_set(env):
    ctx, dev, _ = env
    prog = create_program(ctx, b"__kernel void k(__global int *o, __local int *tmp) { o[0] = 1; }")
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == 0
    k = create_kernel(prog, b"k")
    size = ctypes.c_uint64(99)
    assert CL.clGetKernelWorkGroupInfo(k, dev, cl.CL_KERNEL_LOCAL_MEM_SIZE, 8, addr(size), 0) == 0
    before = size.value
    assert CL.clSetKernelArg(k, 1, 1000, 0) == 0
    assert CL.clGetKernelWorkGroupInfo(k, dev, cl.CL_KERNEL_LOCAL_MEM_SIZE, 8, addr(size), 0) == 0
    assert size.value >= before + 1000
    CL.clReleaseKernel(k)
    CL.clReleaseProgram(prog)
