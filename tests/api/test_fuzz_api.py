"""Fault injection and fuzzing, the bounded CI version (issue 13 part 2; long mode: tools/fuzz.py).

- The bad-input sweep (tests/support/fuzz_sweep.py) calls every slot of PyPlat's ICD dispatch table with
  NULL, foreign, released and wrongly typed handles, bad lists, sizes, flags and pointers, in child
  processes: every call must return the spec's code for the argument, none may crash or hang.
- Random call sequences (tests/support/fuzz_model.py) on in-order and out-of-order queues, with user events
  failing in the middle of chains and 8 host threads with cross-thread wait lists, are checked
  against a shadow model of every buffer and every event's status.
A failure prints the seed; `python tools/fuzz.py --replay SEED` prints that sequence's calls."""
import pytest

from support import fuzz_model, fuzz_sweep


@pytest.fixture(scope="module")
def sweep():
    return fuzz_sweep.sweep("PyPlat", seed=13)


def test_the_sweep_reaches_every_dispatch_slot(sweep):
    slots = {s[0] for s in fuzz_sweep.ENTRY_POINTS if s}
    assert sweep["entry_points"] == len(slots) >= 130
    assert sweep["calls"] >= 1000


def test_no_call_of_the_sweep_crashes_or_hangs(sweep):
    assert sweep["crashes"] == [] and sweep["hangs"] == [] and sweep["children"] == 1


def test_every_bad_argument_gets_the_spec_code(sweep):
    assert sweep["wrong_codes"] == []


def test_the_sweep_counts_a_crash_and_goes_on(sweep):
    """A call that kills its child is a counted crash naming the call; the next child carries on."""
    cases = fuzz_sweep.cases()
    crash_at = next(i for i, c in enumerate(cases) if c[0] == "clGetDeviceInfo" and c[1] != "valid")
    r = fuzz_sweep.sweep("PyPlat", seed=1, crash_at=crash_at)
    assert [c[:3] for c in r["crashes"]] == [(crash_at, "clGetDeviceInfo", cases[crash_at][1])]
    assert r["children"] == 2 and r["wrong_codes"] == [] and r["calls"] == sweep["calls"] - 1


def test_random_sequences_match_the_shadow_model():
    tot = fuzz_model.run("PyPlat", first=1000, count=24, steps=200, threads_every=8)
    assert tot["crashes"] == [] and tot["hangs"] == [], tot
    assert (tot["wrong_codes"], tot["wrong_results"], tot["wrong_status"]) == (0, 0, 0), tot["problems"][:5]
    assert tot["sequences"] == 24 and tot["calls"] > 20000 and tot["launches"] > 500


def test_random_sequences_with_serial_in_order_queues():
    tot = fuzz_model.run("PyPlat", first=2000, count=8, steps=200, threads_every=4,
                         env={"PYPLAT_INORDER_PARALLEL": "0"})
    assert tot["crashes"] == [] and tot["hangs"] == [], tot
    assert (tot["wrong_codes"], tot["wrong_results"], tot["wrong_status"]) == (0, 0, 0), tot["problems"][:5]
    assert tot["sequences"] == 8


def test_the_model_sees_a_wrong_result_and_a_wrong_status(monkeypatch):
    """The checks bite: a model that expects other data or statuses than the platform gives reports them."""
    s = fuzz_model.Session("PyPlat")
    st = fuzz_model.Stats()
    real_fill = fuzz_model.Model.op_fill

    def off_by_one_fill(self):
        real_fill(self)
        if self.bufs:
            self.bufs[0].root.shadow[0] ^= 1          # the model now expects another byte
    monkeypatch.setattr(fuzz_model.Model, "op_fill", off_by_one_fill)
    s.sequence(5, 120, st)
    assert st.wrong_results > 0
    monkeypatch.undo()
    st = fuzz_model.Stats()
    real_user = fuzz_model.Model.op_user

    def lying_user(self):
        real_user(self)
        self.users[-1].failed = not self.users[-1].failed  # the model expects the other outcome
    monkeypatch.setattr(fuzz_model.Model, "op_user", lying_user)
    for seed in range(3):
        s.sequence(seed, 120, st)
    assert st.wrong_status > 0


def test_failures_stay_on_explicit_waits_in_random_chains():
    """Across many sequences some commands fail (their wait lists hold a failed event) and most
    run: what a user relies on, checked by the model's status comparison above."""
    s = fuzz_model.Session("PyPlat")
    st, failed, ran = fuzz_model.Stats(), 0, 0
    real = fuzz_model.Model.release

    def count(self):
        nonlocal failed, ran
        failed += sum(e.failed for e in self.events)
        ran += sum(not e.failed for e in self.events)
        real(self)
    fuzz_model.Model.release = count
    try:
        for seed in range(6):
            s.sequence(seed, 150, st)
    finally:
        fuzz_model.Model.release = real
    assert st.wrong_status == st.wrong_results == 0, st.problems[:3]
    assert failed > 10 and ran > 10 * failed


def test_releasing_a_queue_never_waits_for_its_commands():
    """Found by the model (op_requeue): clReleaseCommandQueue waited for the queue's commands, so
    a release with a command behind a user event not set yet blocked the thread that would set
    it. "clReleaseCommandQueue performs an implicit flush"; the queue is deleted once its
    commands have finished: the release returns at once and the command still runs."""
    import ctypes
    import threading

    import numpy as np
    from support.capi import CL, addr, err
    from support.clobjects import make_buffer, make_context, make_queue, read
    from pyplat import cl

    ctx, dev = make_context()
    q, other = make_queue(ctx, dev), make_queue(ctx, dev)
    buf = make_buffer(ctx, 16)
    e = err()
    user = CL.clCreateUserEvent(ctx, addr(e))
    data = np.arange(4, dtype=np.int32)
    done = ctypes.c_size_t()
    waits = (ctypes.c_size_t * 1)(user)
    assert CL.clEnqueueWriteBuffer(q, buf, 0, 0, 16, addr(data), 1, addr(waits), addr(done)) == cl.CL_SUCCESS
    released = threading.Event()
    t = threading.Thread(target=lambda: (CL.clReleaseCommandQueue(q), released.set()), daemon=True)
    t.start()
    returned = released.wait(5)
    CL.clSetUserEventStatus(user, cl.CL_COMPLETE)      # unblocks a waiting release too
    assert returned, "clReleaseCommandQueue waited for a command behind an unset user event"
    assert CL.clWaitForEvents(1, addr(done)) == cl.CL_SUCCESS
    assert list(read(other, buf, 16, np.int32)) == [0, 1, 2, 3]
    for f, h in ((CL.clReleaseEvent, done), (CL.clReleaseEvent, user), (CL.clReleaseMemObject, buf),
                 (CL.clReleaseCommandQueue, other), (CL.clReleaseContext, ctx)):
        assert f(h) == cl.CL_SUCCESS
