"""`pyplat trace FILE`: a summary of a PYPLAT_TRACE file and an SVG timeline for a quick look.

Reads the JSON only (pyplat/runtime/trace.py writes it), so it runs anywhere, also on a trace
copied from another machine. The summary is per command name, kernels first, like PoCL's
POCL_TRACING=cq: count, total, mean and max of the run time (start to end) in µs; then per
queue how many commands ran, on how many tracks (commands of a queue that overlapped go to
tracks of their own, "queue N · 2", ...) and how many of them ran at once at most: an in-order
queue whose kernels the automatic mode ran side by side shows more than one.
"""
import json
from xml.sax.saxutils import escape

ROW_HEIGHT, LABEL_WIDTH, PLOT_WIDTH = 18, 260, 1200


def load(path):
    with open(path) as f:
        document = json.load(f)
    return document["traceEvents"] if isinstance(document, dict) else document


def commands(events):
    return [e for e in events if e.get("ph") == "X" and e.get("cat") == "command"]


def summary(events):
    """Rows (name, kind, count, total µs, mean µs, max µs), kernels first, then by total."""
    groups = {}
    for e in commands(events):
        key = (e["name"], e.get("args", {}).get("kind", ""))
        groups.setdefault(key, []).append(e["dur"])
    rows = [(name, kind, len(d), sum(d), sum(d) / len(d), max(d)) for (name, kind), d in groups.items()]
    rows.sort(key=lambda r: (r[1] != "kernel", -r[3], r[0]))
    return rows


def format_summary(rows):
    lines = [f"{'command':<32} {'kind':<12} {'count':>7} {'total µs':>12} {'mean µs':>10} {'max µs':>10}"]
    for name, kind, count, total, mean, most in rows:
        lines.append(f"{name[:32]:<32} {kind:<12} {count:>7} {total:>12.1f} {mean:>10.1f} {most:>10.1f}")
    return "\n".join(lines)


def track_names(events):
    """(pid, tid) -> the track's name, from the metadata events."""
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name"}


def queues(events):
    """Rows (queue, commands, tracks, most at once), in the order of the queues' numbers."""
    names = track_names(events)
    by_queue = {}
    for e in commands(events):
        track = names.get((e["pid"], e["tid"]), "")
        if track.startswith("queue "):
            by_queue.setdefault(track.split(" · ")[0], []).append((track, e["ts"], e["ts"] + e["dur"]))
    rows = []
    for queue, slices in by_queue.items():
        running = most = 0
        # (sorted as pairs: at one time an end, -1, comes before a start)
        for _, change in sorted([(start, 1) for _, start, _ in slices] + [(end, -1) for _, _, end in slices]):
            running += change
            most = max(most, running)
        rows.append((queue, len(slices), len({track for track, _, _ in slices}), most))
    rows.sort(key=lambda r: int(r[0].split()[1]) if r[0].split()[1].isdigit() else 0)
    return rows


def format_queues(rows):
    lines = [f"{'queue':<44} {'commands':>9} {'tracks':>7} {'most at once':>13}"]
    for queue, count, tracks, most in rows:
        lines.append(f"{queue[:44]:<44} {count:>9} {tracks:>7} {most:>13}")
    return "\n".join(lines)


def svg(events):
    """A timeline: a row per queue track and worker, a rectangle per command or run slice."""
    names, rows = track_names(events), {}
    slices = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("command", "run")]
    for e in slices:
        rows.setdefault((e["pid"], e["tid"]), []).append(e)
    if not slices:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="20"></svg>\n'
    t0 = min(e["ts"] for e in slices)
    span = max(e["ts"] + e["dur"] for e in slices) - t0 or 1.0
    scale = PLOT_WIDTH / span
    order = sorted(rows, key=lambda k: (k[0] != 2, k))          # queues first, then workers
    height = ROW_HEIGHT * (len(order) + 2)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LABEL_WIDTH + PLOT_WIDTH + 10}" '
           f'height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="4" y="{ROW_HEIGHT - 4}">PyPlat trace: {span:.1f} µs</text>']
    colours = {}
    for i, key in enumerate(order, start=1):
        y = i * ROW_HEIGHT + 4
        label = names.get(key, f"track {key[1]}")
        out.append(f'<text x="4" y="{y + ROW_HEIGHT - 6}">{escape(label)}</text>')
        for e in rows[key]:
            colour = colours.setdefault(e["name"], f"hsl({(len(colours) * 67) % 360},60%,60%)")
            x = LABEL_WIDTH + (e["ts"] - t0) * scale
            w = max(e["dur"] * scale, 0.5)
            out.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{ROW_HEIGHT - 3}" '
                       f'fill="{colour}"><title>{escape(e["name"])}: {e["dur"]:.1f} µs</title></rect>')
    out.append("</svg>\n")
    return "\n".join(out)


def main(path, svg_path=None):
    """Print the summary of the trace at path, write its SVG timeline; returns the SVG's path."""
    events = load(path)
    print(format_summary(summary(events)))
    print()
    print(format_queues(queues(events)))
    svg_path = svg_path or path + ".svg"
    with open(svg_path, "w") as f:
        f.write(svg(events))
    print(f"timeline: {svg_path}")
    return svg_path
