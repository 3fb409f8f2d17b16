"""What pyopencl's array operations cost a call, PyPlat and PoCL side by side (issue 15: the
host-side cost of the calls programs repeat). Each operation makes temporaries, sets arguments
one by one, launches and releases the temporaries while launches are pending -- the pattern
that crossed into Python on every call until the native paths took it over.

    python bench/pyopencl_calls.py [--workers 1,16] [--repeat 5] [--calls 300]

Every configuration runs in a child process of its own (one platform, one worker count, a
context of the platform's first CPU device: on a machine with an NVIDIA GPU, PyPlat's
all-device context would move memory between the two, which the native paths leave to Python);
printed: microseconds per call to enqueue (the host's cost) and to finish (with the kernels),
medians of --repeat batches of --calls calls, and the ratio PyPlat / PoCL (lower is better).
"""
import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys, time
import numpy as np
import pyopencl as cl, pyopencl.array as cla
platform, repeat, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
p = [p for p in cl.get_platforms() if p.name.startswith(platform)][0]
ctx = cl.Context(p.get_devices(cl.device_type.CPU)[:1])   # (a GPU too would make it move memory)
q = cl.CommandQueue(ctx)
small = cla.to_device(q, np.arange(1024, dtype=np.float32))
mid = cla.to_device(q, np.arange(1 << 16, dtype=np.float32))
ops = {
    "sum_1k": lambda: cla.sum(small),
    "sum_64k": lambda: cla.sum(mid),
    "axpy_1k": lambda: 2 * small + small,
    "dot_1k": lambda: cla.dot(small, small),
}
want = {"sum_1k": small.get().sum(), "sum_64k": mid.get().astype(np.float64).sum(),
        "dot_1k": float((small.get().astype(np.float64) ** 2).sum())}
out = {}
for name, op in ops.items():
    for _ in range(20):
        r = op()
    got = r.get()
    if name in want and not np.isclose(float(got), want[name], rtol=1e-4):
        raise SystemExit(f"{name}: {got} != {want[name]}")
    batches = []
    for _ in range(repeat):
        q.finish()
        t0 = time.perf_counter()
        for _ in range(calls):
            r = op()
        t1 = time.perf_counter()
        q.finish()
        t2 = time.perf_counter()
        batches.append(((t1 - t0) / calls * 1e6, (t2 - t0) / calls * 1e6))
    batches.sort()
    out[name] = batches[len(batches) // 2]
print(json.dumps(out))
"""


def run(platform, workers, args):
    env = dict(os.environ, PYPLAT_WORKERS=str(workers), POCL_CPU_MAX_CU_COUNT=str(workers),
               POCL_MAX_PTHREAD_COUNT=str(workers))
    cmd = [sys.executable, "-c", CHILD, platform, str(args.repeat), str(args.calls)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd="/tmp")
    if r.returncode != 0:
        raise SystemExit(f"{platform}, {workers} workers failed:\n{r.stdout}\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", default="1")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args()
    print("µs per call: enqueue / with the kernels finished; ratio PyPlat/PoCL of each")
    for w in [int(x) for x in args.workers.split(",")]:
        ours, pocl = run("PyPlat", w, args), run("Portable", w, args)
        print(f"workers {w}")
        print(f"  {'operation':<10} {'PyPlat':>16} {'PoCL':>16} {'ratio':>12}")
        for name in ours:
            (a1, a2), (b1, b2) = ours[name], pocl[name]
            print(f"  {name:<10} {a1:7.1f} /{a2:7.1f} {b1:7.1f} /{b2:7.1f} {a1 / b1:5.2f} /{a2 / b2:5.2f}")


if __name__ == "__main__":
    main()
