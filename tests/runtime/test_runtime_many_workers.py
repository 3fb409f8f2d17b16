"""The thread pool with more workers than cores: many multi-group kernels at once on an
out-of-order queue, so work-groups are shared on the board and commands complete on threads
other than the one that published them. A child process (PYPLAT_WORKERS=16) through the real
loader and pyopencl; it used to die of heap corruption here (a command freed by the workers that
finished it while the publishing worker had yet to take its own reference)."""
import sys
import textwrap

import pytest

pytest.importorskip("pyopencl")

CHILD = textwrap.dedent("""
    import numpy as np
    import pyopencl as cl

    platform = next(p for p in cl.get_platforms() if "PyPlat" in p.name)
    ctx = cl.Context(platform.get_devices())
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    prg = cl.Program(ctx, '''
    __kernel void spin_groups(__global int *out, int iters, int round) {
        int g = get_global_id(0);
        float x = 0.0f;
        for (int i = 0; i < iters * (1 + get_group_id(0) % 4); i++) x += 1.0f / (i + 1);
        out[g] = g * 7 + round + (x < 0.0f);
    }''').build()
    P, G = 64, 16
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * P * G)
    k = prg.spin_groups
    for rnd in range(60):
        k.set_args(out, np.int32(200), np.int32(rnd))
        for j in range(P):
            cl.enqueue_nd_range_kernel(q, k, (G,), (1,), global_work_offset=(G * j,))
        q.finish()
        got = np.empty(P * G, np.int32)
        cl.enqueue_copy(q, got, out)
        want = np.arange(P * G, dtype=np.int32) * 7 + rnd
        assert (got == want).all(), (rnd, np.nonzero(got != want)[0][:8])
    print("ok")
""")


def test_shared_kernels_with_sixteen_workers(run_with_pyplat):
    r = run_with_pyplat([sys.executable, "-c", CHILD], env={"PYPLAT_WORKERS": "16"}, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (r.returncode, r.stdout[-2000:],
                                                                   r.stderr[-3000:])
