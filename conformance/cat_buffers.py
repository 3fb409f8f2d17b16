"""buffers: creation flags and initial contents, sub-buffers, read/write/copy at random ranges,
the rect variants against a host model, fill with every pattern size, map/unmap with each flag,
USE_HOST_PTR coherence, migration and destructor callbacks. A host-side model of every buffer
gives the expected bytes; a mismatch reports the first differing offset."""
import ctypes
from ctypes import byref, c_size_t, c_void_p

import numpy as np

from . import clapi as C
from .framework import Category

CATEGORY = Category("buffers", "buffer creation, sub-buffers, read/write/copy/rect/fill, map, coherence")
check = CATEGORY.check


def first_difference(got, expected):
    """None when equal, else a message naming the first differing byte."""
    got, expected = bytes(got), bytes(expected)
    if got == expected:
        return None
    if len(got) != len(expected):
        return f"{len(got)} bytes where {len(expected)} were expected"
    i = next(k for k in range(len(got)) if got[k] != expected[k])
    n = sum(1 for a, b in zip(got, expected) if a != b)
    return (f"{n} of {len(got)} bytes differ; first at offset {i}: got "
            f"{got[i:i + 8].hex()} expected {expected[i:i + 8].hex()}")


def same(t, got, expected, what):
    d = first_difference(got, expected)
    return t.true(d is None, f"{what}: {d}")


def rand_bytes(rng, n):
    return rng.integers(0, 256, n, dtype=np.uint8).tobytes()


def _map(env, t, buf, flags, offset, size, q=None, blocking=True):
    e = C.cl_int(0)
    ev = c_void_p()
    p = env.cl.clEnqueueMapBuffer(q or env.queue, buf, 1 if blocking else 0, flags, offset, size, 0,
                                  None, byref(ev), byref(e))
    t.ok(e.value, f"clEnqueueMapBuffer(flags={flags:#x}, offset={offset}, size={size})")
    t.require(p, "clEnqueueMapBuffer returned NULL with CL_SUCCESS")
    t.cleanup(env.cl.clReleaseEvent, ev.value)
    return p, ev.value


def _unmap(env, t, buf, p, q=None):
    t.ok(env.cl.clEnqueueUnmapMemObject(q or env.queue, buf, p, 0, None, None), "clEnqueueUnmapMemObject")
    t.ok(env.cl.clFinish(q or env.queue), "clFinish")


@check
def read_write_ranges(env, t):
    """writes at random (offset, size) then whole reads agree with a host model"""
    rng = env.rng(1)
    size = 4096
    buf = env.buffer(t, size)
    model = bytearray(rand_bytes(rng, size))
    env.write(t, buf, model)
    for _ in range(env.samples(8, 40)):
        off = int(rng.integers(0, size))
        n = int(rng.integers(1, size - off + 1))
        data = rand_bytes(rng, n)
        env.write(t, buf, data, offset=off)
        model[off:off + n] = data
        if not same(t, env.read(t, buf, size), model, f"after writing {n} bytes at offset {off}"):
            break
        roff = int(rng.integers(0, size))
        rn = int(rng.integers(1, size - roff + 1))
        same(t, env.read(t, buf, rn, offset=roff), model[roff:roff + rn],
             f"read of {rn} bytes at offset {roff}")


@check
def creation_flags(env, t):
    """COPY_HOST_PTR copies at creation; ALLOC_HOST_PTR, READ_ONLY, WRITE_ONLY, HOST_* buffers work"""
    rng = env.rng(2)
    data = rand_bytes(rng, 1024)
    host = ctypes.create_string_buffer(data, 1024)
    buf = env.buffer(t, 1024, C.CL_MEM_READ_WRITE | C.CL_MEM_COPY_HOST_PTR, host)
    ctypes.memset(host, 0, 1024)  # a copy: later host changes must not show
    same(t, env.read(t, buf, 1024), data, "COPY_HOST_PTR buffer after the host memory was cleared")
    t.eq(C.info(env.cl.clGetMemObjectInfo, buf, C.CL_MEM_HOST_PTR, kind="ptr") or None, None,
         "CL_MEM_HOST_PTR of a COPY_HOST_PTR buffer")
    for flags, what in [(C.CL_MEM_ALLOC_HOST_PTR, "ALLOC_HOST_PTR"), (C.CL_MEM_READ_ONLY, "READ_ONLY"),
                        (C.CL_MEM_WRITE_ONLY, "WRITE_ONLY"),
                        (C.CL_MEM_ALLOC_HOST_PTR | C.CL_MEM_COPY_HOST_PTR, "ALLOC|COPY_HOST_PTR")]:
        host = ctypes.create_string_buffer(data, 1024)
        b = env.buffer(t, 1024, flags, host if flags & C.CL_MEM_COPY_HOST_PTR else None)
        if not flags & C.CL_MEM_COPY_HOST_PTR:
            env.write(t, b, data)
        same(t, env.read(t, b, 1024), data, f"{what} buffer")
    ro = env.buffer(t, 1024, C.CL_MEM_HOST_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, host)
    same(t, env.read(t, ro, 1024), data, "HOST_READ_ONLY|COPY_HOST_PTR buffer read back")
    wo = env.buffer(t, 1024, C.CL_MEM_HOST_WRITE_ONLY)
    env.write(t, wo, data)
    other = env.buffer(t, 1024)
    t.ok(env.cl.clEnqueueCopyBuffer(env.queue, wo, other, 0, 0, 1024, 0, None, None), "clEnqueueCopyBuffer")
    same(t, env.read(t, other, 1024), data, "HOST_WRITE_ONLY buffer copied to a readable one")


@check
def use_host_ptr_coherence(env, t):
    """USE_HOST_PTR: maps return host_ptr + offset and show the buffer; unmapped writes reach it"""
    rng = env.rng(3)
    n = 2048
    host = ctypes.create_string_buffer(rand_bytes(rng, n), n)
    base = ctypes.addressof(host)
    buf = env.buffer(t, n, C.CL_MEM_READ_WRITE | C.CL_MEM_USE_HOST_PTR, host)
    same(t, env.read(t, buf, n), host.raw, "a new USE_HOST_PTR buffer (its contents are host_ptr's)")
    data = rand_bytes(rng, 512)
    env.write(t, buf, data, offset=256)
    p, _ = _map(env, t, buf, C.CL_MAP_READ, 256, 512)
    t.eq(p, base + 256, "pointer mapped at offset 256 of a USE_HOST_PTR buffer (host_ptr + 256)")
    same(t, ctypes.string_at(p, 512), data, "mapped region after clEnqueueWriteBuffer")
    same(t, host.raw[256:768], data, "host_ptr memory while mapped after clEnqueueWriteBuffer")
    _unmap(env, t, buf, p)
    new = rand_bytes(rng, 128)
    p, _ = _map(env, t, buf, C.CL_MAP_WRITE, 1024, 128)
    ctypes.memmove(p, new, 128)
    _unmap(env, t, buf, p)
    same(t, env.read(t, buf, 128, offset=1024), new, "buffer after writing through a MAP_WRITE map")
    # the host may change host_ptr while nothing is mapped; a map makes the buffer show it
    p, _ = _map(env, t, buf, C.CL_MAP_WRITE, 0, n)
    ctypes.memmove(p, b"\x5a" * 64, 64)
    _unmap(env, t, buf, p)
    same(t, env.read(t, buf, 64), b"\x5a" * 64, "first 64 bytes after a full MAP_WRITE")


@check
def sub_buffers(env, t):
    """sub-buffers and their parent see each other's writes; copies between sub-buffers"""
    rng = env.rng(4)
    align = max(1, env.device_info(C.CL_DEVICE_MEM_BASE_ADDR_ALIGN, "uint") // 8)
    n = 8 * align
    parent = env.buffer(t, n)
    model = bytearray(rand_bytes(rng, n))
    env.write(t, parent, model)

    def sub(origin, size, flags=C.CL_MEM_READ_WRITE):
        region = (c_size_t * 2)(origin, size)
        h, code = env.create("clCreateSubBuffer", parent, flags, C.CL_BUFFER_CREATE_TYPE_REGION, region)
        t.ok(code, f"clCreateSubBuffer(origin={origin}, size={size})")
        return t.cleanup(env.cl.clReleaseMemObject, h)

    a = sub(align, 2 * align)
    b = sub(2 * align, 3 * align, C.CL_MEM_READ_ONLY)  # overlaps a
    c = sub(6 * align, 2 * align)
    same(t, env.read(t, a, 2 * align), model[align:3 * align], "sub-buffer A read")
    data = rand_bytes(rng, 2 * align)
    env.write(t, a, data)
    model[align:3 * align] = data
    same(t, env.read(t, parent, n), model, "parent after a write through sub-buffer A")
    same(t, env.read(t, b, 3 * align), model[2 * align:5 * align],
         "overlapping sub-buffer B after the write through A")
    t.ok(env.cl.clEnqueueCopyBuffer(env.queue, b, c, 0, 0, 2 * align, 0, None, None),
         "clEnqueueCopyBuffer(sub-buffer B -> sub-buffer C)")
    model[6 * align:8 * align] = model[2 * align:4 * align]
    same(t, env.read(t, parent, n), model, "parent after copying B to C")
    t.eq(C.info(env.cl.clGetMemObjectInfo, b, C.CL_MEM_SIZE, kind="size"), 3 * align,
         "CL_MEM_SIZE of sub-buffer B")
    t.eq(C.info(env.cl.clGetMemObjectInfo, b, C.CL_MEM_FLAGS, kind="ulong"), C.CL_MEM_READ_ONLY,
         "CL_MEM_FLAGS of sub-buffer B")
    # a sub-buffer keeps its parent alive
    rc = C.info(env.cl.clGetMemObjectInfo, parent, C.CL_MEM_REFERENCE_COUNT, kind="uint")
    t.true(rc >= 1, f"parent CL_MEM_REFERENCE_COUNT = {rc}")


@check
def copy_ranges(env, t):
    """clEnqueueCopyBuffer at random ranges, between buffers and within one (no overlap)"""
    rng = env.rng(5)
    n = 4096
    src, dst = env.buffer(t, n), env.buffer(t, n)
    ms, md = bytearray(rand_bytes(rng, n)), bytearray(rand_bytes(rng, n))
    env.write(t, src, ms)
    env.write(t, dst, md)
    for _ in range(env.samples(6, 30)):
        size = int(rng.integers(1, n // 2))
        so, do = int(rng.integers(0, n - size + 1)), int(rng.integers(0, n - size + 1))
        t.ok(env.cl.clEnqueueCopyBuffer(env.queue, src, dst, so, do, size, 0, None, None),
             f"clEnqueueCopyBuffer(src_offset={so}, dst_offset={do}, size={size})")
        md[do:do + size] = ms[so:so + size]
        if not same(t, env.read(t, dst, n), md, f"destination after copying {size} bytes {so}->{do}"):
            return
    t.ok(env.cl.clEnqueueCopyBuffer(env.queue, src, src, 0, n // 2, n // 2, 0, None, None),
         "clEnqueueCopyBuffer(first half -> second half of the same buffer)")
    ms[n // 2:] = ms[:n // 2]
    same(t, env.read(t, src, n), ms, "buffer after copying its first half onto its second")


def rect_model(mem, origin, region, row_pitch, slice_pitch, data=None):
    """Bytes of a rect in `mem` (a bytearray) or, with data, store them; origin is (x bytes, y, z)."""
    out = bytearray()
    k = 0
    for z in range(region[2]):
        for y in range(region[1]):
            at = (origin[2] + z) * slice_pitch + (origin[1] + y) * row_pitch + origin[0]
            if data is None:
                out += mem[at:at + region[0]]
            else:
                mem[at:at + region[0]] = data[k:k + region[0]]
                k += region[0]
    return bytes(out)


@check
def rect_transfers(env, t):
    """clEnqueue{Write,Read,Copy}BufferRect in 2 and 3 dimensions against a host model"""
    rng = env.rng(6)
    brp, bsp = 32, 32 * 16      # buffer: 32-byte rows, 16 rows per slice, 4 slices
    n = bsp * 4
    buf = env.buffer(t, n)
    model = bytearray(rand_bytes(rng, n))
    env.write(t, buf, model)

    def v3(*x):
        return (c_size_t * 3)(*x)

    for _ in range(env.samples(4, 16)):
        region = (int(rng.integers(1, 17)), int(rng.integers(1, 9)), int(rng.integers(1, 4)))
        bo = (int(rng.integers(0, brp - region[0] + 1)), int(rng.integers(0, 16 - region[1] + 1)),
              int(rng.integers(0, 4 - region[2] + 1)))
        hrp, hsp = region[0] + 3, (region[0] + 3) * (region[1] + 1)   # host pitches with padding
        ho = (1, 1, 0)
        host = bytearray(rand_bytes(rng, hsp * (region[2] + 1)))
        hbuf = ctypes.create_string_buffer(bytes(host), len(host))
        what = f"region={region} buffer_origin={bo} host_origin={ho} host pitches={hrp},{hsp}"
        t.ok(env.cl.clEnqueueWriteBufferRect(env.queue, buf, 1, v3(*bo), v3(*ho), v3(*region), brp, bsp,
                                             hrp, hsp, hbuf, 0, None, None),
             f"clEnqueueWriteBufferRect({what})")
        rect_model(model, bo, region, brp, bsp, rect_model(host, ho, region, hrp, hsp))
        if not same(t, env.read(t, buf, n), model, f"buffer after clEnqueueWriteBufferRect({what})"):
            return
        out = ctypes.create_string_buffer(len(host))
        t.ok(env.cl.clEnqueueReadBufferRect(env.queue, buf, 1, v3(*bo), v3(*ho), v3(*region), brp, bsp,
                                            hrp, hsp, out, 0, None, None),
             f"clEnqueueReadBufferRect({what})")
        same(t, rect_model(bytearray(out.raw), ho, region, hrp, hsp),
             rect_model(model, bo, region, brp, bsp), f"clEnqueueReadBufferRect({what}) result")
    dst = env.buffer(t, n)
    dmodel = bytearray(rand_bytes(rng, n))
    env.write(t, dst, dmodel)
    region, so, do = (8, 4, 2), (4, 2, 1), (16, 8, 0)
    t.ok(env.cl.clEnqueueCopyBufferRect(env.queue, buf, dst, v3(*so), v3(*do), v3(*region), brp, bsp,
                                        brp, bsp, 0, None, None), "clEnqueueCopyBufferRect")
    rect_model(dmodel, do, region, brp, bsp, rect_model(model, so, region, brp, bsp))
    same(t, env.read(t, dst, n), dmodel, f"destination of clEnqueueCopyBufferRect(region={region}, "
                                         f"src_origin={so}, dst_origin={do})")
    # zero pitches mean tightly packed
    host = ctypes.create_string_buffer(16 * 4)
    t.ok(env.cl.clEnqueueReadBufferRect(env.queue, buf, 1, v3(0, 0, 0), v3(0, 0, 0), v3(16, 4, 1), 0, 0,
                                        0, 0, host, 0, None, None),
         "clEnqueueReadBufferRect(all pitches 0)")
    same(t, host.raw, rect_model(model, (0, 0, 0), (16, 4, 1), 16, 64),
         "clEnqueueReadBufferRect with pitches 0 (row pitch = region[0])")


@check
def fill_patterns(env, t):
    """clEnqueueFillBuffer with every pattern size 1..128 at aligned offsets; the rest untouched"""
    rng = env.rng(7)
    n = 2048
    buf = env.buffer(t, n)
    model = bytearray(rand_bytes(rng, n))
    env.write(t, buf, model)
    for psize in (1, 2, 4, 8, 16, 32, 64, 128):
        pattern = rand_bytes(rng, psize)
        count = int(rng.integers(1, max(2, (n // psize) // 2)))
        off = int(rng.integers(0, n // psize - count + 1)) * psize
        pbuf = ctypes.create_string_buffer(pattern, psize)
        t.ok(env.cl.clEnqueueFillBuffer(env.queue, buf, pbuf, psize, off, count * psize, 0, None, None),
             f"clEnqueueFillBuffer(pattern_size={psize}, offset={off}, size={count * psize})")
        model[off:off + count * psize] = pattern * count
        if not same(t, env.read(t, buf, n), model,
                    f"buffer after a fill with a {psize}-byte pattern {pattern.hex()} at {off}, "
                    f"{count} times"):
            return


@check
def map_flags(env, t):
    """MAP_READ shows the buffer, MAP_WRITE and MAP_WRITE_INVALIDATE_REGION reach it, maps at offsets"""
    rng = env.rng(8)
    n = 4096
    buf = env.buffer(t, n)
    model = bytearray(rand_bytes(rng, n))
    env.write(t, buf, model)
    p, ev = _map(env, t, buf, C.CL_MAP_READ, 100, 1000)
    same(t, ctypes.string_at(p, 1000), model[100:1100], "MAP_READ of bytes 100..1100")
    t.eq(env.event_info(ev, C.CL_EVENT_COMMAND_TYPE, "uint"), C.CL_COMMAND_MAP_BUFFER,
         "CL_EVENT_COMMAND_TYPE of the map's event")
    _unmap(env, t, buf, p)
    data = rand_bytes(rng, 500)
    p, _ = _map(env, t, buf, C.CL_MAP_WRITE, 2000, 500)
    ctypes.memmove(p, data, 500)
    _unmap(env, t, buf, p)
    model[2000:2500] = data
    same(t, env.read(t, buf, n), model, "buffer after a MAP_WRITE at 2000 and unmap")
    data = rand_bytes(rng, 1024)
    p, _ = _map(env, t, buf, C.CL_MAP_WRITE_INVALIDATE_REGION, 3072, 1024)
    ctypes.memmove(p, data, 1024)
    _unmap(env, t, buf, p)
    model[3072:4096] = data
    same(t, env.read(t, buf, n), model, "buffer after MAP_WRITE_INVALIDATE_REGION of the last 1 KiB")
    # two maps at once, non-blocking, completed through their events
    p1, e1 = _map(env, t, buf, C.CL_MAP_READ | C.CL_MAP_WRITE, 0, 64, blocking=False)
    p2, e2 = _map(env, t, buf, C.CL_MAP_READ, 64, 64, blocking=False)
    env.wait(t, [e1, e2])
    same(t, ctypes.string_at(p1, 64) + ctypes.string_at(p2, 64), model[:128],
         "two simultaneous non-blocking maps after their events completed")
    ctypes.memmove(p1, b"\x11" * 64, 64)
    model[:64] = b"\x11" * 64
    t.ok(env.cl.clEnqueueUnmapMemObject(env.queue, buf, p2, 0, None, None), "unmap second")
    t.ok(env.cl.clEnqueueUnmapMemObject(env.queue, buf, p1, 0, None, None), "unmap first")
    t.ok(env.cl.clFinish(env.queue), "clFinish")
    same(t, env.read(t, buf, n), model, "buffer after unmapping both")
    t.eq(C.info(env.cl.clGetMemObjectInfo, buf, C.CL_MEM_MAP_COUNT, kind="uint"), 0,
         "CL_MEM_MAP_COUNT after every map was unmapped")


@check
def non_blocking_transfers(env, t):
    """non-blocking write/read complete through their events with the right data"""
    rng = env.rng(9)
    n = 1 << 16
    buf = env.buffer(t, n)
    data = rand_bytes(rng, n)
    src = ctypes.create_string_buffer(data, n)
    dst = ctypes.create_string_buffer(n)
    ew, er = c_void_p(), c_void_p()
    t.ok(env.cl.clEnqueueWriteBuffer(env.queue, buf, 0, 0, n, src, 0, None, byref(ew)),
         "clEnqueueWriteBuffer(non-blocking)")
    t.cleanup(env.cl.clReleaseEvent, ew.value)
    t.ok(env.cl.clEnqueueReadBuffer(env.queue, buf, 0, 0, n, dst, 1, C.ptrs([ew.value]), byref(er)),
         "clEnqueueReadBuffer(non-blocking, waiting on the write)")
    t.cleanup(env.cl.clReleaseEvent, er.value)
    env.wait(t, [er.value])
    same(t, dst.raw, data, "data of a non-blocking read after its event")
    t.eq(env.event_info(ew.value, C.CL_EVENT_COMMAND_EXECUTION_STATUS), C.CL_COMPLETE,
         "status of the write event after the read completed")
    t.eq(env.event_info(er.value, C.CL_EVENT_COMMAND_TYPE, "uint"), C.CL_COMMAND_READ_BUFFER,
         "CL_EVENT_COMMAND_TYPE of the read")


@check
def migrate(env, t):
    """clEnqueueMigrateMemObjects to the host and with CONTENT_UNDEFINED"""
    rng = env.rng(10)
    a, b = env.buffer(t, 256), env.buffer(t, 256)
    data = rand_bytes(rng, 256)
    env.write(t, a, data)
    objs = C.ptrs([a, b])
    t.ok(env.cl.clEnqueueMigrateMemObjects(env.queue, 2, objs, C.CL_MIGRATE_MEM_OBJECT_HOST, 0, None,
                                           None), "clEnqueueMigrateMemObjects(HOST)")
    t.ok(env.cl.clEnqueueMigrateMemObjects(env.queue, 1, C.ptrs([b]), 0, 0, None, None),
         "clEnqueueMigrateMemObjects(to the device)")
    t.ok(env.cl.clEnqueueMigrateMemObjects(env.queue, 1, C.ptrs([b]),
                                           C.CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, None, None),
         "clEnqueueMigrateMemObjects(CONTENT_UNDEFINED)")
    t.ok(env.cl.clFinish(env.queue), "clFinish")
    same(t, env.read(t, a, 256), data, "buffer contents after migrating to the host and back")
    t.code(env.cl.clEnqueueMigrateMemObjects(env.queue, 1, C.ptrs([a]), 1 << 10, 0, None, None),
           C.CL_INVALID_VALUE, "clEnqueueMigrateMemObjects(flags=1<<10)")
    t.code(env.cl.clEnqueueMigrateMemObjects(env.queue, 0, objs, 0, 0, None, None), C.CL_INVALID_VALUE,
           "clEnqueueMigrateMemObjects(num_mem_objects=0)")


@check
def destructor_callbacks(env, t):
    """clSetMemObjectDestructorCallback: each callback once, after the last release, in reverse order"""
    import time
    calls = []
    cbs = [C.MEM_CALLBACK(lambda m, u, i=i: calls.append((i, m))) for i in range(3)]
    h, code = env.create("clCreateBuffer", env.context, C.CL_MEM_READ_WRITE, 64, None)
    t.ok(code, "clCreateBuffer")
    for cb in cbs:
        t.ok(env.cl.clSetMemObjectDestructorCallback(h, cb, None), "clSetMemObjectDestructorCallback")
    t.code(env.cl.clSetMemObjectDestructorCallback(h, None, None), C.CL_INVALID_VALUE,
           "clSetMemObjectDestructorCallback(pfn_notify=NULL)")
    t.ok(env.cl.clRetainMemObject(h), "clRetainMemObject")
    t.ok(env.cl.clReleaseMemObject(h), "clReleaseMemObject (not the last)")
    t.eq(calls, [], "destructor callbacks before the last release")
    t.ok(env.cl.clReleaseMemObject(h), "clReleaseMemObject (the last)")
    deadline = time.monotonic() + 5
    while len(calls) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    t.eq([i for i, _ in calls], [2, 1, 0], "order of the destructor callbacks (reverse of registration)")
    t.true(all(m == h for _, m in calls), "a destructor callback got another memobj handle")
