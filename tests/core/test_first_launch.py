"""First launches (issue 15 part 2): a kernel object's launch plan is built when its last argument
is set (Kernel.prepare_plan), not on its first clEnqueueNDRangeKernel, and a new object of a
kernel already launched knows the validated sizes, so its first launch is the native fast
path's. Whatever the order in which arguments are set, re-set or cloned, results are those of
the arguments last set, and a launch with an argument missing still fails."""
import ctypes

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native, handles
from support.capi import CL, addr
from support.clobjects import context_and_program, create_kernel, make_buffer, make_queue, read, set_arg
from support.native import launch

SOURCE = b"""
__kernel void axpb(__global const int *x, __global int *y, int a, int b) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + b;
}
__kernel void scaled(__global int *y, __local int *tmp, int a) {
    size_t l = get_local_id(0);
    tmp[l] = a * (int)get_global_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    y[get_global_id(0)] = tmp[get_local_size(0) - 1 - l];
}
"""
N = 64

if not CL._direct.get("clEnqueueNDRangeKernel") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


def int_arg(v):
    return ctypes.c_int32(v)


def filled(ctx, q, values):
    host = np.asarray(values, dtype=np.int32)
    buf = make_buffer(ctx, host.nbytes)
    assert CL.clEnqueueWriteBuffer(q, buf, 1, 0, host.nbytes, addr(host), 0, 0, 0) == 0
    return buf


def run(q, k, out, n=N, local=None):
    code, ev = launch(q, k, n, local=local)
    assert code == 0
    native = handles.peek(ev) is None          # an event the native fast path made
    assert CL.clReleaseEvent(ev) == 0
    return read(q, out, 4 * n, np.int32), native


def test_the_plan_is_built_when_the_last_argument_is_set(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    x, y = filled(ctx, q, np.arange(N)), make_buffer(ctx, 4 * N)
    k = create_kernel(prog, b"axpb")
    kernel = handles.peek(k)
    for i, value in ((2, int_arg(3)), (0, x), (1, y)):
        assert kernel.current_plan() is None          # an argument is missing: nothing built
        assert set_arg(k, i, value) == 0
    assert set_arg(k, 3, int_arg(5)) == 0
    plan = kernel.current_plan()
    assert plan is not None                            # built by clSetKernelArg
    result, native = run(q, k, y)
    assert np.array_equal(result, 3 * np.arange(N) + 5) and native
    assert kernel.current_plan() is plan               # the launch used it, built nothing
    for obj in (k,):
        CL.clReleaseKernel(obj)
    for m in (x, y):
        CL.clReleaseMemObject(m)
    CL.clReleaseCommandQueue(q)


def test_a_new_object_of_a_launched_kernel_knows_its_sizes(env):
    """The sizes validated for one kernel object serve the first launch of the next: its
    plan is told them when it is built, so that launch needs no Python at all."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    x, y = filled(ctx, q, np.arange(N)), make_buffer(ctx, 4 * N)
    first = create_kernel(prog, b"axpb")
    for i, value in enumerate((x, y, int_arg(1), int_arg(0))):
        assert set_arg(first, i, value) == 0
    run(q, first, y)
    second = create_kernel(prog, b"axpb")
    for i, value in ((3, int_arg(-1)), (1, y), (2, int_arg(2)), (0, x)):
        assert set_arg(second, i, value) == 0
    kernel = handles.peek(second)
    if kernel is None:                                 # made natively: its first plan too
        assert _native.native_plan_state(second)[:2] == (True, True)   # (api/native_plans.pxi)
    else:
        plan = kernel.current_plan()
        assert plan.knows_geometry(handles.peek(dev), 1, addr((ctypes.c_size_t * 1)(N)), 0)
    result, native = run(q, second, y)
    assert np.array_equal(result, 2 * np.arange(N) - 1) and native
    for obj in (first, second):
        CL.clReleaseKernel(obj)
    for m in (x, y):
        CL.clReleaseMemObject(m)
    CL.clReleaseCommandQueue(q)


def test_arguments_set_again_and_clones_launch_what_was_set_last(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    x1, x2 = filled(ctx, q, np.arange(N)), filled(ctx, q, 100 + np.arange(N))
    y1, y2 = make_buffer(ctx, 4 * N), make_buffer(ctx, 4 * N)
    k = create_kernel(prog, b"axpb")
    for i, value in ((1, y1), (3, int_arg(0)), (0, x1), (2, int_arg(1))):
        assert set_arg(k, i, value) == 0
    assert set_arg(k, 2, int_arg(4)) == 0              # re-set before the first launch
    assert set_arg(k, 0, x2) == 0
    result, _ = run(q, k, y1)
    assert np.array_equal(result, 4 * (100 + np.arange(N)))
    clone = ctypes.c_int32()
    c = CL.clCloneKernel(k, addr(clone))
    assert clone.value == 0
    assert handles.peek(c).current_plan() is not None  # a clone of a complete kernel: built
    assert set_arg(c, 1, y2) == 0 and set_arg(c, 3, int_arg(7)) == 0
    result, _ = run(q, c, y2)
    assert np.array_equal(result, 4 * (100 + np.arange(N)) + 7)
    result, _ = run(q, k, y1)                          # the original keeps its own arguments
    assert np.array_equal(result, 4 * (100 + np.arange(N)))
    for obj in (k, c):
        CL.clReleaseKernel(obj)
    for m in (x1, x2, y1, y2):
        CL.clReleaseMemObject(m)
    CL.clReleaseCommandQueue(q)


def test_local_sizes_set_before_the_first_launch_are_used(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    y = make_buffer(ctx, 4 * N)
    k = create_kernel(prog, b"scaled")
    assert set_arg(k, 0, y) == 0 and set_arg(k, 2, int_arg(3)) == 0
    assert CL.clSetKernelArg(k, 1, 4 * 16, 0) == 0
    assert handles.peek(k).current_plan() is not None
    result, _ = run(q, k, y, local=16)
    groups = np.arange(N).reshape(-1, 16)
    assert np.array_equal(result, (3 * groups[:, ::-1]).ravel())
    CL.clReleaseKernel(k)
    CL.clReleaseMemObject(y)
    CL.clReleaseCommandQueue(q)


def test_a_missing_or_released_argument_still_fails_the_launch(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    x, y = filled(ctx, q, np.arange(N)), make_buffer(ctx, 4 * N)
    launched = create_kernel(prog, b"axpb")              # sizes known for the kernel
    for i, value in enumerate((x, y, int_arg(1), int_arg(0))):
        assert set_arg(launched, i, value) == 0
    run(q, launched, y)
    k = create_kernel(prog, b"axpb")
    for i, value in ((0, x), (1, y), (3, int_arg(0))):
        assert set_arg(k, i, value) == 0
    for _ in range(2):
        assert launch(q, k, N, want_event=False)[0] == cl.CL_INVALID_KERNEL_ARGS
    assert set_arg(k, 2, int_arg(2)) == 0
    result, _ = run(q, k, y)
    assert np.array_equal(result, 2 * np.arange(N))
    # a buffer released before the last argument is set: the launch says so
    gone = make_buffer(ctx, 4 * N)
    late = create_kernel(prog, b"axpb")
    assert set_arg(late, 0, x) == 0 and set_arg(late, 1, gone) == 0 and set_arg(late, 2, int_arg(1)) == 0
    assert CL.clReleaseMemObject(gone) == 0
    assert set_arg(late, 3, int_arg(0)) == 0
    assert launch(q, late, N, want_event=False)[0] == cl.CL_INVALID_KERNEL_ARGS
    CL.clReleaseKernel(late)
    for obj in (launched, k):
        CL.clReleaseKernel(obj)
    for m in (x, y):
        CL.clReleaseMemObject(m)
    CL.clReleaseCommandQueue(q)


@pytest.mark.parametrize("logged", [False, True])
def test_a_first_launch_holds_its_objects_once_each_until_it_finished(env, monkeypatch, capfd, logged):
    """While the first launch is pending, the program and each buffer count one reference more
    (an armed plan's pending launch), and clFinish gives them back; the same under
    PYPLAT_DEBUG=refcounts (debugging never changes which implementation runs)."""
    if logged:
        monkeypatch.setenv("PYPLAT_DEBUG", "refcounts")
        config.reload()
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    x, y = filled(ctx, q, np.arange(N)), make_buffer(ctx, 4 * N)
    k = create_kernel(prog, b"axpb")
    assert handles.adopted(k) is not None           # (a core Kernel: its plan is Python's)
    for i, value in enumerate((x, y, int_arg(2), int_arg(1))):
        assert set_arg(k, i, value) == 0
    assert CL.clFinish(q) == 0                         # (the write's references given back)
    objects = [handles.peek(h) for h in (x, y)] + [handles.peek(k).program]
    before = [o.reference_count for o in objects]
    capfd.readouterr()
    e = ctypes.c_int32()
    user = CL.clCreateUserEvent(ctx, addr(e))
    assert launch(q, k, N, waits=[user], want_event=False)[0] == 0
    assert [o.reference_count for o in objects] == [n + 1 for n in before]
    monkeypatch.delenv("PYPLAT_DEBUG", raising=False)
    config.reload()
    assert CL.clSetUserEventStatus(user, cl.CL_COMPLETE) == 0
    assert CL.clFinish(q) == 0
    assert [o.reference_count for o in objects] == before
    assert np.array_equal(read(q, y, 4 * N, np.int32), 2 * np.arange(N) + 1)
    CL.clReleaseEvent(user)
    CL.clReleaseKernel(k)
    for m in (x, y):
        CL.clReleaseMemObject(m)
    CL.clReleaseCommandQueue(q)


@pytest.fixture
def primes():
    """The calls the native clEnqueueNDRangeKernel makes into Python (prime_ndrange) meanwhile."""
    from pyplat.api import _entries, bridge, enqueue
    calls = []

    def counting(*args):
        calls.append(args)
        return enqueue.prime_ndrange(*args)
    _entries.use_fast_path(bridge._native_entries, counting, enqueue.prime_command)
    yield calls
    _entries.use_fast_path(bridge._native_entries, enqueue.prime_ndrange, enqueue.prime_command)


def test_sizes_validated_for_one_object_serve_the_others_natively(env, primes):
    """A kernel object whose plan holds (a launch pending) launched with sizes validated for
    another object of the kernel since: answered natively, with the right result."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    x, y, z = filled(ctx, q, np.arange(N)), make_buffer(ctx, 4 * N), make_buffer(ctx, 4 * N)
    held, other = create_kernel(prog, b"axpb"), create_kernel(prog, b"axpb")
    for k, out in ((held, y), (other, z)):
        for i, value in enumerate((x, out, int_arg(2), int_arg(1))):
            assert set_arg(k, i, value) == 0
    e = ctypes.c_int32()
    user = CL.clCreateUserEvent(ctx, addr(e))
    first, second = 8, 24                             # sizes no other test of the module uses
    assert launch(q, held, first, waits=[user], want_event=False)[0] == 0   # its plan holds now
    result, _ = run(q, other, z, n=second)            # these sizes validated, for `other`
    assert np.array_equal(result, 2 * np.arange(second) + 1)
    del primes[:]
    assert launch(q, held, second, want_event=False)[0] == 0
    assert primes == []                               # no Python: the kernel's sizes were taken
    assert CL.clSetUserEventStatus(user, cl.CL_COMPLETE) == 0
    assert np.array_equal(read(q, y, 4 * second, np.int32), 2 * np.arange(second) + 1)
    CL.clReleaseEvent(user)
    for k in (held, other):
        CL.clReleaseKernel(k)
    for m in (x, y, z):
        CL.clReleaseMemObject(m)
    CL.clReleaseCommandQueue(q)


def test_the_kernels_sizes_are_not_taken_by_an_object_whose_local_memory_does_not_fit(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    y = make_buffer(ctx, 4 * N)
    small, large = create_kernel(prog, b"scaled"), create_kernel(prog, b"scaled")
    too_much = handles.adopted(q).device.local_mem_size + 4     # (a queue made natively: adopted)
    for k, local_bytes in ((small, 4 * 16), (large, too_much)):
        assert set_arg(k, 0, y) == 0
        assert CL.clSetKernelArg(k, 1, local_bytes, 0) == 0
        assert set_arg(k, 2, int_arg(3)) == 0
    result, _ = run(q, small, y, local=16)
    assert np.array_equal(result.reshape(-1, 16), 3 * np.arange(N).reshape(-1, 16)[:, ::-1])
    assert launch(q, large, N, local=16, want_event=False)[0] == cl.CL_OUT_OF_RESOURCES
    for k in (small, large):
        CL.clReleaseKernel(k)
    CL.clReleaseMemObject(y)
    CL.clReleaseCommandQueue(q)


def test_a_first_launch_of_a_new_object_of_a_launched_kernel_needs_no_python(env, primes):
    """Its plan is armed when the last argument is set: the launch starts without the hold's
    retains, and nothing is left after clFinish."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    x, y = filled(ctx, q, np.arange(N)), make_buffer(ctx, 4 * N)
    size = 40                                          # validated last for the kernel, below
    launched = create_kernel(prog, b"axpb")
    for i, value in enumerate((x, y, int_arg(1), int_arg(0))):
        assert set_arg(launched, i, value) == 0
    run(q, launched, y, n=size)
    assert CL.clFinish(q) == 0
    k = create_kernel(prog, b"axpb")
    assert handles.adopted(k) is not None           # (a core Kernel: its plan is Python's)
    for i, value in enumerate((x, y, int_arg(4), int_arg(3))):
        assert set_arg(k, i, value) == 0
    mem = handles.peek(y)
    refs = mem.reference_count
    del primes[:]
    assert launch(q, k, size, want_event=False)[0] == 0
    assert primes == []                                # answered natively, first time
    assert np.array_equal(read(q, y, 4 * size, np.int32), 4 * np.arange(size) + 3)
    assert CL.clFinish(q) == 0
    assert mem.reference_count == refs                 # (counted while pending: the test above)
    for obj in (launched, k):
        CL.clReleaseKernel(obj)
    for m in (x, y):
        CL.clReleaseMemObject(m)
    CL.clReleaseCommandQueue(q)


def test_a_buffer_released_under_an_armed_plan(env):
    """Released with a launch pending, it lives until the launch finished; released with none,
    it goes at once and the next launch of the kernel object reports it."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    x = filled(ctx, q, np.arange(N))
    assert CL.clFinish(q) == 0
    for pending in (True, False):
        y = make_buffer(ctx, 4 * N)
        k = create_kernel(prog, b"axpb")
        assert handles.adopted(k) is not None       # (a core Kernel: its plan is Python's)
        for i, value in enumerate((x, y, int_arg(1), int_arg(1))):
            assert set_arg(k, i, value) == 0
        mem = handles.peek(y)
        e = ctypes.c_int32()
        user = CL.clCreateUserEvent(ctx, addr(e))
        if pending:
            assert launch(q, k, N, waits=[user], want_event=False)[0] == 0
        assert CL.clReleaseMemObject(y) == 0
        assert mem.reference_count == (1 if pending else 0)   # kept by the pending launch only
        assert CL.clSetUserEventStatus(user, cl.CL_COMPLETE) == 0
        assert CL.clFinish(q) == 0
        assert mem.reference_count == 0
        assert launch(q, k, N, want_event=False)[0] == cl.CL_INVALID_KERNEL_ARGS
        CL.clReleaseEvent(user)
        CL.clReleaseKernel(k)
    CL.clReleaseMemObject(x)
    CL.clReleaseCommandQueue(q)
