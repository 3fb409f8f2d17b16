"""PYPLAT_TRACE=FILE: a timeline of what ran where, in the Chrome trace event format.

The runtime records into per-thread native buffers (sched/tracing.pxi); this module turns the
records into the JSON that Perfetto (ui.perfetto.dev) and chrome://tracing open, at exit or when
`write()` is called (docs/tools.md, "Timeline"). The file holds

- process "host threads": a track per host thread with its API calls (X, cat "api") and, under
  the basic driver, the commands it ran (X, cat "run");
- process "queues": a track per queue with its commands as slices from start to end (X, cat
  "command"; args: id, kind, status and the queued / submitted times). Commands of one queue
  that overlapped in time (the automatic in-order mode, out-of-order queues) go to further
  tracks of that queue ("queue 1 · 2"), since slices on one track must nest;
- process "workers": a track per worker thread with what it ran (X, cat "run": a command, or its
  share of a kernel's work-groups), steals and wake-ups (instant events, cat "pool"), and the
  track "pool" with the counters "ready commands" and "busy workers" (C);
- dependencies as flow arrows (s and f with bp "e", cat "dependency", name the reason: "wait
  list", "in-order", "barrier", "buffer") from the end of a command to the start of the one that
  waited for it.

Timestamps are µs since the first record (CLOCK_MONOTONIC, the profiling clock).
"""
import atexit
import json
import os
import time

from pyplat import config
from pyplat.runtime import _sched

# Record types and reasons: sched/tracing.pxi.
TR_CMD, TR_EDGE, TR_RUN, TR_STEAL, TR_WAKE, TR_COUNT, TR_API, TR_QUEUE = range(1, 9)
REASONS = {0: "wait list", 1: "in-order", 2: "barrier", 3: "buffer"}
KINDS = {0: "marker", 1: "action", 2: "copy", 3: "fill", 4: "rect copy", 5: "kernel",
         6: "native kernel", 7: "user event"}
MODES = {0: "in-order", 1: "in-order, auto-parallel", 2: "out-of-order"}
STATUS = {0: "complete", -14: "failed: wait list", -5: "failed: out of resources"}
PID_HOST, PID_QUEUES, PID_WORKERS = 1, 2, 3
# Thread ids: viewers (Perfetto) take a tid as unique across processes and tid 0 as the idle
# task, so tracks that are not host threads (Linux tids) get ids far above any pid.
TID_POOL = 1_000_000_000             # the pool's counters
TID_WORKERS = TID_POOL + 1           # + worker id
TID_QUEUES = 1_100_000_000           # + queue * LANES + lane (queue 0: user events)
LANES = 1000
# Slices last at least 2 ns, so that a flow can bind inside one (a marker runs in no time).
MIN_US = 0.002

_path = None
_pid = None


def start_if_asked():
    """Start recording when PYPLAT_TRACE names a file (once per process)."""
    global _path, _pid
    path = config.value("PYPLAT_TRACE")
    if not path or _path is not None:
        return
    _path, _pid = os.path.abspath(path), os.getpid()
    _sched.trace_start(_write_at_exit)
    atexit.register(_write_at_exit)
    os.register_at_fork(after_in_child=_fork_child)


def enabled():
    return _sched.trace_enabled()


def _fork_child():
    global _path, _pid
    _sched.trace_fork_child()
    root, ext = os.path.splitext(_path)
    _path, _pid = f"{root}.{os.getpid()}{ext}", os.getpid()


def _write_at_exit():
    _sched.trace_written()
    try:
        write()
    except Exception as e:            # (the host program is exiting: say why, never raise)
        print(f"pyplat: PYPLAT_TRACE: could not write {_path}: {e}", file=os.sys.stderr)


def write(path=None):
    """Write everything recorded so far to path (default: PYPLAT_TRACE's file); returns it."""
    path = path or _path
    names, threads = _sched.trace_records()
    document = {"traceEvents": chrome_events(names, threads), "displayTimeUnit": "ns",
                "otherData": {"producer": "PyPlat", "pid": os.getpid()}}
    with open(path + ".tmp", "w") as f:
        json.dump(document, f, separators=(",", ":"))
    os.replace(path + ".tmp", path)
    return path


def traced(name, fn):
    """fn, recording each call as an API slice on the calling thread's track."""
    record, clock = _sched.trace_api, time.monotonic_ns

    def call(*args):
        t0 = clock()
        try:
            return fn(*args)
        finally:
            record(name, t0, clock())
    call.__name__ = getattr(fn, "__name__", name)
    return call


# --- records -> trace events -------------------------------------------------------------------

def _meta(pid, tid, what, name, sort=None):
    """Metadata: a process's name (tid None) or a thread's, and its place in the viewer."""
    where = {"pid": pid} if tid is None else {"pid": pid, "tid": tid}
    events = [{"ph": "M", **where, "name": what, "args": {"name": name}}]
    if sort is not None:
        key = "process_sort_index" if tid is None else "thread_sort_index"
        events.append({"ph": "M", **where, "name": key, "args": {"sort_index": sort}})
    return events


def _lanes(commands):
    """Assign each command of one queue a lane: slices of one lane never overlap."""
    ends = []                                    # per lane: the end of its last slice
    for c in sorted(commands, key=lambda c: (c["start"], c["end"])):
        for lane, end in enumerate(ends):
            if end <= c["start"]:
                break
        else:
            lane = len(ends)
            ends.append(0)
        ends[lane] = c["end"]
        c["lane"] = lane
    return len(ends)


def _middle(c):
    return round(c["start"] + max((c["end"] - c["start"]) / 2, 0.001), 3)


def chrome_events(names, threads):
    """The Chrome trace events (a list of dicts) of the runtime's records."""
    def name_of(index, fallback):
        return names[index - 1] if 0 < index <= len(names) else fallback

    stamps = [r[6] for _, _, records in threads for r in records if r[6]]
    base = min(stamps) if stamps else 0

    def us(ns):
        return round((ns - base) / 1000, 3) if ns else 0.0

    events = (_meta(PID_HOST, None, "process_name", "host threads", 0)
              + _meta(PID_QUEUES, None, "process_name", "queues", 1)
              + _meta(PID_WORKERS, None, "process_name", "workers", 2)
              + _meta(PID_WORKERS, TID_POOL, "thread_name", "pool", 0))
    commands, edges, runs, modes, changes = {}, [], [], {}, []
    for worker, tid, records in threads:
        pid, track = (PID_WORKERS, TID_WORKERS + worker) if worker >= 0 else (PID_HOST, tid)
        label = f"worker {worker}" if worker >= 0 else f"host thread {tid}"
        if any(r[0] in (TR_RUN, TR_STEAL, TR_WAKE, TR_API) for r in records):
            events += _meta(pid, track, "thread_name", label, worker + 1 if worker >= 0 else None)
        for kind, sub, status, name, a, b, t0, t1, t2, t3 in records:
            if kind == TR_CMD:
                first = t1 if sub == 7 else t2      # a user event: from its creation until set
                commands[a] = {"id": a, "kind": KINDS.get(sub, str(sub)), "status": status,
                               "name": name_of(name, KINDS.get(sub, str(sub))), "queue": b,
                               "queued": us(t0), "submitted": us(t1), "start": us(first),
                               "end": max(us(t3), round(us(first) + MIN_US, 3))}
            elif kind == TR_EDGE:
                edges.append((a, b, REASONS.get(sub, str(sub)), status))
            elif kind == TR_RUN:
                runs.append((pid, track, a, us(t0), us(t1)))
            elif kind == TR_STEAL:
                events.append({"ph": "i", "s": "t", "pid": pid, "tid": track, "ts": us(t0),
                               "name": "steal", "cat": "pool",
                               "args": {"command": a, "from worker": b}})
            elif kind == TR_WAKE:
                events.append({"ph": "i", "s": "t", "pid": pid, "tid": track, "ts": us(t0),
                               "name": "wake-up", "cat": "pool", "args": {"all": bool(sub)}})
            elif kind == TR_COUNT and sub == 0:
                events.append({"ph": "C", "pid": PID_WORKERS, "tid": TID_POOL, "ts": us(t0),
                               "name": "ready commands", "args": {"ready": a}})
            elif kind == TR_COUNT:
                changes.append((t0, worker, a))
            elif kind == TR_API:
                events.append({"ph": "X", "pid": pid, "tid": track, "ts": us(t0),
                               "dur": round(max(t1 - t0, 0) / 1000, 3),
                               "name": name_of(name, "api call"), "cat": "api"})
            elif kind == TR_QUEUE:
                modes[a] = MODES.get(sub, str(sub))
    busy = {}                         # worker -> 1 while it is not idle (a worker starts busy)
    for t0, worker, state in sorted(changes):
        busy[worker] = state
        events.append({"ph": "C", "pid": PID_WORKERS, "tid": TID_POOL, "ts": us(t0),
                       "name": "busy workers", "args": {"busy": sum(busy.values())}})
    by_queue = {}
    for c in commands.values():
        by_queue.setdefault(c["queue"], []).append(c)
    for queue, members in sorted(by_queue.items()):
        label = f"queue {queue} ({modes[queue]})" if queue in modes else (
            f"queue {queue}" if queue else "no queue (user events)")
        for lane in range(_lanes(members)):
            events += _meta(PID_QUEUES, TID_QUEUES + queue * LANES + lane, "thread_name",
                            label if lane == 0 else f"{label} · {lane + 1}", queue * LANES + lane)
        for c in members:
            c["tid"] = TID_QUEUES + c["queue"] * LANES + c["lane"]
            events.append({"ph": "X", "pid": PID_QUEUES, "tid": c["tid"], "ts": c["start"],
                           "dur": round(c["end"] - c["start"], 3), "name": c["name"],
                           "cat": "command",
                           "args": {"id": c["id"], "kind": c["kind"],
                                    "status": STATUS.get(c["status"], c["status"]),
                                    "queued": c["queued"], "submitted": c["submitted"]}})
    for pid, track, command, t0, t1 in runs:
        c = commands.get(command)
        events.append({"ph": "X", "pid": pid, "tid": track, "ts": t0, "dur": round(t1 - t0, 3),
                       "name": c["name"] if c else f"command {command}", "cat": "run",
                       "args": {"id": command}})
    flow = 0
    for source, target, reason, linked in edges:
        s, t = commands.get(source), commands.get(target)
        if s is None or t is None:
            continue
        flow += 1
        # Each end strictly inside its slice: a flow event binds to the slice enclosing its
        # timestamp (Perfetto draws the arrow from the end of one slice to the start of the other).
        events.append({"ph": "s", "id": flow, "pid": PID_QUEUES, "tid": s["tid"],
                       "ts": _middle(s), "name": reason, "cat": "dependency",
                       "args": {"waited": bool(linked)}})
        events.append({"ph": "f", "bp": "e", "id": flow, "pid": PID_QUEUES, "tid": t["tid"],
                       "ts": _middle(t), "name": reason, "cat": "dependency"})
    return events
