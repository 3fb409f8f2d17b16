"""Helpers shared by the tests (tests/<area>/test_*.py import them as `support.<module>`; no test
module imports another). pytest finds this package through `pythonpath = ["tests"]` in
pyproject.toml; scripts and child processes put TESTS on sys.path themselves.

    capi            PyPlat's C API called in-process (the shim's ctypes callbacks): CL, addr, err
    clobjects       contexts, queues, buffers, programs and kernels made through capi
    linking         clCompileProgram / clLinkProgram / binaries through capi
    direct_calls    the Python entry points called as the bridge calls them (call, get_info)
    compiled        kernels built by pyplat.compiler, run group by group through ctypes
    single_item     one-work-item kernels checked against values and against PoCL
    kernel_check    the catalogue of buggy kernels PYPLAT_CHECK finds, its child runner, the typed tree
    native          C host programs, native entries and handle layout of the fast-path tests
    fake_queues     queues made below the API (fake contexts and devices) for the runtime's tests
    nvptx           PTX of test kernels, ptxas, checks of device-only code
    platforms       pyopencl contexts on a named platform (PyPlat, PoCL)
    conformance_env the checkout's conformance/ package, PoCL as the platform, lying entry points
    fuzz_sweep, fuzz_model, fuzz_source   the fuzzers' harnesses (bounded in tests, long in tools/)
    difftest/       the differential generator, runner, reducer, write-chain generator; cases/
    programs/       host programs run as child processes
"""
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent      # tests/
REPO = TESTS.parent                                 # the checkout (source tree) the tests came from
