"""The builtin registry (pyplat/compiler/builtins/): one registration per name, every registered
name lowers (a kernel per chapter calls each of them), and builtins written in OpenCL C are
really compiled from kernels/builtins and linked into the program."""
import os
import re
import shutil

import numpy as np
import pytest

from pyplat.compiler import build, cache, compile_object, environment, library, link
from pyplat.compiler.builtins import registry
from pyplat.compiler.builtins.registry import REGISTRY
from support.compiled import run

# One kernel per chapter; together they call every name the registry holds and an example of
# every family (checked below), so a registered name that does not lower fails here.
CHAPTER_KERNELS = {
    "workitem": """
    __kernel void k(__global ulong *o) {
        o[0] = get_global_size(0) + get_local_size(1) + get_enqueued_local_size(2) + get_num_groups(0)
             + get_global_offset(1) + get_group_id(2) + get_local_id(0) + get_global_id(1) + get_work_dim()
             + get_global_linear_id() + get_local_linear_id();
    }""",
    "math": """
    __kernel void k(__global float *o, __global int *e, __global double *d) {
        float x = o[0], y = o[1], p; int q; float4 v = vload4(0, o);
        o[0] = sqrt(x) + fabs(x) + sin(x) + cos(x) + exp(x) + exp2(x) + log(x) + log2(x) + log10(x)
             + floor(x) + ceil(x) + round(x) + trunc(x) + rint(x) + pow(x, y) + powr(x, y) + fmin(x, y)
             + fmax(x, y) + copysign(x, y) + tan(x) + atan(x) + tanh(x) + asin(x) + acos(x) + sinh(x)
             + cosh(x) + asinh(x) + acosh(x) + atanh(x) + expm1(x) + log1p(x) + erf(x) + erfc(x)
             + tgamma(x) + lgamma(x) + exp10(x) + logb(x) + atan2(x, y) + hypot(x, y)
             + nextafter(x, y) + fdim(x, y) + remainder(x, y) + fmod(x, y) + rsqrt(x)
             + native_recip(x) + native_divide(x, y) + half_sqrt(x) + fma(x, y, x) + mad(x, y, x)
             + cbrt(x) + sincos(x, &p) + fract(x, &p) + modf(x, &p) + frexp(x, &q) + lgamma_r(x, &q)
             + remquo(x, y, &q) + ldexp(x, 2) + pown(x, 3) + rootn(x, 3) + ilogb(x) + nan(1u)
             + maxmag(x, y) + minmag(x, y) + sinpi(x) + cospi(x) + tanpi(x) + asinpi(x) + acospi(x)
             + atanpi(x) + atan2pi(x, y) + INFINITY + HUGE_VALF + NAN + __builtin_inf()
             + __builtin_nan("") + p + q + dot(v, v);
        d[0] = cbrt(d[1]) + HUGE_VAL;
    }""",
    "integer": """
    __kernel void k(__global int *o, __global uint *u, __global long *l) {
        int a = o[0], b = o[1];
        o[0] = abs(a) + abs_diff(a, b) + popcount(a) + clz(a) + ctz(a) + rotate(a, b) + add_sat(a, b)
             + sub_sat(a, b) + mul24(a, b) + mad24(a, b, a) + hadd(a, b) + rhadd(a, b) + mul_hi(a, b)
             + mad_hi(a, b, a) + mad_sat(a, b, a);
        l[0] = upsample(a, u[0]);
    }""",
    "common": """
    __kernel void k(__global float4 *o, __global int *i) {
        float4 x = o[0], y = o[1];
        o[0] = min(x, y) + max(x, 1.0f) + clamp(x, 0.0f, 1.0f) + mix(x, y, 0.5f) + step(0.5f, x)
             + smoothstep(0.0f, 1.0f, x) + sign(x) + degrees(x) + radians(x);
        i[0] = min(i[0], i[1]) + max(i[0], i[1]) + clamp(i[0], 0, 3);
    }""",
    "geometric": """
    __kernel void k(__global float4 *o, __global float *s) {
        float4 x = o[0], y = o[1];
        s[0] = dot(x, y) + length(x) + distance(x, y) + fast_length(x) + fast_distance(x, y);
        o[0] = normalize(x) + fast_normalize(y) + cross(x, y);
    }""",
    "relational": """
    __kernel void k(__global float4 *o, __global int4 *i) {
        float4 x = o[0], y = o[1];
        i[0] = isnan(x) + isinf(x) + isfinite(x) + isnormal(x) + signbit(x) + isequal(x, y)
             + isnotequal(x, y) + isgreater(x, y) + isgreaterequal(x, y) + isless(x, y)
             + islessequal(x, y) + islessgreater(x, y) + isordered(x, y) + isunordered(x, y);
        i[1] = (int4)(any(i[0]), all(i[0]), 0, 0);
        o[2] = select(x, y, i[0]) + bitselect(x, y, x);
    }""",
    "vector_data": """
    __kernel void k(__global float *f, __global half *h) {
        float4 v = vload4(0, f) + vload_half4(0, h) + vloada_half4(1, h);
        vstore4(v, 1, f);
        vstore_half(vload_half(0, h), 0, h);
        vstore_half4_rtz(v, 1, h);
        vstorea_half4(v, 2, h);
    }""",
    "synchronisation": """
    __kernel void k(__global int *o) {
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        read_mem_fence(CLK_LOCAL_MEM_FENCE);
        write_mem_fence(CLK_GLOBAL_MEM_FENCE);
        o[0] = 1;
    }""",
    "async_copies": """
    __kernel void k(__global float *g, __local float *l) {
        event_t e = async_work_group_copy(l, g, 16, 0);
        wait_group_events(1, &e);
        e = async_work_group_strided_copy(g, l, 4, 2, 0);
        wait_group_events(1, &e);
        prefetch(g, 16);
    }""",
    "atomics": """
    __kernel void k(__global int *o, __global long *l) {
        atomic_add(o, 1); atomic_cmpxchg(o, 1, 2); atomic_inc(o); atom_max(l, 3L);
    }""",
    "misc_vector": """
    __kernel void k(__global int4 *o, __global uint4 *m) {
        o[0] = shuffle(o[1], m[0]) + shuffle2(o[1], o[2], m[1]);
    }""",
    "printf": """
    __kernel void k(__global int *o) { if (o[0] == 12345) printf("%d %v2f\\n", o[0], (float2)(1, 2)); }""",
    "conversions": """
    __kernel void k(__global float4 *o, __global int4 *i, __global uchar4 *c) {
        i[0] = convert_int4(o[0]) + convert_int4_sat_rte(o[1]);
        c[0] = convert_uchar4_sat(i[1]);
        o[2] = convert_float4_rtz(i[2]);
    }""",
    "clang_builtins": """
    __kernel void k(__global float *f, __global uint *u, __global int *o) {
        o[0] = __builtin_expect(u[0], 1) + __builtin_expect_with_probability(u[1], 1, 0.9)
             + __builtin_isnan(f[0]) + __builtin_isinf(f[0]) + __builtin_isfinite(f[0])
             + __builtin_isnormal(f[0]) + __builtin_signbit(f[0]) + __builtin_signbitf(f[0])
             + __builtin_popcount(u[0]) + __builtin_constant_p(3) + __builtin_bswap16((ushort)u[0])
             + __builtin_bswap32(u[0]) + __builtin_bswap64((ulong)u[0]);
        __builtin_assume(u[0] > 0);
        __builtin_prefetch(f);
        if (u[0] == 12345) __builtin_unreachable();
        f[1] = __builtin_sqrtf(f[0]);
    }""",
}

CHAPTER_OPTIONS = {"integer": "-cl-std=CL2.0", "workitem": "-cl-std=CL2.0"}   # ctz, get_enqueued_local_size
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
MACROS = {"INFINITY": "__builtin_inff", "HUGE_VALF": "__builtin_huge_valf", "NAN": "__builtin_nanf",
          "HUGE_VAL": "__builtin_huge_val"}


def _called(src):
    names = {registry.canonical(m.group(1)) for m in CALL.finditer(src)}
    names |= {b for m, b in MACROS.items() if re.search(r"\b%s\b" % m, src)}
    return {n for n in names if REGISTRY.find(n) is not None}


@pytest.mark.parametrize("chapter", sorted(CHAPTER_KERNELS))
def test_each_chapter_kernel_lowers(chapter):
    r = build(CHAPTER_KERNELS[chapter], CHAPTER_OPTIONS.get(chapter, ""), use_cache=False)
    assert r.ok, r.log


def test_chapter_kernels_call_every_registered_name_and_family():
    called = set()
    for src in CHAPTER_KERNELS.values():
        called |= _called(src)
    assert set(REGISTRY.by_name) - called == set()
    for fam in REGISTRY.families:
        assert any(fam.pattern.fullmatch(n) for n in called), fam


def test_no_duplicate_or_ambiguous_registrations():
    # a name registered twice is refused, exact names and families both
    r = registry.Registry()
    r.add("mix", None, "a")
    with pytest.raises(registry.DuplicateBuiltin):
        r.add("mix", None, "b")
    r.add_family(r"vload[0-9]+", None, "a")
    with pytest.raises(registry.DuplicateBuiltin):
        r.add_family(r"vload[0-9]+", None, "b")
    # in the live registry no exact name is also claimed by a family, and no two families
    # claim one example name
    for name in REGISTRY.by_name:
        assert not [f for f in REGISTRY.families if f.pattern.fullmatch(name)], name
    examples = set()
    for src in CHAPTER_KERNELS.values():
        examples |= {registry.canonical(m.group(1)) for m in CALL.finditer(src)}
    for name in examples:
        assert len([f for f in REGISTRY.families if f.pattern.fullmatch(name)]) <= 1, name


def test_every_chapter_registers_and_names_its_origin():
    origins = {r.origin for r in REGISTRY.by_name.values()} | {f.origin for f in REGISTRY.families}
    for chapter in CHAPTER_KERNELS:
        assert "pyplat.compiler.builtins." + chapter in origins, chapter
    assert REGISTRY.by_name["mix"].origin == "kernels/builtins/common.cl"
    assert REGISTRY.by_name["cross"].origin == "kernels/builtins/geometric.cl"
    assert REGISTRY.by_name["clamp"].origin == "pyplat.compiler.builtins.common"


def test_unknown_builtin_is_a_clear_error():
    r = build("__kernel void k(__global int *o) { o[0] = atomic_nand(o, 1); }", use_cache=False)
    assert not r.ok and "atomic_nand" in r.log


MIX_KERNEL = """
__kernel void k(__global float4 *o) { o[0] = mix(o[1], o[2], 0.25f); o[3] = cross(o[1], o[2]); }"""


def _run_mix(r):
    o = np.array([[0, 0, 0, 0], [1, 2, 3, 4], [5, 7, 11, 13], [0, 0, 0, 0]], np.float32)
    run(r.kernels["k"], [o], (1,))
    return o


def test_cl_builtin_is_linked_from_the_library():
    r = build(MIX_KERNEL, use_cache=False)
    assert r.ok, r.log
    # the definitions come from kernels/builtins/*.cl, linked in (internal) before optimisation
    assert re.search(r"define internal <4 x float> @f\.__pyplat_mix_float4\(", r.llvm_ir)
    assert re.search(r"define internal <4 x float> @f\.__pyplat_cross_float4\(", r.llvm_ir)
    assert "__pyplat_mix_" in open(os.path.join(library.LIBRARY_DIR, "common.cl")).read()
    assert "__pyplat_mix_float2" not in r.llvm_ir     # only the definitions the program calls
    o = _run_mix(r)
    np.testing.assert_array_equal(o[0], np.float32([1, 2, 3, 4]) + (np.float32([5, 7, 11, 13]) - [1, 2, 3, 4]) * 0.25)
    np.testing.assert_array_equal(o[3], [2 * 11 - 3 * 7, 3 * 5 - 1 * 11, 1 * 7 - 2 * 5, 0])
    # programs without library builtins get none of it
    r = build("__kernel void k(__global float *o) { o[0] = sqrt(o[1]); }", use_cache=False)
    assert "f.__pyplat_" not in r.llvm_ir


def test_edited_library_file_is_compiled_and_changes_the_cache_key(tmp_path, monkeypatch):
    lib = tmp_path / "builtins"
    shutil.copytree(library.LIBRARY_DIR, lib)
    monkeypatch.setattr(library, "LIBRARY_DIR", str(lib))
    monkeypatch.setattr(library, "_compiled", {})
    monkeypatch.setattr(environment, "_env", {})
    key_before = cache.key(MIX_KERNEL, "", os.devnull)
    common = lib / "common.cl"
    common.write_text(common.read_text().replace("return x + d;", "return x + d + (T)1000;"))
    monkeypatch.setattr(environment, "_env", {})
    assert cache.key(MIX_KERNEL, "", os.devnull) != key_before
    r = build(MIX_KERNEL, use_cache=False)
    assert r.ok, r.log
    o = _run_mix(r)
    np.testing.assert_array_equal(o[0], np.float32([1, 2, 3, 4]) + (np.float32([5, 7, 11, 13]) - [1, 2, 3, 4]) * 0.25 + 1000)


def test_fast_math_programs_link_the_fast_variant():
    r = build(MIX_KERNEL, "-cl-fast-relaxed-math", use_cache=False)
    assert r.ok, r.log
    m = re.search(r"define internal <4 x float> @f\.__pyplat_mix_float4\.fast\(.*?\n}", r.llvm_ir, re.S)
    assert m and "fsub fast" in m.group(0)
    assert "@f.__pyplat_mix_float4(" not in r.llvm_ir


def test_cl_builtins_through_compile_and_link():
    obj = compile_object(MIX_KERNEL)
    assert obj.ok, obj.log
    fast = compile_object("float4 h(float4 a) { return mix(a, a + 1.0f, 0.5f); }", "-cl-fast-relaxed-math")
    assert fast.ok, fast.log
    r = link([obj.data, fast.data], use_cache=False)
    assert r.ok, r.log
    # each unit keeps its own setting: the plain and the fast-math definitions are both linked
    assert "@f.__pyplat_mix_float4(" in r.llvm_ir and "@f.__pyplat_mix_float4.fast(" in r.llvm_ir
    assert _run_mix(r)[0][0] == np.float32(1 + 4 * 0.25)
    # a library (-create-library) keeps the declarations; the executable linked from it resolves them
    lib = link([obj.data], "-create-library")
    assert lib.ok, lib.log
    r = link([lib.data], use_cache=False)
    assert r.ok, r.log
    assert _run_mix(r)[0][0] == np.float32(1 + 4 * 0.25)
