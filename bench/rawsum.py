"""Summarise bench/device.sh raw output (raw.tsv: rep, workers, platform, benchmark, param, µs):
medians over the reps, PyPlat/PoCL per worker count (ratio), and each platform's speedup from
the first to the last worker count.   python bench/rawsum.py raw.tsv [more raw.tsv ...]
Several files (bench/device_ab.sh's rounds) are pooled; a platform without rows shows '-'."""
import collections
import statistics
import sys

rows = collections.defaultdict(list)
ws = []
for path in sys.argv[1:]:
    for line in open(path):
        f = line.rstrip('\n').split('\t')
        if len(f) < 6:
            continue
        rep, w, plat, name, param, us = f[:6]
        rows[(name, param, plat, w)].append(float(us))
        if w not in ws:
            ws.append(w)


def med(key):
    return statistics.median(rows[key]) if rows.get(key) else None


def fmt(v):
    return "-" if v is None else f"{v:.3g}"


keys = []
for (n, p, pl, w) in rows:
    if (n, p) not in keys:
        keys.append((n, p))
for n, p in keys:
    out = []
    for w in ws:
        a, b = med((n, p, "PyPlat", w)), med((n, p, "Portable", w))
        ratio = f"({a / b:.2f})" if a and b else ""
        out.append(f"{fmt(a):>7s}/{fmt(b):<7s}{ratio:6s}")
    speed = []
    for plat in ("PyPlat", "Portable"):
        first, last = med((n, p, plat, ws[0])), med((n, p, plat, ws[-1]))
        speed.append(f"{first / last:.2f}" if first and last else "-")
    print(f"{n:23s}{p:>6s} " + " ".join(out) + "  speedup " + "/".join(speed))
