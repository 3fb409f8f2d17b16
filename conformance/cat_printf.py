"""printf: the exact text printf writes from kernels. Conversions %d %i %u %o %x %X %c %s %f %F %e
%E %g %G %a %A %%, the flags - + space # 0, field width and precision, the length modifiers hh h l,
vector specifiers (%vN with hh h hl l: elements formatted alike, separated by commas), values from
literals and from buffers, the return value, each work-item's output in its own order, and all of
it reaching the host's stdout by the time clFinish returns.

The expected text comes from `c_printf` below, a Python model of C99 printf with OpenCL C's
additions (float arguments are converted to double). Output is captured by pointing file
descriptor 1 at a temporary file around the enqueue and clFinish (C stdio is flushed before it is
restored). Each printf call's output is expected to be contiguous: the spec allows work-items'
output to be intermixed, so the multi-work-item check prints whole lines and only looks at the
order of each work-item's own lines."""
import ctypes
import math
import os
import re
import struct
import sys
import tempfile

import numpy as np

from . import clapi as C
from .framework import Category

CATEGORY = Category("printf", "printf from kernels: exact output of conversions, flags, vectors, order")
check = CATEGORY.check

# --- a model of C99 printf + OpenCL C vectors ----------------------------------------------------------

SPEC = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d+)?(?:\.(?P<prec>\d*))?(?P<vec>v(?:16|2|3|4|8))?"
                  r"(?P<len>hh|hl|h|l)?(?P<conv>[diouxXfFeEgGaAcs%])")
LEN_BITS = {"hh": 8, "h": 16, "hl": 32, "": 32, "l": 64}


def _pad(prefix, digits, flags, width, zero_ok):
    body = prefix + digits
    if width is None or len(body) >= width:
        return body
    if "-" in flags:
        return body + " " * (width - len(body))
    if zero_ok and "0" in flags:
        return prefix + "0" * (width - len(body)) + digits
    return " " * (width - len(body)) + body


def _sign(negative, flags):
    return "-" if negative else "+" if "+" in flags else " " if " " in flags else ""


def hexfloat(x, prec, flags, upper):
    """C99 %a of a double: 0x1.<hex>p<exp> (0x0p+0 for zero), rounded to nearest even."""
    neg = math.copysign(1.0, x) < 0
    x = abs(x)
    if x == 0:
        lead, frac, exp = 0, 0, 0
    else:
        m, e = math.frexp(x)          # x = m * 2**e, 0.5 <= m < 1
        lead, frac, exp = 1, int((m * 2 - 1) * (1 << 52)), e - 1
        # (the leading digit of a double subnormal is unspecified by C99: no case prints one)
    digits = f"{frac:013x}"
    if prec is None:
        digits = digits.rstrip("0")
    elif prec < 13:
        shift = 4 * (13 - prec)
        q, r = divmod(frac, 1 << shift)
        half = 1 << (shift - 1)
        if r > half or (r == half and q & 1):
            q += 1
        if q >> (4 * prec):
            lead, q = lead + 1, q - (1 << (4 * prec))
        digits = f"{q:0{prec}x}" if prec else ""
    else:
        digits += "0" * (prec - 13)
    point = "." if digits or "#" in flags else ""
    text = f"{lead}{point}{digits}p{exp:+d}"
    prefix = _sign(neg, flags) + "0x"
    if upper:
        text, prefix = text.upper(), prefix.upper()
    return prefix, text


def format_one(flags, width, prec, length, conv, value):
    """One C conversion (no vector) of a Python value."""
    width = int(width) if width else None
    prec = None if prec is None else int(prec or 0)
    if conv in "di":
        bits = LEN_BITS[length]
        v = value & ((1 << bits) - 1)
        if v >= 1 << (bits - 1):
            v -= 1 << bits
        digits = str(abs(v)).zfill(prec or 0)
        if prec == 0 and v == 0:
            digits = ""
        return _pad(_sign(v < 0, flags), digits, flags, width, prec is None)
    if conv in "ouxX":
        v = value & ((1 << LEN_BITS[length]) - 1)
        digits = {"o": "%o", "u": "%d", "x": "%x", "X": "%X"}[conv] % v
        digits = digits.zfill(prec or 0)
        if prec == 0 and v == 0:
            digits = ""
        prefix = ""
        if "#" in flags:
            if conv == "o" and not digits.startswith("0"):
                digits = "0" + digits
            elif conv in "xX" and v != 0:
                prefix = "0" + conv
        return _pad(prefix, digits, flags, width, prec is None)
    if conv == "c":
        return _pad("", chr(value & 0xFF), flags, width, False)
    if conv == "s":
        return _pad("", value if prec is None else value[:prec], flags, width, False)
    x = float(value)
    if math.isinf(x) or math.isnan(x):
        text = "inf" if math.isinf(x) else "nan"
        text = text.upper() if conv in "FEGA" else text
        return _pad(_sign(math.copysign(1.0, x) < 0, flags), text, flags, width, False)
    if conv in "aA":
        prefix, text = hexfloat(x, prec, flags, conv == "A")
        return _pad(prefix, text, flags, width, True)
    spec = "%" + flags + (str(width) if width else "") + ("" if prec is None else f".{prec}") + conv
    return spec % x


def c_printf(fmt, args):
    """The text of printf(fmt, *args); a vector argument is a list of element values."""
    out, pos, ai = [], 0, 0
    for m in SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        if m.group("conv") == "%":
            out.append("%")
            continue
        a = args[ai]
        ai += 1
        parts = (m.group("flags"), m.group("width"), m.group("prec"), m.group("len") or "", m.group("conv"))
        if m.group("vec"):
            out.append(",".join(format_one(*parts, x) for x in a))
        else:
            out.append(format_one(*parts, a))
    out.append(fmt[pos:])
    return "".join(out)


# --- values as OpenCL C literals --------------------------------------------------------------------------

INT_BITS = {"char": 8, "uchar": 8, "short": 16, "ushort": 16, "int": 32, "uint": 32, "long": 64, "ulong": 64}


def f32(x):
    return float(np.float32(x))


def literal(ctype, v):
    if ctype in INT_BITS:
        return f"(({ctype})0x{v & ((1 << INT_BITS[ctype]) - 1):x}UL)"
    if ctype in ("float", "double"):
        suffix = "f" if ctype == "float" else ""
        if math.isnan(v):
            return f"(({ctype})NAN)"
        if math.isinf(v):
            return f"(({ctype}){'-' if v < 0 else ''}INFINITY)"
        return f"(({ctype}){v.hex()}{suffix})"
    if ctype == "str":
        return '"' + v + '"'
    base = ctype.rstrip("0123456789")
    return f"(({ctype})(" + ", ".join(literal(base, x) for x in v) + "))"


def model_value(ctype, v):
    """The value printf sees: float arguments rounded to float first."""
    if ctype == "float":
        return f32(v)
    if ctype.startswith("float"):
        return [f32(x) for x in v]
    return v


# --- capture and run ---------------------------------------------------------------------------------------

_libc = None


def capture_stdout(fn):
    """Run fn() with file descriptor 1 on a temporary file; returns (fn's value, bytes written)."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None)
        _libc.fflush.argtypes = [ctypes.c_void_p]
    sys.stdout.flush()
    _libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 1)
        try:
            value = fn()
        finally:
            _libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        return value, f.read()


def run_printing(env, t, source, name, global_size, local_size=None, args=(), options=""):
    """Build and run a kernel, capturing stdout from the enqueue until clFinish returns."""
    prog = env.program(t, source, options)
    k = env.kernel(t, prog, name)
    env.set_args(t, k, *args)
    q = env.queue
    dims = len(global_size)
    g = (ctypes.c_size_t * dims)(*global_size)
    loc = (ctypes.c_size_t * dims)(*local_size) if local_size else None

    def go():
        code = env.cl.clEnqueueNDRangeKernel(q, k, dims, None, g, loc, 0, None, None)
        if code == C.CL_SUCCESS:
            code = env.cl.clFinish(q)
        return code

    code, text = capture_stdout(go)
    t.ok(code, "clEnqueueNDRangeKernel + clFinish")
    return text.decode("latin-1")


def case_source(cases, kname="k"):
    """A kernel printing every case as one line '@<index>:<output>' and storing printf's results."""
    lines = []
    for i, (fmt, args) in enumerate(cases):
        cargs = "".join(", " + literal(ct, v) for ct, v in args)
        lines.append(f'    r[{i}] = printf("@{i}:{fmt}\\n"{cargs});')
    return (f"__kernel void {kname}(__global int *r)\n{{\n" + "\n".join(lines) + "\n}\n")


def case_problems(cases, text, returns=None):
    got = {}
    stray = []
    for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
        m = re.match(r"@(\d+):(.*)$", line, re.S)
        if not m:
            stray.append(line)
            continue
        got.setdefault(int(m.group(1)), []).append(m.group(2))
    out = []
    for i, (fmt, args) in enumerate(cases):
        want = c_printf(fmt, [model_value(ct, v) for ct, v in args])
        shown = ", ".join(literal(ct, v) for ct, v in args)
        lines = got.get(i, [])
        if len(lines) != 1:
            out.append(f'printf("{fmt}"{", " if shown else ""}{shown}): printed {len(lines)} times')
        elif lines[0] != want:
            out.append(f'printf("{fmt}"{", " if shown else ""}{shown}): expected {want!r}, got {lines[0]!r}')
        if returns is not None and returns[i] != 0:
            out.append(f'printf("{fmt}") returned {returns[i]}, not 0')
    if stray:
        out.append(f"{len(stray)} unexpected line(s) in the output, first {stray[0]!r}")
    return out


def run_cases(env, t, cases, prefix=""):
    r = env.buffer(t, 4 * len(cases))
    env.write(t, r, b"\xff" * (4 * len(cases)))
    text = run_printing(env, t, prefix + case_source(cases), "k", (1,), args=[("mem", r)])
    returns = np.frombuffer(env.read(t, r, 4 * len(cases)), dtype=np.int32).tolist()
    for p in case_problems(cases, text, returns):
        t.true(False, p)


# --- the cases --------------------------------------------------------------------------------------------

INT_CASES = [
    ("%d", [("int", 0)]), ("%d", [("int", -2 ** 31)]), ("%d", [("int", 2 ** 31 - 1)]), ("%i", [("int", 123456)]),
    ("%u", [("uint", 4000000000)]), ("%x", [("uint", 0xDEADBEEF)]), ("%X", [("uint", 0xDEADBEEF)]),
    ("%o", [("uint", 8)]), ("%x", [("int", -1)]), ("%u", [("int", -1)]),
    ("%5d|", [("int", 42)]), ("%-5d|", [("int", 42)]), ("%05d", [("int", -42)]), ("%+d", [("int", 42)]),
    ("% d", [("int", 42)]), ("%+d", [("int", -42)]), ("% 5d|", [("int", 7)]), ("%+05d", [("int", 7)]),
    ("%.3d", [("int", 7)]), ("%8.3d|", [("int", -7)]), ("%-8.3x|", [("uint", 0xAB)]), ("%08.3d|", [("int", 7)]),
    ("[%.0d]", [("int", 0)]), ("[%+.0d]", [("int", 0)]), ("[%.0x]", [("uint", 0)]),
    ("%#o", [("uint", 8)]), ("%#o", [("uint", 0)]), ("%#.4o", [("uint", 8)]), ("%#x", [("uint", 255)]),
    ("%#X", [("uint", 255)]), ("%#x", [("uint", 0)]), ("%#010x", [("uint", 0xBEEF)]), ("%-#8o|", [("uint", 64)]),
    ("%d %i %u %x", [("int", -1), ("int", 2), ("uint", 3), ("uint", 4)]),
    ("100%%", []), ("%d%%", [("int", 5)]), ("%%d", []), ("no conversions at all", []),
]

LENGTH_CASES = [
    ("%hhd", [("char", -5)]), ("%hhd", [("int", 300)]), ("%hhu", [("uchar", 250)]), ("%hhx", [("int", 0x1234)]),
    ("%hhu", [("int", -1)]), ("%+hhd", [("int", 127)]), ("%hd", [("short", -1234)]), ("%hd", [("int", 70000)]),
    ("%hu", [("ushort", 65535)]), ("%hx", [("int", -1)]), ("%#ho", [("int", 0o777777)]),
    ("%ld", [("long", -5000000000)]), ("%ld", [("long", -2 ** 63)]), ("%lu", [("ulong", 2 ** 64 - 1)]),
    ("%lx", [("ulong", 0x123456789ABCDEF0)]), ("%lX", [("long", -2)]), ("%lo", [("ulong", 2 ** 40)]),
    ("%+ld", [("long", 2 ** 62)]), ("%20ld|", [("long", -123456789012)]), ("%-20lu|", [("ulong", 10 ** 19)]),
    ("%.15ld", [("long", 42)]), ("%d", [("char", -100)]), ("%d", [("short", -30000)]), ("%u", [("uchar", 200)]),
]

CHAR_STRING_CASES = [
    ("%c", [("int", 65)]), ("%c%c%c", [("int", 79), ("char", 75), ("uchar", 33)]), ("%3c|", [("int", 120)]),
    ("%-3c|", [("int", 121)]), ("%s", [("str", "hello")]), ("%10s|", [("str", "abc")]), ("%-10s|", [("str", "abc")]),
    ("%.2s", [("str", "abcdef")]), ("[%s]", [("str", "")]), ("%5.1s|", [("str", "xyz")]),
    ("%s and %s", [("str", "one"), ("str", "two")]), ("%.0s|", [("str", "gone")]),
    ("%d %s %c %5.1f %x", [("int", -3), ("str", "mixed"), ("int", 90), ("float", 2.25), ("uint", 48879)]),
]

FLOAT_CASES = [
    ("%f", [("float", 1.5)]), ("%f", [("float", -0.0)]), ("%f", [("float", 0.0)]), ("%.2f", [("float", 3.14159)]),
    ("%10.3f|", [("float", -2.5)]), ("%-10.3f|", [("float", 2.5)]), ("%+f", [("float", 1.0)]),
    ("% f", [("float", 1.0)]), ("%010.2f", [("float", -3.5)]), ("%#.0f", [("float", 3.0)]),
    ("%.0f", [("float", 2.5)]), ("%.0f", [("float", 3.5)]), ("%.1f", [("float", 0.25)]), ("%f", [("float", 1e10)]),
    ("%.10f", [("float", 0.1)]), ("%F", [("float", 1234.5)]), ("%f", [("float", 3.4028234663852886e38)]),
    ("%e", [("float", 12345.678)]), ("%E", [("float", 12345.678)]), ("%.3e", [("float", 0.0)]),
    ("%+.2e", [("float", -1e-20)]), ("%12.4e|", [("float", 6.02214076e23)]), ("%#.0e", [("float", 5.0)]),
    ("%e", [("float", 2.0 ** -149)]), ("%g", [("float", 100000.0)]), ("%g", [("float", 1e6)]),
    ("%g", [("float", 0.0001)]), ("%g", [("float", 1e-5)]), ("%#g", [("float", 1.0)]), ("%G", [("float", 1e-10)]),
    ("%.3g", [("float", 3.14159)]), ("%.0g", [("float", 0.5)]), ("%g", [("float", 123456789.0)]),
    ("%-12g|", [("float", -0.75)]), ("%012g", [("float", -0.75)]),
    ("%f", [("float", math.inf)]), ("%F", [("float", math.inf)]), ("%e", [("float", -math.inf)]),
    ("%+g", [("float", math.inf)]), ("%8f|", [("float", math.inf)]), ("%-8e|", [("float", -math.inf)]),
    ("%f", [("float", math.nan)]), ("%G", [("float", math.nan)]), ("%6g|", [("float", math.nan)]),
]

HEXFLOAT_CASES = [
    ("%a", [("float", 1.0)]), ("%a", [("float", 3.0)]), ("%A", [("float", 0.1)]), ("%a", [("float", 0.0)]),
    ("%a", [("float", -2.5)]), ("%.2a", [("float", 1.0 / 3.0)]), ("%a", [("float", 2.0 ** -149)]),
    ("%a", [("float", 3.4028234663852886e38)]), ("%.3a", [("float", 1.0)]), ("%#a", [("float", 2.0)]),
    ("%+a", [("float", 0.5)]), ("%14a|", [("float", 1.75)]), ("%-14a|", [("float", 1.75)]),
    ("%014a", [("float", -1.75)]), ("%a", [("float", math.inf)]), ("%A", [("float", -math.inf)]),
]

VECTOR_CASES = [
    ("%v4hld", [("int4", [1, -2, 3, -4])]), ("%v2hlu", [("uint2", [4000000000, 7])]),
    ("%#v4hhx", [("uchar4", [0xFA, 0xFB, 0xFC, 0xFD])]), ("%v8hhd", [("char8", [1, -1, 127, -128, 0, 5, -5, 9])]),
    ("%v3hd", [("short3", [-300, 0, 300])]), ("%v16hhu", [("uchar16", list(range(0, 256, 16)))]),
    ("%v2ld", [("long2", [-5000000000, 5000000000])]), ("%+v2ld", [("long2", [3, -3])]),
    ("%v4lx", [("ulong4", [0, 1, 2 ** 64 - 1, 2 ** 40])]), ("%5.2v4hlf", [("float4", [1.0, 2.5, -3.25, 100.0])]),
    ("%v2hle", [("float2", [1e-3, -1e3])]), ("%v4hlg", [("float4", [0.5, 1e7, 1e-7, -0.0])]),
    ("%v2hla", [("float2", [1.0, -0.75])]), ("%03v4hhd|", [("char4", [1, -2, 3, -4])]),
    ("%v4hlx", [("int4", [-1, 0, 16, -16])]), ("%-4v2hd|", [("short2", [7, -7])]),
    ("%#v2hlo", [("uint2", [8, 0])]), ("%v8hu", [("ushort8", [0, 1, 2, 3, 65535, 65534, 1000, 9])]),
    ("(%v2hld) and (%v3hlf)", [("int2", [5, 6]), ("float3", [0.5, 1.5, 2.5])]),
]


@check
def integers(env, t):
    """%d %i %u %o %x %X with every flag, width, precision (and precision 0 of zero), %%"""
    run_cases(env, t, INT_CASES)


@check
def length_modifiers(env, t):
    """hh, h and l: char/short conversion of the argument, 64-bit long and ulong"""
    run_cases(env, t, LENGTH_CASES)


@check
def chars_and_strings(env, t):
    """%c and %s with widths, precisions and left adjustment; several conversions in one call"""
    run_cases(env, t, CHAR_STRING_CASES)


@check
def floats(env, t):
    """%f %F %e %E %g %G: flags, widths, precisions, rounding, infinities and NaN"""
    run_cases(env, t, FLOAT_CASES)


@check
def hex_floats(env, t):
    """%a and %A: the C99 hexadecimal form of the float converted to double"""
    run_cases(env, t, HEXFLOAT_CASES)


@check
def vectors(env, t):
    """%vN with hh h hl l: elements formatted with the same flags, width and precision, comma-separated"""
    run_cases(env, t, VECTOR_CASES)


@check
def doubles(env, t):
    """double arguments (cl_khr_fp64): %f %.17g %a %e and %vNlf on double vectors"""
    if "cl_khr_fp64" not in env.extensions:
        t.skip("the device does not report cl_khr_fp64")
    cases = [("%.17g", [("double", 0.1)]), ("%f", [("double", 1e300)]), ("%a", [("double", 1.0 + 2.0 ** -52)]),
             ("%.12e", [("double", -2.0 / 3.0)]), ("%v2lf", [("double2", [0.125, -1e-3])]),
             ("%.3v3le", [("double3", [1.0, 2.0 ** 100, -0.0])]), ("%a", [("double", 2.0 ** -1022)])]
    run_cases(env, t, cases, prefix="#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n")


RUNTIME_SRC = r"""
__kernel void k(__global const float *f, __global const int *n, uint count)
{
    for (uint j = 0; j < count; j++)
        printf("%u: %.9g %a %e %d %x\n", j, f[j], f[j], f[j], n[j], n[j]);
}
"""


@check
def runtime_values(env, t):
    """values read from buffers (random floats across every exponent, random ints), not literals"""
    rng = env.rng(70)
    count = env.samples(200, 2000)
    bits = rng.integers(0, 1 << 32, count, dtype=np.uint64).astype(np.uint32)
    f = bits.view(np.float32)
    f = np.where(np.isnan(f), np.float32(1.0), f).astype(np.float32)
    n = rng.integers(-2 ** 31, 2 ** 31, count, dtype=np.int64).astype(np.int32)
    hf = ctypes.create_string_buffer(f.tobytes(), f.nbytes)
    hn = ctypes.create_string_buffer(n.tobytes(), n.nbytes)
    bf = env.buffer(t, f.nbytes, C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, hf)
    bn = env.buffer(t, n.nbytes, C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, hn)
    text = run_printing(env, t, RUNTIME_SRC, "k", (1,),
                        args=[("mem", bf), ("mem", bn), ctypes.c_uint32(count)])
    want = "".join(c_printf("%u: %.9g %a %e %d %x\n", [j, float(f[j]), float(f[j]), float(f[j]), int(n[j]), int(n[j])])
                   for j in range(count))
    if text != want:
        got_lines, want_lines = text.split("\n"), want.split("\n")
        bad = [(a, b) for a, b in zip(want_lines, got_lines) if a != b]
        t.true(False, f"{len(bad)} of {count} lines differ (or the line count: {len(got_lines) - 1} printed); "
                      f"first: expected {bad[0][0]!r}, got {bad[0][1]!r}" if bad else
                      f"output differs: {len(text)} characters printed, {len(want)} expected")


ORDER_SRC = r"""
__kernel void k(uint steps, __global int *r)
{
    size_t g = get_global_id(0);
    int bad = 0;
    for (uint s = 0; s < steps; s++)
        bad |= printf("wi %u step %u of %u\n", (uint)g, s, steps);
    r[g] = bad;
}
"""


def order_problems(text, n, steps):
    """Each work-item 0..n-1 printed lines 'wi G step S of STEPS' for S = 0..steps-1, in order."""
    seen = [[] for _ in range(n)]
    out = []
    for line in text.split("\n"):
        if not line:
            continue
        m = re.fullmatch(r"wi (\d+) step (\d+) of (\d+)", line)
        if not m or int(m.group(1)) >= n or int(m.group(3)) != steps:
            out.append(f"unexpected line {line!r} (one printf's output split or garbled?)")
            break
        seen[int(m.group(1))].append(int(m.group(2)))
    for g in range(n):
        if seen[g] != list(range(steps)):
            s = seen[g]
            what = (f"printed {len(s)} lines, expected {steps}" if len(s) != steps
                    else f"printed its steps in the order {s[:12]}")
            out.append(f"work-item {g} {what}")
            if len(out) > 5:
                break
    return out


@check
def work_item_order(env, t):
    """many work-items in several groups: each one's lines appear exactly once and in its own order"""
    n, steps = env.samples((256, 8), (2048, 16))
    r = env.buffer(t, 4 * n)
    text = run_printing(env, t, ORDER_SRC, "k", (n,), (64,), args=[ctypes.c_uint32(steps), ("mem", r)])
    for p in order_problems(text, n, steps):
        t.true(False, p)
    rets = np.frombuffer(env.read(t, r, 4 * n), dtype=np.int32)
    t.true(not rets.any(), f"printf returned non-zero in {int(np.count_nonzero(rets))} work-items")


@check
def flushed_by_finish(env, t):
    """output of a kernel enqueued without waiting is all on stdout when clFinish returns, and the
    output of a second kernel in the same queue follows the first's"""
    src = r"""
__kernel void a(uint m) { printf("first %u\n", (uint)get_global_id(0) + m); }
__kernel void b(uint m) { printf("second %u\n", (uint)get_global_id(0) + m); }
"""
    prog = env.program(t, src)
    ka, kb = env.kernel(t, prog, "a"), env.kernel(t, prog, "b")
    env.set_args(t, ka, ctypes.c_uint32(1000))
    env.set_args(t, kb, ctypes.c_uint32(5000))
    q = env.new_queue(t)
    n = 300
    g = (ctypes.c_size_t * 1)(n)

    def go():
        for k in (ka, kb):
            code = env.cl.clEnqueueNDRangeKernel(q, k, 1, None, g, None, 0, None, None)
            if code:
                return code
        return env.cl.clFinish(q)

    code, raw = capture_stdout(go)
    t.ok(code, "clEnqueueNDRangeKernel x2 + clFinish")
    lines = raw.decode("latin-1").split("\n")
    first = sorted(int(x.split()[1]) for x in lines if x.startswith("first "))
    second = sorted(int(x.split()[1]) for x in lines if x.startswith("second "))
    t.eq(first, list(range(1000, 1000 + n)), "work-items whose 'first' line was on stdout after clFinish")
    t.eq(second, list(range(5000, 5000 + n)), "work-items whose 'second' line was on stdout after clFinish")
    if first and second:
        last_a = max(i for i, x in enumerate(lines) if x.startswith("first "))
        first_b = min(i for i, x in enumerate(lines) if x.startswith("second "))
        t.true(last_a < first_b, "output of the second kernel (in-order queue) appeared before the first's ended")
