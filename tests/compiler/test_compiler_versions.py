"""OpenCL C language versions, build options and predefined macros, as a program sees them through
the API: every -cl-std the device lists (and CL2.0) builds and runs a kernel with common builtins,
every build option of the OpenCL 3.0 API spec is accepted and anything else refused, the macros of
the OpenCL C spec have its values, and the extension and feature macros are exactly what the device
reports."""
import numpy as np
import pytest

import pyplat
from pyplat.compiler import options as copts

pyplat.enable()     # before pyopencl initialises its loader

cl = pytest.importorskip("pyopencl")
pytestmark = pytest.mark.filterwarnings("ignore:Non-empty compiler output")

STDS = ["CL1.0", "CL1.1", "CL1.2", "CL2.0", "CL3.0"]


def _build(ctx, src, options):
    """clBuildProgram exactly as given (pyopencl's Program adds options and caches)."""
    prg = cl._cl._Program(ctx, src)
    prg.build(options.encode(), ctx.devices)
    return prg


def _refused(ctx, src, options):
    """The error clBuildProgram gives and the build log."""
    prg = cl._cl._Program(ctx, src)
    with pytest.raises(cl.RuntimeError) as e:
        prg.build(options.encode(), ctx.devices)
    return e.value.code, prg.get_build_info(ctx.devices[0], cl.program_build_info.LOG)


def _run(ctx, queue, src, options, outputs, n=1, inputs=()):
    """Build src with options, run its kernel k on n work-items with the arrays `inputs` and then
    one output buffer per (dtype, count) in outputs; the output buffers' contents."""
    kernel = cl.Kernel(_build(ctx, src, options), "k")
    mf = cl.mem_flags
    hosts = [np.zeros(count, dtype) for dtype, count in outputs]
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=h) for h in list(inputs) + hosts]
    kernel.set_args(*bufs)
    cl.enqueue_nd_range_kernel(queue, kernel, (n,), None)
    for h, b in zip(hosts, bufs[len(inputs):]):
        cl.enqueue_copy(queue, h, b)
    queue.finish()
    return hosts


# common builtins of every version: work-items, math, common, geometric, integer, relational,
# vector data, synchronisation, 32-bit atomics (both spellings), conversions and as_type
COMMON = """
__kernel void k(__global float *f, __global int *i) {
    size_t g = get_global_id(0);
    float x = (float)g + 0.25f;
    float4 v = (float4)(x, 1.0f, 2.0f, 3.0f);
    f[g * 8 + 0] = sqrt(x * x) + fabs(-1.0f) + mad(x, 2.0f, 1.0f);
    f[g * 8 + 1] = dot(v, v) + length((float2)(3.0f, 4.0f));
    f[g * 8 + 2] = clamp(x, 0.0f, 1.0f) + mix(0.0f, 4.0f, 0.5f) + sign(-x);
    f[g * 8 + 3] = pow(2.0f, 3.0f) + exp2(1.0f) + log2(8.0f) + floor(x);
    vstore4(v * 2.0f, 1, f + g * 8);
    barrier(CLK_GLOBAL_MEM_FENCE);
    i[g * 4 + 0] = max((int)g, 3) + abs(-2) + clz(1) + (convert_int_sat(1e20f) == INT_MAX);
    i[g * 4 + 1] = as_int(1.0f);
    i[g * 4 + 2] = isnan(NAN) + isinf(INFINITY) + any((int4)(0, 0, -1, 0));
    atomic_add(&i[3], 1);
    atom_add(&i[3], 1);
}
"""


@pytest.mark.parametrize("std", STDS)
def test_each_std_builds_and_runs_common_builtins(ctx, queue, std):
    f, i = _run(ctx, queue, COMMON, "-cl-std=" + std, [(np.float32, 16), (np.int32, 8)], n=2)
    for g in range(2):
        x = np.float32(g + 0.25)
        assert f[g * 8 + 0] == np.float32(x + 1 + (x * 2 + 1))
        assert f[g * 8 + 1] == np.float32(x * x + 1 + 4 + 9 + 5)
        assert f[g * 8 + 2] == np.float32(min(x, 1) + 2 - 1)
        assert f[g * 8 + 3] == np.float32(8 + 2 + 3 + np.floor(x))
        assert list(f[g * 8 + 4:g * 8 + 8]) == [2 * x, 2, 4, 6]
        assert i[g * 4 + 0] == max(g, 3) + 2 + 31 + 1
        assert i[g * 4 + 1] == 0x3F800000
        assert i[g * 4 + 2] == 1 + 1 + 1
    assert i[3] == 4                 # both work-items, both atomics, once each


def test_printf_declared_from_cl12_only(ctx):
    src = '__kernel void k(__global int *o) { printf("%d\\n", o[0]); }'
    for std in ("CL1.2", "CL2.0", "CL3.0"):
        _build(ctx, src, "-cl-std=" + std)
    for std in ("CL1.0", "CL1.1"):      # not a builtin there: an undeclared function, no crash
        code, log = _refused(ctx, src, "-cl-std=" + std)
        assert code == cl.status_code.BUILD_PROGRAM_FAILURE
        assert "printf" in log and "pyplat_opencl.h" not in log


# every build option of the OpenCL 3.0 API spec (5.8.6), alone and a few together
SPEC_OPTIONS = [
    "-D FOO", "-DFOO", "-D FOO=2", "-DFOO=2", "-D 'FOO=(1 + 1)'", "-I /tmp", "-I/tmp",
    "-cl-single-precision-constant", "-cl-denorms-are-zero", "-cl-fp32-correctly-rounded-divide-sqrt",
    "-cl-opt-disable", "-cl-strict-aliasing", "-cl-uniform-work-group-size", "-cl-no-subgroup-ifp",
    "-cl-mad-enable", "-cl-no-signed-zeros", "-cl-unsafe-math-optimizations", "-cl-finite-math-only",
    "-cl-fast-relaxed-math", "-w", "-Werror", "-cl-kernel-arg-info", "-g",
    "-cl-std=CL1.1", "-cl-std=CL1.2", "-cl-std=CL3.0",
    "-cl-std=CL1.1 -cl-mad-enable -cl-fp32-correctly-rounded-divide-sqrt -g -w -DFOO=3 -cl-kernel-arg-info",
]


@pytest.mark.parametrize("option", SPEC_OPTIONS)
def test_every_spec_build_option_is_accepted(ctx, queue, option):
    src = """
    #ifndef FOO
    #define FOO 2
    #endif
    __kernel void k(__global float *o) { o[get_global_id(0)] = FOO * 1.5f; }"""
    (o,) = _run(ctx, queue, src, option, [(np.float32, 1)])
    foo = 3 if "FOO=3" in option else 1 if option in ("-D FOO", "-DFOO") else 2
    assert o[0] == foo * 1.5


def test_no_option_makes_a_warning(ctx, queue):
    """-Werror with any other option still builds a clean program (clang once reported
    -cl-denorms-are-zero as an unused argument)."""
    src = "__kernel void k(__global float *o) { o[get_global_id(0)] = 3.0f; }"
    for option in SPEC_OPTIONS:
        (o,) = _run(ctx, queue, src, option + " -Werror", [(np.float32, 1)])
        assert o[0] == 3.0, option


@pytest.mark.parametrize("option", ["-cl-no-such-option", "-cl-std=CL9.9", "-cl-std=", "-O2", "-D", "-I",
                                    "-cl-fast-relaxed-math -bogus", "-create-library"])
def test_unknown_build_options_are_refused(ctx, option):
    code, log = _refused(ctx, "__kernel void k(__global int *o) { o[0] = 1; }", option)
    assert code == cl.status_code.INVALID_BUILD_OPTIONS
    assert "invalid build option" in log


def test_werror_turns_warnings_into_errors(ctx):
    src = "__kernel void k(__global int *o) { int a[2] = {0, 0}; o[0] = a[5]; }"
    _build(ctx, src, "")
    _build(ctx, src, "-w")
    code, log = _refused(ctx, src, "-Werror")
    assert code == cl.status_code.BUILD_PROGRAM_FAILURE and "error: array index 5" in log


def test_correctly_rounded_divide_and_sqrt(ctx, queue):
    rng = np.random.default_rng(12)
    a = (rng.standard_normal(4096) * np.exp2(rng.integers(-60, 60, 4096))).astype(np.float32)
    b = (rng.standard_normal(4096) * np.exp2(rng.integers(-60, 60, 4096))).astype(np.float32)
    src = """__kernel void k(__global const float *a, __global const float *b, __global float *q,
                             __global float *s) {
        size_t i = get_global_id(0);
        q[i] = a[i] / b[i];
        s[i] = sqrt(fabs(a[i]));
    }"""
    q, s = _run(ctx, queue, src, "-cl-fp32-correctly-rounded-divide-sqrt",
                [(np.float32, a.size), (np.float32, a.size)], n=a.size, inputs=(a, b))
    # numpy's float32 / and sqrt are IEEE: correctly rounded to nearest
    np.testing.assert_array_equal(q.view(np.int32), (a / b).view(np.int32))
    np.testing.assert_array_equal(s.view(np.int32), np.sqrt(np.abs(a)).view(np.int32))


# (macro, C type it is read as, value the OpenCL C spec gives it)
INT_MACROS = [
    ("CHAR_BIT", "long", 8), ("SCHAR_MAX", "long", 127), ("SCHAR_MIN", "long", -128),
    ("CHAR_MAX", "long", 127), ("CHAR_MIN", "long", -128), ("UCHAR_MAX", "long", 255),
    ("SHRT_MAX", "long", 32767), ("SHRT_MIN", "long", -32768), ("USHRT_MAX", "long", 65535),
    ("INT_MAX", "long", 2 ** 31 - 1), ("INT_MIN", "long", -2 ** 31), ("UINT_MAX", "long", 2 ** 32 - 1),
    ("LONG_MAX", "long", 2 ** 63 - 1), ("LONG_MIN", "long", -2 ** 63),
    ("ULONG_MAX", "ulong", 2 ** 64 - 1),
    ("FLT_DIG", "long", 6), ("FLT_MANT_DIG", "long", 24), ("FLT_MAX_10_EXP", "long", 38),
    ("FLT_MAX_EXP", "long", 128), ("FLT_MIN_10_EXP", "long", -37), ("FLT_MIN_EXP", "long", -125),
    ("FLT_RADIX", "long", 2),
    ("DBL_DIG", "long", 15), ("DBL_MANT_DIG", "long", 53), ("DBL_MAX_10_EXP", "long", 308),
    ("DBL_MAX_EXP", "long", 1024), ("DBL_MIN_10_EXP", "long", -307), ("DBL_MIN_EXP", "long", -1021),
    ("DBL_RADIX", "long", 2),
    ("CL_VERSION_1_0", "long", 100), ("CL_VERSION_1_1", "long", 110), ("CL_VERSION_1_2", "long", 120),
    ("CL_VERSION_2_0", "long", 200), ("CL_VERSION_3_0", "long", 300),
    ("__OPENCL_VERSION__", "long", 300), ("__ENDIAN_LITTLE__", "long", 1),
]
_F32 = np.finfo(np.float32)
_F64 = np.finfo(np.float64)
FLOAT_MACROS = [
    ("FLT_MAX", _F32.max), ("FLT_MIN", _F32.tiny), ("FLT_EPSILON", _F32.eps), ("MAXFLOAT", _F32.max),
    ("HUGE_VALF", np.inf), ("INFINITY", np.inf),
    ("M_E_F", np.e), ("M_LOG2E_F", np.log2(np.e)), ("M_LOG10E_F", np.log10(np.e)), ("M_LN2_F", np.log(2)),
    ("M_LN10_F", np.log(10)), ("M_PI_F", np.pi), ("M_PI_2_F", np.pi / 2), ("M_PI_4_F", np.pi / 4),
    ("M_1_PI_F", 1 / np.pi), ("M_2_PI_F", 2 / np.pi), ("M_2_SQRTPI_F", 2 / np.sqrt(np.pi)),
    ("M_SQRT2_F", np.sqrt(2)), ("M_SQRT1_2_F", np.sqrt(0.5)),
]
DOUBLE_MACROS = [
    ("DBL_MAX", _F64.max), ("DBL_MIN", _F64.tiny), ("DBL_EPSILON", _F64.eps), ("HUGE_VAL", np.inf),
    ("M_E", np.e), ("M_LOG2E", np.log2(np.e)), ("M_LOG10E", np.log10(np.e)), ("M_LN2", np.log(2)),
    ("M_LN10", np.log(10)), ("M_PI", np.pi), ("M_PI_2", np.pi / 2), ("M_PI_4", np.pi / 4),
    ("M_1_PI", 1 / np.pi), ("M_2_PI", 2 / np.pi), ("M_2_SQRTPI", 2 / np.sqrt(np.pi)),
    ("M_SQRT2", np.sqrt(2)), ("M_SQRT1_2", np.sqrt(0.5)),
]


@pytest.mark.parametrize("std", STDS)
def test_spec_macros_have_the_spec_values(ctx, queue, std):
    body = []
    for j, (name, ctype, _) in enumerate(INT_MACROS):
        body.append("#ifdef %s\n li[%d] = (long)(%s)%s;\n#else\n li[%d] = 12345;\n#endif"
                    % (name, j, ctype, name, j))
    for j, (name, _) in enumerate(FLOAT_MACROS):
        body.append("ff[%d] = %s;" % (j, name))
    for j, (name, _) in enumerate(DOUBLE_MACROS):
        body.append("dd[%d] = %s;" % (j, name))
    body.append("li[%d] = isnan(NAN) && sizeof(NAN) == 4 && sizeof(INFINITY) == 4 && sizeof(HUGE_VAL) == 8;"
                % len(INT_MACROS))
    body.append("li[%d] = ilogb(0.0f) == FP_ILOGB0 && ilogb(NAN) == FP_ILOGBNAN "
                "&& ilogb(0.0) == FP_ILOGB0 && ilogb((double)NAN) == FP_ILOGBNAN;" % (len(INT_MACROS) + 1))
    body.append("li[%d] = __OPENCL_C_VERSION__;" % (len(INT_MACROS) + 2))
    src = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
           "__kernel void k(__global long *li, __global float *ff, __global double *dd) {\n"
           + "\n".join(body) + "\n}\n")
    li, ff, dd = _run(ctx, queue, src, "-cl-std=" + std,
                      [(np.int64, len(INT_MACROS) + 3), (np.float32, len(FLOAT_MACROS)),
                       (np.float64, len(DOUBLE_MACROS))])
    for j, (name, _, want) in enumerate(INT_MACROS):
        assert int(li[j]) == (want - 2 ** 64 if want >= 2 ** 63 else want), name
    for j, (name, want) in enumerate(FLOAT_MACROS):
        assert ff[j] == np.float32(want), name
    for j, (name, want) in enumerate(DOUBLE_MACROS):
        assert dd[j] == np.float64(want), name
    assert li[len(INT_MACROS)] == 1
    assert li[len(INT_MACROS) + 1] == 1
    assert li[len(INT_MACROS) + 2] == int(std[2]) * 100 + int(std[4]) * 10


def _defined(ctx, queue, names, options):
    src = "__kernel void k(__global int *o) {\n" + "".join(
        "#ifdef %s\n o[%d] = 1;\n#endif\n" % (n, j) for j, n in enumerate(names)) + "}\n"
    (o,) = _run(ctx, queue, src, options, [(np.int32, len(names))])
    return {n for n, d in zip(names, o) if d}


def test_macros_only_where_the_spec_says(ctx, queue):
    names = ["__IMAGE_SUPPORT__", "__FAST_RELAXED_MATH__", "__EMBEDDED_PROFILE__", "__kernel_exec"]
    assert _defined(ctx, queue, names, "") == {"__kernel_exec"}            # no images
    assert "__FAST_RELAXED_MATH__" in _defined(ctx, queue, names, "-cl-fast-relaxed-math")


def test_options_that_change_the_language(ctx, queue):
    """-cl-single-precision-constant makes double literals float; the math flags set the macros
    programs test (__FINITE_MATH_ONLY__ is 1 under -cl-finite-math-only or -cl-fast-relaxed-math)."""
    src = """#pragma OPENCL EXTENSION cl_khr_fp64 : enable
    __kernel void k(__global int *o) {
        o[0] = (1.0 / 3.0) == (double)(1.0f / 3.0f);
        o[1] = __FINITE_MATH_ONLY__;
    }"""
    got = {opt: list(_run(ctx, queue, src, opt, [(np.int32, 2)])[0])
           for opt in ("", "-cl-single-precision-constant", "-cl-finite-math-only", "-cl-fast-relaxed-math")}
    assert got == {"": [0, 0], "-cl-single-precision-constant": [1, 0], "-cl-finite-math-only": [0, 1],
                   "-cl-fast-relaxed-math": [0, 1]}


def test_kernel_exec_qualifier(ctx, queue):
    src = "__kernel_exec(64, float4) void k(__global int *o) { o[0] = 7; }"
    (o,) = _run(ctx, queue, src, "-cl-std=CL1.2", [(np.int32, 1)])
    assert o[0] == 7


# the OpenCL C 3.0 optional features (spec 6.2.1) and the extensions clang knows
ALL_FEATURES = [
    "__opencl_c_3d_image_writes", "__opencl_c_atomic_order_acq_rel", "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device", "__opencl_c_atomic_scope_all_devices", "__opencl_c_device_enqueue",
    "__opencl_c_generic_address_space", "__opencl_c_fp64", "__opencl_c_images", "__opencl_c_int64",
    "__opencl_c_pipes", "__opencl_c_program_scope_global_variables", "__opencl_c_read_write_images",
    "__opencl_c_subgroups", "__opencl_c_work_group_collective_functions",
    "__opencl_c_integer_dot_product_input_4x8bit", "__opencl_c_integer_dot_product_input_4x8bit_packed",
    "__opencl_c_fp16", "__opencl_c_ext_fp32_global_atomic_add", "__opencl_c_ext_fp64_global_atomic_add",
]
ALL_EXTENSIONS = [
    "cl_khr_fp16", "cl_khr_fp64", "cl_khr_3d_image_writes", "cl_khr_byte_addressable_store",
    "cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics", "cl_khr_local_int32_extended_atomics",
    "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics", "cl_khr_subgroups",
    "cl_khr_depth_images", "cl_khr_gl_msaa_sharing", "cl_khr_mipmap_image", "cl_khr_mipmap_image_writes",
    "cl_khr_srgb_image_writes", "cl_khr_subgroup_extended_types", "cl_khr_extended_bit_ops",
    "cl_khr_integer_dot_product", "cl_ext_float_atomics", "cl_khr_gl_sharing", "cl_khr_spir",
]


def test_cl30_feature_macros_match_the_device(ctx, queue):
    dev = ctx.devices[0]
    reported = {nv.name for nv in dev.get_info(cl.device_info.OPENCL_C_FEATURES)}
    assert reported == set(copts.OPENCL_C_FEATURES)
    assert _defined(ctx, queue, ALL_FEATURES, "-cl-std=CL3.0") == reported


@pytest.mark.parametrize("std", STDS)
def test_extension_macros_match_the_device(ctx, queue, std):
    reported = set(ctx.devices[0].extensions.split())
    assert set(copts.EXTENSIONS) <= reported
    assert _defined(ctx, queue, ALL_EXTENSIONS, "-cl-std=" + std) == reported & set(ALL_EXTENSIONS)
