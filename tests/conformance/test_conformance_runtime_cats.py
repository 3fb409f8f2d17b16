"""The runner's own tests for the atomics, printf, profiling, thread_dimensions and multi_device
categories: each catches a deliberately broken implementation (a wrong answer fed to its validator,
or PoCL behind a lying wrapper of one entry point) and passes a correct one. PyPlat itself is not
run here (only in a child process, by `pyplat conformance`)."""
import ctypes
import os
import struct
import sys

import numpy as np
import pytest

from support import REPO

sys.path.append(str(REPO))          # the checkout's conformance/ package

from conformance import cat_atomics, cat_multi_device, cat_printf, cat_profiling  # noqa: E402
from conformance import cat_thread_dimensions, runner  # noqa: E402
from conformance import clapi as C  # noqa: E402
from conformance.framework import Check, run_check  # noqa: E402


from support.conformance_env import env, lying  # noqa: E402,F401 (fixtures)


def run(fn, env, category=cat_atomics.CATEGORY):
    return run_check(Check(category, fn, fn.__name__, True), env)


# --- atomics --------------------------------------------------------------------------------------------

def simulate(tname, ops, n, seed, order=None):
    """A correct execution of the atomics kernel body for n work-items in a random order:
    (init, final, olds, v, w, m) as the validator takes them."""
    rng = np.random.default_rng(seed)
    v, w, m, init = cat_atomics.make_inputs(rng, tname, n, n)
    bits = cat_atomics.TYPES[tname][2]
    init = [int(x) for x in init[0]]
    v, w, m = [int(x) for x in v], [int(x) for x in w], [int(x) for x in m]
    c = list(init)
    olds = [[0] * cat_atomics.NSLOT for _ in range(n)]
    wr = lambda x: cat_atomics.wrap(x, tname)  # noqa: E731
    nw = n // bits
    for i in (order if order is not None else [int(x) for x in rng.permutation(n)]):
        o = olds[i]
        o[0], c[0] = c[0], wr(c[0] + v[i])
        o[8], c[8] = c[8], wr(c[8] + w[i])
        o[1], c[1] = c[1], wr(c[1] - v[i])
        o[2], c[2] = c[2], wr(i + 1)
        o[3], c[3] = c[3], wr(c[3] + 1)
        o[4], c[4] = c[4], wr(c[4] - 1)
        o[5], c[5] = c[5], min(c[5], m[i])
        o[6], c[6] = c[6], max(c[6], m[i])
        o[7], c[7] = c[7], wr(c[7] + 1)
        o[9] = c[9]
        if c[9] == cat_atomics.CAS_INIT:
            c[9] = wr(i + cat_atomics.CAS_OFFSET)
        word, bit = i % nw, i // nw
        mask = (1 << bits) - 1
        for j, slot, fn in ((0, 10, lambda a, b: a & ~b), (1, 11, lambda a, b: a | b), (2, 12, lambda a, b: a ^ b)):
            at = 10 + j * nw + word
            o[slot], c[at] = c[at], wr(fn(c[at] & mask, 1 << bit))
    return init, c, olds, v, w, m


ALL = cat_atomics.BASE_OPS + cat_atomics.EXTENDED_OPS


@pytest.mark.parametrize("tname", ["int", "uint", "long", "ulong"])
def test_atomics_correct_history_passes(tname):
    init, final, olds, v, w, m = simulate(tname, ALL, 128, 1)
    assert cat_atomics.group_problems("k", tname, ALL, init, final, olds, v, w, m) == []


def test_atomics_lost_update_is_caught():
    init, final, olds, v, w, m = simulate("int", ALL, 128, 2)
    final[0] -= v[5]                      # one atomic_add lost
    final[8] = cat_atomics.wrap(final[8] + 1, "int")
    msgs = cat_atomics.group_problems("k", "int", ALL, init, final, olds, v, w, m)
    assert any("k add: the returned old values imply a final value" in x for x in msgs)
    assert any("k add of full-range values: total" in x for x in msgs)


def test_atomics_duplicate_ticket_is_caught():
    init, final, olds, v, w, m = simulate("uint", ALL, 128, 3)
    olds[7][3] = olds[9][3]               # two work-items got the same atomic_inc ticket
    msgs = cat_atomics.group_problems("k", "uint", ALL, init, final, olds, v, w, m)
    assert any("k inc (tickets): work-items" in x and "both got old value" in x for x in msgs)


def test_atomics_non_atomic_bit_ops_and_cmpxchg_are_caught():
    init, final, olds, v, w, m = simulate("int", ALL, 64, 4)
    olds[3][11] ^= 0x4000                 # an OR that saw one bit wrong
    olds[10][9] = cat_atomics.CAS_INIT    # two cmpxchg winners
    msgs = cat_atomics.group_problems("k", "int", ALL, init, final, olds, v, w, m)
    assert any(x.startswith("k or word") for x in msgs)
    assert any("2 work-items saw the initial value, expected 1" in x for x in msgs)


def test_atomics_min_returning_a_value_never_stored_is_caught():
    init, final, olds, v, w, m = simulate("uint", ALL, 64, 5)
    olds[0][5] = 12345                    # not an input, not the initial value
    msgs = cat_atomics.group_problems("k", "uint", ALL, init, final, olds, v, w, m)
    assert any("k min: work-item 0 got old value 12345" in x for x in msgs)


def test_atomics_lost_update_on_the_device_is_caught(env, lying):
    real = env.cl.clEnqueueReadBuffer
    # the counters buffer is the first one read back: take one away from its inc counter (slot 3)
    state = {"first": True}

    def read_lossy(q, buf, blocking, offset, size, ptr, n, waits, ev):
        code = real(q, buf, blocking, offset, size, ptr, n, waits, ev)
        if state["first"]:
            state["first"] = False
            p = ctypes.cast(ptr, ctypes.POINTER(ctypes.c_int32))
            p[3] -= 1
        return code

    lying(clEnqueueReadBuffer=read_lossy)
    r = run(cat_atomics.global_int32, env)
    assert r.status == "fail"
    assert "inc (tickets)" in r.message


# --- printf -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt,args,want", [
    ("%#o|%#o|%#x|%#X", [8, 0, 0, 255], "010|0|0|0XFF"),
    ("[%.0d][%+.0d][%5.3d][%-5d][%05d]", [0, 0, -7, 42, -42], "[][+][ -007][42   ][-0042]"),
    ("%hhd %hd %hhu %hx", [300, 70000, -1, -1], "44 4464 255 ffff"),
    ("%ld %lu", [-2 ** 63, 2 ** 64 - 1], "-9223372036854775808 18446744073709551615"),
    ("%05f|%-6e|%+g", [float("inf"), float("-inf"), float("nan")], "  inf|-inf  |+nan"),
    ("%a %a %A %.2a %#a", [1.0, 0.0, 0.1, 1 / 3, 2.0], "0x1p+0 0x0p+0 0X1.999999999999AP-4 0x1.55p-2 0x1.p+1"),
    ("%014a", [-1.75], "-0x000001.cp+0"),
    ("%5.2v4hlf", [[1.0, 2.5, -3.25, 100.0]], " 1.00, 2.50,-3.25,100.00"),
    ("%#v2hhx|%v3hd", [[0xFA, 0], [1, -2, 3]], "0xfa,0|1,-2,3"),
    ("%5.1s|%c%%", ["xyz", 65], "    x|A%"),
])
def test_printf_model_follows_c99(fmt, args, want):
    assert cat_printf.c_printf(fmt, args) == want


def test_printf_wrong_output_is_caught():
    cases = [("%5d|", [("int", 42)]), ("%x", [("uint", 255)]), ("%.2f", [("float", 3.14159)])]
    text = "@0:   42|\n@1:FF\n@2:3.14\n"
    msgs = cat_printf.case_problems(cases, text, [0, 0, 0])
    assert msgs == ["printf(\"%x\", ((uint)0xffUL)): expected 'ff', got 'FF'"]
    msgs = cat_printf.case_problems(cases, "@0:   42|\n@2:3.14\n@2:3.14\n", [0, -1, 0])
    assert any("printed 0 times" in x for x in msgs)
    assert any("printed 2 times" in x for x in msgs)
    assert any("returned -1" in x for x in msgs)


def test_printf_out_of_order_output_is_caught():
    good = "".join(f"wi {g} step {s} of 3\n" for s in range(3) for g in range(4))
    assert cat_printf.order_problems(good, 4, 3) == []
    swapped = good.replace("wi 2 step 0 of 3\n", "@@").replace("wi 2 step 1 of 3\n", "wi 2 step 0 of 3\n") \
        .replace("@@", "wi 2 step 1 of 3\n")
    assert cat_printf.order_problems(swapped, 4, 3) == ["work-item 2 printed its steps in the order [1, 0, 2]"]
    twice = good + "wi 1 step 2 of 3\n"
    assert cat_printf.order_problems(twice, 4, 3) == ["work-item 1 printed 4 lines, expected 3"]
    torn = good.replace("wi 3 step 1 of 3\n", "wi 3 stwi 0 step 9 of 3\n")
    assert "garbled" in cat_printf.order_problems(torn, 4, 3)[0]


def test_printf_stray_output_after_finish_is_caught(env, lying):
    real = env.cl.clFinish

    def finish(q):
        code = real(q)
        os.write(1, b"@0:extra\n")        # a platform printing the first case twice
        return code

    lying(clFinish=finish)
    r = run(cat_printf.integers, env, cat_printf.CATEGORY)
    assert r.status == "fail"
    assert 'printf("%d", ((int)0x0UL)): printed 2 times' in r.message


# --- profiling ----------------------------------------------------------------------------------------------

def test_profiling_problems():
    ok = {"QUEUED": 1, "SUBMIT": 2, "START": 3, "END": 5, "COMPLETE": 5}
    assert cat_profiling.order_problems(ok, "k") == []
    bad = dict(ok, END=2)
    assert cat_profiling.order_problems(bad, "k") == [
        "k: CL_PROFILING_COMMAND_START (3) > CL_PROFILING_COMMAND_END (2)"]
    seq = [("a", {"QUEUED": 1, "START": 3, "END": 10}), ("b", {"QUEUED": 2, "START": 9, "END": 12})]
    assert cat_profiling.sequence_problems(seq) == [
        "b STARTed at 9, before the previous command (a) ENDed at 10, on an in-order queue"]


def test_profiling_end_before_start_is_caught(env, lying):
    real = env.cl.clGetEventProfilingInfo

    def prof(ev, param, size, value, size_ret):
        code = real(ev, param, size, value, size_ret)
        if param == C.CL_PROFILING_COMMAND_END and value is not None and code == C.CL_SUCCESS:
            p = ctypes.cast(value, ctypes.POINTER(ctypes.c_uint64))
            p[0] -= 10 ** 9                  # END a second before START
        return code

    lying(clGetEventProfilingInfo=prof)
    r = run(cat_profiling.every_command_kind, env, cat_profiling.CATEGORY)
    assert r.status == "fail"
    assert "clEnqueueNDRangeKernel(spin): CL_PROFILING_COMMAND_START" in r.message


def test_profiling_info_without_the_flag_is_caught(env, lying):
    real = env.cl.clGetEventProfilingInfo

    def prof(ev, param, size, value, size_ret):
        real(ev, param, size, value, size_ret)
        return C.CL_SUCCESS                  # answers even when profiling is off

    lying(clGetEventProfilingInfo=prof)
    r = run(cat_profiling.not_available, env, cat_profiling.CATEGORY)
    assert r.status == "fail"
    assert "of a command of a queue without profiling: expected CL_PROFILING_INFO_NOT_AVAILABLE" in r.message


# --- thread_dimensions ----------------------------------------------------------------------------------------

def fake_records(gsize, lsize, offset):
    d = len(gsize)
    G = list(gsize) + [1] * (3 - d)
    L = list(lsize) + [1] * (3 - d)
    O = list(offset) + [0] * (3 - d)
    n = int(np.prod(G))
    rec = np.zeros((n, cat_thread_dimensions.NREC), dtype=np.uint32)
    for lin in range(n):
        x = [lin % G[0], (lin // G[0]) % G[1], lin // (G[0] * G[1])]
        for k in range(3):
            rec[lin, k] = x[k] + O[k]
            rec[lin, 3 + k] = x[k] % L[k]
            rec[lin, 6 + k] = x[k] // L[k]
            rec[lin, 10 + k] = G[k]
            rec[lin, 13 + k] = L[k]
            rec[lin, 16 + k] = G[k] // L[k]
            rec[lin, 19 + k] = O[k]
        rec[lin, 9] = d
    return np.ones(n, dtype=np.uint32), rec


LIMITS = (256, [256, 256, 256])


def test_thread_dimensions_correct_launch_passes():
    count, rec = fake_records((6, 4, 3), (3, 2, 1), (5, 0, 7))
    assert cat_thread_dimensions.dim_problems((6, 4, 3), (3, 2, 1), (5, 0, 7), count, rec, LIMITS) == []
    assert cat_thread_dimensions.dim_problems((6, 4, 3), None, (5, 0, 7), count, rec, LIMITS) == []


def test_thread_dimensions_work_item_run_twice_is_caught():
    count, rec = fake_records((10, 3), (5, 1), (0, 0))
    count[7] = 2
    count[8] = 0
    msgs = cat_thread_dimensions.dim_problems((10, 3), (5, 1), None, count, rec, LIMITS)
    assert msgs == ["2 of 30 work-items did not run exactly once (linear id 7 ran 2 times)"]


def test_thread_dimensions_wrong_ids_are_caught():
    count, rec = fake_records((8, 2), (4, 2), (1, 1))
    rec[5, 3] = 0                          # local id 0 where 1 is expected
    rec[:, 19] = 0                         # the offset dropped
    rec[:, 9] = 1
    msgs = cat_thread_dimensions.dim_problems((8, 2), (4, 2), (1, 1), count, rec, LIMITS)
    assert "get_local_id(0) of work-item (6, 1): 0, expected 1 (1 work-items wrong)" in msgs
    assert any(x.startswith("get_global_offset(0)") for x in msgs)
    assert "get_work_dim() is 1 in 16 work-items, expected 2" in msgs


def test_thread_dimensions_bad_implementation_local_size_is_caught():
    count, rec = fake_records((9,), (3,), (0,))
    rec[:, 13] = 2                         # local=NULL: the implementation says 2, which doesn't divide 9
    msgs = cat_thread_dimensions.dim_problems((9,), None, None, count, rec, LIMITS)
    assert "the local size chosen for local=NULL, [2], does not divide the global size [9]" in msgs


def test_thread_dimensions_accepting_invalid_sizes_is_caught(env, lying):
    lying(clEnqueueNDRangeKernel=lambda *a: C.CL_SUCCESS)
    r = run(cat_thread_dimensions.invalid_sizes, env, cat_thread_dimensions.CATEGORY)
    assert r.status == "fail"
    assert "clEnqueueNDRangeKernel(global=(9, 8), local=(2, 4): 9 % 2 != 0" in r.message


# --- multi_device ----------------------------------------------------------------------------------------------

def test_multi_device_child_gets_two_pyplat_devices(monkeypatch):
    monkeypatch.delenv("PYPLAT_DEVICES", raising=False)
    assert runner._child_env("multi_device")["PYPLAT_DEVICES"] == "2"
    assert "PYPLAT_DEVICES" not in runner._child_env("basic")
    monkeypatch.setenv("PYPLAT_DEVICES", "3")
    assert runner._child_env("multi_device")["PYPLAT_DEVICES"] == "3"


def test_multi_device_skips_with_one_device(env):
    if len(cat_multi_device.platform_devices(env)) > 1:
        pytest.skip("the platform has several devices")
    r = run(cat_multi_device.buffer_across_devices, env, cat_multi_device.CATEGORY)
    assert r.status == "skip" and "single device" in r.message


def twice_the_device(env):
    """A loader whose platform reports its one device twice (a context over both is a context
    over it; the queues of 'both devices' are two queues of it)."""
    real = env.cl.clGetDeviceIDs

    def device_ids(platform, dtype, n, devs, count):
        one = (ctypes.c_void_p * 1)()
        code = real(platform, dtype, 1, one, None)
        if count is not None:
            ctypes.cast(count, ctypes.POINTER(ctypes.c_uint32))[0] = 2
        if devs is not None:
            arr = ctypes.cast(devs, ctypes.POINTER(ctypes.c_void_p))
            for i in range(min(n, 2)):
                arr[i] = one[0]
        return code
    return device_ids


def test_multi_device_buffer_not_visible_on_the_second_device_is_caught(env, lying):
    real = env.cl
    first_queue = {}

    def ndrange(q, k, dims, off, g, loc, n, waits, ev):
        first_queue.setdefault("q", q)
        if q != first_queue["q"]:          # the 'second device' neither sees nor changes the buffer
            return real.clEnqueueMarkerWithWaitList(q, n, waits, ev)
        return real.clEnqueueNDRangeKernel(q, k, dims, off, g, loc, n, waits, ev)

    def create_context(props, n, devs, cb, user, err):
        return real.clCreateContext(props, 1, devs, cb, user, err)   # one distinct device

    lying(clGetDeviceIDs=twice_the_device(env), clCreateContext=create_context, clEnqueueNDRangeKernel=ndrange)
    r = run(cat_multi_device.buffer_across_devices, env, cat_multi_device.CATEGORY)
    assert r.status == "fail", r.message
    assert "kernels alternating between devices" in r.message
