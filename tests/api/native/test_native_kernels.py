"""clCreateKernel answered natively (pyplat/api/native_kernels.pxi) once the Python entry has made
a kernel of that name: the kernel a program gets must behave exactly as one the Python entry
makes -- its arguments and launches, its own and its program's reference counts, the program's
refusal to be rebuilt while it has kernels, and its arguments when Python first needs it
(adoption)."""
import ctypes

import numpy as np
import pytest

from pyplat import cl, config
from pyplat.api import _native, handles
from support.capi import CL, addr, err
from support.clobjects import context_and_program, create_kernel, make_buffer, make_queue, read, set_arg

if not CL._direct.get("clCreateKernel") or not config.value("PYPLAT_FAST_PATH"):
    pytest.skip("direct entries are off (PYPLAT_DIRECT_ENTRIES=0 / PYPLAT_FAST_PATH=0)", allow_module_level=True)

S, U32, I32 = ctypes.c_size_t, ctypes.c_uint32, ctypes.c_int32
DEFER_HANDLE = 1
# The native entry itself (what the shim calls before taking the GIL).
native_create = ctypes.CFUNCTYPE(S, S, ctypes.c_char_p, S)(_native.fast_path_entries()["clCreateKernel"])
SOURCE = b"""
__kernel void axpy(__global const int *x, __global int *y, int a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
__kernel void fill(__global int *y, int v) { y[get_global_id(0)] = v; }
"""


@pytest.fixture(scope="module")
def env():
    ctx_dev_prog = context_and_program(SOURCE)
    ctx, dev, prog = next(ctx_dev_prog)
    CL.clReleaseKernel(create_kernel(prog, b"axpy"))       # the Python entry: layouts known now
    CL.clReleaseKernel(create_kernel(prog, b"fill"))
    yield ctx, dev, prog
    next(ctx_dev_prog, None)


def natively(prog, name):
    CL.clReleaseKernel(create_kernel(prog, name))         # (layouts are forgotten on a rebuild)
    e = I32(12345)
    k = native_create(prog, name, addr(e))
    assert k not in (0, DEFER_HANDLE), "the native entry did not answer"
    assert e.value == 0
    return k


def uint_info(fn, obj, param):
    v = U32()
    assert fn(obj, param, 4, addr(v), 0) == 0
    return v.value


def program_refs(prog):
    return uint_info(CL.clGetProgramInfo, prog, cl.CL_PROGRAM_REFERENCE_COUNT)


def kernel_refs(k):
    return uint_info(CL.clGetKernelInfo, k, cl.CL_KERNEL_REFERENCE_COUNT)


def test_kernels_of_a_known_name_are_made_and_released_without_python(env):
    _, _, prog = env
    before, live = program_refs(prog), _native.table_stats()[1]
    kernels = [natively(prog, b"axpy") for _ in range(5)]
    assert len(set(kernels)) == 5
    assert all(handles.peek(k) is None for k in kernels)          # no core object made
    assert program_refs(prog) == before + 5                       # each holds its program
    assert _native.native_kernels_of(prog) == 5
    for k in kernels:
        assert CL.clRetainKernel(k) == 0 and CL.clReleaseKernel(k) == 0
        assert CL.clReleaseKernel(k) == 0
        assert handles.peek(k) is None
    assert program_refs(prog) == before and _native.native_kernels_of(prog) == 0
    assert _native.table_stats()[1] == live
    assert CL.clReleaseKernel(kernels[0]) == cl.CL_INVALID_KERNEL     # released: the spec's code


def test_create_set_launch_release_loops_give_the_right_results(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    n = 256
    x = np.arange(n, dtype=np.int32)
    xb = make_buffer(ctx, x.nbytes, cl.CL_MEM_READ_ONLY | cl.CL_MEM_COPY_HOST_PTR, x)
    yb = make_buffer(ctx, x.nbytes, cl.CL_MEM_READ_WRITE | cl.CL_MEM_COPY_HOST_PTR, np.zeros(n, np.int32))
    g = S(n)
    expected = np.zeros(n, dtype=np.int32)
    for a in range(1, 21):
        k = natively(prog, b"axpy")
        assert set_arg(k, 0, xb) == 0 and set_arg(k, 2, I32(a)) == 0
        assert set_arg(k, 1, yb) == 0
        assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == 0
        assert CL.clReleaseKernel(k) == 0                        # while the launch may be pending
        expected += a * x
    assert read(q, yb, x.nbytes, np.int32).tolist() == expected.tolist()
    assert CL.clFinish(q) == 0                                   # (the launches' holds dropped)
    assert _native.native_kernels_of(prog) == 0
    CL.clReleaseMemObject(xb)
    CL.clReleaseMemObject(yb)
    CL.clReleaseCommandQueue(q)


def test_adoption_keeps_the_arguments_set_natively(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    n = 64
    x = np.full(n, 3, dtype=np.int32)
    xb = make_buffer(ctx, x.nbytes, cl.CL_MEM_READ_ONLY | cl.CL_MEM_COPY_HOST_PTR, x)
    yb = make_buffer(ctx, x.nbytes, cl.CL_MEM_READ_WRITE | cl.CL_MEM_COPY_HOST_PTR, np.ones(n, np.int32))
    before = program_refs(prog)
    k = natively(prog, b"axpy")
    assert set_arg(k, 0, xb) == 0 and set_arg(k, 2, I32(7)) == 0
    assert handles.peek(k) is None
    # a query the native entries do not answer: Python adopts the kernel
    # (built without -cl-kernel-arg-info: the answer is an error, the adoption happens all the same)
    qual = U32()
    assert CL.clGetKernelArgInfo(k, 1, cl.CL_KERNEL_ARG_ADDRESS_QUALIFIER, 4, addr(qual), 0) \
        == cl.CL_KERNEL_ARG_INFO_NOT_AVAILABLE
    assert handles.peek(k) is not None
    assert kernel_refs(k) == 1 and program_refs(prog) == before + 1
    assert _native.native_kernels_of(prog) == 0                  # the core Kernel holds it now
    assert set_arg(k, 1, yb) == 0
    g = S(n)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == 0
    assert read(q, yb, x.nbytes, np.int32).tolist() == [7 * 3 + 1] * n
    assert CL.clRetainKernel(k) == 0 and kernel_refs(k) == 2
    assert CL.clReleaseKernel(k) == 0 and CL.clReleaseKernel(k) == 0
    assert CL.clFinish(q) == 0
    assert program_refs(prog) == before
    CL.clReleaseMemObject(xb)
    CL.clReleaseMemObject(yb)
    CL.clReleaseCommandQueue(q)


def test_a_kernel_counts_on_its_program_like_a_python_one(env):
    _, _, prog = env
    k = natively(prog, b"fill")
    assert uint_info(CL.clGetKernelInfo, k, cl.CL_KERNEL_NUM_ARGS) == 2
    assert handles.peek(k) is None                                # (answered natively)
    num = S()
    assert CL.clGetProgramInfo(prog, cl.CL_PROGRAM_NUM_KERNELS, 8, addr(num), 0) == 0 and num.value == 2
    assert CL.clBuildProgram(prog, 0, 0, b"", 0, 0) == cl.CL_INVALID_OPERATION   # kernels attached
    assert CL.clReleaseKernel(k) == 0
    assert CL.clBuildProgram(prog, 0, 0, b"", 0, 0) == 0
    e = I32(12345)
    assert native_create(prog, b"fill", addr(e)) == DEFER_HANDLE and e.value == 12345  # forgotten
    CL.clReleaseKernel(create_kernel(prog, b"fill"))              # known again
    CL.clReleaseKernel(natively(prog, b"fill"))


def test_errors_are_the_python_entrys(env):
    _, _, prog = env
    e = I32(12345)
    for name in (b"nope", b"axp", b"axpyy", b"x" * 300):
        e.value = 12345
        assert native_create(prog, name, addr(e)) == DEFER_HANDLE and e.value == 12345
        assert CL.clCreateKernel(prog, name, addr(e)) == 0 and e.value == cl.CL_INVALID_KERNEL_NAME
    assert native_create(prog, None, addr(e)) == DEFER_HANDLE
    assert CL.clCreateKernel(prog, 0, addr(e)) == 0 and e.value == cl.CL_INVALID_VALUE
    e.value = 12345
    assert native_create(prog + 8, b"axpy", addr(e)) == 0 and e.value == cl.CL_INVALID_PROGRAM   # (natively)
    assert CL.clCreateKernel(prog + 8, b"axpy", addr(e)) == 0 and e.value == cl.CL_INVALID_PROGRAM


def test_a_kernel_holding_its_programs_last_reference_releases_it():
    gen = context_and_program(SOURCE)
    ctx, _, prog = next(gen)
    CL.clReleaseKernel(create_kernel(prog, b"fill"))
    k = natively(prog, b"fill")
    assert CL.clReleaseProgram(prog) == 0                         # the kernel keeps it
    assert handles.peek(prog) is not None and program_refs(prog) == 1
    assert CL.clReleaseKernel(k) == 0                             # Python's: adopted, released
    assert handles.peek(prog) is None
    assert CL.clReleaseContext(ctx) == 0


def test_c_programs_get_native_kernels(run_with_pyplat, tmp_path):
    """Through the loader: kernels made natively in a loop, set, launched and released."""
    from support.c_programs import run_c_program_ok
    run_c_program_ok(run_with_pyplat, tmp_path, "native_kernels", PROGRAM)


PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
static const char *src = "__kernel void add(__global int *a, int v) { a[get_global_id(0)] += v; }";
int main(void) {
    cl_platform_id p; cl_device_id d; cl_int e;
    cl_uint refs;
    clGetPlatformIDs(1, &p, NULL);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
    cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
    if (clBuildProgram(pr, 1, &d, NULL, NULL, NULL)) return 2;
    int host[256] = {0}, got[256];
    cl_mem a = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &e);
    size_t n = 256;
    for (int round = 1; round <= 100; round++) {
        cl_kernel k = clCreateKernel(pr, "add", &e);
        if (e || !k) return 3;
        clSetKernelArg(k, 0, sizeof a, &a);
        clSetKernelArg(k, 1, sizeof round, &round);
        if (clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL)) return 4;
        if (round == 50) {             /* (pending launches hold the program too) */
            clFinish(q);
            clGetProgramInfo(pr, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
            if (refs != 2) { printf("program refs %u\n", refs); return 5; }
            if (clBuildProgram(pr, 1, &d, NULL, NULL, NULL) != CL_INVALID_OPERATION) return 6;
        }
        clReleaseKernel(k);
    }
    clEnqueueReadBuffer(q, a, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
    for (int i = 0; i < 256; i++)
        if (got[i] != 5050) { printf("[%d] = %d\n", i, got[i]); return 7; }
    clFinish(q);
    cl_kernel bad = clCreateKernel(pr, "sub", &e);
    if (bad || e != CL_INVALID_KERNEL_NAME) return 8;
    clGetProgramInfo(pr, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    if (refs != 1) { printf("program refs at the end %u\n", refs); return 9; }
    clReleaseMemObject(a); clReleaseProgram(pr); clReleaseCommandQueue(q); clReleaseContext(c);
    printf("ok\n");
    return 0;
}
"""


def test_work_group_answers_learnt_once_serve_later_kernels_of_the_name(env):
    _, dev, prog = env
    first = natively(prog, b"fill")
    wg = S()
    assert CL.clGetKernelWorkGroupInfo(first, dev, cl.CL_KERNEL_WORK_GROUP_SIZE, 8, addr(wg), 0) == 0
    assert handles.peek(first) is not None                        # answered by Python: adopted
    expected = wg.value
    later = natively(prog, b"fill")
    wg.value = 0
    assert CL.clGetKernelWorkGroupInfo(later, dev, cl.CL_KERNEL_WORK_GROUP_SIZE, 8, addr(wg), 0) == 0
    assert wg.value == expected and expected >= 1
    assert handles.peek(later) is None                            # answered natively
    assert CL.clGetKernelWorkGroupInfo(later, dev + 8, cl.CL_KERNEL_WORK_GROUP_SIZE, 8, addr(wg), 0) \
        == cl.CL_INVALID_DEVICE
    CL.clReleaseKernel(first)
    CL.clReleaseKernel(later)


def test_the_same_buffer_set_again_and_again_reaches_the_launch(env):
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    y = make_buffer(ctx, 64 * 4)
    k = natively(prog, b"fill")
    for _ in range(100):
        assert set_arg(k, 0, y) == 0
    assert set_arg(k, 1, I32(4)) == 0
    g = S(64)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == 0
    assert read(q, y, 64 * 4, np.int32).tolist() == [4] * 64
    assert CL.clReleaseKernel(k) == 0 and CL.clReleaseMemObject(y) == 0
    assert CL.clFinish(q) == 0
    CL.clReleaseCommandQueue(q)


def test_values_set_in_a_loop_between_launches_reach_each_launch(env):
    """A value set again before any launch took the plan is written into the slot's derived plan
    (native_kernel_args.pxi, value_in_place); a plan a launch holds is never written."""
    ctx, dev, prog = env
    q = make_queue(ctx, dev)
    n = 1024
    x = np.ones(n, dtype=np.int32)
    xb = make_buffer(ctx, x.nbytes, cl.CL_MEM_READ_ONLY | cl.CL_MEM_COPY_HOST_PTR, x)
    yb = make_buffer(ctx, x.nbytes, cl.CL_MEM_READ_WRITE | cl.CL_MEM_COPY_HOST_PTR, np.zeros(n, np.int32))
    k = natively(prog, b"axpy")
    assert set_arg(k, 0, xb) == 0 and set_arg(k, 1, yb) == 0 and set_arg(k, 2, I32(1)) == 0
    g = S(n)
    total = 0
    for launch in range(30):
        for a in range(launch, launch + 5):             # only the last one counts
            assert set_arg(k, 2, I32(a)) == 0
        assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(g), 0, 0, 0, 0) == 0
        total += launch + 4
    assert read(q, yb, x.nbytes, np.int32).tolist() == [total] * n
    assert CL.clReleaseKernel(k) == 0
    assert CL.clFinish(q) == 0
    CL.clReleaseMemObject(xb)
    CL.clReleaseMemObject(yb)
    CL.clReleaseCommandQueue(q)


def test_a_release_while_python_adopts_waits_for_the_adoption(env, monkeypatch):
    """The last native clReleaseKernel during adoption defers (Python's release then waits for
    the adoption), so the kernel is never freed under the core Kernel being made for it."""
    from pyplat.api import kernel as kernel_api
    _, _, prog = env
    native_release = ctypes.CFUNCTYPE(I32, S)(_native.fast_path_entries()["clReleaseKernel"])
    before = program_refs(prog)
    k = natively(prog, b"fill")
    seen = []
    make = kernel_api.adopt_native_kernel

    def adopt_and_race(program, name, slot):
        seen.append(native_release(k))
        return make(program, name, slot)

    monkeypatch.setattr(kernel_api, "adopt_native_kernel", adopt_and_race)
    assert kernel_refs(k) == 1                                    # adopts
    assert seen == [_native.DEFER]
    assert CL.clReleaseKernel(k) == 0
    assert program_refs(prog) == before
    assert CL.clReleaseKernel(k) == cl.CL_INVALID_KERNEL


def test_kernels_in_program_leave_their_layouts_too():
    gen = context_and_program(SOURCE)
    ctx, _, prog = next(gen)
    e = I32(12345)
    assert native_create(prog, b"fill", addr(e)) == DEFER_HANDLE          # nothing made yet
    made = (S * 2)()
    assert CL.clCreateKernelsInProgram(prog, 2, addr(made), 0) == 0
    for name in (b"fill", b"axpy"):
        k = native_create(prog, name, addr(e))
        assert k not in (0, DEFER_HANDLE) and e.value == 0
        assert CL.clReleaseKernel(k) == 0
    for k in made:
        assert CL.clReleaseKernel(k) == 0
    next(gen, None)
