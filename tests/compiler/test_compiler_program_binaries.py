"""CL_PROGRAM_BINARIES carry object code and metadata: clCreateProgramWithBinary + clBuildProgram
load them without running libclang or the optimiser."""
import ctypes
import json
import struct
import uuid

import numpy as np
import pytest

from pyplat import cl
import pyplat.compiler as C
from pyplat.compiler import driver
from support.capi import CL, addr, err
from support.clobjects import build_status, context_and_queue, create_kernel, create_program, program_binary


@pytest.fixture(scope="module")
def env():
    yield from context_and_queue()




def _from_binary(ctx, dev, data):
    blob = ctypes.create_string_buffer(data, len(data))
    ptrs = (ctypes.c_void_p * 1)(ctypes.addressof(blob))
    devs = (ctypes.c_size_t * 1)(dev)
    lengths = (ctypes.c_size_t * 1)(len(data))
    status = (ctypes.c_int32 * 1)(99)
    e = err()
    p = CL.clCreateProgramWithBinary(ctx, 1, addr(devs), addr(lengths), addr(ptrs), addr(status), addr(e))
    assert e.value == 0 and status[0] == 0
    return p


def test_binary_loads_without_compiling(env, monkeypatch):
    ctx, dev, q = env
    src = ("/* %s */ __kernel void twice(__global int *o) { o[get_global_id(0)] = 2 * get_global_id(0); }"
           % uuid.uuid4().hex).encode()
    prog = create_program(ctx, src)
    assert CL.clBuildProgram(prog, 0, 0, b"-cl-mad-enable", 0, 0) == 0
    data = program_binary(prog)
    assert data.startswith(b"PYPLAT-PROGRAM-3\n") and b"\x7fELF" in data

    def no_compile(*a, **k):
        raise AssertionError("compiled although the binary carries object code")
    monkeypatch.setattr(driver, "_get_index", no_compile)
    monkeypatch.setattr(driver, "_build", no_compile)
    again = _from_binary(ctx, dev, data)
    assert CL.clBuildProgram(again, 0, 0, 0, 0, 0) == 0
    assert build_status(again, dev) == cl.CL_BUILD_SUCCESS
    bt = ctypes.c_uint32()
    assert CL.clGetProgramBuildInfo(again, dev, cl.CL_PROGRAM_BINARY_TYPE, 4, addr(bt), 0) == 0
    assert bt.value == cl.CL_PROGRAM_BINARY_TYPE_EXECUTABLE
    k = create_kernel(again, b"twice")
    info = C.load_package(data[data.index(b"PYPLAT-OBJ-2"):-32])
    o = np.zeros(8, np.int32)
    from support.compiled import run
    run(info.kernels["twice"], [o], (8,))
    assert list(o) == [2 * i for i in range(8)]
    assert program_binary(again) == data          # round-trips exactly (pyopencl's binary cache)
    CL.clReleaseKernel(k)
    CL.clReleaseProgram(again)
    CL.clReleaseProgram(prog)


def _foreign(data):
    """The same binary as made on another machine (its package's environment differs), whole:
    checksums made anew."""
    from pyplat.compiler import objects
    from pyplat.core.program import BINARY_MAGIC
    body = data[:-32]
    start = body.index(b"PYPLAT-OBJ-2")
    meta, obj = objects.read_package(body[start:])
    j = json.dumps(dict(meta, env=meta["env"].replace("cpu=", "cpu=other-")), separators=(",", ":")).encode()
    package = objects.seal(objects.PACKAGE_MAGIC + struct.pack("<Q", len(j)) + j + obj)
    assert body.startswith(BINARY_MAGIC)
    return objects.seal(body[:start] + package)


def test_foreign_package_falls_back_to_source(env):
    ctx, dev, q = env
    prog = create_program(ctx, b"__kernel void z(__global int *o) { o[0] = 0; }")
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == 0
    data = _foreign(program_binary(prog))
    again = _from_binary(ctx, dev, data)
    assert CL.clBuildProgram(again, 0, 0, 0, 0, 0) == 0
    k = create_kernel(again, b"z")
    CL.clReleaseKernel(k)
    CL.clReleaseProgram(again)
    CL.clReleaseProgram(prog)
