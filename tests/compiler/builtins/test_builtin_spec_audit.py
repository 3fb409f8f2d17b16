"""Every builtin function of the OpenCL C spec (1.2 and 3.0 without optional features), each
gentype overload class at least once (scalar and a vector width, float and double, every integer
type, the forms taking a scalar next to a vector), builds under -cl-std=CL1.2 and -cl-std=CL3.0,
and computes what PoCL computes on edge inputs (0, -0, inf, NaN, subnormals, extremes, integer
MIN/MAX): special values bit for bit (NaN for NaN), the rest within the spec's ulp table
("Relative error as ulps") counted twice (once for each implementation's allowed error).
Skipped without PoCL. Where PoCL departs from the spec, the spec wins (SPEC_OVER_POCL)."""
import math

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")

# float ulp bounds from the spec's table (float, double); None: implementation defined
ULP = {
    "acos": (4, 4), "acosh": (4, 4), "acospi": (5, 5), "asin": (4, 4), "asinh": (4, 4), "asinpi": (5, 5),
    "atan": (5, 5), "atanh": (5, 5), "atanpi": (5, 5), "cbrt": (2, 2), "cos": (4, 4), "cosh": (4, 4),
    "cospi": (4, 4), "erfc": (16, 16), "erf": (16, 16), "exp": (3, 3), "exp2": (3, 3), "exp10": (3, 3),
    "expm1": (3, 3), "log": (3, 3), "log2": (3, 3), "log10": (3, 3), "log1p": (2, 2), "rsqrt": (2, 2),
    "sin": (4, 4), "sinh": (4, 4), "sinpi": (4, 4), "sqrt": (3, 0), "tan": (5, 5), "tanh": (5, 5),
    "tanpi": (6, 6), "tgamma": (16, 16), "lgamma": (None, None), "atan2": (6, 6), "atan2pi": (6, 6),
    "hypot": (4, 4), "pow": (16, 16), "powr": (16, 16), "pown": (16, 16), "rootn": (16, 16),
    "sincos": (4, 4), "lgamma_r": (None, None), "degrees": (2, 2), "radians": (2, 2), "mix": (None, None),
    "smoothstep": (None, None), "length": (4, 4), "distance": (4, 4), "normalize": (4, 4), "dot": (None, None),
    "mad": (None, None), "cross": (None, None), "divide": (0, 0), "recip": (0, 0),
}
F1 = ("acos acosh acospi asin asinh asinpi atan atanh atanpi cbrt ceil cos cosh cospi erfc erf exp exp2 "
      "exp10 expm1 fabs floor lgamma log log2 log10 log1p logb rint round rsqrt sin sinh sinpi sqrt tan tanh "
      "tanpi tgamma trunc degrees radians sign").split()
NATIVE = "cos divide exp exp2 exp10 log log2 log10 powr recip rsqrt sin sqrt tan".split()
F2 = "atan2 atan2pi copysign fdim fmax fmin fmod hypot maxmag minmag nextafter pow powr remainder step max min".split()
F2_SCALAR = ["fmax", "fmin", "step", "max", "min"]            # (gentype, scalar) / (scalar, gentype)
F3 = ["fma", "mad", "mix", "clamp", "smoothstep"]
REL1 = "isnan isinf isfinite isnormal signbit".split()
REL2 = "isequal isnotequal isgreater isgreaterequal isless islessequal islessgreater isordered isunordered".split()
I1 = ["abs", "clz", "popcount"]
I2 = "abs_diff add_sat hadd rhadd max min mul_hi rotate sub_sat".split()
I3 = ["clamp", "mad_hi", "mad_sat", "bitselect"]

INTS = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "int": np.int32,
        "uint": np.uint32, "long": np.int64, "ulong": np.uint64}
FLOATS = {"float": np.float32, "double": np.float64}
WIDTH = {"float": 4, "double": 2, "char": 16, "uchar": 3, "short": 8, "ushort": 2, "int": 4, "uint": 8,
         "long": 2, "ulong": 4}
# results where PoCL departs from the spec: (function, reason)
SPEC_OVER_POCL = {
    "lgamma_r": "the sign at the poles (non-positive integers, -inf) is unspecified; glibc says +1",
    "ilogb": "FP_ILOGBNAN is INT_MIN here (as in glibc), INT_MAX in PoCL: both allowed",
    "remquo": "the quotient's bits beyond the 7 the spec requires differ (test_builtin_math_edges.py)",
}


def _int_valued(x):
    return np.isfinite(x) and x == np.floor(x)


def _either_zero(xs, ours, pocl):
    return ours == 0 and pocl == 0


def _nan_input(xs, ours, pocl):
    return any(np.isnan(v) for v in xs)


# Rows where the two may differ and the spec says PoCL's is not the only answer (or is wrong):
# function -> accept((x, y, z), ours, pocl)
SPEC_ROWS = {
    # C99/IEEE leave the sign of a zero result open when both operands are zeros; fract(-0) is
    # -0 in the CTS reference (modf's), +0 by the spec's fmin(x - floor(x), ...) formula
    **{f: _either_zero for f in ("fmax", "fmin", "maxmag", "minmag", "fract")},
    # common max/min/clamp: "undefined if x or y is infinite or NaN"
    **{f: (lambda xs, o, p: _either_zero(xs, o, p) or _nan_input(xs, o, p)) for f in ("max", "min", "clamp")},
    # cospi(n + 1/2) = +0; sinpi(+n) = +0 and sinpi(-n) = -0; tanpi(n) = copysign(0, n) for
    # even n and copysign(0, -n) for odd n; atanpi(+-0) = +-0 (PoCL: -0, +-0, +-0, +0)
    "cospi": lambda xs, o, p: _int_valued(xs[0] - 0.5) and o == 0 and not np.signbit(o),
    "sinpi": lambda xs, o, p: _int_valued(xs[0]) and o == 0 and np.signbit(o) == (xs[0] < 0),
    "tanpi": lambda xs, o, p: _int_valued(xs[0]) and o == 0 and np.signbit(o) == (
        (xs[0] % 2 == 0) == (xs[0] < 0)),
    "atanpi": lambda xs, o, p: xs[0] == 0 and o == 0 and np.signbit(o) == np.signbit(xs[0]),
    # log1p(x) = x for subnormal x (PoCL flushes it to 0)
    "log1p": lambda xs, o, p: xs[0] != 0 and abs(xs[0]) < np.finfo(type(xs[0])).tiny and o == xs[0],
    # normalize: a vector of NaNs where an element is NaN (PoCL, like libclc: sign(NaN) = 0)
    "normalize": lambda xs, o, p: np.isnan(o) and p == 0,
}


def float_edges(dt):
    fi = np.finfo(dt)
    v = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 1.5, -2.5, 0.1, -0.7,
         fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny, -fi.tiny, fi.max, -fi.max, 100.0,
         -1e-3, 7.0, 1e7, 0.75, 30.0, 1e-30]
    return np.array(v, dt)


def int_edges(dt):
    ii = np.iinfo(dt)
    v = [0, 1, 2, 3, 7, 100, ii.max, ii.max - 1, ii.min, ii.min + 1, ii.max // 2, ii.max // 3 + 1]
    if ii.min < 0:
        v += [-1, -2, -7, -100]
    return np.array(v, dt)


def lines_for(t, n):
    """Kernel sources (name -> source) for element type t at width n."""
    vt = t if n == 1 else "%s%d" % (t, n)
    fl = t in FLOATS
    it = {"float": "int", "double": "long"}.get(t, t)            # relational result element
    rt = (("int" if n == 1 else "%s%d" % (it, n)) if fl else None)
    iv = "int" if n == 1 else "int%d" % n
    if n == 1:
        ld = lambda p: "%s[i]" % p                                  # noqa: E731
        st = lambda v, p: "%s[i] = %s;" % (p, v)                   # noqa: E731
    else:
        ld = lambda p: "vload%d(i, %s)" % (n, p)                  # noqa: E731
        st = lambda v, p: "vstore%d(%s, i, %s);" % (n, v, p)      # noqa: E731
    ks = {}

    def k(name, body, outs=(vt,)):
        ks[name] = (body, outs)

    A, B, C = ld("a"), ld("b"), ld("c")
    if fl:
        for f in F1:
            k("u_" + f, st("%s(%s)" % (f, A), "o0"))
        for f in NATIVE if t == "float" else ():     # native_* are float functions only
            if f in ("divide", "powr"):
                k("native_" + f, st("native_%s(%s, %s)" % (f, A, B), "o0"))
                if t == "float":
                    k("half_" + f, st("half_%s(%s, %s)" % (f, A, B), "o0"))
            else:
                k("native_" + f, st("native_%s(%s)" % (f, A), "o0"))
                if t == "float":
                    k("half_" + f, st("half_%s(%s)" % (f, A), "o0"))
        for f in F2:
            k("b_" + f, st("%s(%s, %s)" % (f, A, B), "o0"))
        for f in F2_SCALAR:
            if n > 1:
                k("bs_" + f, st("%s(%s, b[i])" % (f, A) if f != "step" else "%s(b[i], %s)" % (f, A), "o0"))
        for f in F3:
            k("t_" + f, st("%s(%s, %s, %s)" % (f, A, B, C), "o0"))
        if n > 1:
            k("ts_clamp", st("clamp(%s, b[i], c[i])" % A, "o0"))
            k("ts_mix", st("mix(%s, %s, c[i])" % (A, B), "o0"))
            k("ts_smoothstep", st("smoothstep(b[i], c[i], %s)" % A, "o0"))
        for f in ("ldexp", "pown", "rootn"):
            kk = "vload%d(i, k)" % n if n > 1 else "k[i]"
            k("i_" + f, st("%s(%s, %s)" % (f, A, kk), "o0"))
        if n > 1:
            k("is_ldexp", st("ldexp(%s, k[i])" % A, "o0"))
        k("ilogb", st("ilogb(%s)" % A, "o0"), (iv,))
        k("nan_", st("nan(as_%s(%s))" % ({"float": "uint", "double": "ulong"}[t] + ("" if n == 1 else str(n)), A),
                     "o0"))
        for f in ("fract", "modf", "sincos"):
            k("p_" + f, "%s p; %s %s" % (vt, st("%s(%s, &p)" % (f, A), "o0"), st("p", "o1")), (vt, vt))
        for f in ("frexp", "lgamma_r"):
            k("p_" + f, "%s p; %s %s" % (iv, st("%s(%s, &p)" % (f, A), "o0"), st("p", "o1")), (vt, iv))
        k("p_remquo", "%s p; %s %s" % (iv, st("remquo(%s, %s, &p)" % (A, B), "o0"), st("p", "o1")), (vt, iv))
        for f in REL1:
            k("r_" + f, st("%s(%s)" % (f, A), "o0"), (rt,))
        for f in REL2:
            k("r_" + f, st("%s(%s, %s)" % (f, A, B), "o0"), (rt,))
        k("r_bitselect", st("bitselect(%s, %s, %s)" % (A, B, C), "o0"))
        ct = "long" if (t == "double" and n == 1) else rt
        k("r_select", st("select(%s, %s, (%s)isless(%s, %s))" % (A, B, ct, C, B), "o0"))
        if n > 1 or t == "float":
            for f in ("length", "distance", "dot"):
                args = A if f == "length" else "%s, %s" % (A, B)
                k("g_" + f, "o0[i] = %s(%s);" % (f, args), (t,))
            k("g_normalize", st("normalize(%s)" % A, "o0"))
            if t == "float":
                for f in ("fast_length", "fast_distance"):
                    args = A if f == "fast_length" else "%s, %s" % (A, B)
                    k("g_" + f, "o0[i] = %s(%s);" % (f, args), (t,))
                k("g_fast_normalize", st("fast_normalize(%s)" % A, "o0"))
        if n in (4,):
            k("g_cross", st("cross(%s, %s)" % (A, B), "o0"))
            k("g_cross3", "vstore3(cross(vload3(i, a), vload3(i, b)), i, o0);")
    else:
        ut = ("u" + t if not t.startswith("u") else t) + ("" if n == 1 else str(n))
        for f in I1:
            k("i1_" + f, st("%s(%s)" % (f, A), "o0"), (ut if f == "abs" else vt,))
        for f in I2:
            if f == "abs_diff":
                k("i2_" + f, st("%s(%s, %s)" % (f, A, B), "o0"), (ut,))
            else:
                k("i2_" + f, st("%s(%s, %s)" % (f, A, B), "o0"))
        for f in I3:
            k("i3_" + f, st("%s(%s, %s, %s)" % (f, A, B, C), "o0"))
        if t in ("int", "uint"):
            k("i2_mul24", st("mul24(%s, %s)" % (A, B), "o0"))
            k("i3_mad24", st("mad24(%s, %s, %s)" % (A, B, C), "o0"))
        if n > 1:
            for f in ("max", "min"):
                k("is_" + f, st("%s(%s, b[i])" % (f, A), "o0"))
            k("is_clamp", st("clamp(%s, b[i], c[i])" % A, "o0"))
        up = {"char": "short", "uchar": "ushort", "short": "int", "ushort": "uint", "int": "long", "uint": "ulong"}
        if t in up:
            ht = "u" + t if not t.startswith("u") else t
            hv = ht + ("" if n == 1 else str(n))
            k("i2_upsample", st("upsample(%s, as_%s(%s))" % (A, hv, B), "o0"),
              (up[t] + ("" if n == 1 else str(n)),))
        if not t.startswith("u"):
            k("r_any", "o0[i] = any(%s);" % A, ("int",))
            k("r_all", "o0[i] = all(%s);" % A, ("int",))
        k("r_select", st("select(%s, %s, %s)" % (A, B, C), "o0"))
    return ks


def platform(name):
    for p in cl.get_platforms():
        if p.name == name:
            ctx = cl.Context(p.get_devices()[:1])
            return ctx, cl.CommandQueue(ctx)
    return None


def ulps(a, b, dt):
    """Distance in representable values between a and b."""
    it = np.int32 if dt == np.float32 else np.int64
    bits = 8 * np.dtype(dt).itemsize
    ia, ib = a.view(it).astype(object), b.view(it).astype(object)
    fa = np.array([x if x >= 0 else -(x & ((1 << (bits - 1)) - 1)) for x in ia], object)
    fb = np.array([x if x >= 0 else -(x & ((1 << (bits - 1)) - 1)) for x in ib], object)
    return np.array([abs(x - y) for x, y in zip(fa, fb)], object)


def base_name(kname):
    return kname.split("_", 1)[1] if kname.split("_", 1)[0] in ("u", "b", "bs", "t", "ts", "i", "is", "p", "r", "g",
                                                                 "i1", "i2", "i3") else kname


def compare(kname, t, n, got, want, dt, inputs):
    f = base_name(kname)
    bad = []
    for j, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g).reshape(-1), np.asarray(w).reshape(-1)
        if g.dtype.kind != "f":
            if f in SPEC_OVER_POCL:
                continue
            d = np.nonzero(g != w)[0]
        else:
            if kname.startswith(("native_", "half_", "g_fast_")):
                continue                      # implementation-defined accuracy
            tol = ULP.get(f, (0, 0))[0 if dt == np.float32 else 1]
            if tol is None:
                continue
            wn, gn = np.isnan(w), np.isnan(g)
            special = wn | np.isinf(w) | (w == 0)
            exact = ~special & (ulps(g, w, dt) <= 2 * tol)
            same_special = special & ((wn & gn) | (~wn & (g == w) & (np.signbit(g) == np.signbit(w))))
            d = np.nonzero(~(exact | same_special))[0]
            accept = SPEC_ROWS.get(f)
            if accept is not None and g.size == len(inputs[0]):
                # the forms taking scalars next to a vector read b and c once per work-item
                per_item = kname.startswith(("bs_", "ts_", "is_"))
                d = [i for i in d if not accept((inputs[0][i],) + tuple(x[i // n if per_item else i] for x in inputs[1:]),
                                                g[i], w[i])]
        for i in d[:3]:
            bad.append("%s %s out%d[%d]: pyplat %r pocl %r (inputs %s)" % (kname, t, j, i, g[i], w[i],
                                                                         [x[i % len(x)] for x in inputs]))
    return bad


DT = dict(INTS, **FLOATS)


def elem_dtype(o):
    return DT[o.rstrip("0123456789")]


def inputs(t, n):
    dt = DT[t]
    e = float_edges(dt) if t in FLOATS else int_edges(dt)
    a = np.repeat(e, len(e))
    b = np.tile(e, len(e))
    pad = (-len(a)) % n
    a, b = np.concatenate([a, a[:pad]]), np.concatenate([b, b[:pad]])
    c = np.roll(b, 5)
    ks = np.array([0, 1, -1, 2, -2, 3, 5, -3, 1000, -1000, 2 ** 31 - 1, -2 ** 31, 128, -150, 200], np.int32)
    k = np.resize(ks, len(a))
    return [a, b, c], k


def layout(kernels, t, n, groups):
    """One kernel calling every builtin: each call's outputs at their own offset of one buffer.
    Returns (source, [(name, [(offset, count, dtype)])], total bytes)."""
    parts, where, off = [], [], 0
    for name, (body, outs) in kernels.items():
        decl, mine = [], []
        for j, o in enumerate(outs):
            count = groups * int(o[len(o.rstrip("0123456789")):] or 1)
            et = o.rstrip("0123456789")
            decl.append("__global %s *o%d = (__global %s *)(ob + %d);" % (et, j, et, off))
            mine.append((off, count, elem_dtype(o)))
            off += -(-count * np.dtype(elem_dtype(o)).itemsize // 128) * 128
        parts.append("    { %s %s }" % (" ".join(decl), body))
        where.append((name, mine))
    src = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define NG %d\n" % groups +
           "__kernel void audit(__global const %s *a, __global const %s *b, __global const %s *c, "
           "__global const int *k, __global uchar *ob) {\n    size_t i = get_global_id(0);\n%s\n}"
           % (t, t, t, "\n".join(parts)))
    return src, where, off


def run_all(ctx_q, kernels, t, n, options):
    ctx, q = ctx_q
    (a, b, c), kk = inputs(t, n)
    groups = len(a) // n
    src, where, total = layout(kernels, t, n, groups)
    prg = cl.Program(ctx, src).build(options)
    mf = cl.mem_flags
    ins = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x) for x in (a, b, c)]
    kb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=kk)
    ob = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(total, np.uint8))
    cl.Kernel(prg, "audit")(q, (groups,), None, *ins, kb, ob)
    raw = np.empty(total, np.uint8)
    cl.enqueue_copy(q, raw, ob)
    out = {name: [raw[o:o + cnt * np.dtype(dt).itemsize].view(dt) for o, cnt, dt in mine] for name, mine in where}
    return out, (a, b, c)


def vt_of(t, n):
    return t if n == 1 else "%s%d" % (t, n)


CASES = [(t, n) for t in list(FLOATS) + list(INTS) for n in (1, WIDTH[t])]


@pytest.fixture(scope="module")
def platforms():
    import pyplat
    pyplat.enable()
    pp = platform("PyPlat")
    assert pp is not None, "pyopencl does not see PyPlat"
    return pp, platform("Portable Computing Language")


@pytest.mark.parametrize("t, n", CASES, ids=["%s%s" % (t, n if n > 1 else "") for t, n in CASES])
def test_every_builtin_overload_builds_and_matches_pocl(platforms, t, n):
    pyplat_cq, pocl_cq = platforms
    kernels = lines_for(t, n)
    ours = {}
    for std in ("-cl-std=CL1.2", "-cl-std=CL3.0"):
        ours[std], ins = run_all(pyplat_cq, kernels, t, n, std)
    if pocl_cq is None:
        pytest.skip("PoCL is not installed")
    theirs, _ = run_all(pocl_cq, kernels, t, n, "-cl-std=CL1.2")
    dt = DT[t]
    bad = []
    for name in kernels:
        for a, b in zip(ours["-cl-std=CL1.2"][name], ours["-cl-std=CL3.0"][name]):
            assert a.tobytes() == b.tobytes(), name        # the language version changes no value
        bad += compare(name, t, n, ours["-cl-std=CL3.0"][name], theirs[name], dt, ins)
    assert not bad, "\n".join(bad[:60])


# ------------------------------------------------------------------ conversions and half data
ROUNDINGS = ("", "_rte", "_rtz", "_rtp", "_rtn")


def conversion_kernels(src_t):
    """convert_<int type>_sat<rounding> of every float edge (out-of-range non-saturated
    conversions are undefined), convert_<float type><rounding> of every integer edge, and the
    half stores/loads with every rounding mode (float and double sources)."""
    ks = {}
    if src_t in FLOATS:
        for it in INTS:
            for r in ROUNDINGS:
                ks["c_%s_sat%s" % (it, r)] = ("o0[i] = convert_%s_sat%s(a[i]);" % (it, r), (it,))
            ks["c4_%s_sat" % it] = ("if (i < NG / 4) vstore4(convert_%s4_sat_rtz(vload4(i, a)), i, o0);" % it,
                                    (it + "4",))
        for r in ROUNDINGS:
            ks["h_store%s" % r] = ("vstore_half%s(a[i], i, (__global half *)o0);" % r, ("ushort",))
            ks["h_store4%s" % r] = ("if (i < NG / 4) vstore_half4%s(vload4(i, a), i, (__global half *)o0);" % r,
                                    ("ushort4",))
            ks["h_storea4%s" % r] = ("if (i < NG / 4) vstorea_half4%s(vload4(i, a), i, (__global half *)o0);" % r,
                                     ("ushort4",))
        other = "double" if src_t == "float" else "float"
        for r in ROUNDINGS:
            ks["c_%s%s" % (other, r)] = ("o0[i] = convert_%s%s(a[i]);" % (other, r), (other,))
    else:
        for ft in FLOATS:
            for r in ROUNDINGS:
                ks["c_%s%s" % (ft, r)] = ("o0[i] = convert_%s%s(a[i]);" % (ft, r), (ft,))
        for it in INTS:
            ks["c_%s_sat" % it] = ("o0[i] = convert_%s_sat(a[i]);" % it, (it,))
            ks["c_%s" % it] = ("o0[i] = convert_%s(a[i]);" % it, (it,))
        if src_t == "ushort":
            ks["h_load"] = ("o0[i] = vload_half(i, (__global const half *)a);", ("float",))
            ks["h_load4"] = ("if (i < NG / 4) vstore4(vload_half4(i, (__global const half *)a), i, o0);", ("float4",))
            ks["h_loada4"] = ("if (i < NG / 4) vstore4(vloada_half4(i, (__global const half *)a), i, o0);",
                              ("float4",))
    return ks


def conversion_inputs(t, n):
    dt = DT[t]
    if t in FLOATS:
        e = list(float_edges(dt)) + [2.5, -2.5, 3.5, 127.5, 128.0, -128.5, 255.5, 256.0, 32767.5, 65535.5, 2.0 ** 31,
                                     -2.0 ** 31 - 1, 2.0 ** 32, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 65504.0, 65520.0,
                                     6e-8, 3e-8, -6.1e-5, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -12]
        a = np.array(e, dt)
    elif t == "ushort":
        a = np.arange(0, 65536, 7, dtype=np.uint16)        # every half class: subnormal, inf, NaN
    else:
        a = int_edges(dt)
    a = np.concatenate([a, a[:(-len(a)) % 4]])
    return [a, a, a], np.zeros(len(a), np.int32)


CONV_CASES = ["float", "double", "ushort", "char", "uint", "long", "ulong"]


@pytest.mark.parametrize("t", CONV_CASES)
def test_conversions_and_half_data_match_pocl(platforms, t, monkeypatch):
    pyplat_cq, pocl_cq = platforms
    kernels = conversion_kernels(t)
    monkeypatch.setitem(globals(), "inputs", conversion_inputs)
    ours = {std: run_all(pyplat_cq, kernels, t, 1, std)[0] for std in ("-cl-std=CL1.2", "-cl-std=CL3.0")}
    if pocl_cq is None:
        pytest.skip("PoCL is not installed")
    theirs, ins = run_all(pocl_cq, kernels, t, 1, "-cl-std=CL1.2")
    bad = []
    for name in kernels:
        for j, (a, b, w) in enumerate(zip(ours["-cl-std=CL1.2"][name], ours["-cl-std=CL3.0"][name], theirs[name])):
            assert a.tobytes() == b.tobytes(), name
            same = (a == w) | (np.isnan(a) & np.isnan(w)) if a.dtype.kind == "f" else (a == w)
            if name.startswith("h_store"):          # any half NaN for a NaN (the payload is free)
                same |= (a & 0x7c00 == 0x7c00) & (a & 0x3ff != 0) & (w & 0x7c00 == 0x7c00) & (w & 0x3ff != 0)
            for i in np.nonzero(~same)[0][:3]:
                bad.append("%s(%r): pyplat %r pocl %r" % (name, ins[0][i % len(ins[0])], a[i], w[i]))
    assert not bad, "\n".join(bad[:60])
