"""The cuda device class on a machine with an NVIDIA GPU: correctness and speed checks, in one
run (the device machine: `bash bench/device.sh py bench/gpu_check.py`).

    python bench/gpu_check.py [--conformance]

Prints: the platform's devices; vadd over 2^26 floats (GB/s, against a device-to-device copy of
the same size through the CUDA driver, which bounds it); a reduction with barriers and __local
memory; a CPU -> GPU -> CPU pipeline in one context with the transfers counted; and, with
--conformance, `pyplat conformance --quick` on the GPU.
"""
import os
import subprocess
import sys
import time

os.environ.setdefault("PYPLAT_DEVICES", "cpu,cuda")

import numpy as np          # noqa: E402
import pyopencl as cl       # noqa: E402

SRC = r"""
__kernel void vadd(__global const float *a, __global const float *b, __global float *c)
{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }
__kernel void twice(__global int *a) { size_t i = get_global_id(0); a[i] = 2 * a[i] + 1; }
__kernel void reduce(__global const float *in, __global float *out, __local float *tile)
{
    size_t l = get_local_id(0), n = get_local_size(0);
    tile[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = n / 2; s > 0; s /= 2) {
        if (l < s) tile[l] += tile[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = tile[0];
}
__kernel void math(__global float *x) { size_t i = get_global_id(0); x[i] = sin(x[i]) * exp(x[i] / 8.0f); }
"""


def best_of(n, fn):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    platform = [p for p in cl.get_platforms() if p.name == "PyPlat"][0]
    devices = platform.get_devices()
    print("devices:", [d.name for d in devices])
    gpus = [d for d in devices if d.type & cl.device_type.GPU]
    if not gpus:
        print("no GPU device")
        return 1
    cpu, gpu = devices[0], gpus[0]
    ctx = cl.Context([cpu, gpu])
    qg, qc = cl.CommandQueue(ctx, gpu), cl.CommandQueue(ctx, cpu)
    qp = cl.CommandQueue(ctx, gpu, properties=cl.command_queue_properties.PROFILING_ENABLE)
    prg = cl.Program(ctx, SRC).build()
    vadd, twice, reduce_, math = (cl.Kernel(prg, n) for n in ("vadd", "twice", "reduce", "math"))
    from pyplat.core import migration

    n = 1 << 26
    a = np.random.rand(n).astype(np.float32)
    b = np.random.rand(n).astype(np.float32)
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    dc = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
    vadd(qg, (n,), (256,), da, db, dc).wait()          # brings a and b over once
    c = np.empty_like(a)
    cl.enqueue_copy(qg, c, dc).wait()
    print("vadd correct:", bool(np.allclose(c, a + b)))
    wall = best_of(10, lambda: vadd(qg, (n,), (256,), da, db, dc).wait())
    runs = [vadd(qp, (n,), (256,), da, db, dc) for _ in range(10)]
    qp.finish()
    t = min((e.profile.end - e.profile.start) * 1e-9 for e in runs)     # launch + GPU run + sync
    print(f"vadd wall time per call (enqueue, run, wait): {wall * 1e3:.3f} ms")
    gbs = 3 * 4 * n / t / 1e9
    copy = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
    from pyplat.devices.cuda import driver_api as cu
    from pyplat.core.migration import address_in
    import pyplat.core.platform as P
    core_gpu = [d for d in P.get_platform().devices if d.compiler_target.runs_own_code][0]
    src_addr = address_in(core_buffer(dc), core_gpu.memory_space)
    dst_addr = address_in(core_buffer(copy), core_gpu.memory_space)
    lib = cu.api()
    core_gpu.memory_space.context.make_current()

    def d2d():
        cu.check(lib.cuMemcpy(dst_addr, src_addr, 4 * n), "cuMemcpy")
        cu.check(lib.cuCtxSynchronize(), "sync")
    tc = best_of(10, d2d)
    print(f"vadd 2^26 floats: {t * 1e3:.3f} ms, {gbs:.0f} GB/s; device-to-device copy {2 * 4 * n / tc / 1e9:.0f} GB/s; "
          f"ratio {gbs / (2 * 4 * n / tc / 1e9):.2f}")

    m = 1 << 20
    x = np.random.rand(m).astype(np.float32)
    dx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    dout = cl.Buffer(ctx, mf.READ_WRITE, 4 * (m // 256))
    reduce_(qg, (m,), (256,), dx, dout, cl.LocalMemory(4 * 256)).wait()
    out = np.empty(m // 256, np.float32)
    cl.enqueue_copy(qg, out, dout).wait()
    print("reduce correct:", bool(np.allclose(out, x.reshape(-1, 256).sum(1), rtol=1e-4)))

    y = (np.random.rand(m).astype(np.float32) - 0.5) * 20
    dy = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    math(qg, (m,), None, dy).wait()
    got = np.empty_like(y)
    cl.enqueue_copy(qg, got, dy).wait()
    want = np.sin(y) * np.exp(y / 8)
    print("math max abs err:", float(np.max(np.abs(got - want))))

    k = 1 << 16
    v = np.arange(k, dtype=np.int32)
    dv = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=v)
    migration.reset_stats()
    e1 = twice(qc, (k,), None, dv)
    e2 = twice(qg, (k,), None, dv, wait_for=[e1])
    e3 = twice(qc, (k,), None, dv, wait_for=[e2])
    r = np.empty_like(v)
    cl.enqueue_copy(qc, r, dv, wait_for=[e3]).wait()
    print("pipeline CPU -> GPU -> CPU correct:", bool((r == ((v * 2 + 1) * 2 + 1) * 2 + 1).all()),
          "transfers:", migration.stats()["transfers"])

    if "--conformance" in sys.argv:
        out = os.environ.get("OUT", "/tmp")
        p = subprocess.run(["pyplat", "conformance", "--quick", "--device", "CUDA", "--json",
                            os.path.join(out, "conformance.json")] + sys.argv[2:],
                           capture_output=True, text=True, env=dict(os.environ, PYPLAT_DEVICES="cuda"))
        with open(os.path.join(out, "conformance.txt"), "w") as f:
            f.write(p.stdout + "\n==== stderr\n" + p.stderr)
        print(p.stdout[-1500:])
    return 0


def core_buffer(buf):
    """The core Buffer behind a pyopencl buffer (same process: the shim reuses this interpreter)."""
    from pyplat.api import handles
    return handles.peek(buf.int_ptr)


if __name__ == "__main__":
    sys.exit(main())
