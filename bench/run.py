"""Side-by-side scheduler benchmarks (thesis chapter 5): PyPlat and PoCL in one run per worker count.

    python bench/run.py [--workers 1,2] [--scale 1]
    python bench/run.py api [--reps 3] [--scale 1] [--mixed 12500] [--threads 1,8] [--markdown]

Builds bench/sched_bench.c against the system loader, runs it on each platform with the same
number of worker threads (PyPlat: PYPLAT_WORKERS; PoCL: POCL_CPU_MAX_CU_COUNT/POCL_MAX_PTHREAD_COUNT)
and prints microseconds per kernel, the speedup over one worker, and the ratio PyPlat/PoCL
(lower is better for PyPlat). Also the enqueue cost per command from pyopencl, and what the
machine allows without any runtime: the in-order parallelisation's work on plain threads
(bench/threads_bound.c), whose speedup bounds that benchmark's.

`api` times OpenCL API calls from C instead (bench/api_bench.c: create/release and retain/release
of every object kind, queries, small commands, a mixed command stream from 1 and 8 host threads),
PyPlat and PoCL alternating for --reps repetitions, and prints medians, ranges and the ratio
PyPlat/PoCL of the medians (--markdown: the same table for docs/history/performance-log.md).
"""
import argparse
import os
import statistics
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


def run_api(exe, platform, args):
    """One api_bench run: {name: (count, µs per operation)}; a failed or wrong run stops here."""
    env = dict(os.environ, PYPLAT_WORKERS=str(args.workers), POCL_CPU_MAX_CU_COUNT=str(args.workers),
               POCL_MAX_PTHREAD_COUNT=str(args.workers), API_BENCH_THREADS=args.threads)
    cmd = [str(exe), platform, str(args.scale), str(args.mixed)]
    if platform == "PyPlat":
        cmd = [sys.executable, "-m", "pyplat.cli", "run", "--"] + cmd
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if out.returncode:
        sys.exit(f"api_bench on {platform} failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    rows = {}
    for line in out.stdout.splitlines():
        name, count, us = line.split("\t")
        rows[name] = (int(count), float(us))
    return rows


def api_table(runs, platforms):
    """Rows of (name, count, {platform: (median, low, high)}) in the bench's order."""
    # the bench's order, from the run with the most rows (one platform may skip some)
    names = list(max((r for p in platforms for r in runs[p]), key=len))
    names += [n for p in platforms for r in runs[p] for n in r if n not in names]
    names = list(dict.fromkeys(names))
    table = []
    for name in names:
        stats, count = {}, 0
        for p in platforms:
            values = [r[name][1] for r in runs[p] if name in r]
            if values:
                count = max(count, max(r[name][0] for r in runs[p] if name in r))
                stats[p] = (statistics.median(values), min(values), max(values))
        table.append((name, count, stats))
    return table


def api_main(argv):
    ap = argparse.ArgumentParser(prog="bench/run.py api", description="API call costs, PyPlat next to PoCL")
    ap.add_argument("--reps", type=int, default=3, help="runs per platform, alternating (default 3)")
    ap.add_argument("--scale", type=float, default=1.0, help="loop counts multiplied (0.01: a quick check)")
    ap.add_argument("--mixed", type=int, default=12500, help="mixed-stream commands per host thread")
    ap.add_argument("--threads", default="1,8", help="host thread counts of the mixed stream")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="device worker threads")
    ap.add_argument("--platforms", default="PyPlat,Portable", help="PyPlat, then the reference")
    ap.add_argument("--markdown", action="store_true", help="also print the table as markdown")
    args = ap.parse_args(argv)
    platforms = args.platforms.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "api_bench"
        subprocess.run(["cc", "-O2", "-o", str(exe), str(HERE / "api_bench.c"), "-lOpenCL", "-lpthread"],
                       check=True)
        runs = {p: [] for p in platforms}
        for rep in range(args.reps):
            for p in platforms:
                runs[p].append(run_api(exe, p, args))
            print(f"  repetition {rep + 1} of {args.reps} done", file=sys.stderr, flush=True)
    table = api_table(runs, platforms)
    a, b = platforms[0], platforms[-1]
    short = {"Portable": "PoCL"}
    la, lb = short.get(a, a), short.get(b, b)

    def us(v):
        return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}" if v >= 1 else f"{v:.3f}"

    def cell(stats, p, dash="-"):
        return f"{us(stats[p][0])} ({us(stats[p][1])}{dash}{us(stats[p][2])})" if p in stats else "-"

    def ratio(stats):
        if a not in stats or b not in stats or stats[b][0] <= 0:
            return "-"
        r = stats[a][0] / stats[b][0]
        return f"{r:.2f}" if r < 1 else f"{r:.1f}"

    print(f"µs per operation, median of {args.reps} runs (low-high); ratio = {la}/{lb} of the medians; "
          f"mixed stream: {args.mixed} commands per host thread, workers {args.workers}")
    print(f"{'call':34s}{'count':>8s}{la:>24s}{lb:>24s}{'ratio':>8s}")
    for name, count, stats in table:
        print(f"{name:34s}{count:8d}{cell(stats, a):>24s}{cell(stats, b):>24s}{ratio(stats):>8s}")
    for name, count, stats in table:
        if name.startswith("mixed_stream"):
            wall = {p: f"{stats[p][0] * count / 1e6:.3f}" if p in stats else "-" for p in (a, b)}
            print(f"{name}: {count} commands, wall time of the medians {la} {wall[a]} s, {lb} {wall[b]} s")
    if args.markdown:
        print(f"\n| call | count | {la} µs | {lb} µs | ratio |\n|---|---:|---:|---:|---:|")
        for name, count, stats in table:
            print(f"| `{name}` | {count} | {cell(stats, a, '–')} | {cell(stats, b, '–')} | {ratio(stats)} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["api"]:
        api_main(sys.argv[2:])
    else:
        main()
