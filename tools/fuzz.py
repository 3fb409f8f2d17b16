#!/usr/bin/env python3
"""Fault injection and fuzzing, long mode (issue 13 part 2; the bounded CI version is
tests/api/test_fuzz_api.py, the harness tests/support/fuzz_sweep.py and fuzz_model.py).

    python tools/fuzz.py                          # sweep + 100,000 API calls of random sequences
    python tools/fuzz.py --calls 1000000          # until a million calls (sweep included)
    python tools/fuzz.py --seconds 600            # for ten minutes
    python tools/fuzz.py --platform Portable      # the same against PoCL (any platform, by name)
    python tools/fuzz.py --replay 1234            # one sequence in this process, its calls printed

Every call runs in a child process (many per child): a crash or a hang (no progress for
--timeout seconds) is counted with the call or the seed that caused it, and a new child goes on.
Prints totals: API calls, kernel launches, crashes, hangs, wrong codes, wrong results (buffer
contents and event statuses against the shadow model). Exit status 1 if any is not zero.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from support import fuzz_model, fuzz_sweep  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platform", default="PyPlat", help="platform name (a part of it, any case)")
    ap.add_argument("--calls", type=int, default=None, help="stop after this many API calls (default 100000)")
    ap.add_argument("--seconds", type=float, default=None, help="stop after this long")
    ap.add_argument("--seed", type=int, default=0, help="first sequence seed (sequences use seed, seed+1, ...)")
    ap.add_argument("--steps", type=int, default=300, help="operations per sequence")
    ap.add_argument("--batch", type=int, default=50, help="sequences per round of children")
    ap.add_argument("--threads-every", type=int, default=10,
                    help="every Nth sequence is 8 host threads with cross-thread wait lists (0: never)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds without progress that count as a hang")
    ap.add_argument("--no-sweep", action="store_true", help="skip the bad-input sweep")
    ap.add_argument("--sweep-only", action="store_true", help="only the bad-input sweep")
    ap.add_argument("--replay", type=int, default=None, help="run one sequence here and print its calls")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every wrong code and problem")
    a = ap.parse_args(argv)

    if a.replay is not None:
        s, st, trace = fuzz_model.Session(a.platform), fuzz_model.Stats(), []
        s.sequence(a.replay, a.steps, st, trace=trace)
        print(fuzz_model.format_trace(trace))
        print("\n".join(st.problems) or "no problems")
        return 1 if st.problems else 0
    if a.calls is None and a.seconds is None:
        a.calls = 100_000
    t0 = time.monotonic()
    tot = {"calls": 0, "launches": 0, "crashes": 0, "hangs": 0, "wrong_codes": 0, "wrong_results": 0}
    if not a.no_sweep:
        r = fuzz_sweep.sweep(a.platform, seed=a.seed, timeout=min(a.timeout, 20.0))
        print(f"sweep: {r['entry_points']} entry points, {r['cases']} cases, {r['calls']} calls returned, "
              f"{len(r['crashes'])} crashes, {len(r['hangs'])} hangs, {len(r['wrong_codes'])} wrong codes "
              f"({r['children']} child processes)")
        for what in ("crashes", "hangs"):
            for c in r[what][:200 if a.verbose else 10]:
                print(f"  {what[:-1] if what == 'hangs' else 'crash'}: case {c[0]} {c[1]} {c[2] if len(c) > 2 else ''}")
        for w in r["wrong_codes"][:1000 if a.verbose else 20]:
            print(f"  wrong code: {w[0]} {w[1]}: {w[2]}, spec allows {w[3]}")
        tot["calls"] += r["calls"] + len(r["crashes"]) + len(r["hangs"])
        tot["crashes"] += len(r["crashes"])
        tot["hangs"] += len(r["hangs"])
        tot["wrong_codes"] += len(r["wrong_codes"])
    seed, sequences = a.seed, 0
    while not a.sweep_only:
        if a.calls is not None and tot["calls"] >= a.calls:
            break
        if a.seconds is not None and time.monotonic() - t0 >= a.seconds:
            break
        # every other batch with serial in-order queues (PyPlat's knob; other platforms ignore it)
        serial = {"PYPLAT_INORDER_PARALLEL": "0"} if (seed // a.batch) % 2 else None
        r = fuzz_model.run(a.platform, seed, a.batch, a.steps, a.threads_every, a.timeout, env=serial)
        seed += a.batch
        sequences += r["sequences"]
        for k in ("calls", "launches", "wrong_codes"):
            tot[k] += r[k]
        tot["wrong_results"] += r["wrong_results"] + r["wrong_status"]
        tot["crashes"] += len(r["crashes"])
        tot["hangs"] += len(r["hangs"])
        for what in ("crashes", "hangs"):
            for c in r[what]:
                print(f"  {what[:-1] if what == 'hangs' else 'crash'}: sequence seed {c[0]} ({c[1][:300]}); "
                      f"replay: tools/fuzz.py --replay {c[0]} --steps {a.steps}")
        for p in r["problems"][:1000 if a.verbose else 5]:
            print("  " + p)
        if r["sequences"] == 0 and r["crashes"]:
            break                                # the set-up itself fails: nothing more to learn
    print(f"platform {a.platform}: {tot['calls']} API calls, {tot['launches']} kernel launches, "
          f"{sequences} sequences (from seed {a.seed}), {tot['crashes']} crashes, {tot['hangs']} hangs, "
          f"{tot['wrong_codes']} wrong codes, {tot['wrong_results']} wrong results, "
          f"{time.monotonic() - t0:.0f} s")
    return 1 if any(tot[k] for k in ("crashes", "hangs", "wrong_codes", "wrong_results")) else 0


if __name__ == "__main__":
    sys.exit(main())
