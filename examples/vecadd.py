"""Vector addition with pyopencl on PyPlat; checks the result against numpy.

    python examples/vecadd.py              # opts in with pyplat.enable(), picks the PyPlat platform
    pyplat run -- python examples/vecadd.py
"""
import sys

import numpy as np

import pyplat

pyplat.enable()          # before pyopencl looks for platforms: makes PyPlat visible

import pyopencl as cl    # noqa: E402

KERNEL = """
__kernel void vecadd(__global const float *a, __global const float *b, __global float *c,
                     const float scale)
{
    size_t i = get_global_id(0);
    c[i] = scale * (a[i] + b[i]);
}
"""


def main():
    platform = next((p for p in cl.get_platforms() if p.name == "PyPlat"), None)
    if platform is None:
        sys.exit("PyPlat platform not found: " + ", ".join(p.name for p in cl.get_platforms()))
    device = platform.get_devices()[0]
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)

    n = 1 << 20
    rng = np.random.default_rng(1)
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    mf = cl.mem_flags
    a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    b_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    c_buf = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)

    program = cl.Program(ctx, KERNEL).build()
    program.vecadd(queue, (n,), None, a_buf, b_buf, c_buf, np.float32(2.0))
    c = np.empty_like(a)
    cl.enqueue_copy(queue, c, c_buf)

    expected = np.float32(2.0) * (a + b)
    if not np.array_equal(c, expected):
        bad = np.flatnonzero(c != expected)
        sys.exit(f"vecadd: {bad.size} wrong elements, first at {bad[0]}: {c[bad[0]]} != {expected[bad[0]]}")
    print(f"vecadd: {n} elements OK on {platform.name} / {device.name}")


if __name__ == "__main__":
    main()
