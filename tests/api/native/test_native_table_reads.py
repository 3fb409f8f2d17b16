"""The small native calls read the handle table without its lock (pyplat/api/native_table_reads.pxi):
while other threads create and release many objects (the table grows, shrinks, is rebuilt and
loses entries), every query on live handles still gets its right answer, released handles still
get the spec's CL_INVALID_* code, and nothing crashes."""
import ctypes

import pytest

from pyplat import cl, config
from pyplat.api import _native
from support.c_programs import NAMED_PLATFORM_C, build_c_program
from support.capi import CL, addr, err, python_entry
from support.clobjects import make_buffer, make_context

if not CL._direct.get("clGetMemObjectInfo") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

INFO_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t,
                           ctypes.c_size_t)


def native_mem_size(mem):
    """(code, size) from the native clGetMemObjectInfo alone (DEFER: it did not answer)."""
    size = ctypes.c_uint64(0)
    code = INFO_FN(_native.fast_path_entries()["clGetMemObjectInfo"])(mem, cl.CL_MEM_SIZE, 8, addr(size), 0)
    return code, size.value


def test_lookups_stay_right_while_the_table_is_rebuilt_at_every_size():
    """Waves of thousands of buffers made and released: the table grows and is rebuilt again and
    again, and the native query answers each live buffer's own size and refuses released ones
    (CL_INVALID_MEM_OBJECT, as the Python entry does). A rebuild reuses the array kept for its capacity:
    one array per capacity ever made, none freed under a reader, memory flat."""
    ctx, _ = make_context()
    try:
        keep = make_buffer(ctx, 24)
        first = None
        for wave in range(12):
            bufs = [make_buffer(ctx, 128 + 8 * i) for i in range(3000)]
            for i in range(0, len(bufs), 97):
                assert native_mem_size(bufs[i]) == (0, 128 + 8 * i)
            assert native_mem_size(keep) == (0, 24)
            gone, bufs = bufs[::2], bufs[1::2]
            for b in gone:
                assert CL.clReleaseMemObject(b) == 0
            for b in gone[::101]:
                assert native_mem_size(b)[0] == cl.CL_INVALID_MEM_OBJECT
                size = ctypes.c_uint64()
                python_query = python_entry("clGetMemObjectInfo")
                assert python_query(b, cl.CL_MEM_SIZE, 8, addr(size), 0) == cl.CL_INVALID_MEM_OBJECT
            for b in bufs:
                assert CL.clReleaseMemObject(b) == 0
            if first is None:
                first = _native.table_read_stats()
        last = _native.table_read_stats()
        assert last["rebuilds"] >= first["rebuilds"] + 2, (first, last)    # the waves did rebuild
        assert last["arrays"] == len(last["capacities"]), last            # never one made twice
        assert native_mem_size(keep) == (0, 24)
        assert CL.clReleaseMemObject(keep) == 0
        assert native_mem_size(keep)[0] == cl.CL_INVALID_MEM_OBJECT
    finally:
        CL.clReleaseContext(ctx)


HAMMER_PROGRAM = NAMED_PLATFORM_C + r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
static const char *SRC = "__kernel void inc(__global int *o, int n) { o[0] += n; }";
#define QUERIERS 2
#define CHURNERS 2
#define ROUNDS 30
#define LIVE 1500
#define CHECK_EVERY 1000
static cl_context ctx; static cl_device_id dev; static cl_command_queue q; static cl_program prog;
static cl_mem buf; static cl_kernel k; static cl_event done;
static size_t wg; static volatile int churning = CHURNERS, checking; static int wrong[8], queries;
static volatile long churned;     /* creations and releases the churners have made */
static void *query(void *arg) {
    (void)arg; int n = 0; long seen = -CHECK_EVERY;
    while (churning > 0 || n < 20000) {
        size_t size = 0, wgs = 0; cl_mem_flags flags = 0; cl_int status = 0; cl_uint nargs = 0;
        if (clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof size, &size, NULL) || size != 4096)
            __sync_fetch_and_add(&wrong[0], 1);
        if (clGetMemObjectInfo(buf, CL_MEM_FLAGS, sizeof flags, &flags, NULL) || flags != CL_MEM_READ_WRITE)
            __sync_fetch_and_add(&wrong[1], 1);
        if (clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wgs, &wgs, NULL) || wgs != wg)
            __sync_fetch_and_add(&wrong[2], 1);
        if (clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL) || nargs != 2)
            __sync_fetch_and_add(&wrong[3], 1);
        if (clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL)
            || status != CL_COMPLETE)
            __sync_fetch_and_add(&wrong[4], 1);
        if (clFlush(q) || clFinish(q) || clWaitForEvents(1, &done))
            __sync_fetch_and_add(&wrong[5], 1);
        if (n % 512 == 0 && (churning == 0 || churned - seen >= CHECK_EVERY)) {
            /* just released: the spec's codes, through Python. The churners pause meanwhile:
               waiting for the GIL, this thread would otherwise let them release more handles
               than the quarantine keeps. Only after CHECK_EVERY of their calls since the last
               time: paced by the queries alone, the pauses came faster the more they slowed
               the churners, until the churners hardly ran (a run took minutes on a loaded
               machine). */
            cl_int e;
            seen = churned;
            __sync_fetch_and_add(&checking, 1);
            cl_mem dead_buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &e);
            cl_kernel dead_kernel = clCreateKernel(prog, "inc", &e);
            cl_event dead_event = clCreateUserEvent(ctx, &e);
            cl_command_queue dead_queue = clCreateCommandQueue(ctx, dev, 0, &e);
            clReleaseMemObject(dead_buf); clReleaseKernel(dead_kernel); clReleaseEvent(dead_event);
            clReleaseCommandQueue(dead_queue);
            if (clGetMemObjectInfo(dead_buf, CL_MEM_SIZE, sizeof size, &size, NULL) != CL_INVALID_MEM_OBJECT
                || clGetKernelInfo(dead_kernel, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL) != CL_INVALID_KERNEL
                || clGetEventInfo(dead_event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL)
                   != CL_INVALID_EVENT
                || clFlush(dead_queue) != CL_INVALID_COMMAND_QUEUE)
                __sync_fetch_and_add(&wrong[6], 1);
            __sync_fetch_and_sub(&checking, 1);
        }
        n++;
    }
    __sync_fetch_and_add(&queries, n);
    return NULL;
}
static void *churn(void *arg) {
    (void)arg; static __thread cl_mem mems[LIVE]; static __thread cl_event evs[LIVE / 4];
    static __thread cl_kernel ks[LIVE / 4]; cl_int e;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < LIVE; i++) {
            while (checking) sched_yield();
            mems[i] = clCreateBuffer(ctx, CL_MEM_READ_ONLY, 64 + i, NULL, &e);
            if (e) __sync_fetch_and_add(&wrong[7], 1);
            __sync_fetch_and_add(&churned, 1);
        }
        for (int i = 0; i < LIVE / 4; i++) {
            evs[i] = clCreateUserEvent(ctx, &e);
            ks[i] = clCreateKernel(prog, "inc", &e);
            if (e) __sync_fetch_and_add(&wrong[7], 1);
        }
        for (int i = 0; i < LIVE; i++) {
            while (checking) sched_yield();
            if (clReleaseMemObject(mems[i])) __sync_fetch_and_add(&wrong[7], 1);
            __sync_fetch_and_add(&churned, 1);
        }
        for (int i = 0; i < LIVE / 4; i++) {
            while (checking) sched_yield();
            if (clReleaseEvent(evs[i]) || clReleaseKernel(ks[i])) __sync_fetch_and_add(&wrong[7], 1);
            __sync_fetch_and_add(&churned, 2);
        }
    }
    __sync_fetch_and_sub(&churning, 1);
    return NULL;
}
int main(int argc, char **argv) {
    cl_int e;
    cl_platform_id p = named_platform(argc, argv);
    if (!p) return 1;
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    q = clCreateCommandQueue(ctx, dev, 0, &e);
    buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &e);
    prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e);
    clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    k = clCreateKernel(prog, "inc", &e);
    clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    clEnqueueMarkerWithWaitList(q, 0, NULL, &done);
    clFinish(q);
    pthread_t th[QUERIERS + CHURNERS];
    for (long t = 0; t < QUERIERS; t++) pthread_create(&th[t], NULL, query, NULL);
    for (long t = 0; t < CHURNERS; t++) pthread_create(&th[QUERIERS + t], NULL, churn, NULL);
    for (int t = 0; t < QUERIERS + CHURNERS; t++) pthread_join(th[t], NULL);
    for (int i = 0; i < 8; i++) printf("%d ", wrong[i]);
    printf("\n%d\n", queries >= QUERIERS * 20000);
    clReleaseEvent(done); clReleaseKernel(k); clReleaseProgram(prog); clReleaseMemObject(buf);
    clReleaseCommandQueue(q); clReleaseContext(ctx);
    return 0;
}
"""


def test_queries_stay_right_while_c_threads_churn_the_table(run_with_pyplat, tmp_path):
    """Two C threads (through the loader) ask a buffer's size and flags, a kernel's work-group
    size and argument count and an event's status, and flush, finish and wait, while two others
    make and release 90,000 buffers, 22,500 user events and 22,500 kernels (the table rebuilt
    again and again, entries deleted around the queried ones): every answer is right, released
    handles get CL_INVALID_*, no creation or release fails, and the program ends normally."""
    exe = build_c_program(tmp_path, "table_reads", HAMMER_PROGRAM)
    r = run_with_pyplat([exe, "PyPlat"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split("\n")[:2] == ["0 0 0 0 0 0 0 0 ", "1"], r.stdout + r.stderr
