"""The cost of PYPLAT_CHECK: bench/barrier_kernels.py's kernels on PyPlat, unchecked and checked.

    python bench/check_overhead.py [--checks bounds] [--workers 1] [--repeat 7] [--scale 1]

Each run is a child process of its own (barrier_kernels.run_child, PyPlat only), with
PYPLAT_CHECK unset and then set to --checks (no compiled-program cache in either: PYPLAT_CACHE_DIR
is left as it is, and the cache key includes the checks). Prints the median time of each
kernel both ways and the ratio checked / unchecked (issue 16's goal: at most 3).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from barrier_kernels import KERNELS, run_child  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checks", default="bounds")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--kernels", default=",".join(KERNELS))
    args = ap.parse_args()
    kernels = args.kernels.split(",")
    results = {}
    for label, value in (("unchecked", ""), ("checked", args.checks)):
        os.environ["PYPLAT_CHECK"] = value
        results[label] = run_child("PyPlat", args.workers, args.scale, args.repeat, kernels)["kernels"]
    print("PYPLAT_CHECK=%s, %d worker(s), median of %d, ms" % (args.checks, args.workers, args.repeat))
    print("| kernel | unchecked | checked | checked / unchecked |")
    print("|---|---|---|---|")
    for name in kernels:
        a, b = results["unchecked"][name]["median_s"], results["checked"][name]["median_s"]
        print("| %s | %.2f | %.2f | %.2f |" % (name, 1e3 * a, 1e3 * b, b / a))


if __name__ == "__main__":
    main()
