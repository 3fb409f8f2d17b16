"""Plans derived natively for buffers their root plan does not hold (pyplat/api/native_plans.pxi):
a loop that sets new buffers before each launch stays in C after its first plan, and what a
program relies on holds there too -- each launch reads the buffers set last, a buffer released
after it was set is never used (the launch reports CL_INVALID_KERNEL_ARGS), buffers and kernels
released while launches wait live until they ran, and Python taking the arguments over later
builds a plan of its own. Also: a native release of a buffer while Python adopts it waits for the
adoption."""
import ctypes

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native, handles
from support.capi import CL, addr, err
from support.clobjects import context_and_program, create_kernel, make_buffer, make_queue, read, set_arg
from support.native import settled_context_refs

if not CL._direct.get("clSetKernelArg") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

S, U32, U64, I32 = ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32
ENTRIES = _native.fast_path_entries()
# The native entries themselves (what the shim calls before taking the GIL): DEFER when not answered.
native_setarg = ctypes.CFUNCTYPE(I32, S, U32, U64, S)(ENTRIES["clSetKernelArg"])
native_ndrange = ctypes.CFUNCTYPE(I32, S, S, U32, S, S, S, U32, S, S)(ENTRIES["clEnqueueNDRangeKernel"])
native_release_mem = ctypes.CFUNCTYPE(I32, S)(ENTRIES["clReleaseMemObject"])

SOURCE = b"""
__kernel void axpy(__global const int *x, __global int *y, int a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
__kernel void add3(__global const int *a, __global const int *b, __global const int *c,
                   __global int *out) {
    size_t i = get_global_id(0);
    out[i] = a[i] + b[i] + c[i];
}
"""
N = 64


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


def native_set(k, index, buf):
    h = S(buf)
    return native_setarg(k, index, 8, addr(h))


def native_set_value(k, index, v):
    v = I32(v)
    return native_setarg(k, index, 4, addr(v))


def native_launch(q, k, n=N, event=None):
    g = S(n)
    return native_ndrange(q, k, 1, 0, addr(g), 0, 0, 0, addr(event) if event is not None else 0)


def ints(ctx, values):
    a = np.asarray(values, dtype=np.int32)
    return make_buffer(ctx, a.nbytes, cl.CL_MEM_READ_WRITE | cl.CL_MEM_COPY_HOST_PTR, a)


def python_kernel(prog, name):
    """A kernel with a core Kernel (adopted if the native clCreateKernel made it): its first
    plan is Python's."""
    k = create_kernel(prog, name)
    assert handles.adopted(k) is not None
    return k


def first_plan(ctx, q, k, x, y, a=1):
    """The kernel's first plan (Python's: the set of its last argument) and one launch."""
    assert set_arg(k, 0, x) == 0 and set_arg(k, 2, I32(a)) == 0 and set_arg(k, 1, y) == 0
    g = S(N)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == 0


def test_new_buffers_before_each_launch_stay_native(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = python_kernel(prog, b"axpy")
    x0, y0 = ints(ctx, np.arange(N)), ints(ctx, np.zeros(N))
    first_plan(ctx, q, k, x0, y0)
    kernel = handles.peek(k)
    plans = []
    results = []
    for it in range(12):
        x, y = ints(ctx, np.arange(N) * (it + 1)), ints(ctx, np.full(N, it))
        assert native_set(k, 0, x) == 0                 # neither is held by the first plan
        assert native_set(k, 1, y) == 0
        assert native_set_value(k, 2, it + 2) == 0
        assert native_launch(q, k) == 0                  # answered in C: no Python plan built
        plans.append(kernel._plan)
        results.append((y, (it + 2) * np.arange(N) * (it + 1) + it))
        assert CL.clReleaseMemObject(x) == 0             # while the launch may be pending
    assert all(p is plans[0] for p in plans)             # (Python has not looked at them)
    for y, want in results:
        assert read(q, y, 4 * N, np.int32).tolist() == want.tolist()
        assert CL.clReleaseMemObject(y) == 0
    assert read(q, y0, 4 * N, np.int32).tolist() == np.arange(N).tolist()
    for obj in (k, x0, y0):
        assert (CL.clReleaseKernel if obj == k else CL.clReleaseMemObject)(obj) == 0
    assert CL.clFinish(q) == 0 and CL.clReleaseCommandQueue(q) == 0


def test_every_buffer_argument_new_at_once(env):
    """Up to four buffers a plan's root does not hold are kept for a launch natively."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = python_kernel(prog, b"add3")
    bufs = [ints(ctx, np.full(N, v)) for v in (1, 2, 3, 0)]
    for j, b in enumerate(bufs):
        assert set_arg(k, j, b) == 0
    g = S(N)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == 0   # (the sizes: Python's)
    fresh = [ints(ctx, np.full(N, v)) for v in (10, 20, 30, 0)]
    for j, b in enumerate(fresh):
        assert native_set(k, j, b) == 0
    assert native_launch(q, k) == 0
    assert read(q, fresh[3], 4 * N, np.int32).tolist() == [60] * N
    assert read(q, bufs[3], 4 * N, np.int32).tolist() == [6] * N
    for b in bufs + fresh:
        assert CL.clReleaseMemObject(b) == 0
    assert CL.clReleaseKernel(k) == 0 and CL.clReleaseCommandQueue(q) == 0


def test_a_buffer_released_after_it_was_set_is_never_used(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = python_kernel(prog, b"axpy")
    x0, y0 = ints(ctx, np.arange(N)), ints(ctx, np.zeros(N))
    first_plan(ctx, q, k, x0, y0)
    y = ints(ctx, np.zeros(N))
    assert native_set(k, 1, y) == 0
    assert CL.clReleaseMemObject(y) == 0                 # freed natively: no launch uses it
    assert native_launch(q, k) == _native.DEFER
    g = S(N)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == cl.CL_INVALID_KERNEL_ARGS
    assert set_arg(k, 1, y0) == 0                        # a live one again: launches run
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == 0
    assert read(q, y0, 4 * N, np.int32).tolist() == (2 * np.arange(N)).tolist()
    for obj in (x0, y0):
        assert CL.clReleaseMemObject(obj) == 0
    assert CL.clReleaseKernel(k) == 0 and CL.clReleaseCommandQueue(q) == 0


@pytest.mark.parametrize("made", ["python", "natively"])
def test_kernels_buffers_and_program_released_while_launches_wait(env, made):
    ctx, dev, _ = env
    from support.clobjects import create_program
    prog = create_program(ctx, SOURCE)
    assert CL.clBuildProgram(prog, 0, 0, b"", 0, 0) == 0
    q = make_queue(ctx, dev)
    e = err()
    gate = CL.clCreateUserEvent(ctx, addr(e))
    assert e.value == 0
    outs = []
    for it in range(6):
        k = (python_kernel if made == "python" or it == 0 else create_kernel)(prog, b"axpy")
        x0, y0 = ints(ctx, np.zeros(N)), ints(ctx, np.zeros(N))
        first_plan(ctx, q, k, x0, y0)
        x, y = ints(ctx, np.arange(N) + it), ints(ctx, np.full(N, 100))
        assert native_set(k, 0, x) == 0 and native_set(k, 1, y) == 0 and native_set_value(k, 2, 3) == 0
        marker = S()
        assert CL.clEnqueueMarkerWithWaitList(q, 1, addr(S(gate)), addr(marker)) == 0
        assert native_launch(q, k) == 0                  # in order: after the gated marker
        if made == "natively" and it:
            assert handles.peek(k) is None               # its first plan built natively too
        assert CL.clReleaseEvent(marker.value) == 0
        if it == 5:
            assert CL.clReleaseProgram(prog) == 0        # the program before its last kernel
        for obj in (x, x0, y0):
            assert CL.clReleaseMemObject(obj) == 0
        assert CL.clReleaseKernel(k) == 0
        outs.append((y, 3 * (np.arange(N) + it) + 100))
    assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == 0
    for y, want in outs:
        assert read(q, y, 4 * N, np.int32).tolist() == want.tolist()
        assert CL.clReleaseMemObject(y) == 0
    assert CL.clReleaseEvent(gate) == 0
    assert CL.clFinish(q) == 0 and CL.clReleaseCommandQueue(q) == 0


def test_temporaries_released_before_the_next_arguments_are_set_stay_native(env):
    """pyopencl's reductions: each call makes new buffers, sets the arguments one by one and
    releases the last call's buffers first. Setting the first new buffer while another argument
    still names a released one stays native (the launch would find the released one and defer,
    but the program sets that argument before it launches); a launch that still names a
    released buffer is refused with CL_INVALID_KERNEL_ARGS."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = python_kernel(prog, b"axpy")
    x0, y0 = ints(ctx, np.arange(N)), ints(ctx, np.zeros(N))
    first_plan(ctx, q, k, x0, y0)
    kernel = handles.peek(k)
    plan = kernel._plan
    x = y = None
    for it in range(6):
        if x is not None:
            assert CL.clReleaseMemObject(x) == 0            # the last call's temporaries first
            assert CL.clReleaseMemObject(y) == 0
        x, y = ints(ctx, np.arange(N) + it), ints(ctx, np.full(N, it))
        assert native_set(k, 0, x) == 0                     # argument 1 still names a released y
        assert native_set(k, 1, y) == 0
        assert native_launch(q, k) == 0
        assert read(q, y, 4 * N, np.int32).tolist() == (np.arange(N) + 2 * it).tolist()
    assert kernel._plan is plan                             # (Python never built another)
    assert CL.clReleaseMemObject(y) == 0
    x2 = ints(ctx, np.arange(N))
    assert native_set(k, 0, x2) == 0                        # argument 1: released, not set again
    assert native_launch(q, k) == _native.DEFER
    g = S(N)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == cl.CL_INVALID_KERNEL_ARGS
    for obj in (x, x2, x0, y0):
        assert CL.clReleaseMemObject(obj) == 0
    assert CL.clReleaseKernel(k) == 0 and CL.clReleaseCommandQueue(q) == 0


def test_python_taking_the_arguments_builds_its_own_plan(env):
    """After a native swap to a buffer its plan did not hold, the Python side's view (a launch
    with new sizes, which crosses into Python) has the new buffer and a plan that holds it."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = python_kernel(prog, b"axpy")
    x0, y0 = ints(ctx, np.arange(N)), ints(ctx, np.zeros(N))
    first_plan(ctx, q, k, x0, y0)
    y = ints(ctx, np.ones(N))
    assert native_set(k, 1, y) == 0
    kernel = handles.peek(k)
    plan = kernel.current_plan()                         # Python looks: takes the arguments
    assert plan is None and kernel.args[1][1] is handles.peek(y)
    g = S(N // 2)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == 0
    assert read(q, y, 4 * N, np.int32).tolist() == [1 + i if i < N // 2 else 1 for i in range(N)]
    assert y0 != y and read(q, y0, 4 * N, np.int32).tolist() == np.arange(N).tolist()
    for obj in (x0, y0, y):
        assert CL.clReleaseMemObject(obj) == 0
    assert CL.clReleaseKernel(k) == 0 and CL.clReleaseCommandQueue(q) == 0


def test_a_native_release_while_python_adopts_a_buffer_waits_for_the_adoption(env, monkeypatch):
    """The last native clReleaseMemObject during adoption defers (Python's release then waits
    for the adoption), so the buffer and its context's count are never let go twice."""
    from pyplat.api import memory as memory_api
    ctx, _, _ = env
    ctx_refs = U32()

    def context_refs():
        assert CL.clGetContextInfo(ctx, cl.CL_CONTEXT_REFERENCE_COUNT, 4, addr(ctx_refs), 0) == 0
        return ctx_refs.value

    before = settled_context_refs(ctx)     # (earlier tests' holds let go meanwhile, by the reaper)
    b = ints(ctx, np.arange(N))
    assert handles.peek(b) is None and context_refs() == before + 1
    seen = []
    make = memory_api.adopt_native_buffer

    def adopt_and_race(*args, **kwargs):
        seen.append(native_release_mem(b))
        return make(*args, **kwargs)

    monkeypatch.setattr(memory_api, "adopt_native_buffer", adopt_and_race)
    flags = U64()
    assert CL.clGetMemObjectInfo(b, cl.CL_MEM_HOST_PTR, 8, addr(flags), 0) == 0    # adopts
    assert seen == [_native.DEFER]
    assert handles.peek(b) is not None
    assert CL.clReleaseMemObject(b) == 0
    assert CL.clReleaseMemObject(b) == cl.CL_INVALID_MEM_OBJECT
    assert context_refs() == before


def test_swapping_between_held_and_new_buffers(env):
    """Ping-pong between a buffer the first plan holds and one it does not, values changed too:
    every launch reads and writes the buffers set last, in the queue's order."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k = python_kernel(prog, b"axpy")
    x0, y0 = ints(ctx, np.ones(N)), ints(ctx, np.zeros(N))
    first_plan(ctx, q, k, x0, y0)                        # y0: 1
    y1 = ints(ctx, np.zeros(N))
    want = {y0: 1, y1: 0}
    for it in range(10):
        y = y1 if it % 2 == 0 else y0
        assert native_set(k, 1, y) == 0 and native_set_value(k, 2, it) == 0
        assert native_launch(q, k) == 0
        want[y] += it
    for y in (y0, y1):
        assert read(q, y, 4 * N, np.int32).tolist() == [want[y]] * N
    for obj in (x0, y0, y1):
        assert CL.clReleaseMemObject(obj) == 0
    assert CL.clReleaseKernel(k) == 0 and CL.clReleaseCommandQueue(q) == 0


def test_create_set_launch_release_stays_native_after_the_first_kernel(env):
    """Kernels made natively get their first plan natively: a C loop of clCreateKernel,
    clSetKernelArg, clEnqueueNDRangeKernel and clReleaseKernel with new buffers each time never
    makes a core Kernel, gives the right results, and its released kernels' plans give the
    program's counts back once their launches finished."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    before = _native.api_references(prog)              # the application's and native kernels'
    k0 = python_kernel(prog, b"axpy")                    # learns the name's plan template
    x0, y0 = ints(ctx, np.zeros(N)), ints(ctx, np.zeros(N))
    first_plan(ctx, q, k0, x0, y0)
    assert CL.clReleaseKernel(k0) == 0
    results = []
    for it in range(20):
        x, y = ints(ctx, np.arange(N) + it), ints(ctx, np.full(N, it))
        k = create_kernel(prog, b"axpy")
        assert handles.peek(k) is None
        assert native_set(k, 0, x) == 0 and native_set_value(k, 2, 2) == 0
        assert native_set(k, 1, y) == 0                  # the last one: the plan, natively
        assert native_launch(q, k) == 0
        assert handles.peek(k) is None                   # never a core Kernel
        assert CL.clReleaseKernel(k) == 0                # (its launch may be pending)
        assert CL.clReleaseMemObject(x) == 0
        results.append((y, 2 * (np.arange(N) + it) + it))
    for y, want in results:
        assert read(q, y, 4 * N, np.int32).tolist() == want.tolist()
        assert CL.clReleaseMemObject(y) == 0
    assert CL.clFinish(q) == 0
    assert _native.api_references(prog) == before and _native.native_kernels_of(prog) == 0
    for obj in (x0, y0):
        assert CL.clReleaseMemObject(obj) == 0
    assert CL.clReleaseCommandQueue(q) == 0


def test_a_native_first_plan_handed_to_python_on_adoption(env):
    """Adopted with launches pending (gated), a kernel whose first plan was built natively keeps
    its results, its arguments and its program, and the core Kernel gets a first plan of its
    own at once (armed, as Kernel.prepare_plan builds it)."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k0 = python_kernel(prog, b"axpy")
    x0, y0 = ints(ctx, np.zeros(N)), ints(ctx, np.zeros(N))
    first_plan(ctx, q, k0, x0, y0)
    e = err()
    gate = CL.clCreateUserEvent(ctx, addr(e))
    marker = S()
    assert CL.clEnqueueMarkerWithWaitList(q, 1, addr(S(gate)), addr(marker)) == 0
    x, y = ints(ctx, np.arange(N)), ints(ctx, np.ones(N))
    k = create_kernel(prog, b"axpy")
    assert native_set(k, 0, x) == 0 and native_set_value(k, 2, 5) == 0 and native_set(k, 1, y) == 0
    assert native_launch(q, k) == 0 and handles.peek(k) is None
    kernel = handles.adopted(k)                          # Python takes it over meanwhile
    plan = kernel.current_plan()                         # its own, built at once and armed
    assert plan is not None and plan.armed and plan.root is None
    assert kernel.args[2] == ("value", (5).to_bytes(4, "little")) and kernel.args[1][1] is handles.peek(y)
    assert CL.clSetUserEventStatus(gate, cl.CL_COMPLETE) == 0
    g = S(N)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == 0     # on the Kernel's plan
    assert read(q, y, 4 * N, np.int32).tolist() == (10 * np.arange(N) + 1).tolist()
    assert CL.clReleaseKernel(k) == 0 and CL.clReleaseKernel(k0) == 0
    for obj in (x0, y0, x, y):
        assert CL.clReleaseMemObject(obj) == 0
    assert CL.clReleaseEvent(gate) == 0 and CL.clReleaseEvent(marker.value) == 0
    assert CL.clFinish(q) == 0 and CL.clReleaseCommandQueue(q) == 0


def test_a_buffer_released_before_a_native_first_plan_launches(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k0 = python_kernel(prog, b"axpy")
    x0, y0 = ints(ctx, np.zeros(N)), ints(ctx, np.zeros(N))
    first_plan(ctx, q, k0, x0, y0)
    k = create_kernel(prog, b"axpy")
    x, y = ints(ctx, np.zeros(N)), ints(ctx, np.zeros(N))   # (made natively, never adopted)
    assert native_set(k, 0, x) == 0 and native_set_value(k, 2, 1) == 0 and native_set(k, 1, y) == 0
    assert CL.clReleaseMemObject(y) == 0
    assert native_launch(q, k) == _native.DEFER
    g = S(N)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == cl.CL_INVALID_KERNEL_ARGS
    for obj in (k, k0):
        assert CL.clReleaseKernel(obj) == 0
    for obj in (x0, y0, x):
        assert CL.clReleaseMemObject(obj) == 0
    assert CL.clFinish(q) == 0 and CL.clReleaseCommandQueue(q) == 0


def test_a_new_kernel_on_buffers_python_held_launches_natively(env):
    """Buffers a Python plan held before (their holds no longer pinned) given to a kernel made
    natively: no native first plan (its launches would each cross into Python to take those
    holds again); the set is left to Python, which arms the kernel's plan, and every launch
    after the first is answered natively, with the right results."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k0 = python_kernel(prog, b"axpy")
    x, y = ints(ctx, np.arange(N)), ints(ctx, np.zeros(N))
    first_plan(ctx, q, k0, x, y)                       # y = x
    assert CL.clFinish(q) == 0
    k = create_kernel(prog, b"axpy")
    assert handles.peek(k) is None                     # made natively
    first_plan(ctx, q, k, x, y, a=2)                   # y += 2 x (the first launch may cross)
    assert CL.clFinish(q) == 0
    answered = []
    for _ in range(5):                                 # y += 2 x, five times, each waited for
        answered.append(native_launch(q, k))           # (an idle hold lets go: the next launch
        assert CL.clFinish(q) == 0                     # could not use it)
    assert answered == [0] * 5
    np.testing.assert_array_equal(read(q, y, 4 * N, np.int32), 13 * np.arange(N))
    for obj in (k, k0):
        assert CL.clReleaseKernel(obj) == 0
    for obj in (x, y):
        assert CL.clReleaseMemObject(obj) == 0
    assert CL.clFinish(q) == 0 and CL.clReleaseCommandQueue(q) == 0


def test_new_kernels_on_adopted_buffers_launch_natively_from_the_first(env):
    """A kernel object per launch on buffers Python adopted (a Python plan held them): each new
    object's sets and its first launch are answered natively, since the buffers' holds stay
    while the application holds them (a loop that creates, sets, launches and releases a kernel
    object each time)."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k0 = python_kernel(prog, b"axpy")
    x, y = ints(ctx, np.arange(N)), ints(ctx, np.zeros(N))
    first_plan(ctx, q, k0, x, y)                       # y = x; both adopted, held by its plan
    assert CL.clFinish(q) == 0
    answers = []
    for _ in range(6):                                 # y += 3 x, each object launched once
        k = create_kernel(prog, b"axpy")
        answers.append((native_set(k, 0, x), native_set(k, 1, y), native_set_value(k, 2, 3),
                        native_launch(q, k)))
        assert CL.clReleaseKernel(k) == 0
        assert CL.clFinish(q) == 0
    assert answers == [(0, 0, 0, 0)] * 6
    np.testing.assert_array_equal(read(q, y, 4 * N, np.int32), 19 * np.arange(N))
    assert CL.clReleaseKernel(k0) == 0
    for obj in (x, y):
        assert CL.clReleaseMemObject(obj) == 0
    assert CL.clFinish(q) == 0 and CL.clReleaseCommandQueue(q) == 0


THREADED = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
static const char *SRC = "__kernel void add(__global const int *x, __global int *y, int v) {"
                         " size_t i = get_global_id(0); y[i] += x[i] + v; }";
#define T 4
#define ROUNDS 300
#define N 32
static cl_context ctx; static cl_device_id dev; static cl_program prog;
static int failures;
static void fail(void) { __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST); }
/* Each thread: a kernel object per round, new buffers each round (x released at once), a
 * long-lived kernel whose y changes every launch, all launches pending behind a user event
 * now and then. */
static void *host(void *arg) {
    long t = (long)arg; cl_int e;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    cl_kernel keep = clCreateKernel(prog, "add", &e);
    cl_mem ys[8]; int want[8] = {0};
    int ones[N], zeros[N] = {0};
    for (int i = 0; i < N; i++) ones[i] = 1;
    for (int j = 0; j < 8; j++) ys[j] = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof zeros, zeros, &e);
    cl_mem one = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof ones, ones, &e);
    size_t n = N;
    for (int r = 0; r < ROUNDS; r++) {
        cl_event gate = (r % 50 == 0) ? clCreateUserEvent(ctx, &e) : NULL;
        if (gate) clEnqueueMarkerWithWaitList(q, 1, &gate, NULL);
        int v = (int)(r % 7 + t);
        cl_mem x = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof ones, ones, &e);
        cl_kernel k = clCreateKernel(prog, "add", &e);
        cl_mem y = ys[r % 8];
        if (clSetKernelArg(k, 0, sizeof x, &x) || clSetKernelArg(k, 2, sizeof v, &v) ||
            clSetKernelArg(k, 1, sizeof y, &y) || clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL))
            fail();
        want[r % 8] += 1 + v;
        clReleaseKernel(k);
        clReleaseMemObject(x);
        cl_mem y2 = ys[(r + 3) % 8];
        if (clSetKernelArg(keep, 0, sizeof one, &one) || clSetKernelArg(keep, 1, sizeof y2, &y2) ||
            clSetKernelArg(keep, 2, sizeof v, &v) || clEnqueueNDRangeKernel(q, keep, 1, NULL, &n, NULL, 0, NULL, NULL))
            fail();
        want[(r + 3) % 8] += 1 + v;
        if (gate) { clSetUserEventStatus(gate, CL_COMPLETE); clReleaseEvent(gate); }
    }
    int wrong = 0;
    for (int j = 0; j < 8; j++) {
        int out[N];
        if (clEnqueueReadBuffer(q, ys[j], CL_TRUE, 0, sizeof out, out, 0, NULL, NULL)) fail();
        for (int i = 0; i < N; i++) wrong += out[i] != want[j];
        clReleaseMemObject(ys[j]);
    }
    if (wrong) fail();
    clReleaseMemObject(one);
    clReleaseKernel(keep);
    clFinish(q);
    clReleaseCommandQueue(q);
    return NULL;
}
int main(void) {
    cl_platform_id plat; cl_int e; pthread_t th[T];
    clGetPlatformIDs(1, &plat, NULL);
    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e);
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL)) return 2;
    for (long t = 0; t < T; t++) pthread_create(&th[t], NULL, host, (void *)t);
    for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
    cl_uint refs = 0;
    clGetProgramInfo(prog, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    printf("%d %u\n", failures, refs);
    clReleaseProgram(prog);
    clReleaseContext(ctx);
    return 0;
}
"""


def test_c_threads_make_set_launch_and_release_kernels_and_buffers(run_with_pyplat, tmp_path):
    """Four C threads through the loader: a kernel object per launch with a new buffer released
    at once, and a long-lived kernel whose buffer changes every launch, some launches held back
    by user events: every launch reads and writes what was set for it, and once all finished
    the program's count is the application's alone."""
    from support.c_programs import build_c_program
    exe = build_c_program(tmp_path, "native_plans", THREADED)
    for workers in ("1", "4"):
        r = run_with_pyplat([exe], env={"PYPLAT_WORKERS": workers})
        assert r.returncode == 0, r.stdout + r.stderr[-2000:]
        assert r.stdout.split() == ["0", "1"], r.stdout + r.stderr[-2000:]
