"""The rules written once for both entries (pyplat/api/native_creation_rules.pxi,
native_handle_rules.pxi, native_buffer_rules.pxi): generators of random requests -- valid and
invalid flags, sizes, regions, handles and wait lists -- through the native entry alone and the
Python entry alone give the same code every time, the native entry refusing what the rules refuse
itself (never deferring it), and PYPLAT_DEBUG=err reports a native refusal with the rule's
reason, as it reports the Python entry's."""
import ctypes

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native
from support.capi import CL, addr, err, native_entry, python_entry
from support.clobjects import context_and_program, create_kernel, make_buffer, make_context, make_queue, set_arg

if not CL._direct.get("clCreateBuffer") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

S, I32 = ctypes.c_size_t, ctypes.c_int32
DEFER_HANDLE = 1                                  # icd/pyplat_handle.h's PYPLAT_DEFER_HANDLE
SOURCE = b"__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }"
MEM_BITS = [cl.CL_MEM_READ_WRITE, cl.CL_MEM_WRITE_ONLY, cl.CL_MEM_READ_ONLY, cl.CL_MEM_USE_HOST_PTR,
            cl.CL_MEM_ALLOC_HOST_PTR, cl.CL_MEM_COPY_HOST_PTR, cl.CL_MEM_HOST_WRITE_ONLY, cl.CL_MEM_HOST_READ_ONLY,
            cl.CL_MEM_HOST_NO_ACCESS, cl.CL_MEM_KERNEL_READ_AND_WRITE, 1 << 40]


@pytest.fixture(scope="module")
def env():
    yield from context_and_program(SOURCE)


@pytest.fixture(scope="module")
def dead():
    """Handles released (their memory quarantined: no longer in the table), and junk."""
    ctx, dev = make_context()
    q = make_queue(ctx, dev)
    b = make_buffer(ctx, 64)
    assert CL.clReleaseCommandQueue(q) == 0 and CL.clReleaseMemObject(b) == 0
    assert CL.clReleaseContext(ctx) == 0
    junk = ctypes.create_string_buffer(64)
    yield {"context": ctx, "queue": q, "mem": b, "junk": ctypes.addressof(junk), "small": 0x10}


def flags_of(rng, n_bits):
    return int(np.bitwise_or.reduce([0] + [MEM_BITS[i] for i in rng.choice(len(MEM_BITS), n_bits)]))


def creation(fn, *args):
    """(made, code) of a creation entry; what it made released."""
    e = err()
    h = fn(*args, addr(e))
    if h not in (0, DEFER_HANDLE):
        assert e.value == 0 and CL.clReleaseMemObject(h) == 0
    return ("deferred" if h == DEFER_HANDLE else h != 0), e.value


def agree(native, python, what):
    """The native entry answered as the Python entry: the same code, a refusal never deferred
    (success may be deferred: a record the Python entry primes first)."""
    if python[1] != 0 or native[0] != "deferred":
        assert native == python, what


def test_kind_words_are_the_core_classes_names():
    from pyplat.core.context import Context
    from pyplat.core.device import Device
    from pyplat.core.event import Event
    from pyplat.core.kernel import Kernel
    from pyplat.core.memory import Buffer
    from pyplat.core.platform import Platform
    from pyplat.core.program import Program
    from pyplat.core.queue import CommandQueue
    classes = {"PLATFORM": Platform, "DEVICE": Device, "CONTEXT": Context, "QUEUE": CommandQueue, "MEM": Buffer,
               "PROGRAM": Program, "KERNEL": Kernel, "EVENT": Event}
    for name, cls in classes.items():
        assert _native.KIND_WORDS[_native.KINDS[name]] == cls.__name__


def test_both_entries_agree_on_random_buffer_requests(env, dead):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    host = np.zeros(1024, np.uint8)
    limit = ctypes.c_uint64()
    assert CL.clGetDeviceInfo(dev, cl.CL_DEVICE_MAX_MEM_ALLOC_SIZE, 8, addr(limit), 0) == 0
    contexts = [ctx] * 6 + [0, dev, q, prog, dead["context"], dead["junk"], dead["small"]]
    sizes = [0, 1, 64, 1024, limit.value + 1, 1 << 63, (1 << 64) - 1]
    native, python = native_entry("clCreateBuffer"), python_entry("clCreateBuffer")
    rng = np.random.default_rng(20261208)
    codes = set()
    for _ in range(400):
        args = (int(rng.choice(contexts)), flags_of(rng, int(rng.integers(0, 4))), int(rng.choice(sizes)),
                addr(host) if rng.random() < 0.4 else 0)
        got, want = creation(native, *args), creation(python, *args)
        agree(got, want, args)
        codes.add(want[1])
    assert {0, cl.CL_INVALID_CONTEXT, cl.CL_INVALID_VALUE, cl.CL_INVALID_BUFFER_SIZE, cl.CL_INVALID_HOST_PTR} <= codes
    CL.clReleaseCommandQueue(q)


def test_both_entries_agree_on_random_sub_buffer_requests(env, dead):
    ctx, _, _ = env
    parents = []
    for flags in (0, cl.CL_MEM_READ_ONLY | cl.CL_MEM_HOST_WRITE_ONLY, cl.CL_MEM_WRITE_ONLY | cl.CL_MEM_HOST_NO_ACCESS,
                  cl.CL_MEM_HOST_READ_ONLY):
        parents.append(make_buffer(ctx, 4096, flags))                                   # made natively
    e = err()
    parents.append(python_entry("clCreateBuffer")(ctx, cl.CL_MEM_READ_WRITE, 4096, 0, addr(e)))   # by Python
    region = (S * 2)(256, 512)
    sub = CL.clCreateSubBuffer(parents[0], 0, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(region), addr(e))
    assert e.value == 0
    handles = parents * 2 + [sub, 0, ctx, dead["mem"], dead["junk"]]
    origins, sizes = [0, 4, 128, 256, 4000, 4096, 1 << 63], [0, 64, 128, 3968, 4096, 8192, 1 << 63]
    native, python = native_entry("clCreateSubBuffer"), python_entry("clCreateSubBuffer")
    rng = np.random.default_rng(20261209)
    codes = set()
    for _ in range(400):
        region = (S * 2)(int(rng.choice(origins)), int(rng.choice(sizes)))
        create_type = cl.CL_BUFFER_CREATE_TYPE_REGION if rng.random() < 0.9 else 0x1234
        info = addr(region) if rng.random() < 0.95 else 0
        args = (int(rng.choice(handles)), flags_of(rng, int(rng.integers(0, 3))), create_type, info)
        got, want = creation(native, *args), creation(python, *args)
        agree(got, want, (args, region[0], region[1]))
        codes.add(want[1])
    assert {0, cl.CL_INVALID_MEM_OBJECT, cl.CL_INVALID_VALUE, cl.CL_INVALID_BUFFER_SIZE,
            cl.CL_MISALIGNED_SUB_BUFFER_OFFSET} <= codes
    for b in [sub] + parents:
        assert CL.clReleaseMemObject(b) == 0


def wait_lists(ctx, q, other_ctx, dead):
    """(count, array) wait lists: none, disagreeing, done events, events of another context,
    handles that are no events."""
    e = err()
    done, foreign = CL.clCreateUserEvent(ctx, addr(e)), CL.clCreateUserEvent(other_ctx, addr(e))
    for ev in (done, foreign):
        assert CL.clSetUserEventStatus(ev, cl.CL_COMPLETE) == 0
    lists = [[], [done], [done, done], [foreign], [done, foreign], [dead["junk"]], [done, 0], [q],
             [foreign, dead["small"]]]
    arrays = [(S * max(1, len(events)))(*events) for events in lists]
    out = [(len(events), addr(array)) for events, array in zip(lists, arrays)]
    out += [(0, 0)] * 6 + [(1, 0), (0, addr(arrays[1]))]
    return out, arrays, (done, foreign)


def commands(q, k, bufs, host, pattern):
    """name -> argument maker (queue, buffer, buffer, rng, wait list) of the commands checked."""
    offsets, sizes = [0, 4, 64, 252, 256, 1000], [0, 4, 64, 256]

    def transfer(qq, b, _, rng, waits):
        return (qq, b, 0, int(rng.choice(offsets)), int(rng.choice(sizes)), addr(host) if rng.random() < 0.9 else 0,
                *waits, 0)

    def copy(qq, b, c, rng, waits):
        return (qq, b, c, int(rng.choice(offsets)), int(rng.choice(offsets)), int(rng.choice(sizes)), *waits, 0)

    def fill(qq, b, _, rng, waits):
        return (qq, b, addr(pattern) if rng.random() < 0.9 else 0, int(rng.choice([1, 3, 4, 8])),
                int(rng.choice(offsets)), int(rng.choice(sizes)), *waits, 0)

    def mark(qq, b, _, rng, waits):
        return (qq, *waits, 0)

    def map_(qq, b, _, rng, waits):
        flags = int(rng.choice([cl.CL_MAP_READ, cl.CL_MAP_WRITE, cl.CL_MAP_WRITE_INVALIDATE_REGION, 0x8]))
        return (qq, b, 0, flags, int(rng.choice(offsets)), int(rng.choice(sizes)), *waits, 0)

    global_size = (S * 3)(64, 1, 1)
    bad_local = (S * 3)(48, 1, 1)

    def ndrange(qq, _, kk, rng, waits):
        local = addr(bad_local) if rng.random() < 0.2 else 0
        return (qq, kk, int(rng.choice([1, 1, 1, 4])), 0, addr(global_size), local, *waits, 0)

    return {"clEnqueueReadBuffer": transfer, "clEnqueueWriteBuffer": transfer, "clEnqueueCopyBuffer": copy,
            "clEnqueueFillBuffer": fill, "clEnqueueMarkerWithWaitList": mark,
            "clEnqueueBarrierWithWaitList": mark, "clEnqueueMapBuffer": map_,
            "clEnqueueNDRangeKernel": ndrange}, (global_size, bad_local)


def answer(name, fn, args, q, b):
    """(answered, code) of a command; a mapping made is unmapped."""
    if name != "clEnqueueMapBuffer":
        code = fn(*args)
        return ("deferred" if code == _native.DEFER else True), code
    e = err()
    p = fn(*args, addr(e))
    if p not in (0, DEFER_HANDLE):
        assert CL.clEnqueueUnmapMemObject(q, b, p, 0, 0, 0) == 0
    return ("deferred" if p == DEFER_HANDLE else p != 0), e.value


def test_both_entries_agree_on_random_handles_in_commands(env, dead):
    """The handles a command is given, in the Python entry's order: the queue, the buffers (and
    their context), the command's own rules, then the wait list (its events, their context)."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    other_ctx, other_dev = make_context()
    a, b = make_buffer(ctx, 256), make_buffer(ctx, 256)
    ro = make_buffer(ctx, 256, cl.CL_MEM_READ_WRITE | cl.CL_MEM_HOST_READ_ONLY)
    foreign = make_buffer(other_ctx, 256)
    k = create_kernel(prog, b"inc")
    assert set_arg(k, 0, a) == 0
    host, pattern = np.zeros(1024, np.uint8), np.arange(8, dtype=np.uint8)
    makers, keep = commands(q, k, (a, b), host, pattern)
    waits, arrays, events = wait_lists(ctx, q, other_ctx, dead)
    queues = [q] * 8 + [0, a, ctx, dead["queue"], dead["junk"]]
    buffers = [a, b, ro] * 3 + [0, q, foreign, dead["mem"], dead["small"]]
    kernels = [k] * 6 + [0, q, dead["junk"]]
    global_size = keep[0]
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(global_size), 0, 0, 0, 0) == 0     # (its plan)
    rng = np.random.default_rng(20261210)
    codes = {}
    for _ in range(1500):
        name = str(rng.choice(sorted(makers)))
        qq, bb = int(rng.choice(queues)), int(rng.choice(buffers))
        other = int(rng.choice(kernels)) if name == "clEnqueueNDRangeKernel" else int(rng.choice(buffers))
        args = makers[name](qq, bb, other, rng, waits[int(rng.integers(len(waits)))])
        got = answer(name, native_entry(name), args, q, bb)
        want = answer(name, python_entry(name), args, q, bb)
        agree(got, want, (name, args))
        codes.setdefault(name, set()).add(want[1])
    assert CL.clFinish(q) == 0
    for name in makers:                            # each command met refusals of each kind
        assert {cl.CL_INVALID_COMMAND_QUEUE, cl.CL_INVALID_EVENT_WAIT_LIST, cl.CL_INVALID_CONTEXT} <= codes[name], name
    for ev in events:
        CL.clReleaseEvent(ev)
    CL.clReleaseKernel(k)
    for m in (a, b, ro, foreign):
        CL.clReleaseMemObject(m)
    CL.clReleaseCommandQueue(q)
    CL.clReleaseContext(other_ctx)


def test_a_native_refusal_reports_the_rules_reason(env, dead, monkeypatch, capfd):
    """PYPLAT_DEBUG=err sees the native entry's refusal with the rule's reason, the very line the
    Python entry's error gives."""
    ctx, dev, _ = env
    q = make_queue(ctx, dev)
    buf = make_buffer(ctx, 256)
    region = (S * 2)(4, 64)
    host = np.zeros(64, np.uint8)
    calls = [("clCreateBuffer", (ctx, cl.CL_MEM_READ_ONLY | cl.CL_MEM_WRITE_ONLY, 64, 0, 0)),
             ("clCreateBuffer", (dead["context"], 0, 64, 0, 0)),
             ("clCreateSubBuffer", (buf, 0, cl.CL_BUFFER_CREATE_TYPE_REGION, addr(region), 0)),
             ("clEnqueueReadBuffer", (dead["queue"], buf, 0, 0, 64, addr(host), 0, 0, 0)),
             ("clEnqueueWriteBuffer", (q, ctx, 0, 0, 64, addr(host), 0, 0, 0)),
             ("clEnqueueMarkerWithWaitList", (q, 1, 0, 0))]
    lines = {}
    monkeypatch.setenv("PYPLAT_DEBUG", "err")
    config.reload()
    try:
        for name, args in calls:
            for which, fn in (("native", native_entry(name)), ("python", python_entry(name))):
                capfd.readouterr()
                fn(*args)
                lines[name, args, which] = [ln for ln in capfd.readouterr().err.splitlines() if " returned " in ln]
    finally:
        monkeypatch.delenv("PYPLAT_DEBUG")
        config.reload()
    for name, args in calls:
        assert lines[name, args, "native"] == lines[name, args, "python"] and len(lines[name, args, "native"]) == 1
    said = "\n".join(line for got in lines.values() for line in got)
    assert ("clCreateBuffer returned CL_INVALID_VALUE: more than one of READ_WRITE/READ_ONLY/WRITE_ONLY") in said
    assert (f"clCreateBuffer returned CL_INVALID_CONTEXT: {dead['context']:#x} is not a Context handle "
            "(never made here, or released)") in said
    assert ("clCreateSubBuffer returned CL_MISALIGNED_SUB_BUFFER_OFFSET: origin 4 is not a multiple of "
            "CL_DEVICE_MEM_BASE_ADDR_ALIGN (128 bytes)") in said
    assert (f"clEnqueueReadBuffer returned CL_INVALID_COMMAND_QUEUE: {dead['queue']:#x} is not a CommandQueue "
            "handle (never made here, or released)") in said
    assert f"clEnqueueWriteBuffer returned CL_INVALID_MEM_OBJECT: {ctx:#x} is Context, not a Buffer" in said
    assert ("clEnqueueMarkerWithWaitList returned CL_INVALID_EVENT_WAIT_LIST: num_events_in_wait_list and "
            "event_wait_list disagree") in said
    CL.clReleaseMemObject(buf)
    CL.clReleaseCommandQueue(q)



def test_both_entries_refuse_handles_of_another_kind_or_none(env, dead):
    """Entries whose Python entry looks up one handle first (retains, releases, flushes, queries,
    clSetKernelArg, creations of one parent): given every other kind's handle, junk or a released
    one, the native entry refuses it itself with the Python entry's code."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    buf = make_buffer(ctx, 64)
    k = create_kernel(prog, b"inc")
    e = err()
    ev = CL.clCreateUserEvent(ctx, addr(e))
    objects = {"context": ctx, "device": dev, "queue": q, "mem": buf, "program": prog, "kernel": k, "event": ev}
    value, out, size = ctypes.c_int32(7), ctypes.c_uint64(), ctypes.c_size_t()
    kernel_name = ctypes.create_string_buffer(b"inc")
    # entry -> (kind of its first handle, the rest of its arguments)
    entries = {"clFlush": ("queue", ()), "clFinish": ("queue", ()),
               "clGetEventInfo": ("event", (cl.CL_EVENT_COMMAND_EXECUTION_STATUS, 8, addr(out), addr(size))),
               "clGetMemObjectInfo": ("mem", (cl.CL_MEM_SIZE, 8, addr(out), addr(size))),
               "clGetKernelInfo": ("kernel", (cl.CL_KERNEL_NUM_ARGS, 8, addr(out), addr(size))),
               "clGetKernelWorkGroupInfo": ("kernel", (0, cl.CL_KERNEL_WORK_GROUP_SIZE, 8, addr(out), addr(size))),
               "clSetKernelArg": ("kernel", (0, 4, addr(value))),
               "clCreateKernel": ("program", (addr(kernel_name), addr(e))),
               "clCreateUserEvent": ("context", (addr(e),)),
               "clSetUserEventStatus": ("event", (cl.CL_COMPLETE,)),
               "clCreateCommandQueue": ("context", (dev, 0, addr(e))),
               "clCreateCommandQueueWithProperties": ("context", (dev, 0, addr(e)))}
    for kind, (retain, release) in {"context": ("clRetainContext", "clReleaseContext"),
                                    "queue": ("clRetainCommandQueue", "clReleaseCommandQueue"),
                                    "mem": ("clRetainMemObject", "clReleaseMemObject"),
                                    "program": ("clRetainProgram", "clReleaseProgram"),
                                    "kernel": ("clRetainKernel", "clReleaseKernel"),
                                    "event": ("clRetainEvent", "clReleaseEvent")}.items():
        entries[retain] = entries[release] = (kind, ())
    others = [0, dead["junk"], dead["small"], dead["queue"], dead["mem"], dead["context"]]
    for name, (kind, rest) in entries.items():
        for h in others + [obj for other, obj in objects.items() if other != kind]:
            answers = []
            for fn in (native_entry(name), python_entry(name)):
                e.value = 12345
                got = fn(h, *rest)
                answers.append(e.value if name.startswith("clCreate") else got)
                assert not name.startswith("clCreate") or got == 0, (name, h)
            assert answers[0] == answers[1] and answers[0] < 0, (name, kind, h, answers)
    # the second handle of clCreateCommandQueue (its device), the events of clWaitForEvents
    for h in others + [ctx, q, buf]:
        for name in ("clCreateCommandQueue", "clCreateCommandQueueWithProperties"):
            codes = set()
            for fn in (native_entry(name), python_entry(name)):
                e.value = 12345
                assert fn(ctx, h, 0, addr(e)) == 0
                codes.add(e.value)
            assert codes == {cl.CL_INVALID_DEVICE}, (name, h)
        events = (S * 2)(ev, h)
        for n, at in ((2, addr(events)), (0, addr(events)), (1, 0)):
            assert native_entry("clWaitForEvents")(n, at) == python_entry("clWaitForEvents")(n, at) < 0, (h, n)
    assert CL.clSetUserEventStatus(ev, cl.CL_COMPLETE) == 0
    for release, obj in (("clReleaseEvent", ev), ("clReleaseKernel", k), ("clReleaseMemObject", buf),
                         ("clReleaseCommandQueue", q)):
        assert getattr(CL, release)(obj) == 0


ARGS_SOURCE = b"""
__kernel void every_kind(__global int *a, float f, __local int *l, int4 v, sampler_t s, __constant float *c) {
    a[0] = (int)f + l[0] + v.x + (int)c[0];
}
"""


def test_both_entries_agree_on_random_kernel_arguments():
    """clSetKernelArg's rules (native_kernel_arg_rules.pxi): random indices, sizes and values for
    arguments of every kind (a buffer, a value, a __local pointer, a vector, a sampler, a
    __constant buffer) give the same code from the native entry alone and the Python entry
    alone."""
    gen = context_and_program(ARGS_SOURCE)
    ctx, dev, prog = next(gen)
    k = create_kernel(prog, b"every_kind")
    buf = make_buffer(ctx, 64)
    native, python = native_entry("clSetKernelArg"), python_entry("clSetKernelArg")
    zeros = ctypes.create_string_buffer(32)
    a_buffer = (S * 1)(buf)
    rng = np.random.default_rng(7)
    codes = set()
    for _ in range(400):
        index = int(rng.integers(0, 8))
        size = int(rng.choice([0, 1, 4, 8, 16, 32]))
        value = int(rng.choice([0, ctypes.addressof(zeros), ctypes.addressof(a_buffer)]))
        n, p = native(k, index, size, value), python(k, index, size, value)
        if p != 0 or n != _native.DEFER:
            assert n == p, (index, size, value)
        codes.add(p)
    assert {0, cl.CL_INVALID_ARG_INDEX, cl.CL_INVALID_ARG_SIZE, cl.CL_INVALID_ARG_VALUE, cl.CL_INVALID_SAMPLER} <= codes
    assert CL.clReleaseKernel(k) == 0 and CL.clReleaseMemObject(buf) == 0
    gen.close()
