"""Kernel build times, PyPlat and PoCL side by side: cold (empty cache) and cached.

    python bench/build_bench.py [--repeat 3] [--cases elementwise,reduction,scan] [--platforms PyPlat,Portable]

Three pyopencl-generated kernels (pyopencl writes the OpenCL C, the platform compiles it):

* ``elementwise``: ``ElementwiseKernel`` complex axpy ``z[i] = a*x[i] + y[i]`` over ``cfloat_t``
  with ``#include <pyopencl-complex.h>`` (one program);
* ``reduction``: ``ReductionKernel`` float dot product (local memory, barriers; two programs);
* ``scan``: ``InclusiveScanKernel`` over int32 (pyopencl's ``GenericScanKernel``: its large
  barrier-heavy first-level scan, the second-level scan and the update; three programs).

Every measurement runs in a child process of its own (``pyplat run`` for PyPlat), with
``PYOPENCL_NO_CACHE=1`` so that pyopencl's binary cache is out of the way and every
``Program.build`` reaches the platform's compiler. Each child first builds a tiny unrelated kernel
(shown as the ``init`` row: one-time library start-up, e.g. libclang / LLVM initialisation), then
constructs the kernel object and calls it once on small data; a patched ``pyopencl.Program.build``
adds up the time spent in ``clBuildProgram`` (``build``), and ``first run`` is construction plus
first call plus ``finish`` (PoCL generates the work-group code lazily at the first launch, so only
this column compares the whole cost). Then the same again in the same process (``same proc``).

* ``cold``: the first child of a repeat, with fresh, empty cache directories
  (``PYPLAT_CACHE_DIR`` and ``POCL_CACHE_DIR`` point to a new temporary directory);
* ``cached``: a second child with the caches left by the first (a new process);
* ``same proc``: the second construction in the cold child (caches warm, process warm).

Prints medians over ``--repeat`` repeats in ms and the ratio PyPlat/PoCL (< 1: PyPlat faster).
The machine's load matters: run it on an otherwise idle machine for figures worth quoting.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

CASES = ("elementwise", "reduction", "scan")

CHILD = r"""
import json, sys, time
import numpy as np
import pyopencl as cl
import pyopencl.array as cla

platform_name, case = sys.argv[1], sys.argv[2]
spent = [0.0, 0]
_orig_build = cl.Program.build
def _timed_build(self, *a, **kw):
    t = time.perf_counter()
    try:
        return _orig_build(self, *a, **kw)
    finally:
        spent[0] += time.perf_counter() - t
        spent[1] += 1
cl.Program.build = _timed_build

plat = [p for p in cl.get_platforms() if platform_name in p.name][0]
ctx = cl.Context(plat.get_devices()[:1])
q = cl.CommandQueue(ctx)

def make():
    if case == "elementwise":
        from pyopencl.elementwise import ElementwiseKernel
        k = ElementwiseKernel(ctx, "cfloat_t a, cfloat_t *x, cfloat_t *y, cfloat_t *z",
                              "z[i] = cfloat_add(cfloat_mul(a, x[i]), y[i])", "axpy",
                              preamble="#include <pyopencl-complex.h>")
        n = 4096
        x = cla.to_device(q, (np.arange(n) + 1j).astype(np.complex64))
        y = cla.to_device(q, np.ones(n, np.complex64))
        z = cla.empty_like(x)
        def call():
            k(np.complex64(2 - 1j), x, y, z)
            return z
        def check(res):
            xs, ys = x.get(), y.get()
            return np.allclose(res.get(), np.complex64(2 - 1j) * xs + ys)
    elif case == "reduction":
        from pyopencl.reduction import ReductionKernel
        k = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b",
                            map_expr="x[i]*y[i]", arguments="__global const float *x, __global const float *y")
        n = 1 << 16
        x = cla.to_device(q, np.ones(n, np.float32))
        y = cla.to_device(q, np.full(n, 2, np.float32))
        def call():
            return k(x, y)
        def check(res):
            return float(res.get()) == 2.0 * n
    else:
        from pyopencl.scan import InclusiveScanKernel
        k = InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")
        n = 1 << 16
        a = cla.to_device(q, np.ones(n, np.int32))
        def call():
            k(a)
            return a
        def check(res):
            return bool((res.get() == np.arange(1, n + 1)).all())
    return call, check

def measure():
    spent[0], spent[1] = 0.0, 0
    t = time.perf_counter()
    call, check = make()
    res = call()
    q.finish()
    total = time.perf_counter() - t
    ok = check(res)
    return {"build": spent[0] * 1e3, "builds": spent[1], "first": total * 1e3, "ok": ok}

t = time.perf_counter()
cl.Program(ctx, "__kernel void init_probe(__global int *o) { o[get_global_id(0)] = 1; }").build()
init = (time.perf_counter() - t) * 1e3
first = measure()
second = measure()
print(json.dumps({"init": init, "first": first, "second": second}), flush=True)
"""


def run_child(platform, case, cache, python):
    env = dict(os.environ, PYOPENCL_NO_CACHE="1", PYPLAT_CACHE_DIR=os.path.join(cache, "pyplat"),
               POCL_CACHE_DIR=os.path.join(cache, "pocl"), POCL_KERNEL_CACHE="1")
    env.pop("PYOPENCL_CTX", None)
    cmd = [python, "-c", CHILD, platform, case]
    if platform == "PyPlat":
        cmd = [python, "-m", "pyplat.cli", "run", "--"] + cmd
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir(),
                         timeout=600)
    if out.returncode:
        sys.exit(f"{platform} {case} failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    for part in ("first", "second"):
        if not r[part]["ok"]:
            sys.exit(f"{platform} {case}: wrong result")
    return r


def measure(platform, case, repeat, python):
    rows = []
    for _ in range(repeat):
        cache = tempfile.mkdtemp(prefix="build_bench-")
        try:
            cold = run_child(platform, case, cache, python)
            warm = run_child(platform, case, cache, python)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        rows.append({"init": cold["init"],
                     "cold build": cold["first"]["build"], "cold first run": cold["first"]["first"],
                     "cached build": warm["first"]["build"], "cached first run": warm["first"]["first"],
                     "same proc build": cold["second"]["build"],
                     "same proc first run": cold["second"]["first"],
                     "programs": cold["first"]["builds"]})
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


COLUMNS = ("cold build", "cold first run", "cached build", "cached first run", "same proc build",
           "same proc first run")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="repeats (medians are shown), default 3")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--platforms", default="PyPlat,Portable",
                    help="two platform name substrings (PyPlat, then the reference)")
    ap.add_argument("--json", help="also write the medians to this file")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args(argv)
    plats = args.platforms.split(",")
    res = {}
    for case in args.cases.split(","):
        for p in plats:
            res[(case, p)] = measure(p, case, args.repeat, args.python)
            print(f"  {case:12s} {p:10s} " + "  ".join(f"{k}={v:.1f}" for k, v in res[(case, p)].items()),
                  file=sys.stderr, flush=True)
    a, b = plats[0], plats[-1]
    print(f"ms, median of {args.repeat} (ratio = {a}/{b}; 'build' = clBuildProgram, "
          "'first run' = build + first call + finish)")
    print(f"{'kernel':12s}{'progs':>6s}{'what':>20s}{a:>10s}{b[:10]:>10s}{'ratio':>8s}")
    for case in args.cases.split(","):
        ra, rb = res[(case, a)], res[(case, b)]
        print(f"{case:12s}{ra['programs']:6.0f}{'init (tiny kernel)':>20s}{ra['init']:10.1f}{rb['init']:10.1f}"
              f"{ra['init'] / rb['init']:8.2f}")
        for col in COLUMNS:
            print(f"{'':12s}{'':6s}{col:>20s}{ra[col]:10.1f}{rb[col]:10.1f}{ra[col] / rb[col]:8.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({f"{c}/{p}": v for (c, p), v in res.items()}, f, indent=1)


if __name__ == "__main__":
    main()
