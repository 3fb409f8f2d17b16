"""clCompileProgram / clLinkProgram (OpenCL 1.2 separate compilation), goto in kernels, barrier()
in helper functions: through the C API in process (support/capi.py), results checked on the host."""
import ctypes

import numpy as np
import pytest

from pyplat import cl
import pyplat.compiler as C
from support.capi import CL, addr, err
from support.clobjects import (build_log, build_status, context_and_queue, create_kernel, create_program,
                               program_binary)
from support.linking import NOTIFY, binary_type, compile_src, from_binary, link, run_1d, uniq


@pytest.fixture(scope="module")
def env():
    yield from context_and_queue()



MAIN = b"""#include "consts.h"
extern float scale(float x);
float offset(int i);
__kernel void apply(__global float *o, __global const float *in) {
    size_t i = get_global_id(0);
    o[i] = scale(in[i]) + offset((int)i) + BIAS;
}
"""
HELPERS = b"""
static float twice(float x) { return 2.0f * x; }          /* static: private to this unit */
float scale(float x) { return twice(x) + 1.0f; }
float offset(int i) { return (float)(i % 3); }
"""
OTHER = b"""
static float twice(float x) { return 100.0f * x; }        /* same static name, other unit */
__kernel void other(__global float *o) { o[get_global_id(0)] = twice(1.0f); }
"""


def _expected(n):
    x = np.arange(n, dtype=np.float32)
    return (2 * x + 1) + (np.arange(n) % 3) + 0.25, x


def test_compile_with_headers_and_link(env):
    ctx, dev, q = env
    hdr = create_program(ctx, b"#define BIAS 0.25f\n")
    main, rc = compile_src(ctx, uniq() + MAIN, b"-DUNUSED -cl-kernel-arg-info", headers=[(b"consts.h", hdr)])
    assert rc == 0, build_log(main, dev)
    assert build_status(main, dev) == cl.CL_BUILD_SUCCESS
    assert binary_type(main, dev) == cl.CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
    # a compiled object is not an executable
    e = err()
    assert CL.clCreateKernel(main, b"apply", addr(e)) == 0 and e.value == cl.CL_INVALID_PROGRAM_EXECUTABLE
    helpers, rc = compile_src(ctx, uniq() + HELPERS)
    assert rc == 0
    other, rc = compile_src(ctx, uniq() + OTHER)
    assert rc == 0
    calls = []

    @NOTIFY
    def notify(p, ud):
        calls.append((p, ud))
    exe, code = link(ctx, [main, helpers, other], notify=notify, user_data=1234)
    assert code == 0 and exe, build_log(exe, dev)
    assert calls == [(exe, 1234)]
    assert binary_type(exe, dev) == cl.CL_PROGRAM_BINARY_TYPE_EXECUTABLE
    assert build_status(exe, dev) == cl.CL_BUILD_SUCCESS
    names = ctypes.create_string_buffer(64)
    assert CL.clGetProgramInfo(exe, cl.CL_PROGRAM_KERNEL_NAMES, 64, addr(names), 0) == 0
    assert sorted(names.value.decode().split(";")) == ["apply", "other"]
    n = 37
    exp, x = _expected(n)
    out = run_1d(ctx, q, exe, b"apply", n, [np.zeros(n, np.float32), x])
    np.testing.assert_array_equal(out, exp)
    out = run_1d(ctx, q, exe, b"other", 4, [np.zeros(4, np.float32)])
    np.testing.assert_array_equal(out, [100.0] * 4)
    # kernel argument info survives the link (the runtime's written flags too)
    k = create_kernel(exe, b"apply")
    aq = ctypes.c_uint64()
    assert CL.clGetKernelArgInfo(k, 1, cl.CL_KERNEL_ARG_TYPE_QUALIFIER, 8, addr(aq), 0) == 0
    assert aq.value & cl.CL_KERNEL_ARG_TYPE_CONST
    tn = ctypes.create_string_buffer(32)
    assert CL.clGetKernelArgInfo(k, 0, cl.CL_KERNEL_ARG_TYPE_NAME, 32, addr(tn), 0) == 0
    assert tn.value == b"float*"
    CL.clReleaseKernel(k)
    # per kernel as its unit was compiled: OTHER's without -cl-kernel-arg-info
    k = create_kernel(exe, b"other")
    assert CL.clGetKernelArgInfo(k, 0, cl.CL_KERNEL_ARG_NAME, 32, addr(tn), 0) == cl.CL_KERNEL_ARG_INFO_NOT_AVAILABLE
    CL.clReleaseKernel(k)
    for p in (hdr, main, helpers, other, exe):
        CL.clReleaseProgram(p)


def test_metadata_survives_link_in_compiler():
    a = C.compile_object(b"extern void put(__global int *o, int v);\n"
                         b"__kernel __attribute__((reqd_work_group_size(2,1,1))) void k(__global int *w,"
                         b" __global int *r, __local int *l) { l[0] = r[0]; put(w, l[0]); }\n"
                         b"__kernel void k2(__global int *w, __global const int *r) { w[0] = r[0]; }".decode())
    b = C.compile_object("void put(__global int *o, int v) { o[get_global_id(0)] = v; }")
    assert a.ok and b.ok
    r = C.link([a.data, b.data], use_cache=False)
    assert r.ok, r.log
    k = r.kernels["k"]
    assert k.reqd_work_group_size == (2, 1, 1)
    assert [x.kind for x in k.args] == ["global", "global", "local"]
    # put() is compiled apart: it might make a pointer of its integer argument, so every
    # argument of k counts as written (compiler/pointer_writes.py); k2's answers survive as made
    assert k.args[0].written and k.args[1].written
    assert [x.written for x in r.kernels["k2"].args] == [True, False]


def test_library_and_binaries_of_objects(env):
    ctx, dev, q = env
    hdr = create_program(ctx, b"#define BIAS 0.25f\n")
    main, rc = compile_src(ctx, uniq() + MAIN, headers=[(b"consts.h", hdr)])
    assert rc == 0
    helpers, rc = compile_src(ctx, uniq() + HELPERS)
    assert rc == 0
    lib, code = link(ctx, [helpers], b"-create-library -enable-link-options")
    assert code == 0 and lib
    assert binary_type(lib, dev) == cl.CL_PROGRAM_BINARY_TYPE_LIBRARY
    # objects and libraries as binaries, re-created, then linked
    data_obj, data_lib = program_binary(main), program_binary(lib)
    assert data_obj and data_lib
    obj2, code, st = from_binary(ctx, dev, data_obj)
    assert code == 0 and st == 0
    assert binary_type(obj2, dev) == cl.CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
    lib2, code, st = from_binary(ctx, dev, data_lib)
    assert code == 0 and binary_type(lib2, dev) == cl.CL_PROGRAM_BINARY_TYPE_LIBRARY
    exe, code = link(ctx, [obj2, lib2])
    assert code == 0, build_log(exe, dev)
    n = 16
    exp, x = _expected(n)
    np.testing.assert_array_equal(run_1d(ctx, q, exe, b"apply", n, [np.zeros(n, np.float32), x]), exp)
    # the linked executable's binary loads back and runs
    data_exe = program_binary(exe)
    exe2, code, st = from_binary(ctx, dev, data_exe)
    assert code == 0 and CL.clBuildProgram(exe2, 0, 0, 0, 0, 0) == 0
    np.testing.assert_array_equal(run_1d(ctx, q, exe2, b"apply", n, [np.zeros(n, np.float32), x]), exp)
    # clBuildProgram on a compiled-object binary that needs nothing else: an executable
    alone, rc = compile_src(ctx, uniq() + b"__kernel void one(__global int *o) { o[get_global_id(0)] = 7; }")
    p3, code, st = from_binary(ctx, dev, program_binary(alone))
    assert code == 0 and CL.clBuildProgram(p3, 0, 0, 0, 0, 0) == 0
    assert binary_type(p3, dev) == cl.CL_PROGRAM_BINARY_TYPE_EXECUTABLE
    np.testing.assert_array_equal(run_1d(ctx, q, p3, b"one", 3, [np.zeros(3, np.int32)]), [7, 7, 7])
    # a compiled-object binary cannot be compiled again
    assert CL.clCompileProgram(obj2, 0, 0, 0, 0, 0, 0, 0, 0) == cl.CL_INVALID_OPERATION
    # a damaged object binary is rejected
    bad = bytearray(data_obj)
    bad[20:30] = b"x" * 10
    p, code, st = from_binary(ctx, dev, bytes(bad))
    assert code == cl.CL_INVALID_BINARY and p == 0
    for prog in (hdr, main, helpers, lib, obj2, lib2, exe, exe2, alone, p3):
        CL.clReleaseProgram(prog)


def test_link_errors(env):
    ctx, dev, q = env
    hdr = create_program(ctx, b"#define BIAS 1.0f\n")
    main, rc = compile_src(ctx, uniq() + MAIN, headers=[(b"consts.h", hdr)])
    assert rc == 0
    # unresolved symbol: the program exists, its log names the symbol
    exe, code = link(ctx, [main])
    assert code == cl.CL_LINK_PROGRAM_FAILURE and exe
    log = build_log(exe, dev)
    assert "scale" in log and "undefined" in log
    assert build_status(exe, dev) == cl.CL_BUILD_ERROR
    e = err()
    assert CL.clCreateKernel(exe, b"apply", addr(e)) == 0 and e.value == cl.CL_INVALID_PROGRAM_EXECUTABLE
    CL.clReleaseProgram(exe)
    # defined twice
    helpers, _ = compile_src(ctx, uniq() + HELPERS)
    helpers2, _ = compile_src(ctx, uniq() + HELPERS)
    exe, code = link(ctx, [main, helpers, helpers2])
    assert code == cl.CL_LINK_PROGRAM_FAILURE and "scale" in build_log(exe, dev)
    CL.clReleaseProgram(exe)
    # bad options, bad lists
    assert link(ctx, [main, helpers], b"-cl-no-such-option") == (0, cl.CL_INVALID_LINKER_OPTIONS)
    assert link(ctx, [main, helpers], b"-enable-link-options") == (0, cl.CL_INVALID_LINKER_OPTIONS)
    arr = (ctypes.c_size_t * 1)(main)
    e = err()
    assert CL.clLinkProgram(ctx, 0, 0, 0, 0, addr(arr), 0, 0, addr(e)) == 0 and e.value == cl.CL_INVALID_VALUE
    assert CL.clLinkProgram(ctx, 0, 0, 0, 1, 0, 0, 0, addr(e)) == 0 and e.value == cl.CL_INVALID_VALUE
    assert CL.clLinkProgram(ctx, 0, 0, 0, 1, addr(arr), 0, 5, addr(e)) == 0 and e.value == cl.CL_INVALID_VALUE
    # a source program (not compiled) or an executable is not linkable
    src = create_program(ctx, b"__kernel void z(__global int *o) { o[0] = 1; }")
    assert link(ctx, [src]) == (0, cl.CL_INVALID_OPERATION)
    assert CL.clBuildProgram(src, 0, 0, 0, 0, 0) == 0
    assert link(ctx, [src]) == (0, cl.CL_INVALID_OPERATION)
    # clCompileProgram: compile errors, options, header lists, attached kernels
    bad, rc = compile_src(ctx, b"__kernel void k(__global int *o) { o[0] = nope; }")
    assert rc == cl.CL_COMPILE_PROGRAM_FAILURE and "nope" in build_log(bad, dev)
    assert binary_type(bad, dev) == cl.CL_PROGRAM_BINARY_TYPE_NONE
    assert compile_src(ctx, b"__kernel void k() {}", b"-create-library")[1] == cl.CL_INVALID_COMPILER_OPTIONS
    hp = (ctypes.c_size_t * 1)(hdr)
    assert CL.clCompileProgram(src, 0, 0, 0, 1, addr(hp), 0, 0, 0) == cl.CL_INVALID_VALUE
    assert CL.clCompileProgram(src, 0, 0, 0, 0, addr(hp), 0, 0, 0) == cl.CL_INVALID_VALUE
    assert CL.clCompileProgram(src, 0, 0, 0, 0, 0, 0, 0, 7) == cl.CL_INVALID_VALUE
    k = create_kernel(src, b"z")
    assert CL.clCompileProgram(src, 0, 0, 0, 0, 0, 0, 0, 0) == cl.CL_INVALID_OPERATION
    CL.clReleaseKernel(k)
    # missing header: a compile failure with clang's message
    nohdr, rc = compile_src(ctx, b'#include "absent.h"\n__kernel void k() {}')
    assert rc == cl.CL_COMPILE_PROGRAM_FAILURE and "absent.h" in build_log(nohdr, dev)
    # a barrier-using function cannot be called from another unit
    bfun, rc = compile_src(ctx, uniq() + b"void sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }")
    assert rc == 0
    user, rc = compile_src(ctx, uniq() + b"void sync(void);\n__kernel void u(__global int *o) { sync(); o[0] = 1; }")
    assert rc == 0
    exe, code = link(ctx, [user, bfun])
    assert code == cl.CL_LINK_PROGRAM_FAILURE and "sync" in build_log(exe, dev) and "barrier" in build_log(exe, dev)
    for p in (hdr, main, helpers, helpers2, src, bad, nohdr, bfun, user, exe):
        CL.clReleaseProgram(p)


def test_link_refuses_mismatched_prototype():
    a = C.compile_object("int h(float x);\n__kernel void k(__global int *o) { o[0] = h(1.5f); }")
    b = C.compile_object("int h(int x) { return x; }")
    r = C.link([a.data, b.data], use_cache=False)
    assert not r.ok and "'h'" in r.log and "float" in r.log
    lib = C.link([b.data], "-create-library")
    assert lib.ok and not C.link([a.data, lib.data], use_cache=False).ok
    good = C.compile_object("int h(float x) { return (int)(2.0f * x); }")
    assert C.link([a.data, good.data], use_cache=False).ok


def test_compile_callback_called_once(env):
    ctx, dev, q = env
    prog = create_program(ctx, b"int f(int x) { return x + 1; }")
    calls = []

    @NOTIFY
    def notify(p, ud):
        calls.append((p, ud, build_status(p, dev)))
    fn = ctypes.cast(notify, ctypes.c_void_p).value
    assert CL.clCompileProgram(prog, 0, 0, 0, 0, 0, 0, fn, 42) == 0
    assert calls == [(prog, 42, cl.CL_BUILD_SUCCESS)]
    CL.clReleaseProgram(prog)


def test_device_reports_compiler_and_linker(env):
    ctx, dev, q = env
    for param in (cl.CL_DEVICE_COMPILER_AVAILABLE, cl.CL_DEVICE_LINKER_AVAILABLE):
        v = ctypes.c_uint32()
        assert CL.clGetDeviceInfo(dev, param, 4, addr(v), 0) == 0
        assert v.value == 1


def test_link_cache_distinguishes_inputs(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPLAT_CACHE_DIR", str(tmp_path))
    main = C.compile_object("extern int val(void);\n__kernel void k(__global int *o) { o[0] = val(); }")
    results = []
    for v in (3, 4):
        lib = C.compile_object("int val(void) { return %d; }" % v)
        r = C.link([main.data, lib.data])
        assert r.ok
        o = np.zeros(1, np.int32)
        from support.compiled import run
        run(r.kernels["k"], [o], (1,))
        results.append(int(o[0]))
        again = C.link([main.data, lib.data])
        assert again.timings.get("cached")
    assert results == [3, 4]


# ---------------------------------------------------------------------------- goto
GOTO = b"""
__kernel void tri(__global int *o) {          /* a loop made of goto, forward and backward jumps */
    int i = get_global_id(0), s = 0, j = 0;
top:
    if (j > i) goto done;
    s += j;
    j++;
    goto top;
done:
    if (s > 20) goto big;
    o[i] = s;
    return;
big:
    o[i] = -s;
}

float poly(float x) {                         /* goto in a helper: cephes-style early exits */
    float r;
    if (x < 0.0f) goto neg;
    if (x > 10.0f) goto huge;
    r = x * x;
    goto out;
neg:
    r = -1.0f;
    goto out;
huge:
    r = 1000.0f;
out:
    return r;
}
__kernel void usepoly(__global float *o, __global const float *in) {
    o[get_global_id(0)] = poly(in[get_global_id(0)]);
}

__kernel void nested(__global int *o) {       /* goto out of nested loops and into a loop's tail */
    int n = get_global_id(0), found = -1;
    for (int a = 0; a < 10; a++)
        for (int b = 0; b < 10; b++)
            if (a * b == n) { found = a * 100 + b; goto end; }
end:
    o[n] = found;
}
"""


def test_goto_kernels(env):
    ctx, dev, q = env
    prog = create_program(ctx, uniq() + GOTO)
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == 0, build_log(prog, dev)
    n = 12
    exp = []
    for i in range(n):
        s = i * (i + 1) // 2
        exp.append(-s if s > 20 else s)
    np.testing.assert_array_equal(run_1d(ctx, q, prog, b"tri", n, [np.zeros(n, np.int32)]), exp)
    x = np.array([-3, 0, 2.5, 10, 11, 4], np.float32)
    exp = np.where(x < 0, -1, np.where(x > 10, 1000, x * x)).astype(np.float32)
    np.testing.assert_array_equal(run_1d(ctx, q, prog, b"usepoly", 6, [np.zeros(6, np.float32), x]), exp)
    exp = []
    for m in range(40):
        f = -1
        for a in range(10):
            for b in range(10):
                if a * b == m:
                    f = a * 100 + b
                    break
            if f >= 0:
                break
        exp.append(f)
    np.testing.assert_array_equal(run_1d(ctx, q, prog, b"nested", 40, [np.zeros(40, np.int32)]), exp)
    CL.clReleaseProgram(prog)


def test_goto_with_barrier_is_reported(env):
    ctx, dev, q = env
    prog = create_program(ctx, uniq() + b"""
__kernel void gb(__global int *o, __local int *l) {
    int i = 0;
again:
    l[get_local_id(0)] = i;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (++i < 3) goto again;
    o[get_global_id(0)] = l[0];
}""")
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == cl.CL_BUILD_PROGRAM_FAILURE
    log = build_log(prog, dev)
    assert "'gb'" in log and "goto" in log and "barrier" in log and "not supported" in log
    CL.clReleaseProgram(prog)


# ---------------------------------------------------------------------------- barriers in helpers
HELPER_BARRIERS = b"""
float group_sum(__local float *buf, float v) {     /* tree reduction, barriers inside a helper */
    int l = get_local_id(0);
    buf[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (l < s)
            buf[l] += buf[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float r = buf[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
void rotate_local(__local int *t, __global int *io) {   /* void helper, reached through another */
    int l = get_local_id(0), n = get_local_size(0);
    t[l] = io[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    io[get_global_id(0)] = t[(l + 1) % n];
}
void outer(__local int *t, __global int *io) { rotate_local(t, io); barrier(CLK_LOCAL_MEM_FENCE); rotate_local(t, io); }

__kernel void sums(__global float *o, __global const float *in, __local float *buf) {
    int g = get_global_id(0);
    float mean = group_sum(buf, in[g]) / get_local_size(0);
    o[g] = in[g] - mean + group_sum(buf, 1.0f);
}
__kernel void rot2(__global int *io, __local int *t) { outer(t, io); }
"""


def test_barriers_in_helper_functions(env):
    ctx, dev, q = env
    prog = create_program(ctx, uniq() + HELPER_BARRIERS)
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == 0, build_log(prog, dev)
    wg, groups = 32, 3
    n = wg * groups
    x = (np.arange(n, dtype=np.float32) * 0.5) % 7
    out = run_1d(ctx, q, prog, b"sums", n, [np.zeros(n, np.float32), x, ("local", wg * 4)], local=wg)
    means = np.repeat(x.reshape(groups, wg).sum(1) / wg, wg)
    np.testing.assert_allclose(out, x - means + wg, rtol=1e-6, atol=1e-5)
    v = np.arange(n, dtype=np.int32)
    out = run_1d(ctx, q, prog, b"rot2", n, [v, ("local", wg * 4)], np.int32, local=wg)
    exp = v.reshape(groups, wg)
    exp = np.roll(exp, -2, axis=1).reshape(-1)
    np.testing.assert_array_equal(out, exp)
    CL.clReleaseProgram(prog)


def test_helper_barrier_early_return_builds_and_goto_is_reported(env):
    # an early return of a barrier helper is structured away (barrier_flow.py); goto is not
    ctx, dev, q = env
    prog = create_program(ctx, uniq() + b"""
int pick(__local int *t, int v) { if (v > 3) return 0; t[0] = v; barrier(CLK_LOCAL_MEM_FENCE); return t[0]; }
__kernel void k(__global int *o, __local int *t) { o[0] = pick(t, o[1]); }""")
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == cl.CL_SUCCESS, build_log(prog, dev)
    CL.clReleaseProgram(prog)
    prog = create_program(ctx, uniq() + b"""
int pick(__local int *t, int v) { if (v > 3) goto out; t[0] = v; barrier(CLK_LOCAL_MEM_FENCE); out: return t[0]; }
__kernel void k(__global int *o, __local int *t) { o[0] = pick(t, o[1]); }""")
    assert CL.clBuildProgram(prog, 0, 0, 0, 0, 0) == cl.CL_BUILD_PROGRAM_FAILURE
    log = build_log(prog, dev)
    assert "goto" in log and "barrier" in log and "internal" not in log
    CL.clReleaseProgram(prog)
