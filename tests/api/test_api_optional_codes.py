"""Error codes of the entry points of features PyPlat's device does not support (images, samplers,
pipes, SVM, IL programs, sub-groups, on-device queues, built-in kernels, program destructors,
clSetCommandQueueProperty, GL/EGL sharing, device fission), through the C API.

What a caller relies on: a NULL, foreign, wrongly typed or released handle gives the spec's
CL_INVALID_<OBJECT> code before anything else; bad wait lists, flags and sizes give the codes the
spec lists for them; only a call that is right in everything a caller controls gets the
unsupported-feature answer (mostly CL_INVALID_OPERATION, as the 3.0 spec and the CTS's
consistency_* tests say). Also clEnqueueWaitForEvents (CL_INVALID_EVENT) and
clGetSupportedImageFormats (flags and image type checked; no formats for valid input)."""
import ctypes

import pytest

from support.capi import CL, addr, err
from support.clobjects import make_buffer, make_context, make_queue
from pyplat import cl
from pyplat.api._entry_points import ENTRY_POINTS
from pyplat.api.entry import IMPLEMENTED, load_all

OP = cl.CL_INVALID_OPERATION
KIND_CODE = {
    "context": cl.CL_INVALID_CONTEXT, "queue": cl.CL_INVALID_COMMAND_QUEUE, "mem": cl.CL_INVALID_MEM_OBJECT,
    "image": cl.CL_INVALID_MEM_OBJECT, "program": cl.CL_INVALID_PROGRAM, "kernel": cl.CL_INVALID_KERNEL,
    "device": cl.CL_INVALID_DEVICE, "sampler": cl.CL_INVALID_SAMPLER,
}
SOURCE = b"__kernel void k(__global int *p) { p[0] = 1; }"
CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


def _program(ctx, e):
    src = ctypes.c_char_p(SOURCE)
    prog = CL.clCreateProgramWithSource(ctx, 1, addr(src), 0, addr(e))
    assert e.value == cl.CL_SUCCESS
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == cl.CL_SUCCESS
    return prog


def _objects():
    """Valid objects of every kind, in one context."""
    ctx, dev = make_context()
    e = err()
    prog = _program(ctx, e)
    o = {"ctx": ctx, "dev": dev, "q": make_queue(ctx, dev), "buf": make_buffer(ctx, 64), "prog": prog,
         "kern": CL.clCreateKernel(prog, b"k", addr(e))}
    assert e.value == cl.CL_SUCCESS
    return o


def _release(o):
    CL.clReleaseKernel(o["kern"])
    CL.clReleaseProgram(o["prog"])
    CL.clReleaseMemObject(o["buf"])
    CL.clReleaseCommandQueue(o["q"])
    CL.clReleaseContext(o["ctx"])


class Env:
    pass


@pytest.fixture(scope="module")
def env():
    v = Env()
    v.o = _objects()
    dead = _objects()                   # handles of every kind, released
    _release(dead)
    v.dead = {"context": dead["ctx"], "queue": dead["q"], "mem": dead["buf"], "image": dead["buf"],
              "program": dead["prog"], "kernel": dead["kern"], "sampler": dead["buf"], "device": dead["ctx"]}
    v.junk = ctypes.create_string_buffer(64)               # memory that is no handle at all
    v.keep = [v.junk]

    def mem(ctype, *values):
        m = (ctype * max(len(values), 1))(*values)
        v.keep.append(m)
        return addr(m)
    o = v.o
    v.fmt = mem(ctypes.c_uint32, cl.CL_RGBA, cl.CL_UNORM_INT8)
    v.desc = mem(ctypes.c_uint64, cl.CL_MEM_OBJECT_IMAGE2D, 4, 4, 1, 1, 0, 0, 0, 0, 0)
    v.origin, v.region = mem(ctypes.c_size_t, 0, 0, 0), mem(ctypes.c_size_t, 1, 1, 1)
    v.out = mem(ctypes.c_uint64, 0, 0, 0, 0)
    v.devs, v.bufs = mem(ctypes.c_size_t, o["dev"]), mem(ctypes.c_size_t, o["buf"])
    v.nulls = mem(ctypes.c_size_t, 0)
    v.junk_list = mem(ctypes.c_size_t, addr(v.junk))
    v.pattern = mem(ctypes.c_uint32, 7)
    v.cb = CALLBACK(lambda *a: None)
    v.cb_address = ctypes.cast(v.cb, ctypes.c_void_p).value
    v.no_props = mem(ctypes.c_uint64, 0)
    v.fission_props = mem(ctypes.c_uint64, 0x4050, 1, 0)
    yield v
    _release(o)


def call(name, args, e=None):
    """The code an entry point returns (through errcode_ret for the object-returning ones)."""
    if e is None:
        return getattr(CL, name)(*args)
    assert not getattr(CL, name)(*args), f"{name} returned an object"
    return e.value


# Rows: entry point, its arguments with valid handles (a function of the Env and errcode_ret's
# address), the handle arguments {position: kind}, and the answer to those valid arguments.
# "image", "sampler": no valid one exists; the row uses a buffer, the nearest to valid.
ROWS = [
    ("clRetainSampler", lambda v, E: [v.o["buf"]], {0: "sampler"}, cl.CL_INVALID_SAMPLER),
    ("clReleaseSampler", lambda v, E: [v.o["buf"]], {0: "sampler"}, cl.CL_INVALID_SAMPLER),
    ("clGetSamplerInfo", lambda v, E: [v.o["buf"], cl.CL_SAMPLER_CONTEXT, 8, v.out, 0], {0: "sampler"},
     cl.CL_INVALID_SAMPLER),
    ("clCreateSampler", lambda v, E: [v.o["ctx"], 0, cl.CL_ADDRESS_CLAMP, cl.CL_FILTER_NEAREST, E], {0: "context"}, OP),
    ("clCreateSamplerWithProperties", lambda v, E: [v.o["ctx"], 0, E], {0: "context"}, OP),
    ("clCreateImage", lambda v, E: [v.o["ctx"], cl.CL_MEM_READ_WRITE, v.fmt, v.desc, 0, E], {0: "context"}, OP),
    ("clCreateImageWithProperties", lambda v, E: [v.o["ctx"], 0, cl.CL_MEM_READ_WRITE, v.fmt, v.desc, 0, E],
     {0: "context"}, OP),
    ("clCreateImage2D", lambda v, E: [v.o["ctx"], cl.CL_MEM_READ_WRITE, v.fmt, 4, 4, 0, 0, E], {0: "context"}, OP),
    ("clCreateImage3D", lambda v, E: [v.o["ctx"], cl.CL_MEM_READ_WRITE, v.fmt, 4, 4, 4, 0, 0, 0, E],
     {0: "context"}, OP),
    ("clGetImageInfo", lambda v, E: [v.o["buf"], cl.CL_IMAGE_WIDTH, 8, v.out, 0], {0: "image"},
     cl.CL_INVALID_MEM_OBJECT),
    ("clEnqueueReadImage", lambda v, E: [v.o["q"], v.o["buf"], 1, v.origin, v.region, 0, 0, v.out, 0, 0, 0],
     {0: "queue", 1: "image"}, cl.CL_INVALID_MEM_OBJECT),
    ("clEnqueueWriteImage", lambda v, E: [v.o["q"], v.o["buf"], 1, v.origin, v.region, 0, 0, v.out, 0, 0, 0],
     {0: "queue", 1: "image"}, cl.CL_INVALID_MEM_OBJECT),
    ("clEnqueueFillImage", lambda v, E: [v.o["q"], v.o["buf"], v.out, v.origin, v.region, 0, 0, 0],
     {0: "queue", 1: "image"}, cl.CL_INVALID_MEM_OBJECT),
    ("clEnqueueMapImage", lambda v, E: [v.o["q"], v.o["buf"], 1, cl.CL_MAP_READ, v.origin, v.region, v.out, v.out,
                                        0, 0, 0, E], {0: "queue", 1: "image"}, cl.CL_INVALID_MEM_OBJECT),
    ("clEnqueueCopyImage", lambda v, E: [v.o["q"], v.o["buf"], v.o["buf"], v.origin, v.origin, v.region, 0, 0, 0],
     {0: "queue", 1: "image", 2: "image"}, cl.CL_INVALID_MEM_OBJECT),
    ("clEnqueueCopyImageToBuffer", lambda v, E: [v.o["q"], v.o["buf"], v.o["buf"], v.origin, v.region, 0, 0, 0, 0],
     {0: "queue", 1: "image", 2: "mem"}, cl.CL_INVALID_MEM_OBJECT),
    ("clEnqueueCopyBufferToImage", lambda v, E: [v.o["q"], v.o["buf"], v.o["buf"], 0, v.origin, v.region, 0, 0, 0],
     {0: "queue", 1: "mem", 2: "image"}, cl.CL_INVALID_MEM_OBJECT),
    ("clCreatePipe", lambda v, E: [v.o["ctx"], cl.CL_MEM_HOST_NO_ACCESS, 4, 4, 0, E], {0: "context"}, OP),
    ("clGetPipeInfo", lambda v, E: [v.o["buf"], cl.CL_PIPE_PACKET_SIZE, 4, v.out, 0], {0: "image"},
     cl.CL_INVALID_MEM_OBJECT),
    # SVM pointers are NULL: the CTS's consistency_svm passes those and expects CL_INVALID_OPERATION.
    ("clEnqueueSVMFree", lambda v, E: [v.o["q"], 1, v.nulls, 0, 0, 0, 0, 0], {0: "queue"}, OP),
    ("clEnqueueSVMMemcpy", lambda v, E: [v.o["q"], 1, 0, 0, 16, 0, 0, 0], {0: "queue"}, OP),
    ("clEnqueueSVMMemFill", lambda v, E: [v.o["q"], 0, v.pattern, 4, 16, 0, 0, 0], {0: "queue"}, OP),
    ("clEnqueueSVMMap", lambda v, E: [v.o["q"], 1, cl.CL_MAP_READ, 0, 16, 0, 0, 0], {0: "queue"}, OP),
    ("clEnqueueSVMUnmap", lambda v, E: [v.o["q"], 0, 0, 0, 0], {0: "queue"}, OP),
    ("clEnqueueSVMMigrateMem", lambda v, E: [v.o["q"], 1, v.nulls, 0, 0, 0, 0, 0], {0: "queue"}, OP),
    ("clSetKernelArgSVMPointer", lambda v, E: [v.o["kern"], 0, 0], {0: "kernel"}, OP),
    ("clSetKernelExecInfo", lambda v, E: [v.o["kern"], cl.CL_KERNEL_EXEC_INFO_SVM_PTRS, 0, 0], {0: "kernel"}, OP),
    ("clSetDefaultDeviceCommandQueue", lambda v, E: [v.o["ctx"], v.o["dev"], 0],
     {0: "context", 1: "device", 2: "queue"}, OP),
    ("clCreateProgramWithIL", lambda v, E: [v.o["ctx"], v.pattern, 4, E], {0: "context"}, OP),
    ("clSetProgramSpecializationConstant", lambda v, E: [v.o["prog"], 0, 4, v.pattern], {0: "program"}, OP),
    ("clCreateProgramWithBuiltInKernels", lambda v, E: [v.o["ctx"], 1, v.devs, b"k", E], {0: "context"},
     cl.CL_INVALID_VALUE),       # no built-in kernel of that name (there are none)
    ("clGetKernelSubGroupInfo", lambda v, E: [v.o["kern"], v.o["dev"], cl.CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, 0, 8,
                                              v.out, 0], {0: "kernel", 1: "device"}, OP),
    ("clGetKernelSubGroupInfoKHR", lambda v, E: [v.o["kern"], v.o["dev"], cl.CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, 0, 8,
                                                 v.out, 0], {0: "kernel", 1: "device"}, OP),
    ("clSetProgramReleaseCallback", lambda v, E: [v.o["prog"], v.cb_address, 0], {0: "program"}, OP),
    ("clSetCommandQueueProperty", lambda v, E: [v.o["q"], cl.CL_QUEUE_PROFILING_ENABLE, 1, 0], {0: "queue"}, OP),
    ("clCreateFromGLBuffer", lambda v, E: [v.o["ctx"], cl.CL_MEM_READ_WRITE, 1, E], {0: "context"},
     cl.CL_INVALID_CONTEXT),     # "... or was not created from a GL context"
    ("clCreateFromGLTexture", lambda v, E: [v.o["ctx"], cl.CL_MEM_READ_WRITE, 0x0DE1, 0, 1, E], {0: "context"},
     cl.CL_INVALID_CONTEXT),
    ("clCreateFromGLTexture2D", lambda v, E: [v.o["ctx"], cl.CL_MEM_READ_WRITE, 0x0DE1, 0, 1, E], {0: "context"},
     cl.CL_INVALID_CONTEXT),
    ("clCreateFromGLTexture3D", lambda v, E: [v.o["ctx"], cl.CL_MEM_READ_WRITE, 0x806F, 0, 1, E], {0: "context"},
     cl.CL_INVALID_CONTEXT),
    ("clCreateFromGLRenderbuffer", lambda v, E: [v.o["ctx"], cl.CL_MEM_READ_WRITE, 1, E], {0: "context"},
     cl.CL_INVALID_CONTEXT),
    ("clCreateEventFromGLsyncKHR", lambda v, E: [v.o["ctx"], 1, E], {0: "context"}, cl.CL_INVALID_CONTEXT),
    ("clGetGLObjectInfo", lambda v, E: [v.o["buf"], v.out, v.out], {0: "mem"}, cl.CL_INVALID_GL_OBJECT),
    ("clGetGLTextureInfo", lambda v, E: [v.o["buf"], 0x2004, 4, v.out, 0], {0: "mem"}, cl.CL_INVALID_GL_OBJECT),
    ("clEnqueueAcquireGLObjects", lambda v, E: [v.o["q"], 1, v.bufs, 0, 0, 0], {0: "queue"}, cl.CL_INVALID_GL_OBJECT),
    ("clEnqueueReleaseGLObjects", lambda v, E: [v.o["q"], 1, v.bufs, 0, 0, 0], {0: "queue"}, cl.CL_INVALID_GL_OBJECT),
    ("clGetGLContextInfoKHR", lambda v, E: [v.no_props, cl.CL_DEVICES_FOR_GL_CONTEXT_KHR, 8, v.out, 0], {}, OP),
    ("clCreateFromEGLImageKHR", lambda v, E: [v.o["ctx"], 1, 1, cl.CL_MEM_READ_WRITE, 0, E], {0: "context"},
     cl.CL_INVALID_EGL_OBJECT_KHR),
    ("clCreateEventFromEGLSyncKHR", lambda v, E: [v.o["ctx"], 1, 1, E], {0: "context"}, cl.CL_INVALID_EGL_OBJECT_KHR),
    ("clEnqueueAcquireEGLObjectsKHR", lambda v, E: [v.o["q"], 1, v.bufs, 0, 0, 0], {0: "queue"},
     cl.CL_INVALID_EGL_OBJECT_KHR),
    ("clEnqueueReleaseEGLObjectsKHR", lambda v, E: [v.o["q"], 1, v.bufs, 0, 0, 0], {0: "queue"},
     cl.CL_INVALID_EGL_OBJECT_KHR),
    ("clCreateSubDevicesEXT", lambda v, E: [v.o["dev"], v.fission_props, 0, 0, v.out], {0: "device"}, OP),
    ("clRetainDeviceEXT", lambda v, E: [v.o["dev"]], {0: "device"}, cl.CL_SUCCESS),
    ("clReleaseDeviceEXT", lambda v, E: [v.o["dev"]], {0: "device"}, cl.CL_SUCCESS),
]
# NULL is a valid device where the kernel's program has only one, and a valid default queue.
NULL_ALLOWED = {("clGetKernelSubGroupInfo", 1), ("clGetKernelSubGroupInfoKHR", 1),
                ("clSetDefaultDeviceCommandQueue", 2)}
IDS = [r[0] for r in ROWS]


def _run(v, row, substitute=None):
    name, make, _, _ = row
    e = err()
    args = make(v, addr(e))
    if substitute:
        args[substitute[0]] = substitute[1]
    creator = "errcode_ret" in _arg_names(name)
    return call(name, args, e if creator else None)


def _arg_names(name):
    return [n for s in ENTRY_POINTS if s and s[0] == name for n, _ in s[2]]


def test_no_entry_point_is_left_to_the_shims_fallback():
    """The shim's "not implemented" fallback answers CL_INVALID_OPERATION whatever the handles:
    every dispatch slot has an implementation (the two extension-address queries are in C)."""
    load_all()
    in_c = {"clGetExtensionFunctionAddress", "clGetExtensionFunctionAddressForPlatform"}
    assert [s[0] for s in ENTRY_POINTS if s and s[0] not in IMPLEMENTED and s[0] not in in_c] == []
    unimplemented = {"clRetainSampler", "clEnqueueReadImage", "clCreateProgramWithBuiltInKernels",
                     "clCreateFromGLBuffer", "clSetCommandQueueProperty"}
    assert {r[0] for r in ROWS} >= unimplemented


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_bad_handles_first(env, row):
    """NULL, foreign, wrongly typed and released handles: CL_INVALID_<OBJECT>, never the
    unsupported-feature answer."""
    name, _, positions, _ = row
    for position, kind in positions.items():
        wrong = env.o["q"] if kind in ("context", "device") else env.o["ctx"]
        bad = [("foreign", addr(env.junk)), ("wrong kind", wrong), ("released", env.dead[kind])]
        if (name, position) not in NULL_ALLOWED:
            bad.append(("NULL", 0))
        for what, handle in bad:
            code = _run(env, row, (position, handle))
            assert code == KIND_CODE[kind], f"{name}: {what} {kind} at {position} gave {code}"


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_valid_handles_get_the_feature_answer(env, row):
    assert _run(env, row) == row[3]


def _codes(env, cases):
    return {label: _run(env, next(r for r in ROWS if r[0] == name), (pos, value(env)))
            for label, name, pos, value, _ in cases}


# Arguments other than handles: (label, entry point, position, bad value, expected code).
VALUE_CASES = [
    ("sampler addressing", "clCreateSampler", 2, lambda v: 0x9999, cl.CL_INVALID_VALUE),
    ("sampler filter", "clCreateSampler", 3, lambda v: 0x9999, cl.CL_INVALID_VALUE),
    ("sampler normalized", "clCreateSampler", 1, lambda v: 2, cl.CL_INVALID_VALUE),
    ("image flags", "clCreateImage", 1, lambda v: cl.CL_MEM_READ_ONLY | cl.CL_MEM_WRITE_ONLY, cl.CL_INVALID_VALUE),
    ("image format NULL", "clCreateImage", 2, lambda v: 0, cl.CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
    ("image format bad", "clCreateImage", 2, lambda v: v.pattern, cl.CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
    ("image desc NULL", "clCreateImage", 3, lambda v: 0, cl.CL_INVALID_IMAGE_DESCRIPTOR),
    ("image desc type", "clCreateImage", 3, lambda v: v.pattern, cl.CL_INVALID_IMAGE_DESCRIPTOR),
    ("image host_ptr", "clCreateImage", 4, lambda v: v.out, cl.CL_INVALID_HOST_PTR),
    ("image property", "clCreateImageWithProperties", 1, lambda v: v.fission_props, cl.CL_INVALID_PROPERTY),
    ("image2d width 0", "clCreateImage2D", 3, lambda v: 0, cl.CL_INVALID_IMAGE_SIZE),
    ("image3d depth 1", "clCreateImage3D", 5, lambda v: 1, cl.CL_INVALID_IMAGE_SIZE),
    ("image2d format NULL", "clCreateImage2D", 2, lambda v: 0, cl.CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
    ("pipe flags", "clCreatePipe", 1, lambda v: cl.CL_MEM_READ_ONLY, cl.CL_INVALID_VALUE),
    ("pipe packet 0", "clCreatePipe", 2, lambda v: 0, cl.CL_INVALID_PIPE_SIZE),
    ("pipe packets 0", "clCreatePipe", 3, lambda v: 0, cl.CL_INVALID_PIPE_SIZE),
    ("pipe properties", "clCreatePipe", 4, lambda v: v.no_props, cl.CL_INVALID_VALUE),
    ("svm free list", "clEnqueueSVMFree", 2, lambda v: 0, cl.CL_INVALID_VALUE),
    ("svm fill pattern NULL", "clEnqueueSVMMemFill", 2, lambda v: 0, cl.CL_INVALID_VALUE),
    ("svm fill pattern size", "clEnqueueSVMMemFill", 3, lambda v: 3, cl.CL_INVALID_VALUE),
    ("svm fill size", "clEnqueueSVMMemFill", 4, lambda v: 18, cl.CL_INVALID_VALUE),
    ("svm map flags", "clEnqueueSVMMap", 2, lambda v: 0x80, cl.CL_INVALID_VALUE),
    ("svm map size 0", "clEnqueueSVMMap", 4, lambda v: 0, cl.CL_INVALID_VALUE),
    ("svm migrate none", "clEnqueueSVMMigrateMem", 1, lambda v: 0, cl.CL_INVALID_VALUE),
    ("svm migrate flags", "clEnqueueSVMMigrateMem", 4, lambda v: 0x10, cl.CL_INVALID_VALUE),
    ("svm arg index", "clSetKernelArgSVMPointer", 1, lambda v: 5, cl.CL_INVALID_ARG_INDEX),
    ("exec info name", "clSetKernelExecInfo", 1, lambda v: 0x1234, cl.CL_INVALID_VALUE),
    ("default queue host", "clSetDefaultDeviceCommandQueue", 2, lambda v: v.o["q"], OP),
    ("IL NULL", "clCreateProgramWithIL", 1, lambda v: 0, cl.CL_INVALID_VALUE),
    ("IL length 0", "clCreateProgramWithIL", 2, lambda v: 0, cl.CL_INVALID_VALUE),
    ("spec constant NULL", "clSetProgramSpecializationConstant", 3, lambda v: 0, cl.CL_INVALID_VALUE),
    ("built-in no devices", "clCreateProgramWithBuiltInKernels", 1, lambda v: 0, cl.CL_INVALID_VALUE),
    ("built-in bad device", "clCreateProgramWithBuiltInKernels", 2, lambda v: v.junk_list, cl.CL_INVALID_DEVICE),
    ("built-in names NULL", "clCreateProgramWithBuiltInKernels", 3, lambda v: 0, cl.CL_INVALID_VALUE),
    ("sub-group name", "clGetKernelSubGroupInfo", 2, lambda v: 0x1234, cl.CL_INVALID_VALUE),
    ("sub-group input", "clGetKernelSubGroupInfo", 2, lambda v: cl.CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
     cl.CL_INVALID_VALUE),
    ("sub-group NULL device", "clGetKernelSubGroupInfo", 1, lambda v: 0, OP),
    ("release callback NULL", "clSetProgramReleaseCallback", 1, lambda v: 0, cl.CL_INVALID_VALUE),
    ("queue property bits", "clSetCommandQueueProperty", 1, lambda v: 0x100, cl.CL_INVALID_VALUE),
    ("GL flags", "clCreateFromGLBuffer", 1, lambda v: cl.CL_MEM_USE_HOST_PTR, cl.CL_INVALID_VALUE),
    ("GL acquire nothing", "clEnqueueAcquireGLObjects", 1, lambda v: 0, cl.CL_INVALID_VALUE),
    ("GL acquire junk", "clEnqueueAcquireGLObjects", 2, lambda v: v.junk_list, cl.CL_INVALID_MEM_OBJECT),
    ("GL context param", "clGetGLContextInfoKHR", 1, lambda v: 0x1234, cl.CL_INVALID_VALUE),
    ("EGL flags", "clCreateFromEGLImageKHR", 3, lambda v: 0, cl.CL_INVALID_VALUE),
    ("fission properties", "clCreateSubDevicesEXT", 1, lambda v: 0, cl.CL_INVALID_VALUE),
]


@pytest.mark.parametrize("case", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_bad_values_before_the_feature_answer(env, case):
    label, name, position, value, expected = case
    row = next(r for r in ROWS if r[0] == name)
    assert _run(env, row, (position, value(env))) == expected


WAIT_LIST_ROWS = [r for r in ROWS if "num_events_in_wait_list" in _arg_names(r[0]) and r[3] == OP]


@pytest.mark.parametrize("row", WAIT_LIST_ROWS, ids=[r[0] for r in WAIT_LIST_ROWS])
def test_bad_wait_lists_before_the_feature_answer(env, row):
    names = _arg_names(row[0])
    count, events = names.index("num_events_in_wait_list"), names.index("event_wait_list")
    e = err()
    for n, lst in ((1, 0), (0, env.junk_list), (1, env.junk_list)):
        args = row[1](env, addr(e))
        args[count], args[events] = n, lst
        assert call(row[0], args) == cl.CL_INVALID_EVENT_WAIT_LIST, (n, lst)


def test_gl_acquire_of_nothing_is_refused_for_the_context(env):
    assert call("clEnqueueAcquireGLObjects", [env.o["q"], 0, 0, 0, 0, 0]) == cl.CL_INVALID_CONTEXT


def test_copy_buffer_to_image_checks_the_buffer_context(env):
    other, dev = make_context()
    try:
        foreign = make_buffer(other, 16)
        code = call("clEnqueueCopyBufferToImage",
                    [env.o["q"], foreign, env.o["buf"], 0, env.origin, env.region, 0, 0, 0])
        assert code == cl.CL_INVALID_CONTEXT
        CL.clReleaseMemObject(foreign)
    finally:
        CL.clReleaseContext(other)


def test_svm_alloc_and_free_have_no_error_channel(env):
    assert CL.clSVMAlloc(env.o["ctx"], cl.CL_MEM_READ_WRITE, 64, 0) in (0, None)
    CL.clSVMFree(env.o["ctx"], 0)


# --- clEnqueueWaitForEvents -----------------------------------------------------------------------

def test_enqueue_wait_for_events_codes(env):
    q, ctx = env.o["q"], env.o["ctx"]
    e = err()
    ev = CL.clCreateUserEvent(ctx, addr(e))
    assert e.value == cl.CL_SUCCESS
    dead = CL.clCreateUserEvent(ctx, addr(e))
    CL.clSetUserEventStatus(dead, cl.CL_COMPLETE)
    CL.clReleaseEvent(dead)
    other, _ = make_context()
    foreign_ev = CL.clCreateUserEvent(other, addr(e))
    lists = {name: (ctypes.c_size_t * 1)(h) for name, h in
             (("junk", addr(env.junk)), ("released", dead), ("context", env.o["ctx"]), ("null", 0),
              ("other", foreign_ev), ("good", ev))}
    # "CL_INVALID_EVENT if event objects specified in event_list are not valid events"
    for name in ("junk", "released", "context", "null"):
        assert CL.clEnqueueWaitForEvents(q, 1, addr(lists[name])) == cl.CL_INVALID_EVENT, name
    assert CL.clEnqueueWaitForEvents(q, 1, addr(lists["other"])) == cl.CL_INVALID_CONTEXT
    assert CL.clEnqueueWaitForEvents(q, 0, addr(lists["good"])) == cl.CL_INVALID_VALUE
    assert CL.clEnqueueWaitForEvents(q, 1, 0) == cl.CL_INVALID_VALUE
    assert CL.clEnqueueWaitForEvents(0, 1, addr(lists["good"])) == cl.CL_INVALID_COMMAND_QUEUE
    assert CL.clEnqueueWaitForEvents(q, 1, addr(lists["good"])) == cl.CL_SUCCESS
    CL.clSetUserEventStatus(ev, cl.CL_COMPLETE)
    assert CL.clFinish(q) == cl.CL_SUCCESS
    CL.clSetUserEventStatus(foreign_ev, cl.CL_COMPLETE)
    CL.clReleaseEvent(ev)
    CL.clReleaseEvent(foreign_ev)
    CL.clReleaseContext(other)


# --- clGetSupportedImageFormats -------------------------------------------------------------------

IMAGE_TYPES = (cl.CL_MEM_OBJECT_IMAGE1D, cl.CL_MEM_OBJECT_IMAGE1D_BUFFER, cl.CL_MEM_OBJECT_IMAGE2D,
               cl.CL_MEM_OBJECT_IMAGE3D, cl.CL_MEM_OBJECT_IMAGE1D_ARRAY, cl.CL_MEM_OBJECT_IMAGE2D_ARRAY)


def test_supported_image_formats_rejects_bad_type_and_flags(env):
    ctx, n = env.o["ctx"], ctypes.c_uint32(99)
    # "CL_INVALID_VALUE if flags or image_type are not valid, or if num_entries is 0 and
    # image_formats is not NULL"
    for image_type in (0, cl.CL_MEM_OBJECT_BUFFER, cl.CL_MEM_OBJECT_PIPE, 0x1234):
        assert CL.clGetSupportedImageFormats(ctx, cl.CL_MEM_READ_WRITE, image_type, 0, 0, addr(n)) == \
            cl.CL_INVALID_VALUE, hex(image_type)
    for flags in (cl.CL_MEM_READ_ONLY | cl.CL_MEM_WRITE_ONLY, 1 << 40,
                  cl.CL_MEM_HOST_READ_ONLY | cl.CL_MEM_HOST_NO_ACCESS):
        assert CL.clGetSupportedImageFormats(ctx, flags, cl.CL_MEM_OBJECT_IMAGE2D, 0, 0, addr(n)) == \
            cl.CL_INVALID_VALUE, hex(flags)
    assert CL.clGetSupportedImageFormats(ctx, cl.CL_MEM_READ_WRITE, cl.CL_MEM_OBJECT_IMAGE2D, 0, env.out,
                                         addr(n)) == cl.CL_INVALID_VALUE
    for bad in (0, addr(env.junk), env.o["q"], env.dead["context"]):
        assert CL.clGetSupportedImageFormats(bad, cl.CL_MEM_READ_WRITE, cl.CL_MEM_OBJECT_IMAGE2D, 0, 0,
                                             addr(n)) == cl.CL_INVALID_CONTEXT
    assert n.value == 99     # nothing written on failure


def test_supported_image_formats_are_none_for_valid_input(env):
    ctx = env.o["ctx"]
    for image_type in IMAGE_TYPES:
        for flags in (0, cl.CL_MEM_READ_WRITE, cl.CL_MEM_READ_ONLY, cl.CL_MEM_WRITE_ONLY,
                      cl.CL_MEM_KERNEL_READ_AND_WRITE, cl.CL_MEM_READ_ONLY | cl.CL_MEM_HOST_NO_ACCESS):
            n = ctypes.c_uint32(99)
            assert CL.clGetSupportedImageFormats(ctx, flags, image_type, 0, 0, addr(n)) == cl.CL_SUCCESS
            assert n.value == 0
    # "If image_formats is NULL, it is ignored": num_entries > 0 with a NULL array is allowed.
    n = ctypes.c_uint32(99)
    assert CL.clGetSupportedImageFormats(ctx, cl.CL_MEM_READ_WRITE, cl.CL_MEM_OBJECT_IMAGE2D, 4, 0, addr(n)) == \
        cl.CL_SUCCESS and n.value == 0
