"""relationals: isequal .. isunordered, isfinite/isinf/isnan/isnormal, signbit on float and double
(scalars return 0/1, vectors -1/0 per lane of the same-size integer type), any/all on the sign bit
of every integer type, bitselect and select (the MSB of each lane decides for vectors, c != 0 for
scalars) on every type with signed and unsigned selectors. Inputs: every pair of special values
(signed zeros, denormals, FLT_MIN/MAX, infinities, NaNs with payloads) and random bit patterns,
widths 1, 2, 3, 4, 8, 16. Values travel as raw bits; the reference is exact Python."""
import ctypes
import math
import struct

import numpy as np

from . import clapi as C
from .framework import Category, CheckFailed, T

CATEGORY = Category("relationals", "relational builtins, any/all, select/bitselect on every type and width")
check = CATEGORY.check

WIDTHS = (1, 2, 3, 4, 8, 16)


# --- shared by the vector-like categories (commonfns, geometrics, vectors import these) -------------

def has_fp64(env):
    return "cl_khr_fp64" in env.extensions or bool(env.device_info(C.CL_DEVICE_DOUBLE_FP_CONFIG, "ulong"))


def denorms(env, double=False):
    cfg = env.device_info(C.CL_DEVICE_DOUBLE_FP_CONFIG if double else C.CL_DEVICE_SINGLE_FP_CONFIG, "ulong")
    return bool(cfg & C.CL_FP_DENORM)


FP64_PRAGMA = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"


def program(env, t, source):
    """A program built once per run (kept for the run's remaining checks); a build failure fails
    the check with the build log."""
    cache = env.__dict__.setdefault("_vectorlike_programs", {})
    if source not in cache:
        keeper = T()
        try:
            cache[source] = env.program(keeper, source)
        except CheckFailed as e:
            cache[source] = e
    got = cache[source]
    if isinstance(got, CheckFailed):
        t.fail(str(got))
    return got


def launch(env, t, prog, name, inputs, outputs, global_size, scalars=(), local_size=None, constant=None):
    """Run kernel `name`(*inputs, [constant], *outputs, *scalars): inputs are numpy arrays copied to
    buffers, outputs (dtype, count) buffers filled with 0xA5 first; returns the output arrays."""
    k = env.kernel(t, prog, name)
    args = []
    for arr in list(inputs) + ([constant] if constant is not None else []):
        raw = np.ascontiguousarray(arr).tobytes() or b"\0"
        host = ctypes.create_string_buffer(raw, len(raw))
        args.append(("mem", env.buffer(t, len(raw), C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, host)))
    outs = []
    for dt, count in outputs:
        nbytes = max(1, np.dtype(dt).itemsize * count)
        host = ctypes.create_string_buffer(b"\xa5" * nbytes, nbytes)
        b = env.buffer(t, nbytes, C.CL_MEM_READ_WRITE | C.CL_MEM_COPY_HOST_PTR, host)
        outs.append((b, dt, count, nbytes))
        args.append(("mem", b))
    env.set_args(t, k, *args, *scalars)
    env.enqueue(t, k, global_size, local_size)
    return [np.frombuffer(env.read(t, b, nbytes), dtype=dt)[:count] for b, dt, count, nbytes in outs]


def report(t, bad, what, limit=4):
    """Record the first `limit` messages of `bad` and a count of the rest."""
    for m in bad[:limit]:
        t.true(False, m)
    if len(bad) > limit:
        t.true(False, f"{what}: {len(bad) - limit} more wrong results")


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", int(bits) & 0xFFFFFFFF))[0]


def f64(bits):
    return struct.unpack("<d", struct.pack("<Q", int(bits) & 0xFFFFFFFFFFFFFFFF))[0]


def show_bits(bits, double):
    v = f64(bits) if double else f32(bits)
    return f"{v!r} ({int(bits):#0{18 if double else 10}x})"


# --- float specials -------------------------------------------------------------------------------------

SPECIAL32 = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0xC0200000, 0x00800000, 0x80800000,
             0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000,
             0x7FC00000, 0xFFC00000, 0x7FC12345, 0x3F800001, 0x40400000, 0x00400000]
SPECIAL64 = [0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000,
             0x3FE0000000000000, 0xC004000000000000, 0x0010000000000000, 0x8010000000000000,
             0x0000000000000001, 0x8000000000000001, 0x000FFFFFFFFFFFFF, 0x800FFFFFFFFFFFFF,
             0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000,
             0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000012345, 0x3FF0000000000001,
             0x4008000000000000, 0x0008000000000000]


def is_denormal(bits, double):
    exp_mask, man_mask = (0x7FF0000000000000, 0xFFFFFFFFFFFFF) if double else (0x7F800000, 0x7FFFFF)
    return (bits & exp_mask) == 0 and (bits & man_mask) != 0


def flushed(bits, double):
    sign = 0x8000000000000000 if double else 0x80000000
    return bits & sign if is_denormal(bits, double) else bits


def float_pairs(env, double, n_random):
    """(x bits, y bits) lane pairs: every pair of specials, random bit patterns, equal pairs."""
    special = SPECIAL64 if double else SPECIAL32
    pairs = [(a, b) for a in special for b in special]
    rng = env.rng(17 + double)
    width = 64 if double else 32
    hi = 2 ** width
    xs = [int(v) for v in rng.integers(0, hi, n_random, dtype=np.uint64)]
    ys = [int(v) for v in rng.integers(0, hi, n_random, dtype=np.uint64)]
    pairs += list(zip(xs, ys)) + [(x, x) for x in xs[: n_random // 4]]
    # nearby values: differ in the last bit
    pairs += [(x, x ^ 1) for x in xs[: n_random // 4]]
    return pairs


REL_BINARY = ["isequal", "isnotequal", "isgreater", "isgreaterequal", "isless", "islessequal",
              "islessgreater", "isordered", "isunordered"]
REL_UNARY = ["isfinite", "isinf", "isnan", "isnormal", "signbit"]
REL_ALL = REL_BINARY + REL_UNARY


def relational_reference(name, xb, yb, double):
    """True/False of name(x, y) on raw bits (the spec's relation, before the 1 / -1 encoding)."""
    x = f64(xb) if double else f32(xb)
    y = f64(yb) if double else f32(yb)
    nan = math.isnan(x) or math.isnan(y)
    if name == "isequal":
        return x == y
    if name == "isnotequal":
        return nan or x != y
    if name == "isgreater":
        return x > y
    if name == "isgreaterequal":
        return x >= y
    if name == "isless":
        return x < y
    if name == "islessequal":
        return x <= y
    if name == "islessgreater":
        return x < y or x > y
    if name == "isordered":
        return not nan
    if name == "isunordered":
        return nan
    if name == "isfinite":
        return math.isfinite(x)
    if name == "isinf":
        return math.isinf(x)
    if name == "isnan":
        return math.isnan(x)
    if name == "isnormal":
        tiny = 2.0 ** -1022 if double else 2.0 ** -126
        return math.isfinite(x) and abs(x) >= tiny
    if name == "signbit":
        return bool(xb >> (63 if double else 31))
    raise KeyError(name)


def relational_expected(name, xb, yb, double, width):
    truth = relational_reference(name, xb, yb, double)
    return (-1 if width > 1 else 1) if truth else 0


def relational_source(ftype, double):
    out = [FP64_PRAGMA if double else ""]
    for n in WIDTHS:
        vt = ftype if n == 1 else f"{ftype}{n}"
        it = ("long" if double else "int") if n > 1 else "int"
        rt = it if n == 1 else f"{it}{n}"
        lines = []
        for j, f in enumerate(REL_ALL):
            call = f"{f}(a, b)" if f in REL_BINARY else f"{f}(a)"
            if n == 1:
                lines.append(f"    o[{j} * total + i] = {call};")
            else:
                lines.append(f"    vstore{n}(({rt})({call}), i, o + {j} * total);")
        load = "x[i]" if n == 1 else f"vload{n}(i, x)"
        loadb = "y[i]" if n == 1 else f"vload{n}(i, y)"
        out.append(f"__kernel void rel_{ftype}{n}(__global const {ftype} *x, __global const {ftype} *y, "
                   f"__global {it} *o, uint total)\n{{\n    size_t i = get_global_id(0);\n"
                   f"    {vt} a = {load}, b = {loadb};\n" + "\n".join(lines) + "\n}\n")
    return "".join(out)


def check_relationals(t, ftype, double, width, pairs, got, ftz):
    """Compare the kernel's outputs (len(REL_ALL) rows of lanes) with the reference."""
    total = len(pairs)
    bad = []
    for j, f in enumerate(REL_ALL):
        row = got[j * total:(j + 1) * total]
        for (xb, yb), g in zip(pairs, row):
            want = relational_expected(f, xb, yb, double, width)
            g = int(g)
            if g == want:
                continue
            if ftz and (is_denormal(xb, double) or is_denormal(yb, double)) and \
                    g == relational_expected(f, flushed(xb, double), flushed(yb, double), double, width):
                continue
            vt = ftype if width == 1 else f"{ftype}{width}"
            args = show_bits(xb, double) + ("" if f in REL_UNARY else ", " + show_bits(yb, double))
            bad.append(f"{f}({vt}) lane ({args}): expected {want}, got {g}")
    return bad


def run_relationals(env, t, double):
    ftype = "double" if double else "float"
    prog = program(env, t, relational_source(ftype, double))
    base = float_pairs(env, double, env.samples(64, 1024))
    udt = np.uint64 if double else np.uint32
    ftz = not denorms(env, double)
    bad = []
    for n in WIDTHS:
        m = -(-len(base) // n)
        pairs = (base * 2)[: m * n]
        x = np.array([p[0] for p in pairs], dtype=udt)
        y = np.array([p[1] for p in pairs], dtype=udt)
        it = np.int64 if (double and n > 1) else np.int32
        total = m * n
        (o,) = launch(env, t, prog, f"rel_{ftype}{n}", [x, y], [(it, len(REL_ALL) * total)], (m,),
                      scalars=[ctypes.c_uint32(total)])
        bad += check_relationals(t, ftype, double, n, pairs, o, ftz)
    report(t, bad, f"{ftype} relationals", 8)


@check
def float_relationals(env, t):
    """isequal..isunordered, isfinite/isinf/isnan/isnormal/signbit on float, float2..float16 (1 vs -1)"""
    run_relationals(env, t, False)


@check
def double_relationals(env, t):
    """the same on double, double2..double16 (int for scalars, long lanes of -1/0 for vectors)"""
    if not has_fp64(env):
        t.skip("no cl_khr_fp64")
    run_relationals(env, t, True)


# --- any / all ---------------------------------------------------------------------------------------

INT_TYPES = [("char", np.int8), ("uchar", np.uint8), ("short", np.int16), ("ushort", np.uint16),
             ("int", np.int32), ("uint", np.uint32), ("long", np.int64), ("ulong", np.uint64)]
SIGNED = [("char", np.int8), ("short", np.int16), ("int", np.int32), ("long", np.int64)]


def any_all_source():
    out = []
    for name, _ in SIGNED:
        for n in WIDTHS[1:]:
            out.append(f"__kernel void aa_{name}{n}(__global const {name} *x, __global int *o)\n"
                       f"{{ size_t i = get_global_id(0); {name}{n} a = vload{n}(i, x);\n"
                       f"  o[2 * i] = any(a); o[2 * i + 1] = all(a); }}\n")
    return "".join(out)


def any_all_inputs(rng, dt, n, m):
    """m vectors of n lanes whose sign bits follow patterns: none, all, one, random; low bits random."""
    bits = np.dtype(dt).itemsize * 8
    msb = 1 << (bits - 1)
    rows = []
    for r in range(m):
        kind = r % 5
        if kind == 0:
            signs = [False] * n
        elif kind == 1:
            signs = [True] * n
        elif kind == 2:
            signs = [lane == (r // 5) % n for lane in range(n)]
        elif kind == 3:
            signs = [lane != (r // 5) % n for lane in range(n)]
        else:
            signs = [bool(v) for v in rng.integers(0, 2, n)]
        low = [int(v) for v in rng.integers(0, msb, n, dtype=np.uint64)]
        if r % 7 == 0:
            low = [msb - 1] * n  # every bit but the sign bit set
        rows.append([(lo | msb) if s else lo for s, lo in zip(signs, low)])
    return rows


def any_all_problems(name, n, rows, got):
    bits = {"char": 8, "short": 16, "int": 32, "long": 64}[name]
    bad = []
    for r, lanes in enumerate(rows):
        signs = [bool(v >> (bits - 1)) for v in lanes]
        want = (int(any(signs)), int(all(signs)))
        g = (int(got[2 * r]), int(got[2 * r + 1]))
        for fn, w, gv in (("any", want[0], g[0]), ("all", want[1], g[1])):
            if w != gv:
                shown = ", ".join(f"{v:#x}" for v in lanes)
                bad.append(f"{fn}(({name}{n})({shown})): expected {w}, got {gv}")
    return bad


@check
def any_all(env, t):
    """any/all on char..long vectors of every width decide on each lane's sign bit"""
    prog = program(env, t, any_all_source())
    rng = env.rng(40)
    m = env.samples(20, 100)
    bad = []
    for name, dt in SIGNED:
        udt = np.dtype(dt).str.replace("i", "u")
        for n in WIDTHS[1:]:
            rows = any_all_inputs(rng, dt, n, m)
            x = np.array([v for row in rows for v in row], dtype=udt)
            (o,) = launch(env, t, prog, f"aa_{name}{n}", [x], [(np.int32, 2 * m)], (m,))
            bad += any_all_problems(name, n, rows, o)
    report(t, bad, "any/all")


# --- select / bitselect --------------------------------------------------------------------------------

# type: (bits, signed selector type, unsigned selector type)
SELECT_TYPES = [("char", 8, "char", "uchar"), ("uchar", 8, "char", "uchar"), ("short", 16, "short", "ushort"),
                ("ushort", 16, "short", "ushort"), ("int", 32, "int", "uint"), ("uint", 32, "int", "uint"),
                ("long", 64, "long", "ulong"), ("ulong", 64, "long", "ulong"), ("float", 32, "int", "uint"),
                ("double", 64, "long", "ulong")]


def select_source(double):
    out = [FP64_PRAGMA if double else ""]
    for ty, bits, st, ut in SELECT_TYPES:
        if (ty == "double") != double:
            continue
        for n in WIDTHS:
            v = lambda s: s if n == 1 else f"{s}{n}"  # noqa: E731
            ld = (lambda p: f"{p}[i]") if n == 1 else (lambda p: f"vload{n}(i, {p})")
            st_ = (lambda e, j: f"o[{j} * total + i] = {e};") if n == 1 else \
                (lambda e, j: f"vstore{n}({e}, i, o + {j} * total);")
            out.append(
                f"__kernel void sel_{ty}{n}(__global const {ty} *a, __global const {ty} *b, "
                f"__global const {st} *c, __global {ty} *o, uint total)\n{{\n"
                f"    size_t i = get_global_id(0);\n"
                f"    {v(ty)} x = {ld('a')}, y = {ld('b')};\n    {v(st)} s = {ld('c')};\n"
                f"    {st_(f'select(x, y, s)', 0)}\n"
                f"    {st_(f'select(x, y, as_{v(ut)}(s))', 1)}\n"
                f"    {st_(f'bitselect(x, y, as_{v(ty)}(s))', 2)}\n}}\n")
    return "".join(out)


def selector_values(rng, bits, count):
    msb = 1 << (bits - 1)
    fixed = [0, 1, msb, (1 << bits) - 1, msb - 1, msb | 1, 2, msb >> 1]
    rand = [int(v) for v in rng.integers(0, 1 << bits, count, dtype=np.uint64)] if bits < 64 else \
        [int(v) for v in rng.integers(0, 2 ** 63, count, dtype=np.uint64) * 2 + rng.integers(0, 2, count, dtype=np.uint64)]
    out = []
    for i in range(count):
        out.append(fixed[i % len(fixed)] if i % 3 != 2 else rand[i])
    return out


def select_expected(fn, a, b, c, bits, width):
    """The bits of select/bitselect(a, b, c) on raw lane bits."""
    if fn == "bitselect":
        mask = (1 << bits) - 1
        return (a & ~c & mask) | (b & c)
    if width == 1:
        return b if c != 0 else a
    return b if c >> (bits - 1) else a


def select_problems(ty, bits, width, a, b, c, got, total):
    bad = []
    for j, fn in enumerate(("select", "select", "bitselect")):
        sel = ["signed", "unsigned", ""][j]
        row = got[j * total:(j + 1) * total]
        for x, y, s, g in zip(a, b, c, row):
            want = select_expected(fn, int(x), int(y), int(s), bits, width)
            if int(g) != want:
                vt = ty if width == 1 else f"{ty}{width}"
                bad.append(f"{fn}({vt}) lane a={int(x):#x}, b={int(y):#x}, {sel + ' ' if sel else ''}"
                           f"c={int(s):#x}: expected {want:#x}, got {int(g):#x}")
    return bad


def run_select(env, t, double):
    prog = program(env, t, select_source(double))
    rng = env.rng(50 + double)
    m = env.samples(24, 160)
    bad = []
    for ty, bits, st, ut in SELECT_TYPES:
        if (ty == "double") != double:
            continue
        udt = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
        for n in WIDTHS:
            total = m * n
            a = rng.integers(0, np.iinfo(udt).max, total, dtype=udt, endpoint=True)
            b = rng.integers(0, np.iinfo(udt).max, total, dtype=udt, endpoint=True)
            if ty in ("float", "double"):  # keep a few NaN payloads and signed zeros in the data
                special = np.array(SPECIAL64 if double else SPECIAL32, dtype=udt)
                k = min(len(special), total)
                a[:k], b[:k] = special[:k], special[::-1][:k]
            c = np.array(selector_values(rng, bits, total), dtype=udt)
            (o,) = launch(env, t, prog, f"sel_{ty}{n}", [a, b, c], [(udt, 3 * total)], (m,),
                          scalars=[ctypes.c_uint32(total)])
            bad += select_problems(ty, bits, n, a, b, c, o, total)
    report(t, bad, "select/bitselect", 8)


@check
def select_bitselect(env, t):
    """select (MSB per vector lane, c != 0 for scalars; signed and unsigned selectors) and bitselect"""
    run_select(env, t, False)


@check
def double_select_bitselect(env, t):
    """select and bitselect on double, double2..double16 with long/ulong selectors"""
    if not has_fp64(env):
        t.skip("no cl_khr_fp64")
    run_select(env, t, True)
