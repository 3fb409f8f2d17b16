"""Mapping records (issue 13, item 2): every clEnqueueMapBuffer is one record (pointer, offset,
size, flags) and every clEnqueueUnmapMemObject must name one active record of that memory object,
through the C API in-process.

OpenCL 3.0, clEnqueueUnmapMemObject: CL_INVALID_VALUE "if mapped_ptr is not a valid pointer
returned by clEnqueueMapBuffer or clEnqueueMapImage for memobj"; maps increment and unmaps
decrement the mapped count (CL_MEM_MAP_COUNT, "immediately stale", for debugging). PoCL 3.1 gives
the same answers for double, foreign, mid-mapping and wrong-buffer unmaps, a pointer mapped twice,
an unmap enqueued but not run and a failed unmap (it too counts a mapping until its unmap command
has finished); it differs on sub-buffers (noted at that test).
"""
import ctypes
import threading

import numpy as np
import pytest

from support.capi import CL, addr, err
from support.clobjects import context_and_queue, make_buffer, make_queue, read
from pyplat import cl

RW = cl.CL_MAP_READ | cl.CL_MAP_WRITE


@pytest.fixture(scope="module")
def env():
    yield from context_and_queue()


def map_buffer(q, buf, offset, size, flags=RW, waits=()):
    e = err()
    events = (ctypes.c_size_t * max(len(waits), 1))(*waits)
    p = CL.clEnqueueMapBuffer(q, buf, 1 if not waits else 0, flags, offset, size, len(waits),
                              addr(events) if waits else 0, 0, addr(e))
    assert e.value == cl.CL_SUCCESS and p
    return p


def map_count(mem):
    count = ctypes.c_uint32(12345)
    assert CL.clGetMemObjectInfo(mem, cl.CL_MEM_MAP_COUNT, 4, addr(count), 0) == cl.CL_SUCCESS
    return count.value


def unmap(q, mem, p, waits=(), event=None):
    events = (ctypes.c_size_t * max(len(waits), 1))(*waits)
    return CL.clEnqueueUnmapMemObject(q, mem, p, len(waits), addr(events) if waits else 0, addr(event))


def user_event(ctx):
    e = err()
    ev = CL.clCreateUserEvent(ctx, addr(e))
    assert e.value == cl.CL_SUCCESS
    return ev


def test_second_unmap_is_refused_and_the_count_never_goes_negative(env):
    ctx, _, q = env
    buf = make_buffer(ctx, 256)
    p = map_buffer(q, buf, 0, 64)
    assert unmap(q, buf, p) == cl.CL_SUCCESS
    assert unmap(q, buf, p) == cl.CL_INVALID_VALUE
    assert CL.clFinish(q) == cl.CL_SUCCESS
    assert map_count(buf) == 0
    # the refused unmap took nothing away from a later, valid mapping
    p = map_buffer(q, buf, 0, 64)
    assert map_count(buf) == 1
    assert unmap(q, buf, p) == cl.CL_SUCCESS
    assert CL.clFinish(q) == cl.CL_SUCCESS
    assert map_count(buf) == 0
    CL.clReleaseMemObject(buf)


def test_unmap_names_a_mapping_of_that_object(env):
    """Never-mapped, foreign, mid-mapping, NULL and other-buffer pointers are all refused at
    enqueue; none of them disturbs the real mapping, which unmaps afterwards."""
    ctx, _, q = env
    buf, other = make_buffer(ctx, 256), make_buffer(ctx, 256)
    p = map_buffer(q, buf, 64, 64)
    q_other = map_buffer(q, other, 0, 64)
    foreign = np.zeros(64, dtype=np.uint8)
    start = p - 64                                  # inside the buffer, never returned by a map
    for bad in (start, p + 4, p + 63, addr(foreign), 0, q_other):
        assert unmap(q, buf, bad) == cl.CL_INVALID_VALUE, hex(bad)
    assert unmap(q, other, p) == cl.CL_INVALID_VALUE     # buf's mapping, through the wrong buffer
    assert map_count(buf) == 1 and map_count(other) == 1
    assert unmap(q, buf, p) == cl.CL_SUCCESS
    assert unmap(q, other, q_other) == cl.CL_SUCCESS
    assert CL.clFinish(q) == cl.CL_SUCCESS
    assert map_count(buf) == 0 and map_count(other) == 0
    for b in (buf, other):
        CL.clReleaseMemObject(b)


def test_one_pointer_mapped_twice_needs_two_unmaps(env):
    ctx, _, q = env
    buf = make_buffer(ctx, 256)
    p1 = map_buffer(q, buf, 32, 64, cl.CL_MAP_READ)
    p2 = map_buffer(q, buf, 32, 16, cl.CL_MAP_READ)       # overlapping: the same address
    assert p1 == p2
    assert map_count(buf) == 2
    assert unmap(q, buf, p1) == cl.CL_SUCCESS
    assert CL.clFinish(q) == cl.CL_SUCCESS
    assert map_count(buf) == 1
    assert unmap(q, buf, p1) == cl.CL_SUCCESS
    assert CL.clFinish(q) == cl.CL_SUCCESS
    assert map_count(buf) == 0
    assert unmap(q, buf, p1) == cl.CL_INVALID_VALUE
    CL.clReleaseMemObject(buf)


def test_an_enqueued_unmap_ends_the_pointer_but_counts_until_it_has_run(env):
    ctx, _, q = env
    buf = make_buffer(ctx, 256)
    gate = user_event(ctx)
    p = map_buffer(q, buf, 0, 128)
    assert unmap(q, buf, p, waits=(gate,)) == cl.CL_SUCCESS
    try:
        assert unmap(q, buf, p) == cl.CL_INVALID_VALUE   # its unmap is already enqueued
        assert map_count(buf) == 1                       # ... but has not run
    finally:
        assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == cl.CL_SUCCESS
    assert CL.clFinish(q) == cl.CL_SUCCESS
    assert map_count(buf) == 0
    CL.clReleaseEvent(gate)
    CL.clReleaseMemObject(buf)


def test_a_failed_unmap_still_ends_its_mapping(env):
    ctx, dev, _ = env
    q = make_queue(ctx, dev)              # its own queue: the failure stays there
    buf = make_buffer(ctx, 256)
    gate = user_event(ctx)
    p = map_buffer(q, buf, 0, 128)
    ev = ctypes.c_size_t()
    assert unmap(q, buf, p, waits=(gate,), event=ev) == cl.CL_SUCCESS
    assert CL.clSetUserEventStatus(gate, -5) == cl.CL_SUCCESS
    CL.clWaitForEvents(1, addr(ev))
    CL.clFinish(q)
    assert map_count(buf) == 0
    assert unmap(q, buf, p) == cl.CL_INVALID_VALUE
    for e in (gate, ev.value):
        CL.clReleaseEvent(e)
    CL.clReleaseCommandQueue(q)
    CL.clReleaseMemObject(buf)


def test_calls_that_fail_at_enqueue_change_no_record(env):
    ctx, dev, _ = env
    q = make_queue(ctx, dev)
    buf = make_buffer(ctx, 256)
    e = err()
    # an invalid wait list: the map returns no pointer and records nothing
    assert CL.clEnqueueMapBuffer(q, buf, 1, RW, 0, 64, 1, 0, 0, addr(e)) == 0
    assert e.value == cl.CL_INVALID_EVENT_WAIT_LIST
    assert map_count(buf) == 0
    # a blocking map whose wait list failed returns no pointer either
    gate = user_event(ctx)
    assert CL.clSetUserEventStatus(gate, -5) == cl.CL_SUCCESS
    waits = (ctypes.c_size_t * 1)(gate)
    assert CL.clEnqueueMapBuffer(q, buf, 1, RW, 0, 64, 1, addr(waits), 0, addr(e)) == 0
    assert e.value == cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    assert map_count(buf) == 0
    CL.clReleaseEvent(gate)
    CL.clReleaseCommandQueue(q)
    q = make_queue(ctx, dev)
    # an unmap with an invalid wait list leaves the mapping mapped
    p = map_buffer(q, buf, 0, 64)
    assert CL.clEnqueueUnmapMemObject(q, buf, p, 1, 0, 0) == cl.CL_INVALID_EVENT_WAIT_LIST
    assert map_count(buf) == 1
    assert unmap(q, buf, p) == cl.CL_SUCCESS
    assert CL.clFinish(q) == cl.CL_SUCCESS
    assert map_count(buf) == 0
    CL.clReleaseCommandQueue(q)
    CL.clReleaseMemObject(buf)


def test_a_sub_buffer_mapping_is_unmapped_through_the_sub_buffer(env):
    """The spec names memobj, the object mapped. (PoCL 3.1 counts a sub-buffer's maps on its
    parent and accepts the unmap through the parent; we follow the spec.)"""
    ctx, _, q = env
    parent = make_buffer(ctx, 512)
    region = (ctypes.c_size_t * 2)(128, 128)
    e = err()
    sub = CL.clCreateSubBuffer(parent, cl.CL_MEM_READ_WRITE, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(region),
                               addr(e))
    assert e.value == cl.CL_SUCCESS
    whole = map_buffer(q, parent, 0, 512, cl.CL_MAP_READ)     # p lies inside this mapping
    p = map_buffer(q, sub, 16, 32, cl.CL_MAP_READ)
    assert p == whole + 128 + 16
    assert map_count(sub) == 1 and map_count(parent) == 1
    assert unmap(q, parent, p) == cl.CL_INVALID_VALUE
    assert unmap(q, sub, whole) == cl.CL_INVALID_VALUE
    assert unmap(q, sub, p) == cl.CL_SUCCESS
    assert unmap(q, parent, whole) == cl.CL_SUCCESS
    assert CL.clFinish(q) == cl.CL_SUCCESS
    assert map_count(sub) == 0 and map_count(parent) == 0
    CL.clReleaseMemObject(sub)
    CL.clReleaseMemObject(parent)


@pytest.mark.parametrize("flags", [cl.CL_MAP_WRITE, cl.CL_MAP_WRITE_INVALIDATE_REGION, RW])
@pytest.mark.parametrize("mem_flags", [cl.CL_MEM_READ_WRITE, cl.CL_MEM_USE_HOST_PTR])
def test_data_written_through_a_write_map_is_in_the_buffer_after_unmap(env, flags, mem_flags):
    ctx, _, q = env
    host = np.zeros(64, dtype=np.int32)
    buf = make_buffer(ctx, host.nbytes, mem_flags, host if mem_flags & cl.CL_MEM_USE_HOST_PTR else None)
    p = map_buffer(q, buf, 64, 128, flags)
    view = np.ctypeslib.as_array((ctypes.c_int32 * 32).from_address(p))
    view[:] = np.arange(100, 132, dtype=np.int32)
    assert unmap(q, buf, p) == cl.CL_SUCCESS
    copy = make_buffer(ctx, host.nbytes)
    assert CL.clEnqueueCopyBuffer(q, buf, copy, 0, 0, host.nbytes, 0, 0, 0) == cl.CL_SUCCESS
    want = np.zeros(64, dtype=np.int32)
    want[16:48] = np.arange(100, 132)
    np.testing.assert_array_equal(read(q, copy, host.nbytes, np.int32), want)
    assert map_count(buf) == 0
    for b in (buf, copy):
        CL.clReleaseMemObject(b)


def test_threads_mapping_one_region_each_unmap_their_own(env):
    ctx, dev, _ = env
    buf = make_buffer(ctx, 256)
    errors = []

    def worker():
        q = make_queue(ctx, dev)
        for _ in range(100):
            p = map_buffer(q, buf, 0, 64, cl.CL_MAP_READ)
            code = unmap(q, buf, p)
            if code != cl.CL_SUCCESS:
                errors.append(code)
        CL.clFinish(q)
        CL.clReleaseCommandQueue(q)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert map_count(buf) == 0
    CL.clReleaseMemObject(buf)


def test_overlapping_maps_for_writing_are_refused(env):
    """OpenCL 3.0, 5.5.4: "Mapping (and unmapping) overlapped regions in a memory object and/or
    associated memory objects (sub-buffer objects ...) for writing is an error and will result in
    CL_INVALID_OPERATION error returned by clEnqueueMapBuffer". Reads may overlap; a mapping whose
    unmap is enqueued no longer counts. (PoCL 3.1 accepts overlapping write maps.)"""
    ctx, _, q = env
    parent = make_buffer(ctx, 512)
    region = (ctypes.c_size_t * 2)(256, 128)
    e = err()
    sub = CL.clCreateSubBuffer(parent, cl.CL_MEM_READ_WRITE, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(region),
                               addr(e))
    assert e.value == cl.CL_SUCCESS
    w = map_buffer(q, parent, 0, 128, cl.CL_MAP_WRITE)
    for mem, offset, flags in ((parent, 64, cl.CL_MAP_WRITE), (parent, 127, cl.CL_MAP_READ),
                               (parent, 0, cl.CL_MAP_WRITE_INVALIDATE_REGION)):
        assert CL.clEnqueueMapBuffer(q, mem, 1, flags, offset, 16, 0, 0, 0, addr(e)) == 0
        assert e.value == cl.CL_INVALID_OPERATION
    r1 = map_buffer(q, parent, 128, 64, cl.CL_MAP_READ)        # next to the write map: fine
    r2 = map_buffer(q, sub, 0, 64, cl.CL_MAP_READ)             # reads overlap reads
    r3 = map_buffer(q, parent, 256, 32, cl.CL_MAP_READ)
    assert CL.clEnqueueMapBuffer(q, sub, 1, cl.CL_MAP_WRITE, 16, 16, 0, 0, 0, addr(e)) == 0
    assert e.value == cl.CL_INVALID_OPERATION                  # the parent's read map overlaps it
    assert map_count(parent) == 3 and map_count(sub) == 1
    assert unmap(q, parent, w) == cl.CL_SUCCESS
    w2 = map_buffer(q, parent, 0, 128, cl.CL_MAP_WRITE)        # the earlier unmap is enqueued
    for mem, p in ((parent, w2), (parent, r1), (sub, r2), (parent, r3)):
        assert unmap(q, mem, p) == cl.CL_SUCCESS
    assert CL.clFinish(q) == cl.CL_SUCCESS
    assert map_count(parent) == 0 and map_count(sub) == 0
    CL.clReleaseMemObject(sub)
    CL.clReleaseMemObject(parent)
