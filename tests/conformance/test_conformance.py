"""The conformance runner's own tests: every category's checks fail, with a useful message, on a
deliberately broken implementation (a fake answer fed to a validator, or a real platform behind
a lying wrapper of one entry point); the runner's reports; and a quick run against the installed
PyPlat exiting 0.

The lying-wrapper tests drive PoCL in this process through the system loader (skipped when no
"Portable" platform is installed): PyPlat itself is only run in a child, as `pyplat conformance`.
"""
import ctypes
import io
import json
import math
import os
import signal
import struct
import sys

import numpy as np

from support import REPO

# The checkout's conformance/ package; appended, so the installed pyplat still comes first.
sys.path.append(str(REPO))

from conformance import cat_api, cat_basic, cat_buffers, cat_compiler, cat_computeinfo  # noqa: E402
from conformance import cat_events, cat_images, cat_math, runner  # noqa: E402
from conformance import clapi as C  # noqa: E402
from conformance.framework import T, Check, probe, run_check  # noqa: E402


# --- a real platform behind a lying wrapper ---------------------------------------------------------

from support.conformance_env import env, lying  # noqa: E402,F401 (fixtures)


def run(fn, env):
    return run_check(Check(cat_api.CATEGORY, fn, fn.__name__, True), env)


# --- api ---------------------------------------------------------------------------------------------

def test_api_check_passes_on_the_real_platform(env):
    assert run(cat_api.sub_buffer_errors, env).status == "pass"


def test_api_wrong_error_code_is_reported(env, lying):
    lying(clGetPlatformIDs=lambda n, arr, count: C.CL_SUCCESS)
    r = run(cat_api.platform_ids_errors, env)
    assert r.status == "fail"
    assert "clGetPlatformIDs(0, list, NULL): expected CL_INVALID_VALUE(-30), got CL_SUCCESS(0)" in r.message


def test_api_handle_returned_with_an_error_is_reported(env, lying):
    real = env.cl.clCreateBuffer

    def create_buffer(ctx, flags, size, host, err):
        h = real(ctx, C.CL_MEM_READ_WRITE, 64, None, err)
        if size == 0:
            err._obj.value = C.CL_INVALID_BUFFER_SIZE  # right code, but a handle too
        return h

    lying(clCreateBuffer=create_buffer)
    r = run(cat_api.buffer_create_errors, env)
    assert r.status == "fail"
    assert "clCreateBuffer(size=0): returned a handle together with CL_INVALID_BUFFER_SIZE" in r.message


def test_api_crash_is_reported_not_suffered(env, lying):
    lying(clWaitForEvents=lambda n, evs: os.kill(os.getpid(), signal.SIGSEGV))  # a platform crashing
    r = run(cat_api.event_errors, env)
    assert r.status == "fail"
    assert "clWaitForEvents(0, NULL): expected CL_INVALID_VALUE(-30), got a crash (SIGSEGV)" in r.message


def test_probe_outcomes():
    assert probe(lambda: -30) == ("value", -30)
    assert probe(lambda: os.kill(os.getpid(), signal.SIGSEGV)) == ("crash", signal.SIGSEGV)
    assert probe(lambda: __import__("time").sleep(5), timeout=0.3) == ("timeout", None)


def test_recorder_messages():
    t = T()
    t.code(C.CL_SUCCESS, (C.CL_INVALID_VALUE, C.CL_INVALID_BUFFER_SIZE), "clX(bad)")
    t.eq(3, 4, "CL_SOMETHING")
    assert t.failures == ["clX(bad): expected CL_INVALID_VALUE(-30) or CL_INVALID_BUFFER_SIZE(-61), got CL_SUCCESS(0)",
                          "CL_SOMETHING: expected 4, got 3"]


# --- computeinfo -------------------------------------------------------------------------------------

def test_version_string_formats():
    assert cat_computeinfo.version_problem("OpenCL 3.0 PyPlat 0.1.0") is None
    assert "lacks the space" in cat_computeinfo.version_problem("OpenCL 3.0")
    assert "does not read" in cat_computeinfo.version_problem("OpenCL3.0 vendor")
    assert cat_computeinfo.version_problem("OpenCL C 1.2 x", "OpenCL C") is None
    assert "disagrees" in cat_computeinfo.numeric_version_problem((2 << 22) | (1 << 12), "OpenCL 3.0 x")
    assert "not cl_" in cat_computeinfo.extensions_problem("cl_khr_icd khr_bad")


def test_required_minimums():
    gb = 1 << 30
    assert cat_computeinfo.mem_alloc_minimum((3, 0), 16 * gb, C.CL_DEVICE_TYPE_CPU) == gb
    assert cat_computeinfo.mem_alloc_minimum((1, 2), 16 * gb, C.CL_DEVICE_TYPE_CPU) == 4 * gb
    assert cat_computeinfo.mem_alloc_minimum((3, 0), 64 << 20, C.CL_DEVICE_TYPE_GPU) == 32 << 20
    assert cat_computeinfo.work_item_problems(2, [1, 1], 1, True) == [
        "CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS = 2, below the minimum 3"]
    assert "has 2 entries for 3" in cat_computeinfo.work_item_problems(3, [1, 1], 1, True)[0]
    assert "lacks CL_FP_ROUND_TO_NEAREST" in cat_computeinfo.fp_config_problems(C.CL_FP_INF_NAN, 0, False, True)[0]
    assert "lacks required bits" in cat_computeinfo.fp_config_problems(6, C.CL_FP_FMA, True, True)[0]


def test_wrong_info_size_is_reported():
    msgs = cat_computeinfo.size_problems([("MAX_COMPUTE_UNITS", "uint", 8), ("MAX_WORK_GROUP_SIZE", "size", 8)])
    assert msgs == ["CL_DEVICE_MAX_COMPUTE_UNITS: size_ret 8, expected 4 (uint)"]


def test_computeinfo_lying_device(env, lying):
    real = env.cl.clGetDeviceInfo

    def device_info(dev, param, size, value, size_ret):
        if param != C.CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS:
            return real(dev, param, size, value, size_ret)
        if size_ret is not None:
            size_ret._obj.value = 4
        if value is not None:
            ctypes.memmove(value, struct.pack("I", 2), 4)
        return C.CL_SUCCESS

    lying(clGetDeviceInfo=device_info)
    r = run(cat_computeinfo.work_item_limits, env)
    assert r.status == "fail"
    assert "CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS = 2, below the minimum 3" in r.message


# --- buffers -----------------------------------------------------------------------------------------

def test_first_difference():
    assert cat_buffers.first_difference(b"abcd", b"abcd") is None
    assert cat_buffers.first_difference(b"abXd", b"abcd").startswith("1 of 4 bytes differ; first at offset 2")


def test_rect_model():
    mem = bytearray(range(64))
    got = cat_buffers.rect_model(mem, (1, 1, 0), (2, 2, 1), 8, 64)
    assert got == bytes([9, 10, 17, 18])


def test_buffers_corrupted_reads_are_reported(env, lying):
    real = env.cl.clEnqueueReadBuffer

    def read(q, buf, blocking, off, size, ptr, n, wl, ev):
        code = real(q, buf, blocking, off, size, ptr, n, wl, ev)
        ctypes.memset(ptr, 0x55 if ctypes.string_at(ptr, 1) != b"\x55" else 0xAA, 1)
        return code

    lying(clEnqueueReadBuffer=read)
    r = run(cat_buffers.read_write_ranges, env)
    assert r.status == "fail"
    assert "bytes differ; first at offset 0" in r.message


# --- events ------------------------------------------------------------------------------------------

def test_callback_problems():
    ev = 0x1000
    calls = [(ev, C.CL_COMPLETE, 3), (ev, C.CL_COMPLETE, 3), (ev, C.CL_QUEUED, 1)]
    msgs = cat_events.callback_problems(calls, {1: C.CL_SUBMITTED, 3: C.CL_COMPLETE, 4: C.CL_COMPLETE}, ev)
    assert "callback for status 0 (user_data 3) ran 2 times, not once" in msgs
    assert "callback for status 2 ran with status 3, before reaching it" in msgs
    assert "callback for status 0 (user_data 4) ran 0 times, not once" in msgs


def test_profiling_order_problems():
    stamps = {"QUEUED": 10, "SUBMIT": 20, "START": 40, "END": 30}
    assert cat_events.profiling_problems(stamps, (3, 0)) == [
        "CL_PROFILING_COMMAND_START (40) > CL_PROFILING_COMMAND_END (30)"]


def test_events_status_lie_is_reported(env, lying):
    real = env.cl.clGetEventInfo

    def event_info(ev, param, size, value, size_ret):
        code = real(ev, param, size, value, size_ret)
        if param == C.CL_EVENT_COMMAND_EXECUTION_STATUS and value is not None:
            ctypes.memmove(value, struct.pack("i", C.CL_QUEUED), 4)  # never completes
        return code

    lying(clGetEventInfo=event_info)
    r = run(cat_events.in_order_queue, env)
    assert r.status == "fail"
    assert "status of write 1 after the read completed: expected 0, got 3" in r.message


# --- basic -------------------------------------------------------------------------------------------

def test_int_reference_follows_opencl_c():
    assert cat_basic.int_reference("a << b", 1, 33, np.int32) == 2          # count masked to 5 bits
    assert cat_basic.int_reference("a << b", 1, 9, np.int8) == 0            # promoted: 1 << 9 -> (char)512
    assert cat_basic.int_reference("a >> b", -8, 1, np.int64) == -4         # arithmetic
    assert cat_basic.int_reference("a / b", -7, 2, np.int32) == -3          # toward zero
    assert cat_basic.int_reference("a % b", -7, 2, np.int32) == -1
    assert cat_basic.int_reference("rotate(a, b)", 0x81, 1, np.uint8) == 0x03
    assert cat_basic.int_reference("clz(a)", 1, 0, np.uint16) == 15
    assert cat_basic.int_reference("add_sat(a, b)", 100, 100, np.int8) == 127
    assert not cat_basic.int_case_ok("a / b", -2 ** 31, -1, np.int32)


def test_wrong_integer_result_names_its_inputs():
    t = T()
    ok = cat_basic.compare_ints(t, "int", "a + b", [1, 2], [3, 4], [4, 7], np.int32)
    assert not ok
    assert t.failures == ["int a + b with a=2, b=4: expected 6, got 7"]


def test_work_item_problems():
    exp = cat_basic.work_item_expectations((4,), (2,), (10,))
    got = {k: list(v) for k, v in exp.items()}
    assert cat_basic.work_item_problems(got, exp, "x") == []
    got[3][4] = 0  # local_id(0) of work-item 3 should be 1
    assert cat_basic.work_item_problems(got, exp, "global=(4,)") == [
        "global=(4,): work-item [13, 0, 0]: local_id(0) = 0, expected 1"]


def test_float_ulps():
    one_up = float(np.nextafter(np.float32(1.0), np.float32(2.0)))
    assert cat_basic.float_ulps(one_up, 1.0) == 1.0
    assert cat_basic.float_ulps(math.inf, 1e300) == 0.0   # overflows to infinity when rounded
    assert cat_basic.float_ulps(1.0, math.nan) == math.inf


# --- compiler ----------------------------------------------------------------------------------------

def test_arg_info_problems():
    good = [(n, a, ty, q) for n, a, ty, q in cat_compiler.ARG_INFO_EXPECTED]
    assert cat_compiler.arg_info_problems(good) == []
    bad = list(good)
    bad[0] = ("in", C.CL_KERNEL_ARG_ADDRESS_GLOBAL, "float *", good[0][3])
    assert cat_compiler.arg_info_problems(bad) == [
        "argument 0 (in): CL_KERNEL_ARG_TYPE_NAME = 'float *', expected 'float*'"]


def test_compiler_build_status_lie_is_reported(env, lying):
    lying(clBuildProgram=lambda *a: C.CL_SUCCESS)  # claims success, builds nothing
    r = run(cat_compiler.build_errors_and_log, env)
    assert r.status == "fail"
    assert "clBuildProgram(source using an undeclared identifier): expected CL_BUILD_PROGRAM_FAILURE(-11), " \
           "got CL_SUCCESS(0)" in r.message


# --- math --------------------------------------------------------------------------------------------

def f32_up(x, n=1):
    v = np.float32(x)
    for _ in range(n):
        v = np.nextafter(v, np.float32(np.inf))
    return float(v)


def test_math_correct_results_pass():
    s = float(np.float32(math.sin(1.0)))
    assert cat_math.judge("sin", [1.0], s, 4, False)[0]
    assert cat_math.judge("sin", [-0.0], -0.0, 4, False)[0]
    assert cat_math.judge("pow", [-0.0, 0.5], 0.0, 16, False)[0]
    assert cat_math.judge("tanpi", [0.5], math.inf, 6, False)[0]
    assert cat_math.judge("exp", [100.0], math.inf, 3, False)[0]


def test_math_errors_beyond_the_bound_fail():
    s = float(np.float32(math.sin(1.0)))
    ok, err, ref = cat_math.judge("sin", [1.0], f32_up(s, 6), 4, False)
    assert not ok and 5.5 < err < 6.5 and ref.startswith("0.8414709848")
    assert not cat_math.judge("sin", [math.inf], 0.0, 4, False)[0]          # must be NaN
    assert not cat_math.judge("sin", [-0.0], 0.0, 4, False)[0]              # sign of zero
    assert not cat_math.judge("floor", [1.5], f32_up(1.0), 0, False)[0]     # exact functions


def test_math_wrong_ulp_bound_is_caught():
    # a 2-ulp-off sqrt passes sqrt's bound of 3 but fails if the table said 0 (correctly rounded)
    r = float(np.float32(math.sqrt(2.0)))
    assert cat_math.judge("sqrt", [2.0], f32_up(r, 2), 3, False)[0]
    assert not cat_math.judge("sqrt", [2.0], f32_up(r, 2), 0, False)[0]
    assert cat_math.FUNCTIONS["sqrt"][1] == 3 and cat_math.FUNCTIONS["pow"][1] == 16


def test_math_flush_to_zero_only_without_denormals():
    tiny = 2.0 ** -140
    assert not cat_math.judge("fabs", [tiny], 0.0, 0, False)[0]
    assert cat_math.judge("fabs", [tiny], 0.0, 0, True)[0]


def test_math_report_names_input_and_error():
    t = T()
    s = float(np.float32(math.cos(2.0)))
    cat_math.check_results(t, "cos", [(2.0,), (0.0,)], [f32_up(s, 9), 1.0], 4)
    assert len(t.failures) == 1
    assert t.failures[0].startswith("cos(2.0) = ")
    assert "ulp, 4 allowed" in t.failures[0]


# --- images ------------------------------------------------------------------------------------------

def test_missing_image_formats():
    assert cat_images.missing_formats(cat_images.REQUIRED_RW) == []
    assert cat_images.missing_formats(cat_images.REQUIRED_RW[1:]) == [cat_images.REQUIRED_RW[0]]


# --- the runner --------------------------------------------------------------------------------------

def test_reports():
    from conformance.framework import Result
    results = [Result("a", "pass"), Result("b", "fail", "clX: expected A, got B"), Result("c", "skip", "why")]
    s = runner.summarize("api", results, 1.5)
    out = io.StringIO()
    runner.print_category(s, out)
    text = out.getvalue()
    assert "FAIL api/b:\n    clX: expected A, got B" in text
    assert "api: FAILED 1 of 2, 1 skipped" in text
    table = runner.table([s])
    assert table.splitlines()[0].split() == ["category", "passed", "failed", "skipped", "seconds"]
    assert table.splitlines()[2].split() == ["api", "1", "1", "1", "1.5"]
    ok = runner.summarize("events", [Result("a", "pass")], 0.1)
    out = io.StringIO()
    runner.print_category(ok, out)
    assert out.getvalue() == "events: PASSED 1 of 1\n"


def test_every_category_has_checks():
    for name in runner.CATEGORIES:
        cat = runner.load_category(name)
        assert cat.checks, name
        assert len({c.name for c in cat.checks}) == len(cat.checks), name


def test_quick_run_against_installed_pyplat(run_with_pyplat, pyplat_command, tmp_path):
    out = tmp_path / "result.json"
    r = run_with_pyplat(pyplat_command + ["conformance", "--quick", "--json", str(out),
                                          "api", "computeinfo", "buffers", "events"], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    for cat in ("api", "computeinfo", "buffers", "events"):
        assert f"{cat}: PASSED" in r.stdout
    report = json.loads(out.read_text())
    assert report["platform"] == "PyPlat" and report["failed"] == 0
    assert [c["name"] for c in report["categories"]] == ["api", "computeinfo", "buffers", "events"]
