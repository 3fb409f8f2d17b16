"""PYPLAT_TRACE=FILE (docs/tools.md, "Timeline"): a program traced in a child process writes a
Chrome trace event file with every command once, its dependencies as flow arrows, the worker
and host tracks; `pyplat trace FILE` counts its kernels. Structure only: no timing is asserted
beyond each slice's own order (the machine is shared)."""
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from support import TESTS

PROGRAM = TESTS / "support" / "programs" / "traced_queues.py"
PHASES = set("XMsfiC")


def traced(run_with_pyplat, tmp_path, **env):
    path = tmp_path / "trace.json"
    r = run_with_pyplat([sys.executable, PROGRAM],
                        env={"PYPLAT_TRACE": str(path), **env})
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
    document = json.loads(path.read_text())
    return path, document["traceEvents"]


def commands(events):
    return [e for e in events if e["ph"] == "X" and e["cat"] == "command"]


def track_names(events):
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in events
            if e["ph"] == "M" and e["name"] == "thread_name"}


def queue_of(events):
    """command slice -> its queue's number, from its track's name ("queue 2 (...)"); None for
    commands of no queue (user events)."""
    names = track_names(events)

    def queue(e):
        words = names[(e["pid"], e["tid"])].split()
        return int(words[1]) if words[0] == "queue" else None
    return queue


def flows(events):
    """(reason, source command, target command) of every dependency arrow."""
    at = {}
    for e in commands(events):
        at.setdefault((e["pid"], e["tid"]), []).append(e)

    def enclosing(e):
        return [c for c in at.get((e["pid"], e["tid"]), ())
                if c["ts"] < e["ts"] < c["ts"] + c["dur"]]
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts.keys() == ends.keys()
    out = []
    for i, s in starts.items():
        f = ends[i]
        assert f["bp"] == "e" and f["name"] == s["name"]
        source, target = enclosing(s), enclosing(f)
        assert source and target, (s, f)          # each end strictly inside a command slice
        out.append((s["name"], source[0], target[0]))
    return out


@pytest.mark.parametrize("driver", ["pool", "basic"])
def test_trace_of_two_queues(run_with_pyplat, tmp_path, driver):
    _, events = traced(run_with_pyplat, tmp_path, PYPLAT_DRIVER=driver)
    assert {e["ph"] for e in events} <= PHASES
    tids = {}                                        # a tid is one track, never 0 (Perfetto)
    for e in events:
        if "tid" in e:
            assert e["tid"] != 0 and tids.setdefault(e["tid"], e["pid"]) == e["pid"], e
    cmds = commands(events)
    assert Counter(e["name"] for e in cmds) == {"copy": 5, "scale_a": 4, "scale_b": 3,
                                                 "user event": 1}
    assert len({e["args"]["id"] for e in cmds}) == 13                 # each command once
    for e in cmds:
        assert e["dur"] >= 0 and e["args"]["status"] == "complete"
        assert e["args"]["queued"] <= e["args"]["submitted"] <= e["ts"] + 1e-3
    names = track_names(events)
    for e in cmds:                                   # every slice is on a named track
        assert (e["pid"], e["tid"]) in names
    labels = set(names.values())
    assert any(n.startswith("queue 1 (in-order, auto-parallel)") for n in labels)
    assert any(n.startswith("queue 2") for n in labels)
    assert any(n.startswith("host thread") for n in labels)
    if driver == "pool":
        assert any(n.startswith("worker") for n in labels)
        assert any(e["ph"] == "C" and e["name"] == "busy workers" for e in events)
    runs = [e for e in events if e["ph"] == "X" and e["cat"] == "run"]
    assert {e["name"] for e in runs} >= {"scale_a", "scale_b", "copy"}
    api = Counter(e["name"] for e in events if e["ph"] == "X" and e["cat"] == "api")
    assert api["clCreateBuffer"] == 4
    assert api["clEnqueueNDRangeKernel"] == 7         # also those the native fast path answers
    assert api["clEnqueueWriteBuffer"] == 4 and api["clEnqueueReadBuffer"] == 1   # (the writes: native)

    arrows, queue = flows(events), queue_of(events)
    wait_list = {(s["name"], t["name"], queue(t)) for r, s, t in arrows if r == "wait list"}
    # the q2 kernel waits for q1's scale_a and the user event; q2's read waits for it
    assert ("scale_a", "scale_b", 2) in wait_list
    assert ("user event", "scale_b", 2) in wait_list
    assert ("scale_b", "copy", 2) in wait_list
    buffer = Counter((s["name"], t["name"]) for r, s, t in arrows if r == "buffer")
    assert buffer[("scale_a", "scale_b")] == 2       # each scale_b after its buffer's scale_a
    assert buffer[("copy", "scale_a")] == 4
    assert buffer[("scale_a", "scale_a")] == 0       # independent: no arrow between them


def test_serial_in_order_links(run_with_pyplat, tmp_path):
    _, events = traced(run_with_pyplat, tmp_path, PYPLAT_INORDER_PARALLEL="0")
    serial = [(s["args"]["id"], t["args"]["id"]) for r, s, t in flows(events) if r == "in-order"]
    queue = queue_of(events)
    q1 = sorted(e["args"]["id"] for e in commands(events) if queue(e) == 1)
    assert len(q1) == 10
    assert set(zip(q1, q1[1:])) <= set(serial)       # each command after the one before


def test_pyplat_trace_summary(run_with_pyplat, tmp_path, pyplat_command):
    path, _ = traced(run_with_pyplat, tmp_path)
    r = run_with_pyplat(pyplat_command + ["trace", path])
    assert r.returncode == 0, r.stderr
    kinds, queue_part = r.stdout.split("\n\n")
    rows = {line.split()[0]: line.split() for line in kinds.splitlines()[1:] if line.strip()}
    assert rows["scale_a"][1:3] == ["kernel", "4"]
    assert rows["scale_b"][1:3] == ["kernel", "3"]
    # per queue: commands, tracks, most at once (a queue's overlapping commands: more tracks)
    queues = {line.split(" (")[0]: [int(w) for w in line.split()[-3:]] for line in queue_part.splitlines()
              if line.startswith("queue ") and line.split()[1].isdigit()}
    assert queues["queue 1"][0] == 10, queue_part
    assert all(1 <= most <= tracks <= count for count, tracks, most in queues.values()), queue_part
    svg = Path(str(path) + ".svg").read_text()
    assert svg.startswith("<svg") and svg.count("<rect") >= 13


def test_off_by_default(run_with_pyplat, tmp_path):
    r = run_with_pyplat([sys.executable, PROGRAM], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not list(tmp_path.glob("*.json"))


FORKING = """
import os, sys
import numpy as np
import pyopencl as cl
platform = [p for p in cl.get_platforms() if p.name == "PyPlat"][0]
ctx = cl.Context(platform.get_devices()[:1])
q = cl.CommandQueue(ctx)
b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64)
cl.enqueue_copy(q, b, np.ones(16, np.float32)); q.finish()
pid = os.fork()
if pid == 0:
    cl.enqueue_copy(q, b, np.zeros(16, np.float32)); q.finish()
    sys.exit(0)
os.waitpid(pid, 0)
print(pid)
"""


def test_forked_child_writes_its_own(run_with_pyplat, tmp_path):
    path = tmp_path / "run.json"
    r = run_with_pyplat([sys.executable, "-c", FORKING], env={"PYPLAT_TRACE": str(path)})
    assert r.returncode == 0, r.stderr
    child = tmp_path / f"run.{r.stdout.split()[-1]}.json"
    parent_cmds = commands(json.loads(path.read_text())["traceEvents"])
    child_cmds = commands(json.loads(child.read_text())["traceEvents"])
    assert len(parent_cmds) == 1 and len(child_cmds) == 1     # each its own commands only
