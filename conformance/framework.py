"""What checks are made of: categories, the per-check recorder `T`, the environment `Env` (the
platform and device under test, with helpers to make and release objects) and the `probe` that
runs a dangerous call in a forked child.

A check is a function ``check(env, t)``. It records what it saw with ``t.code``, ``t.eq``,
``t.true`` (these keep going, so one run reports every broken case) or stops at once with
``t.fail`` / ``t.require``; ``t.skip(reason)`` skips it. Objects it makes are released by the
callbacks it registers with ``t.cleanup``.
"""
import ctypes
import os
import select
import signal
import time
from ctypes import byref, c_size_t, c_void_p

from . import clapi as C


class CheckFailed(AssertionError):
    pass


class Skip(Exception):
    pass


# --- Categories ----------------------------------------------------------------------------------

class Check:
    def __init__(self, category, fn, name, quick):
        self.category, self.fn, self.name, self.quick = category, fn, name, quick
        self.doc = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""

    @property
    def full_name(self):
        return f"{self.category.name}/{self.name}"


class Category:
    """A named list of checks; `requires(env)` returns a reason to skip the whole category or
    None."""

    def __init__(self, name, doc, requires=None):
        self.name, self.doc, self.requires = name, doc, requires
        self.checks = []

    def check(self, fn=None, *, name=None, quick=True):
        def register(f):
            self.checks.append(Check(self, f, name or f.__name__, quick))
            return f
        return register(fn) if fn is not None else register


# --- Recording -----------------------------------------------------------------------------------

def show(v):
    if isinstance(v, float):
        return f"{v!r} ({v.hex()})"
    if isinstance(v, bytes) and len(v) > 48:
        return repr(v[:48]) + f"... ({len(v)} bytes)"
    return repr(v)


class T:
    """The recorder one check writes to."""

    MAX_MESSAGES = 12

    def __init__(self):
        self.failures = []
        self.notes = []
        self._cleanups = []

    # keep going
    def true(self, cond, message):
        if not cond:
            self.failures.append(message)
        return bool(cond)

    def eq(self, got, expected, what):
        return self.true(got == expected, f"{what}: expected {show(expected)}, got {show(got)}")

    def code(self, got, expected, call):
        """An error code: `expected` is one code or a tuple of acceptable ones."""
        allowed = expected if isinstance(expected, tuple) else (expected,)
        want = " or ".join(C.err_name(e) for e in allowed)
        if callable(got):  # run it in a forked child: a crash or hang is reported, not suffered
            out = probe(got)
            if out[0] != "value":
                return self.true(False, f"{call}: expected {want}, got {describe_probe(out)}")
            got = out[1]
        return self.true(got in allowed, f"{call}: expected {want}, got {C.err_name(got)}")

    def note(self, message):
        self.notes.append(message)

    # stop
    def fail(self, message):
        self.failures.append(message)
        raise CheckFailed(message)

    def require(self, cond, message):
        if not cond:
            self.fail(message)

    def ok(self, code, call):
        if code != C.CL_SUCCESS:
            self.fail(f"{call}: expected CL_SUCCESS, got {C.err_name(code)}")

    def skip(self, reason):
        raise Skip(reason)

    # objects
    def cleanup(self, fn, *args):
        self._cleanups.append((fn, args))
        return args[0] if args else None

    def run_cleanups(self):
        while self._cleanups:
            fn, args = self._cleanups.pop()
            try:
                fn(*args)
            except Exception:
                pass


class Result:
    def __init__(self, name, status, message="", seconds=0.0):
        self.name, self.status, self.message, self.seconds = name, status, message, seconds

    def as_dict(self):
        return {"name": self.name, "status": self.status, "message": self.message,
                "seconds": round(self.seconds, 4)}


def run_check(check, env):
    """Run one check; a Result with status 'pass', 'fail' or 'skip'."""
    t = T()
    start = time.monotonic()
    status, message = "pass", ""
    try:
        check.fn(env, t)
    except Skip as e:
        status, message = "skip", str(e)
    except CheckFailed:
        pass
    except C.CLError as e:
        t.failures.append(str(e))
    except Exception as e:  # a bug in the platform's answers or in the check: report, go on
        t.failures.append(f"{type(e).__name__}: {e}")
    finally:
        t.run_cleanups()
    if t.failures and status != "skip":
        status = "fail"
        shown = t.failures[:T.MAX_MESSAGES]
        more = len(t.failures) - len(shown)
        message = "\n".join(shown) + (f"\n... and {more} more" if more > 0 else "")
    elif status == "pass" and t.notes:
        message = "; ".join(t.notes)
    return Result(check.name, status, message, time.monotonic() - start)


# --- Forked probes ---------------------------------------------------------------------------------

def probe(fn, timeout=5.0):
    """Run fn() (returning an int) in a forked child; returns ('value', v), ('crash', signal),
    ('timeout', None) or ('error', message). For calls the spec leaves undefined (released
    handles, handles of the wrong type), which may crash a platform."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            import faulthandler
            faulthandler.disable()  # a crash is an answer here: no traceback dump, no re-raise games
            os.close(r)
            value = fn()
            os.write(w, str(int(value)).encode())
            os._exit(0)
        except BaseException as e:  # noqa: BLE001
            try:
                os.write(w, f"E{type(e).__name__}: {e}".encode())
            finally:
                os._exit(1)
    os.close(w)
    data = b""
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return ("timeout", None)
            ready, _, _ = select.select([r], [], [], left)
            if ready:
                chunk = os.read(r, 4096)
                if not chunk:
                    break
                data += chunk
    finally:
        os.close(r)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return ("crash", os.WTERMSIG(status))
    text = data.decode(errors="replace")
    if text.startswith("E") or not text:
        return ("error", text[1:] or f"exit status {os.WEXITSTATUS(status)}")
    return ("value", int(text))


def describe_probe(outcome):
    kind, v = outcome
    if kind == "value":
        return C.err_name(v)
    if kind == "crash":
        try:
            return f"a crash ({signal.Signals(v).name})"
        except ValueError:
            return f"a crash (signal {v})"
    if kind == "timeout":
        return "a hang"
    return f"an error in the probe ({v})"


# --- Environment ---------------------------------------------------------------------------------

def _version(text):
    import re
    m = re.match(r"OpenCL (\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


class Env:
    """The platform and device under test, shared by every check of a run."""

    def __init__(self, lib, platform, device, quick=False, seed=1234, timeout=60.0):
        self.cl = lib
        self.platform, self.device = platform, device
        self.quick, self.seed, self.timeout = quick, seed, timeout
        self._context = self._queue = None
        self.platform_name = self.platform_info(C.CL_PLATFORM_NAME)
        self.device_name = self.device_info(C.CL_DEVICE_NAME)
        self.version = _version(self.device_info(C.CL_DEVICE_VERSION))
        self.platform_version = _version(self.platform_info(C.CL_PLATFORM_VERSION))
        self.extensions = set(self.device_info(C.CL_DEVICE_EXTENSIONS).split())
        self.is_pyplat = self.platform_name == "PyPlat"

    # info
    def platform_info(self, param, kind="str", platform=None):
        return C.info(self.cl.clGetPlatformInfo, platform or self.platform, param, kind=kind,
                      name=f"clGetPlatformInfo({param:#x})")

    def device_info(self, param, kind="str", device=None):
        return C.info(self.cl.clGetDeviceInfo, device or self.device, param, kind=kind,
                      name=f"clGetDeviceInfo({param:#x})")

    def rng(self, salt=0):
        import numpy as np
        return np.random.default_rng(self.seed + salt)

    def samples(self, quick, full):
        return quick if self.quick else full

    # shared objects
    @property
    def context(self):
        if self._context is None:
            self._context = self.make_context()
        return self._context

    @property
    def queue(self):
        if self._queue is None:
            self._queue = self.make_queue(self.context)
        return self._queue

    def close(self):
        if self._queue:
            self.cl.clReleaseCommandQueue(self._queue)
        if self._context:
            self.cl.clReleaseContext(self._context)
        self._context = self._queue = None

    def make_context(self):
        e = C.cl_int(0)
        devs = C.ptrs([self.device])
        ctx = self.cl.clCreateContext(None, 1, devs, None, None, byref(e))
        C.ok(e.value, "clCreateContext")
        return ctx

    def make_queue(self, ctx, props=0):
        e = C.cl_int(0)
        q = self.cl.clCreateCommandQueue(ctx, self.device, props, byref(e))
        C.ok(e.value, f"clCreateCommandQueue(properties={props:#x})")
        return q

    # per-check objects, released by t's cleanups
    def new_context(self, t):
        return t.cleanup(self.cl.clReleaseContext, self.make_context())

    def new_queue(self, t, ctx=None, props=0):
        e = C.cl_int(0)
        q = self.cl.clCreateCommandQueue(ctx or self.context, self.device, props, byref(e))
        if e.value != C.CL_SUCCESS:
            t.fail(f"clCreateCommandQueue(properties={props:#x}): {C.err_name(e.value)}")
        return t.cleanup(self.cl.clReleaseCommandQueue, q)

    def create(self, fn_name, *args):
        """Call a clCreate* entry point with errcode_ret appended: (handle or None, code)."""
        e = C.cl_int(12345)
        h = getattr(self.cl, fn_name)(*args, byref(e))
        return h, e.value

    def buffer(self, t, size, flags=C.CL_MEM_READ_WRITE, host=None, ctx=None):
        h, code = self.create("clCreateBuffer", ctx or self.context, flags, size, host)
        t.ok(code, f"clCreateBuffer(flags={flags:#x}, size={size})")
        t.require(h, "clCreateBuffer returned NULL with CL_SUCCESS")
        return t.cleanup(self.cl.clReleaseMemObject, h)

    def write(self, t, buf, data, offset=0, q=None, blocking=True):
        data = bytes(data)
        src = ctypes.create_string_buffer(data, len(data))
        t.ok(self.cl.clEnqueueWriteBuffer(q or self.queue, buf, C.CL_TRUE if blocking else 0,
                                          offset, len(data), src, 0, None, None),
             f"clEnqueueWriteBuffer(offset={offset}, size={len(data)})")
        return src

    def read(self, t, buf, size, offset=0, q=None):
        dst = ctypes.create_string_buffer(size)
        t.ok(self.cl.clEnqueueReadBuffer(q or self.queue, buf, C.CL_TRUE, offset, size, dst, 0,
                                         None, None),
             f"clEnqueueReadBuffer(offset={offset}, size={size})")
        return dst.raw

    def wait(self, t, events):
        evs = C.ptrs(events)
        t.ok(self.cl.clWaitForEvents(len(events), evs), "clWaitForEvents")

    def event_info(self, ev, param, kind="int"):
        return C.info(self.cl.clGetEventInfo, ev, param, kind=kind, name=f"clGetEventInfo({param:#x})")

    # programs
    def program(self, t, source, options="", ctx=None, expect_ok=True):
        src = source.encode() if isinstance(source, str) else source
        strings = (ctypes.c_char_p * 1)(src)
        lengths = (c_size_t * 1)(len(src))
        prog, code = self.create("clCreateProgramWithSource", ctx or self.context, 1, strings, lengths)
        t.ok(code, "clCreateProgramWithSource")
        t.cleanup(self.cl.clReleaseProgram, prog)
        code = self.cl.clBuildProgram(prog, 1, C.ptrs([self.device]), options.encode(), None, None)
        if expect_ok and code != C.CL_SUCCESS:
            log = self.build_log(prog)
            t.fail(f"clBuildProgram(options={options!r}) gave {C.err_name(code)}; build log:\n"
                   f"{log.strip()[:1500]}")
        return prog if expect_ok else (prog, code)

    def build_log(self, prog):
        try:
            return C.info(self.cl.clGetProgramBuildInfo, prog, self.device, C.CL_PROGRAM_BUILD_LOG,
                          kind="str")
        except C.CLError as e:
            return f"(no build log: {e})"

    def kernel(self, t, prog, name):
        k, code = self.create("clCreateKernel", prog, name.encode())
        t.ok(code, f"clCreateKernel({name!r})")
        return t.cleanup(self.cl.clReleaseKernel, k)

    def set_args(self, t, k, *args):
        """Arguments: ('mem', handle), ('local', nbytes), a ctypes object, or a numpy scalar/array."""
        for i, a in enumerate(args):
            if isinstance(a, tuple) and a[0] == "mem":
                h = c_void_p(a[1])
                code = self.cl.clSetKernelArg(k, i, ctypes.sizeof(c_void_p), byref(h))
            elif isinstance(a, tuple) and a[0] == "local":
                code = self.cl.clSetKernelArg(k, i, a[1], None)
            elif hasattr(a, "tobytes"):
                raw = ctypes.create_string_buffer(a.tobytes(), a.nbytes)
                code = self.cl.clSetKernelArg(k, i, a.nbytes, raw)
            else:
                code = self.cl.clSetKernelArg(k, i, ctypes.sizeof(a), byref(a))
            t.ok(code, f"clSetKernelArg({i})")

    def enqueue(self, t, k, global_size, local_size=None, offset=None, q=None):
        dims = len(global_size)
        g = (c_size_t * dims)(*global_size)
        loc = (c_size_t * dims)(*local_size) if local_size else None
        off = (c_size_t * dims)(*offset) if offset else None
        t.ok(self.cl.clEnqueueNDRangeKernel(q or self.queue, k, dims, off, g, loc, 0, None, None),
             f"clEnqueueNDRangeKernel(global={tuple(global_size)}, local={local_size}, "
             f"offset={offset})")
        t.ok(self.cl.clFinish(q or self.queue), "clFinish")

    def run_kernel(self, t, source, name, inputs, out_nbytes, global_size, local_size=None,
                   options="", extra_args=()):
        """Build `source`, run kernel `name`(in0, in1, ..., out, *extra_args) and return the
        output bytes. `inputs` are bytes-like buffers copied to device buffers."""
        prog = self.program(t, source, options)
        k = self.kernel(t, prog, name)
        bufs = []
        for data in inputs:
            data = bytes(data)
            host = ctypes.create_string_buffer(data, max(1, len(data)))
            bufs.append(self.buffer(t, max(1, len(data)), C.CL_MEM_READ_WRITE | C.CL_MEM_COPY_HOST_PTR,
                                    host))
        out = self.buffer(t, max(1, out_nbytes))
        self.set_args(t, k, *[("mem", b) for b in bufs], ("mem", out), *extra_args)
        self.enqueue(t, k, global_size, local_size)
        return self.read(t, out, out_nbytes)


# --- OpenCL C integer types (name -> (bits, signed)), shared by the integer categories ------------

INTEGER_TYPES = {"char": (8, True), "uchar": (8, False), "short": (16, True), "ushort": (16, False),
                 "int": (32, True), "uint": (32, False), "long": (64, True), "ulong": (64, False)}


def int_limits(name):
    """(min, max) of an OpenCL C integer type."""
    bits, signed = INTEGER_TYPES[name]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def wrap_int(v, name):
    """A Python int reduced modulo 2**bits into the type's range (two's complement)."""
    bits, signed = INTEGER_TYPES[name]
    v &= (1 << bits) - 1
    if signed and v >> (bits - 1):
        v -= 1 << bits
    return v
