"""Known LLVM miscompiles PyPlat steers around (pyplat/compiler/jit.py) stay avoided.

LLVM 22.1's VectorCombine (foldShuffleToIdentity) took a value used both as a splat and as an
identity shuffle, feeding one lane-wise operation, as the same shuffle for both
(llvm/llvm-project#180338). Found by the differential tester (seed 60002779): lane 1 of
`v.lo = rotate((uchar2)(v.s0, v.s0), (uchar2)(v.s0, v.s1))` came out as rotate(v.s1, v.s1).
Each kernel below has that shape for another lane-wise builtin; the results are checked
against values computed here, lane by lane.
"""
import numpy as np
import pytest

import pyplat

pyplat.enable()     # before pyopencl initialises its loader

cl = pytest.importorskip("pyopencl")

N = 256

# (name, element type, OpenCL expression of a and b, numpy reference of the same)
CASES = [
    ("rotate", "uchar", "rotate(a, b)",
     lambda a, b: ((a.astype(np.uint32) << (b & 7)) | (a.astype(np.uint32) >> ((8 - (b & 7)) & 7)))
     .astype(np.uint8)),
    ("add_sat", "uchar", "add_sat(a, b)",
     lambda a, b: np.minimum(a.astype(np.uint32) + b, 255).astype(np.uint8)),
    ("min", "int", "min(a, b)", np.minimum),
    ("abs_diff", "ushort", "abs_diff(a, b)",
     lambda a, b: np.abs(a.astype(np.int64) - b).astype(np.uint16)),
    ("fmax", "float", "fmax(a, b)", np.fmax),
]
NP = {"uchar": np.uint8, "ushort": np.uint16, "int": np.int32, "float": np.float32}


@pytest.fixture(scope="module")
def ctx_queue():
    plat = [p for p in cl.get_platforms() if p.name == "PyPlat"][0]
    ctx = cl.Context(plat.get_devices())
    return ctx, cl.CommandQueue(ctx)


@pytest.mark.parametrize("name,t,expr,ref", CASES, ids=[c[0] for c in CASES])
def test_splat_and_identity_of_one_vector_feed_one_builtin(ctx_queue, name, t, expr, ref):
    ctx, q = ctx_queue
    src = f"""
    __kernel void k(__global const {t}4 *in, __global const int *cond, __global {t}4 *out) {{
        size_t i = get_global_id(0);
        {t}4 v = in[i] + in[i];
        if (cond[i] & 1) {{
            {t}2 a = ({t}2)(v.s0, v.s0), b = ({t}2)(v.s0, v.s1);
            v.lo = {expr};
        }}
        out[i] = v;
    }}"""
    rng = np.random.default_rng(len(name))
    dt = NP[t]
    if dt == np.float32:
        x = rng.standard_normal((N, 4)).astype(dt)
    else:
        x = rng.integers(np.iinfo(dt).min // 2, np.iinfo(dt).max // 2, (N, 4), endpoint=True,
                         dtype=dt)
    cond = rng.integers(0, 2, N, dtype=np.int32)
    prg = cl.Program(ctx, src).build()
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    cb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=cond)
    out = np.zeros_like(x)
    ob = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    prg.k(q, (N,), (8,), xb, cb, ob)
    cl.enqueue_copy(q, out, ob)
    q.finish()

    with np.errstate(over="ignore"):
        v = (x + x).astype(dt)
    a = np.stack([v[:, 0], v[:, 0]], 1)
    b = np.stack([v[:, 0], v[:, 1]], 1)
    lo = ref(a, b).astype(dt)
    want = v.copy()
    want[cond == 1, :2] = lo[cond == 1]
    np.testing.assert_array_equal(out, want)
