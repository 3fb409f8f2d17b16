"""Kernels with barriers and local memory on PyPlat and PoCL side by side (issue 15, parts 3 and 5).

    python bench/barrier_kernels.py [--workers 1,2] [--repeat 7] [--scale 1] [--kernels vadd,reduction]

Five kernels through pyopencl, each platform and worker count in a child process of its own
(``pyplat run`` for PyPlat; PYPLAT_WORKERS=n, POCL_CPU_MAX_CU_COUNT=n, POCL_MAX_PTHREAD_COUNT=n as
in bench/run.py):

* ``vadd``: c = a + b over 2^24 floats, no barrier: the memory reference (12 bytes per item);
* ``reduction``: pyopencl ``ReductionKernel`` float sum of 2^24 floats (4 bytes per item);
* ``transpose``: 4096² floats through a 16×16 ``__local`` tile, 16×16 groups (8 bytes per item);
* ``scan``: pyopencl ``InclusiveScanKernel`` int32 sum of 2^24 items (8 bytes per item);
* ``histogram``: 256 bins of 2^24 uint32 keys (low byte) with ``atomic_inc`` on ``__local``
  bins, merged with global atomics (4 bytes per item).

``--scale s`` divides the sizes by s (transpose side by √s). Every result is checked against
numpy before timing; the time of a call is enqueue + ``finish``, median of ``--repeat`` calls after
one warm-up call. Prints GB/s (nominal bytes: what the kernel must read and write once), the
ratio PyPlat/PoCL (> 1: PyPlat faster) and the reduction's GB/s as a fraction of the vector
add's on the same platform (issue 15's goal: ≥ 0.6). Kernel caches stay as they are: only
steady-state run time is measured. The machine's load matters: repeat on a shared machine.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

KERNELS = ("vadd", "reduction", "transpose", "scan", "histogram")

CHILD = r"""
import json, sys, time
import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pyopencl.reduction import ReductionKernel
from pyopencl.scan import InclusiveScanKernel

platform_name, scale, repeat, wanted = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(",")
plat = [p for p in cl.get_platforms() if platform_name in p.name][0]
ctx = cl.Context(plat.get_devices()[:1])
q = cl.CommandQueue(ctx)
rng = np.random.default_rng(5)
n = (1 << 24) // scale
side = int(4096 / scale ** 0.5) // 16 * 16

SRC = '''
__kernel void vadd(__global const float *a, __global const float *b, __global float *c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}
#define TILE 16
__kernel void transpose(__global float *out, __global const float *in, int width, int height) {
    __local float tile[TILE][TILE + 1];
    int gx = get_group_id(0) * TILE, gy = get_group_id(1) * TILE;
    int lx = get_local_id(0), ly = get_local_id(1);
    tile[ly][lx] = in[(gy + ly) * width + gx + lx];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[(gx + ly) * height + gy + lx] = tile[lx][ly];
}
__kernel void histogram(__global const uint *keys, uint n, __global uint *bins) {
    __local uint local_bins[256];
    uint lid = get_local_id(0), lsize = get_local_size(0);
    for (uint b = lid; b < 256; b += lsize)
        local_bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&local_bins[keys[i] & 255u]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = lid; b < 256; b += lsize)
        if (local_bins[b])
            atomic_add(&bins[b], local_bins[b]);
}
'''
prg = cl.Program(ctx, SRC).build()
cases = {}

if "vadd" in wanted:
    a = cla.to_device(q, rng.random(n, dtype=np.float32))
    b = cla.to_device(q, rng.random(n, dtype=np.float32))
    c = cla.empty_like(a)
    def vadd(k=prg.vadd):
        k(q, (n,), None, a.data, b.data, c.data)
    def check():
        return np.array_equal(c.get(), a.get() + b.get())
    cases["vadd"] = (vadd, check, 12 * n)

if "reduction" in wanted:
    x = cla.to_device(q, rng.random(n, dtype=np.float32))
    red = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b", map_expr="x[i]",
                          arguments="__global const float *x")
    box = {}
    def reduction():
        box["r"] = red(x, queue=q)
    def check():
        ref = x.get().astype(np.float64).sum()
        return abs(float(box["r"].get()) - ref) <= 1e-4 * ref
    cases["reduction"] = (reduction, check, 4 * n)

if "transpose" in wanted:
    src = cla.to_device(q, rng.random((side, side), dtype=np.float32))
    dst = cla.empty_like(src)
    def transpose(k=prg.transpose):
        k(q, (side, side), (16, 16), dst.data, src.data, np.int32(side), np.int32(side))
    def check():
        return np.array_equal(dst.get(), src.get().T)
    cases["transpose"] = (transpose, check, 8 * side * side)

if "scan" in wanted:
    s_in = cla.to_device(q, rng.integers(0, 100, n, dtype=np.int32))
    s_out = cla.empty_like(s_in)
    scan = InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")
    def do_scan():
        scan(s_in, s_out, queue=q)
    def check():
        return np.array_equal(s_out.get(), np.cumsum(s_in.get(), dtype=np.int32))
    cases["scan"] = (do_scan, check, 8 * n)

if "histogram" in wanted:
    keys = cla.to_device(q, rng.integers(0, 1 << 32, n, dtype=np.uint32))
    bins = cla.zeros(q, 256, np.uint32)
    groups = 8 * 64                    # enough groups for 64 workers; each strides over the keys
    def histogram(k=prg.histogram):
        bins.fill(0, queue=q)
        k(q, (groups * 256,), (256,), keys.data, np.uint32(n), bins.data)
    def check():
        return np.array_equal(bins.get(), np.bincount(keys.get() & 255, minlength=256).astype(np.uint32))
    cases["histogram"] = (histogram, check, 4 * n)

out = {"device": plat.get_devices()[0].name, "kernels": {}}
for name in wanted:
    call, check, nbytes = cases[name]
    call(); q.finish()                 # first launch: builds, plans, caches
    if not check():
        raise SystemExit("wrong %s result on %s" % (name, platform_name))
    times = []
    for _ in range(repeat):
        t = time.perf_counter(); call(); q.finish(); times.append(time.perf_counter() - t)
    times.sort()
    out["kernels"][name] = {"median_s": times[len(times) // 2], "min_s": times[0], "bytes": nbytes}
print("RESULT " + json.dumps(out))
"""


def run_child(platform, workers, scale, repeat, kernels):
    env = dict(os.environ, PYPLAT_WORKERS=str(workers), POCL_CPU_MAX_CU_COUNT=str(workers),
               POCL_MAX_PTHREAD_COUNT=str(workers))
    cmd = [sys.executable, "-c", CHILD, platform, str(scale), str(repeat), ",".join(kernels)]
    if platform == "PyPlat":
        pyplat = shutil.which("pyplat") or os.path.join(os.path.dirname(sys.executable), "pyplat")
        cmd = [pyplat, "run", "--"] + cmd
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise SystemExit("%s, %d workers failed (rc %d):\n%s%s" % (platform, workers, proc.returncode,
                                                              proc.stdout, proc.stderr[-3000:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", default=",".join(str(w) for w in sorted({1, os.cpu_count() or 1})))
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--json", help="also write the raw results here")
    args = ap.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    kernels = args.kernels.split(",")
    results = {w: {p: run_child(p, w, args.scale, args.repeat, kernels) for p in ("PyPlat", "Portable")}
               for w in workers}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({str(w): r for w, r in results.items()}, f, indent=1)
    first = results[workers[0]]
    print("barrier kernels, GB/s (nominal bytes), median of %d; ratio = PyPlat/PoCL throughput (> 1: PyPlat "
          "faster); devices: PyPlat: %s; PoCL: %s" % (args.repeat, first["PyPlat"]["device"],
                                                       first["Portable"]["device"]))
    head = "| kernel |" + "".join(" w=%d PyPlat | PoCL | ratio |" % w for w in workers)
    print(head)
    print("|---" * (head.count("|") - 1) + "|")

    def gbs(r, name):
        k = r["kernels"][name]
        return k["bytes"] / k["median_s"] / 1e9
    for name in kernels:
        row = "| %s |" % name
        for w in workers:
            a, b = gbs(results[w]["PyPlat"], name), gbs(results[w]["Portable"], name)
            row += " %.2f | %.2f | %.2f |" % (a, b, a / b)
        print(row)
    if "vadd" in kernels and "reduction" in kernels:
        print("reduction / vadd bytes per second (goal >= 0.6): " + "; ".join(
            "w=%d PyPlat %.2f, PoCL %.2f" % (w, gbs(results[w]["PyPlat"], "reduction") / gbs(results[w]["PyPlat"], "vadd"),
                                             gbs(results[w]["Portable"], "reduction") / gbs(results[w]["Portable"], "vadd"))
            for w in workers))


if __name__ == "__main__":
    main()
