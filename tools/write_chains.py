#!/usr/bin/env python3
"""Long runs of the in-order soundness generator (tests/support/difftest/writes.py, write_chains.py).

    python tools/write_chains.py --kernels 100000 --seed 0 --jobs 16 [--pocl-every 10]

Kernels that write through derived pointers run on PyPlat's automatic in-order queue followed by
chains of reads, copies, maps, kernels, fills and writes, compared with a serial queue and with
the compiler's `written` answers; every --pocl-every-th batch is also run on PoCL. Prints the
totals; exits 1 on any stale read, unsound answer or PoCL mismatch (each one printed).
"""
import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
BATCH = 40


def work(args):
    first, count, with_pocl = args
    os.environ.setdefault("PYPLAT_CACHE_DIR", "off")
    import pyplat
    pyplat.enable()
    import pyopencl as cl
    from support.difftest import write_chains
    plats = {p.name: p for p in cl.get_platforms()}
    pocl = plats.get("Portable Computing Language") if with_pocl else None
    r = write_chains.run_seeds(range(first, first + count), write_chains.Platform(cl, plats["PyPlat"]),
                               write_chains.Platform(cl, pocl) if pocl is not None else None,
                               batch=BATCH, chain_seed=first)
    return (r.kernels, r.builds, r.chains, r.readonly_args, pocl is not None, r.stale, r.unsound,
            r.pocl_mismatch)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--kernels", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--chunk", type=int, default=400, help="kernels per child task")
    ap.add_argument("--seconds", type=float, default=0, help="stop starting chunks after this long")
    ap.add_argument("--pocl-every", type=int, default=10, help="every Nth chunk also on PoCL (0: never)")
    a = ap.parse_args()
    tasks = [(s, min(a.chunk, a.seed + a.kernels - s), a.pocl_every and i % a.pocl_every == 0)
             for i, s in enumerate(range(a.seed, a.seed + a.kernels, a.chunk))]
    tot = dict(kernels=0, builds=0, chains=0, readonly_args=0, pocl_kernels=0)
    bad = []
    t0 = time.time()
    with ProcessPoolExecutor(a.jobs) as ex:
        futures = [ex.submit(work, t) for t in tasks]
        for f in as_completed(futures):
            if a.seconds and time.time() - t0 > a.seconds:
                for g in futures:
                    g.cancel()          # chunks not started yet; the running ones are counted
            if f.cancelled():
                continue
            k, b, c, ro, pocl, stale, unsound, pm = f.result()
            tot["kernels"] += k
            tot["builds"] += b
            tot["chains"] += c
            tot["readonly_args"] += ro
            tot["pocl_kernels"] += k if pocl else 0
            new = [("stale", x) for x in stale] + [("unsound", x) for x in unsound] + \
                [("pocl", x) for x in pm]
            for x in new:
                print("MISMATCH", x, flush=True)
            bad += new
            print(f"{time.time() - t0:7.0f}s {tot}", flush=True)
    print(f"total: {tot['kernels']} kernels in {tot['builds']} builds, {tot['chains']} chains, "
          f"{tot['pocl_kernels']} also on PoCL; stale reads "
          f"{sum(1 for b in bad if b[0] == 'stale')}, unsound answers "
          f"{sum(1 for b in bad if b[0] == 'unsound')}, PoCL mismatches "
          f"{sum(1 for b in bad if b[0] == 'pocl')}; arguments only read and so reported "
          f"{tot['readonly_args']}; {time.time() - t0:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
