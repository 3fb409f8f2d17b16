"""clLinkProgram across units: a kernel calling a kernel (or function) of another compiled object
or library, `extern constant` variables defined in another unit, and the link errors a user sees
(symbols defined twice, variables defined nowhere), through the C API in process."""
import ctypes

import numpy as np
import pytest

from pyplat import cl
import pyplat.compiler as C
from support.capi import CL, addr, err
from support.clobjects import (build_log, build_status, context_and_queue, create_kernel, make_buffer,
                               program_binary, read, set_arg)
from support.linking import NOTIFY, binary_type, compile_src, from_binary, link, run_1d, uniq


@pytest.fixture(scope="module")
def env():
    yield from context_and_queue()


COPY = b"""__kernel void CopyBuffer(__global float *src, __global float *dst) {
    int id = (int)get_global_id(0);
    dst[id] = src[id];
}
"""
CALLER = b"""extern __kernel void CopyBuffer(__global float *src, __global float *dst);
__kernel void AnotherCopyBuffer(__global float *src, __global float *dst) {
    CopyBuffer(src, dst);
    dst[get_global_id(0)] += 1.0f;
}
"""


def _program_info_str(prog, what):
    size = ctypes.c_size_t()
    assert CL.clGetProgramInfo(prog, what, 0, 0, addr(size)) == 0
    buf = ctypes.create_string_buffer(size.value)
    assert CL.clGetProgramInfo(prog, what, size.value, addr(buf), 0) == 0
    return buf.value.decode()


def _kernels_in_program(prog):
    n = ctypes.c_uint32()
    assert CL.clCreateKernelsInProgram(prog, 0, 0, addr(n)) == 0
    ks = (ctypes.c_size_t * n.value)()
    assert CL.clCreateKernelsInProgram(prog, n.value, addr(ks), 0) == 0
    names = []
    for k in ks:
        size = ctypes.c_size_t()
        assert CL.clGetKernelInfo(k, cl.CL_KERNEL_FUNCTION_NAME, 0, 0, addr(size)) == 0
        buf = ctypes.create_string_buffer(size.value)
        assert CL.clGetKernelInfo(k, cl.CL_KERNEL_FUNCTION_NAME, size.value, addr(buf), 0) == 0
        names.append(buf.value.decode())
        CL.clReleaseKernel(k)
    return sorted(names)


def _run_dst(ctx, q, exe, name, x):
    """Runs kernel(src, dst) and returns dst."""
    k = create_kernel(exe, name)
    src = make_buffer(ctx, x.nbytes, cl.CL_MEM_COPY_HOST_PTR, x)
    dst = make_buffer(ctx, x.nbytes, cl.CL_MEM_COPY_HOST_PTR, np.zeros_like(x))
    assert set_arg(k, 0, src) == 0 and set_arg(k, 1, dst) == 0
    gws = (ctypes.c_size_t * 1)(x.size)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(gws), 0, 0, 0, 0) == 0
    out = read(q, dst, x.nbytes, x.dtype)
    CL.clReleaseMemObject(src)
    CL.clReleaseMemObject(dst)
    CL.clReleaseKernel(k)
    return out


def test_kernel_calls_kernel_of_another_object(env):
    ctx, dev, q = env
    a, rc = compile_src(ctx, uniq() + CALLER)
    assert rc == 0, build_log(a, dev)
    b, rc = compile_src(ctx, uniq() + COPY)
    assert rc == 0, build_log(b, dev)
    exe, code = link(ctx, [a, b])
    assert code == 0, build_log(exe, dev)
    assert _program_info_str(exe, cl.CL_PROGRAM_KERNEL_NAMES).split(";") == ["AnotherCopyBuffer", "CopyBuffer"]
    nk = ctypes.c_size_t()
    assert CL.clGetProgramInfo(exe, cl.CL_PROGRAM_NUM_KERNELS, 8, addr(nk), 0) == 0 and nk.value == 2
    assert _kernels_in_program(exe) == ["AnotherCopyBuffer", "CopyBuffer"]
    x = np.arange(33, dtype=np.float32) * 1.5
    np.testing.assert_array_equal(_run_dst(ctx, q, exe, b"AnotherCopyBuffer", x), x + 1)
    np.testing.assert_array_equal(_run_dst(ctx, q, exe, b"CopyBuffer", x), x)


def test_kernel_from_library_and_binaries_round_trip(env):
    """The CTS's program_binary_type flow: object -> binary -> object -> library -> binary ->
    library, linked with another object; the executable's binary reloaded and run; the binary
    type after each step."""
    ctx, dev, q = env
    obj, rc = compile_src(ctx, uniq() + COPY)
    assert rc == 0
    assert binary_type(obj, dev) == cl.CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
    obj2, e, status = from_binary(ctx, dev, program_binary(obj))
    assert e == 0 and status == 0
    assert binary_type(obj2, dev) == cl.CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
    calls = []

    @NOTIFY
    def notify(p, ud):
        calls.append(ud)
    lib, code = link(ctx, [obj2], b"-create-library", notify=notify, user_data=7)
    assert code == 0 and calls == [7]
    assert binary_type(lib, dev) == cl.CL_PROGRAM_BINARY_TYPE_LIBRARY
    lib2, e, status = from_binary(ctx, dev, program_binary(lib))
    assert e == 0 and binary_type(lib2, dev) == cl.CL_PROGRAM_BINARY_TYPE_LIBRARY
    caller, rc = compile_src(ctx, uniq() + CALLER)
    assert rc == 0
    exe, code = link(ctx, [caller, lib2])
    assert code == 0, build_log(exe, dev)
    assert binary_type(exe, dev) == cl.CL_PROGRAM_BINARY_TYPE_EXECUTABLE
    exe2, e, status = from_binary(ctx, dev, program_binary(exe))
    assert e == 0 and binary_type(exe2, dev) == cl.CL_PROGRAM_BINARY_TYPE_EXECUTABLE
    assert CL.clBuildProgram(exe2, 0, 0, 0, 0, 0) == 0
    x = np.linspace(-3, 3, 17).astype(np.float32)
    for p in (exe, exe2):
        np.testing.assert_array_equal(_run_dst(ctx, q, p, b"AnotherCopyBuffer", x), x + 1)
        np.testing.assert_array_equal(_run_dst(ctx, q, p, b"CopyBuffer", x), x)
        assert _kernels_in_program(p) == ["AnotherCopyBuffer", "CopyBuffer"]


def test_composite_kernel_over_library_of_many_objects(env):
    """The CTS's compile_and_link_status_options_log: kernels CopyBuffer<i> each in its own
    object, made into one library; a composite kernel declaring them extern and calling each."""
    ctx, dev, q = env
    n = 12
    objs = []
    for i in range(n):
        p, rc = compile_src(ctx, uniq() + COPY.replace(b"CopyBuffer", b"CopyBuffer%d" % i))
        assert rc == 0
        objs.append(p)
    lib, code = link(ctx, objs, b"-create-library -enable-link-options -cl-denorms-are-zero")
    assert code == 0, build_log(lib, dev)
    assert binary_type(lib, dev) == cl.CL_PROGRAM_BINARY_TYPE_LIBRARY
    decls = b"".join(b"extern __kernel void CopyBuffer%d(__global float *src, __global float *dst);\n" % i
                     for i in range(n))
    body = b"".join(b"    CopyBuffer%d(src, dst);\n" % i for i in range(n))
    comp, rc = compile_src(ctx, uniq() + decls + b"__kernel void CompositeKernel(__global float *src, "
                           b"__global float *dst) {\n" + body + b"}\n")
    assert rc == 0, build_log(comp, dev)
    exe, code = link(ctx, [comp, lib])
    assert code == 0, build_log(exe, dev)
    assert build_status(exe, dev) == cl.CL_BUILD_SUCCESS
    assert len(_kernels_in_program(exe)) == n + 1
    x = np.arange(40, dtype=np.float32)
    np.testing.assert_array_equal(_run_dst(ctx, q, exe, b"CompositeKernel", x), x)


def test_kernel_declared_as_plain_function_elsewhere():
    """Declared without __kernel where it is called, defined as a kernel: still one function."""
    a = C.compile_object("void fill(__global int *o);\n__kernel void k(__global int *o) { fill(o); o[1] = 5; }")
    b = C.compile_object("__kernel void fill(__global int *o) { o[0] = 7; }")
    r = C.link([a.data, b.data])
    assert r.ok, r.log
    assert sorted(r.kernels) == ["fill", "k"]


@pytest.mark.parametrize("std", ["-cl-std=CL1.2", "-cl-std=CL2.0", "-cl-std=CL3.0"])
def test_extern_constant_arrays_and_vectors(env, std):
    ctx, dev, q = env
    defs, rc = compile_src(ctx, uniq() + b"constant int tab[] = {10, 20, 30, 40};\n"
                           b"constant float4 v = (float4)((float2)(1, 2), 3, 4);\n"
                           b"static constant int hidden = 99;\n"
                           b"int get_hidden(void) { return hidden; }\n", std.encode())
    assert rc == 0, build_log(defs, dev)
    use, rc = compile_src(ctx, uniq() + b"extern constant int tab[];\nextern constant float4 v;\n"
                          b"int get_hidden(void);\n"
                          b"static constant int hidden = 1;   /* its own, not the other unit's */\n"
                          b"__kernel void k(__global int *o) { int i = get_global_id(0);\n"
                          b"  o[i] = tab[i & 3] + (int)v.w + 1000 * get_hidden() + hidden; }\n", std.encode())
    assert rc == 0, build_log(use, dev)
    exe, code = link(ctx, [use, defs])
    assert code == 0, build_log(exe, dev)
    out = run_1d(ctx, q, exe, b"k", 8, [np.zeros(8, np.int32)])
    np.testing.assert_array_equal(out, [10 + 4 + 99000 + 1, 20 + 4 + 99001, 30 + 4 + 99001, 40 + 4 + 99001] * 2)


def test_extern_constant_defined_in_the_same_unit_is_one_variable():
    r = C.build("extern constant int t[3];\nconstant int t[3] = {4, 5, 6};\n"
                "__kernel void k(__global int *o) { o[0] = t[2]; }", use_cache=False)
    assert r.ok, r.log
    r = C.build("extern constant int t[3];\n__kernel void k(__global int *o) { o[0] = t[2]; }", use_cache=False)
    assert not r.ok and "'t' is declared but not defined" in r.log


def test_link_errors_name_the_symbol_and_both_units(env):
    ctx, dev, q = env
    cases = [
        ([b"constant int x = 1;\n__kernel void a(__global int *o) { o[0] = x; }",
          b"constant int x = 2;\n__kernel void b(__global int *o) { o[0] = x; }"],
         ["variable 'x' is defined in more than one input", "input 0 (a compiled object defining a)",
          "input 1 (a compiled object defining b)"]),
        ([b"int f(int v) { return v; }", b"int f(int v) { return v + 1; }\n__kernel void b(__global int *o) { o[0] = f(1); }"],
         ["function 'f' is defined in more than one input", "input 0", "input 1"]),
        ([COPY, COPY.replace(b"dst[id] = src[id]", b"dst[id] = 2 * src[id]")],
         ["kernel 'CopyBuffer' is defined in more than one input"]),
        ([b"__kernel void a(__global int *o) { o[0] = 1; }",
          b"extern constant int missing;\n__kernel void b(__global int *o) { o[0] = missing; }"],
         ["undefined variable 'missing'"]),
        ([CALLER], ["undefined function 'CopyBuffer'"]),
        ([b"constant int x[3] = {1, 2, 3};", b"extern constant int x[4];\n__kernel void b(__global int *o) { o[0] = x[0]; }"],
         ["variable 'x' is declared with a size of 16 bytes in input 1", "defined with 12 bytes"]),
    ]
    for sources, expected in cases:
        progs = []
        for s in sources:
            p, rc = compile_src(ctx, uniq() + s)
            assert rc == 0, build_log(p, dev)
            progs.append(p)
        exe, code = link(ctx, progs)
        assert code == cl.CL_LINK_PROGRAM_FAILURE
        assert exe, "a failed link still returns the program (for its log)"
        assert build_status(exe, dev) == cl.CL_BUILD_ERROR
        log = build_log(exe, dev)
        for text in expected:
            assert text in log, (text, log)


def test_barrier_kernel_called_from_another_unit_is_reported():
    a = C.compile_object("__kernel void b(__global int *o, __local int *l) { l[0] = 1; "
                         "barrier(CLK_LOCAL_MEM_FENCE); o[0] = l[0]; }")
    c = C.compile_object("__kernel void b(__global int *o, __local int *l);\n"
                         "__kernel void k(__global int *o, __local int *l) { b(o, l); }")
    r = C.link([a.data, c.data])
    assert not r.ok and "undefined function 'b'" in r.log and "uses barrier()" in r.log


def test_kernel_called_before_its_definition_keeps_its_arguments(env):
    """A kernel declared, called by another kernel, then defined: the call must not make it a
    plain function (it is still a kernel with its arguments), in one program or linked."""
    ctx, dev, q = env
    from support.clobjects import create_program
    src = (b"__kernel void inner(__global int *o);\n"
           b"__kernel void outer(__global int *o) { inner(o); o[get_global_id(0)] += 10; }\n"
           b"__kernel void inner(__global int *o) { o[get_global_id(0)] = 1 + (int)get_global_id(0); }\n")
    built = create_program(ctx, uniq() + src)
    assert CL.clBuildProgram(built, 0, 0, b"", 0, 0) == 0, build_log(built, dev)
    obj, rc = compile_src(ctx, uniq() + src)
    assert rc == 0
    linked, code = link(ctx, [obj])
    assert code == 0
    for p in (built, linked):
        k = create_kernel(p, b"inner")
        n = ctypes.c_uint32()
        assert CL.clGetKernelInfo(k, cl.CL_KERNEL_NUM_ARGS, 4, addr(n), 0) == 0 and n.value == 1
        CL.clReleaseKernel(k)
        np.testing.assert_array_equal(run_1d(ctx, q, p, b"inner", 4, [np.zeros(4, np.int32)]), [1, 2, 3, 4])
        np.testing.assert_array_equal(run_1d(ctx, q, p, b"outer", 4, [np.zeros(4, np.int32)]), [11, 12, 13, 14])


def _build_info_str(prog, dev, what):
    size = ctypes.c_size_t()
    assert CL.clGetProgramBuildInfo(prog, dev, what, 0, 0, addr(size)) == 0
    buf = ctypes.create_string_buffer(max(size.value, 1))
    assert CL.clGetProgramBuildInfo(prog, dev, what, size.value, addr(buf), 0) == 0
    return buf.value.decode()


def test_status_options_logs_and_callbacks_of_each_step(env):
    """The CTS's compile_and_link_status_options_log: build status, options and log of the
    compiled object, the library and the linked program; each callback once with its data."""
    ctx, dev, q = env
    from support.clobjects import create_program
    comp = create_program(ctx, uniq() + CALLER)
    assert build_status(comp, dev) == cl.CL_BUILD_NONE
    calls = []

    @NOTIFY
    def notify(p, ud):
        calls.append(ud)
    assert CL.clCompileProgram(comp, 0, 0, b"-DX=1 -cl-std=CL1.2", 0, 0, 0,
                               ctypes.cast(notify, ctypes.c_void_p).value, 1) == 0
    assert build_status(comp, dev) == cl.CL_BUILD_SUCCESS
    assert _build_info_str(comp, dev, cl.CL_PROGRAM_BUILD_OPTIONS) == "-DX=1 -cl-std=CL1.2"
    _build_info_str(comp, dev, cl.CL_PROGRAM_BUILD_LOG)
    obj, rc = compile_src(ctx, uniq() + COPY)
    assert rc == 0
    lib, code = link(ctx, [obj], b"-create-library -enable-link-options -cl-denorms-are-zero",
                     notify=notify, user_data=2)
    assert code == 0 and build_status(lib, dev) == cl.CL_BUILD_SUCCESS
    assert _build_info_str(lib, dev, cl.CL_PROGRAM_BUILD_OPTIONS) == \
        "-create-library -enable-link-options -cl-denorms-are-zero"
    exe, code = link(ctx, [comp, lib], b"-cl-fast-relaxed-math", notify=notify, user_data=3)
    assert code == 0 and build_status(exe, dev) == cl.CL_BUILD_SUCCESS
    assert _build_info_str(exe, dev, cl.CL_PROGRAM_BUILD_OPTIONS) == "-cl-fast-relaxed-math"
    assert calls == [1, 2, 3]
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(_run_dst(ctx, q, exe, b"AnotherCopyBuffer", x), x + 1)
    # link options given to a library stay valid for it; given alone, -enable-link-options is refused
    _, code = link(ctx, [obj], b"-enable-link-options")
    assert code == cl.CL_INVALID_LINKER_OPTIONS
