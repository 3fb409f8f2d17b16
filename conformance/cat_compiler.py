"""compiler: build options (-D, -I, bad options), build errors and logs, program and kernel info,
kernel argument info, argument and enqueue errors of kernels, binaries round trip, predefined
macros, programs from several strings, clCompileProgram/clLinkProgram (headers, libraries, binary
types, binaries of compiled objects, link errors)."""
import ctypes
import os
import tempfile
from ctypes import byref, c_size_t, c_void_p

import numpy as np

from . import clapi as C
from .cat_computeinfo import parse_version
from .framework import Category

CATEGORY = Category("compiler", "build options, errors and logs, program/kernel info, arg info, binaries")
check = CATEGORY.check


def _run_ints(env, t, prog, name, n, extra=()):
    k = env.kernel(t, prog, name)
    out = env.buffer(t, 4 * n)
    env.set_args(t, k, ("mem", out), *extra)
    env.enqueue(t, k, (1,))
    return np.frombuffer(env.read(t, out, 4 * n), dtype=np.int32).tolist()


@check
def option_define(env, t):
    """-D NAME=value, -DNAME (defined as 1), -D with spaces between, several at once"""
    src = r"""
__kernel void k(__global int *o)
{
#ifdef FLAG
    o[0] = FLAG;
#else
    o[0] = -1;
#endif
    o[1] = VALUE;
    o[2] = OTHER * 2;
#ifdef UNSET
    o[3] = 1;
#else
    o[3] = 0;
#endif
}
"""
    prog = env.program(t, src, "-DFLAG -D VALUE=42 -DOTHER=(3+4)")
    t.eq(_run_ints(env, t, prog, "k", 4), [1, 42, 14, 0], "[FLAG, VALUE, OTHER*2, defined(UNSET)] "
                                                         "built with -DFLAG -D VALUE=42 -DOTHER=(3+4)")


@check
def option_include(env, t):
    """-I DIR finds headers for #include "..." and #include <...>"""
    with tempfile.TemporaryDirectory(prefix="pyplat-conformance-") as d:
        with open(os.path.join(d, "conf_header.h"), "w") as f:
            f.write("#define FROM_HEADER 1234\ninline int twice(int x) { return 2 * x; }\n")
        sub = os.path.join(d, "sub")
        os.mkdir(sub)
        with open(os.path.join(sub, "other.h"), "w") as f:
            f.write("#define FROM_OTHER 77\n")
        src = ('#include "conf_header.h"\n#include <other.h>\n'
               "__kernel void k(__global int *o) { o[0] = twice(FROM_HEADER); o[1] = FROM_OTHER; }\n")
        prog = env.program(t, src, f"-I {d} -I{sub}")
        t.eq(_run_ints(env, t, prog, "k", 2), [2468, 77], "values from headers found through -I")


@check
def build_errors_and_log(env, t):
    """a broken source gives CL_BUILD_PROGRAM_FAILURE, CL_BUILD_ERROR and a log naming the problem"""
    src = "__kernel void k(__global int *o)\n{\n    o[0] = undeclared_identifier_xyz;\n}\n"
    prog, code = env.program(t, src, expect_ok=False)
    t.code(code, C.CL_BUILD_PROGRAM_FAILURE, "clBuildProgram(source using an undeclared identifier)")
    status = C.info(env.cl.clGetProgramBuildInfo, prog, env.device, C.CL_PROGRAM_BUILD_STATUS, kind="int")
    t.eq(status, C.CL_BUILD_ERROR, "CL_PROGRAM_BUILD_STATUS after a failed build")
    log = env.build_log(prog)
    t.true("undeclared_identifier_xyz" in log,
           f"the build log does not name the undeclared identifier: {log.strip()[:300]!r}")
    k, kcode = env.create("clCreateKernel", prog, b"k")
    t.code(kcode, C.CL_INVALID_PROGRAM_EXECUTABLE, "clCreateKernel(a program whose build failed)")
    if k:
        env.cl.clReleaseKernel(k)
    prog2, code = env.program(t, "__kernel void k(__global int *o) { o[0] = 1; }",
                              "-cl-no-such-option-anywhere", expect_ok=False)
    t.code(code, C.CL_INVALID_BUILD_OPTIONS, "clBuildProgram(options='-cl-no-such-option-anywhere')")


@check
def build_info(env, t):
    """after a build: status, options as given, log a string; program info: kernels, names, devices"""
    src = ("__kernel void first(__global int *o) { o[0] = 1; }\n"
           "__kernel void second(__global int *o, int v) { o[0] = v; }\n"
           "int helper(int x) { return x; }\n")
    opts = "-DUNUSED=1 -cl-mad-enable"
    prog = env.program(t, src, opts)
    cl = env.cl
    t.eq(C.info(cl.clGetProgramBuildInfo, prog, env.device, C.CL_PROGRAM_BUILD_STATUS, kind="int"),
         C.CL_BUILD_SUCCESS, "CL_PROGRAM_BUILD_STATUS")
    t.eq(C.info(cl.clGetProgramBuildInfo, prog, env.device, C.CL_PROGRAM_BUILD_OPTIONS), opts,
         "CL_PROGRAM_BUILD_OPTIONS")
    raw, size = C.raw_info(cl.clGetProgramBuildInfo, prog, env.device, C.CL_PROGRAM_BUILD_LOG)
    t.true(size >= 1 and raw.endswith(b"\0"), f"CL_PROGRAM_BUILD_LOG is not a C string: {raw[:40]!r}")
    raw, size = C.raw_info(cl.clGetProgramInfo, prog, C.CL_PROGRAM_NUM_KERNELS)
    t.eq(size, ctypes.sizeof(c_size_t), "CL_PROGRAM_NUM_KERNELS size (size_t)")
    t.eq(C.decode(raw, "size"), 2, "CL_PROGRAM_NUM_KERNELS")
    names = C.info(cl.clGetProgramInfo, prog, C.CL_PROGRAM_KERNEL_NAMES)
    t.eq(sorted(names.split(";")), ["first", "second"], f"CL_PROGRAM_KERNEL_NAMES {names!r} split at ';'")
    t.eq(C.info(cl.clGetProgramInfo, prog, C.CL_PROGRAM_DEVICES, kind="ptrs"), [env.device],
         "CL_PROGRAM_DEVICES")
    n = C.cl_uint(0)
    t.ok(cl.clCreateKernelsInProgram(prog, 0, None, byref(n)), "clCreateKernelsInProgram(count)")
    t.eq(n.value, 2, "number of kernels from clCreateKernelsInProgram")
    ks = (c_void_p * 2)()
    t.ok(cl.clCreateKernelsInProgram(prog, 2, ks, None), "clCreateKernelsInProgram")
    got = []
    for k in ks:
        if k:
            got.append(C.info(cl.clGetKernelInfo, k, C.CL_KERNEL_FUNCTION_NAME))
            cl.clReleaseKernel(k)
    t.eq(sorted(got), ["first", "second"], "names of the kernels of clCreateKernelsInProgram")
    t.code(lambda: cl.clCreateKernelsInProgram(prog, 1, ks, None), C.CL_INVALID_VALUE,
           "clCreateKernelsInProgram(num_kernels=1 < 2)")
    for name in (b"helper", b"no_such_kernel"):
        k, code = env.create("clCreateKernel", prog, name)
        t.code(code, C.CL_INVALID_KERNEL_NAME, f"clCreateKernel({name.decode()!r})")
        if k:
            cl.clReleaseKernel(k)


@check
def kernel_info(env, t):
    """CL_KERNEL_* info and work-group info, reqd_work_group_size"""
    src = ("__kernel __attribute__((reqd_work_group_size(4, 2, 1))) void fixed(__global int *o) { o[0] = 1; }\n"
           "__kernel void free_size(__global int *o, float f, __local int *l) { o[0] = (int)f; }\n")
    prog = env.program(t, src)
    cl = env.cl
    k = env.kernel(t, prog, "free_size")
    t.eq(C.info(cl.clGetKernelInfo, k, C.CL_KERNEL_FUNCTION_NAME), "free_size", "CL_KERNEL_FUNCTION_NAME")
    raw, size = C.raw_info(cl.clGetKernelInfo, k, C.CL_KERNEL_NUM_ARGS)
    t.eq(size, 4, "CL_KERNEL_NUM_ARGS size (cl_uint)")
    t.eq(C.decode(raw, "uint"), 3, "CL_KERNEL_NUM_ARGS")
    t.eq(C.info(cl.clGetKernelInfo, k, C.CL_KERNEL_REFERENCE_COUNT, kind="uint"), 1, "CL_KERNEL_REFERENCE_COUNT")
    t.eq(C.info(cl.clGetKernelInfo, k, C.CL_KERNEL_CONTEXT, kind="ptr"), env.context, "CL_KERNEL_CONTEXT")
    t.eq(C.info(cl.clGetKernelInfo, k, C.CL_KERNEL_PROGRAM, kind="ptr"), prog, "CL_KERNEL_PROGRAM")
    wg = C.info(cl.clGetKernelWorkGroupInfo, k, env.device, C.CL_KERNEL_WORK_GROUP_SIZE, kind="size")
    maxwg = env.device_info(C.CL_DEVICE_MAX_WORK_GROUP_SIZE, "size")
    t.true(1 <= wg <= maxwg, f"CL_KERNEL_WORK_GROUP_SIZE {wg} outside 1..{maxwg}")
    t.eq(C.info(cl.clGetKernelWorkGroupInfo, k, env.device, C.CL_KERNEL_COMPILE_WORK_GROUP_SIZE, kind="sizes"),
         [0, 0, 0], "CL_KERNEL_COMPILE_WORK_GROUP_SIZE without the attribute")
    kf = env.kernel(t, prog, "fixed")
    t.eq(C.info(cl.clGetKernelWorkGroupInfo, kf, env.device, C.CL_KERNEL_COMPILE_WORK_GROUP_SIZE, kind="sizes"),
         [4, 2, 1], "CL_KERNEL_COMPILE_WORK_GROUP_SIZE of reqd_work_group_size(4, 2, 1)")
    t.code(lambda: cl.clGetKernelInfo(k, 0x7FFF, 0, None, byref(c_size_t())), C.CL_INVALID_VALUE,
           "clGetKernelInfo(param=0x7fff)")


ARG_INFO_SRC = ("__kernel void k(__global const float *restrict in, __local int *scratch, "
                "__constant float4 *c, volatile __global uint *v, int n, float4 f)\n{ }\n")
ARG_INFO_EXPECTED = [  # name, address, type name, type qualifier bits
    ("in", C.CL_KERNEL_ARG_ADDRESS_GLOBAL, "float*", C.CL_KERNEL_ARG_TYPE_CONST | C.CL_KERNEL_ARG_TYPE_RESTRICT),
    ("scratch", C.CL_KERNEL_ARG_ADDRESS_LOCAL, "int*", 0),
    ("c", C.CL_KERNEL_ARG_ADDRESS_CONSTANT, "float4*", C.CL_KERNEL_ARG_TYPE_CONST),
    ("v", C.CL_KERNEL_ARG_ADDRESS_GLOBAL, "uint*", C.CL_KERNEL_ARG_TYPE_VOLATILE),
    ("n", C.CL_KERNEL_ARG_ADDRESS_PRIVATE, "int", 0),
    ("f", C.CL_KERNEL_ARG_ADDRESS_PRIVATE, "float4", 0)]


def arg_info_problems(got, expected=ARG_INFO_EXPECTED):
    """got: [(name, address, type name, qualifier)] -> messages."""
    out = []
    for i, (g, e) in enumerate(zip(got, expected)):
        for what, a, b in zip(("CL_KERNEL_ARG_NAME", "CL_KERNEL_ARG_ADDRESS_QUALIFIER",
                               "CL_KERNEL_ARG_TYPE_NAME", "CL_KERNEL_ARG_TYPE_QUALIFIER"), g, e):
            if what == "CL_KERNEL_ARG_TYPE_QUALIFIER" and e[1] == C.CL_KERNEL_ARG_ADDRESS_CONSTANT:
                a &= ~C.CL_KERNEL_ARG_TYPE_CONST  # __constant may or may not report CONST
                b &= ~C.CL_KERNEL_ARG_TYPE_CONST
            if a != b:
                out.append(f"argument {i} ({e[0]}): {what} = {a!r}, expected {b!r}")
    if len(got) != len(expected):
        out.append(f"{len(got)} arguments described, expected {len(expected)}")
    return out


@check
def kernel_arg_info(env, t):
    """clGetKernelArgInfo with -cl-kernel-arg-info: names, address/type qualifiers, type names"""
    cl = env.cl
    prog = env.program(t, ARG_INFO_SRC, "-cl-kernel-arg-info")
    k = env.kernel(t, prog, "k")
    got = []
    for i in range(len(ARG_INFO_EXPECTED)):
        got.append((C.info(cl.clGetKernelArgInfo, k, i, C.CL_KERNEL_ARG_NAME),
                    C.info(cl.clGetKernelArgInfo, k, i, C.CL_KERNEL_ARG_ADDRESS_QUALIFIER, kind="uint"),
                    C.info(cl.clGetKernelArgInfo, k, i, C.CL_KERNEL_ARG_TYPE_NAME),
                    C.info(cl.clGetKernelArgInfo, k, i, C.CL_KERNEL_ARG_TYPE_QUALIFIER, kind="ulong")))
        access = C.info(cl.clGetKernelArgInfo, k, i, C.CL_KERNEL_ARG_ACCESS_QUALIFIER, kind="uint")
        t.eq(access, 0x11A3, f"argument {i}: CL_KERNEL_ARG_ACCESS_QUALIFIER (CL_KERNEL_ARG_ACCESS_NONE)")
    for m in arg_info_problems(got):
        t.true(False, m)
    t.code(lambda: cl.clGetKernelArgInfo(k, 6, C.CL_KERNEL_ARG_NAME, 0, None, byref(c_size_t())),
           C.CL_INVALID_ARG_INDEX, "clGetKernelArgInfo(arg_index=6 of 6 arguments)")
    prog2 = env.program(t, ARG_INFO_SRC)
    k2 = env.kernel(t, prog2, "k")
    code = cl.clGetKernelArgInfo(k2, 0, C.CL_KERNEL_ARG_ADDRESS_QUALIFIER, 4, byref(C.cl_uint()), None)
    t.code(code, (C.CL_SUCCESS, C.CL_KERNEL_ARG_INFO_NOT_AVAILABLE),
           "clGetKernelArgInfo(address qualifier) without -cl-kernel-arg-info")


@check
def kernel_arg_errors(env, t):
    """clSetKernelArg and clEnqueueNDRangeKernel error codes"""
    cl, q = env.cl, env.queue
    src = ("__kernel void k(__global int *o, int n, __local int *l) { o[get_global_id(0)] = n; }\n"
           "__kernel __attribute__((reqd_work_group_size(2, 1, 1))) void r(__global int *o) { o[0] = 1; }\n")
    prog = env.program(t, src)
    k = env.kernel(t, prog, "k")
    buf = env.buffer(t, 4096)
    n = C.cl_int(5)
    big = C.cl_ulong(5)
    g = (c_size_t * 3)(16, 1, 1)
    t.code(lambda: cl.clEnqueueNDRangeKernel(q, k, 1, None, g, None, 0, None, None), C.CL_INVALID_KERNEL_ARGS,
           "clEnqueueNDRangeKernel before any argument was set")
    t.code(lambda: cl.clSetKernelArg(k, 3, 4, byref(n)), C.CL_INVALID_ARG_INDEX, "clSetKernelArg(index 3 of 3)")
    t.code(lambda: cl.clSetKernelArg(k, 1, 8, byref(big)), C.CL_INVALID_ARG_SIZE,
           "clSetKernelArg(int argument, size 8)")
    t.code(lambda: cl.clSetKernelArg(k, 1, 4, None), C.CL_INVALID_ARG_VALUE,
           "clSetKernelArg(int argument, arg_value NULL)")
    t.code(lambda: cl.clSetKernelArg(k, 2, 0, None), C.CL_INVALID_ARG_SIZE,
           "clSetKernelArg(__local argument, size 0)")
    t.code(lambda: cl.clSetKernelArg(k, 2, 64, byref(n)), C.CL_INVALID_ARG_VALUE,
           "clSetKernelArg(__local argument, arg_value not NULL)")
    bogus = c_void_p(env.queue)
    t.code(lambda: cl.clSetKernelArg(k, 0, ctypes.sizeof(c_void_p), byref(bogus)), C.CL_INVALID_MEM_OBJECT,
           "clSetKernelArg(__global argument, a queue handle)")
    t.code(lambda: cl.clSetKernelArg(k, 0, 4, byref(n)), C.CL_INVALID_ARG_SIZE,
           "clSetKernelArg(__global argument, size 4)")
    env.set_args(t, k, ("mem", buf), n, ("local", 64))
    for dim in (0, 4):
        t.code(lambda: cl.clEnqueueNDRangeKernel(q, k, dim, None, g, None, 0, None, None),
               C.CL_INVALID_WORK_DIMENSION, f"clEnqueueNDRangeKernel(work_dim={dim})")
    maxwg = env.device_info(C.CL_DEVICE_MAX_WORK_GROUP_SIZE, "size")
    gg = (c_size_t * 1)(maxwg * 2)
    ll = (c_size_t * 1)(maxwg * 2)
    t.code(lambda: cl.clEnqueueNDRangeKernel(q, k, 1, None, gg, ll, 0, None, None),
           (C.CL_INVALID_WORK_GROUP_SIZE, C.CL_INVALID_WORK_ITEM_SIZE),
           f"clEnqueueNDRangeKernel(local={maxwg * 2} > CL_DEVICE_MAX_WORK_GROUP_SIZE={maxwg})")
    g16, l5 = (c_size_t * 1)(16), (c_size_t * 1)(5)
    t.code(lambda: cl.clEnqueueNDRangeKernel(q, k, 1, None, g16, l5, 0, None, None), C.CL_INVALID_WORK_GROUP_SIZE,
           "clEnqueueNDRangeKernel(global=16, local=5) of an OpenCL C 1.x program (uniform groups)")
    kr = env.kernel(t, prog, "r")
    env.set_args(t, kr, ("mem", buf))
    l4 = (c_size_t * 1)(4)
    t.code(lambda: cl.clEnqueueNDRangeKernel(q, kr, 1, None, g16, l4, 0, None, None),
           C.CL_INVALID_WORK_GROUP_SIZE, "clEnqueueNDRangeKernel(local=4) of reqd_work_group_size(2,1,1)")
    t.code(cl.clEnqueueNDRangeKernel(q, k, 1, None, g16, None, 0, None, None), C.CL_SUCCESS,
           "clEnqueueNDRangeKernel with every argument set")
    t.code(lambda: cl.clEnqueueNDRangeKernel(q, None, 1, None, g16, None, 0, None, None), C.CL_INVALID_KERNEL,
           "clEnqueueNDRangeKernel(kernel=NULL)")
    ctx2 = env.new_context(t)
    q2 = env.new_queue(t, ctx2)
    t.code(lambda: cl.clEnqueueNDRangeKernel(q2, k, 1, None, g16, None, 0, None, None), C.CL_INVALID_CONTEXT,
           "clEnqueueNDRangeKernel(a queue of another context)")
    theirs = env.buffer(t, 64, ctx=ctx2)
    th = c_void_p(theirs)
    t.code(lambda: cl.clSetKernelArg(k, 0, ctypes.sizeof(c_void_p), byref(th)),
           (C.CL_INVALID_MEM_OBJECT, C.CL_INVALID_CONTEXT), "clSetKernelArg(a buffer of another context)")
    t.ok(cl.clFinish(q), "clFinish")


@check
def binaries_round_trip(env, t):
    """CL_PROGRAM_BINARIES rebuilt with clCreateProgramWithBinary run like the source"""
    cl = env.cl
    src = "__kernel void k(__global int *o, int v) { o[get_global_id(0)] = v * (int)get_global_id(0) + 3; }\n"
    prog = env.program(t, src)
    sizes = C.info(cl.clGetProgramInfo, prog, C.CL_PROGRAM_BINARY_SIZES, kind="sizes")
    t.eq(len(sizes), 1, "entries of CL_PROGRAM_BINARY_SIZES (one device)")
    t.require(sizes and sizes[0] > 0, f"CL_PROGRAM_BINARY_SIZES = {sizes}")
    binbuf = ctypes.create_string_buffer(sizes[0])
    ptrs_ = (c_void_p * 1)(ctypes.addressof(binbuf))
    t.ok(cl.clGetProgramInfo(prog, C.CL_PROGRAM_BINARIES, ctypes.sizeof(ptrs_), ptrs_, None),
         "clGetProgramInfo(CL_PROGRAM_BINARIES)")
    lengths = (c_size_t * 1)(sizes[0])
    status = (C.cl_int * 1)(12345)
    p2, code = env.create("clCreateProgramWithBinary", env.context, 1, C.ptrs([env.device]), lengths, ptrs_, status)
    t.ok(code, "clCreateProgramWithBinary(the program's own binary)")
    t.cleanup(cl.clReleaseProgram, p2)
    t.eq(status[0], C.CL_SUCCESS, "binary_status[0]")
    t.ok(cl.clBuildProgram(p2, 1, C.ptrs([env.device]), b"", None, None), "clBuildProgram(from binary)")
    k = env.kernel(t, p2, "k")
    out = env.buffer(t, 4 * 8)
    env.set_args(t, k, ("mem", out), C.cl_int(7))
    env.enqueue(t, k, (8,))
    got = np.frombuffer(env.read(t, out, 32), dtype=np.int32).tolist()
    t.eq(got, [7 * i + 3 for i in range(8)], "results of the kernel rebuilt from its binary")


@check
def predefined_macros(env, t):
    """__OPENCL_VERSION__, __OPENCL_C_VERSION__, CL_VERSION_1_x, __ENDIAN_LITTLE__, __IMAGE_SUPPORT__"""
    src = r"""
__kernel void k(__global int *o)
{
    o[0] = __OPENCL_VERSION__;
#ifdef __OPENCL_C_VERSION__
    o[1] = __OPENCL_C_VERSION__;
#else
    o[1] = -1;
#endif
    o[2] = CL_VERSION_1_0 + CL_VERSION_1_1 + CL_VERSION_1_2;
#ifdef __ENDIAN_LITTLE__
    o[3] = __ENDIAN_LITTLE__;
#else
    o[3] = 0;
#endif
#ifdef __IMAGE_SUPPORT__
    o[4] = __IMAGE_SUPPORT__;
#else
    o[4] = 0;
#endif
#ifdef __FAST_RELAXED_MATH__
    o[5] = 1;
#else
    o[5] = 0;
#endif
    o[6] = __LINE__;
}
"""
    prog = env.program(t, src)
    got = _run_ints(env, t, prog, "k", 7)
    dv = env.version
    t.eq(got[0], dv[0] * 100 + dv[1] * 10, "__OPENCL_VERSION__ vs CL_DEVICE_VERSION")
    cver = parse_version(env.device_info(C.CL_DEVICE_OPENCL_C_VERSION), "OpenCL C") or (1, 2)
    # without -cl-std, 1.x devices compile OpenCL C 1.x: __OPENCL_C_VERSION__ is the default version
    t.true(got[1] in (-1, 100, 110, 120, 200, 300) and got[1] <= cver[0] * 100 + cver[1] * 10,
           f"__OPENCL_C_VERSION__ = {got[1]} (device OpenCL C {cver[0]}.{cver[1]})")
    t.eq(got[2], 100 + 110 + 120, "CL_VERSION_1_0 + CL_VERSION_1_1 + CL_VERSION_1_2")
    little = env.device_info(C.CL_DEVICE_ENDIAN_LITTLE, "uint")
    t.eq(got[3], 1 if little else 0, "__ENDIAN_LITTLE__ vs CL_DEVICE_ENDIAN_LITTLE")
    images = env.device_info(C.CL_DEVICE_IMAGE_SUPPORT, "uint")
    t.eq(got[4], 1 if images else 0, "__IMAGE_SUPPORT__ vs CL_DEVICE_IMAGE_SUPPORT")
    t.eq(got[5], 0, "__FAST_RELAXED_MATH__ without -cl-fast-relaxed-math")
    t.eq(got[6], src[:src.index("__LINE__")].count("\n") + 1, "__LINE__")
    prog2 = env.program(t, src, "-cl-fast-relaxed-math")
    t.eq(_run_ints(env, t, prog2, "k", 7)[5], 1, "__FAST_RELAXED_MATH__ with -cl-fast-relaxed-math")


@check
def several_strings(env, t):
    """clCreateProgramWithSource with several strings, explicit lengths and a 0 (NUL-terminated)"""
    parts = [b"#define A 5\nint helper(int x) { return x + A; }\nGARBAGE_AFTER_LENGTH",
             b"__kernel void k(__global int *o) ", b"{ o[0] = helper(10); }"]
    strings = (ctypes.c_char_p * 3)(*parts)
    lengths = (c_size_t * 3)(len(parts[0]) - len(b"GARBAGE_AFTER_LENGTH"), 0, len(parts[2]))
    prog, code = env.create("clCreateProgramWithSource", env.context, 3, strings, lengths)
    t.ok(code, "clCreateProgramWithSource(3 strings)")
    t.cleanup(env.cl.clReleaseProgram, prog)
    code = env.cl.clBuildProgram(prog, 1, C.ptrs([env.device]), b"", None, None)
    if code != C.CL_SUCCESS:
        t.fail(f"clBuildProgram: {C.err_name(code)}; log: {env.build_log(prog)[:500]}")
    src = C.info(env.cl.clGetProgramInfo, prog, C.CL_PROGRAM_SOURCE)
    t.eq(src, (parts[0][:lengths[0]] + parts[1] + parts[2]).decode(), "CL_PROGRAM_SOURCE (the concatenation)")
    t.eq(_run_ints(env, t, prog, "k", 1), [15], "result")


@check
def build_callback(env, t):
    """clBuildProgram with pfn_notify calls it once with the program"""
    import time
    calls = []
    cb = C.PROGRAM_NOTIFY(lambda p, u: calls.append((p, u)))
    src = b"__kernel void k(__global int *o) { o[0] = 1; }"
    strings = (ctypes.c_char_p * 1)(src)
    prog, code = env.create("clCreateProgramWithSource", env.context, 1, strings, None)
    t.ok(code, "clCreateProgramWithSource")
    t.cleanup(env.cl.clReleaseProgram, prog)
    code = env.cl.clBuildProgram(prog, 1, C.ptrs([env.device]), b"", cb, c_void_p(99))
    t.ok(code, "clBuildProgram(with pfn_notify)")
    deadline = time.monotonic() + 60
    while not calls and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    t.eq(len(calls), 1, "number of build callbacks")
    if calls:
        t.eq(calls[0], (prog, 99), "(program, user_data) passed to the build callback")


# ---------------------------------------------------------------------------- compile and link
CL_PROGRAM_BINARY_TYPE = 0x1184
BT_NONE, BT_OBJECT, BT_LIBRARY, BT_EXECUTABLE = 0, 1, 2, 4
CL_COMPILE_PROGRAM_FAILURE, CL_LINK_PROGRAM_FAILURE = -15, -17
CL_INVALID_LINKER_OPTIONS = -67


def _link_api(env, t):
    """clCompileProgram / clLinkProgram with argtypes (OpenCL 1.2); skips when the device has no
    linker."""
    if not env.device_info(C.CL_DEVICE_LINKER_AVAILABLE, "uint"):
        t.skip("CL_DEVICE_LINKER_AVAILABLE is false")
    dll = env.cl._dll
    comp, link = dll.clCompileProgram, dll.clLinkProgram
    comp.restype, comp.argtypes = C.cl_int, [C.handle, C.cl_uint, C.V, ctypes.c_char_p, C.cl_uint, C.V, C.V,
                                             C.V, C.V]
    link.restype, link.argtypes = C.handle, [C.handle, C.cl_uint, C.V, ctypes.c_char_p, C.cl_uint, C.V, C.V,
                                             C.V, C.V]
    return comp, link


def _source_program(env, t, src):
    strings = (ctypes.c_char_p * 1)(src.encode())
    prog, code = env.create("clCreateProgramWithSource", env.context, 1, strings, None)
    t.ok(code, "clCreateProgramWithSource")
    return t.cleanup(env.cl.clReleaseProgram, prog)


def _compile(env, t, comp, src, headers=(), options=b"", expect=C.CL_SUCCESS):
    prog = _source_program(env, t, src)
    n = len(headers)
    hp = C.ptrs([h for _, h in headers]) if n else None
    hn = (ctypes.c_char_p * n)(*[name for name, _ in headers]) if n else None
    code = comp(prog, 1, C.ptrs([env.device]), options, n, hp, hn, None, None)
    if code != expect:
        t.fail(f"clCompileProgram gave {C.err_name(code)}, expected {C.err_name(expect)}; "
               f"log: {env.build_log(prog).strip()[:800]}")
    return prog


def _link(env, t, link, progs, options=b"", expect=C.CL_SUCCESS):
    e = C.cl_int(12345)
    p = link(env.context, 1, C.ptrs([env.device]), options, len(progs), C.ptrs(progs), None, None, byref(e))
    if p:
        t.cleanup(env.cl.clReleaseProgram, p)
    if e.value != expect:
        t.fail(f"clLinkProgram(options={options!r}) gave {C.err_name(e.value)}, expected {C.err_name(expect)}"
               + (f"; log: {env.build_log(p).strip()[:800]}" if p else ""))
    return p


def _run_linked(env, t, prog, n=8):
    k = env.kernel(t, prog, "k")
    out = env.buffer(t, 4 * n)
    env.set_args(t, k, ("mem", out))
    env.enqueue(t, k, (n,))
    return np.frombuffer(env.read(t, out, 4 * n), dtype=np.int32).tolist()


def _binary_type(env, prog):
    return C.info(env.cl.clGetProgramBuildInfo, prog, env.device, CL_PROGRAM_BINARY_TYPE, kind="uint")


_LINK_MAIN = """#include "link_consts.h"
int helper(int x);
__kernel void k(__global int *o) { int i = get_global_id(0); o[i] = helper(i) + BASE; }
"""
_LINK_HELPER = "static int sq(int x) { return x * x; }\nint helper(int x) { return sq(x) + 1; }\n"
_LINK_EXPECTED = [i * i + 1 + 1000 for i in range(8)]


@check
def compile_and_link(env, t):
    """clCompileProgram with an input header, clLinkProgram of two objects; a function defined in one
    and called from the other; binary types compiled object / executable"""
    comp, link = _link_api(env, t)
    hdr = _source_program(env, t, "#define BASE 1000\n")
    main = _compile(env, t, comp, _LINK_MAIN, headers=[(b"link_consts.h", hdr)])
    helper = _compile(env, t, comp, _LINK_HELPER)
    t.eq(_binary_type(env, main), BT_OBJECT, "CL_PROGRAM_BINARY_TYPE after clCompileProgram")
    status = C.info(env.cl.clGetProgramBuildInfo, main, env.device, C.CL_PROGRAM_BUILD_STATUS, kind="int")
    t.eq(status, C.CL_BUILD_SUCCESS, "CL_PROGRAM_BUILD_STATUS after clCompileProgram")
    exe = _link(env, t, link, [main, helper])
    t.eq(_binary_type(env, exe), BT_EXECUTABLE, "CL_PROGRAM_BINARY_TYPE of the linked program")
    t.eq(_run_linked(env, t, exe), _LINK_EXPECTED, "results of the linked program")


@check
def link_library(env, t):
    """-create-library gives CL_PROGRAM_BINARY_TYPE_LIBRARY; an object linked with the library runs"""
    comp, link = _link_api(env, t)
    hdr = _source_program(env, t, "#define BASE 1000\n")
    main = _compile(env, t, comp, _LINK_MAIN, headers=[(b"link_consts.h", hdr)])
    helper = _compile(env, t, comp, _LINK_HELPER)
    lib = _link(env, t, link, [helper], b"-create-library")
    t.eq(_binary_type(env, lib), BT_LIBRARY, "CL_PROGRAM_BINARY_TYPE with -create-library")
    exe = _link(env, t, link, [main, lib])
    t.eq(_run_linked(env, t, exe), _LINK_EXPECTED, "results of object + library")


@check
def compiled_object_binaries(env, t):
    """CL_PROGRAM_BINARIES of a compiled object, re-created with clCreateProgramWithBinary (binary type
    compiled object), then linked"""
    comp, link = _link_api(env, t)
    cl = env.cl
    hdr = _source_program(env, t, "#define BASE 1000\n")
    main = _compile(env, t, comp, _LINK_MAIN, headers=[(b"link_consts.h", hdr)])
    helper = _compile(env, t, comp, _LINK_HELPER)
    sizes = C.info(cl.clGetProgramInfo, helper, C.CL_PROGRAM_BINARY_SIZES, kind="sizes")
    t.require(sizes and sizes[0] > 0, f"CL_PROGRAM_BINARY_SIZES of a compiled object = {sizes}")
    binbuf = ctypes.create_string_buffer(sizes[0])
    ptrs_ = (c_void_p * 1)(ctypes.addressof(binbuf))
    t.ok(cl.clGetProgramInfo(helper, C.CL_PROGRAM_BINARIES, ctypes.sizeof(ptrs_), ptrs_, None),
         "clGetProgramInfo(CL_PROGRAM_BINARIES) of a compiled object")
    lengths = (c_size_t * 1)(sizes[0])
    status = (C.cl_int * 1)(12345)
    p2, code = env.create("clCreateProgramWithBinary", env.context, 1, C.ptrs([env.device]), lengths, ptrs_, status)
    t.ok(code, "clCreateProgramWithBinary(a compiled object's binary)")
    t.cleanup(cl.clReleaseProgram, p2)
    t.eq(_binary_type(env, p2), BT_OBJECT, "CL_PROGRAM_BINARY_TYPE of the re-created object")
    exe = _link(env, t, link, [main, p2])
    t.eq(_run_linked(env, t, exe), _LINK_EXPECTED, "results with the re-created object")


@check
def compile_link_errors(env, t):
    """CL_COMPILE_PROGRAM_FAILURE with a log; CL_LINK_PROGRAM_FAILURE for an undefined function (its
    name in the log when a program is returned); CL_INVALID_LINKER_OPTIONS; CL_INVALID_OPERATION for
    linking a program that is not compiled"""
    comp, link = _link_api(env, t)
    bad = _compile(env, t, comp, "__kernel void k(__global int *o) { o[0] = missing_ident_q; }",
                   expect=CL_COMPILE_PROGRAM_FAILURE)
    t.true("missing_ident_q" in env.build_log(bad), "the compile log names the undeclared identifier")
    hdr = _source_program(env, t, "#define BASE 1000\n")
    main = _compile(env, t, comp, _LINK_MAIN, headers=[(b"link_consts.h", hdr)])
    p = _link(env, t, link, [main], expect=CL_LINK_PROGRAM_FAILURE)
    if p:
        t.true("helper" in env.build_log(p), f"the link log names the undefined function: "
                                            f"{env.build_log(p).strip()[:300]!r}")
    _link(env, t, link, [main], b"-cl-no-such-link-option", expect=CL_INVALID_LINKER_OPTIONS)
    src = _source_program(env, t, "int f(int x) { return x; }\n")
    _link(env, t, link, [src], expect=C.CL_INVALID_OPERATION)
