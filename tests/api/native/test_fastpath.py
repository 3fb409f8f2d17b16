"""The enqueue hot path: launch plans cached per kernel (rebuilt by clSetKernelArg), geometry
validated once per size, and the same results and error codes as before, in-process and from C
through the real loader (events of those launches: info, callbacks, profiling)."""
import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from pyplat import cl
from support.capi import CL, addr, err
from support.clobjects import context_and_program, create_kernel, make_buffer, make_queue, read, set_arg

SOURCE = b"""
__kernel void add(__global const int *a, __global int *b, int v) {
    size_t i = get_global_id(0);
    b[i] = a[i] + v;
}
__kernel void loc(__global int *o, __local int *s) { s[get_local_id(0)] = 1; o[get_global_id(0)] = 2; }
"""


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


def launch(q, k, n, local=None, offset=None, dim=1):
    g = (ctypes.c_size_t * 3)(n, 1, 1)
    l = (ctypes.c_size_t * 3)(local, 1, 1) if local is not None else None
    o = (ctypes.c_size_t * 3)(offset, 0, 0) if offset is not None else None
    return CL.clEnqueueNDRangeKernel(q, k, dim, addr(o), addr(g), addr(l), 0, 0, 0)


def test_argument_changes_reach_later_launches(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    n = 64
    a = make_buffer(ctx, 4 * n, cl.CL_MEM_READ_WRITE | cl.CL_MEM_COPY_HOST_PTR, np.arange(n, dtype=np.int32))
    b1, b2 = make_buffer(ctx, 4 * n), make_buffer(ctx, 4 * n)
    k = create_kernel(prog, b"add")
    set_arg(k, 0, ctypes.c_size_t(a))
    set_arg(k, 1, ctypes.c_size_t(b1))
    set_arg(k, 2, ctypes.c_int32(1))
    assert launch(q, k, n) == 0
    set_arg(k, 2, ctypes.c_int32(10))         # a new value: the next launch sees it
    set_arg(k, 1, ctypes.c_size_t(b2))        # and a new buffer
    assert launch(q, k, n) == 0
    assert CL.clFinish(q) == 0
    assert (read(q, b1, 4 * n, np.int32) == np.arange(n) + 1).all()
    assert (read(q, b2, 4 * n, np.int32) == np.arange(n) + 10).all()
    # a clone keeps its own arguments
    e = err()
    clone = CL.clCloneKernel(k, addr(e))
    assert e.value == 0
    set_arg(clone, 2, ctypes.c_int32(100))
    set_arg(clone, 1, ctypes.c_size_t(b1))
    assert launch(q, clone, n) == 0 and launch(q, k, n) == 0
    assert CL.clFinish(q) == 0
    assert (read(q, b1, 4 * n, np.int32) == np.arange(n) + 100).all()
    assert (read(q, b2, 4 * n, np.int32) == np.arange(n) + 10).all()
    for obj in (clone, k):
        CL.clReleaseKernel(obj)
    for obj in (a, b1, b2):
        CL.clReleaseMemObject(obj)
    CL.clReleaseCommandQueue(q)


def test_cached_geometry_keeps_error_codes(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    o = make_buffer(ctx, 4 * 4096)
    k = create_kernel(prog, b"loc")
    set_arg(k, 0, ctypes.c_size_t(o))
    assert CL.clSetKernelArg(k, 1, 64, 0) == 0
    for _ in range(2):                        # the second round is answered from the cache
        assert launch(q, k, 64, 16) == 0
        assert launch(q, k, 64, 48) == cl.CL_INVALID_WORK_GROUP_SIZE
        assert launch(q, k, 64, 0) == cl.CL_INVALID_WORK_GROUP_SIZE
        assert launch(q, k, 64, 16, offset=2 ** 64 - 8) == cl.CL_INVALID_GLOBAL_OFFSET
        assert launch(q, k, 64, 16, dim=4) == cl.CL_INVALID_WORK_DIMENSION
        assert launch(q, k, 0) == 0           # empty range: nothing runs
    # local memory beyond the device's: the plan changes with the argument, so does the answer
    assert CL.clSetKernelArg(k, 1, 1 << 30, 0) == 0
    assert launch(q, k, 64, 16) == cl.CL_OUT_OF_RESOURCES
    assert CL.clSetKernelArg(k, 1, 64, 0) == 0
    assert launch(q, k, 64, 16) == 0
    assert CL.clFinish(q) == 0
    assert (read(q, o, 4 * 64, np.int32) == 2).all()
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(o)
    CL.clReleaseCommandQueue(q)


C_PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>
static const char *SRC = "__kernel void k(__global int *o, int v) { o[get_global_id(0)] = v; }";
static int fired;
static void CL_CALLBACK on_done(cl_event e, cl_int s, void *u) { if (s == CL_COMPLETE) fired++; }
#define CHECK(x) do { cl_int r_ = (x); if (r_) { printf("FAIL %s = %d\n", #x, r_); return 1; } } while (0)
int main(void) {
    cl_platform_id ps[16]; cl_uint np = 0, i; cl_platform_id p = 0; char name[256];
    clGetPlatformIDs(16, ps, &np);
    for (i = 0; i < np; i++) {
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, "PyPlat")) p = ps[i];
    }
    if (!p) { printf("FAIL no PyPlat\n"); return 1; }
    cl_device_id d; cl_int e;
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); CHECK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, CL_QUEUE_PROFILING_ENABLE, &e); CHECK(e);
    cl_program pr = clCreateProgramWithSource(c, 1, &SRC, NULL, &e); CHECK(e);
    CHECK(clBuildProgram(pr, 1, &d, "", NULL, NULL));
    cl_kernel k = clCreateKernel(pr, "k", &e); CHECK(e);
    cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, 4 * 256, NULL, &e); CHECK(e);
    size_t g = 256, l = 64, bad_l = 48;
    int v = 7, out[256];
    /* errors: bad handles and arguments */
    printf("%d %d %d %d\n", clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL),
           clEnqueueNDRangeKernel((cl_command_queue)k, k, 1, NULL, &g, &l, 0, NULL, NULL),
           clSetKernelArg((cl_kernel)q, 0, sizeof b, &b), clSetKernelArg(k, 2, sizeof v, &v));
    CHECK(clSetKernelArg(k, 0, sizeof b, &b));
    CHECK(clSetKernelArg(k, 1, sizeof v, &v));
    printf("%d %d\n", clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &bad_l, 0, NULL, NULL),
           clWaitForEvents(1, (cl_event *)&q));
    cl_event ev, ev2;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, &ev));
    CHECK(clSetEventCallback(ev, CL_COMPLETE, on_done, NULL));
    v = 9;
    CHECK(clSetKernelArg(k, 1, sizeof v, &v));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 1, &ev, &ev2));
    CHECK(clWaitForEvents(1, &ev2));
    CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    /* the clean-up due (the wait list's retain of ev), which the native read does not run */
    CHECK(clFinish(q));
    cl_int st; cl_command_type ty; cl_uint refs; cl_ulong t0, t1;
    CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof ty, &ty, NULL));
    CHECK(clRetainEvent(ev));
    CHECK(clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
    CHECK(clFinish(q));
    printf("%d %d %d %u %d %d %d\n", out[0], out[255], st, refs, ty == CL_COMMAND_NDRANGE_KERNEL,
           t1 >= t0, fired);
    CHECK(clReleaseEvent(ev)); CHECK(clReleaseEvent(ev)); CHECK(clReleaseEvent(ev2));
    printf("%d %d\n", clReleaseEvent((cl_event)k), clFinish((cl_command_queue)b));
    return 0;
}
"""


def test_from_c_through_the_loader(run_with_pyplat, tmp_path):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    src = tmp_path / "fast.c"
    src.write_text(C_PROGRAM)
    exe = tmp_path / "fast"
    built = subprocess.run(["cc", "-o", str(exe), str(src), "-lOpenCL"], capture_output=True, text=True)
    if built.returncode:
        pytest.skip(f"cannot build against the system loader: {built.stderr[-300:]}")
    r = run_with_pyplat([exe])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.split("\n")
    assert lines[0].split() == [str(cl.CL_INVALID_KERNEL_ARGS), str(cl.CL_INVALID_COMMAND_QUEUE),
                                str(cl.CL_INVALID_KERNEL), str(cl.CL_INVALID_ARG_INDEX)]
    assert lines[1].split() == [str(cl.CL_INVALID_WORK_GROUP_SIZE), str(cl.CL_INVALID_EVENT)]
    assert lines[2].split() == ["9", "9", str(cl.CL_COMPLETE), "2", "1", "1", "1"]
    assert lines[3].split() == [str(cl.CL_INVALID_EVENT), str(cl.CL_INVALID_COMMAND_QUEUE)]


def test_direct_entries_answer_as_the_python_ones(env):
    """The direct C entries the shim gets for the hot functions: same codes as the ctypes
    callbacks, for NULL and foreign handles and for valid calls."""
    from pyplat.api import bridge
    from pyplat.api._entry_points import ENTRY_POINTS
    from pyplat.api import _entries
    from pyplat import config
    if not config.value("PYPLAT_DIRECT_ENTRIES"):
        pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0)")
    direct = bridge.direct_entries()
    names = {ENTRY_POINTS[i][0] for i in direct}
    assert {"clEnqueueNDRangeKernel", "clSetKernelArg", "clReleaseEvent", "clFinish"} <= names
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    foreign = (ctypes.c_uint64 * 8)(0, 0x4C505950, 7, 1)     # looks like a handle, is none
    junk = ctypes.addressof(foreign)
    for index, address in direct.items():
        name, ret_kind, arg_kinds = ENTRY_POINTS[index]
        proto = ctypes.CFUNCTYPE(bridge.CTYPES[ret_kind], *[bridge.CTYPES[k] for _, k in arg_kinds])
        fast = proto(address)
        slow = getattr(CL, name)
        for first in (0, junk, q):
            args = [first] + [0] * (len(arg_kinds) - 1)
            assert fast(*args) == slow(*args), (name, first)
    CL.clReleaseCommandQueue(q)
    assert set(_entries.KINDS) == set(_entries.NAMES)
