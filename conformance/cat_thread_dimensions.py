"""thread_dimensions: NDRanges in 1, 2 and 3 dimensions over many global sizes (1, primes, powers
of two, sizes with few divisors), local sizes given or NULL, and global offsets. Every work-item
must run exactly once (an atomic counter per global id) and see get_work_dim, get_global_id,
get_local_id, get_group_id, get_num_groups, get_global_size, get_local_size and get_global_offset
consistent with the launch, the dimensions past work_dim included (sizes 1, ids 0). A local size
chosen by the implementation (NULL) must divide the global size and respect the device's and the
kernel's limits. The largest work-groups the device and kernel allow run; sizes past the limits
are rejected with the error codes of the specification. Non-uniform work-groups (OpenCL C 2.0
programs on devices that support them) are checked too."""
import ctypes
from ctypes import byref, c_size_t

import numpy as np

from . import clapi as C
from .framework import Category

CATEGORY = Category("thread_dimensions", "NDRange geometry: every work-item once, id functions, limits")
check = CATEGORY.check

NREC = 22     # per work-item: gid[3] lid[3] grp[3] dim gsize[3] lsize[3] ngroups[3] offset[3]

SRC = r"""
__kernel void ids(__global uint *count, __global uint *rec)
{
    uint d = get_work_dim();
    size_t lin = 0, stride = 1;
    for (uint k = 0; k < d; k++) {
        lin += (get_global_id(k) - get_global_offset(k)) * stride;
        stride *= get_global_size(k);
    }
    atomic_inc(&count[lin]);
    __global uint *r = rec + lin * 22;
    for (uint k = 0; k < 3; k++) {
        r[k] = get_global_id(k);
        r[3 + k] = get_local_id(k);
        r[6 + k] = get_group_id(k);
        r[10 + k] = get_global_size(k);
        r[13 + k] = get_local_size(k);
        r[16 + k] = get_num_groups(k);
        r[19 + k] = get_global_offset(k);
    }
    r[9] = d;
}
"""

FIELDS = ["global_id", "local_id", "group_id", "work_dim", "global_size", "local_size", "num_groups",
          "global_offset"]


def dim_problems(gsize, lsize, offset, count, rec, limits, uniform=True, enqueued=None):
    """Problems of one launch. gsize, offset: per dimension (len = work_dim); lsize: the local size
    given (None: the implementation's choice); count: work-items run per linear id; rec: (n, NREC)
    records; limits: (max work-group size of the kernel, max work-item sizes). Non-uniform
    launches (uniform=False) may have a smaller last group per dimension."""
    d = len(gsize)
    G = list(gsize) + [1] * (3 - d)
    O = list(offset or [0] * d) + [0] * (3 - d)
    n = int(np.prod(G))
    out = []
    count = np.asarray(count)[:n]
    bad = np.nonzero(count != 1)[0]
    if len(bad):
        out.append(f"{len(bad)} of {n} work-items did not run exactly once (linear id {int(bad[0])} ran "
                   f"{int(count[bad[0]])} times)")
        return out
    rec = np.asarray(rec, dtype=np.int64)[:n]
    if lsize is None:
        L = [int(x) for x in rec[0, 13:16]]
        maxwg, maxitems = limits
        if uniform and any(G[k] % L[k] for k in range(3)):
            out.append(f"the local size chosen for local=NULL, {L[:d]}, does not divide the global size {G[:d]}")
        if int(np.prod(L)) > maxwg or any(L[k] > maxitems[k] for k in range(d)):
            out.append(f"the local size chosen for local=NULL, {L[:d]}, exceeds the limits (work-group "
                       f"{maxwg}, work-items {maxitems[:d]})")
        if any(L[k] != 1 for k in range(d, 3)):
            out.append(f"local size {L} past work_dim {d} is not 1")
    else:
        L = list(lsize) + [1] * (3 - d)
    idx = np.indices((G[2], G[1], G[0])).reshape(3, -1)[::-1]     # x, y, z of each linear id
    for k in range(3):
        ng = -(-G[k] // L[k])
        last = G[k] - (ng - 1) * L[k]
        grp = idx[k] // L[k]
        want = {
            "global_id": idx[k] + O[k], "local_id": idx[k] % L[k], "group_id": grp,
            "global_size": np.full(n, G[k]), "num_groups": np.full(n, ng), "global_offset": np.full(n, O[k]),
            "local_size": np.where(grp == ng - 1, last, L[k]) if not uniform else np.full(n, L[k]),
        }
        cols = {"global_id": k, "local_id": 3 + k, "group_id": 6 + k, "global_size": 10 + k,
                "local_size": 13 + k, "num_groups": 16 + k, "global_offset": 19 + k}
        for name in ("global_id", "local_id", "group_id", "global_size", "local_size", "num_groups",
                     "global_offset"):
            got = rec[:, cols[name]]
            w = want[name].astype(np.int64) & 0xFFFFFFFF
            wrong = np.nonzero(got != w)[0]
            if len(wrong):
                i = int(wrong[0])
                xyz = tuple(int(idx[j][i]) + O[j] for j in range(d))
                out.append(f"get_{name}({k}) of work-item {xyz}: {int(got[i])}, expected {int(w[i])} "
                           f"({len(wrong)} work-items wrong)")
    wrong = np.nonzero(rec[:, 9] != d)[0]
    if len(wrong):
        out.append(f"get_work_dim() is {int(rec[wrong[0], 9])} in {len(wrong)} work-items, expected {d}")
    return out


class Launcher:
    def __init__(self, env, t, max_items=1 << 17, options="", src=SRC):
        self.env, self.t = env, t
        prog = env.program(t, src, options)
        self.k = env.kernel(t, prog, "ids")
        self.count = env.buffer(t, 4 * max_items)
        self.rec = env.buffer(t, 4 * NREC * max_items)
        self.max_items = max_items
        env.set_args(t, self.k, ("mem", self.count), ("mem", self.rec))
        self.kwg = C.info(env.cl.clGetKernelWorkGroupInfo, self.k, env.device, C.CL_KERNEL_WORK_GROUP_SIZE,
                          kind="size")
        self.maxitems = env.device_info(C.CL_DEVICE_MAX_WORK_ITEM_SIZES, "sizes")

    def run(self, gsize, lsize=None, offset=None, uniform=True):
        env, t = self.env, self.t
        n = int(np.prod(gsize))
        assert n <= self.max_items
        env.write(t, self.count, b"\0" * (4 * n))
        d = len(gsize)
        g = (c_size_t * d)(*gsize)
        loc = (c_size_t * d)(*lsize) if lsize else None
        off = (c_size_t * d)(*offset) if offset else None
        what = f"global={tuple(gsize)} local={tuple(lsize) if lsize else 'NULL'} offset={tuple(offset or ())}"
        code = env.cl.clEnqueueNDRangeKernel(env.queue, self.k, d, off, g, loc, 0, None, None)
        if code != C.CL_SUCCESS:
            t.true(False, f"clEnqueueNDRangeKernel({what}): {C.err_name(code)}")
            return
        t.ok(env.cl.clFinish(env.queue), "clFinish")
        count = np.frombuffer(env.read(t, self.count, 4 * n), dtype=np.uint32)
        rec = np.frombuffer(env.read(t, self.rec, 4 * NREC * n), dtype=np.uint32).reshape(n, NREC)
        for p in dim_problems(gsize, lsize, offset, count, rec, (self.kwg, self.maxitems), uniform)[:3]:
            t.true(False, f"{what}: {p}")


def _divisor_at_most(n, cap):
    for x in range(min(n, cap), 0, -1):
        if n % x == 0:
            return x
    return 1


def _launches(env, dims, sizes, launcher):
    out = []
    cap = min(launcher.kwg, 64)
    for j, g in enumerate(sizes):
        offsets = [None, tuple(3 * (k + 1) + j for k in range(dims))]
        if j % 3 == 0:
            offsets.append(tuple((1 << 20) + k for k in range(dims)))
        loc_choices = [None, tuple(_divisor_at_most(x, max(1, int(cap ** (1 / dims)))) for x in g)]
        if int(np.prod(g)) <= cap and all(x <= m for x, m in zip(g, launcher.maxitems)):
            loc_choices.append(tuple(g))            # one group holding everything
        loc_choices.append(tuple(1 for _ in g))
        for i, loc in enumerate(loc_choices):
            out.append((g, loc, offsets[(i + j) % len(offsets)]))
    return out


SIZES_1D = ([1, 2, 3, 7, 13, 31, 64, 97, 128, 257, 1000, 1021, 4096],
            [1, 2, 3, 5, 7, 11, 13, 17, 31, 61, 64, 97, 128, 251, 256, 509, 1000, 1021, 4093, 4096, 10007, 65536])
SIZES_2D = ([(1, 1), (3, 5), (17, 13), (64, 1), (1, 64), (31, 37), (100, 10)],
            [(1, 1), (2, 1), (1, 2), (3, 5), (17, 13), (64, 1), (1, 64), (31, 37), (100, 10), (128, 128),
             (1021, 3), (7, 509)])
SIZES_3D = ([(1, 1, 1), (2, 3, 5), (7, 11, 13), (16, 16, 4), (1, 1, 97), (5, 1, 9)],
            [(1, 1, 1), (2, 3, 5), (7, 11, 13), (16, 16, 4), (1, 1, 97), (97, 1, 1), (1, 97, 1), (5, 1, 9),
             (32, 32, 32), (3, 61, 2), (17, 19, 23)])


def _dims(env, t, dims, sizes):
    lz = Launcher(env, t)
    sizes = [g if isinstance(g, tuple) else (g,) for g in env.samples(*sizes)]
    for g, loc, off in _launches(env, dims, sizes, lz):
        lz.run(g, loc, off)


@check
def one_dimension(env, t):
    """1-D: sizes 1, primes, powers of two; local given, NULL, 1 and all-in-one; offsets"""
    _dims(env, t, 1, SIZES_1D)


@check
def two_dimensions(env, t):
    """2-D: square, thin and prime-sided ranges; local given, NULL and 1x1; offsets"""
    _dims(env, t, 2, SIZES_2D)


@check
def three_dimensions(env, t):
    """3-D: cubes, slabs and prime-sided ranges; local given, NULL and 1x1x1; offsets"""
    _dims(env, t, 3, SIZES_3D)


@check
def largest_work_groups(env, t):
    """a work-group of CL_KERNEL_WORK_GROUP_SIZE work-items, spread along each dimension in turn"""
    lz = Launcher(env, t)
    ndims = env.device_info(C.CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, "uint")
    t.true(ndims >= 3, f"CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS is {ndims}, at least 3 required")
    for d in range(min(3, ndims)):
        size = min(lz.kwg, lz.maxitems[d], 4096)
        loc = [1, 1, 1]
        loc[d] = size
        g = [1, 1, 1]
        g[d] = 2 * size
        lz.run(tuple(g), tuple(loc), None)
    # the work-group size as a product over all three dimensions
    a = 1
    while a * 2 <= lz.maxitems[0] and (a * 2) ** 2 <= lz.kwg:
        a *= 2
    b = max(1, min(lz.maxitems[1], lz.kwg // (a * a)))
    lz.run((2 * a, a, b), (a, a, b), None)


@check
def invalid_sizes(env, t):
    """sizes past the limits: work-group product, local not dividing global per dimension, NULL
    global size, offset + size overflowing size_t, reqd_work_group_size with local NULL"""
    cl = env.cl
    src = SRC + r"""
__kernel __attribute__((reqd_work_group_size(4, 2, 1))) void fixed(__global uint *c) { c[0] = 1; }
"""
    prog = env.program(t, src)
    k = env.kernel(t, prog, "ids")
    buf = env.buffer(t, 4 * NREC * 1024)
    env.set_args(t, k, ("mem", buf), ("mem", buf))
    kwg = C.info(cl.clGetKernelWorkGroupInfo, k, env.device, C.CL_KERNEL_WORK_GROUP_SIZE, kind="size")
    maxitems = env.device_info(C.CL_DEVICE_MAX_WORK_ITEM_SIZES, "sizes")
    q = env.queue

    def nd(kern, gsize, lsize=None, offset=None, dims=None):
        dims = dims or len(gsize)
        g = (c_size_t * dims)(*gsize) if gsize is not None else None
        loc = (c_size_t * dims)(*lsize) if lsize else None
        off = (c_size_t * dims)(*offset) if offset else None
        return lambda: cl.clEnqueueNDRangeKernel(q, kern, dims, off, g, loc, 0, None, None)

    # a 2-D local size within the per-dimension limits whose product passes the work-group size
    l0 = min(maxitems[0], kwg)
    l1 = min(maxitems[1], kwg // l0 + 1)
    if l0 * l1 > kwg:
        t.code(nd(k, (l0, l1), (l0, l1)), C.CL_INVALID_WORK_GROUP_SIZE,
               f"clEnqueueNDRangeKernel(local=({l0}, {l1}): product > CL_KERNEL_WORK_GROUP_SIZE={kwg})")
    else:
        t.note("no 2-D local size exceeds the work-group size within the work-item limits")
    if maxitems[2] < kwg:
        z = maxitems[2] + 1
        t.code(nd(k, (1, 1, z), (1, 1, z)), (C.CL_INVALID_WORK_ITEM_SIZE, C.CL_INVALID_WORK_GROUP_SIZE),
               f"clEnqueueNDRangeKernel(local=(1, 1, {z}) > CL_DEVICE_MAX_WORK_ITEM_SIZES[2]={maxitems[2]})")
    t.code(nd(k, (8, 6, 10), (2, 2, 4)), C.CL_INVALID_WORK_GROUP_SIZE,
           "clEnqueueNDRangeKernel(global=(8, 6, 10), local=(2, 2, 4): 10 % 4 != 0, OpenCL C 1.x program)")
    t.code(nd(k, (9, 8), (2, 4)), C.CL_INVALID_WORK_GROUP_SIZE,
           "clEnqueueNDRangeKernel(global=(9, 8), local=(2, 4): 9 % 2 != 0, OpenCL C 1.x program)")
    # 2.1 deprecated the error for a NULL or zero global size (the command then does nothing)
    zero_ok = env.version >= (2, 1)
    t.code(nd(k, None, None, None, dims=1),
           (C.CL_INVALID_GLOBAL_WORK_SIZE, C.CL_SUCCESS) if zero_ok else C.CL_INVALID_GLOBAL_WORK_SIZE,
           "clEnqueueNDRangeKernel(global_work_size=NULL)")
    big = (1 << (8 * ctypes.sizeof(c_size_t))) - 16
    t.code(nd(k, (32,), (16,), (big,)), C.CL_INVALID_GLOBAL_OFFSET,
           f"clEnqueueNDRangeKernel(global=32, offset={big}: offset + size overflows size_t)")
    t.code(nd(k, (0,), None), C.CL_SUCCESS if zero_ok else C.CL_INVALID_GLOBAL_WORK_SIZE,
           f"clEnqueueNDRangeKernel(global=0) on an OpenCL {env.version[0]}.{env.version[1]} device")
    kf = env.kernel(t, prog, "fixed")
    env.set_args(t, kf, ("mem", buf))
    t.code(nd(kf, (6, 2), None), C.CL_INVALID_WORK_GROUP_SIZE,
           "clEnqueueNDRangeKernel(global=(6, 2), local=NULL) of reqd_work_group_size(4, 2, 1)")
    t.code(nd(kf, (8, 2), (2, 4)), C.CL_INVALID_WORK_GROUP_SIZE,
           "clEnqueueNDRangeKernel(local=(2, 4)) of reqd_work_group_size(4, 2, 1)")
    t.code(nd(kf, (8, 4), (4, 2)), C.CL_SUCCESS, "clEnqueueNDRangeKernel(local=(4, 2)) of reqd_work_group_size(4, 2, 1)")
    # 1.x made local=NULL with reqd_work_group_size an error; later versions let it mean the reqd size
    t.code(nd(kf, (8, 4), None), (C.CL_SUCCESS, C.CL_INVALID_WORK_GROUP_SIZE),
           "clEnqueueNDRangeKernel(global=(8, 4), local=NULL) of reqd_work_group_size(4, 2, 1)")
    t.ok(cl.clFinish(q), "clFinish")


@check
def non_uniform_groups(env, t):
    """OpenCL C 2.0 programs on devices with non-uniform work-groups: a smaller last group per dimension"""
    from .cat_computeinfo import parse_version
    cver = parse_version(env.device_info(C.CL_DEVICE_OPENCL_C_VERSION), "OpenCL C") or (1, 0)
    if env.version < (2, 0) or cver < (2, 0):
        t.skip("needs an OpenCL 2.0+ device with OpenCL C 2.0+")
    try:
        supported = bool(env.device_info(C.CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, "uint"))
    except C.CLError:
        supported = env.version < (3, 0)
    if not supported:
        t.skip("CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT is false")
    lz = Launcher(env, t, options=f"-cl-std=CL{cver[0]}.{cver[1]}")
    for g, loc, off in [((37,), (8,), None), ((10, 7), (4, 4), (1, 2)), ((5, 6, 7), (2, 4, 3), None),
                        ((1021,), (64,), (5,))]:
        lz.run(g, loc, off, uniform=False)
