"""One-work-item kernels `k(__global const int *in, __global int *out)` over IN (16 ints) built by
pyplat.compiler and run directly (support.compiled), checked against expected values and, where
pyopencl and PoCL are installed, against PoCL's results (check)."""
import numpy as np

import pyplat.compiler as C
from support.compiled import run

try:
    import pyopencl as _ocl
    _POCL = [p for p in _ocl.get_platforms() if "Portable" in p.name]
except Exception:        # pyopencl or PoCL missing
    _POCL = []

IN = np.arange(10, 26, dtype=np.int32)        # 16 ints: 10, 11, ..., 25


def on_pocl(src, n_out, options=""):
    """The kernel `k(__global const int *in, __global int *out)` run once on PoCL, or None."""
    if not _POCL:
        return None
    ctx = _ocl.Context(devices=_POCL[0].get_devices()[:1])
    q = _ocl.CommandQueue(ctx)
    mf = _ocl.mem_flags
    a = _ocl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=IN)
    out = np.zeros(n_out, np.int32)
    b = _ocl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    prg = _ocl.Program(ctx, src).build(options=options)
    prg.k(q, (1,), (1,), a, b)
    _ocl.enqueue_copy(q, out, b)
    q.finish()
    return out


def on_pyplat(result, n_out):
    assert result.ok, result.log
    out = np.zeros(n_out, np.int32)
    run(result.kernels["k"], [IN.copy(), out], (1,), (1,))
    return out


def check(src, expected, options=""):
    expected = np.asarray(expected, np.int32)
    got = on_pyplat(C.build(src, options), len(expected))
    np.testing.assert_array_equal(got, expected)
    ref = on_pocl(src, len(expected), options)
    if ref is not None:
        np.testing.assert_array_equal(got, ref)
