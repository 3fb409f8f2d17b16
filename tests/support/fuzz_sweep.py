"""Bad-input sweep over every slot of the ICD dispatch table (issue 13 part 2, component a).

The platform is reached the way a loader reaches it, without the loader: its library is opened,
clIcdGetPlatformIDsKHR gives the platform and the platform's first word the dispatch table, in
the order of pyplat/api/_entry_points.py (generated from the Khronos cl_icd.h). No loader sits
in between, so a foreign handle reaches the platform itself (a loader would dereference it first).
Works for PyPlat and for any installed ICD (PoCL), chosen by platform name.

Cases are generated from the entry points' parameter names: for every handle parameter NULL, a
pointer to random bytes, a released object and an object of the wrong kind; wait lists, device,
memory-object and program lists with bad entries and inconsistent counts; sizes 0, huge and
misaligned; flags and enum values out of range; NULL where a pointer is required. Each case
names the codes the spec allows. The spec gives no precedence between errors, so where the
other arguments are not all valid (the entry point's feature is not supported, its "valid"
call already fails with a handle code), the code of that valid call is accepted too.

Calls run in child processes, many per child: a child prints one line per finished call, so a
crash or a hang names the call, and the parent starts a new child after it.
"""
import ctypes
import glob
import os
import random
import select
import subprocess
import sys
import time

from pyplat import cl
from pyplat.api._entry_points import ENTRY_POINTS

C = ctypes.c_void_p
CTYPES = {"ptr": C, "u32": ctypes.c_uint32, "u64": ctypes.c_uint64, "i32": ctypes.c_int32,
          "i64": ctypes.c_int64, "f32": ctypes.c_float, "f64": ctypes.c_double, "void": None}
SLOTS = {s[0]: (i, s) for i, s in enumerate(ENTRY_POINTS) if s}
E = cl
HUGE = 1 << 62
BAD_ENUM = 0x7FFF1234
CL_INVALID_COMPILER_OPTIONS = -66

# ---- reaching a platform -------------------------------------------------------------------------


def vendor_libraries():
    """(library path) of PyPlat first, then of every installed ICD."""
    from pyplat import discovery
    yield discovery.shim_path()
    dirs = [d for d in os.environ.get("OCL_ICD_VENDORS", "").split(":") if os.path.isdir(d)] or ["/etc/OpenCL/vendors"]
    for d in dirs:
        for icd in sorted(glob.glob(os.path.join(d, "*.icd"))):
            with open(icd) as f:
                yield f.read().strip()


class Platform:
    """The dispatch table of one platform, as ctypes functions by entry-point name."""

    def __init__(self, name):
        self.name = name
        for lib_path in vendor_libraries():
            try:
                lib = ctypes.CDLL(lib_path)
                # as a loader does: the ICD's own clGetExtensionFunctionAddress names it
                lookup = lib.clGetExtensionFunctionAddress
            except (OSError, AttributeError):
                continue
            lookup.argtypes, lookup.restype = [ctypes.c_char_p], C
            address = lookup(b"clIcdGetPlatformIDsKHR")
            if not address:
                continue
            get = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_uint32, C, C)(address)
            n = ctypes.c_uint32()
            if get(0, None, ctypes.byref(n)) != 0 or not n.value:
                continue
            ids = (C * n.value)()
            get(n.value, ids, None)
            for pid in ids:
                self.table = ctypes.cast(ctypes.cast(pid, ctypes.POINTER(C))[0], ctypes.POINTER(C))
                self._fns = {}
                value = ctypes.create_string_buffer(256)
                self.fn("clGetPlatformInfo")(pid, E.CL_PLATFORM_NAME, 256, value, None)
                if name.lower() in value.value.decode(errors="replace").lower():
                    self.id, self.library, self.full_name = pid, lib_path, value.value.decode()
                    return
        raise LookupError(f"no platform named like {name!r}")

    def fn(self, name):
        if name not in self._fns:
            i, (_, ret, args) = SLOTS[name]
            address = self.table[i]
            if not address:
                self._fns[name] = None
            else:
                proto = ctypes.CFUNCTYPE(CTYPES[ret], *[CTYPES[k] for _, k in args])
                self._fns[name] = proto(address)
        return self._fns[name]

    def __getattr__(self, name):
        if not name.startswith("cl"):
            raise AttributeError(name)
        return self.fn(name)


# ---- the objects a child calls with --------------------------------------------------------------

SOURCE = b"__kernel void k(__global int *p, int v) { p[get_global_id(0)] += v; }"
CALLBACK = ctypes.CFUNCTYPE(None, C, ctypes.c_int32, C)


class Env:
    """Valid objects of every kind, released ones, memory that is no object, scratch space."""

    def __init__(self, p, seed=0):
        self.p, self.keep = p, []
        rng = random.Random(seed)
        self.junk = self.mem(ctypes.c_uint8, *[rng.randrange(256) for _ in range(256)])
        self.err = ctypes.c_int32()
        self.errp = ctypes.addressof(self.err)
        e = self.errp
        devs = (C * 1)()
        assert p.clGetDeviceIDs(p.id, E.CL_DEVICE_TYPE_ALL, 1, devs, None) == 0
        self.plat, self.dev = p.id, devs[0]
        self.ctx = p.clCreateContext(None, 1, devs, None, None, e)
        self.q = p.clCreateCommandQueue(self.ctx, self.dev, 0, e)
        self.buf = p.clCreateBuffer(self.ctx, E.CL_MEM_READ_WRITE, 1024, None, e)
        self.prog = self._program(build=True)
        self.prog_src = self._program(build=False)      # built by clBuildProgram's valid call
        self.prog_unbuilt = self._program(build=False)  # never built
        self.kern = p.clCreateKernel(self.prog, b"k", e)
        p.clSetKernelArg(self.kern, 0, 8, ctypes.byref(C(self.buf)))
        p.clSetKernelArg(self.kern, 1, 4, ctypes.byref(ctypes.c_int32(1)))
        self.uev = p.clCreateUserEvent(self.ctx, e)
        p.clSetUserEventStatus(self.uev, E.CL_COMPLETE)
        self.pending = p.clCreateUserEvent(self.ctx, e)
        self.fmt = self.mem(ctypes.c_uint32, E.CL_RGBA, E.CL_UNORM_INT8)
        self.desc = self.mem(ctypes.c_uint64, E.CL_MEM_OBJECT_IMAGE2D, 4, 4, 1, 1, 0, 0, 0, 0, 0)
        img = p.clCreateImage(self.ctx, E.CL_MEM_READ_WRITE, self.fmt, self.desc, None, e)
        self.img = img or self.buf          # no image support: a buffer is the nearest to valid
        smp = p.clCreateSampler(self.ctx, 0, E.CL_ADDRESS_CLAMP, E.CL_FILTER_NEAREST, e)
        self.smp = smp or self.buf
        other = p.clCreateContext(None, 1, devs, None, None, e)
        self.other_ev = p.clCreateUserEvent(other, e)
        self.other_buf = p.clCreateBuffer(other, E.CL_MEM_READ_WRITE, 1024, None, e)
        self.kern_noargs = p.clCreateKernel(self.prog, b"k", e)
        self.marker_ev = C()
        p.clEnqueueMarkerWithWaitList(self.q, 0, None, ctypes.byref(self.marker_ev))
        self.marker_ev = self.marker_ev.value
        p.clFinish(self.q)
        self._dead(devs)
        self.scratch = [self.mem(ctypes.c_uint64, *([0] * 512)) for _ in range(4)]
        self.host = self.mem(ctypes.c_uint8, *([0] * 4096))
        self.cb = CALLBACK(lambda *a: None)
        self.keep.append(self.cb)
        self.cb_ptr = ctypes.cast(self.cb, C).value

    def _program(self, build):
        p, e = self.p, self.errp
        src = self.mem(C, ctypes.cast(ctypes.c_char_p(SOURCE), C).value)
        self.keep.append(SOURCE)
        prog = p.clCreateProgramWithSource(self.ctx, 1, src, None, e)
        if build:
            p.clBuildProgram(prog, 0, None, None, None, None)
        return prog

    def _dead(self, devs):
        p, e = self.p, self.errp
        ctx = p.clCreateContext(None, 1, devs, None, None, e)
        q = p.clCreateCommandQueue(ctx, self.dev, 0, e)
        buf = p.clCreateBuffer(ctx, E.CL_MEM_READ_WRITE, 64, None, e)
        src = self.mem(C, ctypes.cast(ctypes.c_char_p(SOURCE), C).value)
        prog = p.clCreateProgramWithSource(ctx, 1, src, None, e)
        p.clBuildProgram(prog, 0, None, None, None, None)
        kern = p.clCreateKernel(prog, b"k", e)
        ev = p.clCreateUserEvent(ctx, e)
        p.clSetUserEventStatus(ev, E.CL_COMPLETE)
        for f, h in (("Event", ev), ("Kernel", kern), ("Program", prog), ("MemObject", buf),
                     ("CommandQueue", q), ("Context", ctx)):
            getattr(p, "clRelease" + f)(h)
        self.dead = {"context": ctx, "queue": q, "mem": buf, "program": prog, "kernel": kern, "event": ev,
                     "sampler": buf}

    def mem(self, ctype, *values):
        m = (ctype * max(len(values), 1))(*values)
        self.keep.append(m)
        return ctypes.addressof(m)

    def handle(self, kind):
        return {"platform": self.plat, "device": self.dev, "context": self.ctx, "queue": self.q, "mem": self.buf,
                "image": self.img, "program": self.prog, "kernel": self.kern, "event": self.uev,
                "sampler": self.smp}[kind]

    def wrong(self, kind):
        return self.q if kind in ("context", "platform", "device") else self.ctx


# ---- the cases -----------------------------------------------------------------------------------

HANDLE_KINDS = {
    "platform": "platform", "device": "device", "in_device": "device", "context": "context",
    "command_queue": "queue", "memobj": "mem", "buffer": "mem", "src_buffer": "mem", "dst_buffer": "mem",
    "image": "image", "src_image": "image", "dst_image": "image", "pipe": "image", "program": "program",
    "kernel": "kernel", "source_kernel": "kernel", "in_kernel": "kernel", "event": "event", "sampler": "sampler",
}
KIND_CODE = {"platform": E.CL_INVALID_PLATFORM, "device": E.CL_INVALID_DEVICE, "context": E.CL_INVALID_CONTEXT,
             "queue": E.CL_INVALID_COMMAND_QUEUE, "mem": E.CL_INVALID_MEM_OBJECT, "image": E.CL_INVALID_MEM_OBJECT,
             "program": E.CL_INVALID_PROGRAM, "kernel": E.CL_INVALID_KERNEL, "event": E.CL_INVALID_EVENT,
             "sampler": E.CL_INVALID_SAMPLER}
# NULL is valid there: the implementation's default platform, the kernel's only device, no default queue.
NULL_ALLOWED = {("clGetPlatformInfo", "platform"), ("clGetDeviceIDs", "platform"),
                ("clUnloadPlatformCompiler", "platform"), ("clGetKernelWorkGroupInfo", "device"),
                ("clGetKernelSubGroupInfo", "device"), ("clGetKernelSubGroupInfoKHR", "in_device"),
                ("clSetDefaultDeviceCommandQueue", "command_queue"), ("clGetExtensionFunctionAddressForPlatform",
                                                                        "platform")}
# Entry points with no error channel, or whose valid call would change the shared objects.
NO_CODE = {"clSVMAlloc", "clSVMFree", "clGetExtensionFunctionAddress", "clGetExtensionFunctionAddressForPlatform",
           "clUnloadCompiler"}
SKIP_BASELINE_PREFIX = ("clRelease", "clRetain")
SKIP_BASELINE = {"clSetUserEventStatus", "clSetCommandQueueProperty"}

PARAM_NAMES = {
    "clGetPlatformInfo": E.CL_PLATFORM_NAME, "clGetDeviceInfo": E.CL_DEVICE_NAME,
    "clGetContextInfo": E.CL_CONTEXT_REFERENCE_COUNT, "clGetCommandQueueInfo": E.CL_QUEUE_CONTEXT,
    "clGetMemObjectInfo": E.CL_MEM_SIZE, "clGetImageInfo": E.CL_IMAGE_WIDTH, "clGetSamplerInfo": E.CL_SAMPLER_CONTEXT,
    "clGetProgramInfo": E.CL_PROGRAM_NUM_DEVICES, "clGetProgramBuildInfo": E.CL_PROGRAM_BUILD_STATUS,
    "clGetKernelInfo": E.CL_KERNEL_NUM_ARGS, "clGetKernelArgInfo": E.CL_KERNEL_ARG_ADDRESS_QUALIFIER,
    "clGetKernelWorkGroupInfo": E.CL_KERNEL_WORK_GROUP_SIZE, "clGetEventInfo": E.CL_EVENT_COMMAND_EXECUTION_STATUS,
    "clGetEventProfilingInfo": E.CL_PROFILING_COMMAND_QUEUED, "clGetPipeInfo": E.CL_PIPE_PACKET_SIZE,
    "clGetGLTextureInfo": 0x2004, "clGetGLContextInfoKHR": E.CL_DEVICES_FOR_GL_CONTEXT_KHR,
    "clGetKernelSubGroupInfo": E.CL_KERNEL_MAX_NUM_SUB_GROUPS,
    "clGetKernelSubGroupInfoKHR": E.CL_KERNEL_MAX_NUM_SUB_GROUPS, "clSetKernelExecInfo": E.CL_KERNEL_EXEC_INFO_SVM_PTRS,
}
CREATE_BUFFER = {"clCreateBuffer", "clCreateBufferWithProperties"}


def default_value(v, entry, name, kind):
    """The valid (or nearest to valid) value of a parameter, by its name."""
    if name in HANDLE_KINDS and not (name == "event" and entry.startswith("clEnqueue")):
        if entry == "clSetUserEventStatus":
            return v.pending
        if entry in ("clBuildProgram", "clCompileProgram") and name == "program":
            return v.prog_src
        return v.handle(HANDLE_KINDS[name])
    s = v.scratch
    table = {
        "errcode_ret": v.errp, "param_name": PARAM_NAMES.get(entry, 0), "param_value_size": 256,
        "param_value": s[0], "param_value_size_ret": s[1], "num_entries": 1, "platforms": s[0],
        "num_platforms": s[1], "devices": v.mem(C, v.dev) if entry == "clCreateContext" else s[0],
        "num_devices": 1 if kind == "u32" else s[1], "device_type": E.CL_DEVICE_TYPE_ALL,
        "flags": E.CL_MEM_READ_WRITE if "Create" in entry or entry == "clGetSupportedImageFormats" else 0,
        "map_flags": E.CL_MAP_READ, "size": 64, "cb": 64, "offset": 0, "src_offset": 0,
        "dst_offset": 128, "ptr": v.host, "blocking_read": 1, "blocking_write": 1, "blocking_map": 1,
        "blocking_copy": 1, "origin": v.mem(ctypes.c_size_t, 0, 0, 0), "region": v.mem(ctypes.c_size_t, 16, 2, 1),
        "src_origin": v.mem(ctypes.c_size_t, 0, 0, 0), "dst_origin": v.mem(ctypes.c_size_t, 0, 4, 0),
        "buffer_origin": v.mem(ctypes.c_size_t, 0, 0, 0), "host_origin": v.mem(ctypes.c_size_t, 0, 0, 0),
        "pattern": v.mem(ctypes.c_uint32, 7), "pattern_size": 4, "kernel_name": v.mem(ctypes.c_char, *b"k\0"),
        "function_name": v.mem(ctypes.c_char, *b"clIcdGetPlatformIDsKHR\0"), "count": 1,
        "strings": v.mem(C, ctypes.cast(ctypes.c_char_p(SOURCE), C).value), "arg_index": 1, "arg_indx": 1,
        "arg_size": 4, "arg_value": v.mem(ctypes.c_int32, 3), "work_dim": 1,
        "global_work_size": v.mem(ctypes.c_size_t, 4), "num_events": 1, "event_list": v.mem(C, v.uev),
        "num_kernels": 1, "kernels": s[0], "num_kernels_ret": s[1], "command_exec_callback_type": E.CL_COMPLETE,
        "buffer_create_type": E.CL_BUFFER_CREATE_TYPE_REGION, "buffer_create_info": v.mem(ctypes.c_size_t, 0, 128),
        "execution_status": E.CL_COMPLETE, "pipe_packet_size": 4, "pipe_max_packets": 4,
        "il": v.mem(ctypes.c_uint32, 0x07230203), "length": 4, "image_format": v.fmt, "image_desc": v.desc,
        "image_width": 4, "image_height": 4, "image_depth": 4, "image_type": E.CL_MEM_OBJECT_IMAGE2D,
        "addressing_mode": E.CL_ADDRESS_CLAMP, "filter_mode": E.CL_FILTER_NEAREST, "spec_size": 4,
        "spec_value": s[2], "device_timestamp": s[2], "host_timestamp": s[3], "target": 0x0DE1, "texture": 1,
        "bufobj": 1, "renderbuffer": 1, "gl_object_type": s[2], "gl_object_name": s[3],
        "num_svm_pointers": 1, "svm_pointers": v.mem(C, 0), "partition_properties":
        v.mem(ctypes.c_size_t, E.CL_DEVICE_PARTITION_EQUALLY, 1, 0), "out_devices": s[2], "enable": 1,
        "old_properties": s[3], "device_list": v.mem(C, v.dev), "num_mem_objects": 1, "num_objects": 1,
        "mem_objects": v.mem(C, v.buf), "binaries": v.mem(C, v.junk), "lengths": v.mem(ctypes.c_size_t, 64)
        if entry == "clCreateProgramWithBinary" else 0, "binary_status": s[2], "kernel_names": v.mem(ctypes.c_char, *b"k\0"),
        "num_input_programs": 1, "input_programs": v.mem(C, v.prog), "image_formats": s[0],
        "num_image_formats": s[1],
    }
    if entry in ("clEnqueueReadImage", "clEnqueueWriteImage", "clEnqueueFillImage", "clEnqueueMapImage",
                 "clEnqueueCopyImage", "clEnqueueCopyImageToBuffer", "clEnqueueCopyBufferToImage"):
        table["region"] = v.mem(ctypes.c_size_t, 1, 1, 1)
        table["dst_origin"] = table["src_origin"]
        table["fill_color"] = s[2]
    if entry in ("clSetEventCallback", "clSetMemObjectDestructorCallback", "clSetContextDestructorCallback",
                 "clSetProgramReleaseCallback"):
        table["pfn_notify"] = v.cb_ptr
    if entry == "clEnqueueMarker":
        table["event"] = s[3]                   # required there (OpenCL 1.1)
    if entry == "clEnqueueNativeKernel":
        table["user_func"] = v.cb_ptr
    if entry in ("clCreateProgramWithBinary", "clCreateProgramWithBuiltInKernels", "clLinkProgram"):
        table["num_devices"] = 1
    return table.get(name, 0)


def _arg_index(args, name):
    return next((i for i, (n, _) in enumerate(args) if n == name), None)


def cases():
    """Every case: (entry, label, substitutions [(position, value symbol)], expected codes or None)."""
    out = []
    for name, (_, (_, ret, args)) in SLOTS.items():
        out.append((name, "valid", [], None))
        if name in NO_CODE:
            continue
        names = [n for n, _ in args]
        for i, (pname, kind) in enumerate(args):
            if pname in HANDLE_KINDS and not (pname == "event" and name.startswith("clEnqueue")):
                hk = HANDLE_KINDS[pname]
                code = {KIND_CODE[hk]}
                bad = ["foreign", "wrong kind"] + (["released"] if hk in Env_dead_kinds() else [])
                if (name, pname) not in NULL_ALLOWED:
                    bad.append("NULL")
                for what in bad:
                    out.append((name, f"{pname}={what}", [(i, ("handle", hk, what))], code))
        out.extend(_list_cases(name, names))
        out.extend(_value_cases(name, args))
    return out


def Env_dead_kinds():
    return {"context", "queue", "mem", "image", "program", "kernel", "event", "sampler"}


LISTS = {  # count parameter, list parameter, code for a bad entry
    "event_wait_list": ("num_events_in_wait_list", E.CL_INVALID_EVENT_WAIT_LIST),
    "event_list": ("num_events", E.CL_INVALID_EVENT),
    "device_list": ("num_devices", E.CL_INVALID_DEVICE),
    "devices": ("num_devices", E.CL_INVALID_DEVICE),
    "mem_objects": (("num_mem_objects", "num_objects"), E.CL_INVALID_MEM_OBJECT),
    "input_programs": ("num_input_programs", E.CL_INVALID_PROGRAM),
}


def _list_cases(name, names):
    out = []
    for lst, (counts, bad_code) in LISTS.items():
        if lst not in names or (lst == "devices" and name != "clCreateContext"):
            continue
        counts = counts if isinstance(counts, tuple) else (counts,)
        cnt = next(c for c in counts if c in names)
        ci, li = names.index(cnt), names.index(lst)
        # "CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and num_events_in_wait_list > 0, or
        # event_wait_list is not NULL and num_events_in_wait_list is 0, or if event objects in
        # event_wait_list are not valid events"; the other lists: CL_INVALID_VALUE for the counts.
        inconsistent = bad_code if lst == "event_wait_list" else E.CL_INVALID_VALUE
        if not (lst == "device_list" and name in ("clBuildProgram", "clCompileProgram", "clLinkProgram")):
            out.append((name, f"{lst}=NULL,{cnt}=1", [(ci, ("int", 1)), (li, ("int", 0))], {inconsistent}))
        out.append((name, f"{lst}=list,{cnt}=0", [(ci, ("int", 0)), (li, ("list", "good"))], {inconsistent}))
        for what in ("foreign", "released", "NULL", "wrong kind"):
            if what == "released" and lst in ("device_list", "devices"):
                continue
            out.append((name, f"{lst}=[{what}]", [(ci, ("int", 1)), (li, ("list", what, lst))], {bad_code}))
        if lst == "event_wait_list":
            out.append((name, "event_wait_list=[other context]", [(ci, ("int", 1)), (li, ("list", "other"))],
                        {E.CL_INVALID_CONTEXT}))
    return out


def _value_cases(name, args):
    """Sizes, flags, enums and pointers out of range: (entry, label, substitutions, codes)."""
    out, names = [], [n for n, _ in args]
    V = E.CL_INVALID_VALUE

    def add(pname, label, value, codes):
        if pname in names:
            out.append((name, f"{pname}={label}", [(names.index(pname), value)], set(codes)))
    add("param_name", "out of range", ("int", BAD_ENUM), {V} | ({E.CL_PROFILING_INFO_NOT_AVAILABLE}
                                                            if name == "clGetEventProfilingInfo" else set()))
    if "param_value" in names and name not in ("clSetKernelExecInfo",):
        add("param_value_size", "1", ("int", 1), {V})
    if name.startswith("clCreate") or name in ("clGetSupportedImageFormats", "clEnqueueMigrateMemObjects",
                                               "clEnqueueSVMMigrateMem", "clEnqueueSVMMap"):
        add("flags", "1<<40", ("int", 1 << 40), {V})
    add("map_flags", "1<<40", ("int", 1 << 40), {V})
    add("device_type", "1<<40", ("int", 1 << 40), {E.CL_INVALID_DEVICE_TYPE})
    if name in ("clCreateCommandQueue", "clSetCommandQueueProperty"):
        add("properties", "1<<40", ("int", 1 << 40), {V})
    if name in CREATE_BUFFER:
        for label, size in (("0", 0), ("huge", HUGE)):
            add("size", label, ("int", size), {E.CL_INVALID_BUFFER_SIZE})
        add("host_ptr", "without USE/COPY", ("scratch",), {E.CL_INVALID_HOST_PTR})
        add("flags", "READ_ONLY|WRITE_ONLY", ("int", E.CL_MEM_READ_ONLY | E.CL_MEM_WRITE_ONLY), {V})
        add("flags", "USE_HOST_PTR, no ptr", ("int", E.CL_MEM_USE_HOST_PTR), {E.CL_INVALID_HOST_PTR})
    if name.startswith("clEnqueue") and ("Buffer" in name and "Image" not in name and "Rect" not in name):
        for sz in ("cb",):
            add(sz, "0", ("int", 0), {V})
            add(sz, "huge", ("int", HUGE), {V})
        for off in ("offset", "src_offset", "dst_offset"):
            add(off, "huge", ("int", HUGE), {V})
        add("ptr", "NULL", ("int", 0), {V})
    if name == "clEnqueueFillBuffer":
        add("offset", "misaligned", ("int", 2), {V})
        add("cb", "misaligned", ("int", 6), {V})
        add("pattern_size", "3", ("int", 3), {V})
        add("pattern", "NULL", ("int", 0), {V})
    if name == "clEnqueueCopyBuffer":
        add("dst_offset", "overlap", ("int", 32), {E.CL_MEM_COPY_OVERLAP})
    if name in ("clSetKernelArg", "clSetKernelArgSVMPointer"):
        add("arg_index", "99", ("int", 99), {E.CL_INVALID_ARG_INDEX})
    if name == "clSetKernelArg":
        add("arg_size", "3", ("int", 3), {E.CL_INVALID_ARG_SIZE})
        add("arg_value", "NULL", ("int", 0), {E.CL_INVALID_ARG_VALUE})
    if name == "clGetKernelArgInfo":
        add("arg_indx", "99", ("int", 99), {E.CL_INVALID_ARG_INDEX})
    if name == "clEnqueueNDRangeKernel":
        add("work_dim", "0", ("int", 0), {E.CL_INVALID_WORK_DIMENSION})
        add("work_dim", "4", ("int", 4), {E.CL_INVALID_WORK_DIMENSION})
        # NULL: a zero-sized launch from 2.1 on (CL_SUCCESS); the error it was is deprecated
        add("global_work_size", "NULL", ("int", 0), {E.CL_SUCCESS, E.CL_INVALID_GLOBAL_WORK_SIZE})
        add("local_work_size", "3 of 4", ("sizes", 3), {E.CL_INVALID_WORK_GROUP_SIZE})
    if name == "clCreateSubBuffer":
        add("buffer_create_type", "out of range", ("int", BAD_ENUM), {V})
        add("buffer_create_info", "NULL", ("int", 0), {V})
        add("buffer_create_info", "misaligned", ("sizes", 4, 8), {E.CL_MISALIGNED_SUB_BUFFER_OFFSET})
        add("buffer_create_info", "size 0", ("sizes", 0, 0), {E.CL_INVALID_BUFFER_SIZE})
        add("buffer_create_info", "past the end", ("sizes", 512, 1024), {V})
    if name == "clCreateProgramWithSource":
        add("count", "0", ("int", 0), {V})
        add("strings", "NULL", ("int", 0), {V})
    if name == "clCreateKernel":
        add("kernel_name", "NULL", ("int", 0), {V})
        add("kernel_name", "unknown", ("cstr", b"nope"), {E.CL_INVALID_KERNEL_NAME})
    if name == "clBuildProgram":
        add("options", "bogus", ("cstr", b"-fno-such-option"), {E.CL_INVALID_BUILD_OPTIONS})
        add("user_data", "without pfn_notify", ("scratch",), {V})
    if name in ("clSetEventCallback", "clSetMemObjectDestructorCallback", "clSetContextDestructorCallback",
                "clSetProgramReleaseCallback"):
        add("pfn_notify", "NULL", ("int", 0), {V})
    if name == "clSetEventCallback":
        add("command_exec_callback_type", "out of range", ("int", BAD_ENUM), {V})
    if name == "clSetUserEventStatus":
        add("execution_status", "5", ("int", 5), {V})
    if name == "clCreateContext":
        add("user_data", "without pfn_notify", ("scratch",), {V})
        add("properties", "unknown", ("props", BAD_ENUM, 1), {E.CL_INVALID_PROPERTY})
    if name in ("clGetPlatformIDs", "clGetDeviceIDs"):
        out_name = "platforms" if name == "clGetPlatformIDs" else "devices"
        cnt_name = "num_platforms" if name == "clGetPlatformIDs" else "num_devices"
        add("num_entries", "0 with a list", ("int", 0), {V})
        out.append((name, "both outputs NULL", [(names.index(out_name), ("int", 0)), (names.index(cnt_name), ("int", 0))], {V}))
    if name == "clEnqueueUnmapMemObject":
        add("mapped_ptr", "never mapped", ("scratch",), {V})
        add("mapped_ptr", "NULL", ("int", 0), {V})
    out.extend(_more_cases(name, names))
    if name == "clWaitForEvents" or name == "clEnqueueWaitForEvents":
        pass                                    # lists: _list_cases
    return out


def _more_cases(name, names):
    """Ranges past the end, objects of another context, state errors: (entry, label, subs, codes)."""
    V, out = E.CL_INVALID_VALUE, []

    def add(label, subs, codes):
        if all(n in names for n, _ in subs):
            out.append((name, label, [(names.index(n), v) for n, v in subs], set(codes)))
    if name in ("clEnqueueReadBuffer", "clEnqueueWriteBuffer", "clEnqueueMapBuffer", "clEnqueueFillBuffer"):
        add("offset+cb past the end", [("offset", ("int", 1000)), ("cb", ("int", 64))], {V})
        add("buffer of another context", [("buffer", ("env", "other_buf"))], {E.CL_INVALID_CONTEXT})
    if name == "clEnqueueCopyBuffer":
        add("dst of another context", [("dst_buffer", ("env", "other_buf"))], {E.CL_INVALID_CONTEXT})
        add("src past the end", [("src_offset", ("int", 1000))], {V})
    if name == "clEnqueueMapBuffer":
        add("map_flags=READ|WRITE_INVALIDATE", [("map_flags", ("int", E.CL_MAP_READ | E.CL_MAP_WRITE_INVALIDATE_REGION))],
            {V})
    if name == "clEnqueueFillBuffer":
        add("pattern_size=0", [("pattern_size", ("int", 0))], {V})
        add("pattern_size=256", [("pattern_size", ("int", 256))], {V})
    if "Rect" in name:
        add("region 0", [("region", ("sizes", 0, 2, 1))], {V})
        add("region past the end", [("region", ("sizes", 16, 200, 1))], {V})
        for pitch in ("buffer_row_pitch", "host_row_pitch", "src_row_pitch", "dst_row_pitch"):
            add(f"{pitch} < region", [(pitch, ("int", 8))], {V})
        add("ptr NULL", [("ptr", ("int", 0))], {V})
        if name == "clEnqueueCopyBufferRect":
            add("same region of one buffer", [("dst_origin", ("sizes", 0, 0, 0))], {E.CL_MEM_COPY_OVERLAP})
    if name == "clEnqueueNDRangeKernel":
        add("offset overflows", [("global_work_offset", ("sizes", (1 << 64) - 2))], {E.CL_INVALID_GLOBAL_OFFSET})
        add("local size 0", [("local_work_size", ("sizes", 0))], {E.CL_INVALID_WORK_GROUP_SIZE})
        add("arguments not set", [("kernel", ("env", "kern_noargs"))], {E.CL_INVALID_KERNEL_ARGS})
    if name == "clEnqueueTask":
        add("arguments not set", [("kernel", ("env", "kern_noargs"))], {E.CL_INVALID_KERNEL_ARGS})
    if name == "clCreateKernel":
        add("program not built", [("program", ("env", "prog_unbuilt"))], {E.CL_INVALID_PROGRAM_EXECUTABLE})
    if name == "clCreateKernelsInProgram":
        add("program not built", [("program", ("env", "prog_unbuilt"))], {E.CL_INVALID_PROGRAM_EXECUTABLE})
        add("num_kernels < kernels", [("num_kernels", ("int", 0))], {V})
    if name == "clSetKernelArg":
        add("buffer arg = foreign", [("arg_index", ("int", 0)), ("arg_size", ("int", 8)), ("arg_value", ("ptrto", "junk"))],
            {E.CL_INVALID_MEM_OBJECT})
        add("buffer arg = context", [("arg_index", ("int", 0)), ("arg_size", ("int", 8)), ("arg_value", ("ptrto", "ctx"))],
            {E.CL_INVALID_MEM_OBJECT})
        add("buffer arg size 4", [("arg_index", ("int", 0)), ("arg_size", ("int", 4)), ("arg_value", ("ptrto", "buf"))],
            {E.CL_INVALID_ARG_SIZE})
    if name == "clWaitForEvents":
        add("events of two contexts", [("num_events", ("int", 2)), ("event_list", ("two_contexts",))],
            {E.CL_INVALID_CONTEXT})
    if name == "clSetUserEventStatus":
        add("not a user event", [("event", ("env", "marker_ev"))], {E.CL_INVALID_EVENT})
    if name in CREATE_BUFFER:
        add("flags=HOST_READ_ONLY|HOST_NO_ACCESS", [("flags", ("int", E.CL_MEM_HOST_READ_ONLY | E.CL_MEM_HOST_NO_ACCESS))],
            {V})
        add("flags=USE_HOST_PTR|ALLOC_HOST_PTR", [("flags", ("int", E.CL_MEM_USE_HOST_PTR | E.CL_MEM_ALLOC_HOST_PTR)),
                                                  ("host_ptr", ("scratch",))], {V})
    if name == "clCreateContext":
        add("CL_CONTEXT_PLATFORM foreign", [("properties", ("platform_prop",))], {E.CL_INVALID_PLATFORM})
        add("num_devices=0", [("num_devices", ("int", 0))], {V})
    if name == "clCreateCommandQueueWithProperties":
        add("unknown property", [("properties", ("props", BAD_ENUM, 1))], {V})
        add("CL_QUEUE_PROPERTIES out of range", [("properties", ("props", E.CL_QUEUE_PROPERTIES, 1 << 40))], {V})
    if name in ("clGetDeviceInfo", "clGetPlatformInfo", "clGetContextInfo", "clGetMemObjectInfo", "clGetKernelInfo",
                "clGetEventInfo", "clGetProgramInfo", "clGetCommandQueueInfo"):
        add("param_value_size=0", [("param_value_size", ("int", 0))], {V})
    return out


# ---- the child: run cases, one line each ---------------------------------------------------------

def _resolve(v, value, entry):
    tag = value[0]
    if tag == "int":
        return value[1]
    if tag == "scratch":
        return v.scratch[3]
    if tag == "cstr":
        return v.mem(ctypes.c_char, *(value[1] + b"\0"))
    if tag == "sizes":
        return v.mem(ctypes.c_size_t, *value[1:])
    if tag == "props":
        return v.mem(ctypes.c_size_t, *value[1:], 0)
    if tag == "env":                          # another object of the environment
        return getattr(v, value[1])
    if tag == "ptrto":                        # a pointer to a handle-sized cell holding it
        return v.mem(C, getattr(v, value[1]))
    if tag == "platform_prop":
        return v.mem(ctypes.c_size_t, E.CL_CONTEXT_PLATFORM, v.junk, 0)
    if tag == "two_contexts":
        return v.mem(C, v.uev, v.other_ev)
    if tag == "handle":
        _, kind, what = value
        return {"foreign": lambda: v.junk, "wrong kind": lambda: v.wrong(kind), "NULL": lambda: 0,
                "released": lambda: v.dead[kind if kind != "image" else "mem"]}[what]()
    if tag == "list":
        what = value[1]
        if what == "good":
            h = v.uev if entry != "clCreateContext" and "device" not in entry else v.dev
            return v.mem(C, h)
        if what == "other":
            return v.mem(C, v.other_ev)
        lst = value[2]
        kind = {"event_wait_list": "event", "event_list": "event", "mem_objects": "mem",
                "input_programs": "program"}.get(lst, "device")
        h = {"foreign": v.junk, "NULL": 0, "wrong kind": v.wrong(kind) if kind != "device" else v.ctx,
             "released": v.dead.get(kind, 0)}[what]
        return v.mem(C, h)
    raise ValueError(value)


def run_case(v, case):
    """Call one case; the code it gave (through errcode_ret for creators), or None."""
    entry, label, subs, _ = case
    _, (_, ret, args) = SLOTS[entry]
    f = v.p.fn(entry)
    if f is None:
        return "absent"
    if label == "valid" and (entry.startswith(SKIP_BASELINE_PREFIX) or entry in SKIP_BASELINE):
        return "skipped"
    vals = [default_value(v, entry, n, k) for n, k in args]
    for pos, value in subs:
        vals[pos] = _resolve(v, value, entry)
    v.err.value = 12345
    result = f(*vals)
    if entry in NO_CODE:
        return 0
    if ret == "i32":
        return result
    return v.err.value if "errcode_ret" in [n for n, _ in args] else 0


def child(platform, start, seed, crash_at=-1):
    p = Platform(platform)
    v = Env(p, seed)
    all_cases = cases()
    out = sys.stdout
    for i in range(start, len(all_cases)):
        out.write(f"S {i}\n")
        out.flush()
        if i == crash_at:                      # the harness's own test: a call that kills the process
            os.abort()
        code = run_case(v, all_cases[i])
        out.write(f"R {i} {code}\n")
        out.flush()


def child_lines(proc, timeout):
    """The lines a child prints (stdout unbuffered), as it prints them; a last None if it
    printed nothing for `timeout` seconds (it is killed then)."""
    last = time.monotonic()
    while True:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            line = proc.stdout.readline().decode(errors="replace")
            if not line:
                return
            last = time.monotonic()
            yield line
        elif time.monotonic() - last > timeout:
            proc.kill()
            yield None
            return


def sweep(platform="PyPlat", seed=0, timeout=20.0, crash_at=-1):
    """Run every case in children; returns totals and the wrong codes, crashes and hangs."""
    all_cases = cases()
    codes, crashes, hangs = {}, [], []
    start, children, setup_failures = 0, 0, 0
    while start < len(all_cases):
        children += 1
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", platform, str(start), str(seed), str(crash_at)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        current, done, hung = None, None, False
        for line in child_lines(proc, timeout):
            if line is None:
                hung = True
                break
            parts = line.split()
            if parts[0] == "S":
                current = int(parts[1])
            elif parts[0] == "R":
                codes[int(parts[1])] = parts[2]
                current, done = None, int(parts[1])
        rc = proc.wait()
        if current is None:
            if done is not None and done + 1 < len(all_cases):
                start = done + 1                 # died between calls (state a bad call left): go on
                continue
            if done is None and rc != 0 and setup_failures < 2:
                setup_failures += 1              # died while setting up: try again, then give up
                continue
            if done is None and rc != 0:
                crashes.append((start, "environment", "set-up", rc))
            break
        (hangs if hung else crashes).append((current, all_cases[current][0], all_cases[current][1], rc))
        start = current + 1
    wrong, baselines, calls = [], {}, 0
    for i, case in enumerate(all_cases):
        got = codes.get(i)
        if got is None or got in ("absent", "skipped"):
            continue
        calls += 1
        got_i = int(got) if got.lstrip("-").isdigit() else got
        if case[1] == "valid":
            baselines[case[0]] = got_i
            continue
        expected = case[3]
        allowed = set(expected)
        base = baselines.get(case[0])
        if isinstance(base, int) and base < 0:
            allowed.add(base)              # no precedence between errors: the valid call's own error
        if got_i not in allowed:
            wrong.append((case[0], case[1], got_i, sorted(allowed)))
    entry_points = len({c[0] for c in all_cases})
    return {"platform": platform, "entry_points": entry_points, "baselines": baselines, "cases": len(all_cases), "calls": calls,
            "crashes": crashes, "hangs": hangs, "wrong_codes": wrong, "children": children}


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--child":
    child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
