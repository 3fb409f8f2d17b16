"""Build times of large generated kernels, PyPlat and PoCL side by side (issue 31 part 4).

    python bench/big_kernels.py                 # full sizes, 3 repeats
    python bench/big_kernels.py --quick         # small sizes, 1 repeat (a minute or so)
    python bench/big_kernels.py --cases sha,switch --switch-cases 10000 --repeat 3

Generated OpenCL C, each one program with one kernel:

* ``sha``: a SHA-512-like compression (``--sha-rounds`` rounds and the message schedule written
  out by macros, as password-recovery kernels do) in a helper, called by ``--sha-callers``
  helpers (each hashing twice) which a sha512crypt-like loop calls under conditions;
* ``switch``: one ``switch`` of ``--switch-cases`` cases, each setting a constant (a table);
  ``switch_ops`` (not run unless named) the same with a computation in each case;
* ``nested``: ``--nest-depth`` nested ``for`` loops, each body an ``if``/``else`` chain;
* ``helpers``: ``--helpers`` small helpers, each called ``--calls`` times from the kernel;
* ``bighelper``: one helper of ``--big-statements`` straight-line statements called from
  ``--big-callers`` places.

Every measurement runs in a child process of its own with ``PYOPENCL_NO_CACHE=1``, PyPlat's
cache off (``PYPLAT_CACHE_DIR=off``) and a fresh ``POCL_CACHE_DIR``, so every build is real. The
child first builds a tiny kernel (library start-up is not counted), then times
``clBuildProgram`` (``build``) and build + first launch + ``finish`` (``total``: PoCL compiles
the work-group function lazily at the first launch, so only this column compares the whole
cost). Runs alternate between the platforms; medians over ``--repeat`` are printed in seconds
with the ratio PyPlat/PoCL of ``total``. The children's results (a checksum of the output
buffer) must agree between the platforms.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

CASES = ("sha", "switch", "nested", "helpers", "bighelper")
FULL = dict(sha_rounds=80, sha_callers=6, switch_cases=10000, nest_depth=8, nest_chain=40,
            helpers=200, calls=10, big_statements=600, big_callers=8)
QUICK = dict(sha_rounds=40, sha_callers=3, switch_cases=1000, nest_depth=5, nest_chain=10,
             helpers=50, calls=4, big_statements=150, big_callers=4)


# ---- generators: each returns OpenCL C with `__kernel void k(__global ulong *out)` ----

def gen_sha(rounds, callers):
    """sha512crypt's shape: a long unrolled compression in a helper, many helpers using it."""
    lines = [
        "#define ROTR(x, n) (((x) >> (n)) | ((x) << (64 - (n))))",
        "#define BS0(x) (ROTR(x, 28) ^ ROTR(x, 34) ^ ROTR(x, 39))",
        "#define BS1(x) (ROTR(x, 14) ^ ROTR(x, 18) ^ ROTR(x, 41))",
        "#define SS0(x) (ROTR(x, 1) ^ ROTR(x, 8) ^ ((x) >> 7))",
        "#define SS1(x) (ROTR(x, 19) ^ ROTR(x, 61) ^ ((x) >> 6))",
        "#define CH(x, y, z) (((x) & (y)) ^ (~(x) & (z)))",
        "#define MAJ(x, y, z) (((x) & (y)) ^ ((x) & (z)) ^ ((y) & (z)))",
        "#define ROUND(a, b, c, d, e, f, g, h, k, w) { ulong t1 = h + BS1(e) + CH(e, f, g) + k + w;"
        " ulong t2 = BS0(a) + MAJ(a, b, c); d += t1; h = t1 + t2; }",
        "#define SCHED(w, i) w[(i) & 15] += SS1(w[((i) - 2) & 15]) + w[((i) - 7) & 15]"
        " + SS0(w[((i) - 15) & 15])",
        "void compress(ulong *st, ulong *w) {",
        "  ulong a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6],"
        " h = st[7];",
    ]
    v = "abcdefgh"
    for i in range(rounds):
        r = [v[(j - i) % 8] for j in range(8)]
        k = (0x428a2f98d728ae22 * (i + 1) + 0x7137449123ef65cd) & (2**64 - 1)
        if i >= 16:
            lines.append("  SCHED(w, %d);" % i)
        lines.append("  ROUND(%s, 0x%xUL, w[%d]);" % (", ".join(r), k, i & 15))
    lines.append("  st[0] += a; st[1] += b; st[2] += c; st[3] += d; st[4] += e; st[5] += f;"
                 " st[6] += g; st[7] += h;")
    lines.append("}")
    for c in range(callers):
        lines += [
            "void update%d(ulong *st, ulong x) {" % c,
            "  ulong w[16];",
            "  for (int i = 0; i < 16; i++) w[i] = x * %d + i * st[i & 7];" % (c + 3),
            "  compress(st, w);",
            "  w[%d] ^= st[1];" % (c % 16),
            "  compress(st, w);",
            "}",
        ]
    lines += ["__kernel void k(__global ulong *out) {",
              "  ulong st[8];",
              "  ulong x = get_global_id(0);",
              "  for (int i = 0; i < 8; i++) st[i] = x + i;",
              "  for (int r = 0; r < 3; r++) {"]
    for c in range(callers):
        lines.append("    if ((r + x) %% %d == %d) update%d(st, x + r); else update%d(st, r);"
                     % (c + 2, c % (c + 2), c, (c + 1) % callers))
    lines += ["  }",
              "  out[x] = st[0] ^ st[3] ^ st[7];",
              "}"]
    return "\n".join(lines) + "\n"


def gen_switch(cases):
    """A table written as a switch (opcode dispatch, S-boxes): each case sets a constant."""
    lines = ["__kernel void k(__global ulong *out) {",
             "  ulong x = get_global_id(0);",
             "  ulong acc = 0;",
             "  for (ulong j = 0; j < 4; j++) {",
             "    ulong r = 0;",
             "    switch ((x * 7 + j * 1234567) %% %d) {" % (cases + cases // 10)]
    for c in range(cases):
        lines.append("      case %d: r = %dUL; break;" % (c, (c * 2654435761) % 1000003))
    lines += ["      default: r = j;", "    }", "    acc = acc * 31 + r;", "  }", "  out[x] = acc;", "}"]
    return "\n".join(lines) + "\n"


def gen_switch_ops(cases):
    """A switch whose cases compute (no table): LLVM's block placement is quadratic in it, for
    PoCL too (not in the default set: 3,000 cases take PoCL ~40 s)."""
    lines = ["__kernel void k(__global ulong *out) {",
             "  ulong x = get_global_id(0);",
             "  ulong r = 0;",
             "  for (ulong j = 0; j < 4; j++) {",
             "  switch ((x * 7 + j * 1234567) %% %d) {" % (cases + cases // 10)]
    for c in range(cases):
        op = ("r += x * %d;", "r ^= x + %d;", "r = r * 3 + %d;", "r -= x ^ %d;")[c % 4]
        lines.append("    case %d: %s break;" % (c * 1 + (c // 7), op % (c + 1)))
    lines += ["    default: r += 1;", "  }", "  }", "  out[x] = r;", "}"]
    return "\n".join(lines) + "\n"


def gen_nested(depth, chain):
    lines = ["__kernel void k(__global ulong *out) {",
             "  ulong x = get_global_id(0);",
             "  ulong acc = x;"]
    ind = "  "
    for d in range(depth):
        lines.append(ind + "for (int i%d = 0; i%d < 2; i%d++) {" % (d, d, d))
        ind += "  "
        for c in range(chain):
            kw = "if" if c == 0 else "else if"
            lines.append(ind + "%s ((acc + i%d) %% %d == %d) acc = acc * %d + %d;"
                         % (kw, d, chain + 1, c, 3 + (c % 5), c + d))
        lines.append(ind + "else acc ^= %d;" % (d + 1))
        lines.append(ind + "if (acc & %d) {" % (1 << (d % 16)))
        ind += "  "
    for d in reversed(range(depth)):
        ind = ind[:-2]
        lines.append(ind + "}")
        ind = ind[:-2]
        lines.append(ind + "}")
    lines += ["  out[x] = acc;", "}"]
    return "\n".join(lines) + "\n"


def gen_helpers(helpers, calls):
    lines = []
    for h in range(helpers):
        prev = "h%d(x ^ %d)" % (h - 1, h) if h % 4 else "x * %d" % (h + 1)
        lines.append("ulong h%d(ulong x) { return ((x << %d) | (x >> %d)) + %s; }"
                     % (h, h % 63 + 1, 64 - (h % 63 + 1), prev))
    lines += ["__kernel void k(__global ulong *out) {",
              "  ulong x = get_global_id(0);",
              "  ulong acc = 0;"]
    for c in range(calls):
        for h in range(helpers):
            lines.append("  acc += h%d(x + %d);" % ((h * 7 + c) % helpers, c))
    lines += ["  out[x] = acc;", "}"]
    return "\n".join(lines) + "\n"


def gen_bighelper(statements, callers):
    lines = ["ulong big(ulong a, ulong b) {", "  ulong c = a ^ b, d = a + b;"]
    for s in range(statements):
        lines.append(("  a = a * %d + (b >> %d);", "  b ^= (a << %d) + c * %d;",
                      "  c += d ^ (a * %d) ^ %d;", "  d = (d >> 3) + b * %d + %d;")[s % 4]
                     % (s % 61 + 2, s % 13 + 1))
    lines += ["  return a ^ b ^ c ^ d;", "}",
              "__kernel void k(__global ulong *out) {",
              "  ulong x = get_global_id(0);",
              "  ulong acc = 0;"]
    for c in range(callers):
        lines.append("  if ((x + acc) %% %d != 0) acc += big(x + %d, acc); else acc ^= big(acc, %d);"
                     % (c + 2, c, c))
    lines += ["  out[x] = acc;", "}"]
    return "\n".join(lines) + "\n"


def source(case, s):
    if case == "sha":
        return gen_sha(s["sha_rounds"], s["sha_callers"])
    if case == "switch":
        return gen_switch(s["switch_cases"])
    if case == "switch_ops":
        return gen_switch_ops(s["switch_cases"])
    if case == "nested":
        return gen_nested(s["nest_depth"], s["nest_chain"])
    if case == "helpers":
        return gen_helpers(s["helpers"], s["calls"])
    return gen_bighelper(s["big_statements"], s["big_callers"])


CHILD = r"""
import hashlib, json, sys, time
import numpy as np
if sys.argv[1] == "PyPlat":
    import pyplat
    pyplat.enable()
import pyopencl as cl

platform_name, path = sys.argv[1], sys.argv[2]
plat = [p for p in cl.get_platforms() if platform_name in p.name][0]
ctx = cl.Context(plat.get_devices()[:1])
q = cl.CommandQueue(ctx)
cl.Program(ctx, "__kernel void probe(__global int *o) { o[get_global_id(0)] = 1; }").build()
src = open(path).read()
n = 256
out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, n * 8)
t0 = time.perf_counter()
prg = cl.Program(ctx, src).build()
t1 = time.perf_counter()
prg.k(q, (n,), (64,), out)
q.finish()
t2 = time.perf_counter()
res = np.empty(n, np.uint64)
cl.enqueue_copy(q, res, out)
print(json.dumps({"build": t1 - t0, "total": t2 - t0,
                  "sum": hashlib.sha256(res.tobytes()).hexdigest()[:16]}), flush=True)
"""


def run_child(platform, path, python):
    cache = tempfile.mkdtemp(prefix="big_kernels-")
    env = dict(os.environ, PYOPENCL_NO_CACHE="1", PYPLAT_CACHE_DIR="off",
               POCL_CACHE_DIR=cache, POCL_KERNEL_CACHE="0")
    env.pop("PYOPENCL_CTX", None)
    try:
        out = subprocess.run([python, "-c", CHILD, platform, path], env=env, capture_output=True,
                             text=True, cwd=tempfile.gettempdir(), timeout=3600)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if out.returncode:
        sys.exit(f"{platform} {path} failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["stderr"] = out.stderr
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and 1 repeat by default")
    ap.add_argument("--repeat", type=int, help="repeats (medians are shown), default 3 (quick: 1)")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--platforms", default="PyPlat,Portable",
                    help="two platform name substrings (PyPlat, then the reference)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--keep", help="write the generated sources into this directory")
    ap.add_argument("--json", help="also write the medians to this file")
    sizes = QUICK if "--quick" in (argv if argv is not None else sys.argv) else FULL
    for k, v in sizes.items():
        ap.add_argument("--" + k.replace("_", "-"), type=int, default=v)
    args = ap.parse_args(argv)
    repeat = args.repeat or (1 if args.quick else 3)
    s = {k: getattr(args, k) for k in FULL}
    plats = args.platforms.split(",")
    tmp = args.keep or tempfile.mkdtemp(prefix="big_kernels-src-")
    os.makedirs(tmp, exist_ok=True)
    res = {}
    for case in args.cases.split(","):
        path = os.path.join(tmp, case + ".cl")
        with open(path, "w") as f:
            f.write(source(case, s))
        runs = {p: [] for p in plats}
        for _ in range(repeat):
            for p in plats:                         # alternate: load changes hit both alike
                runs[p].append(run_child(p, path, args.python))
        sums = {r["sum"] for p in plats for r in runs[p]}
        if len(sums) != 1:
            sys.exit(f"{case}: the platforms disagree on the result ({sums})")
        for p in plats:
            res[(case, p)] = {k: statistics.median(r[k] for r in runs[p]) for k in ("build", "total")}
            noise = [ln for r in runs[p] for ln in r["stderr"].splitlines() if "remark" in ln or "warning" in ln]
            print(f"  {case:10s} {p:10s} build={res[(case, p)]['build']:.2f}s "
                  f"total={res[(case, p)]['total']:.2f}s"
                  + (f"  ({len(noise)} remark/warning lines on stderr)" if noise else ""),
                  file=sys.stderr, flush=True)
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    a, b = plats[0], plats[-1]
    print(f"s, median of {repeat}; total = build + first launch + finish; ratio = {a}/{b} of total")
    print(f"{'kernel':10s}{'lines':>7s}{a + ' build':>14s}{a + ' total':>14s}{b[:8] + ' total':>16s}"
          f"{'ratio':>8s}")
    for case in args.cases.split(","):
        ra, rb = res[(case, a)], res[(case, b)]
        lines = source(case, s).count("\n")
        print(f"{case:10s}{lines:7d}{ra['build']:14.2f}{ra['total']:14.2f}{rb['total']:16.2f}"
              f"{ra['total'] / rb['total']:8.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({f"{c}/{p}": v for (c, p), v in res.items()}, f, indent=1)


if __name__ == "__main__":
    main()
