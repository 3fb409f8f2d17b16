"""Buffers, sub-buffers, transfers, fills, rect copies and maps, in-process through the C API."""
import ctypes

import numpy as np
import pytest

from support.capi import CL, addr, err
from support.clobjects import context_and_queue, make_buffer, read
from pyplat import cl


@pytest.fixture(scope="module")
def env():
    yield from context_and_queue()


def test_write_read_roundtrip(env):
    ctx, _, q = env
    data = np.arange(1000, dtype=np.int32)
    buf = make_buffer(ctx, data.nbytes)
    assert CL.clEnqueueWriteBuffer(q, buf, 1, 0, data.nbytes, addr(data), 0, 0, 0) == 0
    np.testing.assert_array_equal(read(q, buf, data.nbytes, np.int32), data)
    part = np.zeros(10, dtype=np.int32)
    assert CL.clEnqueueReadBuffer(q, buf, 1, 40, 40, addr(part), 0, 0, 0) == 0
    np.testing.assert_array_equal(part, data[10:20])
    assert CL.clReleaseMemObject(buf) == 0


def test_use_host_ptr_shares_memory_and_copy_host_ptr_copies(env):
    ctx, _, q = env
    host = np.arange(64, dtype=np.float32)
    used = make_buffer(ctx, host.nbytes, cl.CL_MEM_USE_HOST_PTR, host)
    copied = make_buffer(ctx, host.nbytes, cl.CL_MEM_COPY_HOST_PTR, host)
    p = ctypes.c_void_p()
    assert CL.clGetMemObjectInfo(used, cl.CL_MEM_HOST_PTR, 8, addr(p), 0) == 0
    assert p.value == host.ctypes.data
    host[:] = -1
    np.testing.assert_array_equal(read(q, used, host.nbytes, np.float32), host)
    np.testing.assert_array_equal(read(q, copied, host.nbytes, np.float32), np.arange(64, dtype=np.float32))
    for b in (used, copied):
        CL.clReleaseMemObject(b)


@pytest.mark.parametrize("flags,host,code", [
    (cl.CL_MEM_READ_ONLY | cl.CL_MEM_WRITE_ONLY, False, cl.CL_INVALID_VALUE),
    (cl.CL_MEM_USE_HOST_PTR | cl.CL_MEM_COPY_HOST_PTR, True, cl.CL_INVALID_VALUE),
    (cl.CL_MEM_COPY_HOST_PTR, False, cl.CL_INVALID_HOST_PTR),
    (cl.CL_MEM_READ_WRITE, True, cl.CL_INVALID_HOST_PTR),
    (1 << 40, False, cl.CL_INVALID_VALUE),
])
def test_create_buffer_flag_errors(env, flags, host, code):
    ctx = env[0]
    data = np.zeros(16, dtype=np.uint8)
    e = err()
    assert CL.clCreateBuffer(ctx, flags, 16, addr(data) if host else 0, addr(e)) == 0
    assert e.value == code


def test_create_buffer_size_and_context_errors(env):
    ctx = env[0]
    e = err()
    assert CL.clCreateBuffer(ctx, 0, 0, 0, addr(e)) == 0 and e.value == cl.CL_INVALID_BUFFER_SIZE
    assert CL.clCreateBuffer(ctx, 0, 1 << 62, 0, addr(e)) == 0 and e.value == cl.CL_INVALID_BUFFER_SIZE
    assert CL.clCreateBuffer(0xdead0, 0, 16, 0, addr(e)) == 0 and e.value == cl.CL_INVALID_CONTEXT


def test_released_buffer_is_invalid(env):
    ctx, _, q = env
    buf = make_buffer(ctx, 64)
    assert CL.clRetainMemObject(buf) == 0
    assert CL.clReleaseMemObject(buf) == 0
    assert CL.clReleaseMemObject(buf) == 0
    assert CL.clReleaseMemObject(buf) == cl.CL_INVALID_MEM_OBJECT
    out = np.zeros(16, dtype=np.uint8)
    assert CL.clEnqueueReadBuffer(q, buf, 1, 0, 16, addr(out), 0, 0, 0) == cl.CL_INVALID_MEM_OBJECT


def test_transfer_bounds_and_host_access_flags(env):
    ctx, _, q = env
    out = np.zeros(64, dtype=np.uint8)
    buf = make_buffer(ctx, 64)
    assert CL.clEnqueueReadBuffer(q, buf, 1, 32, 64, addr(out), 0, 0, 0) == cl.CL_INVALID_VALUE
    assert CL.clEnqueueReadBuffer(q, buf, 1, 0, 16, 0, 0, 0, 0) == cl.CL_INVALID_VALUE
    no_read = make_buffer(ctx, 64, cl.CL_MEM_HOST_WRITE_ONLY)
    assert CL.clEnqueueReadBuffer(q, no_read, 1, 0, 16, addr(out), 0, 0, 0) == cl.CL_INVALID_OPERATION
    assert CL.clEnqueueWriteBuffer(q, no_read, 1, 0, 16, addr(out), 0, 0, 0) == 0
    for b in (buf, no_read):
        CL.clReleaseMemObject(b)


def test_sub_buffer_is_a_view(env):
    ctx, _, q = env
    data = np.arange(256, dtype=np.uint8)
    parent = make_buffer(ctx, 256, cl.CL_MEM_COPY_HOST_PTR, data)
    region = (ctypes.c_size_t * 2)(128, 64)
    e = err()
    sub = CL.clCreateSubBuffer(parent, 0, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(region), addr(e))
    assert e.value == 0
    np.testing.assert_array_equal(read(q, sub, 64, np.uint8), data[128:192])
    ones = np.full(64, 1, dtype=np.uint8)
    assert CL.clEnqueueWriteBuffer(q, sub, 1, 0, 64, addr(ones), 0, 0, 0) == 0
    assert read(q, parent, 256, np.uint8)[128:192].tolist() == [1] * 64
    off, assoc = ctypes.c_size_t(), ctypes.c_size_t()
    CL.clGetMemObjectInfo(sub, cl.CL_MEM_OFFSET, 8, addr(off), 0)
    CL.clGetMemObjectInfo(sub, cl.CL_MEM_ASSOCIATED_MEMOBJECT, 8, addr(assoc), 0)
    assert (off.value, assoc.value) == (128, parent)
    bad = (ctypes.c_size_t * 2)(1, 8)
    assert CL.clCreateSubBuffer(parent, 0, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(bad), addr(e)) == 0
    assert e.value == cl.CL_MISALIGNED_SUB_BUFFER_OFFSET
    out = (ctypes.c_size_t * 2)(128, 256)
    assert CL.clCreateSubBuffer(parent, 0, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(out), addr(e)) == 0
    assert e.value == cl.CL_INVALID_VALUE
    assert CL.clCreateSubBuffer(sub, 0, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(region), addr(e)) == 0
    assert e.value == cl.CL_INVALID_MEM_OBJECT
    CL.clReleaseMemObject(sub)
    CL.clReleaseMemObject(parent)


def test_copy_and_fill(env):
    ctx, _, q = env
    src = make_buffer(ctx, 64, cl.CL_MEM_COPY_HOST_PTR, np.arange(16, dtype=np.int32))
    dst = make_buffer(ctx, 64)
    pattern = ctypes.c_int32(-7)
    assert CL.clEnqueueFillBuffer(q, dst, addr(pattern), 4, 0, 64, 0, 0, 0) == 0
    assert CL.clEnqueueCopyBuffer(q, src, dst, 8, 16, 16, 0, 0, 0) == 0
    assert CL.clFinish(q) == 0
    expected = np.full(16, -7, dtype=np.int32)
    expected[4:8] = [2, 3, 4, 5]
    np.testing.assert_array_equal(read(q, dst, 64, np.int32), expected)
    assert CL.clEnqueueCopyBuffer(q, src, src, 0, 8, 16, 0, 0, 0) == cl.CL_MEM_COPY_OVERLAP
    assert CL.clEnqueueFillBuffer(q, dst, addr(pattern), 3, 0, 63, 0, 0, 0) == cl.CL_INVALID_VALUE
    assert CL.clEnqueueFillBuffer(q, dst, addr(pattern), 4, 2, 8, 0, 0, 0) == cl.CL_INVALID_VALUE
    CL.clReleaseMemObject(src)
    CL.clReleaseMemObject(dst)


def test_rect_read_write_copy(env):
    ctx, _, q = env
    grid = np.arange(8 * 6, dtype=np.uint8).reshape(6, 8)      # 6 rows of 8 bytes
    buf = make_buffer(ctx, grid.nbytes, cl.CL_MEM_COPY_HOST_PTR, grid)
    out = np.zeros((3, 4), dtype=np.uint8)
    b_origin, h_origin = (ctypes.c_size_t * 3)(2, 1, 0), (ctypes.c_size_t * 3)(0, 0, 0)
    region = (ctypes.c_size_t * 3)(4, 3, 1)
    assert CL.clEnqueueReadBufferRect(q, buf, 1, addr(b_origin), addr(h_origin), addr(region),
                                      8, 0, 4, 0, addr(out), 0, 0, 0) == 0
    np.testing.assert_array_equal(out, grid[1:4, 2:6])
    dst = make_buffer(ctx, grid.nbytes)
    d_origin = (ctypes.c_size_t * 3)(0, 2, 0)
    assert CL.clEnqueueCopyBufferRect(q, buf, dst, addr(b_origin), addr(d_origin), addr(region),
                                      8, 0, 8, 0, 0, 0, 0) == 0
    got = read(q, dst, grid.nbytes, np.uint8).reshape(6, 8)
    np.testing.assert_array_equal(got[2:5, 0:4], grid[1:4, 2:6])
    big = (ctypes.c_size_t * 3)(8, 7, 1)
    assert CL.clEnqueueReadBufferRect(q, buf, 1, addr(h_origin), addr(h_origin), addr(big),
                                      8, 0, 8, 0, addr(out), 0, 0, 0) == cl.CL_INVALID_VALUE
    CL.clReleaseMemObject(buf)
    CL.clReleaseMemObject(dst)


def test_map_unmap_counts_and_shares(env):
    ctx, _, q = env
    buf = make_buffer(ctx, 64, cl.CL_MEM_COPY_HOST_PTR, np.arange(16, dtype=np.float32))
    e = err()
    p = CL.clEnqueueMapBuffer(q, buf, 1, cl.CL_MAP_READ | cl.CL_MAP_WRITE, 16, 32, 0, 0, 0, addr(e))
    assert e.value == 0 and p
    view = np.ctypeslib.as_array((ctypes.c_float * 8).from_address(p))
    np.testing.assert_array_equal(view, np.arange(4, 12, dtype=np.float32))
    view[:] = 0
    count = ctypes.c_uint32()
    CL.clGetMemObjectInfo(buf, cl.CL_MEM_MAP_COUNT, 4, addr(count), 0)
    assert count.value == 1
    assert CL.clEnqueueUnmapMemObject(q, buf, p, 0, 0, 0) == 0
    assert CL.clFinish(q) == 0
    CL.clGetMemObjectInfo(buf, cl.CL_MEM_MAP_COUNT, 4, addr(count), 0)
    assert count.value == 0
    assert read(q, buf, 64, np.float32)[4:12].tolist() == [0] * 8
    assert CL.clEnqueueUnmapMemObject(q, buf, p, 0, 0, 0) == cl.CL_INVALID_VALUE
    assert CL.clEnqueueMapBuffer(q, buf, 1, cl.CL_MAP_READ | cl.CL_MAP_WRITE_INVALIDATE_REGION, 0, 4,
                                 0, 0, 0, addr(e)) == 0
    assert e.value == cl.CL_INVALID_VALUE
    CL.clReleaseMemObject(buf)


def test_destructor_callbacks_run_in_reverse_order(env):
    ctx = env[0]
    buf = make_buffer(ctx, 16)
    order = []
    proto = ctypes.CFUNCTYPE(None, ctypes.c_size_t, ctypes.c_void_p)
    cbs = [proto(lambda m, u, i=i: order.append(i)) for i in range(3)]
    for cb in cbs:
        assert CL.clSetMemObjectDestructorCallback(buf, ctypes.cast(cb, ctypes.c_void_p).value, 0) == 0
    CL.clReleaseMemObject(buf)
    assert order == [2, 1, 0]
