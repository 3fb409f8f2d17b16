"""Build times of the compile cache's key (compiler/sourcekey.py): cold build, hit on the same
source, hit after a comment-only edit, hit after a whitespace-only edit, in ms.

    python bench/cache_key_bench.py [--repeat 7]

In process, `pyplat.compiler.build` with a fresh cache directory; each figure is the median of
--repeat builds (the cold build: of --repeat distinct programs, made distinct by a token). The
kernels: a vector add, pyopencl's complex-number header with an axpy (an #include), and two
~100 KB sources (8 kernels calling some of 330 commented helper functions; 487 small kernels,
whose hit is dominated by making 487 KernelInfos, not by the key). Also times the normal form alone on that source.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid

KERNEL = """// vector add
__kernel void vadd(__global const float *a, __global const float *b, __global float *c)
{
    int i = get_global_id(0);   /* one work-item per element */
    c[i] = a[i] + b[i];
}
"""
AXPY = """#define PYOPENCL_DEFINE_CDOUBLE
#include <pyopencl-complex.h>
__kernel void axpy(cfloat_t a, __global cfloat_t *x, __global cfloat_t *y, __global cfloat_t *z)
{
    int i = get_global_id(0);
    z[i] = cfloat_add(cfloat_mul(a, x[i]), y[i]);   // z = a x + y
}
"""


HELPER = """
/* helper %d: a polynomial step, written out in full so that the source is long; comments
   like this one are what edits touch most often */
static float helper%d(float x)
{
    float y = x * %d.0f + 1.0f;     // scale and shift
    y = y * y - x;                   /* square, minus the input */
    return y;
}
"""


def helpers_source(size=100_000, kernels=8):
    parts, n = [], 0
    while sum(map(len, parts)) < size:
        parts.append(HELPER % (n, n, n))
        n += 1
    for k in range(kernels):
        parts.append("__kernel void k%d(__global float *o) { int i = get_global_id(0);\n"
                     "    o[i] = helper%d(o[i]) + helper%d(o[i]); }\n" % (k, k, n - 1 - k))
    return "".join(parts)


def big_source(size=100_000):
    parts, n = [], 0
    while sum(map(len, parts)) < size:
        parts.append(KERNEL.replace("vadd", "vadd%d" % n).replace("a[i] + b[i]", "a[i] * %d.0f + b[i]" % n))
        n += 1
    return "".join(parts)


def ms(f, repeat):
    ts = []
    for i in range(repeat):
        t = time.perf_counter()
        f(i)
        ts.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    os.environ["PYPLAT_CACHE_DIR"] = tempfile.mkdtemp(prefix="pyplat-cachekey-")
    from pyplat.compiler import build, cache, sourcekey
    opts = {}
    try:
        import pyopencl
        opts["axpy"] = "-I " + os.path.join(os.path.dirname(pyopencl.__file__), "cl")
    except ImportError:
        pass
    build(KERNEL + "__kernel void warm(__global int *o) { o[0] = 1; }\n")      # libclang, LLVM start-up
    cases = [("vadd", KERNEL), ("axpy (#include)", AXPY),
             ("100 KB: 8 kernels, 330 helpers", helpers_source()), ("100 KB: 487 kernels", big_source())]
    print("| source | size | cold build | same source | comment edit | whitespace edit |")
    print("|---|---|---|---|---|---|")
    for name, src in cases:
        o = opts.get(name.split()[0], "")
        if name.startswith("axpy") and not o:
            continue
        tag = "\n#define UNIQUE_%s 1\n"
        cold = ms(lambda i: build(src + tag % uuid.uuid4().hex, o), 1 if len(src) > 50_000 else 3)
        base = src + tag % "base"
        assert build(base, o).ok
        hits0 = cache.stats()["hits"]
        same = ms(lambda i: build(base, o), args.repeat)
        comment = ms(lambda i: build("/* edit %d */\n" % i + base.replace("// ", "// edited %d " % i), o),
                     args.repeat)
        space = ms(lambda i: build(base.replace("\n", "\n" + "\n" * (i + 1)).replace("    ", "\t"), o),
                   args.repeat)
        assert cache.stats()["hits"] - hits0 == 3 * args.repeat, "a build was not a hit"
        print("| %s | %d B | %.1f | %.2f | %.2f | %.2f |" % (name, len(src), cold, same, comment, space))
    src = big_source()
    print("\nnormal form of the 100 KB source: %.2f ms" % ms(lambda i: sourcekey.normal_form(src), args.repeat))
    print("sha256 of it: %.3f ms" % ms(lambda i: cache.source_sha(src), args.repeat))


if __name__ == "__main__":
    sys.exit(main())
