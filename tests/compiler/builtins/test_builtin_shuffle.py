"""shuffle, shuffle2 (every gentype, every source and mask width, mask elements taken modulo the
number of source elements) and OpenCL C 2.0's get_global_linear_id / get_local_linear_id,
against numpy, and against PoCL where it is installed."""
import numpy as np
import pytest

from support.compiled import ok, run

WIDTHS = (2, 4, 8, 16)
TYPES = {"char": (np.int8, "uchar"), "uchar": (np.uint8, "uchar"), "short": (np.int16, "ushort"),
         "ushort": (np.uint16, "ushort"), "int": (np.int32, "uint"), "uint": (np.uint32, "uint"),
         "long": (np.int64, "ulong"), "ulong": (np.uint64, "ulong"), "float": (np.float32, "uint"),
         "double": (np.float64, "ulong")}
UNP = {"uchar": np.uint8, "ushort": np.uint16, "uint": np.uint32, "ulong": np.uint64}
COMBOS = [(n, m) for n in WIDTHS for m in WIDTHS]


def aligned_zeros(n, dt):
    """Zeros at a 128-byte aligned address, as OpenCL buffers are (vector pointers load whole
    aligned vectors)."""
    raw = np.zeros(n * np.dtype(dt).itemsize + 128, np.uint8)
    off = (-raw.ctypes.data) % 128
    return raw[off:off + n * np.dtype(dt).itemsize].view(dt)


def shuffle_source(t):
    """One kernel calling shuffle and shuffle2 for every (source width, mask width) pair."""
    u = TYPES[t][1]
    lines = []
    for j, (n, m) in enumerate(COMBOS):
        lines.append("""
        {   %(t)s%(n)d a = vload%(n)d(0, x), c = vload%(n)d(0, x + 16);
            %(u)s%(m)d mk = vload%(m)d(0, mask + 16 * %(j)d);
            vstore%(m)d(shuffle(a, mk), 0, o + 16 * %(j)d);
            vstore%(m)d(shuffle2(a, c, mk), 0, o2 + 16 * %(j)d); }""" % dict(t=t, u=u, n=n, m=m, j=j))
    return ("__kernel void k(__global const %s *x, __global const %s *mask, __global %s *o, "
            "__global %s *o2) {%s\n}" % (t, u, t, t, "".join(lines)))


def shuffle_inputs(t, seed=12):
    dt, u = TYPES[t]
    rng = np.random.default_rng(seed)
    if np.issubdtype(dt, np.floating):
        x = (rng.standard_normal(32) * 100).astype(dt)
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, 32, dtype=dt, endpoint=True)
    masks = rng.integers(0, np.iinfo(UNP[u]).max, 16 * len(COMBOS), dtype=UNP[u], endpoint=True)
    masks[:4] = [0, 1, UNP[u](np.iinfo(UNP[u]).max), 17]   # high bits ignored
    return x, masks


def expected(x, masks):
    want, want2 = [], []
    for j, (n, m) in enumerate(COMBOS):
        mk = masks[16 * j:16 * j + m].astype(np.uint64)
        want.append((j, m, x[:n][mk % n]))
        want2.append((j, m, np.concatenate([x[:n], x[16:16 + n]])[mk % (2 * n)]))
    return want, want2


def check(x, masks, o, o2, t):
    want, want2 = expected(x, masks)
    for (j, m, w), (_, _, w2) in zip(want, want2):
        n = COMBOS[j][0]
        np.testing.assert_array_equal(o[16 * j:16 * j + m], w, err_msg="shuffle %s%d by %d" % (t, n, m))
        np.testing.assert_array_equal(o2[16 * j:16 * j + m], w2, err_msg="shuffle2 %s%d by %d" % (t, n, m))


@pytest.mark.parametrize("t", sorted(TYPES))
def test_shuffle_and_shuffle2_every_gentype_and_width(t):
    x, masks = shuffle_inputs(t)
    o = np.zeros(16 * len(COMBOS), TYPES[t][0])
    o2 = np.zeros_like(o)
    r = ok(shuffle_source(t))
    run(r.kernels["k"], [x, masks, o, o2], (1,), (1,))
    check(x, masks, o, o2, t)


def test_shuffle_constant_mask_and_spec_examples():
    src = """
    __kernel void k(__global float4 *o, __global uint8 *u) {
        float4 a = (float4)(1, 2, 3, 4), b = (float4)(5, 6, 7, 8);
        uint4 mask = (uint4)(3, 2, 1, 0);
        o[0] = shuffle(a, mask);                          /* reverse */
        o[1] = shuffle2(a, b, (uint4)(0, 1, 4, 5));       /* a.xy, b.xy */
        float2 c = shuffle(a, (uint2)(6, 13));            /* 6 mod 4, 13 mod 4 */
        o[2] = (float4)(c, shuffle2(a, b, (uint2)(15, 8)));
        uint16 w = (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        u[0] = shuffle(w, (uint8)(15, 0, 14, 1, 31, 16, 47, 33));
    }"""
    o = aligned_zeros(12, np.float32)
    u = aligned_zeros(8, np.uint32)
    run(ok(src).kernels["k"], [o, u], (1,), (1,))
    assert o.tolist() == [4, 3, 2, 1, 1, 2, 5, 6, 3, 2, 8, 1]
    assert u.tolist() == [15, 0, 14, 1, 15, 0, 15, 1]


LINEAR = """
__kernel void k(__global uint *g, __global uint *l) {
    size_t i = get_global_linear_id();
    g[i] = get_global_id(0) + 100 * get_global_id(1) + 10000 * get_global_id(2);
    l[i] = get_local_linear_id();
}"""


@pytest.mark.parametrize("std", ["CL2.0", "CL3.0"])
@pytest.mark.parametrize("gs,ls,off", [((12,), (4,), (3,)), ((6, 4), (3, 2), (1, 2)),
                                       ((4, 2, 6), (2, 1, 3), (5, 0, 7))])
def test_linear_ids(std, gs, ls, off):
    n = int(np.prod(gs))
    g = np.full(n, 0xFFFFFFFF, np.uint32)
    loc = np.full(n, 0xFFFFFFFF, np.uint32)
    r = ok(LINEAR, "-cl-std=" + std)
    run(r.kernels["k"], [g, loc], gs, ls, off)
    # the spec's formulas: global ids relative to the offset, dimension 0 fastest
    ids = np.indices(gs[::-1]).reshape(len(gs), -1)[::-1]      # ids[d] per linear index
    gid = [ids[d] + off[d] for d in range(len(gs))] + [0] * (3 - len(gs))
    want_g = gid[0] + 100 * gid[1] + 10000 * gid[2]
    lid = [ids[d] % ls[d] for d in range(len(gs))]
    want_l = np.zeros(n, np.int64)
    for d in reversed(range(len(gs))):
        want_l = want_l * ls[d] + lid[d]
    np.testing.assert_array_equal(g, want_g)
    np.testing.assert_array_equal(loc, want_l)


def test_shuffle_and_linear_ids_match_pocl():
    """The same program on PyPlat and PoCL through pyopencl (skipped without PoCL)."""
    import pyplat
    pyplat.enable()
    cl = pytest.importorskip("pyopencl")
    plats = {p.name: p for p in cl.get_platforms()}
    if "Portable Computing Language" not in plats:
        pytest.skip("PoCL is not installed")
    results = {}
    for name in ("PyPlat", "Portable Computing Language"):
        ctx = cl.Context(plats[name].get_devices()[:1])
        q = cl.CommandQueue(ctx)
        out = {}
        for t in ("char", "int", "ulong", "float"):
            x, masks = shuffle_inputs(t, seed=5)
            o = np.zeros(16 * len(COMBOS), TYPES[t][0])
            o2 = np.zeros_like(o)
            mf = cl.mem_flags
            bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
            bm = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=masks)
            bo, bo2 = (cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=o) for _ in range(2))
            cl.Program(ctx, shuffle_source(t)).build().k(q, (1,), (1,), bx, bm, bo, bo2)
            cl.enqueue_copy(q, o, bo)
            cl.enqueue_copy(q, o2, bo2)
            check(x, masks, o, o2, t)
            out[t] = (o, o2)
        gs, ls = (4, 2, 6), (2, 1, 3)
        g = np.zeros(48, np.uint32)
        loc = np.zeros(48, np.uint32)
        bg, bl = (cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, g.nbytes) for _ in range(2))
        cl.Program(ctx, LINEAR).build("-cl-std=CL2.0").k(q, gs, ls, bg, bl, global_offset=(5, 0, 7))
        cl.enqueue_copy(q, g, bg)
        cl.enqueue_copy(q, loc, bl)
        out["linear"] = (g, loc)
        q.finish()
        results[name] = out
    a, b = results.values()
    for key in a:
        for x, y in zip(a[key], b[key]):
            np.testing.assert_array_equal(x, y, err_msg=key)
