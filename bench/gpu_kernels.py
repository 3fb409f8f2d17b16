"""The GPU kernel set: each kernel run on PyPlat's cuda device (through pyopencl) and, from the
same source text, as CUDA through CuPy's RawKernel, side by side (bench/README.md, "GPU").

    PYPLAT_DEVICES=cuda pyplat run -- python bench/gpu_kernels.py [--reps 20] [NAME...]

One source per kernel, written in OpenCL C; for CUDA a short prelude maps the OpenCL C words it
uses (`__kernel`, `__global`, `__local` arrays, work-item functions, `barrier`, atomics) onto
CUDA's, so both compilers see the same algorithm. Outputs are compared between the two (and
with numpy), then each is timed on the GPU's clock: PyPlat by the event's profiling span (CUDA
events around the launch), CuPy by CUDA events around its launch; the best of `--reps` runs.
Prints per kernel the two times, the bandwidth or GFLOP/s, and CUDA/PyPlat (>= 1: PyPlat as
fast), then the geometric mean. Also the wall time per launch in a loop of launches then one
wait, which includes each side's launch overhead.
"""
import argparse
import math
import sys
import time

import numpy as np

CUDA_PRELUDE = r"""
#define __kernel extern "C" __global__
#define kernel extern "C" __global__
#define __global
#define __constant
#define __local __shared__
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
__device__ inline void barrier(int) { __syncthreads(); }
__device__ inline size_t get_global_id(int d) {
    return d == 0 ? blockIdx.x * (size_t)blockDim.x + threadIdx.x
         : d == 1 ? blockIdx.y * (size_t)blockDim.y + threadIdx.y : blockIdx.z * (size_t)blockDim.z + threadIdx.z; }
__device__ inline size_t get_local_id(int d) { return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z; }
__device__ inline size_t get_group_id(int d) { return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z; }
__device__ inline size_t get_local_size(int d) { return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z; }
__device__ inline size_t get_global_size(int d) {
    return d == 0 ? gridDim.x * (size_t)blockDim.x : d == 1 ? gridDim.y * (size_t)blockDim.y : gridDim.z * (size_t)blockDim.z; }
#define atomic_inc(p) atomicAdd((p), 1u)
#define atomic_add(p, v) atomicAdd((p), (v))
"""

N1 = 1 << 24

KERNELS = {}


def kernel(name, source, args, global_size, local_size, check, work):
    """args(rng) -> list of numpy arrays / scalars (arrays are buffers, in order); check(inputs,
    outputs) -> None or a message; work: (bytes moved, flops) per launch, for the rates."""
    KERNELS[name] = dict(source=source, args=args, global_size=global_size, local_size=local_size,
                         check=check, work=work)


def close(a, b, rtol=1e-4, atol=1e-5):
    return None if np.allclose(a, b, rtol=rtol, atol=atol) else f"max abs diff {float(np.max(np.abs(a - b)))}"


kernel("vadd", r"""
__kernel void vadd(__global const float *a, __global const float *b, __global float *c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}""", lambda r: [r.random(4 * N1, np.float32), r.random(4 * N1, np.float32), np.zeros(4 * N1, np.float32)],
    (4 * N1,), (256,), lambda i, o: close(o[2], i[0] + i[1]), (3 * 4 * 4 * N1, 0))

kernel("saxpy", r"""
__kernel void saxpy(float a, __global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}""", lambda r: [np.float32(2.5), r.random(4 * N1, np.float32), r.random(4 * N1, np.float32)],
    (4 * N1,), (256,), None, (3 * 4 * 4 * N1, 2 * 4 * N1))

kernel("reduce", r"""
__kernel void reduce(__global const float *x, __global float *partial, unsigned n) {
    __local float scratch[256];
    size_t lid = get_local_id(0);
    float sum = 0.0f;
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0))
        sum += x[i];
    scratch[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (unsigned s = 128; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}""", lambda r: [r.random(4 * N1, np.float32), np.zeros(1024, np.float32), np.uint32(4 * N1)],
    (1024 * 256,), (256,), lambda i, o: close(o[1].sum(dtype=np.float64), i[0].sum(dtype=np.float64), rtol=1e-3),
    (4 * 4 * N1, 4 * N1))

SGEMM_N = 2048
kernel("sgemm", r"""
#define TILE 16
__kernel void sgemm(__global const float *A, __global const float *B, __global float *C, int n) {
    __local float As[TILE][TILE];
    __local float Bs[TILE][TILE];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        As[ty][tx] = A[row * n + t + tx];
        Bs[ty][tx] = B[(t + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}""", lambda r: [r.random(SGEMM_N * SGEMM_N, np.float32), r.random(SGEMM_N * SGEMM_N, np.float32),
                 np.zeros(SGEMM_N * SGEMM_N, np.float32), np.int32(SGEMM_N)],
    (SGEMM_N, SGEMM_N), (16, 16),
    lambda i, o: close(o[2].reshape(SGEMM_N, SGEMM_N)[:64],
                       (i[0].reshape(SGEMM_N, SGEMM_N)[:64].astype(np.float64)
                        @ i[1].reshape(SGEMM_N, SGEMM_N).astype(np.float64)), rtol=1e-3, atol=1e-2),
    (3 * 4 * SGEMM_N * SGEMM_N, 2 * SGEMM_N ** 3))

T_N = 8192
kernel("transpose", r"""
#define TILE 32
__kernel void transpose(__global const float *in, __global float *out, int n) {
    __local float tile[TILE][TILE + 1];
    int x = get_global_id(0), y = get_global_id(1);
    int lx = get_local_id(0), ly = get_local_id(1);
    tile[ly][lx] = in[y * n + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = get_group_id(1) * TILE + lx, oy = get_group_id(0) * TILE + ly;
    out[oy * n + ox] = tile[lx][ly];
}""", lambda r: [r.random(T_N * T_N, np.float32), np.zeros(T_N * T_N, np.float32), np.int32(T_N)],
    (T_N, T_N), (32, 32), lambda i, o: close(o[1].reshape(T_N, T_N), i[0].reshape(T_N, T_N).T),
    (2 * 4 * T_N * T_N, 0))

S_N = 8192
kernel("stencil", r"""
__kernel void stencil(__global const float *in, __global float *out, int n) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
        out[y * n + x] = in[y * n + x];
        return;
    }
    out[y * n + x] = 0.2f * (in[y * n + x] + in[y * n + x - 1] + in[y * n + x + 1]
                             + in[(y - 1) * n + x] + in[(y + 1) * n + x]);
}""", lambda r: [r.random(S_N * S_N, np.float32), np.zeros(S_N * S_N, np.float32), np.int32(S_N)],
    (S_N, S_N), (32, 8), None, (2 * 4 * S_N * S_N, 5 * S_N * S_N))

kernel("histogram", r"""
__kernel void histogram(__global const unsigned *data, __global unsigned *bins, unsigned n) {
    __local unsigned local_bins[256];
    size_t lid = get_local_id(0);
    local_bins[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&local_bins[data[i] & 255u]);
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&bins[lid], local_bins[lid]);
}""", lambda r: [r.integers(0, 1 << 32, N1, dtype=np.uint32), np.zeros(256, np.uint32), np.uint32(N1)],
    (1024 * 256,), (256,), None, (4 * N1, 0))

kernel("math", r"""
__kernel void math(__global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    float v = x[i];
    y[i] = sin(v) * exp(-v * v) + sqrt(fabs(v)) + log(1.0f + v * v);
}""", lambda r: [(r.random(N1, np.float32) - 0.5) * 8, np.zeros(N1, np.float32)], (N1,), (256,),
    lambda i, o: close(o[1], np.sin(i[0]) * np.exp(-i[0] * i[0]) + np.sqrt(np.abs(i[0])) + np.log1p(i[0] * i[0]),
                       rtol=1e-4, atol=1e-5), (2 * 4 * N1, 0))


def run_pyplat(name, spec, inputs, reps, wall_reps):
    import pyopencl as cl
    platform = [p for p in cl.get_platforms() if p.name == "PyPlat"][0]
    gpu = [d for d in platform.get_devices() if d.type & cl.device_type.GPU][0]
    ctx = cl.Context([gpu])
    q = cl.CommandQueue(ctx, gpu, properties=cl.command_queue_properties.PROFILING_ENABLE)
    k = getattr(cl.Program(ctx, spec["source"]).build(), name)
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) if isinstance(a, np.ndarray) else a
            for a in inputs]
    k(q, spec["global_size"], spec["local_size"], *bufs).wait()       # brings inputs over, builds
    outputs = [np.empty_like(a) for a in inputs if isinstance(a, np.ndarray)]
    for host, buf in zip(outputs, [b for b in bufs if isinstance(b, cl.Buffer)]):
        cl.enqueue_copy(q, host, buf)
    q.finish()
    runs = [k(q, spec["global_size"], spec["local_size"], *bufs) for _ in range(reps)]
    q.finish()
    device = min((e.profile.end - e.profile.start) * 1e-9 for e in runs)
    t = time.perf_counter()
    for _ in range(wall_reps):
        k(q, spec["global_size"], spec["local_size"], *bufs)
    q.finish()
    wall = (time.perf_counter() - t) / wall_reps
    return outputs, device, wall


def run_cupy(name, spec, inputs, reps, wall_reps):
    import cupy as cp
    k = cp.RawKernel(CUDA_PRELUDE + spec["source"], name)
    args = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs]
    block = tuple(spec["local_size"]) + (1,) * (3 - len(spec["local_size"]))
    grid = tuple(g // b for g, b in zip(spec["global_size"], block)) + (1,) * (3 - len(spec["global_size"]))
    k(grid, block, tuple(args))
    cp.cuda.Device().synchronize()
    outputs = [cp.asnumpy(a) for a in args if isinstance(a, cp.ndarray)]
    times = []
    for _ in range(reps):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        k(grid, block, tuple(args))
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
    t = time.perf_counter()
    for _ in range(wall_reps):
        k(grid, block, tuple(args))
    cp.cuda.Device().synchronize()
    wall = (time.perf_counter() - t) / wall_reps
    return outputs, min(times), wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--wall-reps", type=int, default=50)
    ap.add_argument("names", nargs="*", default=list(KERNELS))
    opts = ap.parse_args()
    rng = np.random.default_rng(1)
    rows, ratios, wall_ratios, failed = [], [], [], 0
    for name in opts.names:
        spec = KERNELS[name]
        inputs = spec["args"](rng)
        ours, t_ours, w_ours = run_pyplat(name, spec, inputs, opts.reps, opts.wall_reps)
        theirs, t_cuda, w_cuda = run_cupy(name, spec, inputs, opts.reps, opts.wall_reps)
        same = all(np.allclose(a, b, rtol=1e-4, atol=1e-4) for a, b in zip(ours, theirs))
        check = spec["check"](inputs, ours) if spec["check"] else None
        ok = same and check is None
        failed += not ok
        moved, flops = spec["work"]
        rate = f"{flops / t_ours / 1e9:8.0f} GFLOP/s" if name == "sgemm" else f"{moved / t_ours / 1e9:8.0f} GB/s  "
        ratios.append(t_cuda / t_ours)
        wall_ratios.append(w_cuda / w_ours)
        rows.append(f"{name:10} {t_ours * 1e3:9.3f} {t_cuda * 1e3:9.3f}  {rate} {t_cuda / t_ours:6.2f}   "
                    f"{w_ours * 1e3:9.3f} {w_cuda * 1e3:9.3f} {w_cuda / w_ours:6.2f}   "
                    f"{'ok' if ok else 'MISMATCH ' + (check or 'PyPlat and CUDA differ')}")
    print(f"{'kernel':10} {'PyPlat ms':>9} {'CUDA ms':>9}  {'PyPlat rate':>15} {'CUDA/PyPlat':>6}   "
          f"{'wall PyPlat':>9} {'wall CUDA':>9} {'ratio':>6}   result")
    print("\n".join(rows))
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    geo_wall = math.exp(sum(map(math.log, wall_ratios)) / len(wall_ratios))
    print(f"geomean CUDA/PyPlat: device time {geo:.2f}, wall time per launch {geo_wall:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
