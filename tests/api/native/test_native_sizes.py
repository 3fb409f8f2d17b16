"""Launch sizes checked natively (pyplat/runtime/sched/launch_sizes.pxi): the first launch of a
kernel object, or a launch with sizes its kernel never had, is answered by the native
clEnqueueNDRangeKernel without Python when its sizes pass the spec's checks -- with the local
size a NULL local_work_size gets chosen exactly as the Python path chooses it -- and sizes that
fail them get the spec's error code from the native entry itself, with the rule's reason reported
as every error's is (the rules are written once, for both entries)."""
import ctypes

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native
from pyplat.runtime.graph import choose_local_size
from support.capi import CL, addr
from support.clobjects import context_and_program, create_kernel, make_buffer, make_queue, read, set_arg

if not CL._direct.get("clEnqueueNDRangeKernel") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

S, U32, I32 = ctypes.c_size_t, ctypes.c_uint32, ctypes.c_int32
ENTRIES = _native.fast_path_entries()
native_ndrange = ctypes.CFUNCTYPE(I32, S, S, U32, S, S, S, U32, S, S)(ENTRIES["clEnqueueNDRangeKernel"])

SOURCE = b"""
__kernel void shape(__global uint *out) {
    size_t i = get_global_id(0) + get_global_size(0) * get_global_id(1);
    out[i] = (uint)(get_local_size(0) | get_local_size(1) << 16);
}
__kernel __attribute__((reqd_work_group_size(8, 1, 1))) void fixed(__global uint *out) {
    out[get_global_id(0)] = (uint)get_local_size(0);
}
"""
MAX_ITEMS = 1 << 16        # more than any global size below


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


def sizes(*values):
    return (S * len(values))(*values) if values else None


def launch(q, k, global_size, local_size=None, entry=native_ndrange):
    g, l = sizes(*global_size), sizes(*local_size) if local_size else None
    return entry(q, k, len(global_size), 0, addr(g), addr(l) if l is not None else 0, 0, 0, 0)


def kernel_on(ctx, prog, name, n):
    out = make_buffer(ctx, 4 * n, cl.CL_MEM_READ_WRITE)
    k = create_kernel(prog, name)
    assert set_arg(k, 0, out) == 0
    return k, out


def local_sizes(q, out, n):
    v = read(q, out, 4 * n, np.uint32)
    return sorted({(int(x) & 0xFFFF, int(x) >> 16) for x in v})


def release(q, *objects):
    assert CL.clFinish(q) == 0
    for k, out in objects:
        assert CL.clReleaseKernel(k) == 0 and CL.clReleaseMemObject(out) == 0


@pytest.mark.parametrize("global_size, local_size", [((6000,), None), ((96, 10), None), ((64, 4), (16, 2)),
                                                    ((7,), None)])
def test_first_launch_with_new_sizes_is_answered_natively(env, global_size, local_size):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    n = int(np.prod(global_size))
    k, out = kernel_on(ctx, prog, b"shape", n)
    assert launch(q, k, global_size, local_size) == 0             # not deferred to Python
    want = local_size or choose_local_size(list(global_size) + [1] * (3 - len(global_size)), 4096,
                                           (4096, 4096, 4096))
    assert local_sizes(q, out, n) == [(want[0], want[1] if len(global_size) > 1 else 1)]
    release(q, (k, out))


def test_the_local_size_chosen_for_null_is_the_largest_divisor_within_limits():
    """choose_local_size, the one definition both paths use: the largest divisor of each global
    size within the device's limits and what the dimensions before left of the group."""
    assert choose_local_size([6000, 1, 1], 4096, (4096, 4096, 4096)) == [3000, 1, 1]
    assert choose_local_size([96, 10, 1], 4096, (4096, 4096, 4096)) == [96, 10, 1]
    assert choose_local_size([1024, 1024, 1], 4096, (4096, 4096, 4096)) == [1024, 4, 1]
    assert choose_local_size([7, 1, 1], 4096, (4096, 4096, 4096)) == [7, 1, 1]
    assert choose_local_size([4099, 1, 1], 4096, (4096, 4096, 4096)) == [1, 1, 1]     # prime
    assert choose_local_size([0, 1, 1], 4096, (4096, 4096, 4096)) == [1, 1, 1]
    assert choose_local_size([64, 64, 1], 256, (16, 64, 64)) == [16, 16, 1]


def test_reqd_work_group_size_is_used_and_enforced_natively(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k, out = kernel_on(ctx, prog, b"fixed", 64)
    assert launch(q, k, (64,)) == 0                              # NULL local: the required 8
    assert sorted(set(read(q, out, 256, np.uint32).tolist())) == [8]
    assert launch(q, k, (64,), (16,)) == cl.CL_INVALID_WORK_GROUP_SIZE   # not the required size
    assert launch(q, k, (64,), (16,), entry=CL.clEnqueueNDRangeKernel) == cl.CL_INVALID_WORK_GROUP_SIZE
    assert launch(q, k, (60,)) == cl.CL_INVALID_WORK_GROUP_SIZE   # not a multiple of 8
    assert launch(q, k, (60,), entry=CL.clEnqueueNDRangeKernel) == cl.CL_INVALID_WORK_GROUP_SIZE
    release(q, (k, out))


@pytest.mark.parametrize("global_size, local_size, code", [
    ((64,), (0,), cl.CL_INVALID_WORK_GROUP_SIZE),                 # a local size of 0
    ((60,), (16,), cl.CL_INVALID_WORK_GROUP_SIZE),                # not a divisor
    ((8192,), (8192,), cl.CL_INVALID_WORK_ITEM_SIZE),             # above max work-item size
    ((256, 128), (128, 64), cl.CL_INVALID_WORK_GROUP_SIZE),       # above max work-group size
])
def test_sizes_the_spec_refuses_get_its_error_from_both_entries(env, global_size, local_size, code):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    n = int(np.prod(global_size))
    k, out = kernel_on(ctx, prog, b"shape", n)
    assert launch(q, k, global_size) == 0                         # (a plan: the native entry answers)
    assert launch(q, k, global_size, local_size) == code
    assert launch(q, k, global_size, local_size, entry=CL.clEnqueueNDRangeKernel) == code
    assert launch(q, k, global_size) == 0                         # the kernel still launches
    release(q, (k, out))


def test_an_empty_range_is_a_no_op_natively(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k, out = kernel_on(ctx, prog, b"shape", 4)
    data = np.full(4, 7, np.uint32)
    assert CL.clEnqueueWriteBuffer(q, out, 1, 0, 16, addr(data), 0, 0, 0) == 0
    assert launch(q, k, (0,)) == 0
    assert read(q, out, 16, np.uint32).tolist() == [7] * 4
    release(q, (k, out))


def test_sizes_checked_natively_are_shared_by_the_kernels_other_objects(env):
    """A second object of the kernel takes the sizes its first object's launch checked, and new
    sizes on one object do not change what another's launch runs with."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    a = kernel_on(ctx, prog, b"shape", 256)
    b = kernel_on(ctx, prog, b"shape", 256)
    assert launch(q, a[0], (256,), (32,)) == 0
    assert launch(q, b[0], (256,), (32,)) == 0
    assert launch(q, a[0], (256,), (64,)) == 0
    assert local_sizes(q, a[1], 256) == [(64, 1)] and local_sizes(q, b[1], 256) == [(32, 1)]
    release(q, a, b)


def test_a_native_refusal_reports_its_reason(env, monkeypatch, capfd):
    """PYPLAT_DEBUG=err sees the native entry's refusal with the rule's reason, as it sees a
    Python entry's error."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k, out = kernel_on(ctx, prog, b"shape", 64)
    assert launch(q, k, (64,)) == 0
    monkeypatch.setenv("PYPLAT_DEBUG", "err")
    config.reload()
    try:
        assert launch(q, k, (60,), (16,)) == cl.CL_INVALID_WORK_GROUP_SIZE
        assert launch(q, k, (64,), (16,), entry=lambda q, k, dim, *rest: native_ndrange(q, k, 4, *rest)) \
            == cl.CL_INVALID_WORK_DIMENSION
    finally:
        monkeypatch.delenv("PYPLAT_DEBUG")
        config.reload()
    err = capfd.readouterr().err
    assert ("clEnqueueNDRangeKernel returned CL_INVALID_WORK_GROUP_SIZE: "
            "global size 60 is not a multiple of local size 16") in err
    assert "clEnqueueNDRangeKernel returned CL_INVALID_WORK_DIMENSION: work_dim is 4, not 1, 2 or 3" in err
    release(q, (k, out))


def test_both_entries_agree_on_random_sizes(env):
    """A generator: random requests (valid and not) give the same code from the native entry and
    from the Python entry (PYPLAT_FAST_PATH's two ways in share one rule)."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    k, out = kernel_on(ctx, prog, b"shape", 4096)
    assert launch(q, k, (64,)) == 0
    rng = np.random.default_rng(20261207)
    choices = [0, 1, 2, 3, 4, 5, 7, 8, 12, 16, 60, 64, 256, 1024, 4096, 8192, 1 << 20]
    for _ in range(300):
        dim = int(rng.integers(1, 4))
        g = [int(rng.choice(choices[:12])) for _ in range(dim)]
        loc = [int(rng.choice(choices)) for _ in range(dim)] if rng.random() < 0.7 else None
        native = launch(q, k, g, loc)
        python = launch(q, k, g, loc, entry=CL.clEnqueueNDRangeKernel)
        assert native == python, (g, loc)
    release(q, (k, out))
