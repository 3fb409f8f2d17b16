"""Statement and kernel attributes as clang resolved them (issue 12, part 1): loop unroll
hints lower the loop they wrap and reach LLVM as loop metadata; reqd_work_group_size and the
other kernel attributes take their values from clang (macros, included headers, #if), never
from the source text; a construct the front end does not lower is named in the build log."""
import re

import numpy as np
import pytest

import pyplat
from pyplat.compiler import build

pyplat.enable()     # before pyopencl initialises its loader
cl = pytest.importorskip("pyopencl")


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("PYPLAT_CACHE_DIR", "off")


UNROLL_FORMS = ["#pragma unroll", "#pragma unroll 3", "#pragma unroll(8)", "#pragma nounroll",
                "#pragma clang loop unroll(full)", "#pragma clang loop unroll_count(2)",
                "__attribute__((opencl_unroll_hint))", "__attribute__((opencl_unroll_hint(4)))",
                "__attribute__((opencl_unroll_hint(1)))"]

UNROLL_SRC = """
#define N 2
__kernel void k(__global int *out, int n) {
    int s = 0, i = 0, j = 0;
    HINT
    for (int t = 0; t < n; t++) s += t * t;
    HINT
    while (i < n) { s += 3 * i; i++; }
    HINT
    do { s ^= j << 1; j++; } while (j < n);
    HINT
    for (int t = 0; t < 8; t++) { HINT for (int u = 0; u < N; u++) s += t * u; }
    out[get_global_id(0)] = s;
}
"""


def _expected(n):
    s = sum(t * t for t in range(n))
    i = 0
    while i < n:
        s += 3 * i
        i += 1
    j = 0
    while True:
        s ^= j << 1
        j += 1
        if not j < n:
            break
    s += sum(t * u for t in range(8) for u in range(2))
    return s


@pytest.mark.parametrize("hint", UNROLL_FORMS)
def test_unroll_hints_build_and_compute(queue, ctx, hint):
    prg = cl.Program(ctx, UNROLL_SRC.replace("HINT", "\n" + hint + "\n")).build()
    out = np.zeros(2, np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    for n in (0, 1, 7):
        prg.k(queue, (2,), None, buf, np.int32(n))
        cl.enqueue_copy(queue, out, buf)
        assert list(out) == [_expected(n)] * 2, (hint, n)


@pytest.mark.parametrize("hint, meta", [
    ("#pragma unroll", "llvm.loop.unroll.enable"),
    ("#pragma unroll 5", 'llvm.loop.unroll.count", i32 5'),
    ("#pragma nounroll", "llvm.loop.unroll.disable"),
    ("#pragma clang loop unroll(full)", "llvm.loop.unroll.full"),
    ("__attribute__((opencl_unroll_hint))", "llvm.loop.unroll.enable"),
    ("__attribute__((opencl_unroll_hint(1)))", "llvm.loop.unroll.disable"),
    ("__attribute__((opencl_unroll_hint(F*2)))", 'llvm.loop.unroll.count", i32 6'),
])
def test_unroll_hint_becomes_loop_metadata(hint, meta):
    src = """#define F 3
    __kernel void k(__global int *o, int n) { int s = 0;
    %s
    for (int i = 0; i < n; i++) s += o[i];
    o[0] = s; }""" % hint
    r = build(src.encode(), "-cl-opt-disable")
    assert r.ok, r.log
    latch = [ln for ln in r.llvm_ir.splitlines() if "!llvm.loop" in ln]
    assert len(latch) == 1
    node = re.search(r"!llvm.loop (!\d+)", latch[0]).group(1)
    body = re.search(re.escape(node) + r" = !\{ *(.*)\}", r.llvm_ir).group(1)
    assert body.split(",")[0].strip() == node          # a loop ID: itself first
    assert meta in r.llvm_ir


HEADER = "#define WGS_H 8\n#define RQ_H __attribute__((reqd_work_group_size(WGS_H, 2, 1)))\n"

REQD_CASES = [
    ("#define WGS1 16\n__kernel __attribute__((reqd_work_group_size(WGS1, 1, 1))) void k(__global int *o)",
     (16, 1, 1)),
    ("#define DIMS 4, 2, 1\n__kernel __attribute__((reqd_work_group_size(DIMS))) void k(__global int *o)",
     (4, 2, 1)),
    ("#define RQ __attribute__((reqd_work_group_size(2 * 4, 1, 1)))\n__kernel RQ void k(__global int *o)",
     (8, 1, 1)),
    ('#include "wgs.h"\n__kernel RQ_H void k(__global int *o)', (8, 2, 1)),
    ("#if 0\n#define W 32\n#else\n#define W 4\n#endif\n"
     "__kernel __attribute__((reqd_work_group_size(W, W / 2, 1))) void k(__global int *o)", (4, 2, 1)),
]


@pytest.mark.parametrize("head, size", REQD_CASES)
def test_reqd_work_group_size_through_macros(queue, ctx, tmp_path, head, size):
    (tmp_path / "wgs.h").write_text(HEADER)
    src = head + " { o[get_global_linear_id_()] = (int)get_local_size(0); }"
    src = src.replace("get_global_linear_id_()",
                      "get_global_id(0) + get_global_id(1) * get_global_size(0)")
    prg = cl.Program(ctx, src).build(options=["-I", str(tmp_path)])
    k = prg.k
    dev = ctx.devices[0]
    assert tuple(k.get_work_group_info(cl.kernel_work_group_info.COMPILE_WORK_GROUP_SIZE, dev)) == size
    attrs = k.get_info(cl.kernel_info.ATTRIBUTES)
    assert "reqd_work_group_size(%d,%d,%d)" % size in attrs
    gsize = (size[0] * 2, size[1])
    out = np.zeros(gsize[0] * gsize[1], np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    k.set_args(buf)
    cl.enqueue_nd_range_kernel(queue, k, gsize, size[:2]).wait()
    cl.enqueue_copy(queue, out, buf)
    assert (out == size[0]).all()
    other = (size[0] * 2, size[1] * 2) if size[0] == 1 else (size[0] // 2, size[1])
    with pytest.raises(cl.LogicError) as e:
        cl.enqueue_nd_range_kernel(queue, k, gsize, other)
    assert e.value.code == cl.status_code.INVALID_WORK_GROUP_SIZE


def test_other_kernel_attributes_from_clang():
    src = b"""#define H 16
    #define VT float4
    __kernel __attribute__((work_group_size_hint(H, 1, 1))) __attribute__((vec_type_hint(VT)))
    void k(__global int *o) { o[0] = 1; }"""
    r = build(src)
    assert r.ok, r.log
    attrs = r.kernels["k"].attributes.split()
    assert "work_group_size_hint(16,1,1)" in attrs and "vec_type_hint(float4)" in attrs
    assert r.kernels["k"].reqd_work_group_size == (0, 0, 0)


SURVEY = """
typedef struct { int a; float b; } S;
_Static_assert(sizeof(S) == 8, "size");
int twice(int x) { return x + x; }
__kernel void k(__global int *o, __global float4 *f) {
    ;
    int s = 0;
    S v = (S){ 3, 1.5f };
    int arr[3] = { 1, 2, 3 };
    s += v.a + (int)v.b + arr[2];
    s += (int)sizeof(float4) + (int)sizeof s + vec_step(float4) + vec_step(f[0]);
    s += s ? 1 : 0;
    s += 10;
    int i = 0;
again:
    if (++i < 3) goto again;
    s += i;
    switch (s & 3) { case 0: s += 1; __attribute__((fallthrough)); case 1: s += 2; break; default: ; }
    __attribute__((opencl_unroll_hint(2)))
    for (int t = 0; t < 4; t++)
        __attribute__((opencl_unroll_hint))
        for (int u = 0; u < 2; u++) s += t * u;
    s += twice(2) + (s, 1);
    o[get_global_id(0)] = s;
}
"""


def test_survey_of_statement_and_expression_forms(queue, ctx):
    prg = cl.Program(ctx, SURVEY).build()
    out = np.zeros(1, np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, out.nbytes)
    fbuf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16)
    prg.k(queue, (1,), None, buf, fbuf)
    cl.enqueue_copy(queue, out, buf)
    s = 3 + 1 + 3
    s += 16 + 4 + 4 + 4
    s += 1
    s += 10
    s += 3
    s += {0: 3, 1: 2}.get(s & 3, 0)
    s += sum(t * u for t in range(4) for u in range(2))
    s += 4 + 1
    assert out[0] == s


def test_unsupported_construct_is_named_with_its_location():
    src = b"""__kernel void k(__global int *o) {
    int s = 1;
    o[0] = ({ int t = s; t; });
}"""
    r = build(src)
    assert not r.ok
    assert re.search(r"<source>:3:12: error: unsupported expression \(stmtexpr\)", r.log), r.log
