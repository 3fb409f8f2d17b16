#!/usr/bin/env python3
"""Long differential runs: random OpenCL C programs on PyPlat and PoCL, outputs compared.

    python tools/difftest.py --seconds 3600 --seed 1000000 --jobs 2 --batch 40 --out difftest-out

Program seeds are --seed, --seed+1, ... (a seed always gives the same program, so a run can be
continued from where another stopped). Every mismatch is saved (program, header, both outputs)
under --out, with a reduced reproducer when --reduce is given. Prints a running count; the last
line is the summary. Set PYPLAT_CACHE_DIR=off (the default here) so that compiled programs do not
fill the cache. See docs/differential.md.
"""
import argparse
import multiprocessing as mp
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def work(args):
    first, count, batch, out, reduce_, limit = args
    # a chunk that runs past its limit (a platform's compiler stuck on a program) ends its
    # worker like a crash: SIGALRM's default action, which also interrupts native code
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(limit)
    from support.difftest import runner
    devs = _devices()
    res = runner.run_seeds(range(first, first + count), devs, batch=batch)
    for m in res.mismatches:
        stem = runner.save(m, out)
        if reduce_ and m["kind"] == "output":
            from support.difftest import generator, reduce
            prog = generator.generate(m["seed"], f"p{m['seed']}_", runner.options_for(devs))
            src, hdr = reduce.reduce(prog, devs, runner.inputs(12345))
            Path(f"{stem}.reduced.cl").write_text(src)
            Path(f"{stem}.reduced.h").write_text(hdr)
    for m in res.invalid:
        runner.save(dict(m, kind="invalid"), out)
    signal.alarm(0)
    return res.programs, res.builds, [m["seed"] for m in res.mismatches], len(res.invalid)


_DEVS = None


def _devices():
    global _DEVS
    if _DEVS is None:
        from support.difftest import runner
        _DEVS = runner.default_devices()
    return _DEVS


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--programs", type=int, default=0, help="stop after this many programs")
    ap.add_argument("--seconds", type=float, default=0, help="stop after this many seconds")
    ap.add_argument("--seed", type=int, default=1, help="first program seed")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--batch", type=int, default=40, help="programs per cl_program build")
    ap.add_argument("--chunk", type=int, default=0, help="programs per task (default 2 batches)")
    ap.add_argument("--out", default="difftest-out", help="directory for mismatches")
    ap.add_argument("--reduce", action="store_true", help="also save reduced reproducers")
    ap.add_argument("--chunk-timeout", type=int, default=600,
                    help="seconds a chunk may take; past it, it counts as a crashed chunk")
    a = ap.parse_args(argv)
    if not a.programs and not a.seconds:
        a.programs = 1000
    os.environ.setdefault("PYPLAT_CACHE_DIR", "off")
    os.environ.setdefault("PYOPENCL_COMPILER_OUTPUT", "0")
    chunk = a.chunk or 2 * a.batch
    t0 = time.time()
    total = builds = invalid = 0
    bad = []

    def tasks():
        s = a.seed
        while True:
            n = chunk if not a.programs else min(chunk, a.seed + a.programs - s)
            if n <= 0 or (a.seconds and time.time() - t0 > a.seconds):
                return
            yield (s, n, a.batch, a.out, a.reduce, a.chunk_timeout)
            s += n

    gen = tasks()
    crashed = []        # first seeds of chunks whose worker died (a crash in a platform)
    pool = ProcessPoolExecutor(a.jobs, mp_context=mp.get_context("spawn"))
    pending = []
    while True:
        while len(pending) < 2 * a.jobs:      # a few tasks ahead, never the whole run
            t = next(gen, None)
            if t is None:
                break
            pending.append((t, pool.submit(work, t), time.time()))
        if not pending:
            break
        # the first task to finish, whichever it is: one slow chunk holds up no other
        done, _ = wait([f for _, f, _ in pending], return_when=FIRST_COMPLETED)
        t, fut, ts = pending.pop(next(i for i, (_, f, _) in enumerate(pending) if f in done))
        try:
            progs, b, mism, inv = fut.result()
        except BrokenProcessPool:
            # a worker died (a crash, or past --chunk-timeout): every task in flight fails with
            # it. The culprit is taken to be the one submitted first (it ran longest); it is
            # noted, the others go to a fresh pool.
            flight = [(t, ts)] + [(u, us) for u, _, us in pending]
            culprit = min(flight, key=lambda x: x[1])[0]
            crashed.append(culprit[0])
            Path(a.out).mkdir(parents=True, exist_ok=True)
            Path(a.out, f"crash_seeds{culprit[0]}-{culprit[0] + culprit[1] - 1}.txt").write_text(
                "a worker died (a crash, or past --chunk-timeout) running these seeds; rerun "
                "them with --jobs 1 --batch 1\n")
            pool.shutdown(wait=False, cancel_futures=True)
            pool = ProcessPoolExecutor(a.jobs, mp_context=mp.get_context("spawn"))
            again = [u for u, _ in flight if u is not culprit]
            pending = [(u, pool.submit(work, u), time.time()) for u in again]
            continue
        total, builds, invalid = total + progs, builds + b, invalid + inv
        bad += mism
        print(f"{time.time() - t0:8.0f}s  programs {total}  builds {builds}  "
              f"mismatches {len(bad)}  invalid {invalid}  crashed chunks {len(crashed)}",
              flush=True)
    pool.shutdown()
    print(f"from seed {a.seed}: {total} programs, {builds} builds, {len(bad)} mismatches "
          f"{bad[:20]}, {invalid} invalid, crashed chunks at {crashed}, {time.time() - t0:.0f} s")
    return 1 if bad or crashed else 0


if __name__ == "__main__":
    sys.exit(main())
