"""clRetain*/clRelease* of contexts, queues, memory objects, programs, kernels and events at native
cost (pyplat/api/native_refs.pxi): the application's references are counted in the handle table
without the GIL, the spec's reference counts read as before, the last release still destroys
(destructor callbacks, dead handle), and C threads retaining and releasing at once lose nothing."""
import ctypes
import time

import pytest

from pyplat import cl, config
from pyplat.api import _native, handles
from support.c_programs import build_c_program
from support.capi import CL, addr, err, python_entry
from support.clobjects import context_and_program, create_kernel, make_buffer, make_context, make_queue, read

SOURCE = b"__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }"

if not CL._direct.get("clRetainMemObject") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

HANDLE_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_size_t)
# kind -> (retain, release, info function, its CL_*_REFERENCE_COUNT, invalid-handle code)
KINDS = {
    "context": ("clRetainContext", "clReleaseContext", "clGetContextInfo", cl.CL_CONTEXT_REFERENCE_COUNT,
                cl.CL_INVALID_CONTEXT),
    "queue": ("clRetainCommandQueue", "clReleaseCommandQueue", "clGetCommandQueueInfo",
              cl.CL_QUEUE_REFERENCE_COUNT, cl.CL_INVALID_COMMAND_QUEUE),
    "mem": ("clRetainMemObject", "clReleaseMemObject", "clGetMemObjectInfo", cl.CL_MEM_REFERENCE_COUNT,
            cl.CL_INVALID_MEM_OBJECT),
    "program": ("clRetainProgram", "clReleaseProgram", "clGetProgramInfo", cl.CL_PROGRAM_REFERENCE_COUNT,
                cl.CL_INVALID_PROGRAM),
    "kernel": ("clRetainKernel", "clReleaseKernel", "clGetKernelInfo", cl.CL_KERNEL_REFERENCE_COUNT,
               cl.CL_INVALID_KERNEL),
    "event": ("clRetainEvent", "clReleaseEvent", "clGetEventInfo", cl.CL_EVENT_REFERENCE_COUNT,
              cl.CL_INVALID_EVENT),
}


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


def native(name):
    return HANDLE_FN(_native.fast_path_entries()[name])


def count(kind, obj):
    _, _, info, param, _ = KINDS[kind]
    v = ctypes.c_uint32()
    assert getattr(CL, info)(obj, param, 4, addr(v), 0) == 0
    return v.value


def objects(ctx, dev, prog):
    e = err()
    user = CL.clCreateUserEvent(ctx, addr(e))
    assert e.value == 0
    return {"queue": make_queue(ctx, dev), "mem": make_buffer(ctx, 64), "kernel": create_kernel(prog, b"inc"),
            "event": user}


def test_retain_and_release_are_answered_natively_with_one_count(env):
    """The native entries answer every retain and every release but an object's last (which may
    destroy it: Python's), and the Python entries count on the same number."""
    ctx, dev, prog = env
    made = dict(objects(ctx, dev, prog), context=ctx, program=prog)
    for kind, obj in made.items():
        retain, release = native(KINDS[kind][0]), native(KINDS[kind][1])
        before = count(kind, obj)
        assert retain(obj) == 0 and retain(obj) == 0, kind
        assert count(kind, obj) == before + 2, kind
        core = handles.peek(obj)
        handles.release(core)                              # the Python entries' side: same count
        assert count(kind, obj) == before + 1, kind
        handles.retain(core)
        assert release(obj) == 0 and release(obj) == 0, kind
        assert count(kind, obj) == before, kind
    for kind in ("queue", "mem", "kernel", "event"):      # the last reference: not native
        obj = made[kind]
        assert native(KINDS[kind][1])(obj) == _native.DEFER, kind
        assert handles.peek(obj) is not None, kind
        assert getattr(CL, KINDS[kind][1])(obj) == 0
        assert handles.peek(obj) is None, kind
        assert native(KINDS[kind][0])(obj) == KINDS[kind][4], kind    # dead: refused natively
        assert python_entry(KINDS[kind][0])(obj) == KINDS[kind][4], kind  # as by the Python entry


def test_reference_counts_include_the_implementations_references(env):
    """CL_*_REFERENCE_COUNT: the application's references plus the objects that hold one (a
    queue its context, a kernel its program, a buffer its context), as before."""
    ctx, dev, prog = env
    base_ctx, base_prog = count("context", ctx), count("program", prog)
    q = make_queue(ctx, dev)
    assert count("queue", q) == 1 and count("context", ctx) == base_ctx + 1
    k = create_kernel(prog, b"inc")
    assert count("kernel", k) == 1 and count("program", prog) == base_prog + 1
    buf = make_buffer(ctx, 64)
    assert count("mem", buf) == 1 and count("context", ctx) == base_ctx + 2
    for _ in range(3):
        assert CL.clRetainKernel(k) == 0 and CL.clRetainMemObject(buf) == 0 and CL.clRetainContext(ctx) == 0
    assert count("kernel", k) == 4 and count("mem", buf) == 4 and count("context", ctx) == base_ctx + 5
    assert count("program", prog) == base_prog + 1
    for _ in range(3):
        assert CL.clReleaseKernel(k) == 0 and CL.clReleaseMemObject(buf) == 0 and CL.clReleaseContext(ctx) == 0
    assert CL.clReleaseKernel(k) == 0
    assert count("program", prog) == base_prog                  # the kernel let go of its program
    assert CL.clReleaseCommandQueue(q) == 0 and CL.clReleaseMemObject(buf) == 0
    assert count("context", ctx) == base_ctx


DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_size_t, ctypes.c_void_p)


def fn_address(callback):
    return ctypes.cast(callback, ctypes.c_void_p).value


def test_the_last_release_destroys_and_the_handle_is_dead():
    ctx, dev = make_context()
    buf = make_buffer(ctx, 64)
    ran = []
    mem_done = DESTRUCTOR(lambda h, _: ran.append(("mem", h)))
    ctx_done = DESTRUCTOR(lambda h, _: ran.append(("context", h)))
    assert CL.clSetMemObjectDestructorCallback(buf, fn_address(mem_done), 0) == 0
    assert CL.clSetContextDestructorCallback(ctx, fn_address(ctx_done), 0) == 0
    for kind, obj in (("mem", buf), ("context", ctx)):
        assert native(KINDS[kind][0])(obj) == 0 and native(KINDS[kind][1])(obj) == 0
    assert CL.clReleaseMemObject(buf) == 0
    assert ran == [("mem", buf)]
    assert CL.clRetainMemObject(buf) == cl.CL_INVALID_MEM_OBJECT
    assert CL.clReleaseMemObject(buf) == cl.CL_INVALID_MEM_OBJECT
    assert CL.clReleaseContext(ctx) == 0
    assert ran == [("mem", buf), ("context", ctx)]
    assert CL.clRetainContext(ctx) == cl.CL_INVALID_CONTEXT


def test_a_buffer_released_while_a_native_command_waits_lives_until_it_ran(env):
    """A buffer's last release while a native command on it is gated by a user event: the
    command still runs on it, and the buffer is destroyed only afterwards."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    src, dst = make_buffer(ctx, 64), make_buffer(ctx, 64)
    zero, seven = ctypes.c_int(0), ctypes.c_int(7)
    for b in (src, dst):                               # the Python path primes the native one
        assert CL.clEnqueueFillBuffer(q, b, addr(zero), 4, 0, 64, 0, 0, 0) == 0
    assert CL.clFinish(q) == 0
    e = err()
    gate = CL.clCreateUserEvent(ctx, addr(e))
    gates = (ctypes.c_size_t * 1)(gate)
    assert CL.clEnqueueFillBuffer(q, src, addr(seven), 4, 0, 64, 1, addr(gates), 0) == 0
    assert CL.clEnqueueCopyBuffer(q, src, dst, 0, 0, 64, 0, 0, 0) == 0
    ran = []
    done = DESTRUCTOR(lambda h, _: ran.append(h))
    assert CL.clSetMemObjectDestructorCallback(src, fn_address(done), 0) == 0
    assert CL.clReleaseMemObject(src) == 0
    assert ran == [] and handles.peek(src) is not None         # the commands still hold it
    assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == 0
    assert CL.clFinish(q) == 0
    for _ in range(200):
        if ran:
            break
        time.sleep(0.01)
    assert ran == [src]
    assert (read(q, dst, 64, "int32") == 7).all()
    for obj, release in ((dst, CL.clReleaseMemObject), (gate, CL.clReleaseEvent), (q, CL.clReleaseCommandQueue)):
        assert release(obj) == 0


THREADS_PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
static const char *SRC = "__kernel void inc(__global int *o) { o[0] += 1; }";
#define T 8
#define N 20000
static cl_context ctx; static cl_command_queue q; static cl_mem buf; static cl_program prog;
static cl_kernel k; static cl_event user; static int failures, destroyed;
static void *host(void *arg) {
    (void)arg;
    for (int i = 0; i < N; i++) {
        if (clRetainContext(ctx) || clRetainCommandQueue(q) || clRetainMemObject(buf) || clRetainProgram(prog)
            || clRetainKernel(k) || clRetainEvent(user)) __sync_fetch_and_add(&failures, 1);
        if (clReleaseEvent(user) || clReleaseKernel(k) || clReleaseProgram(prog) || clReleaseMemObject(buf)
            || clReleaseCommandQueue(q) || clReleaseContext(ctx)) __sync_fetch_and_add(&failures, 1);
    }
    return NULL;
}
static void CL_CALLBACK gone(cl_mem m, void *data) { (void)m; (void)data; destroyed++; }
static cl_uint refs(cl_int (*info)(void *, cl_uint, size_t, void *, size_t *), void *obj, cl_uint param) {
    cl_uint n = 0; info(obj, param, sizeof n, &n, NULL); return n;
}
typedef cl_int (*info_fn)(void *, cl_uint, size_t, void *, size_t *);
int main(void) {
    cl_platform_id p; cl_device_id d; cl_int e;
    clGetPlatformIDs(1, &p, NULL);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    q = clCreateCommandQueue(ctx, d, 0, &e);
    buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &e);
    prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e);
    clBuildProgram(prog, 1, &d, "", NULL, NULL);
    k = clCreateKernel(prog, "inc", &e);
    user = clCreateUserEvent(ctx, &e);
    clSetMemObjectDestructorCallback(buf, gone, NULL);
    pthread_t th[T];
    for (long t = 0; t < T; t++) pthread_create(&th[t], NULL, host, NULL);
    for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
    printf("%d %u %u %u %u %u %u\n", failures,
           refs((info_fn)clGetContextInfo, ctx, CL_CONTEXT_REFERENCE_COUNT),
           refs((info_fn)clGetCommandQueueInfo, q, CL_QUEUE_REFERENCE_COUNT),
           refs((info_fn)clGetMemObjectInfo, buf, CL_MEM_REFERENCE_COUNT),
           refs((info_fn)clGetProgramInfo, prog, CL_PROGRAM_REFERENCE_COUNT),
           refs((info_fn)clGetKernelInfo, k, CL_KERNEL_REFERENCE_COUNT),
           refs((info_fn)clGetEventInfo, user, CL_EVENT_REFERENCE_COUNT));
    clSetUserEventStatus(user, CL_COMPLETE);
    clReleaseEvent(user); clReleaseKernel(k); clReleaseProgram(prog); clReleaseMemObject(buf);
    printf("%d %d\n", destroyed, clRetainMemObject(buf) == CL_INVALID_MEM_OBJECT);
    clReleaseCommandQueue(q); clReleaseContext(ctx);
    return 0;
}
"""


def test_c_threads_retaining_and_releasing_at_once_lose_nothing(run_with_pyplat, tmp_path):
    """8 host threads retain and release every kind of object 20,000 times each, through the
    loader: no call fails, every count is back where it was (the context: its queue, buffer,
    program and user event hold it), and the last releases still destroy."""
    exe = build_c_program(tmp_path, "refs", THREADS_PROGRAM)
    r = run_with_pyplat([exe])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split("\n")[:2] == ["0 5 1 1 2 1 1", "1 1"], r.stdout + r.stderr
