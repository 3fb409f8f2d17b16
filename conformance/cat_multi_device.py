"""multi_device: one context holding every device of the platform. clGetContextInfo lists them;
a program built for all of them has a binary and a build status per device; kernels run on a
queue of each device; a buffer written through one device's queue is read and modified through
another's, ordered by events across the queues (the second queue's commands wait for the first's
events, no clFinish in between); sub-buffers of one buffer are written by different devices at
once. Skipped when the platform has a single device (the runner gives PyPlat two devices for this
category through PYPLAT_DEVICES=2)."""
import ctypes
from ctypes import byref, c_size_t, c_void_p

import numpy as np

from . import clapi as C
from .framework import Category


def platform_devices(env):
    n = C.cl_uint(0)
    C.ok(env.cl.clGetDeviceIDs(env.platform, C.CL_DEVICE_TYPE_ALL, 0, None, byref(n)), "clGetDeviceIDs")
    devs = (c_void_p * n.value)()
    C.ok(env.cl.clGetDeviceIDs(env.platform, C.CL_DEVICE_TYPE_ALL, n.value, devs, None), "clGetDeviceIDs")
    return [d for d in devs]


# No category-level requirement: the runner decides in its own process, where PyPlat may have one
# device while the category's child (PYPLAT_DEVICES=2) has two. Each check skips instead.
CATEGORY = Category("multi_device", "one context over every device: programs, queues, shared buffers")
check = CATEGORY.check

SRC = r"""
__kernel void scale_add(__global int *x, int mul, int add)
{
    size_t i = get_global_id(0);
    x[i] = x[i] * mul + add;
}
__kernel void fill_id(__global int *x, int base)
{
    x[get_global_id(0)] = base + (int)get_global_id(0);
}
"""


class Multi:
    """A context over all devices, a queue per device and the program built for all of them."""

    def __init__(self, env, t, build=True):
        self.env, self.t = env, t
        cl = env.cl
        self.devices = platform_devices(env)
        if len(self.devices) < 2:
            t.skip("the platform has a single device (PyPlat: PYPLAT_DEVICES=2 or more)")
        n = len(self.devices)
        e = C.cl_int(0)
        self.ctx = cl.clCreateContext(None, n, C.ptrs(self.devices), None, None, byref(e))
        t.ok(e.value, f"clCreateContext({n} devices)")
        t.cleanup(cl.clReleaseContext, self.ctx)
        self.queues = []
        for d in self.devices:
            q = cl.clCreateCommandQueue(self.ctx, d, 0, byref(e))
            t.ok(e.value, "clCreateCommandQueue")
            t.cleanup(cl.clReleaseCommandQueue, q)
            self.queues.append(q)
        if build:
            src = SRC.encode()
            strings = (ctypes.c_char_p * 1)(src)
            lengths = (c_size_t * 1)(len(src))
            self.prog, code = env.create("clCreateProgramWithSource", self.ctx, 1, strings, lengths)
            t.ok(code, "clCreateProgramWithSource")
            t.cleanup(cl.clReleaseProgram, self.prog)
            t.ok(cl.clBuildProgram(self.prog, 0, None, b"", None, None), "clBuildProgram(all devices)")

    def buffer(self, nbytes, flags=C.CL_MEM_READ_WRITE, host=None):
        h, code = self.env.create("clCreateBuffer", self.ctx, flags, nbytes, host)
        self.t.ok(code, "clCreateBuffer")
        return self.t.cleanup(self.env.cl.clReleaseMemObject, h)

    def kernel(self, name, *args):
        k = self.env.kernel(self.t, self.prog, name)
        self.env.set_args(self.t, k, *args)
        return k

    def ndrange(self, q, k, n, wait=()):
        ev = c_void_p()
        g = (c_size_t * 1)(n)
        self.t.ok(self.env.cl.clEnqueueNDRangeKernel(q, k, 1, None, g, None, len(wait),
                                                     C.ptrs(wait) if wait else None, byref(ev)),
                  "clEnqueueNDRangeKernel")
        return self.t.cleanup(self.env.cl.clReleaseEvent, ev.value)


@check
def context_devices(env, t):
    """clGetContextInfo: CL_CONTEXT_NUM_DEVICES and CL_CONTEXT_DEVICES list every device in order"""
    m = Multi(env, t, build=False)
    cl = env.cl
    t.eq(C.info(cl.clGetContextInfo, m.ctx, C.CL_CONTEXT_NUM_DEVICES, kind="uint"), len(m.devices),
         "CL_CONTEXT_NUM_DEVICES")
    t.eq(C.info(cl.clGetContextInfo, m.ctx, C.CL_CONTEXT_DEVICES, kind="ptrs"), m.devices, "CL_CONTEXT_DEVICES")
    for i, q in enumerate(m.queues):
        t.eq(C.info(cl.clGetCommandQueueInfo, q, C.CL_QUEUE_DEVICE, kind="ptr"), m.devices[i],
             f"CL_QUEUE_DEVICE of the queue of device {i}")
    # a context of the devices in reverse order lists them in that order
    e = C.cl_int(0)
    rev = list(reversed(m.devices))
    ctx2 = cl.clCreateContext(None, len(rev), C.ptrs(rev), None, None, byref(e))
    t.ok(e.value, "clCreateContext(devices reversed)")
    t.cleanup(cl.clReleaseContext, ctx2)
    t.eq(C.info(cl.clGetContextInfo, ctx2, C.CL_CONTEXT_DEVICES, kind="ptrs"), rev, "CL_CONTEXT_DEVICES (reversed)")
    ctx3 = cl.clCreateContextFromType(None, C.CL_DEVICE_TYPE_ALL, None, None, byref(e))
    if e.value == C.CL_INVALID_PLATFORM:
        t.note("clCreateContextFromType without a platform is not supported (the ICD loader needs one)")
        return
    t.ok(e.value, "clCreateContextFromType(CL_DEVICE_TYPE_ALL)")
    t.cleanup(cl.clReleaseContext, ctx3)


@check
def program_for_all_devices(env, t):
    """a program built for every device: CL_PROGRAM_DEVICES, a build status and binary per device"""
    m = Multi(env, t)
    cl = env.cl
    t.eq(C.info(cl.clGetProgramInfo, m.prog, C.CL_PROGRAM_NUM_DEVICES, kind="uint"), len(m.devices),
         "CL_PROGRAM_NUM_DEVICES")
    t.eq(C.info(cl.clGetProgramInfo, m.prog, C.CL_PROGRAM_DEVICES, kind="ptrs"), m.devices, "CL_PROGRAM_DEVICES")
    for i, d in enumerate(m.devices):
        st = C.info(cl.clGetProgramBuildInfo, m.prog, d, C.CL_PROGRAM_BUILD_STATUS, kind="int")
        t.eq(st, C.CL_BUILD_SUCCESS, f"CL_PROGRAM_BUILD_STATUS for device {i}")
    sizes = C.info(cl.clGetProgramInfo, m.prog, C.CL_PROGRAM_BINARY_SIZES, kind="sizes")
    t.eq(len(sizes), len(m.devices), "number of CL_PROGRAM_BINARY_SIZES entries")
    t.true(all(s > 0 for s in sizes), f"CL_PROGRAM_BINARY_SIZES {sizes}: a device without a binary")
    # a program built for the second device only cannot run on the first
    src = SRC.encode()
    strings = (ctypes.c_char_p * 1)(src)
    lengths = (c_size_t * 1)(len(src))
    p2, code = env.create("clCreateProgramWithSource", m.ctx, 1, strings, lengths)
    t.ok(code, "clCreateProgramWithSource")
    t.cleanup(cl.clReleaseProgram, p2)
    t.ok(cl.clBuildProgram(p2, 1, C.ptrs([m.devices[1]]), b"", None, None), "clBuildProgram(device 1 only)")
    st0 = C.info(cl.clGetProgramBuildInfo, p2, m.devices[0], C.CL_PROGRAM_BUILD_STATUS, kind="int")
    t.eq(st0, C.CL_BUILD_NONE, "CL_PROGRAM_BUILD_STATUS of device 0 after building for device 1 only")
    k = env.kernel(t, p2, "fill_id")
    buf = m.buffer(64)
    env.set_args(t, k, ("mem", buf), C.cl_int(0))
    g = (c_size_t * 1)(16)
    t.code(cl.clEnqueueNDRangeKernel(m.queues[0], k, 1, None, g, None, 0, None, None),
           C.CL_INVALID_PROGRAM_EXECUTABLE, "clEnqueueNDRangeKernel on device 0 of a program built for device 1")
    t.code(cl.clEnqueueNDRangeKernel(m.queues[1], k, 1, None, g, None, 0, None, None), C.CL_SUCCESS,
           "clEnqueueNDRangeKernel on device 1 of a program built for device 1")
    t.ok(cl.clFinish(m.queues[1]), "clFinish")


@check
def kernels_on_each_device(env, t):
    """the same kernel object runs on every device's queue; each writes its own buffer"""
    m = Multi(env, t)
    n = 1000
    bufs = [m.buffer(4 * n) for _ in m.devices]
    for i, q in enumerate(m.queues):
        k = m.kernel("fill_id", ("mem", bufs[i]), C.cl_int(100000 * (i + 1)))
        m.ndrange(q, k, n)
    for i, q in enumerate(m.queues):
        env.cl.clFinish(q)
        got = np.frombuffer(env.read(t, bufs[i], 4 * n, q=q), dtype=np.int32)
        t.eq(got.tolist(), list(range(100000 * (i + 1), 100000 * (i + 1) + n)), f"buffer filled on device {i}")


@check
def buffer_across_devices(env, t):
    """write on device 0, modify on 1, 0, 1, ... (waiting on the previous event), read on the last"""
    m = Multi(env, t)
    cl = env.cl
    n = env.samples(4096, 1 << 16)
    rng = env.rng(900)
    data = rng.integers(-1000, 1000, n, dtype=np.int32)
    buf = m.buffer(4 * n)
    host = ctypes.create_string_buffer(data.tobytes(), data.nbytes)
    ev = c_void_p()
    t.ok(cl.clEnqueueWriteBuffer(m.queues[0], buf, 0, 0, data.nbytes, host, 0, None, byref(ev)),
         "clEnqueueWriteBuffer(device 0)")
    t.cleanup(cl.clReleaseEvent, ev.value)
    last = ev.value
    want = data.astype(np.int64)
    steps = [(2, 1), (3, -5), (-1, 7), (5, 2), (1, 11), (-2, 3)]
    for j, (mul, add) in enumerate(steps):
        q = m.queues[(j + 1) % len(m.queues)]
        k = m.kernel("scale_add", ("mem", buf), C.cl_int(mul), C.cl_int(add))
        last = m.ndrange(q, k, n, wait=[last])
        want = want * mul + add
    out = ctypes.create_string_buffer(data.nbytes)
    rq = m.queues[len(steps) % len(m.queues)]
    rev = c_void_p()
    t.ok(cl.clEnqueueReadBuffer(rq, buf, 0, 0, data.nbytes, out, 1, C.ptrs([last]), byref(rev)),
         "clEnqueueReadBuffer waiting on the last kernel (another device)")
    t.cleanup(cl.clReleaseEvent, rev.value)
    t.ok(cl.clWaitForEvents(1, C.ptrs([rev.value])), "clWaitForEvents")
    got = np.frombuffer(out.raw, dtype=np.int32)
    want = ((want + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)
    bad = np.nonzero(got != want)[0]
    t.true(len(bad) == 0, f"after a write and {len(steps)} kernels alternating between devices (ordered by "
                          f"events): {len(bad)} of {n} elements wrong, first [{bad[:1].tolist()}] = "
                          f"{got[bad[:1]].tolist()}, expected {want[bad[:1]].tolist()}")
    for q in m.queues:
        t.ok(cl.clFinish(q), "clFinish")


@check
def copy_and_map_across_devices(env, t):
    """a kernel on device 1 reads what a copy on device 0 produced; a map on device 0 sees device 1's kernel"""
    m = Multi(env, t)
    cl = env.cl
    n = 2048
    src_data = np.arange(n, dtype=np.int32) * 3
    host = ctypes.create_string_buffer(src_data.tobytes(), src_data.nbytes)
    a = m.buffer(4 * n, C.CL_MEM_READ_WRITE | C.CL_MEM_COPY_HOST_PTR, host)
    b = m.buffer(4 * n)
    ev = c_void_p()
    t.ok(cl.clEnqueueCopyBuffer(m.queues[0], a, b, 0, 0, 4 * n, 0, None, byref(ev)), "clEnqueueCopyBuffer(device 0)")
    t.cleanup(cl.clReleaseEvent, ev.value)
    k = m.kernel("scale_add", ("mem", b), C.cl_int(-1), C.cl_int(4))
    kev = m.ndrange(m.queues[1], k, n, wait=[ev.value])
    err = C.cl_int(0)
    mev = c_void_p()
    ptr = cl.clEnqueueMapBuffer(m.queues[0], b, 1, C.CL_MAP_READ, 0, 4 * n, 1, C.ptrs([kev]), byref(mev), byref(err))
    t.ok(err.value, "clEnqueueMapBuffer(device 0) waiting on device 1's kernel")
    t.cleanup(cl.clReleaseEvent, mev.value)
    got = np.frombuffer(ctypes.string_at(ptr, 4 * n), dtype=np.int32).copy()
    t.ok(cl.clEnqueueUnmapMemObject(m.queues[0], b, c_void_p(ptr), 0, None, None), "clEnqueueUnmapMemObject")
    t.ok(cl.clFinish(m.queues[0]), "clFinish")
    t.eq(got.tolist(), (4 - src_data).tolist(), "mapped contents on device 0 after device 1's kernel")


@check
def sub_buffers_shared(env, t):
    """sub-buffers of one buffer written by different devices at once, read back through the parent"""
    m = Multi(env, t)
    cl = env.cl
    align = max(env.device_info(C.CL_DEVICE_MEM_BASE_ADDR_ALIGN, "uint", device=d) for d in m.devices) // 8
    part = max(align, 1024)
    nd = len(m.devices)
    parent = m.buffer(part * nd)
    subs = []
    for i in range(nd):
        region = (c_size_t * 2)(i * part, part)
        h, code = env.create("clCreateSubBuffer", parent, C.CL_MEM_READ_WRITE, C.CL_BUFFER_CREATE_TYPE_REGION,
                             byref(region))
        t.ok(code, f"clCreateSubBuffer(origin={i * part}, size={part})")
        subs.append(t.cleanup(cl.clReleaseMemObject, h))
    evs = []
    for i, q in enumerate(m.queues):
        k = m.kernel("fill_id", ("mem", subs[i]), C.cl_int(1000 * (i + 1)))
        evs.append(m.ndrange(q, k, part // 4))
    out = ctypes.create_string_buffer(part * nd)
    t.ok(cl.clEnqueueReadBuffer(m.queues[0], parent, 1, 0, part * nd, out, len(evs), C.ptrs(evs), None),
         "clEnqueueReadBuffer(parent) waiting on every device's kernel")
    got = np.frombuffer(out.raw, dtype=np.int32).reshape(nd, part // 4)
    for i in range(nd):
        t.eq(got[i].tolist(), list(range(1000 * (i + 1), 1000 * (i + 1) + part // 4)),
             f"sub-buffer {i} (written on device {i}) read through the parent on device 0")
    # the sub-buffer of device 1 read on device 1 after device 0 rewrote it through the parent
    data = bytes(range(256)) * (part // 256)
    host = ctypes.create_string_buffer(data, len(data))
    wev = c_void_p()
    t.ok(cl.clEnqueueWriteBuffer(m.queues[0], parent, 0, part, part, host, 0, None, byref(wev)),
         "clEnqueueWriteBuffer(parent, device 0)")
    t.cleanup(cl.clReleaseEvent, wev.value)
    back = ctypes.create_string_buffer(part)
    t.ok(cl.clEnqueueReadBuffer(m.queues[1], subs[1], 1, 0, part, back, 1, C.ptrs([wev.value]), None),
         "clEnqueueReadBuffer(sub-buffer 1, device 1) waiting on the write")
    t.eq(back.raw, data, "sub-buffer 1 read on device 1 after device 0 wrote its part of the parent")
    for q in m.queues:
        t.ok(cl.clFinish(q), "clFinish")


@check
def user_event_gates_two_devices(env, t):
    """one user event holds back commands on every device's queue until it is set"""
    import time
    m = Multi(env, t)
    cl = env.cl
    ue, code = env.create("clCreateUserEvent", m.ctx)
    t.ok(code, "clCreateUserEvent")
    t.cleanup(cl.clReleaseEvent, ue)
    n = 256
    bufs = [m.buffer(4 * n) for _ in m.devices]
    evs = []
    for i, q in enumerate(m.queues):
        env.write(t, bufs[i], b"\0" * (4 * n), q=q)
        k = m.kernel("fill_id", ("mem", bufs[i]), C.cl_int(7 + i))
        evs.append(m.ndrange(q, k, n, wait=[ue]))
        t.ok(cl.clFlush(q), "clFlush")
    time.sleep(0.05)
    for i, ev in enumerate(evs):
        st = env.event_info(ev, C.CL_EVENT_COMMAND_EXECUTION_STATUS, "int")
        t.true(st > C.CL_COMPLETE, f"the kernel on device {i} completed before the user event was set")
    t.ok(cl.clSetUserEventStatus(ue, C.CL_COMPLETE), "clSetUserEventStatus")
    t.ok(cl.clWaitForEvents(len(evs), C.ptrs(evs)), "clWaitForEvents(kernels of every device)")
    for i, q in enumerate(m.queues):
        got = np.frombuffer(env.read(t, bufs[i], 4 * n, q=q), dtype=np.int32)
        t.eq(got.tolist(), list(range(7 + i, 7 + i + n)), f"buffer of device {i} after the gate opened")
