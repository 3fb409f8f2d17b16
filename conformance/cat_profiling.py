"""profiling: event timestamps of a CL_QUEUE_PROFILING_ENABLE queue. QUEUED <= SUBMIT <= START <=
END (<= COMPLETE on 2.0+ devices) for kernels, reads, writes, copies, fills, maps, markers and
barriers; on an in-order queue each command starts after the one before it ended, kernels that
share no buffer included; CL_PROFILING_INFO_NOT_AVAILABLE without the flag, for user events and
before a command completes; durations that agree with the host's clock (a command held back by a
user event starts after the host opened it, a long kernel's START..END lies within the host's
enqueue..finish interval scaled to the device clock's rate)."""
import ctypes
import time
from ctypes import byref, c_void_p

from . import clapi as C
from .framework import Category

CATEGORY = Category("profiling", "event profiling timestamps: order, availability, plausible durations")
check = CATEGORY.check

STAMPS = [("QUEUED", C.CL_PROFILING_COMMAND_QUEUED), ("SUBMIT", C.CL_PROFILING_COMMAND_SUBMIT),
          ("START", C.CL_PROFILING_COMMAND_START), ("END", C.CL_PROFILING_COMMAND_END)]

WORK_SRC = r"""
__kernel void spin(__global float *x, uint iters)
{
    size_t i = get_global_id(0);
    float a = x[i];
    for (uint k = 0; k < iters; k++)
        a = a * 0.999f + 0.5f;
    x[i] = a;
}
__kernel void touch(__global int *y) { y[get_global_id(0)] += 1; }
"""


def stamps(env, t, ev, what):
    """{'QUEUED': ns, ...} (COMPLETE too on 2.0+ devices); failures recorded on t."""
    names = STAMPS + ([("COMPLETE", C.CL_PROFILING_COMMAND_COMPLETE)] if env.version >= (2, 0) else [])
    out = {}
    for name, param in names:
        v = C.cl_ulong(0)
        size = ctypes.c_size_t(0)
        code = env.cl.clGetEventProfilingInfo(ev, param, 8, byref(v), byref(size))
        if code != C.CL_SUCCESS:
            t.fail(f"{what}: clGetEventProfilingInfo(CL_PROFILING_COMMAND_{name}) gave {C.err_name(code)}")
        t.eq(size.value, 8, f"{what}: size of CL_PROFILING_COMMAND_{name}")
        out[name] = v.value
    return out


def order_problems(st, what):
    """QUEUED <= SUBMIT <= START <= END (<= COMPLETE), none zero."""
    names = [n for n in ("QUEUED", "SUBMIT", "START", "END", "COMPLETE") if n in st]
    out = []
    for a, b in zip(names, names[1:]):
        if st[a] > st[b]:
            out.append(f"{what}: CL_PROFILING_COMMAND_{a} ({st[a]}) > CL_PROFILING_COMMAND_{b} ({st[b]})")
    zero = [n for n in names if st[n] == 0]
    if zero:
        out.append(f"{what}: CL_PROFILING_COMMAND_{zero[0]} is 0")
    return out


def sequence_problems(seq):
    """seq: [(what, stamps)] of an in-order queue in enqueue order: each starts after the
    previous one ended and was queued after the previous one was queued."""
    out = []
    for (wa, a), (wb, b) in zip(seq, seq[1:]):
        if b["START"] < a["END"]:
            out.append(f"{wb} STARTed at {b['START']}, before the previous command ({wa}) ENDed at "
                       f"{a['END']}, on an in-order queue")
        if b["QUEUED"] < a["QUEUED"]:
            out.append(f"{wb} was QUEUED at {b['QUEUED']}, before the command enqueued ahead of it ({wa}, "
                       f"{a['QUEUED']})")
    return out


def _ev():
    return c_void_p()


def all_commands(env, t, q):
    """Enqueue one of each kind of command on q; returns [(what, event handle, command type)]."""
    cl = env.cl
    n = 4096
    a, b = env.buffer(t, 4 * n), env.buffer(t, 4 * n)
    host = ctypes.create_string_buffer(4 * n)
    t.cleanup(lambda h: None, host)
    prog = env.program(t, WORK_SRC)
    k = env.kernel(t, prog, "spin")
    env.set_args(t, k, ("mem", a), C.cl_uint(200))
    k2 = env.kernel(t, prog, "touch")
    env.set_args(t, k2, ("mem", b))
    out = []

    def add(what, ctype, code, ev):
        t.ok(code, what)
        t.cleanup(cl.clReleaseEvent, ev.value)
        out.append((what, ev.value, ctype))

    ev = _ev()
    add("clEnqueueWriteBuffer", C.CL_COMMAND_WRITE_BUFFER,
        cl.clEnqueueWriteBuffer(q, a, 0, 0, 4 * n, host, 0, None, byref(ev)), ev)
    ev = _ev()
    pattern = C.cl_uint(7)
    add("clEnqueueFillBuffer", C.CL_COMMAND_FILL_BUFFER,
        cl.clEnqueueFillBuffer(q, b, byref(pattern), 4, 0, 4 * n, 0, None, byref(ev)), ev)
    g = (ctypes.c_size_t * 1)(n)
    ev = _ev()
    add("clEnqueueNDRangeKernel(spin)", C.CL_COMMAND_NDRANGE_KERNEL,
        cl.clEnqueueNDRangeKernel(q, k, 1, None, g, None, 0, None, byref(ev)), ev)
    ev = _ev()
    add("clEnqueueNDRangeKernel(touch, another buffer)", C.CL_COMMAND_NDRANGE_KERNEL,
        cl.clEnqueueNDRangeKernel(q, k2, 1, None, g, None, 0, None, byref(ev)), ev)
    ev = _ev()
    add("clEnqueueCopyBuffer", C.CL_COMMAND_COPY_BUFFER,
        cl.clEnqueueCopyBuffer(q, a, b, 0, 0, 4 * n, 0, None, byref(ev)), ev)
    ev = _ev()
    add("clEnqueueMarkerWithWaitList", C.CL_COMMAND_MARKER,
        cl.clEnqueueMarkerWithWaitList(q, 0, None, byref(ev)), ev)
    ev = _ev()
    err = C.cl_int(0)
    ptr = cl.clEnqueueMapBuffer(q, b, 0, C.CL_MAP_READ, 0, 4 * n, 0, None, byref(ev), byref(err))
    add("clEnqueueMapBuffer", C.CL_COMMAND_MAP_BUFFER, err.value, ev)
    ev = _ev()
    add("clEnqueueUnmapMemObject", C.CL_COMMAND_UNMAP_MEM_OBJECT,
        cl.clEnqueueUnmapMemObject(q, b, c_void_p(ptr), 0, None, byref(ev)), ev)
    ev = _ev()
    add("clEnqueueBarrierWithWaitList", C.CL_COMMAND_BARRIER,
        cl.clEnqueueBarrierWithWaitList(q, 0, None, byref(ev)), ev)
    ev = _ev()
    add("clEnqueueReadBuffer", C.CL_COMMAND_READ_BUFFER,
        cl.clEnqueueReadBuffer(q, b, 0, 0, 4 * n, host, 0, None, byref(ev)), ev)
    t.ok(cl.clFinish(q), "clFinish")
    return out


@check
def every_command_kind(env, t):
    """kernels, reads, writes, fills, copies, maps, unmaps, markers, barriers: ordered timestamps"""
    q = env.new_queue(t, props=C.CL_QUEUE_PROFILING_ENABLE)
    for what, ev, ctype in all_commands(env, t, q):
        t.eq(env.event_info(ev, C.CL_EVENT_COMMAND_TYPE, "uint"), ctype, f"{what}: CL_EVENT_COMMAND_TYPE")
        for p in order_problems(stamps(env, t, ev, what), what):
            t.true(False, p)


@check
def in_order_sequence(env, t):
    """an in-order queue: each command STARTs after the previous one ENDs (independent kernels too)"""
    q = env.new_queue(t, props=C.CL_QUEUE_PROFILING_ENABLE)
    cmds = all_commands(env, t, q)
    seq = [(what, stamps(env, t, ev, what)) for what, ev, _ in cmds]
    for p in sequence_problems(seq):
        t.true(False, p)


@check
def not_available(env, t):
    """CL_PROFILING_INFO_NOT_AVAILABLE: queue without the flag, user events, unfinished commands"""
    cl = env.cl
    q = env.new_queue(t)
    buf = env.buffer(t, 64)
    host = ctypes.create_string_buffer(64)
    ev = _ev()
    t.ok(cl.clEnqueueWriteBuffer(q, buf, 1, 0, 64, host, 0, None, byref(ev)), "clEnqueueWriteBuffer")
    t.cleanup(cl.clReleaseEvent, ev.value)
    v = C.cl_ulong(0)
    for name, param in STAMPS:
        t.code(cl.clGetEventProfilingInfo(ev.value, param, 8, byref(v), None), C.CL_PROFILING_INFO_NOT_AVAILABLE,
               f"clGetEventProfilingInfo({name}) of a command of a queue without profiling")
    ue, code = env.create("clCreateUserEvent", env.context)
    t.ok(code, "clCreateUserEvent")
    t.cleanup(cl.clReleaseEvent, ue)
    t.code(cl.clGetEventProfilingInfo(ue, C.CL_PROFILING_COMMAND_QUEUED, 8, byref(v), None),
           C.CL_PROFILING_INFO_NOT_AVAILABLE, "clGetEventProfilingInfo(QUEUED) of a user event")
    pq = env.new_queue(t, props=C.CL_QUEUE_PROFILING_ENABLE)
    gated = _ev()
    t.ok(cl.clEnqueueWriteBuffer(pq, buf, 0, 0, 64, host, 1, C.ptrs([ue]), byref(gated)),
         "clEnqueueWriteBuffer waiting on a user event")
    t.cleanup(cl.clReleaseEvent, gated.value)
    time.sleep(0.02)
    t.code(cl.clGetEventProfilingInfo(gated.value, C.CL_PROFILING_COMMAND_END, 8, byref(v), None),
           C.CL_PROFILING_INFO_NOT_AVAILABLE, "clGetEventProfilingInfo(END) of a command not yet complete")
    t.ok(cl.clSetUserEventStatus(ue, C.CL_COMPLETE), "clSetUserEventStatus")
    t.ok(cl.clFinish(pq), "clFinish")
    st = stamps(env, t, gated.value, "the write once complete")
    for p in order_problems(st, "the write once complete"):
        t.true(False, p)


@check
def held_back_by_user_event(env, t):
    """a command waiting on a user event set 150 ms later STARTs at least ~150 ms after it was QUEUED"""
    cl = env.cl
    q = env.new_queue(t, props=C.CL_QUEUE_PROFILING_ENABLE)
    buf = env.buffer(t, 1 << 16)
    host = ctypes.create_string_buffer(1 << 16)
    ue, code = env.create("clCreateUserEvent", env.context)
    t.ok(code, "clCreateUserEvent")
    t.cleanup(cl.clReleaseEvent, ue)
    ev = _ev()
    t.ok(cl.clEnqueueWriteBuffer(q, buf, 0, 0, 1 << 16, host, 1, C.ptrs([ue]), byref(ev)), "clEnqueueWriteBuffer")
    t.cleanup(cl.clReleaseEvent, ev.value)
    t.ok(cl.clFlush(q), "clFlush")
    hold = 0.15
    time.sleep(hold)
    t.ok(cl.clSetUserEventStatus(ue, C.CL_COMPLETE), "clSetUserEventStatus")
    t.ok(cl.clFinish(q), "clFinish")
    st = stamps(env, t, ev.value, "gated write")
    for p in order_problems(st, "gated write"):
        t.true(False, p)
    waited = (st["START"] - st["QUEUED"]) / 1e9
    t.true(waited >= 0.8 * hold, f"START - QUEUED of a write held back {hold * 1e3:.0f} ms by a user event is "
                                  f"{waited * 1e3:.2f} ms")


@check
def kernel_duration(env, t):
    """a kernel doing measurable work: END > START, and START..END fits in the host's enqueue..finish"""
    cl = env.cl
    q = env.new_queue(t, props=C.CL_QUEUE_PROFILING_ENABLE)
    prog = env.program(t, WORK_SRC)
    k = env.kernel(t, prog, "spin")
    n = 1 << 14
    x = env.buffer(t, 4 * n)
    env.write(t, x, b"\0" * (4 * n), q=q)
    res = C.info(cl.clGetDeviceInfo, env.device, C.CL_DEVICE_PROFILING_TIMER_RESOLUTION, kind="size")
    t.true(res > 0, f"CL_DEVICE_PROFILING_TIMER_RESOLUTION is {res}")
    g = (ctypes.c_size_t * 1)(n)
    results = []
    for iters in (env.samples(2000, 4000), 1):
        env.set_args(t, k, ("mem", x), C.cl_uint(iters))
        ev = _ev()
        h0 = time.perf_counter_ns()
        t.ok(cl.clEnqueueNDRangeKernel(q, k, 1, None, g, None, 0, None, byref(ev)), "clEnqueueNDRangeKernel")
        t.cleanup(cl.clReleaseEvent, ev.value)
        t.ok(cl.clFinish(q), "clFinish")
        h1 = time.perf_counter_ns()
        st = stamps(env, t, ev.value, f"spin kernel ({iters} iterations)")
        for p in order_problems(st, f"spin kernel ({iters} iterations)"):
            t.true(False, p)
        results.append((iters, st, h1 - h0))
    (iters, st, host_ns), _ = results
    dev = st["END"] - st["START"]
    t.true(dev > 0, f"END - START of a kernel running {iters} iterations on {n} work-items is {dev} ns")
    # the device clock may run at another rate than the host's only within reason: allow 2x and
    # the timer resolution
    t.true(dev <= 2 * host_ns + 2 * res,
           f"END - START of the kernel is {dev} ns, but enqueue..clFinish took {host_ns} ns on the host")
    span = st["END"] - st["QUEUED"]
    t.true(span <= 2 * host_ns + 2 * res,
           f"END - QUEUED of the kernel is {span} ns, but enqueue..clFinish took {host_ns} ns on the host")


@check
def complete_timestamp(env, t):
    """CL_PROFILING_COMMAND_COMPLETE (2.0+): at or after END, for kernels and transfers"""
    if env.version < (2, 0):
        t.skip("CL_PROFILING_COMMAND_COMPLETE is OpenCL 2.0")
    q = env.new_queue(t, props=C.CL_QUEUE_PROFILING_ENABLE)
    for what, ev, _ in all_commands(env, t, q):
        st = stamps(env, t, ev, what)
        t.true("COMPLETE" in st and st["COMPLETE"] >= st["END"],
               f"{what}: CL_PROFILING_COMMAND_COMPLETE {st.get('COMPLETE')} < END {st['END']}")


@check
def two_queues_one_clock(env, t):
    """timestamps of two profiling queues of one device share a clock: a command gated on another
    queue's command STARTs after that one ENDs"""
    cl = env.cl
    q1 = env.new_queue(t, props=C.CL_QUEUE_PROFILING_ENABLE)
    q2 = env.new_queue(t, props=C.CL_QUEUE_PROFILING_ENABLE)
    prog = env.program(t, WORK_SRC)
    k = env.kernel(t, prog, "spin")
    n = 1 << 12
    x = env.buffer(t, 4 * n)
    env.set_args(t, k, ("mem", x), C.cl_uint(500))
    g = (ctypes.c_size_t * 1)(n)
    e1 = _ev()
    t.ok(cl.clEnqueueNDRangeKernel(q1, k, 1, None, g, None, 0, None, byref(e1)), "clEnqueueNDRangeKernel(q1)")
    t.cleanup(cl.clReleaseEvent, e1.value)
    host = ctypes.create_string_buffer(4 * n)
    e2 = _ev()
    t.ok(cl.clEnqueueReadBuffer(q2, x, 0, 0, 4 * n, host, 1, C.ptrs([e1.value]), byref(e2)),
         "clEnqueueReadBuffer(q2) waiting on the kernel of q1")
    t.cleanup(cl.clReleaseEvent, e2.value)
    t.ok(cl.clFinish(q2), "clFinish(q2)")
    t.ok(cl.clFinish(q1), "clFinish(q1)")
    a = stamps(env, t, e1.value, "kernel on q1")
    b = stamps(env, t, e2.value, "read on q2")
    t.true(b["START"] >= a["END"], f"the read on q2 STARTed at {b['START']}, before the kernel on q1 it waited "
                                   f"for ENDed ({a['END']})")
