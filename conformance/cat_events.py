"""events: in-order and out-of-order queues, markers, barriers, user events (gating, failure
propagation), callbacks (exactly once per status, in status order, late registration) and the
order of profiling timestamps."""
import ctypes
import threading
import time
from ctypes import byref, c_void_p

from . import clapi as C
from .framework import Category

CATEGORY = Category("events", "queues, markers, barriers, user events, callbacks, profiling")
check = CATEGORY.check


def _user_event(env, t):
    h, code = env.create("clCreateUserEvent", env.context)
    t.ok(code, "clCreateUserEvent")
    return t.cleanup(env.cl.clReleaseEvent, h)


def _status(env, ev):
    return env.event_info(ev, C.CL_EVENT_COMMAND_EXECUTION_STATUS, "int")


def _write(env, t, q, buf, data, offset=0, wait=(), blocking=False):
    host = ctypes.create_string_buffer(bytes(data), len(data))
    ev = c_void_p()
    t.ok(env.cl.clEnqueueWriteBuffer(q, buf, 1 if blocking else 0, offset, len(data), host, len(wait),
                                     C.ptrs(wait) if wait else None, byref(ev)),
         f"clEnqueueWriteBuffer(offset={offset}, size={len(data)}, {len(wait)} events to wait for)")
    t.cleanup(env.cl.clReleaseEvent, ev.value)
    t.cleanup(lambda h: h, host)  # keep the host memory alive until the check ends
    return ev.value


def _read(env, t, q, buf, size, offset=0, wait=()):
    host = ctypes.create_string_buffer(size)
    ev = c_void_p()
    t.ok(env.cl.clEnqueueReadBuffer(q, buf, 0, offset, size, host, len(wait),
                                    C.ptrs(wait) if wait else None, byref(ev)),
         f"clEnqueueReadBuffer(offset={offset}, size={size})")
    t.cleanup(env.cl.clReleaseEvent, ev.value)
    return host, ev.value


def _marker(env, t, q, wait=(), barrier=False):
    ev = c_void_p()
    fn = env.cl.clEnqueueBarrierWithWaitList if barrier else env.cl.clEnqueueMarkerWithWaitList
    t.ok(fn(q, len(wait), C.ptrs(wait) if wait else None, byref(ev)),
         f"clEnqueue{'Barrier' if barrier else 'Marker'}WithWaitList({len(wait)} events)")
    return t.cleanup(env.cl.clReleaseEvent, ev.value)


def wait_status(env, ev, want, seconds=5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        s = _status(env, ev)
        if s == want or s < 0:
            return s
        time.sleep(0.005)
    return _status(env, ev)


@check
def in_order_queue(env, t):
    """an in-order queue runs commands in order: a chain of writes to one place ends with the last"""
    q = env.new_queue(t)
    buf = env.buffer(t, 64)
    evs = [_write(env, t, q, buf, bytes([i]) * 64) for i in range(1, 21)]
    host, rev = _read(env, t, q, buf, 64)
    env.wait(t, [rev])
    t.eq(host.raw, bytes([20]) * 64, "buffer after 20 non-blocking writes on an in-order queue")
    for i, ev in enumerate(evs):
        t.eq(_status(env, ev), C.CL_COMPLETE, f"status of write {i + 1} after the read completed")
    t.eq(env.event_info(evs[0], C.CL_EVENT_COMMAND_QUEUE, "ptr"), q, "CL_EVENT_COMMAND_QUEUE")
    t.eq(env.event_info(evs[0], C.CL_EVENT_COMMAND_TYPE, "uint"), C.CL_COMMAND_WRITE_BUFFER,
         "CL_EVENT_COMMAND_TYPE of a write")


@check
def out_of_order_queue(env, t):
    """an out-of-order queue honours wait lists, markers and barriers"""
    props = env.device_info(C.CL_DEVICE_QUEUE_PROPERTIES, "ulong")
    if not props & C.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE:
        t.skip("the device does not support out-of-order queues")
    q = env.new_queue(t, props=C.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    buf = env.buffer(t, 256)
    gate = _user_event(env, t)
    e1 = _write(env, t, q, buf, b"\x01" * 256, wait=[gate])
    e2 = _write(env, t, q, buf, b"\x02" * 128, wait=[e1])      # after e1
    e3 = _write(env, t, q, buf, b"\x03" * 64, offset=192, wait=[e2])
    host, rev = _read(env, t, q, buf, 256, wait=[e3])
    time.sleep(0.05)
    t.true(_status(env, e1) > C.CL_COMPLETE, "a write waiting on an unset user event already completed")
    t.ok(env.cl.clSetUserEventStatus(gate, C.CL_COMPLETE), "clSetUserEventStatus")
    env.wait(t, [rev])
    want = b"\x02" * 128 + b"\x01" * 64 + b"\x03" * 64
    t.eq(host.raw, want, "buffer after chained writes on an out-of-order queue")
    # a barrier waits for everything enqueued before it
    evs = [_write(env, t, q, buf, bytes([0x10 + i]) * 32, offset=32 * i) for i in range(8)]
    bar = _marker(env, t, q, barrier=True)
    host2, rev2 = _read(env, t, q, buf, 256)
    env.wait(t, [rev2])
    for i, ev in enumerate(evs):
        t.eq(_status(env, ev), C.CL_COMPLETE, f"write {i} after a barrier and a later read completed")
    t.eq(host2.raw, b"".join(bytes([0x10 + i]) * 32 for i in range(8)),
         "read after a barrier on an out-of-order queue")
    t.eq(_status(env, bar), C.CL_COMPLETE, "barrier status")


@check
def markers_and_barriers(env, t):
    """markers without wait lists complete after all earlier commands; with lists after those"""
    cl = env.cl
    q = env.new_queue(t)
    buf = env.buffer(t, 64)
    gate = _user_event(env, t)
    w = _write(env, t, q, buf, b"\x07" * 64, wait=[gate])
    m = _marker(env, t, q)
    b = _marker(env, t, q, barrier=True)
    m2 = _marker(env, t, q, wait=[gate])
    time.sleep(0.05)
    for ev, what in [(w, "gated write"), (m, "marker"), (b, "barrier"), (m2, "marker waiting on the gate")]:
        t.true(_status(env, ev) > C.CL_COMPLETE, f"{what} completed before the user event was set")
    t.ok(cl.clSetUserEventStatus(gate, C.CL_COMPLETE), "clSetUserEventStatus")
    env.wait(t, [m, b, m2])
    t.eq(_status(env, w), C.CL_COMPLETE, "the write a completed marker came after")
    t.eq(env.event_info(m, C.CL_EVENT_COMMAND_TYPE, "uint"), C.CL_COMMAND_MARKER, "marker command type")
    t.eq(env.event_info(b, C.CL_EVENT_COMMAND_TYPE, "uint"), C.CL_COMMAND_BARRIER, "barrier command type")
    t.ok(cl.clFinish(q), "clFinish")


@check
def user_event_gating(env, t):
    """commands wait for user events; the user event reports CL_SUBMITTED until set"""
    q = env.new_queue(t)
    buf = env.buffer(t, 64)
    env.write(t, buf, b"\0" * 64, q=q)
    gates = [_user_event(env, t) for _ in range(3)]
    w = _write(env, t, q, buf, b"\x09" * 64, wait=gates)
    for g in gates:
        t.eq(_status(env, g), C.CL_SUBMITTED, "status of a new user event")
    for i, g in enumerate(gates[:2]):
        t.ok(env.cl.clSetUserEventStatus(g, C.CL_COMPLETE), f"set user event {i}")
    time.sleep(0.05)
    t.true(_status(env, w) > C.CL_COMPLETE, "a write waiting on 3 user events ran after 2 were set")
    t.ok(env.cl.clSetUserEventStatus(gates[2], C.CL_COMPLETE), "set user event 2")
    env.wait(t, [w])
    t.eq(env.read(t, buf, 64, q=q), b"\x09" * 64, "buffer after the gated write ran")


@check
def failure_propagation(env, t):
    """a user event set to an error makes the commands waiting on it fail, and their dependents"""
    cl = env.cl
    q = env.new_queue(t)
    buf = env.buffer(t, 64)
    env.write(t, buf, b"\x01" * 64, q=q)
    gate = _user_event(env, t)
    w = _write(env, t, q, buf, b"\x02" * 64, wait=[gate])
    dependent = _marker(env, t, q, wait=[w])
    t.ok(cl.clSetUserEventStatus(gate, -1234), "clSetUserEventStatus(-1234)")
    t.eq(_status(env, gate), -1234, "status of the user event set to -1234")
    s = wait_status(env, w, C.CL_COMPLETE)
    t.true(s < 0, f"status of a write waiting on a failed user event: {s}, expected a negative value")
    s = wait_status(env, dependent, C.CL_COMPLETE)
    t.true(s < 0, f"status of a marker waiting on that failed write: {s}, expected a negative value")
    t.code(cl.clWaitForEvents(1, C.ptrs([w])), C.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
           "clWaitForEvents(a failed command)")
    # the failed write must not have happened (the queue may be unusable afterwards: fresh one)
    q2 = env.new_queue(t)
    t.eq(env.read(t, buf, 64, q=q2), b"\x01" * 64, "buffer contents: the failed write ran anyway")


class Recorder:
    def __init__(self):
        self.calls = []
        self.lock = threading.Lock()
        self.fn = C.EVENT_CALLBACK(self._cb)

    def _cb(self, ev, status, user):
        with self.lock:
            self.calls.append((ev, status, user or 0))


def callback_problems(calls, registered, ev):
    """calls: [(event, status, user_data)]; registered: {user_data: type} -> messages."""
    out = []
    for user, kind in registered.items():
        mine = [c for c in calls if c[2] == user]
        if len(mine) != 1:
            out.append(f"callback for status {kind} (user_data {user}) ran {len(mine)} times, not once")
            continue
        e, status, _ = mine[0]
        if e != ev:
            out.append(f"callback for status {kind} got event {e:#x}, not {ev:#x}")
        if kind == C.CL_COMPLETE and status != C.CL_COMPLETE:
            out.append(f"CL_COMPLETE callback got status {status}")
        elif status > kind:
            out.append(f"callback for status {kind} ran with status {status}, before reaching it")
    return out


@check
def callbacks(env, t):
    """each callback runs exactly once, with its event and a status at or past the one asked for"""
    cl = env.cl
    q = env.new_queue(t)
    buf = env.buffer(t, 64)
    gate = _user_event(env, t)
    w = _write(env, t, q, buf, b"\x03" * 64, wait=[gate])
    rec = Recorder()
    registered = {1: C.CL_SUBMITTED, 2: C.CL_RUNNING, 3: C.CL_COMPLETE, 4: C.CL_COMPLETE}
    for user, kind in registered.items():
        t.ok(cl.clSetEventCallback(w, kind, rec.fn, c_void_p(user)), f"clSetEventCallback({kind})")
    ug = Recorder()
    t.ok(cl.clSetEventCallback(gate, C.CL_COMPLETE, ug.fn, c_void_p(7)), "clSetEventCallback(user event)")
    t.ok(cl.clSetUserEventStatus(gate, C.CL_COMPLETE), "clSetUserEventStatus")
    env.wait(t, [w])
    t.ok(cl.clFinish(q), "clFinish")
    deadline = time.monotonic() + 5
    while len(rec.calls) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    for m in callback_problems(rec.calls, registered, w):
        t.true(False, m)
    late = Recorder()  # registered after completion: still called, once
    t.ok(cl.clSetEventCallback(w, C.CL_COMPLETE, late.fn, c_void_p(5)), "clSetEventCallback after completion")
    deadline = time.monotonic() + 5
    while not late.calls and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    for m in callback_problems(late.calls, {5: C.CL_COMPLETE}, w):
        t.true(False, f"(registered after completion) {m}")
    for m in callback_problems(ug.calls, {7: C.CL_COMPLETE}, gate):
        t.true(False, f"(user event) {m}")
    order = [u for _, _, u in rec.calls]
    if set(order) == {1, 2, 3, 4}:
        t.true(order.index(1) < order.index(3) and order.index(2) < order.index(3),
               f"callbacks ran in the order {order} (user_data), SUBMITTED/RUNNING after COMPLETE")


@check
def failed_event_callbacks(env, t):
    """a CL_COMPLETE callback of a command that failed runs once with the negative status"""
    cl = env.cl
    q = env.new_queue(t)
    buf = env.buffer(t, 64)
    gate = _user_event(env, t)
    w = _write(env, t, q, buf, b"\x03" * 64, wait=[gate])
    rec = Recorder()
    t.ok(cl.clSetEventCallback(w, C.CL_COMPLETE, rec.fn, c_void_p(1)), "clSetEventCallback")
    t.ok(cl.clSetUserEventStatus(gate, -77), "clSetUserEventStatus(-77)")
    deadline = time.monotonic() + 5
    while not rec.calls and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    t.eq(len(rec.calls), 1, "number of CL_COMPLETE callbacks of a failed command")
    if rec.calls:
        t.true(rec.calls[0][1] < 0, f"status passed to the callback of a failed command: {rec.calls[0][1]}")


def profiling_problems(stamps, version):
    """stamps: {name: ns} -> messages when QUEUED <= SUBMIT <= START <= END (<= COMPLETE) fails."""
    names = ["QUEUED", "SUBMIT", "START", "END"] + (["COMPLETE"] if "COMPLETE" in stamps else [])
    out = []
    for a, b in zip(names, names[1:]):
        if stamps[a] > stamps[b]:
            out.append(f"CL_PROFILING_COMMAND_{a} ({stamps[a]}) > CL_PROFILING_COMMAND_{b} ({stamps[b]})")
    if stamps["QUEUED"] == 0:
        out.append("CL_PROFILING_COMMAND_QUEUED is 0")
    return out


@check
def profiling_order(env, t):
    """profiling timestamps are ordered per command and across in-order commands"""
    cl = env.cl
    q = env.new_queue(t, props=C.CL_QUEUE_PROFILING_ENABLE)
    buf = env.buffer(t, 1 << 16)
    evs = [_write(env, t, q, buf, bytes([i]) * (1 << 16)) for i in range(4)]
    env.wait(t, evs)
    prev_end = 0
    for i, ev in enumerate(evs):
        stamps = {}
        for param, name in [(C.CL_PROFILING_COMMAND_QUEUED, "QUEUED"), (C.CL_PROFILING_COMMAND_SUBMIT, "SUBMIT"),
                            (C.CL_PROFILING_COMMAND_START, "START"), (C.CL_PROFILING_COMMAND_END, "END"),
                            (C.CL_PROFILING_COMMAND_COMPLETE, "COMPLETE")]:
            if name == "COMPLETE" and env.version < (2, 0):
                continue
            raw, size = C.raw_info(cl.clGetEventProfilingInfo, ev, param, name=f"CL_PROFILING_COMMAND_{name}")
            t.eq(size, 8, f"CL_PROFILING_COMMAND_{name} size (cl_ulong)")
            stamps[name] = C.decode(raw, "ulong") if size == 8 else 0
        for m in profiling_problems(stamps, env.version):
            t.true(False, f"write {i}: {m}")
        t.true(stamps["START"] >= prev_end,
               f"write {i} STARTed ({stamps['START']}) before write {i - 1} ENDed ({prev_end}) on an "
               "in-order queue")
        prev_end = stamps["END"]
    t.code(cl.clGetEventProfilingInfo(evs[0], 0x7FFF, 8, byref(C.cl_ulong()), None), C.CL_INVALID_VALUE,
           "clGetEventProfilingInfo(param=0x7fff)")
    t.code(cl.clGetEventProfilingInfo(evs[0], C.CL_PROFILING_COMMAND_START, 4, byref(C.cl_ulong()), None),
           C.CL_INVALID_VALUE, "clGetEventProfilingInfo(param_value_size=4)")


@check
def wait_for_events_many(env, t):
    """clWaitForEvents over many events of two queues of one context"""
    q1, q2 = env.new_queue(t), env.new_queue(t)
    buf = env.buffer(t, 4096)
    evs = []
    for i in range(16):
        evs.append(_write(env, t, q1 if i % 2 else q2, buf, bytes([i]) * 256, offset=256 * i))
    env.wait(t, evs)
    t.eq([_status(env, e) for e in evs], [C.CL_COMPLETE] * 16, "statuses after clWaitForEvents")
    t.eq(env.read(t, buf, 4096, q=q1), b"".join(bytes([i]) * 256 for i in range(16)),
         "buffer after writes from two queues")


@check
def event_refcounts(env, t):
    """events stay valid while retained; CL_EVENT_REFERENCE_COUNT follows retain/release"""
    cl = env.cl
    ue = _user_event(env, t)
    rc = env.event_info(ue, C.CL_EVENT_REFERENCE_COUNT, "uint")
    t.ok(cl.clRetainEvent(ue), "clRetainEvent")
    t.eq(env.event_info(ue, C.CL_EVENT_REFERENCE_COUNT, "uint"), rc + 1, "reference count after retain")
    t.ok(cl.clReleaseEvent(ue), "clReleaseEvent")
    t.eq(env.event_info(ue, C.CL_EVENT_REFERENCE_COUNT, "uint"), rc, "reference count after release")
    t.ok(cl.clSetUserEventStatus(ue, C.CL_COMPLETE), "clSetUserEventStatus")
