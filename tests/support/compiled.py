"""Kernels built by pyplat.compiler and their work-group functions called through ctypes, one
call per work-group, as the runtime launches them (no context, queue or runtime involved).

    r = ok(SOURCE)                                  # build, or fail the test with the log
    run(r.kernels["k"], [a, b, Local(256), np.int32(3)], (n,), (64,))
"""
import ctypes
import itertools

import numpy as np

from pyplat.compiler import build, WorkGroupContext, WORK_GROUP_FUNCTION


# ----------------------------------------------------------------------------- helpers
class Local:
    def __init__(self, nbytes):
        self.nbytes = nbytes


def run(kernel, args, global_size, local_size=None, offset=None):
    """Launch `kernel` (KernelInfo) like the runtime would: one call per work-group."""
    dims = len(global_size)
    local_size = tuple(local_size or (1,) * dims)
    offset = tuple(offset or (0,) * dims)
    keep, ptrs = [], []
    for a in args:
        if isinstance(a, np.ndarray) and a.ndim >= 1:
            box = ctypes.c_void_p(a.ctypes.data)
            keep.append(box)
            ptrs.append(ctypes.addressof(box))
        elif isinstance(a, Local):
            buf = np.zeros(a.nbytes + 64, np.uint8)
            box = ctypes.c_void_p(buf.ctypes.data)
            keep += [buf, box]
            ptrs.append(ctypes.addressof(box))
        else:                      # by value: numpy scalar / 0-d array / structured scalar
            buf = np.array(a)
            keep.append(buf)
            ptrs.append(buf.ctypes.data)
    argv = (ctypes.c_void_p * max(1, len(ptrs)))(*ptrs)
    ctx = WorkGroupContext()
    ctx.work_dim = dims
    gs = list(global_size) + [1] * (3 - dims)
    ls = list(local_size) + [1] * (3 - dims)
    off = list(offset) + [0] * (3 - dims)
    ng = [g // l for g, l in zip(gs, ls)]
    scratch = np.zeros(max(kernel.local_mem_size, 1) + 64, np.uint8)
    for d in range(3):
        ctx.global_size[d], ctx.local_size[d], ctx.num_groups[d], ctx.global_offset[d] = gs[d], ls[d], ng[d], off[d]
    ctx.local_mem = scratch.ctypes.data
    fn = WORK_GROUP_FUNCTION(kernel.address)
    for gz, gy, gx in itertools.product(range(ng[2]), range(ng[1]), range(ng[0])):
        ctx.group_id[0], ctx.group_id[1], ctx.group_id[2] = gx, gy, gz
        fn(argv, ctypes.byref(ctx))


def ok(src, options=""):
    r = build(src, options)
    assert r.ok, r.log
    return r


def ulp_diff(got, ref, dtype=np.float32):
    got = got.astype(dtype)
    ref = ref.astype(dtype)
    both_nan = np.isnan(got) & np.isnan(ref)
    spacing = np.spacing(np.abs(ref).astype(dtype))
    d = np.abs(got.astype(np.float64) - ref.astype(np.float64)) / spacing.astype(np.float64)
    d[both_nan] = 0
    d[(got == ref)] = 0
    return d
