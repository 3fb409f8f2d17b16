"""Bad handles to every implemented entry point: NULL, foreign, wrongly typed and released
handles give the spec's CL_INVALID_<OBJECT> code (through errcode_ret for creators) and never
crash. Table-driven over the generated entry points, so a new entry point is covered at once."""
import ctypes

import pytest

from support.capi import CL, addr, err
from support.clobjects import make_buffer, make_context, make_queue
from pyplat import cl
from pyplat.api._entry_points import ENTRY_POINTS
from pyplat.api.entry import IMPLEMENTED, load_all

load_all()

FIRST_ARG_ERRORS = {
    "platform": cl.CL_INVALID_PLATFORM, "device": cl.CL_INVALID_DEVICE, "in_device": cl.CL_INVALID_DEVICE,
    "context": cl.CL_INVALID_CONTEXT, "command_queue": cl.CL_INVALID_COMMAND_QUEUE,
    "memobj": cl.CL_INVALID_MEM_OBJECT, "buffer": cl.CL_INVALID_MEM_OBJECT,
    "src_buffer": cl.CL_INVALID_MEM_OBJECT, "program": cl.CL_INVALID_PROGRAM,
    "kernel": cl.CL_INVALID_KERNEL, "source_kernel": cl.CL_INVALID_KERNEL, "event": cl.CL_INVALID_EVENT,
}
# NULL is a valid platform here: the spec lets implementations pick their default platform.
NULL_ALLOWED = {"clGetPlatformInfo", "clGetDeviceIDs", "clUnloadPlatformCompiler"}

# Entry points with no error channel (clSVMAlloc returns NULL, clSVMFree nothing) are left out.
CASES = [(slot[0], slot[1], slot[2]) for slot in ENTRY_POINTS
         if slot and slot[0] in IMPLEMENTED and slot[2] and slot[2][0][0] in FIRST_ARG_ERRORS
         and (slot[1] == "i32" or any(n == "errcode_ret" for n, _ in slot[2]))]


def call_with_first(name, ret_kind, arg_kinds, first):
    """Call `name` with `first` as its handle and harmless zeros elsewhere; return the code."""
    e = err()
    args = [first]
    for arg_name, _ in arg_kinds[1:]:
        args.append(addr(e) if arg_name == "errcode_ret" else 0)
    result = getattr(CL, name)(*args)
    if ret_kind == "i32":
        return result
    assert not result, f"{name} returned an object for a bad handle"
    return e.value


@pytest.fixture(scope="module")
def objects():
    ctx, dev = make_context()
    q = make_queue(ctx, dev)
    dead = make_buffer(ctx, 16)
    CL.clReleaseMemObject(dead)
    yield {"context": ctx, "queue": q, "released": dead}
    CL.clReleaseCommandQueue(q)
    CL.clReleaseContext(ctx)


def test_cases_cover_the_api():
    names = {c[0] for c in CASES}
    for expected in ("clGetDeviceInfo", "clCreateCommandQueue", "clCreateBuffer", "clEnqueueReadBuffer",
                     "clBuildProgram", "clSetKernelArg", "clEnqueueNDRangeKernel", "clGetEventInfo"):
        assert expected in names


@pytest.mark.parametrize("name,ret_kind,arg_kinds", CASES, ids=[c[0] for c in CASES])
def test_bad_handles(objects, name, ret_kind, arg_kinds):
    expected = FIRST_ARG_ERRORS[arg_kinds[0][0]]
    foreign = ctypes.create_string_buffer(64)            # memory that is no handle at all
    wrong = objects["queue"] if expected == cl.CL_INVALID_CONTEXT else objects["context"]
    handles_to_try = [ctypes.addressof(foreign), wrong, objects["released"]]
    if name not in NULL_ALLOWED:
        handles_to_try.append(0)
    for bad in handles_to_try:
        code = call_with_first(name, ret_kind, arg_kinds, bad)
        assert code == expected, f"{name}({bad:#x}) gave {code}, expected {expected}"
