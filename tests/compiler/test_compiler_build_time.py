"""Large programs build in time and right (issue 31 part 4; speed figures: bench/big_kernels.py).

* a switch of more cases than switch_tree.LARGE becomes range tests over smaller switches:
  every case, the default in the gaps between chunks and outside, negative case values;
  one that is a table (`case k: r = CONST; break;`) becomes constant arrays (switch_table.py):
  the same values, shared labels, holes, a default with statements, a narrow variable;
* a program over inline_budget.BUDGET leaves its costliest helpers to LLVM's inliner (no
  `alwaysinline` on them) and still computes the same; a small one keeps every helper forced;
* LLVM's "loop not unrolled" warning is a build-log line, never on the process's stderr.
"""
import subprocess
import sys

import numpy as np
import pytest

import pyplat

pyplat.enable()     # before pyopencl initialises its loader

cl = pytest.importorskip("pyopencl")

from pyplat.compiler import build                                        # noqa: E402
from pyplat.compiler.lowering import inline_budget, switch_tree          # noqa: E402


@pytest.fixture(scope="module")
def ctx_queue():
    plat = [p for p in cl.get_platforms() if p.name == "PyPlat"][0]
    ctx = cl.Context(plat.get_devices())
    return ctx, cl.CommandQueue(ctx)


def run(ctx_queue, src, x):
    ctx, q = ctx_queue
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    out = np.zeros(len(x), np.int64)
    ob = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    cl.Program(ctx, src).build().k(q, (len(x),), None, xb, ob)
    cl.enqueue_copy(q, out, ob)
    return out


def test_large_switch_every_case_gap_and_default(ctx_queue):
    n = switch_tree.LARGE * 3 + 7            # several chunks, the last one short
    vals = [3 * i - n for i in range(n)]     # negative and positive, gaps of 2 between cases
    cases = "\n".join(f"case {v}: r = {v * 7 + 1}; break;" for v in vals[:-1])
    cases += f"\ncase {vals[-1]}: r = 5;"    # falls through into default
    src = f"""__kernel void k(__global const int *x, __global long *o) {{
        int i = get_global_id(0); long r = 0;
        switch (x[i]) {{ {cases}
        default: r += 1000000; }}
        o[i] = r; }}"""
    x = np.array(vals + [v + 1 for v in vals] + [-10 ** 6, 10 ** 6, vals[0] - 1], np.int32)
    ref = {v: v * 7 + 1 for v in vals[:-1]}
    ref[vals[-1]] = 1000005
    expect = [ref.get(int(v), 1000000) for v in x]
    assert run(ctx_queue, src, x).tolist() == expect


def test_large_switch_ir_is_split_small_one_is_not():
    big = "\n".join(f"case {i}: r = o[i] + {i * 3}; break;" for i in range(switch_tree.LARGE + 1))
    small = "\n".join(f"case {i}: r = o[i] + {i * 3}; break;" for i in range(switch_tree.LARGE))
    src = """__kernel void k(__global int *o) {
        int i = get_global_id(0), r = 0; switch (o[i]) { %s } o[i] = r; }"""
    chunks = -(-(switch_tree.LARGE + 1) // switch_tree.CHUNK)
    assert build(src % big, use_cache=False).llvm_ir.count("switch i32") == chunks
    assert build(src % small, use_cache=False).llvm_ir.count("switch i32") == 1


@pytest.mark.parametrize("default", ["", "default: r = x[i] * 3; r += 1; break;", "default: r = -7;"])
def test_large_table_switch_is_arrays_and_computes_the_same(ctx_queue, default):
    n = switch_tree.LARGE * 2 + 5
    keys = [2 * k - n for k in range(n)]             # holes between keys, negative keys
    lines = []
    for j, k in enumerate(keys):
        shared = f"case {k + 1}: " if j % 50 == 0 else ""   # a second label on some cases
        lines.append(f"case {k}: {shared}r = {(k * 37) % 300 - 100}; break;")
    src = f"""__kernel void k(__global const int *x, __global long *o) {{
        int i = get_global_id(0); char r = 42;
        switch (x[i]) {{ {chr(10).join(lines)}
        {default} }}
        o[i] = r; }}"""
    ir_text = build(src, use_cache=False).llvm_ir
    assert "switch i32" not in ir_text and "__switch_values" in ir_text

    def wrap8(v):
        return (v + 128) % 256 - 128
    ref = {}
    for j, k in enumerate(keys):
        ref.setdefault(k, wrap8((k * 37) % 300 - 100))
        if j % 50 == 0:
            ref.setdefault(k + 1, wrap8((k * 37) % 300 - 100))
    x = np.array(sorted(set(keys + [k + 1 for k in keys] + [keys[0] - 5, keys[-1] + 9, 10 ** 6])),
                 np.int32)

    def miss(xv):
        if default.startswith("default: r = x"):
            return wrap8(xv * 3 + 1)
        return -7 if default else 42
    expect = [ref[v] if v in ref else miss(int(v)) for v in x.tolist()]
    assert run(ctx_queue, src, x).tolist() == expect


def helper_program(copies):
    """A helper of ~1,000 nodes called `copies` times (the results depend on every call)."""
    body = "\n".join(f"  a = a * {i % 13 + 3} + (b >> {i % 7 + 1}); b ^= a + {i};" for i in range(60))
    calls = "\n".join(f"  acc += big(x + {c}, acc);" for c in range(copies))
    return f"""long big(long a, long b) {{
{body}
  return a ^ b; }}
    __kernel void k(__global const int *xs, __global long *o) {{
        int i = get_global_id(0); long x = xs[i], acc = 0;
{calls}
        o[i] = acc; }}"""


def test_over_budget_helpers_are_left_to_llvm_and_compute_the_same(ctx_queue):
    copies = 2 * inline_budget.BUDGET // 1000 + 2
    src = helper_program(copies)
    ir_text = build(src, use_cache=False).llvm_ir
    define = [ln for ln in ir_text.splitlines() if ln.startswith("define") and '"f.big"' in ln][0]
    assert "alwaysinline" not in define
    x = np.arange(-64, 64, dtype=np.int32)
    got = run(ctx_queue, src, x)
    m = (1 << 64) - 1

    def big(a, b):
        a, b = a & m, b & m
        for i in range(60):
            sa = a - (1 << 64) if a >> 63 else a
            sb = b - (1 << 64) if b >> 63 else b
            a = (sa * (i % 13 + 3) + (sb >> (i % 7 + 1))) & m
            b = (b ^ (a + i)) & m
        return a ^ b
    for xi, g in zip(x.tolist(), got.tolist()):
        acc = 0
        for c in range(copies):
            acc = (acc + big(xi + c, acc)) & m
        assert g & m == acc


def test_under_budget_helpers_stay_forced_inline():
    ir_text = build(helper_program(2), use_cache=False).llvm_ir
    define = [ln for ln in ir_text.splitlines() if ln.startswith("define") and '"f.big"' in ln][0]
    assert "alwaysinline" in define


def test_llvm_missed_unrolling_goes_to_the_log_not_stderr():
    child = r"""
import os
os.environ["PYPLAT_CACHE_DIR"] = "off"
from pyplat.compiler import build
r = build('''__kernel void k(__global int *o, int n) {
  int s = 0;
  #pragma unroll
  for (int i = 0; i < n; i++) { s += o[i] * i; if (s > 1000) break; }
  o[get_global_id(0)] = s; }''', use_cache=False)
print(repr(r.ok), repr(r.log))
"""
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=300,
                         cwd="/")     # (the installed package, not the source tree)
    assert out.returncode == 0, out.stderr
    assert "loop not unrolled" not in out.stderr
    ok, log = out.stdout.strip().splitlines()[-1].split(" ", 1)
    assert ok == "True"
    assert log.startswith("'warning: loop not unrolled") and "<unknown>" not in log
