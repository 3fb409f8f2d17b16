"""Side-by-side scheduler benchmarks (thesis chapter 5): PyPlat and PoCL in one run per worker count.

    python bench/run.py [--workers 1,2] [--scale 1]

Builds bench/sched_bench.c against the system loader, runs it on each platform with the same
number of worker threads (PyPlat: PYPLAT_WORKERS; PoCL: POCL_CPU_MAX_CU_COUNT/POCL_MAX_PTHREAD_COUNT)
and prints microseconds per kernel, the speedup over one worker, and the ratio PyPlat/PoCL
(lower is better for PyPlat). Also the enqueue cost per command from pyopencl, and what the
machine allows without any runtime: the in-order parallelisation's work on plain threads
(bench/threads_bound.c), whose speedup bounds that benchmark's.
"""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def build(tmp):
    exe = Path(tmp) / "sched_bench"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(HERE / "sched_bench.c"), "-lOpenCL"], check=True)
    return exe


def threads_bound(tmp, workers):
    """µs per unit of the in-order parallelisation's work on n plain threads, for each n."""
    exe = Path(tmp) / "threads_bound"
    subprocess.run(["cc", "-O2", "-march=native", "-o", str(exe), str(HERE / "threads_bound.c"), "-lpthread"],
                   check=True)
    out = subprocess.run([str(exe)] + [str(w) for w in workers], capture_output=True, text=True, check=True)
    return {int(line.split("\t")[1]): float(line.split("\t")[2]) for line in out.stdout.splitlines()}


def run(exe, platform, workers, scale):
    env = dict(os.environ, PYPLAT_WORKERS=str(workers), POCL_CPU_MAX_CU_COUNT=str(workers),
               POCL_MAX_PTHREAD_COUNT=str(workers))
    cmd = [str(exe), platform, str(scale)]
    if platform == "PyPlat":
        cmd = [sys.executable, "-m", "pyplat.cli", "run"] + cmd
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if out.returncode:
        sys.exit(f"{platform} failed:\n{out.stderr}")
    rows = {}
    for line in out.stdout.splitlines():
        name, param, us = line.split("\t")
        rows[(name, param)] = float(us)
    return rows


PYOPENCL_ENQUEUE = r"""
import sys, time, numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if sys.argv[1] in p.name][0]
ctx = cl.Context(plat.get_devices()[:1]); q = cl.CommandQueue(ctx)
k = cl.Program(ctx, "__kernel void k(__global float *o) { o[0] = 1; }").build().k
b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64); k.set_arg(0, b)
ev = cl.enqueue_nd_range_kernel(q, k, (1,), (1,)); q.finish()
n = 2000; t = time.perf_counter()
for _ in range(n):
    ev = cl.enqueue_nd_range_kernel(q, k, (1,), (1,), wait_for=[ev])
t = (time.perf_counter() - t) / n * 1e6; q.finish(); print(f"{t:.3f}")
"""


def pyopencl_enqueue(platform):
    cmd = [sys.executable, "-c", PYOPENCL_ENQUEUE, platform]
    if platform == "PyPlat":
        cmd = [sys.executable, "-m", "pyplat.cli", "run"] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=tempfile.gettempdir())
    return float(out.stdout.strip()) if out.returncode == 0 else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", default=",".join(str(w) for w in sorted({1, os.cpu_count() or 1})))
    ap.add_argument("--scale", type=int, default=1)
    args = ap.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp)
        results = {w: {p: run(exe, p, w, args.scale) for p in ("PyPlat", "Portable")} for w in workers}
        bound = threads_bound(tmp, workers)
    keys = list(results[workers[0]]["PyPlat"])
    head = f"{'benchmark':28s}{'param':>6s}" + "".join(
        f"{'w=' + str(w) + ' PyPlat':>14s}{'PoCL':>10s}{'ratio':>8s}" for w in workers)
    if len(workers) > 1:
        head += f"{'speedup PyPlat':>16s}{'PoCL':>8s}"
    print("µs per kernel (ratio = PyPlat/PoCL, speedup = first/last worker count)")
    print(head)
    for key in keys:
        line = f"{key[0]:28s}{key[1]:>6s}"
        for w in workers:
            a, b = results[w]["PyPlat"][key], results[w]["Portable"][key]
            line += f"{a:14.2f}{b:10.2f}{a / b:8.2f}"
        if len(workers) > 1:
            f, l = results[workers[0]], results[workers[-1]]
            line += f"{f['PyPlat'][key] / l['PyPlat'][key]:16.2f}{f['Portable'][key] / l['Portable'][key]:8.2f}"
        print(line)
    a, b = pyopencl_enqueue("PyPlat"), pyopencl_enqueue("Portable")
    print(f"\nenqueue per command from pyopencl (wait list of 1): PyPlat {a:.2f} µs, PoCL {b:.2f} µs, "
          f"ratio {a / b:.1f}")
    print("plain threads, the in-order parallelisation's work (µs per unit): " +
          ", ".join(f"{w}: {bound[w]:.2f}" for w in workers) +
          (f"; speedup {bound[workers[0]] / bound[workers[-1]]:.2f}" if len(workers) > 1 else ""))


if __name__ == "__main__":
    main()
