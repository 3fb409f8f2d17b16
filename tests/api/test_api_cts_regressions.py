"""API behaviour the Khronos CTS found wrong (tools/cts.py, docs/conformance.md), in-process
through the C API, and against PoCL through pyopencl where PoCL is installed.

* clEnqueueCopyBufferRect within one buffer (or between sub-buffers of one buffer): overlap is
  decided on the bytes the two rectangles cover, not on their spans, so disjoint rectangles whose
  rows (or slices) interleave copy (test_basic bufferreadwriterect).
* The optional 3.0 features PyPlat does not report (pipes, SVM, images, IL programs, sub-groups,
  on-device queues, program-scope destructors) answer with the spec's codes (test_api
  consistency_*).
* clEnqueueNDRangeKernel with a NULL global_work_size is a zero-sized launch, as from OpenCL 2.1
  (a newer CTS: test_api zero_sized_enqueue, test_profiling profiling_timebase).
"""
import ctypes
import json
import random
import sys

import numpy as np
import pytest

from support.capi import CL, addr, err
from support.clobjects import context_and_queue, make_buffer, read
from pyplat import cl

SIZE = 512


@pytest.fixture(scope="module")
def env():
    yield from context_and_queue()


def rect_bytes(origin, region, row, slice_):
    """Byte offsets of a rectangle (numpy array, in copy order)."""
    x = np.arange(region[0])
    y = np.arange(region[1])[:, None] * row
    z = np.arange(region[2])[:, None, None] * slice_
    start = origin[2] * slice_ + origin[1] * row + origin[0]
    return (start + z + y + x).ravel()


def copy_rect(q, src, dst, so, do, region, row, slice_):
    t3 = ctypes.c_size_t * 3
    a, b, r = t3(*so), t3(*do), t3(*region)
    return CL.clEnqueueCopyBufferRect(q, src, dst, addr(a), addr(b), addr(r), row, slice_, row, slice_, 0, 0, 0)


def check_copy_within(q, ctx, so, do, region, row, slice_):
    """Copy within one buffer; assert the result against a byte model. Returns the code."""
    host = (np.arange(SIZE) * 7 % 251).astype(np.uint8)
    buf = make_buffer(ctx, SIZE, cl.CL_MEM_COPY_HOST_PTR, host)
    try:
        src, dst = rect_bytes(so, region, row, slice_), rect_bytes(do, region, row, slice_)
        shared = bool(np.intersect1d(src, dst).size)
        code = copy_rect(q, buf, buf, so, do, region, row, slice_)
        assert code == (cl.CL_MEM_COPY_OVERLAP if shared else cl.CL_SUCCESS), (so, do, region, row, slice_)
        expected = host.copy()
        if not shared:
            expected[dst] = host[src]
        assert CL.clFinish(q) == 0
        np.testing.assert_array_equal(read(q, buf, SIZE, np.uint8), expected)
        return code
    finally:
        CL.clReleaseMemObject(buf)


@pytest.mark.parametrize("so,do,region,row,slice_,code", [
    # rows of one slice interleave: src x 0..3, dst x 8..11 of the same rows
    ((0, 0, 0), (8, 0, 0), (4, 4, 1), 16, 64, cl.CL_SUCCESS),
    # rows of different slices interleave: src rows 0-1, dst rows 2-3 of slices 0 and 1
    ((0, 0, 0), (0, 2, 0), (4, 2, 2), 16, 64, cl.CL_SUCCESS),
    # slices interleave: dst is the next slice's columns 4..7
    ((0, 0, 0), (4, 0, 1), (4, 4, 2), 16, 64, cl.CL_SUCCESS),
    # a rectangle running past its row into the next one, still disjoint
    ((0, 0, 0), (12, 2, 0), (8, 2, 1), 16, 64, cl.CL_SUCCESS),
    ((0, 0, 0), (2, 1, 0), (4, 4, 1), 16, 64, cl.CL_MEM_COPY_OVERLAP),
    ((0, 0, 0), (0, 1, 0), (4, 2, 2), 16, 64, cl.CL_MEM_COPY_OVERLAP),
    ((0, 0, 0), (0, 0, 1), (4, 4, 2), 16, 64, cl.CL_MEM_COPY_OVERLAP),
    ((0, 0, 0), (12, 3, 0), (8, 2, 2), 16, 64, cl.CL_MEM_COPY_OVERLAP),   # wraps onto src's row
    ((3, 1, 1), (3, 1, 1), (2, 2, 2), 16, 64, cl.CL_MEM_COPY_OVERLAP),    # the same rectangle
])
def test_copy_buffer_rect_overlap_is_decided_on_bytes(env, so, do, region, row, slice_, code):
    ctx, _, q = env
    assert check_copy_within(q, ctx, so, do, region, row, slice_) == code


def random_rects(rng, n, proper):
    """n (src origin, dst origin, region, row pitch, slice pitch) fitting in SIZE bytes;
    proper: each rectangle inside its rows and slices (no wrapping into the next row/slice)."""
    out = []
    while len(out) < n:
        region = (rng.randint(1, 6), rng.randint(1, 4), rng.randint(1, 3))
        row = region[0] + rng.randint(0, 6)
        rows = region[1] + rng.randint(0, 2)
        slice_ = row * rows

        def origin():
            if proper:
                return (rng.randint(0, row - region[0]), rng.randint(0, rows - region[1]), rng.randint(0, 2))
            return (rng.randint(0, row - 1), rng.randint(0, 3), rng.randint(0, 2))
        so, do = origin(), origin()
        if max(rect_bytes(o, region, row, slice_).max() for o in (so, do)) < SIZE:
            out.append((so, do, region, row, slice_))
    return out


def test_copy_buffer_rect_random_rectangles_match_a_byte_model(env):
    ctx, _, q = env
    codes = [check_copy_within(q, ctx, *case) for case in random_rects(random.Random(12), 300, proper=False)]
    # both outcomes are exercised
    assert codes.count(cl.CL_SUCCESS) > 50 and codes.count(cl.CL_MEM_COPY_OVERLAP) > 50


def test_copy_buffer_rect_between_sub_buffers_of_one_buffer(env):
    ctx, _, q = env
    parent = make_buffer(ctx, 1024)
    e = err()
    subs = []
    for origin in (0, 128):
        region = (ctypes.c_size_t * 2)(origin, 512)
        subs.append(CL.clCreateSubBuffer(parent, 0, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(region), addr(e)))
        assert e.value == 0
    a, b = subs
    # a's rows 2-3 (bytes 128.. and 192..) against b's row 0-1 at x 0 (the same bytes) or x 32
    assert copy_rect(q, a, b, (0, 2, 0), (0, 0, 0), (16, 2, 1), 64, 128) == cl.CL_MEM_COPY_OVERLAP
    assert copy_rect(q, a, b, (0, 2, 0), (32, 0, 0), (16, 2, 1), 64, 128) == cl.CL_SUCCESS
    assert CL.clFinish(q) == 0
    for s in subs:
        CL.clReleaseMemObject(s)
    CL.clReleaseMemObject(parent)


POCL_DIFF = r"""
import json, sys
import numpy as np
import pyopencl as pcl
SIZE, cases = json.load(sys.stdin)

def outcome(c, q, so, do, region, row, slice_):
    host = (np.arange(SIZE) * 7 % 251).astype(np.uint8)
    buf = pcl.Buffer(c, pcl.mem_flags.READ_WRITE | pcl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    try:
        pcl.enqueue_copy(q, buf, buf, src_origin=so, dst_origin=do, region=region,
                         src_pitches=(row, slice_), dst_pitches=(row, slice_))
    except pcl.Error as e:
        return e.code, None
    out = np.empty_like(host)
    pcl.enqueue_copy(q, out, buf)
    return 0, out.tolist()

platforms = {p.name: p for p in pcl.get_platforms()}
if "Portable Computing Language" not in platforms:
    print("SKIP"); sys.exit(0)
results = []
for name in ("PyPlat", "Portable Computing Language"):
    c = pcl.Context(platforms[name].get_devices())
    q = pcl.CommandQueue(c)
    results.append([outcome(c, q, *case) for case in cases])
mine, theirs = results
print("differ", [case for case, m, t in zip(cases, mine, theirs) if m != t])
print("refused", sum(code != 0 for code, _ in mine), "copied", sum(code == 0 for code, _ in mine))
"""


def test_copy_buffer_rect_agrees_with_pocl(run_with_pyplat):
    """Rectangles inside their rows and slices: PyPlat and PoCL accept and refuse the same copies
    with the same results (a child through the ICD loader). PoCL also refuses some disjoint
    rectangles that run past their row or slice; those are checked against the byte model above."""
    pytest.importorskip("pyopencl")
    cases = random_rects(random.Random(3), 150, proper=True)
    r = run_with_pyplat([sys.executable, "-c", POCL_DIFF], input=json.dumps([SIZE, cases]))
    assert r.returncode == 0, r.stderr
    if r.stdout.strip() == "SKIP":
        pytest.skip("PoCL is not installed")
    lines = dict(line.split(" ", 1) for line in r.stdout.strip().splitlines())
    assert lines["differ"] == "[]"
    refused, _, copied = lines["refused"].split()
    assert int(refused) > 20 and int(copied) > 20


# --- optional features the device does not report -------------------------------------------------

@pytest.fixture(scope="module")
def kernel(env):
    ctx, dev, _ = env
    src = b"kernel void k(global int *p) { p[get_global_id(0)] = 1; }"
    s = ctypes.c_char_p(src)
    e = err()
    prog = CL.clCreateProgramWithSource(ctx, 1, addr(s), 0, addr(e))
    assert e.value == 0
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == 0
    k = CL.clCreateKernel(prog, b"k", addr(e))
    assert e.value == 0
    yield prog, k
    CL.clReleaseKernel(k)
    CL.clReleaseProgram(prog)


def test_pipes_are_refused_as_the_spec_says(env):
    ctx = env[0]
    e = err()
    assert CL.clCreatePipe(ctx, cl.CL_MEM_HOST_NO_ACCESS, 4, 4, 0, addr(e)) == 0
    assert e.value == cl.CL_INVALID_OPERATION
    assert CL.clCreatePipe(0, cl.CL_MEM_HOST_NO_ACCESS, 4, 4, 0, addr(e)) == 0
    assert e.value == cl.CL_INVALID_CONTEXT
    buf = make_buffer(ctx, 16)
    u = ctypes.c_uint32()
    # a buffer is no pipe, and neither is NULL
    assert CL.clGetPipeInfo(buf, cl.CL_PIPE_PACKET_SIZE, 4, addr(u), 0) == cl.CL_INVALID_MEM_OBJECT
    assert CL.clGetPipeInfo(0, cl.CL_PIPE_PACKET_SIZE, 4, addr(u), 0) == cl.CL_INVALID_MEM_OBJECT
    CL.clReleaseMemObject(buf)


def test_svm_entry_points_answer_invalid_operation(env, kernel):
    ctx, _, q = env
    assert CL.clSVMAlloc(ctx, cl.CL_MEM_READ_WRITE, 64, 0) == 0
    CL.clSVMFree(ctx, 0)
    pattern = ctypes.c_int32(1)
    assert CL.clEnqueueSVMMemFill(q, 0x1000, addr(pattern), 4, 64, 0, 0, 0) == cl.CL_INVALID_OPERATION
    assert CL.clEnqueueSVMMemFill(0, 0x1000, addr(pattern), 4, 64, 0, 0, 0) == cl.CL_INVALID_COMMAND_QUEUE
    assert CL.clEnqueueSVMMemcpy(q, 1, 0x1000, 0x2000, 64, 0, 0, 0) == cl.CL_INVALID_OPERATION
    assert CL.clEnqueueSVMMap(q, 1, cl.CL_MAP_READ, 0x1000, 64, 0, 0, 0) == cl.CL_INVALID_OPERATION
    assert CL.clEnqueueSVMUnmap(q, 0x1000, 0, 0, 0) == cl.CL_INVALID_OPERATION
    _, k = kernel
    assert CL.clSetKernelArgSVMPointer(k, 0, 0) == cl.CL_INVALID_OPERATION
    assert CL.clSetKernelExecInfo(k, cl.CL_KERNEL_EXEC_INFO_SVM_PTRS, 0, 0) == cl.CL_INVALID_OPERATION
    assert CL.clSetKernelExecInfo(k, 0x7fff, 0, 0) == cl.CL_INVALID_VALUE


def test_images_il_subgroups_device_queues_and_destructors_are_refused(env, kernel):
    ctx, dev, q = env
    prog, k = kernel
    e = err()
    fmt = (ctypes.c_uint32 * 2)(cl.CL_RGBA, cl.CL_UNORM_INT8)
    desc = (ctypes.c_size_t * 9)(cl.CL_MEM_OBJECT_IMAGE2D, 4, 4, 1, 1, 0, 0, 0, 0)
    assert CL.clCreateImage(ctx, cl.CL_MEM_READ_ONLY, addr(fmt), addr(desc), 0, addr(e)) == 0
    assert e.value == cl.CL_INVALID_OPERATION
    assert CL.clCreateImageWithProperties(ctx, 0, cl.CL_MEM_READ_ONLY, addr(fmt), addr(desc), 0, addr(e)) == 0
    assert e.value == cl.CL_INVALID_OPERATION
    assert CL.clCreateSamplerWithProperties(ctx, 0, addr(e)) == 0
    assert e.value == cl.CL_INVALID_OPERATION
    buf = make_buffer(ctx, 16)
    assert CL.clGetImageInfo(buf, cl.CL_IMAGE_WIDTH, 0, 0, 0) == cl.CL_INVALID_MEM_OBJECT
    CL.clReleaseMemObject(buf)
    il = (ctypes.c_uint32 * 4)(0x07230203, 0, 0, 0)
    assert CL.clCreateProgramWithIL(ctx, addr(il), 16, addr(e)) == 0
    assert e.value == cl.CL_INVALID_OPERATION
    value = ctypes.c_int32(0)
    assert CL.clSetProgramSpecializationConstant(prog, 1, 4, addr(value)) == cl.CL_INVALID_OPERATION
    assert CL.clSetProgramSpecializationConstant(0, 1, 4, addr(value)) == cl.CL_INVALID_PROGRAM
    n = ctypes.c_size_t()
    assert CL.clGetKernelSubGroupInfo(k, dev, cl.CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, 0, 8, addr(n), 0) \
        == cl.CL_INVALID_OPERATION
    assert CL.clSetDefaultDeviceCommandQueue(ctx, dev, q) == cl.CL_INVALID_OPERATION
    callback = ctypes.CFUNCTYPE(None, ctypes.c_size_t, ctypes.c_void_p)(lambda p, u: None)
    assert CL.clSetProgramReleaseCallback(prog, ctypes.cast(callback, ctypes.c_void_p).value, 0) \
        == cl.CL_INVALID_OPERATION


# --- a NULL global work size (a newer CTS: test_api zero_sized_enqueue, test_profiling
# profiling_timebase) -----------------------------------------------------------------------------

@pytest.mark.parametrize("work_dim", [1, 2, 3])
def test_a_null_global_work_size_is_a_zero_sized_launch(env, kernel, work_dim):
    """OpenCL 2.1 on: "If global_work_size is NULL, or the value in any passed dimension is 0
    then the kernel command will trivially succeed after its event dependencies are satisfied"
    (CL_INVALID_GLOBAL_WORK_SIZE for it is deprecated). A kernel command with an event, run after
    its waits, writing nothing."""
    ctx, _, q = env
    _, k = kernel
    zeros = np.zeros(16, np.int32)
    buf = make_buffer(ctx, zeros.nbytes, cl.CL_MEM_COPY_HOST_PTR, zeros)
    assert CL.clSetKernelArg(k, 0, ctypes.sizeof(ctypes.c_size_t), addr(ctypes.c_size_t(buf))) == 0
    e = err()
    gate = CL.clCreateUserEvent(ctx, addr(e))
    assert e.value == 0
    waits = (ctypes.c_size_t * 1)(gate)
    ev = ctypes.c_size_t()
    assert CL.clEnqueueNDRangeKernel(q, k, work_dim, 0, 0, 0, 1, addr(waits), addr(ev)) == cl.CL_SUCCESS
    kind, status = ctypes.c_uint32(), ctypes.c_int32()
    assert CL.clGetEventInfo(ev.value, cl.CL_EVENT_COMMAND_TYPE, 4, addr(kind), 0) == 0
    assert kind.value == cl.CL_COMMAND_NDRANGE_KERNEL
    CL.clFlush(q)
    assert CL.clGetEventInfo(ev.value, cl.CL_EVENT_COMMAND_EXECUTION_STATUS, 4, addr(status), 0) == 0
    assert status.value > cl.CL_COMPLETE                 # (behind the user event)
    assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == 0
    assert CL.clWaitForEvents(1, addr(ev)) == cl.CL_SUCCESS
    # a local size is still checked against the device; one that divides nothing is fine
    local = (ctypes.c_size_t * 3)(1, 1, 1)
    assert CL.clEnqueueNDRangeKernel(q, k, work_dim, 0, 0, addr(local), 0, 0, 0) == cl.CL_SUCCESS
    huge = (ctypes.c_size_t * 3)(1 << 40, 1, 1)
    assert CL.clEnqueueNDRangeKernel(q, k, work_dim, 0, 0, addr(huge), 0, 0, 0) in (
        cl.CL_INVALID_WORK_GROUP_SIZE, cl.CL_INVALID_WORK_ITEM_SIZE)
    assert CL.clEnqueueNDRangeKernel(q, k, 4, 0, 0, 0, 0, 0, 0) == cl.CL_INVALID_WORK_DIMENSION
    assert CL.clFinish(q) == 0
    assert read(q, buf, zeros.nbytes, np.int32).tolist() == [0] * 16
    for obj in (ev.value, gate):
        CL.clReleaseEvent(obj)
    CL.clReleaseMemObject(buf)
