"""Resident-memory growth per 1,000 create/release iterations of every OpenCL object kind, and per
1,000 commands that return an event, on PyPlat or any installed platform (issue 13 item 9).

    python tools/leaks.py                                 # PyPlat through the ICD loader, all kinds
    python tools/leaks.py --platform Portable             # PoCL, same harness
    python tools/leaks.py --api capi                      # PyPlat's entries called in-process
    python tools/leaks.py --api pyopencl --platform PyPlat
    python tools/leaks.py --kinds context,launch_event --iterations 5000 --rounds 3
    python tools/leaks.py --trace launch_event            # Python allocations that grow (tracemalloc)

Each kind runs in a child process of its own: the warm-up iterations first (caches, pools and
quarantines fill to their bound), then `rounds` rounds of `iterations` iterations each; after
each round the resident set size (/proc/self/statm) is read. Reported per kind: kB per 1,000
iterations over all rounds, and the smallest round's figure (a leak shows in every round; the
allocator's noise rarely does). Where a kind is not supported (e.g. binaries) it says why.

APIs: `loader` (default) calls libOpenCL.so.1 through ctypes like a C program; PyPlat is made
visible to the loader (pyplat.enable()) when it is asked for. `capi` calls PyPlat's entry
points in-process without a loader (tests/support/capi.py: the same C entries the shim calls).
`pyopencl` uses pyopencl's objects (each dropped at the end of its iteration).
"""
import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import time

SOURCE = b"__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n"
N_ITEMS = 64

# The few OpenCL constants used here (cl.h).
CL_SUCCESS = 0
CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
CL_PLATFORM_NAME = 0x0902
CL_MEM_READ_WRITE = 1
CL_MAP_READ, CL_MAP_WRITE = 1, 2
CL_BUFFER_CREATE_TYPE_REGION = 0x1220
CL_COMPLETE = 0
CL_QUEUE_OUT_OF_ORDER = 1
CL_QUEUE_PROFILING = 2
CL_PROGRAM_BINARY_SIZES, CL_PROGRAM_BINARIES = 0x1165, 0x1166

KINDS = ("context", "queue", "queue_ooo", "queue_profiling", "buffer", "sub_buffer", "user_event",
         "program_source", "program_binary", "program_link", "kernel", "launch_event", "launch_event_info",
         "launch_event_callback", "launch_ooo_event", "marker", "map_unmap", "read_write")
# Kinds whose iterations are slow: fewer of them (the figure is still per 1,000).
SLOW = {"program_source": 5, "program_binary": 5, "program_link": 5}


def rss_kb():
    gc.collect()     # garbage in reference cycles is not a leak: count what stays
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024


# ---------------------------------------------------------------------------------------------
# The C API: through the loader or PyPlat's in-process entries. Every argument is an int.

V, I32, U32, U64, SZ = ctypes.c_void_p, ctypes.c_int32, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t
PROTOTYPES = {
    "clGetPlatformIDs": (I32, U32, V, V),
    "clGetPlatformInfo": (I32, V, U32, SZ, V, V),
    "clGetDeviceIDs": (I32, V, U64, U32, V, V),
    "clCreateContext": (V, V, U32, V, V, V, V),
    "clReleaseContext": (I32, V),
    "clCreateCommandQueue": (V, V, V, U64, V),
    "clReleaseCommandQueue": (I32, V),
    "clCreateBuffer": (V, V, U64, SZ, V, V),
    "clCreateSubBuffer": (V, V, U64, U32, V, V),
    "clReleaseMemObject": (I32, V),
    "clCreateUserEvent": (V, V, V),
    "clSetUserEventStatus": (I32, V, I32),
    "clReleaseEvent": (I32, V),
    "clWaitForEvents": (I32, U32, V),
    "clCreateProgramWithSource": (V, V, U32, V, V, V),
    "clCreateProgramWithBinary": (V, V, U32, V, V, V, V, V),
    "clBuildProgram": (I32, V, U32, V, V, V, V),
    "clGetProgramInfo": (I32, V, U32, SZ, V, V),
    "clReleaseProgram": (I32, V),
    "clCreateKernel": (V, V, V, V),
    "clReleaseKernel": (I32, V),
    "clSetKernelArg": (I32, V, U32, SZ, V),
    "clEnqueueNDRangeKernel": (I32, V, V, U32, V, V, V, U32, V, V),
    "clEnqueueMarkerWithWaitList": (I32, V, U32, V, V),
    "clEnqueueMapBuffer": (V, V, V, U32, U64, SZ, SZ, U32, V, V, V),
    "clEnqueueUnmapMemObject": (I32, V, V, V, U32, V, V),
    "clEnqueueReadBuffer": (I32, V, V, U32, SZ, SZ, V, U32, V, V),
    "clEnqueueWriteBuffer": (I32, V, V, U32, SZ, SZ, V, U32, V, V),
    "clFinish": (I32, V),
    "clGetEventInfo": (I32, V, U32, SZ, V, V),
    "clCompileProgram": (I32, V, U32, V, V, U32, V, V, V, V),
    "clLinkProgram": (V, V, U32, V, V, U32, V, V, V, V),
    "clSetEventCallback": (I32, V, I32, V, V),
}
CL_EVENT_COMMAND_EXECUTION_STATUS = 0x11D3
EVENT_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p)


def loader_api(platform):
    if "pyplat" in platform.lower():
        import pyplat
        pyplat.enable()
    lib = ctypes.CDLL("libOpenCL.so.1")

    class API:
        pass
    api = API()
    for name, (res, *args) in PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, list(args)
        setattr(api, name, fn)
    return api


def capi_api():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "tests"))
    from support.capi import CL
    return CL


def a(obj):
    return ctypes.addressof(obj)


def check(code, what):
    if code != CL_SUCCESS:
        raise RuntimeError(f"{what}: {code}")


class C:
    """Objects for the iterations, made through `api`."""

    def __init__(self, api, platform):
        self.api = api
        n = ctypes.c_uint32()
        check(api.clGetPlatformIDs(0, 0, a(n)), "clGetPlatformIDs")
        ids = (ctypes.c_void_p * n.value)()
        check(api.clGetPlatformIDs(n.value, a(ids), 0), "clGetPlatformIDs")
        for p in ids:
            name = ctypes.create_string_buffer(256)
            api.clGetPlatformInfo(p, CL_PLATFORM_NAME, 256, a(name), 0)
            if platform.lower() in name.value.decode().lower():
                self.platform = p
                break
        else:
            raise SystemExit(f"no platform named like {platform!r}")
        dev = ctypes.c_void_p()
        check(api.clGetDeviceIDs(self.platform, CL_DEVICE_TYPE_ALL, 1, a(dev), 0), "clGetDeviceIDs")
        self.dev_list, self.dev = dev, dev.value
        self.err = ctypes.c_int32()
        self.ctx = self.context()
        self.q = self.queue(0)
        self.q_ooo = self.queue(CL_QUEUE_OUT_OF_ORDER)
        self.status = ctypes.c_int32()
        self.calls = [0]
        self.callback = EVENT_CALLBACK(lambda ev, st, data: self.calls.__setitem__(0, self.calls[0] + 1))
        self.callback_address = ctypes.cast(self.callback, ctypes.c_void_p).value
        self.buf = self.ok(api.clCreateBuffer(self.ctx, CL_MEM_READ_WRITE, 4 * N_ITEMS * 4, 0, a(self.err)))
        self.src = ctypes.c_char_p(SOURCE)
        self.src_len = ctypes.c_size_t(len(SOURCE))
        self.prog = self.program_source()
        self.name = ctypes.create_string_buffer(b"inc")
        self.kernel = self.make_kernel()
        arg = ctypes.c_void_p(self.buf)
        check(api.clSetKernelArg(self.kernel, 0, ctypes.sizeof(arg), a(arg)), "clSetKernelArg")
        self.gws = ctypes.c_size_t(N_ITEMS)
        self.ev = ctypes.c_void_p()
        self.ev2 = ctypes.c_void_p()
        self.host = (ctypes.c_char * 256)()
        self.region = (ctypes.c_size_t * 2)(0, 128)
        size = ctypes.c_size_t()
        check(api.clGetProgramInfo(self.prog, CL_PROGRAM_BINARY_SIZES, ctypes.sizeof(size), a(size), 0),
              "binary size")
        self.binary = (ctypes.c_char * size.value)()
        ptrs = (ctypes.c_void_p * 1)(a(self.binary))
        check(api.clGetProgramInfo(self.prog, CL_PROGRAM_BINARIES, ctypes.sizeof(ptrs), a(ptrs), 0),
              "binaries")
        self.bin_ptrs = ptrs
        self.bin_len = size

    def ok(self, handle):
        if self.err.value != CL_SUCCESS or not handle:
            raise RuntimeError(f"create: {self.err.value}")
        return handle

    def context(self):
        return self.ok(self.api.clCreateContext(0, 1, a(self.dev_list), 0, 0, a(self.err)))

    def queue(self, props):
        return self.ok(self.api.clCreateCommandQueue(self.ctx, self.dev, props, a(self.err)))

    def program_source(self):
        p = self.ok(self.api.clCreateProgramWithSource(self.ctx, 1, a(self.src), a(self.src_len),
                                                       a(self.err)))
        check(self.api.clBuildProgram(p, 1, a(self.dev_list), 0, 0, 0), "clBuildProgram")
        return p

    def make_kernel(self):
        return self.ok(self.api.clCreateKernel(self.prog, a(self.name), a(self.err)))

    # One iteration of each kind.
    def it_context(self, i):
        check(self.api.clReleaseContext(self.context()), "release")

    def it_queue(self, i, props=0):
        check(self.api.clReleaseCommandQueue(self.queue(props)), "release")

    def it_queue_ooo(self, i):
        self.it_queue(i, CL_QUEUE_OUT_OF_ORDER)

    def it_queue_profiling(self, i):
        self.it_queue(i, CL_QUEUE_PROFILING)

    def it_buffer(self, i):
        api = self.api
        check(api.clReleaseMemObject(self.ok(api.clCreateBuffer(self.ctx, CL_MEM_READ_WRITE, 4096, 0,
                                                                  a(self.err)))), "release")

    def it_sub_buffer(self, i):
        api = self.api
        sub = self.ok(api.clCreateSubBuffer(self.buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                            a(self.region), a(self.err)))
        check(api.clReleaseMemObject(sub), "release")

    def it_user_event(self, i):
        api = self.api
        ev = self.ok(api.clCreateUserEvent(self.ctx, a(self.err)))
        check(api.clSetUserEventStatus(ev, CL_COMPLETE), "clSetUserEventStatus")
        check(api.clReleaseEvent(ev), "release")

    def it_program_source(self, i):
        check(self.api.clReleaseProgram(self.program_source()), "release")

    def it_program_binary(self, i):
        api = self.api
        p = self.ok(api.clCreateProgramWithBinary(self.ctx, 1, a(self.dev_list), a(self.bin_len),
                                                  a(self.bin_ptrs), 0, a(self.err)))
        check(api.clBuildProgram(p, 1, a(self.dev_list), 0, 0, 0), "clBuildProgram")
        check(api.clReleaseProgram(p), "release")

    def it_program_link(self, i):
        """clCompileProgram of the source, clLinkProgram of the result."""
        api = self.api
        p = self.ok(api.clCreateProgramWithSource(self.ctx, 1, a(self.src), a(self.src_len), a(self.err)))
        check(api.clCompileProgram(p, 1, a(self.dev_list), 0, 0, 0, 0, 0, 0), "clCompileProgram")
        inputs = ctypes.c_void_p(p)
        linked = self.ok(api.clLinkProgram(self.ctx, 1, a(self.dev_list), 0, 1, a(inputs), 0, 0, a(self.err)))
        check(api.clReleaseProgram(linked), "release")
        check(api.clReleaseProgram(p), "release")

    def it_kernel(self, i):
        check(self.api.clReleaseKernel(self.make_kernel()), "release")

    def finish_sometimes(self, i):
        if i % 64 == 63:
            check(self.api.clFinish(self.q), "clFinish")

    def it_launch_event(self, i):
        api = self.api
        check(api.clEnqueueNDRangeKernel(self.q, self.kernel, 1, 0, a(self.gws), 0, 0, 0, a(self.ev)),
              "clEnqueueNDRangeKernel")
        check(api.clReleaseEvent(self.ev.value), "release")
        self.finish_sometimes(i)

    def it_launch_event_info(self, i):
        """The event is also queried (PyPlat: its core object made from the native event)."""
        api = self.api
        check(api.clEnqueueNDRangeKernel(self.q, self.kernel, 1, 0, a(self.gws), 0, 0, 0, a(self.ev)),
              "clEnqueueNDRangeKernel")
        check(api.clGetEventInfo(self.ev.value, CL_EVENT_COMMAND_EXECUTION_STATUS, 4, a(self.status), 0), "info")
        check(api.clReleaseEvent(self.ev.value), "release")
        self.finish_sometimes(i)

    def it_launch_event_callback(self, i):
        api = self.api
        check(api.clEnqueueNDRangeKernel(self.q, self.kernel, 1, 0, a(self.gws), 0, 0, 0, a(self.ev)),
              "clEnqueueNDRangeKernel")
        check(api.clSetEventCallback(self.ev.value, CL_COMPLETE, self.callback_address, 0), "callback")
        check(api.clReleaseEvent(self.ev.value), "release")
        self.finish_sometimes(i)

    def it_launch_ooo_event(self, i):
        api = self.api
        check(api.clEnqueueNDRangeKernel(self.q_ooo, self.kernel, 1, 0, a(self.gws), 0, 0, 0, a(self.ev)),
              "clEnqueueNDRangeKernel")
        check(api.clReleaseEvent(self.ev.value), "release")
        if i % 64 == 63:
            check(self.api.clFinish(self.q_ooo), "clFinish")

    def it_marker(self, i):
        api = self.api
        check(api.clEnqueueMarkerWithWaitList(self.q, 0, 0, a(self.ev)), "marker")
        check(api.clReleaseEvent(self.ev.value), "release")
        self.finish_sometimes(i)

    def it_map_unmap(self, i):
        api = self.api
        p = self.ok(api.clEnqueueMapBuffer(self.q, self.buf, 1, CL_MAP_READ | CL_MAP_WRITE, 0, 256, 0, 0,
                                           0, a(self.err)))
        check(api.clEnqueueUnmapMemObject(self.q, self.buf, p, 0, 0, a(self.ev)), "unmap")
        check(api.clReleaseEvent(self.ev.value), "release")
        self.finish_sometimes(i)

    def it_read_write(self, i):
        api = self.api
        check(api.clEnqueueWriteBuffer(self.q, self.buf, 0, 0, 256, a(self.host), 0, 0, a(self.ev)), "write")
        check(api.clEnqueueReadBuffer(self.q, self.buf, 0, 256, 256, a(self.host), 1, a(self.ev), a(self.ev2)), "read")
        check(api.clReleaseEvent(self.ev.value), "release")
        check(api.clReleaseEvent(self.ev2.value), "release")
        self.finish_sometimes(i)

    def settle(self):
        check(self.api.clFinish(self.q), "clFinish")
        check(self.api.clFinish(self.q_ooo), "clFinish")


# ---------------------------------------------------------------------------------------------
# pyopencl

class P:
    def __init__(self, platform):
        if "pyplat" in platform.lower():
            import pyplat
            pyplat.enable()
        import numpy as np
        import pyopencl as cl
        self.cl, self.np = cl, np
        plats = [p for p in cl.get_platforms() if platform.lower() in p.name.lower()]
        if not plats:
            raise SystemExit(f"no platform named like {platform!r}")
        self.dev = plats[0].get_devices()[0]
        self.ctx = cl.Context([self.dev])
        self.q = cl.CommandQueue(self.ctx)
        self.q_ooo = cl.CommandQueue(
            self.ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
        self.calls = []
        self.buf = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, 4 * N_ITEMS * 4)
        self.prog = cl.Program(self.ctx, SOURCE.decode()).build()
        self.kernel = cl.Kernel(self.prog, "inc")
        self.kernel.set_arg(0, self.buf)
        self.binary = self.prog.get_info(cl.program_info.BINARIES)[0]
        self.host = np.zeros(64, np.int32)

    def it_context(self, i):
        self.cl.Context([self.dev])

    def it_queue(self, i, props=0):
        self.cl.CommandQueue(self.ctx, properties=props)

    def it_queue_ooo(self, i):
        self.it_queue(i, self.cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)

    def it_queue_profiling(self, i):
        self.it_queue(i, self.cl.command_queue_properties.PROFILING_ENABLE)

    def it_buffer(self, i):
        self.cl.Buffer(self.ctx, self.cl.mem_flags.READ_WRITE, 4096)

    def it_sub_buffer(self, i):
        self.buf.get_sub_region(0, 128)

    def it_user_event(self, i):
        self.cl.UserEvent(self.ctx).set_status(CL_COMPLETE)

    def it_program_source(self, i):
        # pyopencl's own caches are bypassed: clCreateProgramWithSource + clBuildProgram each time
        self.cl._cl._Program(self.ctx, SOURCE.decode()).build(b"")

    def it_program_binary(self, i):
        self.cl._cl._Program(self.ctx, [self.dev], [self.binary]).build(b"")

    def it_program_link(self, i):
        cl = self.cl
        p = cl._cl._Program(self.ctx, SOURCE.decode())
        p.compile(b"")
        cl._cl._Program.link(self.ctx, [p], b"")

    def it_kernel(self, i):
        self.cl.Kernel(self.prog, "inc")

    def finish_sometimes(self, i):
        if i % 64 == 63:
            self.q.finish()

    def it_launch_event(self, i):
        self.cl.enqueue_nd_range_kernel(self.q, self.kernel, (N_ITEMS,), None)
        self.finish_sometimes(i)

    def it_launch_event_info(self, i):
        self.cl.enqueue_nd_range_kernel(self.q, self.kernel, (N_ITEMS,), None).command_execution_status
        self.finish_sometimes(i)

    def it_launch_event_callback(self, i):
        self.cl.enqueue_nd_range_kernel(self.q, self.kernel, (N_ITEMS,), None).set_callback(
            CL_COMPLETE, self.calls.append)
        self.finish_sometimes(i)
        if i % 64 == 63:
            self.calls.clear()

    def it_launch_ooo_event(self, i):
        self.cl.enqueue_nd_range_kernel(self.q_ooo, self.kernel, (N_ITEMS,), None)
        if i % 64 == 63:
            self.q_ooo.finish()

    def it_marker(self, i):
        self.cl.enqueue_marker(self.q)
        self.finish_sometimes(i)

    def it_map_unmap(self, i):
        cl = self.cl
        arr, _ = cl.enqueue_map_buffer(self.q, self.buf, cl.map_flags.READ | cl.map_flags.WRITE, 0, (64,),
                                       self.np.int32)
        arr.base.release(self.q)
        self.finish_sometimes(i)

    def it_read_write(self, i):
        self.cl.enqueue_copy(self.q, self.buf, self.host, is_blocking=False)
        self.cl.enqueue_copy(self.q, self.host, self.buf, is_blocking=False)
        self.finish_sometimes(i)

    def settle(self):
        self.q.finish()
        self.q_ooo.finish()


# ---------------------------------------------------------------------------------------------

def measure(args, kind):
    """In this process: warm-up, then the rounds. A dict of figures."""
    objs = P(args.platform) if args.api == "pyopencl" else C(
        loader_api(args.platform) if args.api == "loader" else capi_api(), args.platform)
    step = getattr(objs, "it_" + kind)
    scale = SLOW.get(kind, 1)
    n, warm = args.iterations // scale, args.warmup // scale
    t0 = time.perf_counter()
    for i in range(warm):
        step(i)
    objs.settle()
    if args.trace:
        import tracemalloc
        tracemalloc.start(16)
        snap0 = tracemalloc.take_snapshot()
    rss = [rss_kb()]
    t1 = time.perf_counter()
    for r in range(args.rounds):
        for i in range(n):
            step(i)
        objs.settle()
        rss.append(rss_kb())
    t2 = time.perf_counter()
    per_round = [(rss[r + 1] - rss[r]) * 1000 / n for r in range(args.rounds)]
    out = {"kind": kind, "iterations": n, "rounds": args.rounds,
           "kb_per_1000": (rss[-1] - rss[0]) * 1000 / (n * args.rounds),
           "min_round_kb_per_1000": min(per_round), "rounds_kb_per_1000": per_round,
           "us_per_iteration": (t2 - t1) * 1e6 / (n * args.rounds), "warmup_s": t1 - t0,
           "rss_kb": rss[-1], "rss_kb_after_rounds": rss}
    if args.traced:                 # Python blocks that stay, after gc, per iteration
        import tracemalloc
        tracemalloc.start(1)
        gc.collect()
        blocks0 = sum(s.count for s in tracemalloc.take_snapshot().statistics("filename"))
        for i in range(args.traced):
            step(i)
        objs.settle()
        gc.collect()
        blocks1 = sum(s.count for s in tracemalloc.take_snapshot().statistics("filename"))
        tracemalloc.stop()
        out["traced"] = args.traced
        out["python_blocks_per_1000"] = (blocks1 - blocks0) * 1000 / args.traced
    if args.trace:
        snap1 = tracemalloc.take_snapshot()
        stats = snap1.compare_to(snap0, "traceback")
        out["python_blocks_growth"] = sum(s.count_diff for s in stats)
        out["python_bytes_growth"] = sum(s.size_diff for s in stats)
        out["top"] = ["%+d B %+d blocks: %s" % (s.size_diff, s.count_diff,
                      " <- ".join(f"{'/'.join(f.filename.rsplit('/', 2)[-2:])}:{f.lineno}"
                                 for f in reversed(s.traceback[-6:])))
                      for s in stats[:12] if s.size_diff > 0]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--api", choices=("loader", "capi", "pyopencl"), default="loader")
    ap.add_argument("--platform", default="PyPlat", help="part of the platform's name (default PyPlat)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated, of: " + ", ".join(KINDS))
    ap.add_argument("--iterations", type=int, default=5000, help="per round (fewer for slow kinds)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=2000, help="iterations before measuring")
    ap.add_argument("--trace", action="store_true", help="also count Python allocations (tracemalloc)")
    ap.add_argument("--traced", type=int, default=0,
                    help="then this many iterations counting the Python blocks that stay (tracemalloc)")
    ap.add_argument("--json", action="store_true", help="one JSON line per kind")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args, args.child)), flush=True)
        return 0
    kinds = [k for k in args.kinds.split(",") if k]
    for k in kinds:
        if k not in KINDS:
            ap.error(f"unknown kind {k!r}")
    if not args.json:
        print(f"{args.api} / {args.platform}: kB of resident memory per 1,000 iterations "
              f"({args.rounds} rounds of {args.iterations}, after {args.warmup} warm-up)")
        print(f"{'kind':16} {'all rounds':>10} {'min round':>10} {'us/it':>8}")
    worst = 0.0
    for k in kinds:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", k] + [
            f"--{o}={getattr(args, o)}" for o in ("api", "platform", "iterations", "rounds", "warmup", "traced")]
        if args.trace:
            cmd.append("--trace")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 or not r.stdout.strip():
            line = (r.stderr.strip().splitlines() or ["?"])[-1]
            print(json.dumps({"kind": k, "error": line}) if args.json else f"{k:16} failed: {line}")
            continue
        res = json.loads(r.stdout.strip().splitlines()[-1])
        worst = max(worst, res["kb_per_1000"])
        if args.json:
            print(json.dumps(res), flush=True)
        else:
            print(f"{k:16} {res['kb_per_1000']:10.2f} {res['min_round_kb_per_1000']:10.2f} "
                  f"{res['us_per_iteration']:8.1f}", flush=True)
            for line in res.get("top", []):
                print("    " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
