"""clSetKernelArg, clGetKernelWorkGroupInfo and clGetKernelInfo(CL_KERNEL_NUM_ARGS) answered
natively (pyplat/api/native_kernel_args.pxi): arguments set in C reach the launches, the plans
built from them order in-order queues by the buffers they use, and every error and every value
is the Python entry's. capi calls the direct C entries the shim installs, which try the native
entry first, as C programs do."""
import ctypes

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import handles
from pyplat.api import kernel as kernel_api
from pyplat.core.kernel import Kernel
from support.capi import CL, addr
from support.clobjects import context_and_program, create_kernel, make_buffer, make_queue, read, set_arg

SOURCE = b"""
__kernel void step(__global const int *src, __global int *dst, int add, int spin) {
    size_t i = get_global_id(0);
    int x = src[i];
    for (int j = 0; j < spin; j++)          /* keeps a launch busy: orderings would show */
        x = (x * 7 + j) & 0xffff;
    dst[i] = src[i] + add + (x == 0x7fffffff);     /* (never: but the loop must run) */
}
__kernel void scratch(__global int *out, __local int *tmp, int v) {
    tmp[get_local_id(0)] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[get_local_size(0) - 1 - get_local_id(0)] + (int)get_local_size(0);
}
__kernel __attribute__((reqd_work_group_size(8, 1, 1))) void fixed(__global int *o) { o[0] = 1; }
"""

if not CL._direct.get("clSetKernelArg") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


def launch(q, k, n, local=None):
    g = (ctypes.c_size_t * 1)(n)
    lo = (ctypes.c_size_t * 1)(local) if local else None
    return CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), addr(lo), 0, 0, 0)


def python_calls_of(kernel):
    """Record the arguments that reach Kernel.set_arg (the Python entry's)."""
    calls = []
    kernel.set_arg = lambda i, v, f=kernel.set_arg: calls.append(i) or f(i, v)
    return calls


def test_arguments_set_before_any_plan_reach_the_launch(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"step")
    kernel = handles.lookup(k, Kernel, cl.CL_INVALID_KERNEL)
    calls = python_calls_of(kernel)
    n = 64
    a = np.arange(n, dtype=np.int32)
    src = make_buffer(ctx, a.nbytes, cl.CL_MEM_READ_ONLY | cl.CL_MEM_COPY_HOST_PTR, a)
    dst = make_buffer(ctx, a.nbytes)
    assert set_arg(k, 2, ctypes.c_int(5)) == 0
    assert set_arg(k, 2, ctypes.c_int(6)) == 0        # the last value counts
    assert set_arg(k, 0, src) == 0
    assert set_arg(k, 3, ctypes.c_int(0)) == 0
    assert calls == []                                 # all in C: the kernel had no plan yet
    assert set_arg(k, 1, dst) == 0                     # the last one: Python builds the first plan
    assert calls == [1] and kernel._plan is not None
    assert kernel.args[2] == ("value", (6).to_bytes(4, "little")) and kernel.args[0][1] is handles.peek(src)
    assert launch(q, k, n) == 0
    assert read(q, dst, a.nbytes, np.int32).tolist() == (a + 6).tolist()
    # a NULL buffer, then a real one again, natively; the launch takes the last
    assert set_arg(k, 1, 0) == 0 and set_arg(k, 1, dst) == 0 and set_arg(k, 2, ctypes.c_int(9)) == 0
    assert calls == [1]
    assert launch(q, k, n) == 0
    assert read(q, dst, a.nbytes, np.int32).tolist() == (a + 9).tolist()
    del kernel.set_arg
    CL.clReleaseKernel(k)
    for b in (src, dst):
        CL.clReleaseMemObject(b)
    CL.clReleaseCommandQueue(q)


def test_ping_pong_buffers_keep_the_in_order_queue_s_order(env):
    """One kernel object, its two buffers swapped before each launch (all in C): each launch
    reads what the one before wrote (read after write) and writes what it read (write after
    read); the plans built from the native arguments order them, however the queue spreads
    independent commands over its workers."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"step")
    kernel = handles.lookup(k, Kernel, cl.CL_INVALID_KERNEL)
    n = 4096
    a = np.arange(n, dtype=np.int32)
    bufs = [make_buffer(ctx, a.nbytes, cl.CL_MEM_READ_WRITE | cl.CL_MEM_COPY_HOST_PTR, a),
            make_buffer(ctx, a.nbytes)]
    set_arg(k, 2, ctypes.c_int(1))
    set_arg(k, 3, ctypes.c_int(300))
    calls = python_calls_of(kernel)
    rounds = 24
    for r in range(rounds):
        assert set_arg(k, 0, bufs[r % 2]) == 0 and set_arg(k, 1, bufs[1 - r % 2]) == 0
        assert launch(q, k, n, 64) == 0
        if r == 0:
            root = kernel._plan
    assert calls == [1]                   # only the one that completed the arguments went to Python
    plan = kernel.current_plan()          # every swap derived from the first plan, natively
    assert plan is root or plan.root is root
    assert read(q, bufs[rounds % 2], a.nbytes, np.int32).tolist() == (a + rounds).tolist()
    # write after read: a slow launch reads A; the next, with the buffers swapped, writes A
    const = make_buffer(ctx, a.nbytes, cl.CL_MEM_READ_ONLY | cl.CL_MEM_COPY_HOST_PTR, np.full(n, 1000, np.int32))
    for _ in range(3):
        set_arg(k, 0, bufs[0])
        set_arg(k, 1, bufs[1])
        set_arg(k, 3, ctypes.c_int(3000))
        assert launch(q, k, n, 64) == 0           # B = A + 1, slowly
        set_arg(k, 0, const)
        set_arg(k, 1, bufs[0])
        set_arg(k, 3, ctypes.c_int(0))
        assert launch(q, k, n, 64) == 0           # A = 1001: must wait for the read of A above
        got_b = read(q, bufs[1], a.nbytes, np.int32)
        assert got_b.tolist() == (a + rounds + 1).tolist()
        assert read(q, bufs[0], a.nbytes, np.int32).tolist() == [1001] * n
        again = a + rounds
        assert CL.clEnqueueWriteBuffer(q, bufs[0], 1, 0, a.nbytes, addr(again), 0, 0, 0) == 0
    del kernel.set_arg
    CL.clReleaseKernel(k)
    for b in bufs + [const]:
        CL.clReleaseMemObject(b)
    CL.clReleaseCommandQueue(q)


def test_errors_are_the_python_entry_s(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"step")
    n = 64
    gone = make_buffer(ctx, 4 * n)
    assert CL.clReleaseMemObject(gone) == 0
    assert set_arg(k, 0, gone) == cl.CL_INVALID_MEM_OBJECT            # a released buffer
    assert set_arg(k, 0, k) == cl.CL_INVALID_MEM_OBJECT               # not a buffer
    assert CL.clSetKernelArg(k, 0, 4, addr(ctypes.c_size_t(0))) == cl.CL_INVALID_ARG_SIZE
    assert CL.clSetKernelArg(k, 2, 8, addr(ctypes.c_int64(1))) == cl.CL_INVALID_ARG_SIZE
    assert CL.clSetKernelArg(k, 2, 4, 0) == cl.CL_INVALID_ARG_VALUE
    assert CL.clSetKernelArg(k, 7, 4, addr(ctypes.c_int(1))) == cl.CL_INVALID_ARG_INDEX
    s = create_kernel(prog, b"scratch")
    assert CL.clSetKernelArg(s, 1, 0, 0) == cl.CL_INVALID_ARG_SIZE
    assert CL.clSetKernelArg(s, 1, 4, addr(ctypes.c_int(1))) == cl.CL_INVALID_ARG_VALUE
    # a buffer set in C and released before the launch: the launch refuses it
    src, dst = make_buffer(ctx, 4 * n), make_buffer(ctx, 4 * n)
    for i, v in ((2, ctypes.c_int(1)), (3, ctypes.c_int(0)), (0, src), (1, dst)):
        assert set_arg(k, i, v) == 0
    assert launch(q, k, n) == 0
    doomed = make_buffer(ctx, 4 * n)
    assert set_arg(k, 0, doomed) == 0             # natively: the plan is dropped
    assert CL.clReleaseMemObject(doomed) == 0
    assert launch(q, k, n) == cl.CL_INVALID_KERNEL_ARGS
    assert set_arg(k, 0, src) == 0
    assert launch(q, k, n) == 0
    # the same with buffers the plan holds, swapped natively: the swapped-in one released
    assert set_arg(k, 0, dst) == 0 and set_arg(k, 1, src) == 0
    assert CL.clFinish(q) == 0
    assert CL.clReleaseMemObject(src) == 0
    assert launch(q, k, n) == cl.CL_INVALID_KERNEL_ARGS
    src = make_buffer(ctx, 4 * n)
    assert set_arg(k, 1, src) == 0
    assert launch(q, k, n) == 0
    assert CL.clFinish(q) == 0
    for obj in (k, s):
        CL.clReleaseKernel(obj)
    for b in (src, dst):
        CL.clReleaseMemObject(b)
    CL.clReleaseCommandQueue(q)


def test_local_arguments_set_natively(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"scratch")
    kernel = handles.lookup(k, Kernel, cl.CL_INVALID_KERNEL)
    out = make_buffer(ctx, 4 * 64)
    calls = python_calls_of(kernel)
    assert CL.clSetKernelArg(k, 1, 4 * 16, 0) == 0
    assert set_arg(k, 2, ctypes.c_int(40)) == 0
    assert calls == []
    assert set_arg(k, 0, out) == 0
    assert kernel.args[1] == ("local", 64)
    assert launch(q, k, 64, 16) == 0
    assert read(q, out, 4 * 64, np.int32).tolist() == [56] * 64
    size = ctypes.c_uint64()
    assert CL.clGetKernelWorkGroupInfo(k, dev, cl.CL_KERNEL_LOCAL_MEM_SIZE, 8, addr(size), 0) == 0
    assert size.value >= 64
    del kernel.set_arg
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(out)
    CL.clReleaseCommandQueue(q)


WG_PARAMS = {cl.CL_KERNEL_WORK_GROUP_SIZE: ctypes.c_size_t, cl.CL_KERNEL_COMPILE_WORK_GROUP_SIZE: ctypes.c_size_t * 3,
             cl.CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: ctypes.c_size_t,
             cl.CL_KERNEL_LOCAL_MEM_SIZE: ctypes.c_uint64, cl.CL_KERNEL_PRIVATE_MEM_SIZE: ctypes.c_uint64}


def python_answer(k, device, param):
    value, size = WG_PARAMS[param](), ctypes.c_size_t()
    kernel_api.clGetKernelWorkGroupInfo(k, device, param, ctypes.sizeof(value), addr(value), addr(size))
    return bytes(value), size.value


def c_answer(k, device, param):
    value, size = WG_PARAMS[param](), ctypes.c_size_t()
    assert CL.clGetKernelWorkGroupInfo(k, device, param, ctypes.sizeof(value), addr(value), addr(size)) == 0
    return bytes(value), size.value


@pytest.mark.parametrize("name", [b"step", b"fixed"])
def test_work_group_info_and_num_args_are_the_python_entry_s(env, monkeypatch, name):
    ctx, dev, prog = env
    k = create_kernel(prog, name)
    kernel = handles.lookup(k, Kernel, cl.CL_INVALID_KERNEL)
    expected = {(d, p): python_answer(k, d, p) for d in (dev, 0) for p in WG_PARAMS}
    for d, p in expected:                 # the first answers come from Python, which tells C
        assert c_answer(k, d, p) == expected[d, p]

    def python_entry_called(*args):
        raise AssertionError("answered by the Python entry")
    monkeypatch.setattr(kernel_api, "work_group_size", python_entry_called)
    monkeypatch.setitem(kernel_api.INFO, cl.CL_KERNEL_NUM_ARGS, (python_entry_called, None))
    for d, p in expected:                 # now natively, with the same values
        assert c_answer(k, d, p) == expected[d, p]
    nargs, size = ctypes.c_uint32(), ctypes.c_size_t()
    assert CL.clGetKernelInfo(k, cl.CL_KERNEL_NUM_ARGS, 4, addr(nargs), addr(size)) == 0
    assert (nargs.value, size.value) == (len(kernel.args), 4)
    got = ctypes.c_size_t()
    assert CL.clGetKernelWorkGroupInfo(k, dev, cl.CL_KERNEL_WORK_GROUP_SIZE, 0, 0, addr(got)) == 0
    assert got.value == ctypes.sizeof(ctypes.c_size_t)
    monkeypatch.undo()
    # what stays Python's: short buffers, other devices, other queries
    assert CL.clGetKernelWorkGroupInfo(k, dev, cl.CL_KERNEL_COMPILE_WORK_GROUP_SIZE, 8,
                                       addr(ctypes.c_size_t()), 0) == cl.CL_INVALID_VALUE
    assert CL.clGetKernelWorkGroupInfo(k, k, cl.CL_KERNEL_WORK_GROUP_SIZE, 8,
                                       addr(ctypes.c_size_t()), 0) == cl.CL_INVALID_DEVICE
    assert CL.clGetKernelWorkGroupInfo(k, dev, cl.CL_KERNEL_GLOBAL_WORK_SIZE, 24,
                                       addr((ctypes.c_size_t * 3)()), 0) == cl.CL_INVALID_VALUE
    assert CL.clGetKernelInfo(k, cl.CL_KERNEL_NUM_ARGS, 2, addr(nargs), 0) == cl.CL_INVALID_VALUE
    CL.clReleaseKernel(k)


def test_create_kernel_has_a_direct_entry_with_the_creator_rules(env):
    """clCreateKernel's direct C entry (no ctypes callback): the handle, the code through
    errcode_ret (which may be NULL)."""
    ctx, dev, prog = env
    assert CL._direct.get("clCreateKernel")
    e = ctypes.c_int32(12345)
    k = CL.clCreateKernel(prog, b"step", addr(e))
    assert k and e.value == 0
    assert CL.clCreateKernel(prog, b"nope", addr(e)) == 0 and e.value == cl.CL_INVALID_KERNEL_NAME
    assert CL.clCreateKernel(prog, b"nope", 0) == 0
    assert CL.clCreateKernel(k, b"step", addr(e)) == 0 and e.value == cl.CL_INVALID_PROGRAM
    assert CL.clReleaseKernel(k) == 0


PING_PONG_PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
static const char *SRC =
    "__kernel void step(__global const int *src, __global int *dst, int add) {"
    "    size_t i = get_global_id(0); dst[i] = src[i] + add; }";
#define T 4
#define N 300
#define W 256
static cl_context ctx; static cl_device_id dev; static cl_program prog; static int failures;
static cl_mem bufs[T][2]; static int expected[T];
static void fail(void) { __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST); }
static void *host(void *arg) {
    long t = (long)arg; cl_int e;
    cl_kernel k = clCreateKernel(prog, "step", &e);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    size_t n = W, wg = 0;
    cl_uint nargs = 0;
    for (int i = 0; i < N; i++) {
        int add = (int)((i + t) % 5);      /* the buffers swapped and a new scalar each time */
        expected[t] += add;
        if (clSetKernelArg(k, 0, sizeof(cl_mem), &bufs[t][i % 2])
                || clSetKernelArg(k, 1, sizeof(cl_mem), &bufs[t][1 - i % 2])
                || clSetKernelArg(k, 2, sizeof add, &add)
                || clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL))
            fail();
        if (clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) || wg < 1
                || clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL) || nargs != 3)
            fail();
    }
    clFinish(q);
    clReleaseKernel(k);
    clReleaseCommandQueue(q);
    return NULL;
}
int main(void) {
    cl_platform_id plat; cl_int e; pthread_t th[T]; int zero = 0;
    clGetPlatformIDs(1, &plat, NULL);
    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e);
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL)) return 2;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    for (int t = 0; t < T; t++)
        for (int b = 0; b < 2; b++) {
            bufs[t][b] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, W * sizeof(int), NULL, &e);
            clEnqueueFillBuffer(q, bufs[t][b], &zero, sizeof zero, 0, W * sizeof(int), 0, NULL, NULL);
        }
    clFinish(q);
    for (long t = 0; t < T; t++) pthread_create(&th[t], NULL, host, (void *)t);
    for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
    int wrong = 0;
    for (int t = 0; t < T; t++) {
        int out[W];
        clEnqueueReadBuffer(q, bufs[t][N % 2], CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
        for (int i = 0; i < W; i++) wrong += out[i] != expected[t];
    }
    printf("%d %d\n", failures, wrong);
    return 0;
}
"""


def test_ping_pong_from_several_c_threads(run_with_pyplat, tmp_path):
    """Host threads of a C program through the loader, each swapping the two buffers of its own
    kernel and setting a scalar before every launch on its in-order queue, and asking its
    work-group size and argument count: every launch reads what the one before wrote."""
    from support.c_programs import build_c_program
    exe = build_c_program(tmp_path, "ping_pong", PING_PONG_PROGRAM)
    for workers in ("1", "4"):
        r = run_with_pyplat([exe], env={"PYPLAT_WORKERS": workers})
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.split() == ["0", "0"], r.stdout + r.stderr
