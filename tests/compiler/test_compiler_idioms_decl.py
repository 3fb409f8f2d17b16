"""Declaration idioms of real OpenCL libraries (docs/compiler.md, "Array parameters" and
"Samplers"): array-typed parameters adjusted to pointers (C99 6.7.5.3p7) in helpers and
kernels, and sampler_t in buffer-only kernels (program scope, locals, helper parameters, kernel
arguments). Each program builds and, run through pyopencl, computes what PoCL computes (the
comparison is skipped without PoCL)."""
import numpy as np
import pytest

from pyplat.compiler import build

POCL = "Portable Computing Language"

# every declarator form of an array parameter, each read (and some written) through
ARRAY_PARAMS = r"""
#define NWI 4
#define MWI 2
#define VWM 2
typedef float real;
typedef float2 realM;
typedef struct { float a; int b; } pair_t;

float open_sum(const float v[], int n) { float s = 0; for (int i = 0; i < n; i++) s += v[i]; return s; }
float sized(float v[3]) { return v[0] + 2 * v[1] + 3 * v[2]; }
float trace(float m[3][3]) { return m[0][0] + 10 * m[1][1] + 100 * m[2][2]; }
float row(real m[][3], int r) { return m[r][0] + m[r][1] * m[r][2]; }
float macro_sized(realM cpm[NWI*MWI/VWM]) {
    float s = 0;
    for (int i = 0; i < NWI*MWI/VWM; i++) s += cpm[i].x - 2 * cpm[i].y;
    return s;
}
void scale(float v[static 3], float k) { v[0] *= k; v[1] *= k; v[2] *= k; }
float qualified(float v[const 4]) { return v[3] - v[0]; }
float gsum(global const float v[], int n) { float s = 0; for (int i = 0; i < n; i++) s += v[i]; return s; }
void gput(global float v[], int i, float x) { v[i] = x; }
float lget(__local float t[16], int i) { return t[i]; }
int cube(int x[2][3][4]) { return x[1][2][3] * 1000 + x[0][1][2] * 10 + x[1][0][0]; }
float pairs(pair_t p[2]) { return p[0].a * p[1].b + p[1].a; }
float4 vecs(float4 q[], int i) { return q[i] * 2.0f + q[i + 1]; }
float vmat(float4 m[2][2]) { return m[1][0].w + m[0][1].y; }
int sizes(float v[3], float m[3][3], __local float t[16]) {
    return (int)(sizeof(v) * 10000 + sizeof(m) * 100 + sizeof(m[0]) + sizeof(t) * 1000000);
}
float moved(float v[], int n) { v += n; v++; return *v + v[-1] + (2 + v)[-2] * *(v - 1); }
float assigned(float v[], float w[]) { v = w; return v[1]; }
float address(float v[3]) { float **pp = &v; return (*pp)[2]; }
float derefs(float m[][3]) { return (*m)[1] + (*(m + 2))[2] * 3; }
float chosen(float v[], float w[4], int c) { float r = (c ? v : w)[1]; return r + (c++, w)[2] * c; }

kernel void arrays(global float a[], global const float b[], __local float t[16],
                   global float out[], global int iout[]) {
    int g = get_global_id(0), l = get_local_id(0);
    t[l] = b[g] * 3.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    float v[4] = {b[g], b[g] + 1, b[g] * 2, 7};
    float m[3][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, b[g]}};
    realM cpm[NWI*MWI/VWM] = {(realM)(1, 2), (realM)(b[g], 3), (realM)(5, g), (realM)(0.5f, 0.25f)};
    int x[2][3][4];
    for (int i = 0; i < 24; i++) x[i / 12][(i / 4) % 3][i % 4] = i + g;
    pair_t p[2] = {{b[g], 2}, {1.5f, g}};
    float4 q[3] = {(float4)(1, 2, 3, 4), (float4)(b[g]), (float4)(g, 0, 1, 2)};
    float4 vm[2][2] = {{(float4)(1), (float4)(2, 3, 4, 5)}, {(float4)(6, 7, 8, b[g]), (float4)(0)}};
    scale(v, 0.5f);
    float r = open_sum(v, 4) + sized(v) + trace(m) + row(m, 2) + macro_sized(cpm) + qualified(v)
            + gsum(b, 4) + lget(t, (l + 1) % 16) + pairs(p) + vecs(q, 1).z + vmat(vm)
            + moved(v, 1) + assigned(v, &m[1][0]) + address(v) + derefs(m) + chosen(v, g > 3 ? v : v + 1, g & 1);
    gput(a, g, r);
    out[g] = r;
    iout[g] = cube(x) + (g == 0 ? sizes(v, m, t) : 0);
}
"""

# under CL2.0 and CL3.0 too (clang gives an unqualified array parameter's element __private
# there, not __generic, as PoCL's clang does: a global array needs its own helper)
LATER_STD = r"""
float weighted(const float w[4]) { return w[0] + 2 * w[1] + 3 * w[2] + 4 * w[3]; }
float gweighted(global const float w[4]) { return w[0] + 2 * w[1] + 3 * w[2] + 4 * w[3]; }
kernel void gen(global const float b[], global float out[]) {
    int g = get_global_id(0);
    float p[4] = {g, 1, 2, b[g]};
    out[g] = weighted(p) + gweighted(b + (g % 4));
}
"""

# separate compilation: a unit declares a helper with array parameters another defines
LINKED_HELPER = "float h(const float v[3], float m[][2]) { return v[2] * 10 + m[1][0]; }"
LINKED_KERNEL = r"""
float h(const float v[3], float m[][2]);
kernel void k(global float o[]) {
    int g = get_global_id(0);
    float v[3] = {1, 2, g};
    float m[2][2] = {{4, 5}, {g * 0.5f, 7}};
    o[g] = h(v, m);
}
"""

# an image-processing kernel over buffers: samplers declared and passed, never read from images
SAMPLERS = r"""
__constant sampler_t sampler = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
constant sampler_t other = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;

float fetch(global const float *img, int w, int h, int x, int y, sampler_t s) {
    return img[clamp(y, 0, h - 1) * w + clamp(x, 0, w - 1)];
}

float box(global const float *img, int w, int h, int x, int y, const sampler_t s) {
    float acc = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            acc += fetch(img, w, h, x + dx, y + dy, s);
    return acc / 9.0f;
}

kernel void blur(global const float *img, global float *out, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    sampler_t mine = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
    const sampler_t edge = sampler;
    float a = box(img, w, h, x, y, sampler);
    float b = fetch(img, w, h, x + 1, y, mine) + fetch(img, w, h, x, y - 1, edge)
            + fetch(img, w, h, x - 1, y + 1, other);
    out[y * w + x] = a + 0.125f * b;
}
"""

SAMPLER_ARG = r"""
int pick(sampler_t s, int x) { return x * 2; }
kernel void with_sampler(global int *out, sampler_t smp, int k) {
    out[get_global_id(0)] = pick(smp, k) + (int)get_global_id(0);
}
"""

# the CLK_* bits, the values clang's opencl-c-base.h gives (the SPIR 1.2 encoding)
CLK_VALUES = {"CLK_ADDRESS_NONE": 0, "CLK_ADDRESS_CLAMP_TO_EDGE": 2, "CLK_ADDRESS_CLAMP": 4,
              "CLK_ADDRESS_REPEAT": 6, "CLK_ADDRESS_MIRRORED_REPEAT": 8,
              "CLK_NORMALIZED_COORDS_FALSE": 0, "CLK_NORMALIZED_COORDS_TRUE": 1,
              "CLK_FILTER_NEAREST": 0x10, "CLK_FILTER_LINEAR": 0x20}


def built(src, options=""):
    r = build(src, options, use_cache=False)
    assert r.ok, r.log
    return r


# ----------------------------------------------------------------------------- compiler only
def test_array_parameters_are_pointers_in_metadata():
    r = built(ARRAY_PARAMS, "-cl-kernel-arg-info")
    args = r.kernels["arrays"].args
    assert [a.kind for a in args] == ["global", "global", "local", "global", "global"]
    assert [a.type_name for a in args] == ["float*", "float*", "float*", "float*", "int*"]
    assert [a.size for a in args] == [8] * 5
    # `global const float b[]` is a pointer to const float; `a` and `out` are written
    assert args[1].type_qualifier & 1 and not args[0].type_qualifier & 1
    assert args[0].written and not args[1].written


def test_array_parameter_forms_build():
    """Each declarator alone, in a helper and where the kernel itself takes it."""
    forms = ["float v[]", "float v[3]", "const float v[8]", "float v[static 2]",
             "float v[const 2]", "volatile float v[]"]
    for form in forms:
        src = "float h(%s) { return v[1]; }\n" % form + \
              "kernel void k(global float *o) { float a[8] = {1, 2}; o[0] = h(a); }"
        built(src)
    for form in ["global float a[]", "__global float a[4]", "global const float a[]",
                 "constant float a[2]", "__local float a[16]",
                 "global volatile int a[]", "global float a[restrict]"]:
        r = built("kernel void k(%s, global float *o) { o[0] = a[1]; }" % form)
        a = r.kernels["k"].args[0]
        assert a.size == 8 and a.kind == form.split()[0].strip("_")
        # `a[restrict]` is a restrict pointer (CL_KERNEL_ARG_TYPE_RESTRICT), as clang says
        assert bool(a.type_qualifier & 2) == ("restrict" in form), form


def test_sampler_kernel_argument_metadata():
    r = built(SAMPLER_ARG, "-cl-kernel-arg-info")
    a = r.kernels["with_sampler"].args[1]
    assert (a.kind, a.type_name, a.size, a.written) == ("sampler", "sampler_t", 4, False)
    assert r.kernels["with_sampler"].args[2].kind == "value"


def test_clk_sampler_constants_are_clangs():
    body = " ".join("_Static_assert(%s == %d, \"%s\");" % (k, v, k) for k, v in CLK_VALUES.items())
    built(body + " kernel void k(global int *o) { o[0] = 0; }")
    # and still no image support claimed
    r = build("#ifdef __IMAGE_SUPPORT__\n#error images\n#endif\nkernel void k() {}", use_cache=False)
    assert r.ok, r.log


def test_sampler_misuse_stays_clangs_error():
    """What OpenCL C forbids of samplers is clang's error, not ours (or a crash)."""
    for src in ["kernel void k(global int *o) { sampler_t s = 16; o[0] = (int)s; }",
                "kernel void k(global sampler_t *s) { }"]:
        r = build(src, use_cache=False)
        assert not r.ok and "error:" in r.log and "internal compiler error" not in r.log, r.log


# ----------------------------------------------------------------------------- PyPlat vs PoCL
@pytest.fixture(scope="module")
def platforms():
    import pyplat
    pyplat.enable()
    cl = pytest.importorskip("pyopencl")
    plats = {p.name: p for p in cl.get_platforms()}
    assert "PyPlat" in plats
    return cl, plats


def contexts(platforms):
    """(name, context, queue) for PyPlat, then PoCL where it is installed."""
    cl, plats = platforms
    for name in ("PyPlat", POCL):
        if name in plats:
            ctx = cl.Context(plats[name].get_devices()[:1])
            yield name, ctx, cl.CommandQueue(ctx)


def compare(results):
    if len(results) < 2:
        pytest.skip("PoCL is not installed: PyPlat's results were checked on their own")
    (_, a), (_, b) = results.items()
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_array_parameters_match_pocl(platforms):
    cl = platforms[0]
    n, ls = 32, 16
    b = (np.arange(n, dtype=np.float32) * 0.75 - 3).astype(np.float32)
    results = {}
    for name, ctx, q in contexts(platforms):
        mf = cl.mem_flags
        bb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
        ba, bo = (cl.Buffer(ctx, mf.READ_WRITE, 4 * n) for _ in range(2))
        bi = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
        cl.Program(ctx, ARRAY_PARAMS).build().arrays(q, (n,), (ls,), ba, bb, cl.LocalMemory(4 * ls), bo, bi)
        a, o, i = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.int32)
        for host, dev in ((a, ba), (o, bo), (i, bi)):
            cl.enqueue_copy(q, host, dev)
        q.finish()
        assert np.all(np.isfinite(o)) and np.array_equal(a, o), name
        results[name] = (o, i)
    x0 = np.arange(24).reshape(2, 3, 4)
    cube0 = x0[1, 2, 3] * 1000 + x0[0, 1, 2] * 10 + x0[1, 0, 0]
    # sizeof of an array parameter is a pointer's, as clang says: v, m and the __local t are
    # 8 bytes, m[0] (float[3]) 12
    assert results["PyPlat"][1][0] == cube0 + 8 * 10000 + 8 * 100 + 12 + 8 * 1000000
    compare(results)


@pytest.mark.parametrize("std", ["CL2.0", "CL3.0"])
def test_array_parameters_under_later_versions_match_pocl(platforms, std):
    cl = platforms[0]
    n = 16
    b = np.linspace(-2, 5, n + 4).astype(np.float32)
    results = {}
    for name, ctx, q in contexts(platforms):
        mf = cl.mem_flags
        bb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
        bo = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
        cl.Program(ctx, LATER_STD).build("-cl-std=" + std).gen(q, (n,), None, bb, bo)
        o = np.empty(n, np.float32)
        cl.enqueue_copy(q, o, bo)
        results[name] = (o,)
    g = np.arange(n)
    w = np.array([1, 2, 3, 4], np.float32)
    want = g + 2 + 6 + 4 * b[:n] + np.array([b[k % 4:k % 4 + 4] @ w for k in range(n)])
    np.testing.assert_allclose(results["PyPlat"][0], want, rtol=1e-5)
    compare(results)


def test_linked_array_parameters_match_pocl(platforms):
    cl = platforms[0]
    n = 8
    results = {}
    for name, ctx, q in contexts(platforms):
        units = [cl.Program(ctx, src).compile() for src in (LINKED_HELPER, LINKED_KERNEL)]
        bo = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
        cl.link_program(ctx, units).k(q, (n,), None, bo)
        o = np.empty(n, np.float32)
        cl.enqueue_copy(q, o, bo)
        results[name] = (o,)
    np.testing.assert_array_equal(results["PyPlat"][0], np.arange(n) * 10.5)
    compare(results)


def test_buffer_samplers_match_pocl(platforms):
    cl = platforms[0]
    w, h = 12, 7
    img = np.random.default_rng(3).random(w * h, dtype=np.float32)
    results = {}
    for name, ctx, q in contexts(platforms):
        mf = cl.mem_flags
        bi = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=img)
        bo = cl.Buffer(ctx, mf.READ_WRITE, img.nbytes)
        cl.Program(ctx, SAMPLERS).build().blur(q, (w, h), None, bi, bo, np.int32(w), np.int32(h))
        o = np.empty_like(img)
        cl.enqueue_copy(q, o, bo)
        results[name] = (o,)
    im = img.reshape(h, w)
    pad = np.pad(im, 1, mode="edge")
    box = sum(pad[1 + dy:1 + dy + h, 1 + dx:1 + dx + w] for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / 9
    e = np.pad(im, 1, mode="edge")
    near = e[1:1 + h, 2:2 + w] + e[0:h, 1:1 + w] + e[2:2 + h, 0:w]
    np.testing.assert_allclose(results["PyPlat"][0].reshape(h, w), box + 0.125 * near, rtol=1e-5)
    compare(results)


def test_sampler_argument_builds_everywhere_and_fails_cleanly_at_set_arg(platforms):
    """A kernel taking a sampler_t builds on both platforms with the same argument info; on
    PyPlat no cl_sampler exists yet, so clSetKernelArg says CL_INVALID_SAMPLER (or
    CL_INVALID_ARG_SIZE for a size other than sizeof(cl_sampler)) and the launch without it
    CL_INVALID_KERNEL_ARGS; the other arguments set as usual."""
    cl = platforms[0]
    infos = {}
    for name, ctx, q in contexts(platforms):
        k = cl.Program(ctx, SAMPLER_ARG).build("-cl-kernel-arg-info").with_sampler
        infos[name] = [(k.get_arg_info(1, cl.kernel_arg_info.TYPE_NAME),
                        k.get_arg_info(1, cl.kernel_arg_info.ADDRESS_QUALIFIER),
                        k.get_arg_info(1, cl.kernel_arg_info.TYPE_QUALIFIER))]
        if name != "PyPlat":
            continue
        # first, while other arguments are unset (where a native fast path would answer)
        for value, code in ((np.uint64(0x12), cl.status_code.INVALID_SAMPLER),
                            (None, cl.status_code.INVALID_SAMPLER),
                            (np.uint32(0x12), cl.status_code.INVALID_ARG_SIZE)):
            with pytest.raises(cl.LogicError) as e:
                k.set_arg(1, value)
            assert e.value.code == code, value
        out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16)
        k.set_arg(0, out)
        k.set_arg(2, np.int32(3))
        with pytest.raises(cl.LogicError) as e:
            k.set_arg(1, np.uint64(0x12))
        assert e.value.code == cl.status_code.INVALID_SAMPLER
        with pytest.raises(cl.LogicError) as e:
            cl.enqueue_nd_range_kernel(q, k, (4,), None)
        assert e.value.code == cl.status_code.INVALID_KERNEL_ARGS
        with pytest.raises(cl.Error) as e:      # (no images: no sampler objects)
            cl.Sampler(ctx, False, cl.addressing_mode.CLAMP_TO_EDGE, cl.filter_mode.NEAREST)
        assert e.value.code == cl.status_code.INVALID_OPERATION
    assert infos["PyPlat"][0][0] == "sampler_t"
    assert infos["PyPlat"][0][1] == cl.kernel_arg_address_qualifier.PRIVATE
    if POCL not in infos:
        pytest.skip("PoCL is not installed")
    assert infos["PyPlat"] == infos[POCL]
