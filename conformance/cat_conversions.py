"""conversions: convert_<type>[_sat][_rte|_rtz|_rtp|_rtn] between every pair of scalar types
(char uchar short ushort int uint long ulong float, and double where cl_khr_fp64 is reported),
scalar and vector, on edge values (NaN, infinities, -0.0, values exactly halfway between two
results, values just inside and outside the destination's range, integers too wide for the
float's mantissa) and random ones; implicit conversions, casts and the usual arithmetic
conversions; as_<type> reinterpretation.

The reference is exact: integers are Python ints, floats are turned into exact ratios and
rounded to the destination format with integer arithmetic, so no host rounding is trusted.
What the OpenCL C specification leaves undefined is not checked: a float or an out-of-range
value converted to an integer without _sat (NaN, infinities, results outside the range).
Integer-to-integer conversions without _sat keep the low bits (C99 6.3.1.3: modulo for unsigned
destinations; two's complement wrapping for signed ones, which every OpenCL device does).
Without CL_FP_DENORM a device may flush denormal floats to zero; that is accepted then."""
import ctypes
import math
import struct

import numpy as np

from . import clapi as C
from .framework import INTEGER_TYPES, Category, int_limits, wrap_int

CATEGORY = Category("conversions", "convert_T[_sat][_rte|_rtz|_rtp|_rtn] on every type pair, implicit "
                                   "conversions, as_T")
check = CATEGORY.check

INT_TYPES = INTEGER_TYPES
FLOAT_FORMATS = {"float": (24, -126, 127), "double": (53, -1022, 1023)}  # precision, emin, emax
TYPES = list(INT_TYPES) + list(FLOAT_FORMATS)
NP = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "int": np.int32,
      "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "float": np.float32, "double": np.float64}
ROUNDINGS = ["", "_rte", "_rtz", "_rtp", "_rtn"]
WIDTHS = [2, 3, 4, 8, 16]
UNDEFINED = object()


int_range, wrap = int_limits, wrap_int


def modes(dst):
    """Every suffix convert_<dst> accepts: _sat only for integer destinations."""
    if dst in FLOAT_FORMATS:
        return list(ROUNDINGS)
    return ROUNDINGS + ["_sat" + r for r in ROUNDINGS]


def float_max(fmt):
    p, _, emax = FLOAT_FORMATS[fmt]
    return math.ldexp((1 << p) - 1, emax - p + 1)


def round_ratio(num, den, rounding, fmt):
    """num/den (den > 0, exact) rounded to the float format `fmt` ('float' or 'double') with
    rounding 'rte', 'rtz', 'rtp' or 'rtn', as a Python float (exact for both formats);
    overflow gives an infinity or the largest finite value as IEEE 754 says for the mode."""
    p, emin, emax = FLOAT_FORMATS[fmt]
    neg = num < 0
    if num == 0:
        return 0.0
    a = -num if neg else num
    e = a.bit_length() - den.bit_length()            # floor(log2(a / den)) is e or e - 1
    if (a << max(0, -e)) < (den << max(0, e)):
        e -= 1
    q = max(e, emin) - (p - 1)                       # the exponent of one ulp there
    n_, d_ = (a, den << q) if q >= 0 else (a << -q, den)
    m, r = divmod(n_, d_)
    if rounding == "rte":
        up = 2 * r > d_ or (2 * r == d_ and m & 1)
    elif rounding == "rtz":
        up = False
    else:
        up = r != 0 and ((rounding == "rtp") != neg)
    m += up
    big = float_max(fmt)
    mag = math.ldexp(m, q) if m.bit_length() + q <= emax + 1 else math.inf
    if mag > big:
        away = rounding == "rte" or (rounding == "rtp" and not neg) or (rounding == "rtn" and neg)
        mag = math.inf if away else big
    return -mag if neg else mag


def is_float(name):
    return name in FLOAT_FORMATS


def reference(src, dst, mode, x):
    """The value of convert_<dst><mode>((src)x): a Python int or float, or UNDEFINED."""
    sat = "_sat" in mode
    rounding = mode.replace("_sat", "").lstrip("_") or ("rte" if is_float(dst) else "rtz")
    if is_float(dst):
        if is_float(src):
            if math.isnan(x) or math.isinf(x) or x == 0:
                return x
            num, den = x.as_integer_ratio()
        else:
            if x == 0:
                return 0.0
            num, den = x, 1
        return round_ratio(num, den, rounding, dst)
    lo, hi = int_range(dst)
    if not is_float(src):
        return min(max(x, lo), hi) if sat else wrap(x, dst)
    if math.isnan(x):
        return 0 if sat else UNDEFINED
    if math.isinf(x):
        return (hi if x > 0 else lo) if sat else UNDEFINED
    r = {"rtz": math.trunc, "rte": round, "rtp": math.ceil, "rtn": math.floor}[rounding](x)
    if lo <= r <= hi:
        return r
    return min(max(r, lo), hi) if sat else UNDEFINED


def same_value(got, want, dst):
    """got (a numpy scalar of dst) is the reference value `want`: exact, sign of zero included;
    any NaN for a NaN."""
    if is_float(dst):
        g = float(got)
        if math.isnan(want):
            return math.isnan(g)
        return g == want and math.copysign(1.0, g) == math.copysign(1.0, want)
    return int(got) == want


def tiny(v, fmt):
    return v != 0 and math.isfinite(v) and abs(v) < math.ldexp(1.0, FLOAT_FORMATS[fmt][1])


def accept(src, dst, mode, x, got, ftz):
    """(ok, reference) for got = convert_<dst><mode>(x); `ftz` names the formats whose denormals
    the device may flush to zero."""
    want = reference(src, dst, mode, x)
    if want is UNDEFINED:
        return True, want
    if same_value(got, want, dst):
        return True, want
    if dst in ftz and tiny(want, dst) and float(got) == 0:
        return True, want
    if src in ftz and tiny(x, src):
        alt = reference(src, dst, mode, math.copysign(0.0, x))
        if alt is not UNDEFINED and same_value(got, alt, dst):
            return True, want
    return False, want


def show(v, name):
    if v is UNDEFINED:
        return "undefined"
    if is_float(name):
        v = float(v)
        return repr(v) if math.isnan(v) or math.isinf(v) else f"{v!r} ({v.hex()})"
    return str(int(v))


def to_host(values, name):
    """numpy values of type name -> Python ints / floats (exact)."""
    return [float(v) for v in values] if is_float(name) else [int(v) for v in values]


# --- inputs ------------------------------------------------------------------------------------------

def _fit(values, name):
    """values (Python numbers) that type `name` holds, as that type (floats rounded to it)."""
    out = []
    if is_float(name):
        with np.errstate(all="ignore"):
            for v in values:
                out.append(NP[name](v))
        return out
    lo, hi = int_range(name)
    return [NP[name](v) for v in values if isinstance(v, int) and lo <= v <= hi]


def _neighbours(v, name):
    """v and the next representable values of float type `name` either side."""
    x = NP[name](v)
    return [x, np.nextafter(x, NP[name](np.inf)), np.nextafter(x, NP[name](-np.inf))]


def edge_inputs(src, dst):
    """Values of type src worth converting to dst."""
    vals = [0, 1, 2, 3, 7, 100, 127, 128, 255, 256]
    if is_float(dst):
        p, emin, emax = FLOAT_FORMATS[dst]
        for k in (p, p + 1, p + 7, 31, 40, 52, 53, 54, 62, 63):
            base = 1 << k
            half = 1 << max(k - p, 0)      # one ulp of dst at 2^k is 2 * half
            vals += [base - 1, base + 1, base + half, base + 3 * half, base + half + 1,
                     base + 3 * half - 1, base - half // 2]
    else:
        lo, hi = int_range(dst)
        vals += [lo - 1, lo, lo + 1, hi - 1, hi, hi + 1]
    for t in INT_TYPES:
        lo, hi = int_range(t)
        vals += [lo, hi, lo + 1, hi - 1]
    vals += [-v for v in vals]
    if not is_float(src):
        return _fit(sorted(set(vals)), src)
    out = []
    fl = [0.5, 1.5, 2.5, 3.5, 0.25, 0.75, 1.0000001, 0.49999997, 0.50000006, 1e-3, 1e10, 1e30, 3e38,
          2.0 ** -149, 2.0 ** -126, 2.0 ** -1074, 2.0 ** -1022, 1e300, 1e-300, math.inf]
    if dst in INT_TYPES:
        lo, hi = int_range(dst)
        fl += [lo - 1.5, lo - 1, lo - 0.5, lo - 0.25, lo + 0.5, hi - 0.5, hi + 0.25, hi + 0.5,
               hi + 1, hi + 1.5, float(hi) * 2]
    else:
        p, emin, emax = FLOAT_FORMATS[dst]
        one = 2.0 ** -p                                      # half an ulp of dst at 1.0
        fl += [1 + one, 1 + 3 * one, 1 + one + one / 4, 1 - one / 2, 1 + one * 0.999,
               float_max(dst),
               math.ldexp(1.0, emin), math.ldexp(1.0, emin - p + 1),            # smallest normal, denormal
               math.ldexp(1.0, emin - p), math.ldexp(3.0, emin - p),             # halfway in denormals
               math.ldexp(1.0, emin) - math.ldexp(1.0, emin - p + 1)]            # largest denormal
        if emax < 1023:
            fl.append(math.ldexp(1.0, emax + 1) - math.ldexp(1.0, emax - p))   # max + half an ulp
    with np.errstate(all="ignore"):
        for v in fl:
            if v > float(np.finfo(NP[src]).max) and not math.isinf(v):
                continue
            for s in (v, -v):
                out += _neighbours(s, src)
        out += [NP[src](x) for x in vals if abs(x) < 1e300]
        out += [NP[src](-0.0), NP[src](math.nan), -NP[src](math.nan)]
    return out


def random_inputs(rng, src, dst, n):
    if not is_float(src):
        bits, signed = INT_TYPES[src]
        lo, hi = int_range(src)
        full = rng.integers(lo, hi, n // 2, dtype=NP[src], endpoint=True)
        # values of every magnitude: random bit lengths
        lens = [int(v) for v in rng.integers(0, bits + 1, n - n // 2)]
        mags = [int(rng.integers(0, 1 << 62)) | (int(rng.integers(0, 4)) << 62) for _ in lens]
        part = [m & ((1 << ln) - 1) for m, ln in zip(mags, lens)]
        part = [(-v if signed and i % 2 else v) for i, v in enumerate(part)]
        return list(full) + _fit([min(max(v, lo), hi) for v in part], src)
    ft = NP[src]
    ut = np.uint32 if src == "float" else np.uint64
    bits = rng.integers(0, np.iinfo(ut).max, n // 3, dtype=ut, endpoint=True).view(ft)
    if dst in INT_TYPES:
        lo, hi = int_range(dst)
        span = rng.uniform(lo - 3.0, hi + 3.0, n // 3)
        near = rng.integers(-300, 300, n - 2 * (n // 3)) + rng.choice([0.5, -0.5, 0.25, 0.0, 0.999], n - 2 * (n // 3))
    else:
        span = rng.standard_normal(n // 3) * 10.0 ** rng.integers(-40, 40, n // 3)
        near = (rng.integers(1, 1 << 30, n - 2 * (n // 3)).astype(np.float64) *
                2.0 ** rng.integers(-60, 60, n - 2 * (n // 3)))
    with np.errstate(all="ignore"):
        return list(bits) + list(span.astype(ft)) + list(near.astype(ft))


def pad(values, name, multiple=48):
    """values as an array of `name`, repeated up to a multiple of `multiple`."""
    arr = np.array(values, dtype=NP[name])
    m = -(-len(arr) // multiple) * multiple
    return np.resize(arr, m) if m else arr


# --- running -----------------------------------------------------------------------------------------

def available_types(env):
    return TYPES if "cl_khr_fp64" in env.extensions else TYPES[:-1]


def pragma(types):
    return "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if "double" in types else ""


def ftz_formats(env):
    out = set()
    if not env.device_info(C.CL_DEVICE_SINGLE_FP_CONFIG, "ulong") & C.CL_FP_DENORM:
        out.add("float")
    if "cl_khr_fp64" in env.extensions and \
            not env.device_info(C.CL_DEVICE_DOUBLE_FP_CONFIG, "ulong") & C.CL_FP_DENORM:
        out.add("double")
    return out


def width_for(src, dst):
    return WIDTHS[(TYPES.index(src) + 2 * TYPES.index(dst)) % len(WIDTHS)]


def conversion_kernels(srcs, dst):
    """Per source type: s_<src> converts one element per work-item with every mode, v_<src>
    one vector of width_for(src, dst)."""
    ms = modes(dst)
    out = [pragma(srcs + [dst])]
    for src in srcs:
        w = width_for(src, dst)
        body = "\n".join(f"    o[{j} * n + i] = convert_{dst}{m}(x);" for j, m in enumerate(ms))
        out.append(f"__kernel void s_{src}(__global const {src} *in, __global {dst} *o, uint n)\n"
                   f"{{\n    size_t i = get_global_id(0);\n    {src} x = in[i];\n{body}\n}}\n")
        body = "\n".join(f"    vstore{w}(convert_{dst}{w}{m}(x), i, o + {j} * n);" for j, m in enumerate(ms))
        out.append(f"__kernel void v_{src}(__global const {src} *in, __global {dst} *o, uint n)\n"
                   f"{{\n    size_t i = get_global_id(0);\n    {src}{w} x = vload{w}(i, in);\n{body}\n}}\n")
    return "".join(out)


def launch(env, t, prog, name, arr, out_dtype, rows, gsize):
    """Run kernel `name`(in = arr, o, n = len(arr)) over gsize items; the output as rows x n."""
    n = len(arr)
    k = env.kernel(t, prog, name)
    host = ctypes.create_string_buffer(arr.tobytes(), arr.nbytes)
    inp = env.buffer(t, arr.nbytes, C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, host)
    nbytes = rows * n * np.dtype(out_dtype).itemsize
    out = env.buffer(t, nbytes)
    env.set_args(t, k, ("mem", inp), ("mem", out), np.uint32(n))
    env.enqueue(t, k, (gsize,))
    return np.frombuffer(env.read(t, out, nbytes), dtype=out_dtype).reshape(rows, n)


class Report:
    """Collects wrong results; the failure message says how many were wrong per function, then
    shows examples (the first of each function first) with their inputs."""

    def __init__(self, t):
        self.t, self.examples, self.counts = t, {}, {}

    def bad(self, key, message):
        self.counts[key] = self.counts.get(key, 0) + 1
        if self.counts[key] <= 2:
            self.examples.setdefault(key, []).append(message)

    def close(self, total):
        if not self.counts:
            return
        listed = ", ".join(f"{k}: {c}" for k, c in list(self.counts.items())[:10])
        more = ", ..." if len(self.counts) > 10 else ""
        self.t.true(False, f"{sum(self.counts.values())} wrong of {total} results ({listed}{more})")
        for rank in (0, 1):
            for msgs in self.examples.values():
                if rank < len(msgs):
                    self.t.true(False, msgs[rank])


def judge_conversions(t, src, dst, xs, got_s, got_v, w, ftz=frozenset(), report=None):
    """Compare convert_<dst><mode> of the inputs xs (numpy values of src) with the reference;
    got_s / got_v: results (modes x len(xs)) of the scalar kernel and of the width-w one.
    Returns the number of wrong results."""
    own = report is None
    report = report or Report(t)
    before = sum(report.counts.values())
    host = to_host(xs, src)
    for j, m in enumerate(modes(dst)):
        for what, got, fn in (("", got_s, f"convert_{dst}{m}"), (w, got_v, f"convert_{dst}{w}{m}")):
            if got is None:
                continue
            for i, x in enumerate(host):
                ok, want = accept(src, dst, m, x, got[j][i], ftz)
                if not ok:
                    report.bad(fn + f"({src})",
                               f"{fn}(({src}{what}){show(x, src)}) [element {i % w if what else 0}]: "
                               f"expected {show(want, dst)}, got {show(got[j][i], dst)}")
    wrong = sum(report.counts.values()) - before
    if own:
        report.close(len(modes(dst)) * len(host) * (1 + (got_v is not None)))
    return wrong


def run_to(env, t, dst):
    types = available_types(env)
    if dst not in types:
        t.skip("the device does not report cl_khr_fp64")
    srcs = list(types)
    prog = env.program(t, conversion_kernels(srcs, dst))
    n_rand = env.samples(24, 480)
    ftz = ftz_formats(env)
    report = Report(t)
    total = 0
    for si, src in enumerate(srcs):
        rng = env.rng(1000 + 17 * TYPES.index(dst) + si)
        xs = pad(edge_inputs(src, dst) + random_inputs(rng, src, dst, n_rand), src)
        rows = len(modes(dst))
        w = width_for(src, dst)
        got_s = launch(env, t, prog, f"s_{src}", xs, NP[dst], rows, len(xs))
        got_v = launch(env, t, prog, f"v_{src}", xs, NP[dst], rows, len(xs) // w)
        judge_conversions(t, src, dst, xs, got_s, got_v, w, ftz, report)
        total += 2 * rows * len(xs)
    report.close(total)
    t.note(f"{total} conversions from {len(srcs)} types")


def _make_to(dst):
    def fn(env, t):
        run_to(env, t, dst)
    fn.__doc__ = (f"convert_{dst}" + ("[_sat]" if dst in INT_TYPES else "") +
                  "[_rte|_rtz|_rtp|_rtn] from every type, scalar and vector, edge and random values")
    return fn


for _dst in TYPES:
    CATEGORY.check(_make_to(_dst), name=f"to_{_dst}")


# --- implicit conversions ------------------------------------------------------------------------------

def helper_name(dst):
    return f"pass_{dst}"


@check
def implicit(env, t):
    """assignment, cast, argument passing and scalar-to-vector casts convert like convert_T()"""
    types = available_types(env)
    src_lines = [pragma(types)]
    for dst in types:
        src_lines.append(f"{dst} {helper_name(dst)}({dst} v) {{ return v; }}\n")
    for src in types:
        body = []
        for j, dst in enumerate(types):
            w = WIDTHS[j % len(WIDTHS)]
            body.append(f"    {{ {dst} d = x; o_{dst}[{4 * j} * n + i] = d; }}")
            body.append(f"    o_{dst}[{4 * j + 1} * n + i] = ({dst})x;")
            body.append(f"    o_{dst}[{4 * j + 2} * n + i] = {helper_name(dst)}(x);")
            body.append(f"    o_{dst}[{4 * j + 3} * n + i] = (({dst}{w})x).s{w - 1 if w < 10 else 'f'};")
        outs = ", ".join(f"__global {d} *o_{d}" for d in types)
        src_lines.append(f"__kernel void k_{src}(__global const {src} *in, {outs}, uint n)\n"
                         f"{{\n    size_t i = get_global_id(0);\n    {src} x = in[i];\n" + "\n".join(body) + "\n}\n")
    prog = env.program(t, "".join(src_lines))
    ftz = ftz_formats(env)
    report = Report(t)
    total = 0
    for si, src in enumerate(types):
        rng = env.rng(3000 + si)
        xs = pad(edge_inputs(src, "float")[::2] + edge_inputs(src, "int")[::2] +
                 random_inputs(rng, src, "int", env.samples(12, 96)), src, 16)
        n = len(xs)
        k = env.kernel(t, prog, f"k_{src}")
        host = ctypes.create_string_buffer(xs.tobytes(), xs.nbytes)
        inp = env.buffer(t, xs.nbytes, C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, host)
        outs = [env.buffer(t, 4 * len(types) * n * np.dtype(NP[d]).itemsize) for d in types]
        env.set_args(t, k, ("mem", inp), *[("mem", o) for o in outs], np.uint32(n))
        env.enqueue(t, k, (n,))
        host_x = to_host(xs, src)
        for j, (dst, o) in enumerate(zip(types, outs)):
            got = np.frombuffer(env.read(t, o, 4 * len(types) * n * np.dtype(NP[dst]).itemsize),
                                dtype=NP[dst]).reshape(4 * len(types), n)
            w = WIDTHS[j % len(WIDTHS)]
            forms = [f"{dst} d = x", f"({dst})x", f"{helper_name(dst)}(x)", f"(({dst}{w})x).s{w - 1}"]
            for f, form in enumerate(forms):
                row = got[4 * j + f]
                for i, x in enumerate(host_x):
                    total += 1
                    ok, want = accept(src, dst, "", x, row[i], ftz)
                    if not ok:
                        report.bad(f"{form} from {src}", f"{form} with ({src})x = {show(x, src)}: "
                                   f"expected {show(want, dst)}, got {show(row[i], dst)}")
    report.close(total)


# --- usual arithmetic conversions ------------------------------------------------------------------------

RANK = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 3, "uint": 3, "long": 4, "ulong": 4,
        "float": 5, "double": 6}


def promoted(name):
    return "int" if RANK[name] < 3 else name


def common_type(a, b):
    """C99 6.3.1.8 on OpenCL C's scalar types."""
    if is_float(a) or is_float(b):
        return a if RANK[a] >= RANK[b] else b
    a, b = promoted(a), promoted(b)
    sa, sb = INT_TYPES[a][1], INT_TYPES[b][1]
    if sa == sb:
        return a if RANK[a] >= RANK[b] else b
    s, u = (a, b) if sa else (b, a)
    if RANK[u] >= RANK[s]:
        return u
    if INT_TYPES[s][0] > INT_TYPES[u][0]:
        return s
    return "u" + s


def arith_reference(op, ta, a, tb, b):
    """(type, value) of `a op b` for op '+', '*', '<', or (type, UNDEFINED) on signed overflow."""
    ct = common_type(ta, tb)
    if is_float(ct):
        ca = reference(ta, ct, "", a)
        cb = reference(tb, ct, "", b)
        if op == "<":
            return "int", int(ca < cb)
        if math.isnan(ca) or math.isnan(cb) or math.isinf(ca) or math.isinf(cb):
            with np.errstate(all="ignore"):
                v = float(NP[ct](ca) + NP[ct](cb) if op == "+" else NP[ct](ca) * NP[ct](cb))
            return ct, v
        fa, fb = ca.as_integer_ratio(), cb.as_integer_ratio()
        if op == "+":
            num, den = fa[0] * fb[1] + fb[0] * fa[1], fa[1] * fb[1]
        else:
            num, den = fa[0] * fb[0], fa[1] * fb[1]
        if num == 0:  # IEEE: x + (-x) is +0 in round to nearest; a product's zero keeps the sign
            neg = op == "*" and (math.copysign(1, ca) * math.copysign(1, cb) < 0)
            if op == "+" and math.copysign(1, ca) < 0 and math.copysign(1, cb) < 0:
                neg = True
            return ct, -0.0 if neg else 0.0
        return ct, round_ratio(num, den, "rte", ct)
    ca, cb = wrap(a, ct), wrap(b, ct)
    if op == "<":
        return "int", int(ca < cb)
    exact = ca + cb if op == "+" else ca * cb
    if INT_TYPES[ct][1] and wrap(exact, ct) != exact:
        return ct, UNDEFINED
    return ct, wrap(exact, ct)


@check
def usual_arithmetic_conversions(env, t):
    """a + b, a * b, a < b and sizeof(a + b) on every pair of scalar types (C99 6.3.1.8 rules)"""
    types = available_types(env)
    pairs = [(a, b) for a in types for b in types]
    ops = ["+", "*", "<"]
    rng = env.rng(4000)
    n = env.samples(8, 32)
    inputs = {}
    for name in types:
        e = edge_inputs(name, "int")
        pick = [e[i] for i in rng.integers(0, len(e), n // 2)]
        vals = [v for v in pick + random_inputs(rng, name, "short", n) if not (is_float(name) and math.isnan(float(v)))]
        inputs[name] = pad(vals, name, n)[:n]
    lines = [pragma(types),
             "__kernel void k(" + ", ".join(f"__global const {x} *in_{x}" for x in types) +
             ", __global long *oi, __global double *od, __global float *of, __global int *oc, __global int *sz, uint n)\n"
             "{\n    size_t i = get_global_id(0);\n"]
    if "double" not in types:
        lines[1] = lines[1].replace("__global double *od", "__global float *od")
    for p, (ta, tb) in enumerate(pairs):
        ct = common_type(ta, tb)
        lines.append(f"    {{ {ta} a = in_{ta}[i]; {tb} b = in_{tb}[i];")
        for j, op in enumerate(ops[:2]):
            slot = (2 * p + j)
            if is_float(ct):
                dest = "od" if ct == "double" else "of"
                lines.append(f"      {dest}[{slot} * n + i] = a {op} b;")
            else:
                lines.append(f"      oi[{slot} * n + i] = (long)(a {op} b);")
        lines.append(f"      oc[{p} * n + i] = a < b; if (i == 0) sz[{p}] = (int)sizeof(a + b); }}")
    lines.append("}\n")
    prog = env.program(t, "\n".join(lines))
    k = env.kernel(t, prog, "k")
    bufs = []
    for name in types:
        arr = inputs[name]
        host = ctypes.create_string_buffer(arr.tobytes(), arr.nbytes)
        bufs.append(env.buffer(t, arr.nbytes, C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, host))
    slots = 2 * len(pairs) * n
    dsize = 8 if "double" in types else 4
    oi, od, of = env.buffer(t, 8 * slots), env.buffer(t, dsize * slots), env.buffer(t, 4 * slots)
    oc, sz = env.buffer(t, 4 * len(pairs) * n), env.buffer(t, 4 * len(pairs))
    env.set_args(t, k, *[("mem", b) for b in bufs], ("mem", oi), ("mem", od), ("mem", of), ("mem", oc),
                 ("mem", sz), np.uint32(n))
    env.enqueue(t, k, (n,))
    gi = np.frombuffer(env.read(t, oi, 8 * slots), dtype=np.int64).reshape(-1, n)
    gd = np.frombuffer(env.read(t, od, dsize * slots), dtype=np.float64 if dsize == 8 else np.float32).reshape(-1, n)
    gf = np.frombuffer(env.read(t, of, 4 * slots), dtype=np.float32).reshape(-1, n)
    gc = np.frombuffer(env.read(t, oc, 4 * len(pairs) * n), dtype=np.int32).reshape(-1, n)
    gs = np.frombuffer(env.read(t, sz, 4 * len(pairs)), dtype=np.int32)
    report = Report(t)
    total = 0
    for p, (ta, tb) in enumerate(pairs):
        ct = common_type(ta, tb)
        size = INT_TYPES[ct][0] // 8 if ct in INT_TYPES else np.dtype(NP[ct]).itemsize
        t.eq(int(gs[p]), size, f"sizeof(({ta})a + ({tb})b) (the common type is {ct})")
        xa, xb = to_host(inputs[ta], ta), to_host(inputs[tb], tb)
        for i in range(n):
            for j, op in enumerate(ops):
                rt, want = arith_reference(op, ta, xa[i], tb, xb[i])
                if want is UNDEFINED:
                    continue
                total += 1
                if op == "<":
                    got = gc[p][i]
                elif is_float(ct):
                    got = (gd if ct == "double" else gf)[2 * p + j][i]
                else:
                    got, want = gi[2 * p + j][i], wrap(want, "long")
                ok = same_value(got, want, rt if is_float(rt) else "long")
                if not ok:
                    report.bad(f"{ta} {op} {tb}", f"({ta}){show(xa[i], ta)} {op} ({tb}){show(xb[i], tb)}"
                               f" (common type {ct}): expected {show(want, rt)}, got {show(got, rt)}")
    report.close(total)


# --- as_type -------------------------------------------------------------------------------------------------

ELEM_SIZE = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "long": 8, "ulong": 8,
             "float": 4, "double": 8}


def as_type_pairs(types):
    """(dst, src) type names (with widths) of equal size, different from each other."""
    shapes = []
    for e in types:
        for w in (1, 2, 4, 8, 16):
            shapes.append((e + (str(w) if w > 1 else ""), ELEM_SIZE[e] * w))
    pairs = []
    for i, (a, sa) in enumerate(shapes):
        for j, (b, sb) in enumerate(shapes):
            if sa == sb and a != b and (i * 7 + j * 3) % 4 == 0:
                pairs.append((a, b))
    # the 3-vectors have the size of 4-vectors of their element; as_type between 3-vectors
    three = [x for x in types if ELEM_SIZE[x] == 4]
    pairs += [(a + "3", b + "3") for a in three for b in three if a != b]
    return pairs


@check
def as_type(env, t):
    """as_<type> keeps every bit, NaN payloads included, between same-sized scalars and vectors"""
    types = available_types(env)
    pairs = as_type_pairs(types)
    n = env.samples(4, 32)
    lines = [pragma(types)]
    for p, (dst, src) in enumerate(pairs):
        if dst.endswith("3"):
            lines.append(f"__kernel void k{p}(__global const {src[:-1]} *in, __global {dst[:-1]} *o)\n"
                         f"{{ size_t i = get_global_id(0); vstore3(as_{dst}(vload3(i, in)), i, o); }}\n")
        else:
            lines.append(f"__kernel void k{p}(__global const {src} *in, __global {dst} *o)\n"
                         f"{{ size_t i = get_global_id(0); o[i] = as_{dst}(in[i]); }}\n")
    prog = env.program(t, "".join(lines))
    rng = env.rng(5000)
    specials = [struct.pack("<I", v) for v in (0x7f800001, 0xffc00001, 0x7fffffff, 0x80000000, 0x7f800000,
                                                0x00000001)]
    specials += [struct.pack("<Q", v) for v in (0x7ff0000000000001, 0xfff8000000000123, 0x8000000000000000)]
    for p, (dst, src) in enumerate(pairs):
        elem = "".join(c for c in src if c.isalpha())
        w = int("".join(c for c in src if c.isdigit()) or 1)
        size = ELEM_SIZE[elem] * (w if w != 3 else 3)
        raw = bytearray(rng.integers(0, 256, size * n, dtype=np.uint8).tobytes())
        pos = 0  # NaN payloads, infinities, signed zeros of both float widths, aligned
        for s in specials:
            pos = -(-pos // len(s)) * len(s)
            if pos + len(s) <= len(raw):
                raw[pos:pos + len(s)] = s
                pos += len(s)
        k = env.kernel(t, prog, f"k{p}")
        host = ctypes.create_string_buffer(bytes(raw), len(raw))
        inp = env.buffer(t, len(raw), C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, host)
        ob = env.buffer(t, len(raw))
        env.set_args(t, k, ("mem", inp), ("mem", ob))
        env.enqueue(t, k, (n,))
        out = env.read(t, ob, len(raw))
        if out != bytes(raw):
            i = next(i for i in range(len(raw)) if out[i] != raw[i]) // size
            t.true(False, f"as_{dst}(({src}) bytes {bytes(raw[i * size:(i + 1) * size]).hex()}): got bytes "
                          f"{out[i * size:(i + 1) * size].hex()}")
