"""The catalogue of buggy kernels PYPLAT_CHECK must find (compiler/checks tests; also
bench/check_detection.py, which runs it under Oclgrind too), the child process that runs a
launch of it, and helpers over the typed tree the lowering's analyses work on.

    PRELUDE      a child's start: pyopencl on PyPlat, ctx, q, mf, N, status(ev)
    CATALOGUE    the buggy kernels' source; CASES: kernel -> (launch, finding pieces, access[, checks])
    run_script   run PRELUDE + the catalogue built + body in a child with PYPLAT_CHECK=bounds
    findings     the `pyplat: check:` lines of a child's stderr
    line_of      the catalogue's line holding a text
    typed_kernels, local_uses_by_line   kernels on the typed tree; their __local uses by line
"""
import os
import subprocess
import sys
import textwrap


PRELUDE = '''
import numpy as np
import pyplat
pyplat.enable()
import pyopencl as cl

platform = [p for p in cl.get_platforms() if p.name == "PyPlat"][0]
ctx = cl.Context(platform.get_devices())
q = cl.CommandQueue(ctx)
mf = cl.mem_flags
N = 256

def status(ev):
    try:
        ev.wait()
    except cl.RuntimeError:
        pass
    q.finish()
    return ev.get_info(cl.event_info.COMMAND_EXECUTION_STATUS)
'''


CATALOGUE = r"""
__kernel void read_past_global(__global int *out, __global const int *in) {
    size_t i = get_global_id(0);
    out[i] = in[i + 1];
}
__kernel void write_past_global(__global int *out) {
    size_t i = get_global_id(0);
    out[i + 1] = (int)i;
}
__kernel void read_past_constant(__global int *out, __constant int *table) {
    size_t i = get_global_id(0);
    out[i] = table[i + 1];
}
__kernel void write_past_local_variable(__global int *out) {
    __local int tile[64];
    size_t l = get_local_id(0);
    tile[l + 1] = (int)l;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[l];
}
__kernel void read_past_local_argument(__global int *out, __local int *scratch) {
    size_t l = get_local_id(0);
    scratch[l] = (int)l;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = scratch[l + 1];
}
int fetch(__global const int *p, size_t i) { return p[i]; }
__kernel void wild_offset(__global int *out, __global const int *in) {
    size_t i = get_global_id(0);
    out[i] = fetch(in, i == 77 ? i + 100000 : i);
}
__kernel void wild_pointer(__global int *out) {
    size_t i = get_global_id(0);
    __global int *p = (__global int *)(size_t)(i == 9 ? 4096 : 0);
    if (i == 9) *p = 1;
    out[i] = 1;
}
__kernel void vector_write_past(__global int *out) {
    size_t i = get_global_id(0);
    vstore4((int4)(1), i + 1, out);
}
__kernel void read_past_offset_view(__global int *out, __global const int *in__base, long in__offset) {
    __global const int *in = (__global const int *)((__global const char *)in__base + in__offset);
    size_t i = get_global_id(0);
    out[i] = in[i];
}
__kernel void missing_barrier(__global int *out) {
    __local int tile[64];
    size_t l = get_local_id(0);
    tile[l] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    tile[l] = (int)l;
    out[get_global_id(0)] = tile[63 - l];
}
__kernel void uninit_local_read(__global int *out) {
    __local int half_set[64];
    size_t l = get_local_id(0);
    if (l < 32) half_set[l] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = half_set[l];
}
__kernel void divide_by_zero(__global int *out, __global const int *in, int d) {
    size_t i = get_global_id(0);
    out[i] = in[i] / (d - (int)(i == 77));
}
__kernel void global_counter_race(__global int *hits) {
    hits[0] += 1;
}
__kernel void sum_past_global(__global int *out, __global const int *in) {
    __local int part[64];
    size_t l = get_local_id(0), i = l;
    int acc = 0;
    for (int s = 0; s < 5; s++) {       /* pyopencl's reduction loop, with an off-by-one bound */
        if (i > 256) break;
        acc += in[i];
        i += 64;
    }
    part[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) out[0] = part[0] + part[63];
}
/* loops with a uniform trip count (lockstep loops) and a bound every work-item passes: their
   passes run exit-free (lockstep_exitfree.py), with the same checks */
__kernel void sum_past_global_in_full_passes(__global int *out, __global const int *in, long stop, uint passes) {
    __local int part[64];
    size_t l = get_local_id(0);
    long i = l;
    int acc = 0;
    for (uint s = 0; s < passes; s++) {
        if (i >= stop) break;
        acc += in[i];               /* pass 4: in[256 + l] */
        i += 64;
    }
    part[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) out[0] = part[0] + part[63];
}
__kernel void uninit_read_in_full_passes(__global int *sums, long stop, uint passes) {
    __local int half_set[64];
    size_t l = get_local_id(0);
    long i = l;
    int acc = 0;
    if (l < 32) half_set[l] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 0; s < passes; s++) {
        if (i >= stop) break;
        acc += half_set[l] + sums[i];   /* (a lockstep loop reads __global memory) */
        i += 64;
    }
    sums[get_global_id(0)] = acc;
}
__kernel void global_race_in_full_passes(__global int *hits, long stop, uint passes) {
    size_t l = get_local_id(0);
    long i = l;
    for (uint s = 0; s < passes; s++) {
        if (i >= stop) break;
        hits[s] += 1;
        i += 64;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    hits[l + 4] = 0;
}
__kernel void add_one(__global int *o) { o[get_global_id(0)] += 1; }
"""


def run_script(body, env=None):
    src = PRELUDE + "SRC = r'''" + CATALOGUE + "'''\nprg = cl.Program(ctx, SRC).build()\n" + textwrap.dedent(body)
    e = dict(os.environ, PYPLAT_CHECK="bounds", PYPLAT_CACHE_DIR="off")
    e.update(env or {})
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=300, env=e, cwd="/")
    assert p.returncode == 0, p.stderr[-3000:]
    return p


def line_of(text):
    """The catalogue's line (as the compiler numbers the program's source) holding `text`."""
    return next(n for n, line in enumerate(CATALOGUE.split("\n"), 1) if text in line)


def typed_kernels(source):
    """{name: kernel} of source's kernels on the typed tree, as the lowering sees them (built
    afresh, so that the analyses run on them can be called directly)."""
    from pyplat.compiler import driver, frontend
    got = []
    real = frontend.Frontend.run

    def capture(self):
        ks = real(self)
        got.extend(ks)
        return ks
    frontend.Frontend.run = capture
    try:
        r = driver.build(source, use_cache=False)
    finally:
        frontend.Frontend.run = real
    assert r.ok, r.log
    return {k.name: k for k in got}


def local_uses_by_line(k, value):
    """{source line: value(id of the node)} over kernel k's uses of its `__local` variables, where
    all uses on the line agree, else "mixed"."""
    from pyplat.compiler.lowering.barrier_tree import walk
    lines = {}

    def visit(n):
        if n.op == "var" and n.val in set(k.local_vars):
            lines.setdefault(n.cur.location.line, []).append(value(id(n)))
    walk(k.body, visit)
    return {line: v[0] if len(set(v)) == 1 else "mixed" for line, v in lines.items()}


def findings(stderr):
    return [line for line in stderr.split("\n") if line.startswith("pyplat: check: ")]


CASES = {
    # kernel: (launch code, expected pieces of the finding line, source text of the access[, checks])
    "read_past_global": (
        "ev = prg.read_past_global(q, (N,), (64,), out, inp)",
        ["out-of-bounds read of 4 bytes at offset 1024 of __global argument 'in' (1024 bytes)",
         "global (255, 0, 0) local (63, 0, 0)"], "in[i + 1]"),
    "write_past_global": (
        "ev = prg.write_past_global(q, (N,), (64,), out)",
        ["out-of-bounds write of 4 bytes at offset 1024 of __global argument 'out' (1024 bytes)",
         "global (255, 0, 0) local (63, 0, 0)"], "out[i + 1]"),
    "read_past_constant": (
        "ev = prg.read_past_constant(q, (N,), (64,), out, inp)",
        ["out-of-bounds read of 4 bytes at offset 1024 of __constant argument 'table' (1024 bytes)"],
        "table[i + 1]"),
    "write_past_local_variable": (
        "ev = prg.write_past_local_variable(q, (N,), (64,), out)",
        ["out-of-bounds write of 4 bytes at offset 256 of __local variable 'tile' (256 bytes)",
         "local (63, 0, 0)"], "tile[l + 1]"),
    "read_past_local_argument": (
        "ev = prg.read_past_local_argument(q, (N,), (64,), out, cl.LocalMemory(256))",
        ["out-of-bounds read of 4 bytes at offset 256 of __local argument 'scratch' (256 bytes)",
         "local (63, 0, 0)"], "scratch[l + 1]"),
    "vector_write_past": (
        "ev = prg.vector_write_past(q, (N // 4,), (64,), out)",
        ["out-of-bounds write of 16 bytes at offset 1024 of __global argument 'out' (1024 bytes)",
         "global (63, 0, 0) local (63, 0, 0)"], "vstore4("),
    "read_past_offset_view": (      # pyopencl's way: a base argument and an offset
        "ev = prg.read_past_offset_view(q, (N,), (64,), out, inp, np.int64(4))",
        ["out-of-bounds read of 4 bytes at offset 1024 of __global argument 'in__base' (1024 bytes)",
         "global (255, 0, 0) local (63, 0, 0)"], "out[i] = in[i];"),
    "missing_barrier": (
        "ev = prg.missing_barrier(q, (N,), (64,), out)",
        # (a group reports the conflict of its largest local id: 63's write after 0's read; every
        # group has it, so whichever worker reports first: the local id only)
        ["data race: write after another work-item's read of 4 bytes at offset 252 of __local variable "
         "'tile' (256 bytes) (other work-item: local linear id 0, since the last barrier)",
         "local (63, 0, 0)"], "tile[l] = (int)l;", "races"),
    "global_counter_race": (        # every work-item, no atomics: the first one after another's
        "ev = prg.global_counter_race(q, (N,), (64,), out)",
        ["data race: read after another work-item's write of 4 bytes at offset 0 of __global argument "
         "'hits' (1024 bytes) (other work-item: "], "hits[0] += 1;", "races"),
    "uninit_local_read": (
        "ev = prg.uninit_local_read(q, (N,), (64,), out)",
        ["use of a value read from uninitialised __local memory (read at <source>:",
         "from __local variable 'half_set'): a store of it to __global argument 'out', at",
         "local (32, 0, 0)"], "= half_set[l]", "uninit"),        # (every group: see above)
    "sum_past_global": (            # under the `if` of a loop in a kernel with barriers
        "ev = prg.sum_past_global(q, (64,), (64,), out, inp)",
        ["out-of-bounds read of 4 bytes at offset 1024 of __global argument 'in' (1024 bytes)",
         "global (0, 0, 0) local (0, 0, 0)"], "acc += in[i];"),
    "sum_past_global_in_full_passes": (
        "ev = prg.sum_past_global_in_full_passes(q, (64,), (64,), out, inp, np.int64(320), np.uint32(5))",
        ["out-of-bounds read of 4 bytes at offset 1276 of __global argument 'in' (1024 bytes)",
         "global (63, 0, 0) local (63, 0, 0)"], "acc += in[i];               /* pass 4"),
    "uninit_read_in_full_passes": (
        "ev = prg.uninit_read_in_full_passes(q, (N,), (64,), out, np.int64(256), np.uint32(4))",
        ["use of a value read from uninitialised __local memory (read at <source>:%d:" % line_of("acc += half_set[l]"),
         "from __local variable 'half_set'): a store of it to __global argument 'sums', at",
         "local (32, 0, 0)"], "sums[get_global_id(0)] = acc;", "uninit"),
    "global_race_in_full_passes": (
        "ev = prg.global_race_in_full_passes(q, (64,), (64,), out, np.int64(256), np.uint32(4))",
        ["data race: read after another work-item's write of 4 bytes at offset ",
         "of __global argument 'hits' (1024 bytes) (other work-item: "], "hits[s] += 1;", "races"),
    "wild_offset": (
        "ev = prg.wild_offset(q, (N,), (64,), out, inp)",
        ["out-of-bounds read of 4 bytes at address", "global (77, 0, 0) local (13, 0, 0)"], "return p[i]"),
    "divide_by_zero": (             # OpenCL C leaves x / 0 undefined; PyPlat never traps on it
        "ev = prg.divide_by_zero(q, (N,), (64,), out, inp, np.int32(1))",
        ["integer division by zero (a 4-byte divisor)", "global (77, 0, 0) local (13, 0, 0)"],
        "out[i] = in[i] / (d", "divzero"),
    "wild_pointer": (
        "ev = prg.wild_pointer(q, (N,), (64,), out)",
        ["out-of-bounds write of 4 bytes at address 0x1000 through a __global pointer to none",
         "global (9, 0, 0) local (9, 0, 0)"], "*p = 1"),
}
