"""clSetKernelArg without the handle table's lock (pyplat/api/native_arg_sets.pxi): the sets a
program repeats take the kernel slot's own lock alone, everything else the table lock and then
the slot's lock. These tests check that a launch always sees the values set last, from several
host threads, while other threads launch, query and adopt the same kernels and churn the
table; and that what the Python entry refuses is still refused."""
import ctypes

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native
from support.c_programs import build_c_program
from support.capi import CL, addr, err, python_entry
from support.clobjects import create_program, make_buffer, make_context, make_queue, read

if not CL._direct.get("clSetKernelArg") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

SETARG_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t)


def native_setarg(kernel, index, size, value_address):
    """The native clSetKernelArg alone (DEFER: it did not answer)."""
    return SETARG_FN(_native.fast_path_entries()["clSetKernelArg"])(kernel, index, size, value_address)


def test_handles_of_another_kind_released_or_foreign_are_left_to_python():
    """The kernel is read in its handle's memory: a buffer handle given as the kernel, junk and
    a released kernel are refused natively with the Python entry's code (native_handle_rules.pxi);
    a buffer of another context is not answered natively, and the Python entry gives the spec's
    code."""
    ctx, dev = make_context()
    other, _ = make_context()
    try:
        prog = create_program(ctx, b"__kernel void put(__global int *o, int v) { o[get_global_id(0)] = v; }")
        assert CL.clBuildProgram(prog, 0, 0, b"", 0, 0) == 0
        e = err()
        k = CL.clCreateKernel(prog, b"put", addr(e))
        assert e.value == 0
        buf, foreign = make_buffer(ctx, 64), make_buffer(other, 64)
        value = ctypes.c_int32(7)
        assert native_setarg(0x10, 1, 4, addr(value)) == cl.CL_INVALID_KERNEL   # (never read there)
        assert native_setarg(buf, 1, 4, addr(value)) == cl.CL_INVALID_KERNEL
        assert python_entry("clSetKernelArg")(buf, 1, 4, addr(value)) == cl.CL_INVALID_KERNEL
        held = ctypes.c_size_t(foreign)
        assert native_setarg(k, 0, 8, addr(held)) == _native.DEFER
        assert CL.clSetKernelArg(k, 0, 8, addr(held)) == cl.CL_INVALID_MEM_OBJECT
        mine = ctypes.c_size_t(buf)
        assert native_setarg(k, 0, 8, addr(mine)) == 0 and native_setarg(k, 0, 8, addr(mine)) == 0
        assert CL.clSetKernelArg(k, 1, 4, addr(value)) == 0      # the last one: Python plans
        assert native_setarg(k, 1, 4, addr(value)) == 0          # the plan's own value
        assert native_setarg(k, 0, 8, addr(mine)) == 0           # the plan's own buffer
        assert native_setarg(k, 1, 2, addr(value)) == cl.CL_INVALID_ARG_SIZE   # the rules' (both entries)
        assert python_entry("clSetKernelArg")(k, 1, 2, addr(value)) == cl.CL_INVALID_ARG_SIZE
        q = make_queue(ctx, dev)
        g = ctypes.c_size_t(16)
        assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == 0
        assert read(q, buf, 64, np.int32).tolist() == [7] * 16
        assert CL.clReleaseKernel(k) == 0
        assert native_setarg(k, 1, 4, addr(value)) == cl.CL_INVALID_KERNEL
        assert python_entry("clSetKernelArg")(k, 1, 4, addr(value)) == cl.CL_INVALID_KERNEL
        for obj in (buf, foreign):
            assert CL.clReleaseMemObject(obj) == 0
        assert CL.clReleaseCommandQueue(q) == 0 and CL.clReleaseProgram(prog) == 0
    finally:
        CL.clReleaseContext(ctx)
        CL.clReleaseContext(other)


SETS_PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
static const char *SRC = "__kernel void put(__global int *o, int v) { o[get_global_id(0)] = v; }";
#define SETTERS 3
#define ROUNDS 3000
#define N 16
static cl_context ctx; static cl_device_id dev; static cl_program prog;
static cl_kernel kept[SETTERS];          /* long-lived kernels the querier adopts while set */
static cl_mem bufs[SETTERS][2];
static volatile int running = SETTERS; static int wrong[4];
static void *setter(void *arg) {
    long t = (long)arg; cl_int e; size_t n = N; int got[N], last[2] = {-1, -1};
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    cl_kernel k = clCreateKernel(prog, "put", &e);
    for (int i = 0; i < ROUNDS; i++) {
        int j = (i / 3) % 2;
        cl_kernel use = i % 5 == 0 ? kept[t] : k;
        if (clSetKernelArg(use, 0, sizeof(cl_mem), &bufs[t][j]) || clSetKernelArg(use, 1, sizeof i, &i)
            || clSetKernelArg(use, 0, sizeof(cl_mem), &bufs[t][j])          /* the same again */
            || clEnqueueNDRangeKernel(q, use, 1, NULL, &n, NULL, 0, NULL, NULL))
            __sync_fetch_and_add(&wrong[0], 1);
        last[j] = i;
        if (i % 97 == 0) {
            clEnqueueReadBuffer(q, bufs[t][j], CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
            for (int x = 0; x < N; x++) if (got[x] != i) { __sync_fetch_and_add(&wrong[1], 1); break; }
        }
        if (i % 200 == 199) {             /* a new kernel object: a native first plan */
            clReleaseKernel(k);
            k = clCreateKernel(prog, "put", &e);
            if (e) __sync_fetch_and_add(&wrong[0], 1);
        }
    }
    clFinish(q);
    for (int j = 0; j < 2; j++) {
        clEnqueueReadBuffer(q, bufs[t][j], CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
        for (int x = 0; x < N; x++) if (got[x] != last[j]) { __sync_fetch_and_add(&wrong[2], 1); break; }
    }
    clReleaseKernel(k); clReleaseCommandQueue(q);
    __sync_fetch_and_sub(&running, 1);
    return NULL;
}
static void *querier(void *arg) {        /* queries (Python adopts a kernel made natively) and churn */
    (void)arg; cl_int e; char name[16]; cl_uint nargs; size_t wg; int i = 0;
    while (running > 0) {
        cl_kernel k = kept[i % SETTERS];
        if (clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL)
            || clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL) || nargs != 2
            || clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL))
            __sync_fetch_and_add(&wrong[3], 1);
        cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 + i % 64, NULL, &e);
        cl_kernel extra = clCreateKernel(prog, "put", &e);
        clSetKernelArg(extra, 0, sizeof m, &m);
        clReleaseKernel(extra); clReleaseMemObject(m);
        i++;
        if (i % 64 == 0) sched_yield();
    }
    return NULL;
}
int main(void) {
    cl_platform_id p; cl_int e; int zero = 0;
    clGetPlatformIDs(1, &p, NULL);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e);
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL)) return 2;
    cl_kernel first = clCreateKernel(prog, "put", &e);   /* Python learns the layout */
    for (int t = 0; t < SETTERS; t++) {
        kept[t] = clCreateKernel(prog, "put", &e);
        for (int j = 0; j < 2; j++) bufs[t][j] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &e);
    }
    pthread_t th[SETTERS + 1];
    for (long t = 0; t < SETTERS; t++) pthread_create(&th[t], NULL, setter, (void *)t);
    pthread_create(&th[SETTERS], NULL, querier, NULL);
    for (int t = 0; t <= SETTERS; t++) pthread_join(th[t], NULL);
    printf("%d %d %d %d\n", wrong[0], wrong[1], wrong[2], wrong[3]);
    (void)zero;
    for (int t = 0; t < SETTERS; t++) {
        clReleaseKernel(kept[t]);
        for (int j = 0; j < 2; j++) clReleaseMemObject(bufs[t][j]);
    }
    clReleaseKernel(first); clReleaseProgram(prog); clReleaseContext(ctx);
    return 0;
}
"""


def test_sets_and_launches_from_c_threads_while_kernels_are_adopted_and_the_table_churns(run_with_pyplat, tmp_path):
    """Three C threads (through the loader) each set a buffer, a value and the same buffer again
    before every launch, switching between two buffers and between a kernel of their own (made
    anew every 200 launches: native first plans) and a long-lived one; a fourth thread queries
    the long-lived kernels (Python adopts them while they are set) and makes, sets and releases
    buffers and kernels. Every read sees the value set last, no call fails, the program ends."""
    exe = build_c_program(tmp_path, "arg_sets", SETS_PROGRAM)
    for workers in ("1", "3"):
        r = run_with_pyplat([exe], env={"PYPLAT_WORKERS": workers})
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.split() == ["0", "0", "0", "0"], r.stdout + r.stderr
