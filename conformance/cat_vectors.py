"""vectors: vloadn/vstoren (n = 2, 3, 4, 8, 16) on every type with offsets and pointers aligned to
the element only, loading from __global, __constant, __local and __private memory and storing to
__global (every other slot: a store past its n elements shows), __local and __private; the
3-component rules (sizeof/alignment of a 3-vector is that of the 4-vector, a __global float3 *
steps 16 bytes while vload3 reads 3 packed elements); vload_half/vloada_half and
vstore_half/vstorea_half in every width with the default, _rte, _rtz, _rtp and _rtn roundings
(from float and double); vector literals and swizzles (.xyzw, .s0-.sF, .lo/.hi/.even/.odd, nested,
as rvalues and lvalues) generated at random against a Python model; vec_step, sizeof and
__alignof__; and vectors passed by value as kernel arguments. Memory is compared bit for bit."""
import ctypes
import math
import struct
from fractions import Fraction

import numpy as np

from .cat_relationals import FP64_PRAGMA, has_fp64, launch, program, report
from .framework import Category

CATEGORY = Category("vectors", "vload/vstore, half load/store roundings, 3-vectors, swizzles, vec_step, vector args")
check = CATEGORY.check

VWIDTHS = (2, 3, 4, 8, 16)
TYPES = [("char", 1), ("uchar", 1), ("short", 2), ("ushort", 2), ("int", 4), ("uint", 4), ("long", 8),
         ("ulong", 8), ("float", 4), ("double", 8)]
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
PATTERN = 0xA5A5A5A5A5A5A5A5  # what launch() fills output buffers with
SENTINEL = 0x5A


def types(env):
    return [(ty, size) for ty, size in TYPES if ty != "double" or has_fp64(env)]


# --- vload / vstore ------------------------------------------------------------------------------------

def vload_source(tys):
    out = [FP64_PRAGMA if any(ty == "double" for ty, _ in tys) else ""]
    for ty, _ in tys:
        for n in VWIDTHS:
            vt = f"{ty}{n}"
            out.append(f"""
__kernel void vl_{ty}{n}(__global const {ty} *src, __constant {ty} *csrc, __global {ty} *o,
                         __local {ty} *scratch, uint count, uint shift)
{{
    size_t i = get_global_id(0), lid = get_local_id(0), lsz = get_local_size(0);
    size_t R = 3 * {n} * (count + 2);
    {vt} v = vload{n}(i, src + shift);
    vstore{n}(v, 2 * i, o + shift);
    vstore{n}(vload{n}(i, csrc + shift), i, o + R + shift);
    {ty} priv[3 * {n}];
    for (int k = 0; k < 3 * {n}; k++) priv[k] = src[i * {n} + k];
    vstore{n}(vload{n}(1, priv + shift), i, o + 2 * R + shift);
    {ty} tmp[3 * {n}];
    for (int k = 0; k < 3 * {n}; k++) tmp[k] = ({ty}){SENTINEL};
    vstore{n}(v, 1, tmp + shift);
    for (int k = 0; k < 3 * {n}; k++) o[3 * R + i * 3 * {n} + k] = tmp[k];
    vstore{n}(v, lid, scratch + shift);
    barrier(CLK_LOCAL_MEM_FENCE);
    vstore{n}(vload{n}((lid + 1) % lsz, scratch + shift), i, o + 4 * R + shift);
}}
""")
    return "".join(out)


def vload_expected(src, n, count, shift, local, size):
    """The output buffer (as unsigned ints) the vl_ kernel must leave."""
    pat = PATTERN & ((1 << (8 * size)) - 1)
    R = 3 * n * (count + 2)
    out = [pat] * (5 * R)
    sent = SENTINEL if size > 0 else 0
    for i in range(count):
        chunk = [src[shift + i * n + j] for j in range(n)]
        for j in range(n):
            out[shift + 2 * i * n + j] = chunk[j]                     # global, every other slot
            out[R + shift + i * n + j] = chunk[j]                     # from __constant
            out[2 * R + shift + i * n + j] = src[(i + 1) * n + shift + j]  # from __private, offset 1
        tmp = [None] * (3 * n)
        for k in range(3 * n):
            tmp[k] = chunk[k - n - shift] if n + shift <= k < 2 * n + shift else None
        for k in range(3 * n):
            out[3 * R + i * 3 * n + k] = tmp[k] if tmp[k] is not None else ("sentinel", k)
        g = i - i % local
        nb = g + (i % local + 1) % local
        for j in range(n):
            out[4 * R + shift + i * n + j] = src[shift + nb * n + j]
    return out, sent


REGIONS = ["vstore to __global (every other slot)", "vload from __constant", "vload from __private",
           "vstore to __private", "vstore to/vload from __local"]


def vload_problems(ty, n, shift, src, got, count, local, size):
    want, _ = vload_expected(src, n, count, shift, local, size)
    R = 3 * n * (count + 2)
    sentinel = float_sentinel_bits(ty, size)
    bad = []
    for pos, (w, g) in enumerate(zip(want, got)):
        if isinstance(w, tuple):
            w = sentinel
        if int(g) != w:
            region = REGIONS[min(pos // R, 4)]
            bad.append(f"{ty}{n} (pointer + {shift} elements), {region}: element {pos % R} is "
                       f"{int(g):#x}, expected {w:#x}")
    return bad


def float_sentinel_bits(ty, size):
    """Bits of ({ty})0x5A."""
    if ty == "float":
        return struct.unpack("<I", struct.pack("<f", float(SENTINEL)))[0]
    if ty == "double":
        return struct.unpack("<Q", struct.pack("<d", float(SENTINEL)))[0]
    return SENTINEL


def vload_run(env, t, tys):
    prog = program(env, t, vload_source(tys))
    rng = env.rng(400)
    count = env.samples(8, 32)
    local = 4
    bad = []
    for ty, size in tys:
        udt = UINT[size]
        for n in VWIDTHS:
            for shift in ((1,) if env.quick else (0, 1, n - 1)):
                src = rng.integers(0, np.iinfo(udt).max, (count + 3) * n, dtype=udt, endpoint=True)
                R = 3 * n * (count + 2)
                (o,) = launch(env, t, prog, f"vl_{ty}{n}", [src], [(udt, 5 * R)], (count,),
                              scalars=[("local", (local + 1) * n * size), ctypes.c_uint32(count),
                                       ctypes.c_uint32(shift)],
                              local_size=(local,), constant=src)
                bad += vload_problems(ty, n, shift, [int(v) for v in src], o, count, local, size)
    report(t, bad, "vload/vstore", 8)


@check
def vload_vstore(env, t):
    """vloadn/vstoren for n = 2, 3, 4, 8, 16 on every type, element-aligned pointers, all address spaces"""
    vload_run(env, t, types(env))


# --- 3-vectors, vec_step, sizeof, alignment ------------------------------------------------------------

def layout_source(tys):
    lines = []
    k = 0
    expected = []
    for ty, size in tys:
        for n in (1,) + VWIDTHS:
            vt = ty if n == 1 else f"{ty}{n}"
            lines.append(f"    o[{k}] = vec_step({vt}); o[{k + 1}] = sizeof({vt}); "
                         f"o[{k + 2}] = __alignof__({vt}); {{ {vt} v; o[{k + 3}] = vec_step(v); }}")
            slots = 4 if n == 3 else n
            expected.append((vt, [slots, size * slots, size * slots, slots]))
            k += 4
    src = FP64_PRAGMA if any(ty == "double" for ty, _ in tys) else ""
    src += "__kernel void layout(__global int *o)\n{\n" + "\n".join(lines) + "\n}\n"
    src += """
__kernel void f3(__global const float3 *p, __global float *o, __global float3 *w)
{
    size_t i = get_global_id(0);
    float3 a = p[i];
    vstore3(a, i, o);
    vstore3(vload3(i, (__global const float *)p), i, o + 3 * get_global_size(0));
    w[i] = a.zyx;
}
"""
    return src, expected, k


@check
def three_component_layout(env, t):
    """vec_step/sizeof/__alignof__ of every vector type (3-vectors as 4); float3 buffers step 16 bytes,
    vload3 reads 3 packed floats"""
    tys = types(env)
    src, expected, k = layout_source(tys)
    prog = program(env, t, src)
    (o,) = launch(env, t, prog, "layout", [], [(np.int32, k)], (1,))
    for j, (vt, want) in enumerate(expected):
        got = [int(v) for v in o[4 * j:4 * j + 4]]
        for what, w, g in zip(("vec_step(type)", "sizeof", "__alignof__", "vec_step(variable)"), want, got):
            t.true(w == g, f"{what}({vt}) = {g}, expected {w}")
    m = 8
    data = np.arange(1, 4 * m + 1, dtype=np.float32)
    o, w = launch(env, t, prog, "f3", [data], [(np.float32, 6 * m), (np.float32, 4 * m)], (m,))
    for i in range(m):
        t.eq([float(v) for v in o[3 * i:3 * i + 3]], [float(v) for v in data[4 * i:4 * i + 3]],
             f"float3 p[{i}] of a float3 buffer (16-byte stride)")
        t.eq([float(v) for v in o[3 * m + 3 * i:3 * m + 3 * i + 3]], [float(v) for v in data[3 * i:3 * i + 3]],
             f"vload3({i}, (float *)p) (packed, 12-byte stride)")
        t.eq([float(v) for v in w[4 * i:4 * i + 3]], [float(v) for v in data[4 * i:4 * i + 3][::-1]],
             f"float3 store w[{i}] = a.zyx (16-byte stride)")


# --- half loads and stores -----------------------------------------------------------------------------

HALF_MODES = ["", "_rte", "_rtz", "_rtp", "_rtn"]


def half_round(x, mode):
    """IEEE half bits of float x rounded with mode ('' = rte). NaN gives None (any NaN will do)."""
    if math.isnan(x):
        return None
    sign = 0x8000 if math.copysign(1.0, x) < 0 else 0
    if math.isinf(x):
        return sign | 0x7C00
    if x == 0:
        return sign
    a = abs(Fraction(x))
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, -14)
    q = a / Fraction(2) ** (e - 10)       # in [1024, 2048) when normal, below 1024 when subnormal
    lo = q.numerator // q.denominator
    frac = q - lo
    neg = bool(sign)
    mode = mode or "_rte"
    if frac == 0:
        r = lo
    elif mode == "_rte":
        r = lo + 1 if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and lo % 2) else lo
    elif mode == "_rtz":
        r = lo
    elif mode == "_rtp":
        r = lo if neg else lo + 1
    else:
        r = lo + 1 if neg else lo
    if r == 2048:
        r, e = 1024, e + 1
    if e > 15:
        up = mode == "_rte" or (mode == "_rtp" and not neg) or (mode == "_rtn" and neg)
        return sign | (0x7C00 if up else 0x7BFF)
    if r < 1024:
        return sign | r                    # subnormal (e == -14)
    return sign | ((e + 15) << 10) | (r - 1024)


def half_to_float(bits):
    return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])


def half_store_source(double):
    ft = "double" if double else "float"
    out = [FP64_PRAGMA if double else ""]
    for n in (1,) + VWIDTHS:
        sfx = "" if n == 1 else str(n)
        ld = "x[i]" if n == 1 else f"vload{n}(i, x)"
        lines = [f"    vstore_half{sfx}{m}(v, i, o + {j} * R);" for j, m in enumerate(HALF_MODES)]
        if n > 1:
            lines += [f"    vstorea_half{sfx}{m}(v, i, o + {5 + j} * R);" for j, m in enumerate(HALF_MODES)]
        out.append(f"__kernel void hs_{ft}{n}(__global const {ft} *x, __global half *o, uint R)\n{{\n"
                   f"    size_t i = get_global_id(0);\n    {ft}{'' if n == 1 else n} v = {ld};\n"
                   + "\n".join(lines) + "\n}\n")
    return "".join(out)


def half_store_values(rng, double, count):
    """Values around every half binade, exact halves, ties, overflow and subnormal ranges, specials."""
    vals = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 65504.0, -65504.0, 65519.99, 65520.0,
            -65520.0, 65536.0, 1e10, -1e10, 2.0 ** -24, -2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -14,
            2.0 ** -14 - 2.0 ** -25, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, -(1.0 + 2.0 ** -11), 1e-30,
            -1e-30, 2.0 ** -149]
    e = rng.uniform(-27, 17, count)
    vals += list(np.exp2(e) * rng.choice([-1.0, 1.0], count))
    dt = np.float64 if double else np.float32
    with np.errstate(all="ignore"):
        return [float(dt(v)) for v in vals]


def half_store_problems(ft, n, xs, got, R, count):
    bad = []
    for j in range(10 if n > 1 else 5):
        mode = HALF_MODES[j % 5]
        aligned = j >= 5
        step = 4 if (aligned and n == 3) else n
        fn = f"vstore{'a' if aligned else ''}_half{'' if n == 1 else n}{mode}"
        region = got[j * R:(j + 1) * R]
        written = set()
        for i in range(count):
            for lane in range(n):
                x = xs[i * n + lane]
                pos = i * step + lane
                written.add(pos)
                want = half_round(x, mode)
                g = int(region[pos])
                ok = (g & 0x7C00) == 0x7C00 and (g & 0x3FF) != 0 if want is None else g == want
                if not ok:
                    bad.append(f"{fn}({ft} {x!r}): half bits {g:#06x}, expected "
                               f"{'a NaN' if want is None else f'{want:#06x}'}")
        for pos in range(count * step):
            if pos not in written and not (aligned and n == 3) and int(region[pos]) != 0xA5A5:
                bad.append(f"{fn}: wrote element {pos}, which belongs to no stored vector")
    return bad


def run_half_store(env, t, double):
    ft = "double" if double else "float"
    prog = program(env, t, half_store_source(double))
    rng = env.rng(500 + double)
    bad = []
    base = half_store_values(rng, double, env.samples(40, 400))
    dt = np.float64 if double else np.float32
    for n in (1,) + VWIDTHS:
        count = -(-len(base) // n)
        xs = (base * 2)[:count * n]
        R = count * max(n, 4)
        (o,) = launch(env, t, prog, f"hs_{ft}{n}", [np.array(xs, dtype=dt)], [(np.uint16, 10 * R)], (count,),
                      scalars=[ctypes.c_uint32(R)])
        bad += half_store_problems(ft, n, xs, o, R, count)
    report(t, bad, f"vstore_half from {ft}", 8)


@check
def half_store_roundings(env, t):
    """vstore_half(n) and vstorea_half(n) from float, default/_rte/_rtz/_rtp/_rtn, overflow, subnormals"""
    run_half_store(env, t, False)


@check
def half_store_from_double(env, t):
    """vstore_half(n) and vstorea_half(n) from double in every rounding mode"""
    if not has_fp64(env):
        t.skip("no cl_khr_fp64")
    run_half_store(env, t, True)


def half_load_source():
    out = []
    for n in (1,) + VWIDTHS:
        sfx = "" if n == 1 else str(n)
        st = (lambda e, j: f"o[{j} * R + i] = {e};") if n == 1 else \
            (lambda e, j: f"vstore{n}({e}, i, o + {j} * R);")  # noqa: E731
        lines = [st(f"vload_half{sfx}(i, h)", 0), st(f"vload_half{sfx}(i, ch)", 1)]
        lines.append(f"    {{ ushort p[2 * {n}]; for (int k = 0; k < 2 * {n}; k++) p[k] = k < {n} ? 0 : "
                     f"((__global const ushort *)h)[i * {n} + k - {n}];\n"
                     f"      {st(f'vload_half{sfx}(1, (const __private half *)p)', 2)} }}")
        lines.append(f"    {{ __local ushort *l = (__local ushort *)lh + get_local_id(0) * {n};\n"
                     f"      for (int k = 0; k < {n}; k++) l[k] = ((__global const ushort *)h)[i * {n} + k];\n"
                     f"      {st(f'vload_half{sfx}(get_local_id(0), (__local const half *)lh)', 3)} }}")
        if n > 1:
            lines.append(st(f"vloada_half{sfx}(i, h)", 4))
        out.append(f"__kernel void hl{n}(__global const half *h, __constant half *ch, __global float *o, "
                   f"__local half *lh, uint R)\n{{\n    size_t i = get_global_id(0);\n    "
                   + "\n    ".join(lines) + "\n}\n")
    return "".join(out)


@check
def half_loads(env, t):
    """vload_half(n) from __global, __constant, __private, __local; vloada_half(n) (half3 steps 4)"""
    prog = program(env, t, half_load_source())
    rng = env.rng(600)
    count = env.samples(16, 64)
    local = 4
    bad = []
    for n in (1,) + VWIDTHS:
        h = rng.integers(0, 0xFFFF, count * 16 + 16, dtype=np.uint16, endpoint=True)
        h[:12] = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x83FF, 0x3C00, 0x7BFF, 0x0400, 0xFBFF, 0x7C01]
        R = count * max(n, 4)
        (o,) = launch(env, t, prog, f"hl{n}", [h], [(np.float32, 5 * R)], (count,),
                      scalars=[("local", local * n * 2), ctypes.c_uint32(R)], local_size=(local,), constant=h)
        regions = ["vload_half", "vload_half from __constant", "vload_half from __private",
                   "vload_half from __local"] + (["vloada_half"] if n > 1 else [])
        for j, what in enumerate(regions):
            step = 4 if (j == 4 and n == 3) else n
            for i in range(count):
                for lane in range(n):
                    bits = int(h[i * step + lane])
                    want = half_to_float(bits)
                    g = float(o[j * R + (i if n == 1 else i * n + lane)])
                    if not (g == want or (math.isnan(want) and math.isnan(g))) or \
                            (g == 0 and math.copysign(1, g) != math.copysign(1, want)):
                        bad.append(f"{what}{'' if n == 1 else n} lane {lane} of half bits {bits:#06x}: "
                                   f"got {g!r}, expected {want!r}")
    report(t, bad, "vload_half", 8)


# --- swizzles and literals ------------------------------------------------------------------------------

HEX = "0123456789abcdef"


def random_selector(rng, w, lvalue, first=True):
    """(C suffix, lane indices into the w lanes, None for undefined lanes). .lo/.hi/.even/.odd of
    a 3-vector only on the variable itself (nested ones are three_vector_halves' business)."""
    kinds = ["s"]
    if w <= 4:
        kinds.append("xyzw")
    if w >= 2 and not (w == 3 and (lvalue or not first)):
        kinds.append("half")
    kind = kinds[int(rng.integers(0, len(kinds)))]
    if kind == "half":
        which = ["lo", "hi", "even", "odd"][int(rng.integers(0, 4))]
        W = 4 if w == 3 else w
        lanes = {"lo": range(W // 2), "hi": range(W // 2, W), "even": range(0, W, 2), "odd": range(1, W, 2)}[which]
        return which, [i if i < w else None for i in lanes]
    sizes = [k for k in (1, 2, 3, 4, 8, 16) if (kind == "s" or k <= 4) and (not lvalue or k <= w)]
    k = sizes[int(rng.integers(0, len(sizes)))]
    if lvalue:
        lanes = [int(v) for v in rng.permutation(w)[:k]]
    else:
        lanes = [int(v) for v in rng.integers(0, w, k)]
    if kind == "xyzw":
        return "".join("xyzw"[i] for i in lanes), lanes
    digits = "".join((HEX[i].upper() if rng.integers(0, 2) else HEX[i]) for i in lanes)
    return ("S" if rng.integers(0, 2) else "s") + digits, lanes


def random_chain(rng, w, lvalue, depth):
    """(suffix chain, lanes of the original vector) for up to `depth` nested selectors."""
    sel, lanes = "", list(range(w))
    for step in range(depth):
        if len(lanes) == 1:
            break
        s, idx = random_selector(rng, len(lanes), lvalue, step == 0)
        if lvalue and any(i is None or lanes[i] is None for i in idx):
            break
        sel += "." + s
        lanes = [None if i is None else lanes[i] for i in idx]
    return sel, lanes


def swizzle_cases(rng, count):
    """[(C statement writing o[base..], expected list with None for undefined lanes)]."""
    cases = []
    for c in range(count):
        w = [2, 3, 4, 8, 16][c % 5]
        vals = [int(v) for v in rng.integers(-1000, 1000, w)]
        lit = f"(int{w})({', '.join(map(str, vals))})"
        kind = c % 3
        if kind == 0:  # rvalue
            sel, lanes = random_chain(rng, w, False, int(rng.integers(1, 4)))
            if not sel:
                continue
            cases.append(("", f"v{sel}", lit, len(lanes), [None if i is None else vals[i] for i in lanes]))
        elif kind == 1:  # lvalue
            sel, lanes = random_chain(rng, w, True, int(rng.integers(1, 3)))
            if not sel:
                continue
            k = len(lanes)
            rhs = [int(v) for v in rng.integers(2000, 3000, k)]
            rv = str(rhs[0]) if k == 1 else f"(int{k})({', '.join(map(str, rhs))})"
            want = list(vals)
            for lane, r in zip(lanes, rhs):
                want[lane] = r
            cases.append((f"int{w} t = v; t{sel} = {rv}; ", "t", lit, w, want))
        else:  # a literal built from parts
            parts, want, left = [], [], w
            while left:
                opts = [k for k in (1, 2, 3, 4, 8) if k <= left and k < w]
                k = opts[int(rng.integers(0, len(opts)))] if opts else left
                if rng.integers(0, 2):
                    s = int(rng.integers(-99, 99))
                    parts.append(str(s) if k == 1 else f"(int{k})({s})")
                    want += [s] * k
                else:
                    lanes = [int(v) for v in rng.integers(0, w, k)]
                    parts.append("v.s" + "".join(HEX[i] for i in lanes))
                    want += [vals[i] for i in lanes]
                left -= k
            cases.append(("", f"(int{w})({', '.join(parts)})", lit, w, want))
    return cases


@check
def swizzles_and_literals(env, t):
    """random swizzle chains (.xyzw, .s0-.sF, .lo/.hi/.even/.odd) as rvalues and lvalues, vector literals"""
    rng = env.rng(700)
    cases = swizzle_cases(rng, env.samples(60, 300))
    lines, base = [], 0
    for pre, expr, lit, k, want in cases:
        w = int(lit[4:lit.index(")")])
        body = f"o[{base}] = {expr};" if k == 1 else f"vstore{k}({expr}, 0, o + {base});"
        lines.append(f"    {{ int{w} v = {lit}; {pre}{body} }}")
        base += k
    src = "__kernel void sw(__global int *o)\n{\n" + "\n".join(lines) + "\n}\n"
    prog = program(env, t, src)
    (o,) = launch(env, t, prog, "sw", [], [(np.int32, base)], (1,))
    bad, pos = [], 0
    for pre, expr, lit, k, want in cases:
        got = [int(v) for v in o[pos:pos + k]]
        pos += k
        if any(w is not None and w != g for w, g in zip(want, got)):
            shown = [("?" if w is None else w) for w in want]
            bad.append(f"v = {lit}; {pre}{expr}: expected {shown}, got {got}")
    report(t, bad, "swizzles", 8)


# --- vector kernel arguments --------------------------------------------------------------------------

VEC_ARGS = [("char16", np.int8, 16, 16), ("short3", np.int16, 3, 4), ("int4", np.int32, 4, 4),
            ("long2", np.int64, 2, 2), ("float8", np.float32, 8, 8), ("uchar2", np.uint8, 2, 2),
            ("ulong16", np.uint64, 16, 16), ("int3", np.int32, 3, 4), ("float3", np.float32, 3, 4),
            ("ushort8", np.uint16, 8, 8)]


@check
def vector_arguments(env, t):
    """vectors of every width (3-vectors padded to 4) passed by value as kernel arguments"""
    rng = env.rng(800)
    args = list(VEC_ARGS) + ([("double3", np.float64, 3, 4)] if has_fp64(env) else [])
    params, lines, off = [], [], 0
    offsets = []
    for j, (vt, dt, n, slots) in enumerate(args):
        params.append(f"{vt} a{j}")
        et = vt.rstrip("0123456789")
        lines.append(f"    vstore{n}(a{j}, 0, (__global {et} *)(o + {off}));")
        offsets.append(off)
        off += -(-np.dtype(dt).itemsize * slots // 8) * 8
    src = (FP64_PRAGMA if has_fp64(env) else "") + \
        f"__kernel void va({', '.join(params)}, __global uchar *o)\n{{\n" + "\n".join(lines) + "\n}\n"
    prog = program(env, t, src)
    k = env.kernel(t, prog, "va")
    values = []
    for vt, dt, n, slots in args:
        if np.dtype(dt).kind == "f":
            v = rng.uniform(-1e6, 1e6, slots).astype(dt)
        else:
            info = np.iinfo(dt)
            v = rng.integers(info.min, info.max, slots, dtype=dt, endpoint=True)
        values.append(v)
    out = env.buffer(t, off)
    env.set_args(t, k, *values, ("mem", out))
    env.enqueue(t, k, (1,))
    raw = env.read(t, out, off)
    for (vt, dt, n, slots), v, o in zip(args, values, offsets):
        got = np.frombuffer(raw[o:o + np.dtype(dt).itemsize * n], dtype=dt)
        t.eq(got.tolist(), v[:n].tolist(), f"kernel argument {vt}")


THREE_HALVES = [("v.yzx.odd.x", [2], 1), ("v.zyx.hi.x", [0], 1), ("v.xzy.lo", [0, 2], 2),
                ("v.yzx.even", [1, 0], 2), ("v.s210.odd.yxyx", [None, 1, None, 1], 4),
                ("(v + 1).hi.xxyy", [2, 2, None, None], 4)]


@check
def three_vector_halves(env, t):
    """.lo/.hi/.even/.odd of 3-vector expressions (a swizzle's result), nested: defined lanes only"""
    vals = [76, -62, -544]
    lines, base = [], 0
    for expr, lanes, k in THREE_HALVES:
        body = f"o[{base}] = {expr};" if k == 1 else f"vstore{k}({expr}, 0, o + {base});"
        lines.append(f"    {{ int3 v = (int3)(76, -62, -544); {body} }}")
        base += k
    prog = program(env, t, "__kernel void th(__global int *o)\n{\n" + "\n".join(lines) + "\n}\n")
    (o,) = launch(env, t, prog, "th", [], [(np.int32, base)], (1,))
    pos = 0
    for expr, lanes, k in THREE_HALVES:
        plus = 1 if expr.startswith("(v + 1)") else 0
        want = [None if i is None else vals[i] + plus for i in lanes]
        got = [int(v) for v in o[pos:pos + k]]
        pos += k
        t.true(all(w is None or w == g for w, g in zip(want, got)),
               f"int3 v = (76, -62, -544); {expr}: expected {['?' if w is None else w for w in want]}, got {got}")
