"""Device classes and devices with memory of their own (docs/devices.md).

`cpu-separate` runs kernels on the CPU but keeps its buffers in allocations of its own, so every
host access and every use on another device needs the transfers core/migration.py makes. These
tests check the results and the transfers made (counted: what is needed and no more), through
pyopencl in child processes that see the installed platform with PYPLAT_DEVICES set.
"""
import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pyopencl")

PRELUDE = '''
import json, sys
import numpy as np
import pyplat
pyplat.enable()
import pyopencl as cl
from pyplat.core import migration

mf = cl.mem_flags
platform = [p for p in cl.get_platforms() if p.name == "PyPlat"][0]
devices = platform.get_devices()
ctx = cl.Context(devices)
SRC = """
__kernel void twice_plus_one(__global int *a) { size_t i = get_global_id(0); a[i] = 2 * a[i] + 1; }
__kernel void add(__global const int *a, __global const int *b, __global int *c)
{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }
__kernel void fill_id(__global int *a, int base) { size_t i = get_global_id(0); a[i] = base + (int)i; }
"""
prg = cl.Program(ctx, SRC).build()
twice, add, fill_id = (cl.Kernel(prg, n) for n in ("twice_plus_one", "add", "fill_id"))
N = 1 << 14

def transfers():
    return migration.stats()["transfers"]

def read(q, buf, n=N):
    out = np.empty(n, np.int32)
    cl.enqueue_copy(q, out, buf)
    q.finish()
    return out

def report(**kw):
    print("RESULT " + json.dumps(kw))
'''


def run(body, devices):
    import os
    p = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], capture_output=True,
                       text=True, timeout=300, cwd="/",
                       env=dict(os.environ, PYPLAT_DEVICES=devices, PYPLAT_CACHE_DIR="off"))
    assert p.returncode == 0, p.stderr[-3000:]
    lines = [line for line in p.stdout.splitlines() if line.startswith("RESULT ")]
    return json.loads(lines[-1][len("RESULT "):])


def test_pyplat_devices_lists_device_classes():
    r = run('''
        report(names=[d.name for d in devices], shares=[d.get_info(cl.device_info.HOST_UNIFIED_MEMORY)
                                                        for d in devices])
    ''', "cpu,cpu-separate,cpu")
    assert len(r["names"]) == 3
    assert "own memory" in r["names"][1] and "own memory" not in r["names"][0] + r["names"][2]


@pytest.mark.parametrize("order", ["in-order", "out-of-order"])
def test_cpu_to_separate_to_cpu_pipeline_makes_the_transfers_it_needs_and_no_more(order):
    r = run(f'''
        props = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE if "{order}" == "out-of-order" else 0
        cpu, sep = (cl.CommandQueue(ctx, d, properties=props) for d in devices)
        a = np.arange(N, dtype=np.int32)
        buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
        migration.reset_stats()
        e1 = twice(cpu, (N,), None, buf)                       # host memory: nothing moves
        t1 = transfers()
        e2 = twice(sep, (N,), None, buf, wait_for=[e1])        # to the separate device: one
        t2 = transfers()
        e3 = twice(cpu, (N,), None, buf, wait_for=[e2])        # and back: one
        t3 = transfers()
        out = np.empty(N, np.int32)
        cl.enqueue_copy(cpu, out, buf, wait_for=[e3]).wait()   # current on the host: none
        out_sep = np.empty(N, np.int32)
        cl.enqueue_copy(sep, out_sep, buf).wait()              # a read takes any current copy
        report(t=[t1, t2, t3, transfers()], ok=bool((out == ((a * 2 + 1) * 2 + 1) * 2 + 1).all()),
               same=bool((out_sep == out).all()))
    ''', "cpu,cpu-separate")
    assert r["ok"] and r["same"]
    assert r["t"] == [0, 1, 2, 2]


def test_host_writes_and_reads_of_a_separate_device_buffer():
    r = run('''
        (sep,) = [cl.CommandQueue(ctx, d) for d in devices]
        buf = cl.Buffer(ctx, mf.READ_WRITE, 4 * N)
        a = np.arange(N, dtype=np.int32)
        migration.reset_stats()
        cl.enqueue_copy(sep, buf, a)                      # a write: to the device, no transfer
        twice(sep, (N,), None, buf)
        got = read(sep, buf)
        part = np.full(100, -7, np.int32)
        cl.enqueue_copy(sep, buf, part, dst_offset=400)   # a partial write: no transfer either
        got2 = read(sep, buf)
        m, _ = cl.enqueue_map_buffer(sep, buf, cl.map_flags.READ | cl.map_flags.WRITE, 0, (N,), np.int32)
        mapped = m.copy()                                 # a map: to the host (one transfer)
        m[:10] = 5
        del m
        sep.finish()
        before_kernel = transfers()
        twice(sep, (N,), None, buf)                       # written on the host: back (one)
        got3 = read(sep, buf)
        report(t=[before_kernel, transfers()], ok1=bool((got == 2 * a + 1).all()),
               ok2=bool((got2[100:200] == -7).all() and (got2[:100] == 2 * a[:100] + 1).all()),
               mapped=bool((mapped == got2).all()),
               ok3=bool((got3[:10] == 11).all() and (got3[200:] == 2 * (2 * a[200:] + 1) + 1).all()))
    ''', "cpu-separate")
    assert r["ok1"] and r["ok2"] and r["mapped"] and r["ok3"]
    assert r["t"] == [1, 2]


def test_between_two_separate_devices_and_sub_buffers_written_on_each():
    r = run('''
        q0, q1 = (cl.CommandQueue(ctx, d) for d in devices)
        half = N // 2
        parent = cl.Buffer(ctx, mf.READ_WRITE, 4 * N)
        subs = [parent.get_sub_region(4 * half * i, 4 * half) for i in range(2)]
        migration.reset_stats()
        e0 = fill_id(q0, (half,), None, subs[0], np.int32(1000))
        e1 = fill_id(q1, (half,), None, subs[1], np.int32(5000))
        out = np.empty(N, np.int32)
        cl.enqueue_copy(q0, out, parent, wait_for=[e0, e1]).wait()   # gathers device 1's half
        gathered = transfers()
        c = cl.Buffer(ctx, mf.READ_WRITE, 4 * half)
        add(q1, (half,), None, subs[0], subs[1], c).wait()             # device 0's half to device 1
        got = read(q0, c, half)
        report(t=[gathered, transfers()],
               ok=bool((out[:half] == 1000 + np.arange(half)).all() and (out[half:] == 5000 + np.arange(half)).all()),
               sums=bool((got == 6000 + 2 * np.arange(half)).all()))
    ''', "cpu-separate,cpu-separate")
    assert r["ok"] and r["sums"]
    assert r["t"] == [1, 2]


def test_migrate_mem_objects_moves_and_content_undefined_does_not():
    r = run('''
        cpu, sep = (cl.CommandQueue(ctx, d) for d in devices)
        a = np.arange(N, dtype=np.int32)
        buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
        migration.reset_stats()
        cl.enqueue_migrate_mem_objects(sep, [buf]).wait()             # to the device: one
        t1 = transfers()
        twice(sep, (N,), None, buf).wait()                            # already there: none
        t2 = transfers()
        cl.enqueue_migrate_mem_objects(sep, [buf], cl.mem_migration_flags.HOST).wait()   # back: one
        t3 = transfers()
        got = read(cpu, buf)
        scratch = cl.Buffer(ctx, mf.READ_WRITE, 4 * N)
        cl.enqueue_migrate_mem_objects(sep, [scratch], cl.mem_migration_flags.CONTENT_UNDEFINED).wait()
        fill_id(sep, (N,), None, scratch, np.int32(3)).wait()
        t4 = transfers()
        report(t=[t1, t2, t3, t4], ok=bool((got == 2 * a + 1).all()))
    ''', "cpu,cpu-separate")
    assert r["ok"] and r["t"] == [1, 1, 2, 2]


def test_conformance_subset_passes_on_the_separate_device(tmp_path, pyplat_command):
    import os
    p = subprocess.run(pyplat_command + ["conformance", "--quick", "--device", "own memory",
                                         "--json", str(tmp_path / "r.json")],
                       capture_output=True, text=True, timeout=900, cwd=tmp_path,
                       env=dict(os.environ, PYPLAT_DEVICES="cpu,cpu-separate"))
    report = json.loads((tmp_path / "r.json").read_text())
    assert "own memory" in report["device"]
    assert p.returncode == 0 and report["failed"] == 0 and report["passed"] >= 250, p.stdout[-3000:]


def test_cuda_without_a_gpu_is_no_device_and_no_error():
    """On a machine without libcuda or a GPU (CI), listing the class adds no device, says
    nothing on stderr, and the other devices work."""
    from pyplat.devices.cuda import driver_api
    if driver_api.api() is not None:
        pytest.skip("this machine has a CUDA driver")
    r = run('''
        q = cl.CommandQueue(ctx, devices[0])
        a = np.arange(N, dtype=np.int32)
        buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
        twice(q, (N,), None, buf)
        report(names=[d.name for d in devices], ok=bool((read(q, buf) == 2 * a + 1).all()))
    ''', "cpu,cuda")
    assert len(r["names"]) == 1 and r["ok"]


def test_a_space_that_loses_its_contents_fails_the_commands_that_need_them_until_rewritten():
    # What a kernel fault that breaks a GPU's context does (devices/cuda/faults.py), on cpu-separate:
    # ranges only that space held are lost; nothing reads zeros or stale bytes in their place.
    r = run('''
        from pyplat.core.platform import get_platform
        cpu, sep = (cl.CommandQueue(ctx, d) for d in devices)
        space = get_platform().devices[1].memory_space
        only_there = cl.Buffer(ctx, mf.READ_WRITE, 4 * N)
        fill_id(sep, (N,), None, only_there, np.int32(7))     # current only in the separate space
        on_host = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.arange(N, dtype=np.int32))
        sums = cl.Buffer(ctx, mf.READ_WRITE, 4 * N)
        add(sep, (N,), None, on_host, on_host, sums)          # on_host: current on both sides
        sep.finish()
        space.lose_contents("test reset")
        failed = []
        for q in (cpu, sep):
            try:
                read(q, only_there)
                failed.append(False)
            except cl.Error as e:
                failed.append("EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST" in str(e))
        ev = twice(sep, (N,), None, only_there)               # a kernel that needs the lost bytes
        try:
            ev.wait()
            kernel_status = ev.command_execution_status
        except cl.Error:
            kernel_status = -1
        cpu, sep = (cl.CommandQueue(ctx, d) for d in devices)  # (the old ones hold failed commands)
        kept = read(sep, on_host).tolist() == list(range(N))
        twice(sep, (N,), None, on_host)                       # brought back from the host copy
        kept_kernel = read(sep, on_host).tolist() == (2 * np.arange(N) + 1).tolist()
        fill_id(sep, (N,), None, only_there, np.int32(5))     # rewritten: usable again
        rewritten = read(sep, only_there).tolist() == (5 + np.arange(N)).tolist()
        report(failed=failed, kernel_status=kernel_status, kept=kept, kept_kernel=kept_kernel,
               rewritten=rewritten)
    ''', "cpu,cpu-separate")
    assert r["failed"] == [True, True]
    assert r["kernel_status"] < 0
    assert r["kept"] and r["kept_kernel"] and r["rewritten"]
