"""Vector component accessors (swizzles) wherever real programs write them: plain code, macro
bodies in the same file, macros and functions of headers included through -I or given to
clCompileProgram, a macro chosen under #if/#else, token pasting, nested and function-like
macros. Each kernel's results are checked against values computed here and, where PoCL is
installed, against PoCL's."""
import numpy as np
import pytest

import pyplat.compiler as C
from support.single_item import IN, check, on_pyplat


LOAD = "int16 v = vload16(0, in); int4 q = v.lo.lo;\n"


def test_macro_chosen_under_if_else():
    # the case: two definitions of the same width; the preprocessor keeps the first
    for cond, want in (("1", [10, 11]), ("0", [12, 13])):
        src = """
        #if %s
        #define PICK(v) (v).s01
        #else
        #define PICK(v) (v).s23
        #endif
        __kernel void k(__global const int *in, __global int *out) {
            int4 a = vload4(0, in);
            vstore2(PICK(a), 0, out);
        }""" % cond
        check(src, want)


def test_macro_chosen_by_build_option():
    src = """
    #ifdef HIGH
    #define HALF_OF(v) v.hi
    #else
    #define HALF_OF(v) v.lo
    #endif
    __kernel void k(__global const int *in, __global int *out) {
        int8 a = vload8(0, in);
        vstore4(HALF_OF(a), 0, out);
    }"""
    check(src, IN[4:8], "-DHIGH")
    check(src, IN[0:4])


def test_plain_code_every_accessor_form():
    src = """
    __kernel void k(__global const int *in, __global int *out) {
        %s
        int4 r = q.wzyx + v.s0123 * 0 + v.sCDEF;     /* 13-10 ... */
        int2 e = v.even.lo.lo.xy, o = v.odd.s01;
        int3 t = q.zxy;
        out[0] = r.x; out[1] = r.y; out[2] = r.z; out[3] = r.w;
        out[4] = e.x; out[5] = e.y; out[6] = o.x; out[7] = o.y;
        out[8] = t.x + t.y + t.z; out[9] = q.rgba.g; out[10] = v.SF; out[11] = v.hi.hi.hi.y;
    }""" % LOAD
    q, v = IN[:4], IN
    r = q[::-1] + v[12:16]
    check(src, list(r) + [v[0], v[2], v[1], v[3], q[2] + q[0] + q[1], q[1], v[15], v[15]])


def test_macros_pasting_nested_function_like():
    src = """
    #define COMP(v, n) v.s ## n
    #define ACC(v, a) (v).a
    #define REV(v) ACC(v, wzyx)
    #define FIRST(v) REV(v).w
    #define LOWER lo
    #define TWICE(v) (COMP(v, 1) + COMP(v, 1))
    #define SWAP_INTO(d, s) d.xy = s.yx
    __kernel void k(__global const int *in, __global int *out) {
        %s
        int4 w = REV(q);
        int2 l = q.LOWER;
        int4 d = (int4)(0);
        SWAP_INTO(d, q);
        out[0] = COMP(v, 7); out[1] = COMP(v, A); out[2] = FIRST(q); out[3] = w.x;
        out[4] = l.y; out[5] = TWICE(q); out[6] = d.x; out[7] = d.y; out[8] = d.z;
    }""" % LOAD
    check(src, [17, 20, 10, 13, 11, 22, 11, 10, 0])


def test_macro_accessor_and_members_and_sizeof_together():
    # member accesses, float literals, sizeof/vec_step of swizzles around the swizzles written
    # in macros: each accessor still pairs with its own expression
    src = """
    typedef struct { int2 p; int x; } pt;
    #define GETX(s) (s).p.x
    #define PART(v) (v).s23
    __kernel void k(__global const int *in, __global int *out) {
        %s
        pt s = {PART(q), q.w};
        pt u = s;
        float f = 1.5f + .5f;
        out[0] = GETX(u); out[1] = u.p.y; out[2] = u.x;
        out[3] = (int)sizeof(q.xyz) + vec_step(v.s01) + (int)f;
        out[4] = PART(v.hi).y;
    }""" % LOAD
    check(src, [12, 13, 13, 16 + 2 + 2, 21])


HEADER_TEXT = """
#ifndef SWZ_H
#define SWZ_H
#define TAKE_HI(v) (v).hi
#define RGB_SUM(c) (c.r + c.g + c.b)
inline int2 swap_pair(int4 a) { return a.s10 + a.zw * 0; }
#endif
"""

MAIN_WITH_HEADER = """
#include "swz.h"
__kernel void k(__global const int *in, __global int *out) {
    int4 a = vload4(0, in);
    vstore2(TAKE_HI(a), 0, out);
    out[2] = RGB_SUM(a);
    out[3] = a.w;
    vstore2(swap_pair(a), 2, out);
}"""
HEADER_EXPECTED = [12, 13, 33, 13, 11, 10]


def test_header_through_include_dir(tmp_path):
    (tmp_path / "swz.h").write_text(HEADER_TEXT)
    check(MAIN_WITH_HEADER, HEADER_EXPECTED, "-I %s" % tmp_path)


def test_header_given_to_compile_program():
    obj = C.compile_object(MAIN_WITH_HEADER, "", headers=[("swz.h", HEADER_TEXT)])
    assert obj.ok, obj.log
    got = on_pyplat(C.link([obj.data], use_cache=False), len(HEADER_EXPECTED))
    np.testing.assert_array_equal(got, HEADER_EXPECTED)


def test_printed_accessors_reads_only_accessors():
    from pyplat.compiler import swizzle as SW
    text = ('void f() {\n    S s = {.a.b = 1, [2].c = x.y, .d = 1.F};\n'
            '    float g = .5F + 1.E+3 + 0x1.8p+1;\n    printf("%d.x", p->q.s01);\n'
            "    char c = '.';\n    r.lo = v.hi;\n}\n")
    assert SW.printed_accessors(text) == ["y", "q", "s01", "lo", "hi"]


def test_invalid_accessor_is_a_build_error():
    r = C.build("__kernel void k(__global int *o) { int2 a = (int2)(1, 2); o[0] = a.z; }")
    assert not r.ok and "error" in r.log


def test_full_width_swizzle_of_rvalue_in_macro_body():
    # libclang gives `(a + b).wzyx` written in a macro body the same extent as its base, like
    # an implicit conversion: the AST's accessors decide (was: silently the identity)
    src = """
    #define R(a, b) (a + b).wzyx
    #define ID(a) (a).xyzw
    __kernel void k(__global const int *in, __global int *out) {
        int4 q = vload4(0, in);
        vstore4(R(q, q), 0, out);
        vstore4(ID(q.wzyx), 1, out);
        vstore4(R(q, q).wzyx, 2, out);
        vstore4(R(q, q) + ID(q + 1), 3, out);
    }"""
    q = IN[:4]
    check(src, np.concatenate([(2 * q)[::-1], q[::-1], 2 * q, (2 * q)[::-1] + q + 1]))


def test_pair_members_and_swizzles():
    from pyplat.compiler import swizzle as SW
    items = [("member", "p"), ("swz", 4, 4, True), ("swz", 4, 2, False), ("swz", 3, 1, True)]
    assert SW.pair(items, ["p", "wzyx", "xy", "s2"]) == ["p", "wzyx", "xy", "s2"]
    assert SW.pair(items, ["q", "wzyx", "xy", "s2"]) is None     # a member name that differs
    assert SW.pair(items, ["p", "wzyx", "xyz", "s2"]) is None    # an accessor of another width
    assert SW.pair(items, ["p", "wzyx", "xy", "s3"]) is None     # s3 of a 3-vector
    assert SW.pair(items, ["p", "wzyx", "xy"]) is None           # a swizzle without accessor


def test_pair_loads_of_vector_literal_swizzles():
    """A swizzle of a vector literal without repeated components is an lvalue in clang; in a
    macro body its load looks like a swizzle of it. The accessors decide, else a build error."""
    from pyplat.compiler import swizzle as SW
    # REV(REV(lit)): the inner swizzle, then a swizzle of it or its load, then the same again
    items = [("swz", 4, 4, True), ("maybe", 4, 4, 0, 0), ("maybe", 4, 4, 1, 1)]
    assert SW.pair(items, ["wzyx", "wzyx"]) == ["wzyx", "wzyx", None]
    assert SW.pair(items, ["wzyx"]) is None            # the load of a load: no
    # with repeated components the inner one is no lvalue: nothing to load
    assert SW.pair(items[:2], ["xxyy"]) is None
    assert SW.pair(items[:2], ["xxyy", "wzyx"]) == ["xxyy", "wzyx"]
    assert SW.pair(items[:2], ["wzyx"]) == ["wzyx", None]
    # .hi of a 3-vector literal is an lvalue for clang (its 4th component is undefined, not a
    # repeat): its load (CTS test_basic hiloeo)
    hi3 = [("swz", 3, 2, True), ("maybe", 2, 2, 0, 0)]
    assert SW.pair(hi3, ["hi"]) == ["hi", None]
    # DUP(REV(lit)) then a load of REV(lit), or a load of REV(lit) then REV(DUP(lit)):
    # both fit, so no guess
    two = [("swz", 4, 4, True), ("maybe", 4, 4, 0, 0), ("swz", 4, 4, True), ("maybe", 4, 4, 2, 2)]
    with pytest.raises(SW.AmbiguousAccessors):
        SW.pair(two, ["wzyx", "xxyy", "wzyx"])


def test_full_width_swizzles_of_rvalues_in_macro_bodies():
    """In a macro body a full-width swizzle of an rvalue has its base's extent, as an implicit
    conversion of the same type has (the literal's load here); clang's type tells them apart
    (seed 1000079), also for a swizzle of a swizzle, in a helper, and under a builtin."""
    src = """
    #define REV(v) ((v).wzyx)
    #define DUP(v) ((v).xxyy)
    #define ONE ((int4)(1))
    int4 helper(int4 x) { return REV(x + ONE) + ((int4)(x.x, 2, 3, 4)); }
    int4 twice(int4 x) { return REV(REV(((int4)(x.y, 2, 3, 4)))); }
    int4 mixed(int4 x) { return DUP(REV((int4)(x.x, 2, 3, 4))) + REV(DUP((int4)(x.z, 5, 6, 7))); }
    __kernel void k(__global const int *in, __global int *out) {
        int4 q = vload4(0, in);
        int4 a = REV(q + ONE) + ONE + ((int4)(5, 6, 7, 8));
        int4 b = DUP(REV(q * 2)) + ((int4)(q.w, 0, 0, 0));
        int4 c = max(REV((int4)(9, 8, 7, 6)), ((int4)(7)));
        int4 d = helper(q), e = twice(q), f = mixed(q);
        vstore4(a, 0, out); vstore4(b, 1, out); vstore4(c, 2, out); vstore4(d, 3, out);
        vstore4(e, 4, out); vstore4(f, 5, out);
    }"""
    q = np.array([10, 11, 12, 13])
    one = np.ones(4, int)
    a = (q + one)[::-1] + one + [5, 6, 7, 8]
    r = (q * 2)[::-1]
    b = r[[0, 0, 1, 1]] + [q[3], 0, 0, 0]
    c = np.maximum([6, 7, 8, 9], 7)
    d = (q + one)[::-1] + [q[0], 2, 3, 4]
    e = np.array([q[1], 2, 3, 4])
    f = np.array([4, 4, 3, 3]) + np.array([5, 5, q[2], q[2]])
    check(src, list(np.concatenate([a, b, c, d, e, f])))


def test_macro_swizzles_in_calls_helpers_loops_and_conditionals():
    src = """
    #define M(v) (v).wzyx
    #define F(v) as_int4(as_float4(M(v)))
    typedef struct { int4 a; int b; } S;
    int helper(int4 x) { return M(x).x + x.y; }
    __kernel void k(__global const int *in, __global int *out) {
        int16 v = vload16(0, in); int4 q = v.lo.lo;
        S s; s.a = M(q); s.b = s.a.x;
        int4 c = convert_int4(convert_float4(M(q)));
        int4 f = F(q);
        int4 sel = select(M(q), q, M(q) > q);
        int2 mx = max(M(q).xy, q.zw);
        for (int i = 0; i < M(q).w - 9; i++) out[8 + i] = M(q).s3 + i;
        out[0] = s.b; out[1] = c.x; out[2] = f.y; out[3] = sel.z; out[4] = mx.y;
        out[5] = helper(q); out[6] = sizeof(M(q)) + vec_step(M(v.hi).xy);
        out[7] = (q.x > 5 ? M(q) : q).x;
    }"""
    check(src, [13, 13, 12, 11, 13, 24, 18, 13, 10])


def test_swizzle_inside_a_macro_argument():
    # found by the differential tester (seed 9000335): a full-width swizzle of an rvalue inside
    # the argument of a macro (here as_int4, a macro of our header) has, as an expansion
    # location, the extent of its base; its spelling ends at the accessor, an implicit
    # conversion's does not. Another same-type conversion of the function took the accessor
    # and the swizzle was dropped.
    src = """
    #define ID(x) x
    __kernel void k(__global const int *in, __global int *out) {
        int4 a = as_int4(convert_int4(((uint4)((uint)in[0], (uint)in[1], 7u, 8u))) >> 1);
        int4 b = as_int4(((int4)(in[0], in[1], in[2], in[3])).wzzx >> 1);
        int4 c = ID(((int4)(in[4], in[5], in[6], in[7])).yxwz);
        vstore4(a, 0, out); vstore4(b, 1, out); vstore4(c, 2, out);
    }"""
    check(src, [5, 5, 3, 4, 6, 6, 6, 5, 15, 14, 17, 16])


def test_halves_of_a_three_component_vector_literal():
    """`((int3)(a, b, c)).hi` and friends, as CTS test_basic hiloeo writes them: the literal is
    an lvalue for clang, so is its .hi (the undefined 4th component is no repeat), and the
    value is loaded."""
    src = """
    __kernel void k(__global const int *in, __global int *out) {
        int2 h = ((int3)(in[0], in[1], in[2])).hi;
        int2 l = ((int3)(in[0], in[1], in[2])).lo;
        int2 o = ((int3)(in[0], in[1], in[2])).odd;
        int2 e = ((int3)(in[0], in[1], in[2])).even;
        out[0] = h.x; out[1] = l.x; out[2] = l.y; out[3] = o.x; out[4] = e.x; out[5] = e.y;
    }"""
    check(src, [12, 10, 11, 11, 10, 12])
