"""Compiler resource limits (compiler/limits.py): programs that ask for more than the device has
fail to build with a log line naming what is too big and the limit, quickly and without
materialising anything; deeply nested valid programs build and compute the right values; nesting
beyond what the compiler can take is a clean build error. Never an internal compiler error.

Builds that used to exhaust memory run in a child process under an address-space limit
(RLIMIT_AS), so that a regression fails the test instead of taking the test session down."""
import ctypes
import json
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from pyplat import cl
import pyplat.compiler as C
from pyplat.compiler import limits
from support.capi import CL, addr
from support.clobjects import (build_log, context_and_queue, create_kernel, create_program, make_buffer,
                               set_arg)
from support.linking import run_1d


@pytest.fixture(scope="module")
def env():
    yield from context_and_queue()


CHILD_AS_LIMIT = 6 << 30


def _child_build(source, timeout=60):
    """compiler.build(source) in a child process limited to CHILD_AS_LIMIT bytes of address space:
    (ok, log, seconds), or the child's death as an assertion."""
    code = ("import json, sys, time\nimport pyplat.compiler as C\nt = time.perf_counter()\n"
            "r = C.build(sys.stdin.read(), use_cache=False)\n"
            "print(json.dumps([r.ok, r.log, time.perf_counter() - t]))\n")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_AS_LIMIT, CHILD_AS_LIMIT))

    p = subprocess.run([sys.executable, "-c", code], input=source, capture_output=True, text=True,
                       timeout=timeout, preexec_fn=limit, cwd=tempfile.gettempdir())  # the installed pyplat
    assert p.returncode == 0, "build process died (%d): %s" % (p.returncode, p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def _clean_failure(log):
    assert "internal compiler error" not in log and "Traceback" not in log, log


def _build_via_api(ctx, source):
    prog = create_program(ctx, source.encode())
    return prog, CL.clBuildProgram(prog, 0, 0, 0, 0, 0)


def _run_int(env, source, n_out=4, inputs=None):
    ctx, dev, q = env
    prog, rc = _build_via_api(ctx, source)
    assert rc == 0, build_log(prog, dev)
    out = np.array(inputs if inputs is not None else [0] * n_out, np.int32)
    res = run_1d(ctx, q, prog, b"k", 1, [out], np.int32)
    CL.clReleaseProgram(prog)
    return list(res)


# ------------------------------------------------------------------------- __constant data
BIG = ("__constant int big[4294967295u] = {1};\n"
       "__kernel void k(__global int *o) { o[0] = big[0]; o[1] = big[1]; o[2] = big[1000]; }\n")


def test_device_reports_the_compilers_constant_buffer_limit(env):
    _, dev, _ = env
    v = ctypes.c_uint64()
    assert CL.clGetDeviceInfo(dev, cl.CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, 8, addr(v), 0) == 0
    assert v.value == limits.MAX_CONSTANT_BUFFER_SIZE


def test_16_gib_constant_array_is_a_quick_clean_build_failure():
    ok, log, seconds = _child_build(BIG)
    assert not ok
    _clean_failure(log)
    assert "'big'" in log and "CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE" in log and ":1:" in log, log
    assert seconds < 10


def test_constant_array_over_the_limit_through_the_api(env):
    ctx, dev, _ = env
    prog, rc = _build_via_api(ctx, BIG.replace("4294967295u", str(limits.MAX_CONSTANT_BUFFER_SIZE // 4 + 1)))
    assert rc == cl.CL_BUILD_PROGRAM_FAILURE
    assert "'big'" in build_log(prog, dev)
    CL.clReleaseProgram(prog)


def test_constant_array_of_the_limits_size_builds_fast_without_materialised_zeros(env):
    n = limits.MAX_CONSTANT_BUFFER_SIZE // 4
    src = ("__constant int big[%d] = {1, [%d] = 5};\n"
           "__constant char s[%d] = \"abc\";\n"
           "typedef struct { int a; float b[1000]; } S;\n"
           "__constant S st[%d] = {{7}, [200] = {.b[999] = 2.5f}};\n"
           "__kernel void k(__global int *o) { o[0] = big[0]; o[1] = big[1]; o[2] = big[1000];\n"
           "  o[3] = big[%d]; o[4] = s[0] + s[2] + s[3] + s[%d]; o[5] = st[0].a;\n"
           "  o[6] = (int)(st[200].b[999] * 2); o[7] = (int)st[100].b[5]; }\n"
           % (n, n - 1, limits.MAX_CONSTANT_BUFFER_SIZE, limits.MAX_CONSTANT_BUFFER_SIZE // 4004, n - 1,
              limits.MAX_CONSTANT_BUFFER_SIZE - 1))
    t = time.perf_counter()
    r = C.build(src, use_cache=False)
    assert r.ok, r.log
    assert time.perf_counter() - t < 5
    assert len(r.llvm_ir) < 100_000        # the zeros are zeroinitializer, not a megabyte of text
    assert _run_int(env, src, 8) == [1, 0, 0, 5, ord("a") + ord("c"), 7, 5, 0]


def test_one_byte_over_the_constant_limit_fails_also_at_function_scope():
    for src in ["__constant char c[%d] = {1};\n__kernel void k(__global int *o) { o[0] = c[o[1]]; }\n",
                "__kernel void k(__global int *o) { __constant char c[%d] = {1}; o[0] = c[o[1]]; }\n"]:
        r = C.build(src % (limits.MAX_CONSTANT_BUFFER_SIZE + 1), use_cache=False)
        assert not r.ok
        _clean_failure(r.log)
        assert "'c'" in r.log and "CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE" in r.log, r.log


def test_sparse_constant_exported_and_linked():
    a = C.compile_object("__constant int tab[4096] = {[4095] = 9, [3] = 4};\n")
    assert a.ok, a.log
    b = C.compile_object("extern __constant int tab[4096];\n"
                         "__kernel void k(__global int *o) { o[0] = tab[3] + tab[4095] + tab[o[1]]; }\n")
    assert b.ok, b.log
    r = C.link([a.data, b.data])
    assert r.ok, r.log


# ------------------------------------------------------------------------- private memory
PRIVATE = "__kernel void k(__global int *o) { int a[1 << 30]; a[o[1]] = 3; o[0] = a[o[2]]; }\n"


def test_huge_private_array_is_a_clean_build_failure(env):
    ok, log, seconds = _child_build(PRIVATE)
    assert not ok
    _clean_failure(log)
    assert "'a'" in log and "private memory" in log and str(limits.MAX_PRIVATE_SIZE) in log, log
    ctx, dev, _ = env
    prog, rc = _build_via_api(ctx, PRIVATE)
    assert rc == cl.CL_BUILD_PROGRAM_FAILURE
    CL.clReleaseProgram(prog)


def test_private_memory_of_called_functions_counts_and_the_limit_itself_runs(env):
    half = limits.MAX_PRIVATE_SIZE // 2
    over = ("void h(__global int *o) { char b[%d]; b[o[1]] = 1; o[0] += b[o[2]]; }\n"
            "__kernel void k(__global int *o) { char a[%d]; a[o[1]] = 2; o[0] = a[o[2]]; h(o); }\n"
            % (half, half))
    r = C.build(over, use_cache=False)
    assert not r.ok and "private memory" in r.log, r.log
    _clean_failure(r.log)
    size = limits.MAX_PRIVATE_SIZE - 4096      # just under the limit: runs on a worker thread
    ok = ("__kernel void k(__global int *o) { volatile char a[%d]; for (int i = 0; i < %d; i += 4096)"
          " a[i] = 1; a[o[1]] = 5; o[0] = a[o[2]] + a[%d]; }\n" % (size, size, size - 1))
    assert _run_int(env, ok, 3, [0, 7, 7]) == [5, 7, 7]


# ------------------------------------------------------------------------- nesting
def _chain(n):
    s = "int f%d(int x) { return x; }\n" % (n - 1)
    s += "".join("int f%d(int x) { return f%d(x) + 1; }\n" % (i, i + 1) for i in reversed(range(n - 1)))
    return s + "__kernel void k(__global int *o) { o[0] = f0(o[0]); }\n"


def test_chain_of_3000_helper_calls_builds_and_computes(env):
    limit = sys.getrecursionlimit()
    assert _run_int(env, _chain(3000), 1, [5]) == [5 + 2999]
    assert sys.getrecursionlimit() == limit       # raised only while building


def test_chain_declared_first_defined_in_call_order(env):
    n = 3000         # prototypes first: each call is typed before its callee's body
    s = "".join("int f%d(int x);\n" % i for i in range(n))
    s += "".join("int f%d(int x) { return f%d(x) + 2; }\n" % (i, i + 1) for i in range(n - 1))
    s += "int f%d(int x) { return x; }\n__kernel void k(__global int *o) { o[0] = f0(o[0]); }\n" % (n - 1)
    assert _run_int(env, s, 1, [1]) == [1 + 2 * (n - 1)]


def test_long_expressions_statements_and_nesting(env):
    sum10k = "__kernel void k(__global int *o) { int a = o[0]; o[0] = %s; }\n" % "+".join(["a"] * 10000)
    assert _run_int(env, sum10k, 1, [3]) == [30000]
    stmts = "__kernel void k(__global int *o) { int a = o[0]; %s o[0] = a; }\n" % ("a = a * 3 + 1;\n" * 5000)
    x = 1
    for _ in range(5000):
        x = (x * 3 + 1) & 0xFFFFFFFF
    assert _run_int(env, stmts, 1, [1]) == [np.int32(np.uint32(x))]
    d = 250          # clang's bracket limit is 256 (-fbracket-depth)
    parens = "__kernel void k(__global int *o) { o[0] = %so[0]%s; }\n" % ("(1 + " * d, ")" * d)
    assert _run_int(env, parens, 1, [1]) == [1 + d]
    ifs = "__kernel void k(__global int *o) { int a = o[0]; %s o[0] = a; }\n" % (
        "if (a > 0) { a--; " * d + "}" * d)
    assert _run_int(env, ifs, 1, [1000]) == [1000 - d]
    blocks = "__kernel void k(__global int *o) { int a = o[0]; %s o[0] = a; }\n" % ("{ a++; " * d + "}" * d)
    assert _run_int(env, blocks, 1, [0]) == [d]


def test_nesting_beyond_clang_and_compiler_limits_is_a_clean_failure():
    deep = "__kernel void k(__global int *o) { int a = o[0]; %s o[0] = a; }\n" % ("{ a++; " * 1000 + "}" * 1000)
    r = C.build(deep, use_cache=False)
    assert not r.ok and "bracket nesting level" in r.log, r.log
    ok, log, _ = _child_build("__kernel void k(__global int *o) { int a = o[0]; o[0] = %s; }\n"
                              % "+".join(["a"] * 100000))
    assert not ok and "nested too deeply" in log, log
    _clean_failure(log)


@pytest.mark.parametrize("n", [2])
def test_builds_on_other_threads_keep_working(n):
    """Builds from several threads at once (each on its own deep thread) all succeed."""
    import threading
    results = []

    def one():
        results.append(C.build(_chain(300), use_cache=False).ok)

    ts = [threading.Thread(target=one) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert results == [True] * n


def test_huge_local_array_builds_and_is_out_of_resources_at_enqueue(env):
    """__local memory is sized per launch: over CL_DEVICE_LOCAL_MEM_SIZE, clEnqueueNDRangeKernel
    answers CL_OUT_OF_RESOURCES ("insufficient resources such as ... local memory")."""
    ctx, dev, q = env
    src = ("__kernel void k(__global int *o) { __local int big[1 << 30]; big[o[1]] = 1;\n"
           "  barrier(CLK_LOCAL_MEM_FENCE); o[0] = big[o[2]]; }\n")
    prog, rc = _build_via_api(ctx, src)
    assert rc == 0, build_log(prog, dev)
    k = create_kernel(prog, b"k")
    buf = make_buffer(ctx, 16, 0)
    assert set_arg(k, 0, buf) == 0
    gws = (ctypes.c_size_t * 1)(1)
    assert CL.clEnqueueNDRangeKernel(q, k, 1, 0, addr(gws), 0, 0, 0, 0) == cl.CL_OUT_OF_RESOURCES
    assert CL.clFinish(q) == 0
    CL.clReleaseMemObject(buf)
    CL.clReleaseKernel(k)
    CL.clReleaseProgram(prog)


def test_build_without_a_deep_thread_still_works(monkeypatch):
    """Where no thread with the big stack can be made (address space limited), the build runs on
    the caller's thread, with the recursion limit it has."""
    monkeypatch.setattr(limits, "COMPILE_STACK_SIZE", 1 << 46)
    limit = sys.getrecursionlimit()
    r = C.build("__kernel void k(__global int *o) { o[0] = 1; }", use_cache=False)
    assert r.ok, r.log
    assert sys.getrecursionlimit() == limit
