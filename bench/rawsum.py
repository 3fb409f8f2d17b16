"""Summarise bench/device.sh raw output (raw.tsv: rep, workers, platform, benchmark, param, µs):
medians over the reps, PyPlat/PoCL per worker count (ratio), and each platform's speedup from
the first to the last worker count.   python bench/rawsum.py raw.tsv"""
import sys, statistics, collections
rows=collections.defaultdict(list); ws=[]
for line in open(sys.argv[1]):
    f=line.rstrip('\n').split('\t')
    if len(f)<6: continue
    rep,w,plat,name,param,us=f[:6]
    rows[(name,param,plat,w)].append(float(us))
    if w not in ws: ws.append(w)
keys=[]
for (n,p,pl,w) in rows:
    if (n,p) not in keys: keys.append((n,p))
for n,p in keys:
    out=[]
    for w in ws:
        a=statistics.median(rows[(n,p,"PyPlat",w)]); b=statistics.median(rows[(n,p,"Portable",w)])
        out.append(f"{a:7.3g}/{b:<7.3g}({a/b:.2f})")
    a1=statistics.median(rows[(n,p,"PyPlat",ws[0])]); al=statistics.median(rows[(n,p,"PyPlat",ws[-1])])
    b1=statistics.median(rows[(n,p,"Portable",ws[0])]); bl=statistics.median(rows[(n,p,"Portable",ws[-1])])
    print(f"{n:23s}{p:>6s} "+" ".join(out)+f"  speedup {a1/al:.2f}/{b1/bl:.2f}")
