"""A hardware fault in kernel code (a wild pointer, an access far out of a buffer) ends that
command with CL_OUT_OF_RESOURCES and one line naming the kernel and the work-group; the host
program goes on, later commands run, the worker threads keep working (docs/runtime.md, "Faults
in kernels"). Faults outside kernel code still reach the handler that was there before.

Every case runs in a child process: a regression must fail the test, not kill pytest.
"""
import os
import re
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pyopencl")

PRELUDE = '''
import ctypes, os, sys
import numpy as np
import pyplat
pyplat.enable()
import pyopencl as cl

SRC = """
__kernel void wild_write(__global int *o, int bad) {
    size_t i = get_global_id(0);
    if (i == (size_t)bad) { __global int *p = (__global int *)(size_t)64; *p = 1; }
    o[i] = (int)i;
}
__kernel void far_read(__global int *o, int bad) {
    size_t i = get_global_id(0);
    int v = 2 * (int)i;
    if (i == (size_t)bad) v = o[i + (1ul << 42)];
    o[i] = v;
}
__kernel void add_one(__global int *o) { o[get_global_id(0)] += 1; }
"""
N = 1 << 14
platform = [p for p in cl.get_platforms() if p.name == "PyPlat"][0]
ctx = cl.Context(platform.get_devices())
prg = cl.Program(ctx, SRC).build()
wild_write, far_read, add_one = (cl.Kernel(prg, n) for n in ("wild_write", "far_read", "add_one"))

def status(ev):
    try:
        ev.wait()
    except cl.RuntimeError:
        pass
    return ev.get_info(cl.event_info.COMMAND_EXECUTION_STATUS)
'''


def run_script(body, env=None, args=(), argv=()):
    p = subprocess.run([sys.executable, *args, "-c", PRELUDE + textwrap.dedent(body), *argv],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, **(env or {})), cwd="/")
    return p


@pytest.mark.parametrize("driver", ["pool", "basic"])
def test_a_faulting_kernel_fails_its_command_and_the_host_goes_on(driver):
    p = run_script('''
        q = cl.CommandQueue(ctx)
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * N)
        for kernel in (wild_write, far_read):
            for bad in (0, 5000, N - 1):
                ev = kernel(q, (N,), (64,), buf, np.int32(bad))
                print(kernel.function_name, bad, status(ev))
        # An explicit wait on the failed command fails; the queue's later commands run.
        failed = wild_write(q, (N,), (64,), buf, np.int32(3))
        waiting = add_one(q, (N,), None, buf, wait_for=[failed])
        print("waiting", status(waiting))
        cl.enqueue_fill_buffer(q, buf, np.int32(0), 0, 4 * N)
        for i in range(20):
            add_one(q, (N,), (64,), buf)
        out = np.empty(N, np.int32)
        cl.enqueue_copy(q, out, buf)
        q.finish()
        print("later", int(out.min()), int(out.max()))
    ''', env={"PYPLAT_DRIVER": driver})
    assert p.returncode == 0, p.stderr[-3000:]
    lines = p.stdout.split("\n")
    for kernel in ("wild_write", "far_read"):
        for bad in (0, 5000, (1 << 14) - 1):
            assert f"{kernel} {bad} -5" in lines
            group = f"({bad // 64}, 0, 0)"
            assert any(line.startswith(f"pyplat: kernel '{kernel}' faulted in work-group {group}")
                       and "CL_OUT_OF_RESOURCES" in line for line in p.stderr.split("\n")), p.stderr
    assert "waiting -14" in lines                  # CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    assert "later 20 20" in lines


def test_faults_in_many_workers_at_once_end_one_command():
    """Every work-group faults: each worker thread recovers, one line is printed, the command
    fails once; then the pool runs a large launch correctly on all its threads."""
    p = run_script('''
        q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * N)
        prg2 = cl.Program(ctx, "__kernel void all_bad(__global int *o) { "
                               "((__global int *)(size_t)8)[get_global_id(0)] = 1; }").build()
        events = [prg2.all_bad(q, (N,), (16,), buf) for _ in range(8)]
        print("statuses", sorted({status(e) for e in events}))
        cl.enqueue_fill_buffer(q, buf, np.int32(5), 0, 4 * N).wait()
        add_one(q, (N,), (16,), buf).wait()
        out = np.empty(N, np.int32)
        cl.enqueue_copy(q, out, buf).wait()
        print("later", int(out.min()), int(out.max()))
    ''', env={"PYPLAT_WORKERS": "4"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert "statuses [-5]" in p.stdout and "later 6 6" in p.stdout, p.stdout
    assert p.stderr.count("pyplat: kernel 'all_bad' faulted") == 8, p.stderr


@pytest.mark.parametrize("faulthandler", ["off", "first", "late"])
def test_a_fault_outside_kernel_code_reaches_the_handler_from_before(faulthandler):
    """After kernels ran (every pool thread armed its guard once), a fault in the host program
    is not ours: the process ends with SIGSEGV, through Python's faulthandler when enabled --
    also when it was enabled after PyPlat loaded (its handler over ours; a new context puts
    ours in front again, and a kernel fault must not switch faulthandler off)."""
    p = run_script('''
        if sys.argv[-1] == "late":
            import faulthandler
            faulthandler.enable()
            cl.Context(platform.get_devices())
        q = cl.CommandQueue(ctx)
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * N)
        status(wild_write(q, (N,), (64,), buf, np.int32(7)))
        add_one(q, (N,), None, buf).wait()
        print("before", flush=True)
        print("host fault next", file=sys.stderr, flush=True)
        ctypes.string_at(16)
        print("after: the fault was swallowed")
    ''', args=["-X", "faulthandler"] if faulthandler == "first" else [], argv=[faulthandler])
    assert p.returncode == -11, (p.returncode, p.stdout, p.stderr[-2000:])
    assert "before" in p.stdout and "after" not in p.stdout
    assert "pyplat: kernel 'wild_write' faulted" in p.stderr
    kernel_part, host_part = p.stderr.split("host fault next")
    assert "Fatal Python error" not in kernel_part, kernel_part[-2000:]
    assert ("Fatal Python error: Segmentation fault" in host_part) == (faulthandler != "off"), \
        host_part[-2000:]


def test_libclang_crash_recovery_keeps_working_next_to_kernel_faults():
    """libclang recovers from its own crashes with handlers of its own (installed with its first
    index, behind ours): a kernel fault must not switch that recovery off, and a clang crash
    must not switch ours off."""
    p = run_script('''
        crash = ("__kernel void k(__global float4 *o) {\\n"
                 "    o[0] = as_float4(select y (as_uint4((float4)(1.0f)), (uint4)(0), (uint4)(1)));\\n}\\n")
        def clang_crash_is_a_build_error():
            try:
                cl.Program(ctx, crash).build()
            except cl.RuntimeError as e:
                return "BUILD_PROGRAM_FAILURE" in str(e) and "internal compiler error" not in str(e)
            return False
        q = cl.CommandQueue(ctx)
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * N)
        for round in range(2):
            print("clang", clang_crash_is_a_build_error())
            print("kernel", status(far_read(q, (N,), (64,), buf, np.int32(100))))
        from pyplat.runtime.faults import fault_guard_installed
        print("on top", fault_guard_installed())
    ''', env={"PYPLAT_CACHE_DIR": "off"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.count("clang True") == 2 and p.stdout.count("kernel -5") == 2, p.stdout
    assert "on top True" in p.stdout


LINES_SRC = '''
#include "helper.h"
__kernel void wild_in_kernel(__global int *o, int bad) {
    size_t i = get_global_id(0);
    if (i == (size_t)bad)
        *(__global int *)(size_t)64 = 1;               /* line 6 */
    o[i] = (int)i;
}
__kernel void wild_in_helper(__global int *o, int bad) {
    o[get_global_id(0)] = poke(get_global_id(0) == (size_t)bad, o);
}
__kernel void wild_after_barrier(__global int *o, __local int *t, int bad) {
    size_t l = get_local_id(0);
    t[l] = (int)l;
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = t[(l + 1) % get_local_size(0)];
    if (get_global_id(0) == (size_t)bad) v = o[(size_t)1 << 42];       /* line 17 */
    o[get_global_id(0)] = v;
}
'''
HELPER_H = "int poke(int yes, __global int *o) {\n    if (yes)\n        return o[(size_t)1 << 41];\n    return 1;\n}\n"


def lines_script(options, header_dir):
    return f'''
        src = {LINES_SRC!r}
        prg3 = cl.Program(ctx, src).build(options={options!r} + ["-I", {str(header_dir)!r}])
        q = cl.CommandQueue(ctx)
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * N)
        print("kernel", status(prg3.wild_in_kernel(q, (N,), (64,), buf, np.int32(70))), flush=True)
        print("helper", status(prg3.wild_in_helper(q, (N,), (64,), buf, np.int32(130))), flush=True)
        print("barrier", status(prg3.wild_after_barrier(q, (N,), (64,), buf, cl.LocalMemory(256),
                                                         np.int32(200))), flush=True)
        binary = prg3.get_info(cl.program_info.BINARIES)[0]
        again = cl.Program(ctx, platform.get_devices(), [binary]).build()
        print("binary", status(again.wild_in_kernel(q, (N,), (64,), buf, np.int32(300))), flush=True)
        add_one(q, (N,), (64,), buf).wait()
        print("alive")
    '''


def fault_lines(stderr):
    return [line for line in stderr.split("\n") if line.startswith("pyplat: kernel")]


@pytest.mark.parametrize("driver", ["pool", "basic"])
def test_a_program_built_with_g_has_its_faults_named_by_source_line(tmp_path, driver):
    """-g keeps a line table: the fault report names the faulting access's file:line:column,
    in the kernel, in an inlined helper from an included header, after a barrier (the barrier
    lowering's regions), and in a program made again from its binary."""
    (tmp_path / "helper.h").write_text(HELPER_H)
    p = run_script(lines_script(["-g"], tmp_path),
                   env={"PYPLAT_DRIVER": driver, "PYPLAT_CACHE_DIR": "off", "PYOPENCL_NO_CACHE": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    for name in ("kernel", "helper", "barrier", "binary"):
        assert f"{name} -5" in p.stdout, p.stdout
    assert "alive" in p.stdout
    faults = fault_lines(p.stderr)
    assert len(faults) == 4, p.stderr
    assert faults[0].startswith("pyplat: kernel 'wild_in_kernel' faulted in work-group (1, 0, 0) at <source>:6:9: "
                                "SIGSEGV"), faults[0]
    assert f"faulted in work-group (2, 0, 0) at {tmp_path}/helper.h:3:" in faults[1], faults[1]
    # (LLVM merges the two loads of v into one of a selected address: code of no one line, named
    # by the nearest line before it)
    assert re.search(r"faulted in work-group \(3, 0, 0\) (at|near) <source>:17:", faults[2]), faults[2]
    assert "faulted in work-group (4, 0, 0) at <source>:6:9: " in faults[3], faults[3]
    assert not any("-g for the source line" in f for f in faults)


def test_without_g_a_fault_report_says_how_to_get_the_line(tmp_path):
    (tmp_path / "helper.h").write_text(HELPER_H)
    p = run_script(lines_script([], tmp_path), env={"PYPLAT_CACHE_DIR": "off", "PYOPENCL_NO_CACHE": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    faults = fault_lines(p.stderr)
    assert len(faults) == 4 and all(f.endswith("(build the program with -g for the source line)")
                                    and "<source>:" not in f for f in faults), p.stderr


def test_cached_builds_keep_their_own_source_positions(tmp_path):
    """A build whose code or metadata carries source positions (-g line tables, PYPLAT_CHECK's
    sites) is served from the cache only for its exact text: a source that differs in blank
    lines alone (the same normal form) must report its own lines, not the cached build's."""
    body = '''
        src = "\\n" * int(sys.argv[-1]) + """__kernel void k(__global int *o) {
            size_t i = get_global_id(0);
            if (i == 9) *(__global int *)(size_t)64 = 1;
            o[i] = 1;
        }"""
        q = cl.CommandQueue(ctx)
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 64)
        status(cl.Program(ctx, src).build(options=["-g"]).k(q, (64,), (64,), buf))
    '''
    env = {"PYPLAT_CACHE_DIR": str(tmp_path / "cache"), "PYOPENCL_NO_CACHE": "1"}
    for blank_lines, check in ((1, None), (3, None), (1, "bounds"), (4, "bounds")):
        e = dict(env, PYPLAT_CHECK=check) if check else env
        p = run_script(body, env=e, argv=[str(blank_lines)])
        assert p.returncode == 0, p.stderr[-3000:]
        if check:           # the wild write on line 3 of the kernel: a finding, or a fault
            assert f"pointer to none of the kernel's objects, at <source>:{blank_lines + 3}:17" in p.stderr, p.stderr
        else:
            assert f"faulted in work-group (0, 0, 0) at <source>:{blank_lines + 3}:17" in p.stderr, p.stderr
