"""CLBlast's SGEMM on PyPlat and PoCL side by side: C = A·B for square float matrices.

    python bench/clblast_sgemm.py [--sizes 256,512,1024] [--repeat 5] [--platforms PyPlat,Portable]

CLBlast (Debian ``libclblast1``) is called through its C API (``CLBlastSgemm``) with ctypes on
buffers and a queue made by pyopencl; the library compiles its own OpenCL C kernels (with its
default tuning parameters for an unknown device) on the platform under test. Each platform runs
in a child process of its own (``pyplat run`` for PyPlat, so that the loader sees it), with empty
kernel caches (``PYPLAT_CACHE_DIR``/``POCL_CACHE_DIR`` in a fresh temporary directory).

Per size: ``first`` is the first call including CLBlast's kernel builds (ms), ``GFLOP/s`` the
median of ``--repeat`` further calls, each waited for (2·n³ flops per call). Every result is
checked against numpy (relative error < 1e-4) before it is timed. Prints PyPlat / PoCL ratios
(time: < 1 means PyPlat faster; GFLOP/s: > 1 means PyPlat faster). The machine's load matters.
"""
import argparse
import ctypes
import ctypes.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import ctypes, json, sys, time
import numpy as np
import pyopencl as cl

platform_name, sizes, repeat = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], int(sys.argv[3])
lib = ctypes.CDLL(sys.argv[4])
ROW_MAJOR, NO_TRANS = 101, 111
sgemm = lib.CLBlastSgemm
sgemm.restype = ctypes.c_int
sgemm.argtypes = ([ctypes.c_int] * 3 + [ctypes.c_size_t] * 3 + [ctypes.c_float]
                  + [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t] * 2 + [ctypes.c_float]
                  + [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t]
                  + [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p])

plat = [p for p in cl.get_platforms() if platform_name in p.name][0]
ctx = cl.Context(plat.get_devices()[:1])
queue = cl.CommandQueue(ctx)
queue_ptr = ctypes.c_void_p(queue.int_ptr)
out = {"device": plat.get_devices()[0].name, "sizes": {}}
rng = np.random.default_rng(7)
for n in sizes:
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    dc = cl.Buffer(ctx, mf.READ_WRITE, size=a.nbytes)
    def call():
        status = sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0, da.int_ptr, 0, n, db.int_ptr, 0, n,
                       0.0, dc.int_ptr, 0, n, ctypes.byref(queue_ptr), None)
        if status != 0:
            raise SystemExit("CLBlastSgemm returned %d on %s" % (status, platform_name))
        queue.finish()
    t = time.perf_counter(); call(); first = time.perf_counter() - t
    c = np.empty_like(a)
    cl.enqueue_copy(queue, c, dc)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.abs(c - ref).max() / np.abs(ref).max())
    if err > 1e-4:
        raise SystemExit("wrong SGEMM result on %s, n=%d: relative error %g" % (platform_name, n, err))
    times = []
    for _ in range(repeat):
        t = time.perf_counter(); call(); times.append(time.perf_counter() - t)
    out["sizes"][n] = {"first_ms": first * 1e3, "median_s": sorted(times)[len(times) // 2], "err": err}
print("RESULT " + json.dumps(out))
"""


def run_child(platform, sizes, repeat, library):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYPLAT_CACHE_DIR=os.path.join(cache, "pyplat"),
                   POCL_CACHE_DIR=os.path.join(cache, "pocl"))
        cmd = [sys.executable, "-c", CHILD, platform, ",".join(map(str, sizes)), str(repeat), library]
        if platform == "PyPlat":
            pyplat = shutil.which("pyplat") or os.path.join(os.path.dirname(sys.executable), "pyplat")
            cmd = [pyplat, "run", "--"] + cmd
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            if line.startswith("RESULT "):
                return json.loads(line[7:])
        raise SystemExit("%s failed (rc %d):\n%s%s" % (platform, proc.returncode, proc.stdout, proc.stderr[-3000:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="256,512,1024")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--platforms", default="PyPlat,Portable")
    ap.add_argument("--library", default=ctypes.util.find_library("clblast") or "libclblast.so.1")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    platforms = args.platforms.split(",")
    results = {p: run_child(p, sizes, args.repeat, args.library) for p in platforms}
    print("CLBlast SGEMM, C = A*B, n x n float, row-major; devices: "
          + "; ".join("%s: %s" % (p, r["device"]) for p, r in results.items()))
    head = "| n |" + "".join(" %s first (ms) | %s GFLOP/s |" % (p, p) for p in platforms)
    if len(platforms) == 2:
        head += " first ratio | GFLOP/s ratio |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for n in sizes:
        row, cells = "| %d |" % n, []
        for p in platforms:
            s = results[p]["sizes"][str(n)]
            gflops = 2.0 * n ** 3 / s["median_s"] / 1e9
            cells.append((s["first_ms"], gflops))
            row += " %.0f | %.1f |" % (s["first_ms"], gflops)
        if len(platforms) == 2:
            row += " %.2f | %.2f |" % (cells[0][0] / cells[1][0], cells[0][1] / cells[1][1])
        print(row)


if __name__ == "__main__":
    main()
