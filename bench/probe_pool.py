"""Where the time of independent single-group kernels goes (kernel_imbalance of sched_bench.c):
per rep, P kernels on an out-of-order profiling queue, then clFinish. Prints, per worker count,
µs per kernel, the kernels' own run time (profiling START..END), the delay from enqueue to
START, and the mean concurrency (sum of run times / wall time), for PyPlat and PoCL.

    python bench/probe_pool.py [--kernels 64] [--reps 20] [--iters 20000]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

SRC = """
__kernel void spin(__global float *out, int iters) {
    float x = (float)get_global_id(0);
    for (int i = 0; i < iters; i++) x = x * 0.999f + 0.5f;
    out[get_global_id(0)] = x;
}
"""


def probe(platform_name, kernels, reps, iters):
    import numpy as np
    import pyopencl as cl
    plat = next(p for p in cl.get_platforms() if platform_name in p.name)
    ctx = cl.Context(plat.get_devices()[:1])
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
                        | cl.command_queue_properties.PROFILING_ENABLE)
    k = cl.Program(ctx, SRC).build().spin
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 4096)
    k.set_args(out, np.int32(iters))
    walls, runs, delays, conc, outside = [], [], [], [], []
    for r in range(reps + 2):
        t0 = time.perf_counter()
        evs = [cl.enqueue_nd_range_kernel(q, k, (1,), (1,), global_work_offset=(j,)) for j in range(kernels)]
        q.finish()
        wall = (time.perf_counter() - t0) * 1e6
        if r < 2:
            continue
        starts = [e.profile.start for e in evs]
        ends = [e.profile.end for e in evs]
        queued = [e.profile.queued for e in evs]
        walls.append(wall / kernels)
        runs.append(statistics.mean((b - a) / 1e3 for a, b in zip(starts, ends)))
        delays.append(statistics.mean((s - qd) / 1e3 for s, qd in zip(starts, queued)))
        conc.append(sum((b - a) for a, b in zip(starts, ends)) / 1e3 / wall)
        outside.append(wall - (max(ends) - min(queued)) / 1e3)
    return (statistics.median(walls), statistics.median(runs), statistics.median(delays), statistics.median(conc),
            statistics.median(outside))


READERS = """
__kernel void reader(__global const float *in, __global float *out, int iters) {
    float x = in[get_global_id(0)];
    for (int i = 0; i < iters; i++) x = x * 0.999f + 0.5f;
    out[get_global_id(0)] = x;
}
"""


def probe_inorder(kernels, reps, iters):
    """PyPlat only: sched_bench's in-order parallelisation (kernels reading one input, each
    writing its own output, one in-order queue). The command timestamps PyPlat keeps for every
    command (its profiling data) are read in process, since a profiling queue would be serial."""
    import numpy as np
    import pyopencl as cl
    from pyplat.api import handles
    from pyplat.core.event import Event
    plat = next(p for p in cl.get_platforms() if "PyPlat" in p.name)
    ctx = cl.Context(plat.get_devices()[:1])
    q = cl.CommandQueue(ctx)
    prog = cl.Program(ctx, READERS).build()
    inp = cl.Buffer(ctx, cl.mem_flags.READ_ONLY, 4096)
    cl.enqueue_fill_buffer(q, inp, np.float32(0), 0, 4096)
    ks, outs = [], []
    for j in range(kernels):
        k = cl.Kernel(prog, "reader")
        outs.append(cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4096))   # kernels do not keep them alive
        k.set_args(inp, outs[-1], np.int32(iters))
        ks.append(k)
    q.finish()
    for r in range(2):
        t0 = time.perf_counter()
        evs = [cl.enqueue_nd_range_kernel(q, k, (1,), (1,)) for _ in range(reps) for k in ks]
        q.finish()
        wall = (time.perf_counter() - t0) * 1e6
    times = [handles.lookup(e.int_ptr, Event, -58).command.times for e in evs]
    t_first = min(t[0] for t in times)
    runs = [(t[3] - t[2]) / 1e3 for t in times]
    waits = [(t[2] - t[0]) / 1e3 for t in times]
    enq_end = (max(t[0] for t in times) - t_first) / 1e3
    end = (max(t[4] for t in times) - t_first) / 1e3
    print(f"{wall / len(evs):.2f} µs/kernel, run {statistics.mean(runs):.1f} µs, queued->start mean "
          f"{statistics.mean(waits):.0f} µs, concurrency {sum(runs) / end:.2f}, enqueue done at "
          f"{enq_end:.0f} µs, last end {end:.0f} µs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", type=int, default=64)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--workers", default="1,8,16")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--inorder", action="store_true", help="sched_bench's in-order parallelisation, PyPlat")
    a = ap.parse_args()
    if a.inorder:
        if os.environ.get("PYPLAT_WORKERS"):
            probe_inorder(a.kernels, a.reps, a.iters)
            return
        for w in a.workers.split(","):
            r = subprocess.run([sys.executable, __file__, "--inorder", "--kernels", str(a.kernels), "--reps",
                                str(a.reps), "--iters", str(a.iters)], env=dict(os.environ, PYPLAT_WORKERS=w),
                               capture_output=True, text=True, timeout=300)
            print(f"w={w:>2} {r.stdout.strip()} {r.stderr[-300:] if r.returncode else ''}")
        return
    if a.one:
        print(*probe(a.one[0], a.kernels, a.reps, a.iters))
        return
    print(f"{a.kernels} kernels per rep: µs/kernel, run µs, enqueue->start µs, concurrency, µs per rep "
          "outside the first enqueue..last end span (the host's wake-up from clFinish)")
    for w in a.workers.split(","):
        for name in ("PyPlat", "Portable"):
            env = dict(os.environ, PYPLAT_WORKERS=w, POCL_MAX_PTHREAD_COUNT=w, POCL_CPU_MAX_CU_COUNT=w)
            r = subprocess.run([sys.executable, __file__, "--kernels", str(a.kernels), "--reps", str(a.reps),
                                "--iters", str(a.iters), "--one", name, w], env=env, capture_output=True,
                               text=True, timeout=300)
            vals = r.stdout.split()
            if r.returncode or len(vals) != 5:
                print(f"w={w:>2} {name:8s} failed: {r.stderr[-300:]}")
                continue
            wall, run, delay, conc, outside = map(float, vals)
            print(f"w={w:>2} {name:8s} {wall:8.2f} {run:8.2f} {delay:9.1f} {conc:6.2f} {outside:8.1f}")


if __name__ == "__main__":
    main()
