"""Program-scope __constant initialisers folded from clang's AST: vector literals, splats, nested
vector literals, arrays and structs of them, conversions to the element type; the values a
kernel reads are the ones C's rules give (every expected value here is what PoCL 3.1 gives for the
same program)."""
import numpy as np
import pytest

import pyplat.compiler as C
from support.clobjects import build_log, context_and_queue
from support.linking import compile_src, link, run_1d, uniq


@pytest.fixture(scope="module")
def env():
    yield from context_and_queue()


CASES = [
    # (declarations, expression stored as float4 per work-item i (0..3), expected rows)
    ("constant float4 k = (float4)(1.0f, 2.0f, 3.0f, 4.0f);", "k", [[1, 2, 3, 4]] * 4),
    ("constant float4 k[2] = {(float4)(1.0f, 2.0f, 3.0f, 4.0f), (float4)(5.0f)};", "k[i & 1]",
     [[1, 2, 3, 4], [5, 5, 5, 5]] * 2),
    ("constant int2 k = (int2)(1);", "convert_float4((int4)(k, k.yx * 3))", [[1, 1, 3, 3]] * 4),
    ("constant float4 k = (float4)((float2)(1, 2), 3, 4);", "k", [[1, 2, 3, 4]] * 4),
    ("constant float4 k = (float4)(1, (float2)(2, 3), 4);", "k", [[1, 2, 3, 4]] * 4),
    ("constant float4 k = (float4)((float3)(1, (float2)(2, 3)), 4);", "k", [[1, 2, 3, 4]] * 4),
    ("constant int4 k = (int4)(1.9f, -1.9f, 7, 'a');", "convert_float4(k)", [[1, -1, 7, 97]] * 4),
    ("constant uchar4 k = (uchar4)(300);", "convert_float4(k)", [[44] * 4] * 4),
    ("typedef struct { float4 a; int2 b; float c; } S;\n"
     "constant S s[2] = {{(float4)(1, 2, 3, 4), (int2)(5), 6.5f}, {(float4)(-1), (int2)(7, 8), 9}};",
     "i < 2 ? s[i].a : (float4)(convert_float2(s[i - 2].b), s[i - 2].c, 0)",
     [[1, 2, 3, 4], [-1, -1, -1, -1], [5, 5, 6.5, 0], [7, 8, 9, 0]]),
    ("constant float4 k[3] = {(float4)(2)};", "k[i % 3]", [[2] * 4, [0] * 4, [0] * 4, [2] * 4]),
    ("#define V(a) (float4)(a, a + 1, (float2)(a + 2, a + 3))\nconstant float4 k[2] = {V(1), V(10)};",
     "k[i & 1]", [[1, 2, 3, 4], [10, 11, 12, 13]] * 2),
    # arithmetic on vectors: the typed tree folded with OpenCL C's rules
    ("constant float4 k = (float4)(1, 2, 3, 4) * 2.0f;", "k", [[2, 4, 6, 8]] * 4),
    ("constant int4 k = (int4)(7, -7, 100, -100) / (int4)(2) + (int4)(1, 2, 3, 4) % 3;", "convert_float4(k)",
     [[4, -1, 50, -49]] * 4),
    ("constant int4 k = (int4)(1, 2, 3, 4) < (int4)(2);", "convert_float4(k)", [[-1, 0, 0, 0]] * 4),
    ("constant uchar4 k = (uchar4)(250) + (uchar4)(10, 1, 2, 3);", "convert_float4(k)", [[4, 251, 252, 253]] * 4),
    ("constant int4 k = -(int4)(1, 2, 3, 4) << 2 | 1;", "convert_float4(k)", [[-3, -7, -11, -15]] * 4),
    ("constant int4 k = ~(int4)(0, 1, 2, 3) ^ (int4)(5);", "convert_float4(k)", [[-6, -5, -8, -7]] * 4),
    ("constant int4 k = !(int4)(0, 1, 0, 3);", "convert_float4(k)", [[-1, 0, -1, 0]] * 4),
    ("constant float4 k[2] = {(float4)(0.1f) + 0.2f, (float4)(1.0f / 3.0f) * 3.0f};",
     "as_float4(as_int4(k[1]) ^ as_int4(k[0]))", [[np.int32(18454938).view(np.float32)] * 4] * 4),
    ("constant float4 a = (float4)(1, 2, 3, 4);\nconstant float4 k = a * 2;", "k", [[2, 4, 6, 8]] * 4),
]


@pytest.mark.parametrize("decl,expr,expected", CASES, ids=[c[0][:40] for c in CASES])
def test_vector_literals_in_constant_initialisers(env, decl, expr, expected):
    ctx, dev, q = env
    src = decl + "\n__kernel void t(__global float4 *o) { int i = get_global_id(0); o[i] = %s; }\n" % expr
    r = C.build(src, use_cache=False)
    assert r.ok, r.log
    # the same through clCompileProgram + clLinkProgram (the variable exported by its unit)
    p, rc = compile_src(ctx, uniq() + src.encode())
    assert rc == 0, build_log(p, dev)
    exe, code = link(ctx, [p])
    assert code == 0, build_log(exe, dev)
    out = run_1d(ctx, q, exe, b"t", 4, [np.zeros((4, 4), np.float32)])
    np.testing.assert_array_equal(out.reshape(4, 4), np.array(expected, np.float32))


def test_initialiser_not_constant_is_a_clear_error():
    r = C.build("constant float4 a = (float4)(1);\nconstant float4 b = (float4)(1, 2, 3, 4).wzyx;\n"
                "__kernel void t(__global float4 *o) { o[0] = b + a; }", use_cache=False)
    assert not r.ok
    assert "<source>:2:" in r.log and "error" in r.log


AGGREGATES = [
    ("typedef struct { int a; int b; } S; constant S s = {.b = 5};", "s.a * 10 + s.b", 5),
    ("constant int t[4] = {[2] = 5, 6};", "t[0] * 1000 + t[1] * 100 + t[2] * 10 + t[3]", 56),
    ("typedef struct { int a; int b[2]; } S; constant S s = {1, {[1] = 4}};", "s.b[1] * 10 + s.b[0]", 40),
    ("typedef struct { int a; int b; } S; constant S s[2] = {[1].b = 3, [0] = {.a = 2}};",
     "s[0].a * 100 + s[0].b * 10 + s[1].b", 203),
    ("typedef union { int a; float b; } U; constant U u[3] = {{5}, {.b = 1.0f}, {.a = 7}};",
     "u[0].a * 1000 + (int)u[1].b * 100 + u[2].a", 5107),
    ("typedef struct { int a; int b[2]; } S; constant S s[2] = {1, 2, 3, 4, 5, 6};",   # brace elision
     "s[1].a * 100 + s[1].b[0] * 10 + s[1].b[1]", 456),
    ("constant int t[2][3] = {1, 2, 3, 4};", "t[1][0] * 10 + t[1][1]", 40),
    ("constant char m[] = \"hi\";", "m[1] + (int)sizeof(m)", 108),
]


@pytest.mark.parametrize("decl,expr,expected", AGGREGATES, ids=[c[0][-40:] for c in AGGREGATES])
def test_designated_and_brace_elided_initialisers(env, decl, expr, expected):
    ctx, dev, q = env
    src = decl + "\n__kernel void run(__global int *o) { o[get_global_id(0)] = %s; }\n" % expr
    p, rc = compile_src(ctx, uniq() + src.encode())
    assert rc == 0, build_log(p, dev)
    exe, code = link(ctx, [p])
    assert code == 0, build_log(exe, dev)
    out = run_1d(ctx, q, exe, b"run", 2, [np.zeros(2, np.int32)])
    np.testing.assert_array_equal(out, [expected] * 2)
