"""The classes of bad build logs the kernel-source fuzzer (tests/support/fuzz_source.py) counts, one
regression test each: every failed build's first error names a line of the source (not :0:0),
no build is an internal compiler error, and deep nesting builds in seconds, not minutes.
docs/compiler.md ("Nesting and compile time")."""
import re
import time

import numpy as np
import pytest

from pyplat.compiler import build
from pyplat.compiler.loop_nesting import OPTIMISED_LOOP_DEPTH
from support.compiled import run
from support.fuzz_source import classify, located

KERNEL = "__kernel void k(__global const int *in, __global int *out) {\n%s\n}\n"


def built(body, options=""):
    t = time.perf_counter()
    r = build(KERNEL % body, options, use_cache=False)
    return r, time.perf_counter() - t


def test_the_fuzzer_classifies_logs_by_their_first_error():
    assert located("<source>:3:7: error: expected ';'\n")
    assert located("<source>:1:1: warning: w\n<source>:2:1: error: e\n")
    assert not located("<source>:0:0: error: something\n")
    assert not located("error: something without a place\n")
    assert not located("<source>:4:1: warning: w\nerror: e\n")     # the first error decides

    class R:
        ok, log = False, "<source>:0:0: error: internal compiler error: KeyError: 'x'\n"
    assert classify(R, 1.0) == ("internal_errors", [])
    R.log = "<source>:0:0: error: too deep\n"
    assert classify(R, 31.0) == ("failed", ["slow", "unlocated"])


@pytest.mark.parametrize("prefix", ["- ", "!", "~"])
def test_running_out_of_recursion_is_a_located_error(prefix):
    # 100,000 unary operators: clang accepts them (no brackets), the compiler's recursion runs
    # out; the error names the innermost construct it reached, not <source>:0:0
    r, _ = built("out[0] = " + prefix * 100_000 + "in[0];")
    assert not r.ok
    first = r.log.splitlines()[0]
    assert "nested too deeply" in first and "internal compiler error" not in first
    m = re.match(r"<source>:(\d+):(\d+): error:", first)
    assert m and int(m.group(1)) == 2 and int(m.group(2)) > 1000, first


@pytest.mark.parametrize("loop", ["while (in[0] > 1000) ", "for (int i = 0; i < 1; i++) ",
                                  "do { ", "for (int i = 0; i < 1; i++) { "])
def test_deeply_nested_loops_build_fast_and_say_why(loop):
    # 300 nested loops took 10-35 s in LLVM's loop passes at O3; past OPTIMISED_LOOP_DEPTH the
    # program is compiled without optimisation, with a warning at its innermost loop
    close = {"do { ": "} while (0);", "for (int i = 0; i < 1; i++) { ": "}"}.get(loop, "")
    depth = 250 if close else 300          # (clang stops brackets at 256 levels)
    r, seconds = built(loop * depth + "out[0] += in[1];" + close * depth)
    assert r.ok, r.log
    assert seconds < 10, seconds
    warning = r.log.splitlines()[0]
    assert re.match(r"<source>:2:\d+: warning: loops nested %d deep \(more than %d\)"
                    % (depth, OPTIMISED_LOOP_DEPTH), warning), warning
    out = np.zeros(4, np.int32)
    run(r.kernels["k"], [np.array([5, 7], np.int32), out], (1,))
    assert out[0] == (0 if "1000" in loop else 7)


def test_a_moderate_loop_nest_is_optimised_as_before():
    r, _ = built("for (int i = 0; i < 2; i++) " * OPTIMISED_LOOP_DEPTH + "out[0] += in[1];")
    assert r.ok and "warning" not in r.log, r.log
    out = np.zeros(4, np.int32)
    run(r.kernels["k"], [np.array([5, 1], np.int32), out], (1,))
    assert out[0] == 2 ** OPTIMISED_LOOP_DEPTH % 2 ** 32


def test_loops_of_helpers_count_where_they_are_called():
    helper = "void h(__global int *o) {" + "for (int j = 0; j < 1; j++) " * 20 + "o[0] += 1; }\n"
    src = helper + KERNEL % ("for (int i = 0; i < 1; i++) " * 20 + "h(out);")
    r = build(src, "", use_cache=False)
    assert r.ok and "loops nested 40 deep" in r.log, r.log


@pytest.mark.parametrize("decl, options", [("clk_event_t e;", "-cl-std=CL2.0"), ("queue_t q;", "-cl-std=CL2.0"),
                                           ("atomic_int a;", "-cl-std=CL2.0"), ("__int128 x = 1;", "")])
def test_an_error_raised_without_a_cursor_is_placed_at_its_construct(decl, options):
    # the front end's "unsupported type" has no cursor at hand; the log names the declaration
    r, _ = built("  " + decl + " out[0] = 1;", options)
    first = r.log.splitlines()[0]
    assert not r.ok and re.match(r"<source>:2:\d+: error: unsupported type", first), r.log
