"""Separate compilation through the C API in process: clCompileProgram with headers,
clLinkProgram, program binaries read back, and a one-dimensional launch whose first buffer is
read back (run_1d)."""
import ctypes
import uuid

import numpy as np

from pyplat import cl
from support.capi import CL, addr, err
from support.clobjects import create_kernel, create_program, make_buffer, read, set_arg


NOTIFY = ctypes.CFUNCTYPE(None, ctypes.c_size_t, ctypes.c_void_p)


def uniq():
    """A comment line unique to this call, put in front of a source."""
    return ("/* %s */\n" % uuid.uuid4().hex).encode()


def compile_src(ctx, source, options=b"", headers=()):
    prog = create_program(ctx, source)
    n = len(headers)
    hp = (ctypes.c_size_t * max(n, 1))(*[h for _, h in headers])
    names = [ctypes.c_char_p(name) for name, _ in headers]
    hn = (ctypes.c_char_p * max(n, 1))(*names)
    rc = CL.clCompileProgram(prog, 0, 0, options, n, addr(hp) if n else 0, addr(hn) if n else 0, 0, 0)
    return prog, rc


def link(ctx, progs, options=b"", notify=None, user_data=0):
    arr = (ctypes.c_size_t * len(progs))(*progs)
    e = err()
    fn = ctypes.cast(notify, ctypes.c_void_p).value if notify else 0
    p = CL.clLinkProgram(ctx, 0, 0, options, len(progs), addr(arr), fn, user_data, addr(e))
    return p, e.value


def binary_type(prog, dev):
    bt = ctypes.c_uint32(99)
    assert CL.clGetProgramBuildInfo(prog, dev, cl.CL_PROGRAM_BINARY_TYPE, 4, addr(bt), 0) == 0
    return bt.value


def from_binary(ctx, dev, data):
    blob = ctypes.create_string_buffer(data, len(data))
    ptrs = (ctypes.c_void_p * 1)(ctypes.addressof(blob))
    devs = (ctypes.c_size_t * 1)(dev)
    lengths = (ctypes.c_size_t * 1)(len(data))
    status = (ctypes.c_int32 * 1)(99)
    e = err()
    p = CL.clCreateProgramWithBinary(ctx, 1, addr(devs), addr(lengths), addr(ptrs), addr(status), addr(e))
    return p, e.value, status[0]


def run_1d(ctx, q, prog, name, n, args, out_dtype=np.float32, local=None):
    """args: numpy arrays (buffers, the first is read back) or ctypes scalars / ('local', bytes)."""
    k = create_kernel(prog, name)
    bufs = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            b = make_buffer(ctx, a.nbytes, cl.CL_MEM_COPY_HOST_PTR, a)
            bufs.append((b, a))
            assert set_arg(k, i, b) == 0
        elif isinstance(a, tuple):
            assert CL.clSetKernelArg(k, i, a[1], 0) == 0
        else:
            assert set_arg(k, i, a) == 0
    gws = (ctypes.c_size_t * 1)(n)
    lws = (ctypes.c_size_t * 1)(local) if local else None
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(gws), addr(lws) if lws else 0, 0, 0, 0) == 0
    b, a = bufs[0]
    out = read(q, b, a.nbytes, a.dtype)
    for b, _ in bufs:
        CL.clReleaseMemObject(b)
    CL.clReleaseKernel(k)
    return out
