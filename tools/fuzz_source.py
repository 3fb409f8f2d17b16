"""Long mode of the kernel-source mutation fuzzer (tests/support/fuzz_source.py).

    python tools/fuzz_source.py --programs 10000 [--seed 1] [--batch 500] [--keep DIR]

Runs batches of mutated programs, each batch in a child process (a crash or a hang of the
compiler fails that batch, and the run goes on), and prints the totals: programs, built,
failed cleanly, internal errors, unlocated logs (first error at :0:0 or without a location),
slow builds (over 30 s), the longest build, crashed or hung batches.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FUZZ = os.path.join(HERE, "..", "tests", "support", "fuzz_source.py")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--programs", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per batch")
    ap.add_argument("--keep", help="directory for the programs of the bad classes (internal error, "
                    "unlocated, slow)")
    a = ap.parse_args()
    tot = {"programs": 0, "built": 0, "failed": 0, "internal_errors": 0, "unlocated": 0, "slow": 0,
           "max_seconds": 0.0}
    broken = []
    seed, t0 = a.seed, time.time()
    while tot["programs"] < a.programs:
        n = min(a.batch, a.programs - tot["programs"])
        cmd = [sys.executable, FUZZ, "--seed", str(seed), "--programs", str(n)]
        if a.keep:
            cmd += ["--keep", a.keep]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
            line = p.stdout.strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip() else ""
        except subprocess.TimeoutExpired:
            p, line = None, ""
        if line:
            c = json.loads(line)
            for k in tot:
                if k == "max_seconds":
                    tot[k] = max(tot[k], c[k])
                else:
                    tot[k] += c[k]
        else:
            broken.append((seed, "hang" if p is None else "rc %d" % p.returncode))
            tot["programs"] += n
        print("%6.0fs  seed %d  %s  broken batches %d" % (time.time() - t0, seed, tot, len(broken)),
              flush=True)
        seed += 1
    print("total: %s; crashed or hung batches: %s" % (tot, broken or "none"))
    return 1 if broken or tot["internal_errors"] or tot["unlocated"] or tot["slow"] else 0


if __name__ == "__main__":
    sys.exit(main())
