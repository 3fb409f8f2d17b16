"""api: the error codes of the entry points for bad input (NULL where not allowed, handles of the
wrong type, released handles, out-of-range sizes, incompatible flags, objects of another
context) and the types and sizes of info answers.

Handles that are not handles at all (arbitrary memory) are not tried: an ICD loader reads the
dispatch table through the handle before any platform sees it, so no platform can answer them.
"""
import ctypes
from ctypes import byref, c_size_t, c_void_p

from . import clapi as C
from .framework import Category, describe_probe, probe

CATEGORY = Category("api", "error codes for bad input; info query types and sizes")
check = CATEGORY.check

BAD_PARAM = 0x7FFF
PTR = ctypes.sizeof(c_void_p)


def _err():
    return C.cl_int(12345)


def info_code(fn, *args, size=0, value=None, size_ret=None):
    return fn(*args, size, value, size_ret)


HANDLE_WITH_ERROR = 1 << 20


def created(t, what, make, expected):
    """make() -> (handle, errcode_ret) of a clCreate*-style call, run in a forked child: it must
    give the expected code and a NULL handle (with an error code)."""
    def call():
        h, code = make()
        return code + HANDLE_WITH_ERROR if h and code != C.CL_SUCCESS else code
    out = probe(call)
    if out[0] == "value" and out[1] > HANDLE_WITH_ERROR // 2:
        t.true(False, f"{what}: returned a handle together with {C.err_name(out[1] - HANDLE_WITH_ERROR)}")
        out = ("value", out[1] - HANDLE_WITH_ERROR)
    if out[0] != "value":
        t.true(False, f"{what}: expected {C.err_name(expected)}, got {describe_probe(out)}")
    else:
        t.code(out[1], expected, what)


def _user_event(env, t, ctx=None):
    h, code = env.create("clCreateUserEvent", ctx or env.context)
    t.ok(code, "clCreateUserEvent")
    return t.cleanup(env.cl.clReleaseEvent, h)


def _marker(env, t, q=None):
    ev = c_void_p()
    t.ok(env.cl.clEnqueueMarkerWithWaitList(q or env.queue, 0, None, byref(ev)),
         "clEnqueueMarkerWithWaitList")
    return t.cleanup(env.cl.clReleaseEvent, ev.value)


# --- platforms and devices -------------------------------------------------------------------------

@check
def platform_ids_errors(env, t):
    """clGetPlatformIDs: num_entries 0 with a list, both outputs NULL"""
    cl = env.cl
    arr = (c_void_p * 4)()
    t.code(lambda: cl.clGetPlatformIDs(0, arr, None), C.CL_INVALID_VALUE, "clGetPlatformIDs(0, list, NULL)")
    t.code(lambda: cl.clGetPlatformIDs(0, None, None), C.CL_INVALID_VALUE, "clGetPlatformIDs(0, NULL, NULL)")
    n = C.cl_uint(0)
    t.ok(cl.clGetPlatformIDs(0, None, byref(n)), "clGetPlatformIDs(0, NULL, &n)")
    t.true(n.value >= 1, f"clGetPlatformIDs counted {n.value} platforms")


@check
def platform_info_errors(env, t):
    """clGetPlatformInfo: unknown param, too small a buffer, a device as the platform"""
    cl, p = env.cl, env.platform
    small = ctypes.create_string_buffer(1)
    t.code(lambda: cl.clGetPlatformInfo(p, BAD_PARAM, 0, None, byref(c_size_t())), C.CL_INVALID_VALUE,
           f"clGetPlatformInfo(param={BAD_PARAM:#x})")
    t.code(lambda: cl.clGetPlatformInfo(p, C.CL_PLATFORM_NAME, 1, small, None), C.CL_INVALID_VALUE,
           "clGetPlatformInfo(CL_PLATFORM_NAME, param_value_size=1)")
    out = probe(lambda: cl.clGetPlatformInfo(env.device, C.CL_PLATFORM_NAME, 0, None,
                                             byref(c_size_t())))
    t.true(out == ("value", C.CL_INVALID_PLATFORM),
           f"clGetPlatformInfo(<a device handle>): expected CL_INVALID_PLATFORM, got {describe_probe(out)}")


@check
def platform_info_sizes(env, t):
    """every platform string: size_ret = strlen + 1, NUL-terminated; exact-size reads work"""
    cl, p = env.cl, env.platform
    for param, name in [(C.CL_PLATFORM_PROFILE, "PROFILE"), (C.CL_PLATFORM_VERSION, "VERSION"),
                        (C.CL_PLATFORM_NAME, "NAME"), (C.CL_PLATFORM_VENDOR, "VENDOR"),
                        (C.CL_PLATFORM_EXTENSIONS, "EXTENSIONS")]:
        size = c_size_t(0)
        t.ok(cl.clGetPlatformInfo(p, param, 0, None, byref(size)), f"clGetPlatformInfo({name}) size")
        buf = ctypes.create_string_buffer(size.value)
        t.ok(cl.clGetPlatformInfo(p, param, size.value, buf, None), f"clGetPlatformInfo({name}) value")
        raw = buf.raw
        t.true(raw.endswith(b"\0"), f"CL_PLATFORM_{name}: {raw!r} is not NUL-terminated")
        t.eq(size.value, raw.index(b"\0") + 1 if b"\0" in raw else -1,
             f"CL_PLATFORM_{name} size_ret (strlen + 1 of {raw.split(bytes(1))[0]!r})")
    if env.platform_version >= (2, 1):
        raw, size = C.raw_info(cl.clGetPlatformInfo, p, C.CL_PLATFORM_HOST_TIMER_RESOLUTION)
        t.eq(size, 8, "CL_PLATFORM_HOST_TIMER_RESOLUTION size (cl_ulong)")


@check
def device_ids_errors(env, t):
    """clGetDeviceIDs: device_type 0 or unknown bits, num_entries 0, NULL outputs, absent types"""
    cl, p = env.cl, env.platform
    arr = (c_void_p * 4)()
    n = C.cl_uint(0)
    t.code(lambda: cl.clGetDeviceIDs(p, 0, 4, arr, None), C.CL_INVALID_DEVICE_TYPE, "clGetDeviceIDs(type=0)")
    t.code(lambda: cl.clGetDeviceIDs(p, 1 << 40, 4, arr, None), C.CL_INVALID_DEVICE_TYPE,
           "clGetDeviceIDs(type=1<<40)")
    t.code(lambda: cl.clGetDeviceIDs(p, C.CL_DEVICE_TYPE_ALL, 0, arr, None), C.CL_INVALID_VALUE,
           "clGetDeviceIDs(num_entries=0, devices!=NULL)")
    t.code(lambda: cl.clGetDeviceIDs(p, C.CL_DEVICE_TYPE_ALL, 0, None, None), C.CL_INVALID_VALUE,
           "clGetDeviceIDs(devices=NULL, num_devices=NULL)")
    t.ok(cl.clGetDeviceIDs(p, C.CL_DEVICE_TYPE_ALL, 0, None, byref(n)), "clGetDeviceIDs(ALL)")
    devs = (c_void_p * n.value)()
    t.ok(cl.clGetDeviceIDs(p, C.CL_DEVICE_TYPE_ALL, n.value, devs, None), "clGetDeviceIDs(ALL)")
    present = 0
    for d in devs:
        present |= env.device_info(C.CL_DEVICE_TYPE, "ulong", device=d)
    for ty, name in [(C.CL_DEVICE_TYPE_CPU, "CPU"), (C.CL_DEVICE_TYPE_GPU, "GPU"),
                     (C.CL_DEVICE_TYPE_ACCELERATOR, "ACCELERATOR"), (C.CL_DEVICE_TYPE_CUSTOM, "CUSTOM")]:
        m = C.cl_uint(99)
        code = cl.clGetDeviceIDs(p, ty, 0, None, byref(m))
        if present & ty:
            t.code(code, C.CL_SUCCESS, f"clGetDeviceIDs(CL_DEVICE_TYPE_{name}), a type it has")
        else:
            t.code(code, C.CL_DEVICE_NOT_FOUND, f"clGetDeviceIDs(CL_DEVICE_TYPE_{name}), a type it lacks")
    m = C.cl_uint(0)
    t.ok(cl.clGetDeviceIDs(p, C.CL_DEVICE_TYPE_DEFAULT, 0, None, byref(m)), "clGetDeviceIDs(DEFAULT)")
    t.eq(m.value, 1, "number of CL_DEVICE_TYPE_DEFAULT devices")
    ctx = env.context
    out = probe(lambda: cl.clGetDeviceIDs(ctx, C.CL_DEVICE_TYPE_ALL, 0, None, byref(C.cl_uint())))
    t.true(out == ("value", C.CL_INVALID_PLATFORM),
           f"clGetDeviceIDs(<a context as platform>): expected CL_INVALID_PLATFORM, got {describe_probe(out)}")


@check
def device_info_errors(env, t):
    """clGetDeviceInfo: unknown param, small buffer, NULL and wrongly typed devices"""
    cl, d = env.cl, env.device
    t.code(lambda: cl.clGetDeviceInfo(d, BAD_PARAM, 0, None, byref(c_size_t())), C.CL_INVALID_VALUE,
           f"clGetDeviceInfo(param={BAD_PARAM:#x})")
    small = ctypes.create_string_buffer(2)
    t.code(lambda: cl.clGetDeviceInfo(d, C.CL_DEVICE_MAX_COMPUTE_UNITS, 2, small, None), C.CL_INVALID_VALUE,
           "clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS, param_value_size=2)")
    t.code(lambda: cl.clGetDeviceInfo(None, C.CL_DEVICE_NAME, 0, None, byref(c_size_t())), C.CL_INVALID_DEVICE,
           "clGetDeviceInfo(device=NULL)")
    ctx = env.context
    out = probe(lambda: cl.clGetDeviceInfo(ctx, C.CL_DEVICE_NAME, 0, None, byref(c_size_t())))
    t.true(out == ("value", C.CL_INVALID_DEVICE),
           f"clGetDeviceInfo(<a context>): expected CL_INVALID_DEVICE, got {describe_probe(out)}")


# --- contexts and queues ---------------------------------------------------------------------------

@check
def context_create_errors(env, t):
    """clCreateContext/FromType: NULL or empty device lists, NULL devices, bad properties"""
    cl = env.cl
    devs = C.ptrs([env.device])
    created(t, "clCreateContext(devices=NULL)", lambda: env.create("clCreateContext", None, 1, None, None, None),
            C.CL_INVALID_VALUE)
    created(t, "clCreateContext(num_devices=0)", lambda: env.create("clCreateContext", None, 0, devs, None, None),
            C.CL_INVALID_VALUE)
    props = (ctypes.c_ssize_t * 3)(C.CL_CONTEXT_PLATFORM, env.platform, 0)
    created(t, "clCreateContext(devices={NULL})", lambda: env.create("clCreateContext", props, 1, C.ptrs([None]), None, None),
            C.CL_INVALID_DEVICE)
    created(t, "clCreateContext(pfn_notify=NULL, user_data!=NULL)", lambda: env.create("clCreateContext", None, 1, devs, None, ctypes.c_void_p(1)),
            C.CL_INVALID_VALUE)
    bad = (ctypes.c_ssize_t * 3)(0x7FFF, 1, 0)
    created(t, "clCreateContext(properties={0x7fff, 1, 0})", lambda: env.create("clCreateContext", bad, 1, devs, None, None),
            C.CL_INVALID_PROPERTY)
    twice = (ctypes.c_ssize_t * 5)(C.CL_CONTEXT_PLATFORM, env.platform, C.CL_CONTEXT_PLATFORM,
                                   env.platform, 0)
    created(t, "clCreateContext(CL_CONTEXT_PLATFORM twice)", lambda: env.create("clCreateContext", twice, 1, devs, None, None),
            C.CL_INVALID_PROPERTY)
    created(t, "clCreateContextFromType(device_type=0)", lambda: env.create("clCreateContextFromType", props, 0, None, None),
            C.CL_INVALID_DEVICE_TYPE)
    created(t, "clCreateContextFromType(pfn_notify=NULL, user_data!=NULL)", lambda: env.create("clCreateContextFromType", props, C.CL_DEVICE_TYPE_ALL, None, c_void_p(1)),
            C.CL_INVALID_VALUE)
    h, code = env.create("clCreateContextFromType", props, C.CL_DEVICE_TYPE_ALL, None, None)
    t.code(code, C.CL_SUCCESS, "clCreateContextFromType(CL_DEVICE_TYPE_ALL)")
    if h:
        cl.clReleaseContext(h)


@check
def context_info(env, t):
    """clGetContextInfo: types and sizes of every answer; errors"""
    cl, ctx = env.cl, env.new_context(t)
    raw, size = C.raw_info(cl.clGetContextInfo, ctx, C.CL_CONTEXT_REFERENCE_COUNT)
    t.eq(size, 4, "CL_CONTEXT_REFERENCE_COUNT size (cl_uint)")
    t.eq(C.decode(raw, "uint"), 1, "CL_CONTEXT_REFERENCE_COUNT of a new context")
    raw, size = C.raw_info(cl.clGetContextInfo, ctx, C.CL_CONTEXT_NUM_DEVICES)
    t.eq(size, 4, "CL_CONTEXT_NUM_DEVICES size (cl_uint)")
    t.eq(C.decode(raw, "uint"), 1, "CL_CONTEXT_NUM_DEVICES")
    raw, size = C.raw_info(cl.clGetContextInfo, ctx, C.CL_CONTEXT_DEVICES)
    t.eq(size, PTR, "CL_CONTEXT_DEVICES size (one cl_device_id)")
    t.eq(C.decode(raw, "ptrs"), [env.device], "CL_CONTEXT_DEVICES")
    raw, size = C.raw_info(cl.clGetContextInfo, ctx, C.CL_CONTEXT_PROPERTIES)
    t.true(size % PTR == 0, f"CL_CONTEXT_PROPERTIES size {size} is not a multiple of "
                            f"sizeof(cl_context_properties)")
    t.code(lambda: cl.clGetContextInfo(ctx, BAD_PARAM, 0, None, byref(c_size_t())), C.CL_INVALID_VALUE,
           f"clGetContextInfo(param={BAD_PARAM:#x})")
    small = ctypes.create_string_buffer(2)
    t.code(lambda: cl.clGetContextInfo(ctx, C.CL_CONTEXT_NUM_DEVICES, 2, small, None), C.CL_INVALID_VALUE,
           "clGetContextInfo(CL_CONTEXT_NUM_DEVICES, param_value_size=2)")
    t.code(lambda: cl.clGetContextInfo(None, C.CL_CONTEXT_NUM_DEVICES, 0, None, byref(c_size_t())),
           C.CL_INVALID_CONTEXT, "clGetContextInfo(context=NULL)")


@check
def reference_counts(env, t):
    """retain/release move CL_*_REFERENCE_COUNT by one; NULL handles are rejected"""
    cl = env.cl
    ctx = env.new_context(t)
    q = env.new_queue(t, ctx)
    buf = env.buffer(t, 64, ctx=ctx)
    for h, retain, release, getinfo, param, what, err in [
            (ctx, cl.clRetainContext, cl.clReleaseContext, cl.clGetContextInfo,
             C.CL_CONTEXT_REFERENCE_COUNT, "context", C.CL_INVALID_CONTEXT),
            (q, cl.clRetainCommandQueue, cl.clReleaseCommandQueue, cl.clGetCommandQueueInfo,
             C.CL_QUEUE_REFERENCE_COUNT, "queue", C.CL_INVALID_COMMAND_QUEUE),
            (buf, cl.clRetainMemObject, cl.clReleaseMemObject, cl.clGetMemObjectInfo,
             C.CL_MEM_REFERENCE_COUNT, "buffer", C.CL_INVALID_MEM_OBJECT)]:
        before = C.info(getinfo, h, param, kind="uint")
        t.ok(retain(h), f"retain {what}")
        t.eq(C.info(getinfo, h, param, kind="uint"), before + 1, f"{what} reference count after retain")
        t.ok(release(h), f"release {what}")
        t.eq(C.info(getinfo, h, param, kind="uint"), before, f"{what} reference count after release")
        t.code(retain(None), err, f"retain {what}(NULL)")
        t.code(release(None), err, f"release {what}(NULL)")


@check
def queue_create_errors(env, t):
    """clCreateCommandQueue[WithProperties]: NULL context/device, unknown properties"""
    ctx, dev = env.context, env.device
    created(t, "clCreateCommandQueue(context=NULL)", lambda: env.create("clCreateCommandQueue", None, dev, 0),
            C.CL_INVALID_CONTEXT)
    created(t, "clCreateCommandQueue(device=NULL)", lambda: env.create("clCreateCommandQueue", ctx, None, 0),
            C.CL_INVALID_DEVICE)
    created(t, "clCreateCommandQueue(properties=1<<10)", lambda: env.create("clCreateCommandQueue", ctx, dev, 1 << 10),
            C.CL_INVALID_VALUE)
    supported = env.device_info(C.CL_DEVICE_QUEUE_PROPERTIES, "ulong")
    if not supported & C.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE:
        created(t, "clCreateCommandQueue(OUT_OF_ORDER) on a device without it", lambda: env.create("clCreateCommandQueue", ctx, dev, C.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE),
                C.CL_INVALID_QUEUE_PROPERTIES)
    if env.version >= (2, 0):
        bad = (C.cl_ulong * 3)(0x7FFF, 0, 0)
        created(t, "clCreateCommandQueueWithProperties({0x7fff, 0, 0})", lambda: env.create("clCreateCommandQueueWithProperties", ctx, dev, bad),
                C.CL_INVALID_VALUE)
        bits = (C.cl_ulong * 3)(C.CL_QUEUE_PROPERTIES, 1 << 10, 0)
        created(t, "clCreateCommandQueueWithProperties({CL_QUEUE_PROPERTIES, 1<<10, 0})", lambda: env.create("clCreateCommandQueueWithProperties", ctx, dev, bits),
                C.CL_INVALID_VALUE)
        good = (C.cl_ulong * 3)(C.CL_QUEUE_PROPERTIES, C.CL_QUEUE_PROFILING_ENABLE, 0)
        h, code = env.create("clCreateCommandQueueWithProperties", ctx, dev, good)
        t.code(code, C.CL_SUCCESS, "clCreateCommandQueueWithProperties({PROFILING_ENABLE})")
        if h:
            t.eq(C.info(env.cl.clGetCommandQueueInfo, h, C.CL_QUEUE_PROPERTIES, kind="ulong"),
                 C.CL_QUEUE_PROFILING_ENABLE, "CL_QUEUE_PROPERTIES of that queue")
            env.cl.clReleaseCommandQueue(h)


@check
def queue_info(env, t):
    """clGetCommandQueueInfo: types and sizes; errors"""
    cl = env.cl
    q = env.new_queue(t, props=C.CL_QUEUE_PROFILING_ENABLE)
    for param, kind, expected, what in [
            (C.CL_QUEUE_CONTEXT, "ptr", env.context, "CL_QUEUE_CONTEXT"),
            (C.CL_QUEUE_DEVICE, "ptr", env.device, "CL_QUEUE_DEVICE"),
            (C.CL_QUEUE_REFERENCE_COUNT, "uint", 1, "CL_QUEUE_REFERENCE_COUNT"),
            (C.CL_QUEUE_PROPERTIES, "ulong", C.CL_QUEUE_PROFILING_ENABLE, "CL_QUEUE_PROPERTIES")]:
        raw, size = C.raw_info(cl.clGetCommandQueueInfo, q, param)
        t.eq(size, C.KIND_SIZES[kind], f"{what} size")
        if size == C.KIND_SIZES[kind]:
            t.eq(C.decode(raw, kind), expected, what)
    t.code(lambda: cl.clGetCommandQueueInfo(q, BAD_PARAM, 0, None, byref(c_size_t())), C.CL_INVALID_VALUE,
           f"clGetCommandQueueInfo(param={BAD_PARAM:#x})")
    t.code(lambda: cl.clGetCommandQueueInfo(None, C.CL_QUEUE_CONTEXT, 0, None, byref(c_size_t())),
           C.CL_INVALID_COMMAND_QUEUE, "clGetCommandQueueInfo(NULL)")
    t.code(lambda: cl.clFinish(None), C.CL_INVALID_COMMAND_QUEUE, "clFinish(NULL)")
    t.code(lambda: cl.clFlush(None), C.CL_INVALID_COMMAND_QUEUE, "clFlush(NULL)")


# --- memory objects --------------------------------------------------------------------------------

@check
def buffer_create_errors(env, t):
    """clCreateBuffer: size 0 or too large, conflicting flags, host_ptr misuse"""
    ctx = env.context
    host = ctypes.create_string_buffer(64)
    max_alloc = env.device_info(C.CL_DEVICE_MAX_MEM_ALLOC_SIZE, "ulong")
    cases = [
        (C.CL_MEM_READ_WRITE, 0, None, C.CL_INVALID_BUFFER_SIZE, "size=0"),
        (C.CL_MEM_READ_WRITE, max_alloc + 1, None, C.CL_INVALID_BUFFER_SIZE,
         f"size=CL_DEVICE_MAX_MEM_ALLOC_SIZE+1={max_alloc + 1}"),
        (C.CL_MEM_READ_WRITE | C.CL_MEM_READ_ONLY, 64, None, C.CL_INVALID_VALUE, "READ_WRITE|READ_ONLY"),
        (C.CL_MEM_WRITE_ONLY | C.CL_MEM_READ_ONLY, 64, None, C.CL_INVALID_VALUE, "WRITE_ONLY|READ_ONLY"),
        (C.CL_MEM_USE_HOST_PTR | C.CL_MEM_ALLOC_HOST_PTR, 64, host, C.CL_INVALID_VALUE,
         "USE_HOST_PTR|ALLOC_HOST_PTR"),
        (C.CL_MEM_USE_HOST_PTR | C.CL_MEM_COPY_HOST_PTR, 64, host, C.CL_INVALID_VALUE,
         "USE_HOST_PTR|COPY_HOST_PTR"),
        (C.CL_MEM_HOST_WRITE_ONLY | C.CL_MEM_HOST_READ_ONLY, 64, None, C.CL_INVALID_VALUE,
         "HOST_WRITE_ONLY|HOST_READ_ONLY"),
        (C.CL_MEM_HOST_NO_ACCESS | C.CL_MEM_HOST_READ_ONLY, 64, None, C.CL_INVALID_VALUE,
         "HOST_NO_ACCESS|HOST_READ_ONLY"),
        (1 << 20, 64, None, C.CL_INVALID_VALUE, "flags=1<<20 (undefined bit)"),
        (C.CL_MEM_USE_HOST_PTR, 64, None, C.CL_INVALID_HOST_PTR, "USE_HOST_PTR, host_ptr=NULL"),
        (C.CL_MEM_COPY_HOST_PTR, 64, None, C.CL_INVALID_HOST_PTR, "COPY_HOST_PTR, host_ptr=NULL"),
        (C.CL_MEM_READ_WRITE, 64, host, C.CL_INVALID_HOST_PTR, "host_ptr without USE/COPY_HOST_PTR"),
    ]
    for flags, size, hp, expected, what in cases:
        created(t, f"clCreateBuffer({what})", lambda: env.create("clCreateBuffer", ctx, flags, size, hp),
                expected)
    created(t, "clCreateBuffer(context=NULL)", lambda: env.create("clCreateBuffer", None, C.CL_MEM_READ_WRITE, 64, None),
            C.CL_INVALID_CONTEXT)


def _region(origin, size):
    return (c_size_t * 2)(origin, size)


@check
def sub_buffer_errors(env, t):
    """clCreateSubBuffer: out of range, misaligned, of a sub-buffer, flag conflicts"""
    align_bits = env.device_info(C.CL_DEVICE_MEM_BASE_ADDR_ALIGN, "uint")
    align = max(1, align_bits // 8)
    size = 4 * align
    parent = env.buffer(t, size)
    rt = C.CL_BUFFER_CREATE_TYPE_REGION

    def sub(buf, flags, origin, sz, ctype=rt):
        return env.create("clCreateSubBuffer", buf, flags, ctype, _region(origin, sz))

    for origin, sz, expected, what in [
            (0, size + 1, C.CL_INVALID_VALUE, f"region (0, {size + 1}) past a {size}-byte buffer"),
            (align, size, C.CL_INVALID_VALUE, f"region ({align}, {size}) past the end"),
            (0, 0, C.CL_INVALID_BUFFER_SIZE, "region size 0")]:
        created(t, f"clCreateSubBuffer({what})",
                lambda: sub(parent, C.CL_MEM_READ_WRITE, origin, sz), expected)
    if align > 1:
        created(t, f"clCreateSubBuffer(origin=1, CL_DEVICE_MEM_BASE_ADDR_ALIGN={align_bits} bits)",
                lambda: sub(parent, C.CL_MEM_READ_WRITE, 1, align), C.CL_MISALIGNED_SUB_BUFFER_OFFSET)
    created(t, "clCreateSubBuffer(buffer_create_type=0x7fff)",
            lambda: sub(parent, C.CL_MEM_READ_WRITE, 0, align, ctype=0x7FFF), C.CL_INVALID_VALUE)
    good, code = sub(parent, C.CL_MEM_READ_WRITE, align, align)
    t.ok(code, "clCreateSubBuffer(a valid region)")
    t.cleanup(env.cl.clReleaseMemObject, good)
    created(t, "clCreateSubBuffer(of a sub-buffer)",
            lambda: sub(good, C.CL_MEM_READ_WRITE, 0, 1), C.CL_INVALID_MEM_OBJECT)
    wo = env.buffer(t, size, C.CL_MEM_WRITE_ONLY)
    created(t, "clCreateSubBuffer(READ_ONLY of a WRITE_ONLY buffer)",
            lambda: sub(wo, C.CL_MEM_READ_ONLY, 0, align), C.CL_INVALID_VALUE)
    na = env.buffer(t, size, C.CL_MEM_READ_WRITE | C.CL_MEM_HOST_NO_ACCESS)
    created(t, "clCreateSubBuffer(HOST_READ_ONLY of a HOST_NO_ACCESS buffer)",
            lambda: sub(na, C.CL_MEM_HOST_READ_ONLY, 0, align), C.CL_INVALID_VALUE)
    created(t, "clCreateSubBuffer(flags=USE_HOST_PTR)",
            lambda: sub(parent, C.CL_MEM_USE_HOST_PTR, 0, align), C.CL_INVALID_VALUE)
    created(t, "clCreateSubBuffer(buffer=NULL)",
            lambda: sub(None, C.CL_MEM_READ_WRITE, 0, align), C.CL_INVALID_MEM_OBJECT)


@check
def mem_info(env, t):
    """clGetMemObjectInfo: types, sizes and values for buffers and sub-buffers"""
    cl = env.cl
    host = ctypes.create_string_buffer(256)
    flags = C.CL_MEM_READ_ONLY | C.CL_MEM_USE_HOST_PTR
    buf = env.buffer(t, 256, flags, host)
    align = max(1, env.device_info(C.CL_DEVICE_MEM_BASE_ADDR_ALIGN, "uint") // 8)
    expect = [(C.CL_MEM_TYPE, "uint", C.CL_MEM_OBJECT_BUFFER, "CL_MEM_TYPE"),
              (C.CL_MEM_FLAGS, "ulong", flags, "CL_MEM_FLAGS"),
              (C.CL_MEM_SIZE, "size", 256, "CL_MEM_SIZE"),
              (C.CL_MEM_HOST_PTR, "ptr", ctypes.addressof(host), "CL_MEM_HOST_PTR"),
              (C.CL_MEM_CONTEXT, "ptr", env.context, "CL_MEM_CONTEXT"),
              (C.CL_MEM_ASSOCIATED_MEMOBJECT, "ptr", None, "CL_MEM_ASSOCIATED_MEMOBJECT"),
              (C.CL_MEM_OFFSET, "size", 0, "CL_MEM_OFFSET"),
              (C.CL_MEM_REFERENCE_COUNT, "uint", 1, "CL_MEM_REFERENCE_COUNT")]
    for param, kind, value, what in expect:
        raw, size = C.raw_info(cl.clGetMemObjectInfo, buf, param)
        t.eq(size, C.KIND_SIZES[kind], f"{what} size")
        if size == C.KIND_SIZES[kind]:
            got = C.decode(raw, kind)
            t.eq(got or None if kind == "ptr" else got, value, what)
    if 256 >= 2 * align:
        sub, code = env.create("clCreateSubBuffer", buf, 0, C.CL_BUFFER_CREATE_TYPE_REGION,
                               _region(align, align))
        t.ok(code, "clCreateSubBuffer")
        t.cleanup(cl.clReleaseMemObject, sub)
        t.eq(C.info(cl.clGetMemObjectInfo, sub, C.CL_MEM_ASSOCIATED_MEMOBJECT, kind="ptr"), buf,
             "sub-buffer CL_MEM_ASSOCIATED_MEMOBJECT")
        t.eq(C.info(cl.clGetMemObjectInfo, sub, C.CL_MEM_OFFSET, kind="size"), align,
             "sub-buffer CL_MEM_OFFSET")
        t.eq(C.info(cl.clGetMemObjectInfo, sub, C.CL_MEM_HOST_PTR, kind="ptr"),
             ctypes.addressof(host) + align, "sub-buffer CL_MEM_HOST_PTR (host_ptr + origin)")
        t.eq(C.info(cl.clGetMemObjectInfo, sub, C.CL_MEM_FLAGS, kind="ulong"), flags,
             "sub-buffer CL_MEM_FLAGS (inherited from the parent)")
    t.code(lambda: cl.clGetMemObjectInfo(buf, BAD_PARAM, 0, None, byref(c_size_t())), C.CL_INVALID_VALUE,
           f"clGetMemObjectInfo(param={BAD_PARAM:#x})")
    t.code(lambda: cl.clGetMemObjectInfo(None, C.CL_MEM_SIZE, 0, None, byref(c_size_t())),
           C.CL_INVALID_MEM_OBJECT, "clGetMemObjectInfo(NULL)")


@check
def read_write_errors(env, t):
    """clEnqueueRead/WriteBuffer: out of range, NULL pointers, host access flags, wait lists"""
    cl, q = env.cl, env.queue
    buf = env.buffer(t, 64)
    host = ctypes.create_string_buffer(128)
    for fn, name in [(cl.clEnqueueReadBuffer, "clEnqueueReadBuffer"),
                     (cl.clEnqueueWriteBuffer, "clEnqueueWriteBuffer")]:
        t.code(lambda: fn(q, buf, 1, 0, 65, host, 0, None, None), C.CL_INVALID_VALUE,
               f"{name}(offset=0, size=65) on 64 bytes")
        t.code(lambda: fn(q, buf, 1, 60, 8, host, 0, None, None), C.CL_INVALID_VALUE,
               f"{name}(offset=60, size=8) on 64 bytes")
        t.code(lambda: fn(q, buf, 1, 0, 8, None, 0, None, None), C.CL_INVALID_VALUE, f"{name}(ptr=NULL)")
        t.code(lambda: fn(None, buf, 1, 0, 8, host, 0, None, None), C.CL_INVALID_COMMAND_QUEUE,
               f"{name}(queue=NULL)")
        t.code(lambda: fn(q, None, 1, 0, 8, host, 0, None, None), C.CL_INVALID_MEM_OBJECT,
               f"{name}(buffer=NULL)")
        t.code(lambda: fn(q, buf, 1, 0, 8, host, 1, None, None), C.CL_INVALID_EVENT_WAIT_LIST,
               f"{name}(num_events=1, event_wait_list=NULL)")
        t.code(lambda: fn(q, buf, 1, 0, 8, host, 0, C.ptrs([None]), None), C.CL_INVALID_EVENT_WAIT_LIST,
               f"{name}(num_events=0, event_wait_list!=NULL)")
        t.code(lambda: fn(q, buf, 1, 0, 8, host, 1, C.ptrs([None]), None), C.CL_INVALID_EVENT_WAIT_LIST,
               f"{name}(event_wait_list={{NULL}})")
    wo = env.buffer(t, 64, C.CL_MEM_HOST_WRITE_ONLY)
    ro = env.buffer(t, 64, C.CL_MEM_HOST_READ_ONLY)
    na = env.buffer(t, 64, C.CL_MEM_HOST_NO_ACCESS)
    t.code(lambda: cl.clEnqueueReadBuffer(q, wo, 1, 0, 8, host, 0, None, None), C.CL_INVALID_OPERATION,
           "clEnqueueReadBuffer on a HOST_WRITE_ONLY buffer")
    t.code(lambda: cl.clEnqueueWriteBuffer(q, ro, 1, 0, 8, host, 0, None, None), C.CL_INVALID_OPERATION,
           "clEnqueueWriteBuffer on a HOST_READ_ONLY buffer")
    t.code(lambda: cl.clEnqueueReadBuffer(q, na, 1, 0, 8, host, 0, None, None), C.CL_INVALID_OPERATION,
           "clEnqueueReadBuffer on a HOST_NO_ACCESS buffer")
    t.code(lambda: cl.clEnqueueWriteBuffer(q, na, 1, 0, 8, host, 0, None, None), C.CL_INVALID_OPERATION,
           "clEnqueueWriteBuffer on a HOST_NO_ACCESS buffer")


@check
def copy_fill_errors(env, t):
    """clEnqueueCopyBuffer/FillBuffer: ranges, overlap, pattern sizes and alignment"""
    cl, q = env.cl, env.queue
    a, b = env.buffer(t, 64), env.buffer(t, 64)
    t.code(lambda: cl.clEnqueueCopyBuffer(q, a, b, 0, 0, 65, 0, None, None), C.CL_INVALID_VALUE,
           "clEnqueueCopyBuffer(size=65) between 64-byte buffers")
    t.code(lambda: cl.clEnqueueCopyBuffer(q, a, b, 60, 0, 8, 0, None, None), C.CL_INVALID_VALUE,
           "clEnqueueCopyBuffer(src_offset=60, size=8)")
    t.code(lambda: cl.clEnqueueCopyBuffer(q, a, b, 0, 60, 8, 0, None, None), C.CL_INVALID_VALUE,
           "clEnqueueCopyBuffer(dst_offset=60, size=8)")
    t.code(lambda: cl.clEnqueueCopyBuffer(q, a, a, 0, 8, 16, 0, None, None), C.CL_MEM_COPY_OVERLAP,
           "clEnqueueCopyBuffer(a -> a, [0,16) to [8,24))")
    t.code(lambda: cl.clEnqueueCopyBuffer(q, a, a, 0, 16, 16, 0, None, None), C.CL_SUCCESS,
           "clEnqueueCopyBuffer(a -> a, [0,16) to [16,32)) (adjacent, no overlap)")
    t.code(lambda: cl.clEnqueueCopyBuffer(q, a, None, 0, 0, 8, 0, None, None), C.CL_INVALID_MEM_OBJECT,
           "clEnqueueCopyBuffer(dst=NULL)")
    pat = ctypes.create_string_buffer(256)
    for psize, off, size, expected, what in [
            (3, 0, 6, C.CL_INVALID_VALUE, "pattern_size=3"),
            (0, 0, 8, C.CL_INVALID_VALUE, "pattern_size=0"),
            (256, 0, 256, C.CL_INVALID_VALUE, "pattern_size=256"),
            (4, 2, 8, C.CL_INVALID_VALUE, "offset=2 not a multiple of pattern_size=4"),
            (4, 0, 6, C.CL_INVALID_VALUE, "size=6 not a multiple of pattern_size=4"),
            (4, 60, 8, C.CL_INVALID_VALUE, "offset=60 size=8 past 64 bytes"),
            (4, 0, 64, C.CL_SUCCESS, "pattern_size=4 over the whole buffer")]:
        t.code(lambda: cl.clEnqueueFillBuffer(q, a, pat, psize, off, size, 0, None, None), expected,
               f"clEnqueueFillBuffer({what})")
    t.code(lambda: cl.clEnqueueFillBuffer(q, a, None, 4, 0, 8, 0, None, None), C.CL_INVALID_VALUE,
           "clEnqueueFillBuffer(pattern=NULL)")
    t.ok(cl.clFinish(q), "clFinish")


@check
def rect_errors(env, t):
    """clEnqueue{Read,Write,Copy}BufferRect: zero regions, small pitches, out of bounds"""
    cl, q = env.cl, env.queue
    buf = env.buffer(t, 256)
    other = env.buffer(t, 256)
    host = ctypes.create_string_buffer(1024)

    def v3(*x):
        return (c_size_t * 3)(*x)

    o = v3(0, 0, 0)
    for region, brp, bsp, what, expected in [
            (v3(0, 4, 1), 0, 0, "region[0]=0", C.CL_INVALID_VALUE),
            (v3(4, 0, 1), 0, 0, "region[1]=0", C.CL_INVALID_VALUE),
            (v3(8, 2, 1), 4, 0, "buffer_row_pitch=4 < region[0]=8", C.CL_INVALID_VALUE),
            (v3(8, 2, 2), 8, 8, "buffer_slice_pitch=8 < region[1]*row_pitch=16", C.CL_INVALID_VALUE),
            (v3(16, 17, 1), 16, 0, "16x17 rows of 16 bytes past 256 bytes", C.CL_INVALID_VALUE),
            (v3(16, 16, 1), 16, 0, "16x16 rows of 16 bytes, exactly 256 bytes", C.CL_SUCCESS)]:
        t.code(lambda: cl.clEnqueueReadBufferRect(q, buf, 0, o, o, region, brp, bsp, 0, 0, host, 0, None,
                                          None), expected, f"clEnqueueReadBufferRect({what})")
        t.code(lambda: cl.clEnqueueWriteBufferRect(q, buf, 0, o, o, region, brp, bsp, 0, 0, host, 0, None,
                                           None), expected, f"clEnqueueWriteBufferRect({what})")
    t.code(lambda: cl.clEnqueueCopyBufferRect(q, buf, other, o, v3(0, 1, 0), v3(16, 16, 1), 16, 0, 16, 0, 0,
                                      None, None), C.CL_INVALID_VALUE,
           "clEnqueueCopyBufferRect(dst_origin row 1 + 16 rows past 256 bytes)")
    t.code(lambda: cl.clEnqueueCopyBufferRect(q, buf, buf, o, v3(0, 4, 0), v3(16, 8, 1), 16, 0, 16, 0, 0,
                                      None, None), C.CL_MEM_COPY_OVERLAP,
           "clEnqueueCopyBufferRect(rows 0-7 to rows 4-11 of the same buffer)")
    t.code(lambda: cl.clEnqueueReadBufferRect(q, buf, 1, o, o, v3(4, 4, 1), 0, 0, 0, 0, None, 0, None, None),
           C.CL_INVALID_VALUE, "clEnqueueReadBufferRect(ptr=NULL)")
    t.ok(cl.clFinish(q), "clFinish")


@check
def map_errors(env, t):
    """clEnqueueMapBuffer/Unmap: flag conflicts, ranges, host access, unknown pointers"""
    cl, q = env.cl, env.queue
    buf = env.buffer(t, 64)

    def m(b, flags, off, size):
        e = _err()
        # non-blocking: these run in a forked child, where a platform's worker threads are gone
        p = cl.clEnqueueMapBuffer(q, b, 0, flags, off, size, 0, None, None, byref(e))
        return p, e.value

    for flags, off, size, expected, what in [
            (C.CL_MAP_READ | C.CL_MAP_WRITE_INVALIDATE_REGION, 0, 8, C.CL_INVALID_VALUE,
             "MAP_READ|MAP_WRITE_INVALIDATE_REGION"),
            (1 << 10, 0, 8, C.CL_INVALID_VALUE, "map_flags=1<<10"),
            (C.CL_MAP_READ, 60, 8, C.CL_INVALID_VALUE, "offset=60 size=8 on 64 bytes"),
            (C.CL_MAP_READ, 0, 0, C.CL_INVALID_VALUE, "size=0")]:
        created(t, f"clEnqueueMapBuffer({what})", lambda: m(buf, flags, off, size), expected)
    wo = env.buffer(t, 64, C.CL_MEM_HOST_WRITE_ONLY)
    created(t, "clEnqueueMapBuffer(MAP_READ of a HOST_WRITE_ONLY buffer)",
            lambda: m(wo, C.CL_MAP_READ, 0, 8), C.CL_INVALID_OPERATION)
    ro = env.buffer(t, 64, C.CL_MEM_HOST_READ_ONLY)
    created(t, "clEnqueueMapBuffer(MAP_WRITE of a HOST_READ_ONLY buffer)",
            lambda: m(ro, C.CL_MAP_WRITE, 0, 8), C.CL_INVALID_OPERATION)
    host = ctypes.create_string_buffer(8)
    t.code(lambda: cl.clEnqueueUnmapMemObject(q, buf, host, 0, None, None), C.CL_INVALID_VALUE,
           "clEnqueueUnmapMemObject(a pointer that was never mapped)")
    t.ok(cl.clFinish(q), "clFinish")


@check
def other_context_objects(env, t):
    """objects of another context: buffers, copies, wait lists, clWaitForEvents"""
    cl, q = env.cl, env.queue
    ctx2 = env.new_context(t)
    q2 = env.new_queue(t, ctx2)
    mine = env.buffer(t, 64)
    theirs = env.buffer(t, 64, ctx=ctx2)
    host = ctypes.create_string_buffer(64)
    t.code(lambda: cl.clEnqueueReadBuffer(q, theirs, 1, 0, 8, host, 0, None, None), C.CL_INVALID_CONTEXT,
           "clEnqueueReadBuffer(a buffer of another context)")
    t.code(lambda: cl.clEnqueueWriteBuffer(q, theirs, 1, 0, 8, host, 0, None, None), C.CL_INVALID_CONTEXT,
           "clEnqueueWriteBuffer(a buffer of another context)")
    t.code(lambda: cl.clEnqueueCopyBuffer(q, mine, theirs, 0, 0, 8, 0, None, None), C.CL_INVALID_CONTEXT,
           "clEnqueueCopyBuffer(destination in another context)")
    pat = C.cl_uint(7)
    t.code(lambda: cl.clEnqueueFillBuffer(q, theirs, byref(pat), 4, 0, 8, 0, None, None), C.CL_INVALID_CONTEXT,
           "clEnqueueFillBuffer(a buffer of another context)")
    created(t, "clEnqueueMapBuffer(a buffer of another context)",
            lambda: env.create("clEnqueueMapBuffer", q, theirs, 0, C.CL_MAP_READ, 0, 8, 0, None, None),
            C.CL_INVALID_CONTEXT)
    ev2 = _user_event(env, t, ctx2)
    t.code(lambda: cl.clEnqueueReadBuffer(q, mine, 1, 0, 8, host, 1, C.ptrs([ev2]), None), C.CL_INVALID_CONTEXT,
           "clEnqueueReadBuffer(wait list holding an event of another context)")
    t.code(lambda: cl.clEnqueueMarkerWithWaitList(q, 1, C.ptrs([ev2]), None), C.CL_INVALID_CONTEXT,
           "clEnqueueMarkerWithWaitList(an event of another context)")
    ev1 = _marker(env, t, q)
    ev3 = _marker(env, t, q2)
    t.code(lambda: cl.clWaitForEvents(2, C.ptrs([ev1, ev3])), C.CL_INVALID_CONTEXT,
           "clWaitForEvents(events of two contexts)")
    t.ok(cl.clSetUserEventStatus(ev2, C.CL_COMPLETE), "clSetUserEventStatus")


# --- events ----------------------------------------------------------------------------------------

@check
def event_errors(env, t):
    """events: empty wait lists, user-event status rules, callbacks, profiling availability"""
    cl = env.cl
    t.code(lambda: cl.clWaitForEvents(0, None), C.CL_INVALID_VALUE, "clWaitForEvents(0, NULL)")
    t.code(lambda: cl.clWaitForEvents(1, None), C.CL_INVALID_VALUE, "clWaitForEvents(1, NULL)")
    t.code(lambda: cl.clWaitForEvents(1, C.ptrs([None])), C.CL_INVALID_EVENT, "clWaitForEvents({NULL})")
    created(t, "clCreateUserEvent(context=NULL)", lambda: env.create("clCreateUserEvent", None),
            C.CL_INVALID_CONTEXT)
    ue = _user_event(env, t)
    t.code(lambda: cl.clSetUserEventStatus(ue, C.CL_RUNNING), C.CL_INVALID_VALUE,
           "clSetUserEventStatus(CL_RUNNING)")
    t.code(lambda: cl.clSetUserEventStatus(ue, C.CL_SUBMITTED), C.CL_INVALID_VALUE,
           "clSetUserEventStatus(CL_SUBMITTED)")
    cb = C.EVENT_CALLBACK(lambda e, s, u: None)
    t.code(lambda: cl.clSetEventCallback(ue, 42, cb, None), C.CL_INVALID_VALUE,
           "clSetEventCallback(command_exec_callback_type=42)")
    t.code(lambda: cl.clSetEventCallback(ue, C.CL_COMPLETE, None, None), C.CL_INVALID_VALUE,
           "clSetEventCallback(pfn_notify=NULL)")
    t.code(lambda: cl.clSetEventCallback(None, C.CL_COMPLETE, cb, None), C.CL_INVALID_EVENT,
           "clSetEventCallback(event=NULL)")
    v = C.cl_ulong()
    t.code(lambda: cl.clGetEventProfilingInfo(ue, C.CL_PROFILING_COMMAND_START, 8, byref(v), None),
           C.CL_PROFILING_INFO_NOT_AVAILABLE, "clGetEventProfilingInfo(a user event)")
    t.ok(cl.clSetUserEventStatus(ue, C.CL_COMPLETE), "clSetUserEventStatus(CL_COMPLETE)")
    t.code(lambda: cl.clSetUserEventStatus(ue, C.CL_COMPLETE), C.CL_INVALID_OPERATION,
           "clSetUserEventStatus a second time")
    mk = _marker(env, t)
    t.ok(cl.clWaitForEvents(1, C.ptrs([mk])), "clWaitForEvents(marker)")
    t.code(lambda: cl.clSetUserEventStatus(mk, C.CL_COMPLETE), C.CL_INVALID_EVENT,
           "clSetUserEventStatus(a marker's event)")
    t.code(lambda: cl.clGetEventProfilingInfo(mk, C.CL_PROFILING_COMMAND_START, 8, byref(v), None),
           C.CL_PROFILING_INFO_NOT_AVAILABLE,
           "clGetEventProfilingInfo(an event of a queue without CL_QUEUE_PROFILING_ENABLE)")
    t.code(lambda: cl.clGetEventInfo(mk, BAD_PARAM, 0, None, byref(c_size_t())), C.CL_INVALID_VALUE,
           f"clGetEventInfo(param={BAD_PARAM:#x})")
    t.code(lambda: cl.clRetainEvent(None), C.CL_INVALID_EVENT, "clRetainEvent(NULL)")
    t.code(lambda: cl.clReleaseEvent(None), C.CL_INVALID_EVENT, "clReleaseEvent(NULL)")


@check
def event_info(env, t):
    """clGetEventInfo: types, sizes and values for user events and commands"""
    cl = env.cl
    ue = _user_event(env, t)
    mk = _marker(env, t)
    t.ok(cl.clWaitForEvents(1, C.ptrs([mk])), "clWaitForEvents")
    for ev, what, queue, ctype, status in [(ue, "user event", None, C.CL_COMMAND_USER, C.CL_SUBMITTED),
                                           (mk, "marker", env.queue, C.CL_COMMAND_MARKER, C.CL_COMPLETE)]:
        for param, kind, value, name in [
                (C.CL_EVENT_COMMAND_QUEUE, "ptr", queue, "CL_EVENT_COMMAND_QUEUE"),
                (C.CL_EVENT_CONTEXT, "ptr", env.context, "CL_EVENT_CONTEXT"),
                (C.CL_EVENT_COMMAND_TYPE, "uint", ctype, "CL_EVENT_COMMAND_TYPE"),
                (C.CL_EVENT_COMMAND_EXECUTION_STATUS, "int", status, "CL_EVENT_COMMAND_EXECUTION_STATUS"),
                (C.CL_EVENT_REFERENCE_COUNT, "uint", None, "CL_EVENT_REFERENCE_COUNT")]:
            raw, size = C.raw_info(cl.clGetEventInfo, ev, param)
            t.eq(size, C.KIND_SIZES[kind], f"{what} {name} size")
            if size == C.KIND_SIZES[kind] and (value is not None or kind == "ptr"):
                got = C.decode(raw, kind)
                t.eq(got or None if kind == "ptr" else got, value, f"{what} {name}")
    t.ok(cl.clSetUserEventStatus(ue, C.CL_COMPLETE), "clSetUserEventStatus")


# --- programs --------------------------------------------------------------------------------------

@check
def program_errors(env, t):
    """programs without a compiler run: source arguments, build arguments, unbuilt programs"""
    cl, ctx = env.cl, env.context
    src = b"__kernel void k(__global int *p) { p[0] = 1; }"
    strings = (ctypes.c_char_p * 1)(src)
    created(t, "clCreateProgramWithSource(count=0)", lambda: env.create("clCreateProgramWithSource", ctx, 0, strings, None),
            C.CL_INVALID_VALUE)
    created(t, "clCreateProgramWithSource(strings=NULL)", lambda: env.create("clCreateProgramWithSource", ctx, 1, None, None),
            C.CL_INVALID_VALUE)
    created(t, "clCreateProgramWithSource(strings={NULL})", lambda: env.create("clCreateProgramWithSource", ctx, 1, (ctypes.c_char_p * 1)(None), None),
            C.CL_INVALID_VALUE)
    created(t, "clCreateProgramWithSource(context=NULL)", lambda: env.create("clCreateProgramWithSource", None, 1, strings, None),
            C.CL_INVALID_CONTEXT)
    prog, code = env.create("clCreateProgramWithSource", ctx, 1, strings, None)
    t.ok(code, "clCreateProgramWithSource")
    t.cleanup(cl.clReleaseProgram, prog)
    t.eq(C.info(cl.clGetProgramInfo, prog, C.CL_PROGRAM_SOURCE), src.decode(), "CL_PROGRAM_SOURCE")
    t.eq(C.info(cl.clGetProgramInfo, prog, C.CL_PROGRAM_CONTEXT, kind="ptr"), ctx, "CL_PROGRAM_CONTEXT")
    t.eq(C.info(cl.clGetProgramInfo, prog, C.CL_PROGRAM_NUM_DEVICES, kind="uint"), 1,
         "CL_PROGRAM_NUM_DEVICES")
    t.eq(C.info(cl.clGetProgramBuildInfo, prog, env.device, C.CL_PROGRAM_BUILD_STATUS, kind="int"),
         C.CL_BUILD_NONE, "CL_PROGRAM_BUILD_STATUS before a build")
    created(t, "clCreateKernel(a program never built)", lambda: env.create("clCreateKernel", prog, b"k"),
            C.CL_INVALID_PROGRAM_EXECUTABLE)
    n = c_size_t()
    t.code(lambda: cl.clGetProgramInfo(prog, C.CL_PROGRAM_NUM_KERNELS, ctypes.sizeof(n), byref(n), None),
           C.CL_INVALID_PROGRAM_EXECUTABLE, "clGetProgramInfo(CL_PROGRAM_NUM_KERNELS) before a build")
    devs = C.ptrs([env.device])
    t.code(lambda: cl.clBuildProgram(prog, 1, None, b"", None, None), C.CL_INVALID_VALUE,
           "clBuildProgram(num_devices=1, device_list=NULL)")
    t.code(lambda: cl.clBuildProgram(prog, 0, devs, b"", None, None), C.CL_INVALID_VALUE,
           "clBuildProgram(num_devices=0, device_list!=NULL)")
    t.code(lambda: cl.clBuildProgram(prog, 1, devs, b"", None, c_void_p(1)), C.CL_INVALID_VALUE,
           "clBuildProgram(pfn_notify=NULL, user_data!=NULL)")
    t.code(lambda: cl.clBuildProgram(None, 1, devs, b"", None, None), C.CL_INVALID_PROGRAM,
           "clBuildProgram(program=NULL)")
    garbage = ctypes.create_string_buffer(b"this is not a program binary" * 4)
    binaries = (c_void_p * 1)(ctypes.addressof(garbage))
    lengths = (c_size_t * 1)(len(garbage.raw))
    status = (C.cl_int * 1)(12345)
    def garbage_binary():
        h, code = env.create("clCreateProgramWithBinary", ctx, 1, devs, lengths, binaries, status)
        if code == C.CL_SUCCESS and h:  # the spec allows noticing at build time
            code = cl.clBuildProgram(h, 1, devs, b"", None, None)
            return C.CL_INVALID_BINARY if code == C.CL_BUILD_PROGRAM_FAILURE else code
        if code == C.CL_INVALID_BINARY and status[0] != C.CL_INVALID_BINARY:
            return 1  # binary_status not set
        return code
    t.code(garbage_binary, C.CL_INVALID_BINARY,
           "clCreateProgramWithBinary(garbage), binary_status[0], or building it "
           "(CL_BUILD_PROGRAM_FAILURE counts)")
    created(t, "clCreateProgramWithBinary(binaries=NULL)", lambda: env.create("clCreateProgramWithBinary", ctx, 1, devs, lengths, None, status),
            C.CL_INVALID_VALUE)
    zero = (c_size_t * 1)(0)
    created(t, "clCreateProgramWithBinary(lengths={0})", lambda: env.create("clCreateProgramWithBinary", ctx, 1, devs, zero, binaries, status),
            C.CL_INVALID_VALUE)


# --- handles of the wrong type, released handles -----------------------------------------------------

def _handles(env, t):
    buf = env.buffer(t, 64)
    ue = _user_event(env, t)
    return {"context": env.context, "queue": env.queue, "buffer": buf, "event": ue}


def _calls(cl):
    sz = lambda: byref(c_size_t())  # noqa: E731
    return [
        ("clGetContextInfo", C.CL_INVALID_CONTEXT, "context",
         lambda h: cl.clGetContextInfo(h, C.CL_CONTEXT_NUM_DEVICES, 0, None, sz())),
        ("clGetCommandQueueInfo", C.CL_INVALID_COMMAND_QUEUE, "queue",
         lambda h: cl.clGetCommandQueueInfo(h, C.CL_QUEUE_CONTEXT, 0, None, sz())),
        ("clFinish", C.CL_INVALID_COMMAND_QUEUE, "queue", lambda h: cl.clFinish(h)),
        ("clGetMemObjectInfo", C.CL_INVALID_MEM_OBJECT, "buffer",
         lambda h: cl.clGetMemObjectInfo(h, C.CL_MEM_SIZE, 0, None, sz())),
        ("clRetainMemObject", C.CL_INVALID_MEM_OBJECT, "buffer", lambda h: cl.clRetainMemObject(h)),
        ("clGetEventInfo", C.CL_INVALID_EVENT, "event",
         lambda h: cl.clGetEventInfo(h, C.CL_EVENT_COMMAND_TYPE, 0, None, sz())),
        ("clSetUserEventStatus", C.CL_INVALID_EVENT, "event",
         lambda h: cl.clSetUserEventStatus(h, C.CL_COMPLETE)),
        ("clGetProgramInfo", C.CL_INVALID_PROGRAM, "program",
         lambda h: cl.clGetProgramInfo(h, C.CL_PROGRAM_CONTEXT, 0, None, sz())),
        ("clGetKernelInfo", C.CL_INVALID_KERNEL, "kernel",
         lambda h: cl.clGetKernelInfo(h, C.CL_KERNEL_NUM_ARGS, 0, None, sz())),
    ]


@check
def wrong_type_handles(env, t):
    """each entry point given a valid handle of another type returns CL_INVALID_<TYPE>"""
    objs = _handles(env, t)
    for name, expected, kind, call in _calls(env.cl):
        wrong_kind = "queue" if kind in ("context", "buffer", "event", "program", "kernel") else "context"
        if kind == "queue":
            wrong_kind = "buffer"
        h = objs[wrong_kind]
        out = probe(lambda: call(h))
        t.true(out == ("value", expected),
               f"{name}(<a {wrong_kind}>): expected {C.err_name(expected)}, got {describe_probe(out)}")


@check
def released_handles(env, t):
    """handles used after their last release (undefined behaviour: skipped when not detected)"""
    cl = env.cl
    undetected = []

    def dead(kind):
        if kind == "context":
            return env.make_context(), cl.clReleaseContext
        if kind == "queue":
            return env.make_queue(env.context), cl.clReleaseCommandQueue
        if kind == "buffer":
            h, code = env.create("clCreateBuffer", env.context, C.CL_MEM_READ_WRITE, 64, None)
            return h, cl.clReleaseMemObject
        if kind == "event":
            h, code = env.create("clCreateUserEvent", env.context)
            cl.clSetUserEventStatus(h, C.CL_COMPLETE)
            return h, cl.clReleaseEvent
        return None, None

    for name, expected, kind, call in _calls(cl):
        h, release = dead(kind)
        if not h:
            continue

        def use(h=h, release=release, call=call):
            release(h)
            return call(h)

        out = probe(use)
        if out != ("value", expected):
            undetected.append(f"{name}(<a released {kind}>) gave {describe_probe(out)}, "
                              f"not {C.err_name(expected)}")
        release(h)
    if undetected:
        t.skip("use after release is undefined behaviour; not detected: " + "; ".join(undetected))
