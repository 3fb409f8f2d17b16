"""The native fast path of clEnqueueNDRangeKernel and its native events (pyplat/api/_native.pyx):
repeats of a launch the Python path validated are answered natively, events it hands out are
retained / released natively and adopted by the API layer on first use from Python; every answer
must be the one the Python path gives. capi calls the same direct C entries the shim installs."""
import ctypes
import time

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native, handles
from pyplat.core.kernel import Kernel
from support.c_programs import build_c_program
from support.capi import CL, addr, err, python_entry
from support.clobjects import context_and_program, create_kernel, make_buffer, make_queue, read, set_arg
from support.native import HandleStruct, launch

SOURCE = b"""
__kernel void add(__global const int *a, __global int *b, int v) {
    size_t i = get_global_id(0);
    b[i] = a[i] + v;
}
__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }
"""

if not CL._direct.get("clEnqueueNDRangeKernel") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


def info_u32(fn, obj, param):
    v = ctypes.c_uint32()
    assert fn(obj, param, 4, addr(v), 0) == 0
    return v.value


def test_native_events_count_adopt_and_release(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    buf = make_buffer(ctx, 4 * 64)
    assert CL.clEnqueueFillBuffer(q, buf, addr(ctypes.c_int(0)), 4, 0, 4 * 64, 0, 0, 0) == 0
    set_arg(k, 0, buf)
    ctx_refs = info_u32(CL.clGetContextInfo, ctx, cl.CL_CONTEXT_REFERENCE_COUNT)
    code, first = launch(q, k, 64)                # Python validates, builds the plan, then the
    assert code == 0 and handles.peek(first) is None   # native path launches it: a native event
    code, ev = launch(q, k, 64)                   # the native path alone
    assert code == 0 and handles.peek(ev) is None
    assert CL.clRetainEvent(ev) == 0 and CL.clRetainEvent(ev) == 0 and CL.clReleaseEvent(ev) == 0
    # first use from Python adopts it, with the count the native side kept (1 + 2 - 1)
    assert info_u32(CL.clGetEventInfo, ev, cl.CL_EVENT_REFERENCE_COUNT) == 2
    assert handles.peek(ev) is not None
    assert info_u32(CL.clGetEventInfo, ev, cl.CL_EVENT_COMMAND_TYPE) == cl.CL_COMMAND_NDRANGE_KERNEL
    evs = (ctypes.c_size_t * 2)(first, ev)
    assert CL.clWaitForEvents(2, addr(evs)) == 0
    assert info_u32(CL.clGetEventInfo, ev, cl.CL_EVENT_COMMAND_EXECUTION_STATUS) == cl.CL_COMPLETE
    for e in (first, ev, ev):
        assert CL.clReleaseEvent(e) == 0
    assert CL.clGetEventInfo(ev, cl.CL_EVENT_REFERENCE_COUNT, 4, addr(ctypes.c_uint32()), 0) == cl.CL_INVALID_EVENT
    # native events never adopted: released natively, then dead
    natives = [launch(q, k, 64)[1] for _ in range(50)]
    assert all(handles.peek(e) is None for e in natives)
    assert CL.clFinish(q) == 0
    for e in natives:
        assert CL.clReleaseEvent(e) == 0
    assert CL.clReleaseEvent(natives[0]) == cl.CL_INVALID_EVENT
    assert CL.clRetainEvent(natives[-1]) == cl.CL_INVALID_EVENT
    assert read(q, buf, 4 * 64, np.int32).tolist() == [52] * 64
    # every event gone: the context's count is back where it was once clFinish has run the
    # clean-up due (the read above is answered natively: it runs none)
    assert CL.clFinish(q) == 0
    assert info_u32(CL.clGetContextInfo, ctx, cl.CL_CONTEXT_REFERENCE_COUNT) == ctx_refs
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_native_launches_follow_arguments_sizes_and_wait_lists(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    k = create_kernel(prog, b"add")
    n = 256
    a = np.arange(n, dtype=np.int32)
    ba = make_buffer(ctx, a.nbytes, cl.CL_MEM_READ_ONLY | cl.CL_MEM_COPY_HOST_PTR, a)
    outs = [make_buffer(ctx, a.nbytes) for _ in range(3)]
    e = err()
    user = CL.clCreateUserEvent(ctx, addr(e))
    assert e.value == 0
    set_arg(k, 0, ba)
    events = []
    for i, out in enumerate(outs):        # a chain gated by a user event, the arguments changing
        set_arg(k, 1, out)
        for v in (1, 2):
            set_arg(k, 2, ctypes.c_int(10 * i + v))
            code, ev = launch(q, k, n, 64, waits=[events[-1] if events else user])
            assert code == 0
            events.append(ev)
    # sizes and wait lists the native path must hand to the Python one for their error codes
    assert launch(q, k, n, 48)[0] == cl.CL_INVALID_WORK_GROUP_SIZE
    bad = (ctypes.c_size_t * 1)(12345)
    g = (ctypes.c_size_t * 1)(n)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 1, addr(bad), 0) == cl.CL_INVALID_EVENT_WAIT_LIST
    # the same with the launch's validated sizes: the native path must not read a foreign pointer
    lo = (ctypes.c_size_t * 1)(64)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), addr(lo), 1, addr(bad), 0) == \
        cl.CL_INVALID_EVENT_WAIT_LIST
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 1, 0, 0) == cl.CL_INVALID_EVENT_WAIT_LIST
    assert info_u32(CL.clGetEventInfo, events[-1], cl.CL_EVENT_COMMAND_EXECUTION_STATUS) != cl.CL_COMPLETE
    assert CL.clSetUserEventStatus(user, cl.CL_COMPLETE) == 0
    last = (ctypes.c_size_t * 1)(events[-1])
    assert CL.clWaitForEvents(1, addr(last)) == 0
    for i, out in enumerate(outs):
        assert read(q, out, a.nbytes, np.int32).tolist() == (a + 10 * i + 2).tolist()
    for ev in events + [user]:
        assert CL.clReleaseEvent(ev) == 0
    CL.clReleaseKernel(k)
    for b in [ba] + outs:
        CL.clReleaseMemObject(b)
    CL.clReleaseCommandQueue(q)


def test_failed_user_event_reaches_native_launches(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    buf = make_buffer(ctx, 4 * 16)
    set_arg(k, 0, buf)
    assert launch(q, k, 16)[0] == 0
    e = err()
    user = CL.clCreateUserEvent(ctx, addr(e))
    code, ev = launch(q, k, 16, waits=[user])
    assert code == 0 and handles.peek(ev) is None
    assert CL.clSetUserEventStatus(user, -55) == 0
    evs = (ctypes.c_size_t * 1)(ev)
    assert CL.clWaitForEvents(1, addr(evs)) == cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    assert ctypes.c_int32(info_u32(CL.clGetEventInfo, ev, cl.CL_EVENT_COMMAND_EXECUTION_STATUS)).value < 0
    for x in (ev, user):
        CL.clReleaseEvent(x)
    CL.clFinish(q)
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_size_t, ctypes.c_void_p)


def test_buffers_of_native_launches_live_until_they_finish(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    buf = make_buffer(ctx, 4 * 16)
    fired = []
    cb = DESTRUCTOR(lambda mem, user: fired.append(mem))
    assert CL.clSetMemObjectDestructorCallback(buf, ctypes.cast(cb, ctypes.c_void_p).value, 0) == 0
    set_arg(k, 0, buf)
    e = err()
    user = CL.clCreateUserEvent(ctx, addr(e))
    assert launch(q, k, 16, waits=[user], want_event=False)[0] == 0      # Python path
    assert launch(q, k, 16, waits=[user], want_event=False)[0] == 0      # native
    assert CL.clReleaseMemObject(buf) == 0
    assert CL.clReleaseKernel(k) == 0
    assert not fired                          # pending launches keep it alive
    assert CL.clSetUserEventStatus(user, cl.CL_COMPLETE) == 0
    assert CL.clFinish(q) == 0
    for _ in range(200):                      # clean-up runs after completion (reap)
        if fired:
            break
        time.sleep(0.01)
    assert fired == [buf]
    CL.clReleaseEvent(user)
    CL.clReleaseCommandQueue(q)


def test_handles_are_laid_out_as_the_shim_reads_them(env):
    """Every handle, whatever its kind, native events included, has icd/pyplat_handle.h's layout
    (the shim's dispatch pointer first); the kinds and the magic numbers come from there too, and
    a released handle reads as dead while its memory is quarantined."""
    from pyplat.api import _native
    S = HandleStruct
    assert _native.handle_layout() == (ctypes.sizeof(S), S.magic.offset, S.kind.offset, S.serial.offset)
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    buf = make_buffer(ctx, 4 * 16)
    set_arg(k, 0, buf)
    launch(q, k, 16)
    code, ev = launch(q, k, 16)
    assert code == 0 and handles.peek(ev) is None           # a native event
    seen = []
    for h, kind in ((ctx, handles.CONTEXT), (dev, handles.DEVICE), (prog, handles.PROGRAM),
                    (q, handles.QUEUE), (k, handles.KERNEL), (buf, handles.MEM), (ev, handles.EVENT)):
        s = S.from_address(h)
        assert (s.dispatch or 0, s.magic, s.kind) == (handles.dispatch_address(), handles.MAGIC, kind)
        seen.append(s.serial)
    assert len(set(seen)) == len(seen)
    assert CL.clFinish(q) == 0
    assert CL.clReleaseEvent(ev) == 0 and S.from_address(ev).magic == handles.DEAD
    assert CL.clReleaseMemObject(buf) == 0
    assert CL.clReleaseKernel(k) == 0 and S.from_address(k).magic == handles.DEAD
    assert CL.clReleaseCommandQueue(q) == 0
    assert (handles.MAGIC, handles.DEAD) == (0x4C505950, 0x44414544)
    assert (handles.PLATFORM, handles.QUEUE, handles.KERNEL, handles.EVENT, handles.SAMPLER) == (1, 4, 7, 8, 9)
    assert _native.DEFER == 0x50594446


def test_many_native_events_keep_the_handle_table_small(env):
    """Native events made and released by the thousand: the native handle table is rebuilt
    without its deleted slots instead of growing."""
    from pyplat.api import _native
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    buf = make_buffer(ctx, 4 * 16)
    set_arg(k, 0, buf)
    for _ in range(20000):
        code, ev = launch(q, k, 16)
        assert code == 0
        assert CL.clReleaseEvent(ev) == 0
    assert CL.clFinish(q) == 0
    assert (read(q, buf, 4 * 16, np.int32) == 20000).all()
    capacity, live = _native.table_stats()
    assert capacity <= 4096 and live < 1000
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_plans_hold_their_objects_only_while_launches_are_pending(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    kernel = handles.adopted(k)                # (a core Kernel: its plans are Python's)
    buf = make_buffer(ctx, 4 * 16)
    set_arg(k, 0, buf)
    e = err()
    user = CL.clCreateUserEvent(ctx, addr(e))
    assert launch(q, k, 16, waits=[user], want_event=False)[0] == 0
    plan = kernel._plan
    assert launch(q, k, 16, waits=[user], want_event=False)[0] == 0
    assert plan.holding and plan.pending == 2
    mem = handles.peek(buf)
    refs = mem.reference_count
    assert CL.clSetUserEventStatus(user, cl.CL_COMPLETE) == 0
    assert CL.clFinish(q) == 0                 # clean-up due is done when clFinish returns
    assert plan.pending == 0 and not plan.holding
    assert mem.reference_count == refs - 1
    CL.clReleaseEvent(user)
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


THREADS_PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
static const char *SRC = "__kernel void inc(__global int *o) { o[0] += 1; }";
#define T 4
#define N 3000
static cl_context ctx; static cl_device_id dev; static cl_program prog; static cl_command_queue shared;
static cl_mem shared_buf, own_buf[T]; static int failures;
static void *host(void *arg) {
    long t = (long)arg; cl_int e;
    /* one kernel per thread (clSetKernelArg is not thread-safe on one kernel) */
    cl_kernel ks = clCreateKernel(prog, "inc", &e), ko = clCreateKernel(prog, "inc", &e);
    cl_command_queue own = clCreateCommandQueue(ctx, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &e);
    clSetKernelArg(ks, 0, sizeof(cl_mem), &shared_buf);
    clSetKernelArg(ko, 0, sizeof(cl_mem), &own_buf[t]);
    size_t one = 1; cl_event prev = NULL, ev, sev;
    for (int i = 0; i < N; i++) {
        /* the shared in-order queue: every launch writes one buffer, so they run one by one */
        if (clEnqueueNDRangeKernel(shared, ks, 1, NULL, &one, &one, 0, NULL, &sev)) __sync_fetch_and_add(&failures, 1);
        /* an out-of-order chain through wait lists, also waiting for the shared launch */
        cl_event waits[2] = {sev, prev};
        if (clEnqueueNDRangeKernel(own, ko, 1, NULL, &one, &one, prev ? 2 : 1, waits, &ev)) __sync_fetch_and_add(&failures, 1);
        if (clReleaseEvent(sev)) __sync_fetch_and_add(&failures, 1);
        if (prev && clReleaseEvent(prev)) __sync_fetch_and_add(&failures, 1);
        prev = ev;
    }
    if (clWaitForEvents(1, &prev) || clReleaseEvent(prev) || clFinish(own)) __sync_fetch_and_add(&failures, 1);
    clReleaseKernel(ks); clReleaseKernel(ko); clReleaseCommandQueue(own);
    return NULL;
}
int main(void) {
    cl_platform_id ps[16]; cl_uint np = 0, i; cl_platform_id p = 0; char name[256]; cl_int e;
    clGetPlatformIDs(16, ps, &np);
    for (i = 0; i < np; i++) {
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, "PyPlat")) p = ps[i];
    }
    if (!p) { printf("FAIL no PyPlat\n"); return 1; }
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e);
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL)) { printf("FAIL build\n"); return 1; }
    shared = clCreateCommandQueue(ctx, dev, 0, &e);
    int zero = 0, out;
    shared_buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, &zero, &e);
    for (int t = 0; t < T; t++) own_buf[t] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, &zero, &e);
    pthread_t th[T];
    for (long t = 0; t < T; t++) pthread_create(&th[t], NULL, host, (void *)t);
    for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
    clFinish(shared);
    clEnqueueReadBuffer(shared, shared_buf, CL_TRUE, 0, 4, &out, 0, NULL, NULL);
    printf("%d %d", failures, out);
    for (int t = 0; t < T; t++) {
        clEnqueueReadBuffer(shared, own_buf[t], CL_TRUE, 0, 4, &out, 0, NULL, NULL);
        printf(" %d", out);
    }
    printf("\n");
    return 0;
}
"""


def test_native_launches_from_several_c_threads(run_with_pyplat, tmp_path):
    """Host threads of a C program enqueueing at once through the loader, without the GIL: a
    shared in-order queue keeps its order (no increment lost), wait lists across queues hold."""
    exe = build_c_program(tmp_path, "threads", THREADS_PROGRAM)
    for env in ({"PYPLAT_WORKERS": "1"}, {"PYPLAT_WORKERS": "4"},
                # a short idle window, a bad one (a warning, the default), the pool's statistics
                {"PYPLAT_WORKERS": "4", "PYPLAT_IDLE_US": "30", "PYPLAT_POOL_STATS": "1"},
                {"PYPLAT_WORKERS": "2", "PYPLAT_IDLE_US": "soon"}):
        r = run_with_pyplat([exe], env=dict(env, PYPLAT_DRIVER="pool"))     # the pool's knobs
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.split() == ["0", str(4 * 3000)] + [str(3000)] * 4, r.stdout + r.stderr
        if env.get("PYPLAT_POOL_STATS"):
            stats = [line for line in r.stderr.splitlines() if line.startswith("pyplat pool:")]
            assert len(stats) == 1, r.stderr
            per_worker = [tuple(map(int, w.split("/"))) for w in stats[0].split(":")[-1].split()]
            assert len(per_worker) == 4 and sum(run for run, _ in per_worker) >= 8 * 3000, stats
        if env.get("PYPLAT_IDLE_US") == "soon":
            assert "PYPLAT_IDLE_US='soon' is not a number" in r.stderr, r.stderr


def test_other_offsets_are_answered_natively_and_checked(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    buf = make_buffer(ctx, 4 * 64)
    set_arg(k, 0, buf)
    g = (ctypes.c_size_t * 1)(4)
    for j in range(16):
        off = (ctypes.c_size_t * 1)(4 * j)
        ev = ctypes.c_size_t()
        assert CL.clEnqueueNDRangeKernel(q, k, 1, addr(off), addr(g), 0, 0, 0, addr(ev)) == 0
        if j:                                # the first one validated the sizes in Python
            assert handles.peek(ev.value) is None
        CL.clReleaseEvent(ev.value)
    huge = (ctypes.c_size_t * 1)(2 ** 64 - 2)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, addr(huge), addr(g), 0, 0, 0, 0) == cl.CL_INVALID_GLOBAL_OFFSET
    assert CL.clFinish(q) == 0
    assert (read(q, buf, 4 * 64, np.int32) == 1).all()
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_a_released_buffer_argument_is_refused_not_launched(env):
    """The spec leaves launching a kernel whose memory argument was released undefined: PyPlat
    refuses it (CL_INVALID_KERNEL_ARGS) on the Python and the native path, instead of running the
    kernel on freed memory."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    buf = make_buffer(ctx, 4 * 16)
    set_arg(k, 0, buf)
    assert CL.clReleaseMemObject(buf) == 0
    assert launch(q, k, 16, want_event=False)[0] == cl.CL_INVALID_KERNEL_ARGS
    buf = make_buffer(ctx, 4 * 16)
    set_arg(k, 0, buf)
    for _ in range(3):                          # the plan is built, then answered natively
        assert launch(q, k, 16, want_event=False)[0] == 0
    assert CL.clFinish(q) == 0
    assert CL.clReleaseMemObject(buf) == 0
    for _ in range(200):                        # the reaper drops the plan's hold
        if not handles.peek(k)._plan.holding:
            break
        time.sleep(0.01)
    assert launch(q, k, 16, want_event=False)[0] == cl.CL_INVALID_KERNEL_ARGS
    assert launch(q, k, 16, want_event=False)[0] == cl.CL_INVALID_KERNEL_ARGS
    CL.clReleaseKernel(k)
    CL.clReleaseCommandQueue(q)


def test_wait_for_native_events(env):
    """clWaitForEvents answers natively for published events (no adoption), with the spec's
    result for a failed event and Python's errors for bad lists."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    buf = make_buffer(ctx, 4 * 16)
    set_arg(k, 0, buf)
    launch(q, k, 16)
    evs = [launch(q, k, 16)[1] for _ in range(3)]
    wl = (ctypes.c_size_t * 3)(*evs)
    assert CL.clWaitForEvents(3, addr(wl)) == 0
    assert all(handles.peek(ev) is None for ev in evs)      # answered without adopting them
    assert CL.clWaitForEvents(0, addr(wl)) == cl.CL_INVALID_VALUE
    bad = (ctypes.c_size_t * 2)(evs[0], k)
    assert CL.clWaitForEvents(2, addr(bad)) == cl.CL_INVALID_EVENT
    assert (read(q, buf, 4 * 16, np.int32) == 4).all()
    q2 = make_queue(ctx, dev, cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    e = err()
    user = CL.clCreateUserEvent(ctx, addr(e))
    launch(q2, k, 16, waits=[user])
    code, gated = launch(q2, k, 16, waits=[user])
    assert code == 0
    assert CL.clSetUserEventStatus(user, -5) == 0
    one = (ctypes.c_size_t * 1)(gated)
    assert CL.clWaitForEvents(1, addr(one)) == cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    for ev in evs + [gated, user]:
        assert CL.clReleaseEvent(ev) == 0
    assert CL.clFinish(q) == 0
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)
    CL.clReleaseCommandQueue(q2)


def test_event_status_is_answered_natively(env):
    """clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS), the query programs poll, is answered
    by the native entry (no GIL, no adoption) for native and Python-made events and user events,
    with Python's answer; other queries and errors stay Python's."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"inc")
    buf = make_buffer(ctx, 4 * 16)
    set_arg(k, 0, buf)
    launch(q, k, 16)
    native_ev = launch(q, k, 16)[1]
    e = err()
    user = CL.clCreateUserEvent(ctx, addr(e))
    fill_ev = ctypes.c_size_t()
    pattern = ctypes.c_int(0)
    assert CL.clEnqueueFillBuffer(q, buf, addr(pattern), 4, 0, 64, 1, addr(ctypes.c_size_t(user)),
                                  addr(fill_ev)) == 0
    status_fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64,
                                 ctypes.c_size_t, ctypes.c_size_t)(
        _native.fast_path_entries()["clGetEventInfo"])

    def status(ev, through=CL.clGetEventInfo):
        v, n = ctypes.c_int32(99), ctypes.c_size_t(0)
        assert through(ev, cl.CL_EVENT_COMMAND_EXECUTION_STATUS, 4, addr(v), addr(n)) == 0
        assert n.value == 4
        return v.value
    assert status(user, status_fn) == cl.CL_SUBMITTED              # the native entry answers
    assert status(fill_ev.value, status_fn) in (cl.CL_QUEUED, cl.CL_SUBMITTED)
    assert CL.clSetUserEventStatus(user, cl.CL_COMPLETE) == 0
    assert CL.clFinish(q) == 0
    for ev in (native_ev, fill_ev.value, user):
        assert status(ev, status_fn) == cl.CL_COMPLETE == status(ev)
    assert handles.peek(native_ev) is None                          # not adopted
    size_only = ctypes.c_size_t(0)
    assert status_fn(user, cl.CL_EVENT_COMMAND_EXECUTION_STATUS, 0, 0, addr(size_only)) == 0
    assert size_only.value == 4
    short = ctypes.c_int16()
    assert status_fn(user, cl.CL_EVENT_COMMAND_EXECUTION_STATUS, 2, addr(short), 0) == _native.DEFER
    assert CL.clGetEventInfo(user, cl.CL_EVENT_COMMAND_EXECUTION_STATUS, 2, addr(short), 0) == cl.CL_INVALID_VALUE
    for fn in (status_fn, python_entry("clGetEventInfo")):         # no event: refused by either
        assert fn(k, cl.CL_EVENT_COMMAND_EXECUTION_STATUS, 4, addr(ctypes.c_int32()), 0) == cl.CL_INVALID_EVENT
    for ev in (native_ev, fill_ev.value, user):
        assert CL.clReleaseEvent(ev) == 0
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)


def test_by_value_arguments_are_set_natively(env):
    """clSetKernelArg of a by-value argument of a kernel with a plan never leaves C: to the value
    it has (pyopencl sets every argument before each launch) it keeps the plan; to another
    value it gives the kernel a plan derived from it, which the Python side takes over when it
    looks (and launches, clones and later changes then see the new value). Memory objects are
    set natively too (the same object keeps the plan, another drops it: native_kernel_args.pxi);
    anything wrong gets Python's code."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = create_kernel(prog, b"add")
    kernel = handles.lookup(k, Kernel, cl.CL_INVALID_KERNEL)
    n = 64
    a = np.arange(n, dtype=np.int32)
    ba = make_buffer(ctx, a.nbytes, cl.CL_MEM_READ_ONLY | cl.CL_MEM_COPY_HOST_PTR, a)
    out, other = make_buffer(ctx, a.nbytes), make_buffer(ctx, a.nbytes)
    set_arg(k, 0, ba)
    set_arg(k, 1, out)
    set_arg(k, 2, ctypes.c_int(5))
    assert launch(q, k, n)[0] == 0
    plan = kernel._plan
    assert plan is not None
    python_calls = []                     # what reaches Kernel.set_arg (the Python entry)
    kernel.set_arg = lambda i, v, f=kernel.set_arg: python_calls.append(i) or f(i, v)
    for _ in range(3):                    # the same values: the same plan
        set_arg(k, 0, ba)
        set_arg(k, 2, ctypes.c_int(5))
        assert launch(q, k, n)[0] == 0
        assert kernel._plan is plan
    assert python_calls == []             # neither argument left C
    assert read(q, out, a.nbytes, np.int32).tolist() == (a + 5).tolist()
    # other values, natively: each launch sees its own
    for v in (7, 8, 9):
        set_arg(k, 0, ba)
        set_arg(k, 2, ctypes.c_int(v))
        assert launch(q, k, n)[0] == 0
        assert read(q, out, a.nbytes, np.int32).tolist() == (a + v).tolist()
    assert python_calls == []
    # another buffer drops the plan natively; the launch builds one (Python) from what C set
    outs = [make_buffer(ctx, a.nbytes) for _ in range(2)]
    for v, o in zip((7, 8), outs):
        set_arg(k, 1, o)
        set_arg(k, 2, ctypes.c_int(v))
        assert launch(q, k, n)[0] == 0
    assert python_calls == []
    for v, o in zip((7, 8), outs):
        assert read(q, o, a.nbytes, np.int32).tolist() == (a + v).tolist()
    set_arg(k, 2, ctypes.c_int(11))       # natively; Python has not looked yet
    del kernel.set_arg
    assert kernel.current_plan() is not plan and kernel.args[2] == ("value", (11).to_bytes(4, "little"))
    clone_err = err()                     # alive until the entry has written it
    twin = ctypes.c_size_t(CL.clCloneKernel(k, addr(clone_err)))
    assert twin.value
    set_arg(k, 1, other)                  # a memory object after a native value change
    assert launch(q, k, n)[0] == 0
    assert read(q, other, a.nbytes, np.int32).tolist() == (a + 11).tolist()
    assert launch(q, twin.value, n)[0] == 0   # the clone has the value too
    assert read(q, outs[-1], a.nbytes, np.int32).tolist() == (a + 11).tolist()
    # wrong sizes, values, indices: the Python entry's codes
    assert CL.clSetKernelArg(k, 2, 8, addr(ctypes.c_int64(7))) == cl.CL_INVALID_ARG_SIZE
    assert CL.clSetKernelArg(k, 2, 4, 0) == cl.CL_INVALID_ARG_VALUE
    assert CL.clSetKernelArg(k, 9, 4, addr(ctypes.c_int(7))) == cl.CL_INVALID_ARG_INDEX
    CL.clReleaseKernel(twin.value)
    CL.clReleaseKernel(k)
    for b in [ba, out, other] + outs:
        CL.clReleaseMemObject(b)
    CL.clReleaseCommandQueue(q)


SCALARS_PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
static const char *SRC = "__kernel void add(__global int *o, int v) { o[get_global_id(0)] += v; }";
#define T 4
#define N 2000
static cl_context ctx; static cl_device_id dev; static cl_program prog;
static cl_mem bufs[T]; static long expected[T]; static int failures;
static void *host(void *arg) {
    long t = (long)arg; cl_int e;
    cl_kernel k = clCreateKernel(prog, "add", &e);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    size_t n = 16;
    int v = 0;
    clSetKernelArg(k, 0, sizeof(cl_mem), &bufs[t]);
    for (int i = 0; i < N; i++) {
        v = (int)((i * 7 + t) % 11);      /* a new scalar before most launches */
        expected[t] += v;
        if (clSetKernelArg(k, 1, sizeof v, &v) || clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL))
            __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
        if (i % 500 == 499) {             /* a clone takes the current value along */
            cl_kernel twin = clCloneKernel(k, &e);
            int zero = 0;
            if (e || clEnqueueNDRangeKernel(q, twin, 1, NULL, &n, NULL, 0, NULL, NULL))
                __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
            expected[t] += v;
            clSetKernelArg(twin, 1, sizeof zero, &zero);   /* the twin's change is its own */
            clReleaseKernel(twin);
        }
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
    for (int t = 0; t < T; t++) {
        bufs[t] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 16 * sizeof(int), NULL, &e);
        clEnqueueFillBuffer(q, bufs[t], &zero, sizeof zero, 0, 16 * sizeof(int), 0, NULL, NULL);
    }
    clFinish(q);
    for (long t = 0; t < T; t++) pthread_create(&th[t], NULL, host, (void *)t);
    for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
    int wrong = 0;
    for (int t = 0; t < T; t++) {
        int out[16];
        clEnqueueReadBuffer(q, bufs[t], CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
        for (int i = 0; i < 16; i++) wrong += out[i] != expected[t];
    }
    printf("%d %d\n", failures, wrong);
    return 0;
}
"""


def test_scalar_arguments_set_natively_from_several_c_threads(run_with_pyplat, tmp_path):
    """Host threads of a C program each set a scalar argument of their own kernel before every
    launch (natively: derived plans) and clone it now and then: every launch sees its value."""
    exe = build_c_program(tmp_path, "scalars", SCALARS_PROGRAM)
    for workers in ("1", "4"):
        r = run_with_pyplat([exe], env={"PYPLAT_WORKERS": workers})
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.split() == ["0", "0"], r.stdout + r.stderr
