"""What a kernel fault on the GPU does to the program around it (docs/devices.md, "Faults"), on a
machine with an NVIDIA GPU: `bash bench/device.sh py bench/gpu_fault_check.py`. Run it in a
process of its own: after the fault, the GPU is unusable for the rest of the process.

Checks, each printed as `ok` or `FAILED`: a vadd on the GPU before; the faulting launch (a wild
pointer) fails; a later GPU command fails at once; the CPU device of the same context computes
right; a buffer whose only current copy was on the GPU cannot be read back (no zeros, no stale
bytes); one current on the host reads back as it was; CL_DEVICE_AVAILABLE is false; a new
context with the GPU gets CL_DEVICE_NOT_AVAILABLE; a new CPU context works. Exit status 1 if a
check failed.
"""
import os
import sys

os.environ.setdefault("PYPLAT_DEVICES", "cpu,cuda")

import numpy as np          # noqa: E402
import pyopencl as cl       # noqa: E402

SRC = """
__kernel void wild(__global int *out) { __global int *p = (__global int *)0x10; p[get_global_id(0)] = 1; out[0] = 2; }
__kernel void add(__global const float *a, __global const float *b, __global float *c)
{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }
__kernel void twice(__global int *a) { a[get_global_id(0)] *= 2; }
"""
mf = cl.mem_flags
failed = []


def check(name, good):
    print(f"{'ok    ' if good else 'FAILED'} {name}", flush=True)
    if not good:
        failed.append(name)


def vadd(ctx, dev):
    """Whether a vadd on dev computes right (False if any call fails)."""
    try:
        q = cl.CommandQueue(ctx, dev)
        prg = cl.Program(ctx, SRC).build()
        n = 1 << 16
        a, b = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
        A = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        B = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
        C = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
        cl.Kernel(prg, "add")(q, (n,), None, A, B, C)
        c = np.empty_like(a)
        cl.enqueue_copy(q, c, C)
        q.finish()
        return bool(np.allclose(c, a + b))
    except cl.Error:
        return False


def main():
    plat = [p for p in cl.get_platforms() if p.name == "PyPlat"][0]
    gpus = [d for d in plat.get_devices() if d.type & cl.device_type.GPU]
    cpu = [d for d in plat.get_devices() if d.type & cl.device_type.CPU][0]
    if not gpus:
        print("no GPU device: nothing to check")
        return 0
    gpu = gpus[0]
    ctx = cl.Context([gpu, cpu])
    check("vadd on the GPU before the fault", vadd(ctx, gpu))
    qg = cl.CommandQueue(ctx, gpu)
    prg = cl.Program(ctx, SRC).build()
    host = np.arange(1024, dtype=np.int32)
    on_gpu_only = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)
    cl.Kernel(prg, "twice")(qg, (1024,), None, on_gpu_only)   # its only current copy: the GPU's
    on_host_too = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)
    cl.Kernel(prg, "twice")(qg, (1024,), None, on_host_too)
    back = np.empty_like(host)
    cl.enqueue_copy(qg, back, on_host_too)                      # ... now current on the host too
    qg.finish()
    out = cl.Buffer(ctx, mf.READ_WRITE, 4)
    try:
        ev = cl.Kernel(prg, "wild")(qg, (64,), None, out)
        ev.wait()
        check("the faulting launch fails", ev.command_execution_status < 0)
    except cl.Error:
        check("the faulting launch fails", True)
    check("a later GPU command fails", not vadd(ctx, gpu))
    check("the CPU device of the same context computes right", vadd(ctx, cpu))
    qc = cl.CommandQueue(ctx, cpu)
    try:
        cl.enqueue_copy(qc, back, on_gpu_only)
        check("a buffer only the GPU held is not read back", False)
    except cl.Error:
        check("a buffer only the GPU held is not read back", True)
    try:
        cl.enqueue_copy(qc, back, on_host_too)
        check("a buffer current on the host reads back", np.array_equal(back, 2 * host))
    except cl.Error:
        check("a buffer current on the host reads back", False)
    check("CL_DEVICE_AVAILABLE is false", not gpu.available)
    try:
        cl.Context([gpu])
        check("a new context with the GPU is refused", False)
    except cl.Error as e:
        check("a new context with the GPU is refused", "DEVICE_NOT_AVAILABLE" in str(e))
    check("a new CPU context computes right", vadd(cl.Context([cpu]), cpu))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
