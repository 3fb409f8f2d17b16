"""integer_ops: the integer builtins (abs, abs_diff, add_sat, sub_sat, hadd, rhadd, clamp, clz,
ctz, popcount, mad_hi, mad_sat, max, min, mul_hi, rotate, upsample, mad24, mul24) and the
operators (+ - * / % & | ^ << >> ~ unary - ! && || and the comparisons) on every integer type,
scalar and vectors of 2, 3, 4, 8 and 16 elements, on edge inputs (the type's minimum and
maximum, 0, 1, -1, shift counts around the width) in every combination plus random values of
every magnitude. The reference is exact Python integer arithmetic.

Not checked, because C99 leaves it undefined: signed overflow of + - * and unary - (after the
integer promotion for scalars; vector elements are not promoted), left shifts of negative
values or past the maximum, division by zero and MIN / -1, clamp with minval > maxval, and
mul24 / mad24 outside the 24-bit inputs or with a result that does not fit the type. Scalars
compare to 1 / 0, vectors to -1 / 0; shift and rotate counts are taken modulo the width (the
promoted width for scalar shifts)."""
import ctypes
import re

import numpy as np

from . import clapi as C
from .framework import INTEGER_TYPES, Category, int_limits, wrap_int

CATEGORY = Category("integer_ops", "integer builtins and operators on every integer type, scalar and vectors")
check = CATEGORY.check

TYPES = INTEGER_TYPES
NP = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "int": np.int32,
      "uint": np.uint32, "long": np.int64, "ulong": np.uint64}
WIDTHS = [1, 2, 3, 4, 8, 16]
UNDEF = None


rng_of, wrap = int_limits, wrap_int


def unsigned(name):
    return name if name.startswith("u") else "u" + name


def signed_of(name):
    return name[1:] if name.startswith("u") else name


WIDER = {"char": "short", "uchar": "ushort", "short": "int", "ushort": "uint", "int": "long", "uint": "ulong"}


def computed_in(name, vec):
    """The type an operator computes in: scalars are promoted to int, vector elements are not."""
    return "int" if not vec and TYPES[name][0] < 32 else name


def fits(v, name):
    lo, hi = rng_of(name)
    return lo <= v <= hi


def _sat(v, name):
    lo, hi = rng_of(name)
    return min(max(v, lo), hi)


def _arith(f):
    """An operator whose signed overflow (in the computation type) is undefined."""
    def ref(T, vec, x, y, z):
        exact = f(x, y)
        ct = computed_in(T, vec)
        if TYPES[ct][1] and not fits(exact, ct):
            return UNDEF
        return wrap(exact, T)
    return ref


def _div(T, vec, x, y, z):
    q = abs(x) // abs(y)
    return wrap(q if (x < 0) == (y < 0) else -q, T)


def _rem(T, vec, x, y, z):
    r = abs(x) % abs(y)
    return wrap(-r if x < 0 else r, T)


def _count(T, vec, y):
    return y & ((TYPES[computed_in(T, vec)][0]) - 1)


def _shl(T, vec, x, y, z):
    s = _count(T, vec, y)
    ct = computed_in(T, vec)
    if TYPES[ct][1] and (x < 0 or not fits(x << s, ct)):
        return UNDEF
    return wrap(x << s, T)


def _shr(T, vec, x, y, z):
    return wrap(x >> _count(T, vec, y), T)  # arithmetic for signed types: Python's >> floors


def _cmp(f):
    def ref(T, vec, x, y, z):
        return (-1 if vec else 1) if f(x, y) else 0
    return ref


def _bits(T, x):
    return x & ((1 << TYPES[T][0]) - 1)


def _clz(T, vec, x, y, z):
    return TYPES[T][0] - _bits(T, x).bit_length()


def _ctz(T, vec, x, y, z):
    u = _bits(T, x)
    return TYPES[T][0] if u == 0 else (u & -u).bit_length() - 1


def _rotate(T, vec, x, y, z):
    bits = TYPES[T][0]
    u, s = _bits(T, x), y & (bits - 1)
    return wrap((u << s) | (u >> (bits - s)), T)


def _upsample(T, vec, x, y, z):
    bits = TYPES[T][0]
    return wrap((x << bits) | _bits(T, y), WIDER[T])


def _mul24(T, vec, x, y, z, add=False):
    lim = (-(1 << 23), (1 << 23) - 1) if TYPES[T][1] else (0, (1 << 24) - 1)
    if not (lim[0] <= x <= lim[1] and lim[0] <= y <= lim[1]):
        return UNDEF
    v = x * y + (z if add else 0)
    return v if fits(v, T) else UNDEF


def _clamp(T, vec, x, y, z):
    return UNDEF if y > z else min(max(x, y), z)


# expression: (reference(T, vec, x, y, z), result type kind). Expressions use a, b, c (inputs A, B,
# C), d (B with 0 and MIN / -1 divisors made 1) and ub (b as the unsigned type)
SAME, UNS, CMP = "same", "unsigned", "cmp"
OPS = {
    "a + b": (_arith(lambda x, y: x + y), SAME),
    "a - b": (_arith(lambda x, y: x - y), SAME),
    "a * b": (_arith(lambda x, y: x * y), SAME),
    "a / d": (_div, SAME),
    "a % d": (_rem, SAME),
    "-a": (_arith(lambda x, y: -x), SAME),
    "a & b": (lambda T, v, x, y, z: wrap(x & y, T), SAME),
    "a | b": (lambda T, v, x, y, z: wrap(x | y, T), SAME),
    "a ^ b": (lambda T, v, x, y, z: wrap(x ^ y, T), SAME),
    "~a": (lambda T, v, x, y, z: wrap(~x, T), SAME),
    "a << b": (_shl, SAME),
    "a >> b": (_shr, SAME),
    "a < b": (_cmp(lambda x, y: x < y), CMP),
    "a > b": (_cmp(lambda x, y: x > y), CMP),
    "a <= b": (_cmp(lambda x, y: x <= y), CMP),
    "a >= b": (_cmp(lambda x, y: x >= y), CMP),
    "a == b": (_cmp(lambda x, y: x == y), CMP),
    "a != b": (_cmp(lambda x, y: x != y), CMP),
    "!a": (_cmp(lambda x, y: x == 0), CMP),
    "a && b": (_cmp(lambda x, y: x != 0 and y != 0), CMP),
    "a || b": (_cmp(lambda x, y: x != 0 or y != 0), CMP),
    "abs(a)": (lambda T, v, x, y, z: abs(x), UNS),
    "abs_diff(a, b)": (lambda T, v, x, y, z: abs(x - y), UNS),
    "add_sat(a, b)": (lambda T, v, x, y, z: _sat(x + y, T), SAME),
    "sub_sat(a, b)": (lambda T, v, x, y, z: _sat(x - y, T), SAME),
    "hadd(a, b)": (lambda T, v, x, y, z: (x + y) >> 1, SAME),
    "rhadd(a, b)": (lambda T, v, x, y, z: (x + y + 1) >> 1, SAME),
    "clamp(a, b, c)": (_clamp, SAME),
    "clamp(a, b.s0, c.s0)": (_clamp, SAME),
    "clz(a)": (_clz, SAME),
    "ctz(a)": (_ctz, SAME),
    "popcount(a)": (lambda T, v, x, y, z: bin(_bits(T, x)).count("1"), SAME),
    "mad_hi(a, b, c)": (lambda T, v, x, y, z: wrap(((x * y) >> TYPES[T][0]) + z, T), SAME),
    "mad_sat(a, b, c)": (lambda T, v, x, y, z: _sat(x * y + z, T), SAME),
    "max(a, b)": (lambda T, v, x, y, z: max(x, y), SAME),
    "max(a, b.s0)": (lambda T, v, x, y, z: max(x, y), SAME),
    "min(a, b)": (lambda T, v, x, y, z: min(x, y), SAME),
    "min(a, b.s0)": (lambda T, v, x, y, z: min(x, y), SAME),
    "mul_hi(a, b)": (lambda T, v, x, y, z: (x * y) >> TYPES[T][0], SAME),
    "rotate(a, b)": (_rotate, SAME),
    "upsample(a, ub)": (_upsample, "wider"),
    "mul24(a, b)": (lambda T, v, x, y, z: _mul24(T, v, x, y, z), SAME),
    "mad24(a, b, c)": (lambda T, v, x, y, z: _mul24(T, v, x, y, z, True), SAME),
}

BROADCAST = {"clamp(a, b.s0, c.s0)", "max(a, b.s0)", "min(a, b.s0)"}   # vectors only

# check name: (operations, types, input kind)
GROUPS = {
    "arithmetic_operators": (["a + b", "a - b", "a * b", "a / d", "a % d", "-a"], None, "any"),
    "bitwise_operators": (["a & b", "a | b", "a ^ b", "~a"], None, "any"),
    "shift_operators": (["a << b", "a >> b"], None, "shift"),
    "comparison_operators": (["a < b", "a > b", "a <= b", "a >= b", "a == b", "a != b"], None, "any"),
    "logical_operators": (["!a", "a && b", "a || b"], None, "any"),
    "abs": (["abs(a)"], None, "any"),
    "abs_diff": (["abs_diff(a, b)"], None, "any"),
    "add_sat": (["add_sat(a, b)"], None, "any"),
    "sub_sat": (["sub_sat(a, b)"], None, "any"),
    "hadd": (["hadd(a, b)"], None, "any"),
    "rhadd": (["rhadd(a, b)"], None, "any"),
    "clamp": (["clamp(a, b, c)", "clamp(a, b.s0, c.s0)"], None, "ordered"),
    "clz": (["clz(a)"], None, "any"),
    "ctz": (["ctz(a)"], None, "any"),
    "popcount": (["popcount(a)"], None, "any"),
    "mad_hi": (["mad_hi(a, b, c)"], None, "any"),
    "mad_sat": (["mad_sat(a, b, c)"], None, "any"),
    "max": (["max(a, b)", "max(a, b.s0)"], None, "any"),
    "min": (["min(a, b)", "min(a, b.s0)"], None, "any"),
    "mul_hi": (["mul_hi(a, b)"], None, "any"),
    "rotate": (["rotate(a, b)"], None, "shift"),
    "upsample": (["upsample(a, ub)"], list(WIDER), "any"),
    "mul24": (["mul24(a, b)"], ["int", "uint"], "24bit"),
    "mad24": (["mad24(a, b, c)"], ["int", "uint"], "24bit"),
}


def result_type(op, T, vec):
    kind = OPS[op][1]
    if kind == UNS:
        return unsigned(T)
    if kind == CMP:
        return signed_of(T) if vec else "int"
    if kind == "wider":
        return WIDER[T]
    return T


def reference(op, T, vec, x, y, z):
    """The value of op on elements x, y, z (Python ints) of type T in a vector (vec) or a
    scalar, or None where the result is undefined."""
    return OPS[op][0](T, vec, x, y, z)


def divisor(T, x, y):
    lo = rng_of(T)[0]
    return 1 if y == 0 or (TYPES[T][1] and x == lo and y == -1) else y


def expression(op, T, vec, w):
    """OpenCL C text of op for type T (width w)."""
    ub = f"as_{unsigned(T)}{w if vec else ''}(b)" if TYPES[T][1] else "b"
    return re.sub(r"\bub\b", ub, op)


# --- inputs -------------------------------------------------------------------------------------------

def edges(T):
    bits, signed = TYPES[T]
    lo, hi = rng_of(T)
    v = [0, 1, hi, lo, 2, hi - 1, lo + 1, bits - 1, bits, bits + 1, 1 << (bits // 2), 3]
    if signed:
        v += [-1, -2, -bits, -(1 << (bits // 2))]
    out = []
    for x in v:
        if fits(x, T) and x not in out:
            out.append(x)
    return out


def random_values(rng, T, n):
    bits, signed = TYPES[T]
    lo, hi = rng_of(T)
    full = [int(x) for x in rng.integers(lo, hi, n // 2, dtype=NP[T], endpoint=True)]
    out = []
    for _ in range(n - n // 2):  # every magnitude
        ln = int(rng.integers(0, bits + 1))
        v = int(rng.integers(0, 1 << 62)) | (int(rng.integers(0, 4)) << 62)
        v &= (1 << ln) - 1
        if signed and rng.integers(0, 2):
            v = -v
        out.append(_sat(v, T))
    return full + out


def inputs(rng, T, n_random, kind, multiple=48):
    """Three columns (lists of Python ints) of equal length, a multiple of `multiple`."""
    e = edges(T)
    if kind == "24bit":
        lim = (-(1 << 23), (1 << 23) - 1) if TYPES[T][1] else (0, (1 << 24) - 1)
        e = [x for x in e + [lim[0], lim[1], lim[0] + 1, lim[1] - 1, 1 << 16] if lim[0] <= x <= lim[1]]
    a = [x for x in e for _ in e]
    b = [y for _ in e for y in e]
    ra, rb, rc = (random_values(rng, T, n_random) for _ in range(3))
    if kind == "shift":
        rb = [int(v) for v in rng.integers(-2, 2 * TYPES[T][0] + 2, n_random)]
        rb = [_sat(v, T) for v in rb]
    a, b = a + ra, b + rb
    c = [e[(i * 5) % len(e)] for i in range(len(e) * len(e))] + rc
    if kind == "24bit":
        lo, hi = (-(1 << 23), (1 << 23) - 1) if TYPES[T][1] else (0, (1 << 24) - 1)
        a = [min(max(x >> (TYPES[T][0] - 24 + (i % 12)), lo), hi) if not lo <= x <= hi else x
             for i, x in enumerate(a)]
        b = [min(max(x >> (TYPES[T][0] - 24 + (i % 9)), lo), hi) if not lo <= x <= hi else x
             for i, x in enumerate(b)]
    if kind == "ordered":
        b, c = [min(x, y) for x, y in zip(b, c)], [max(x, y) for x, y in zip(b, c)]
    m = -(-len(a) // multiple) * multiple
    return [(col * (m // len(col) + 1))[:m] for col in (a, b, c)]


# --- kernels ------------------------------------------------------------------------------------------

def widths(env, group, T):
    """Every width; --quick: scalars and one vector width per type (all widths across types)."""
    if not env.quick:
        return WIDTHS
    return [1, WIDTHS[1 + (list(TYPES).index(T) + list(GROUPS).index(group)) % (len(WIDTHS) - 1)]]


def kernel_source(ops, types, widths_of=lambda T: WIDTHS):
    out = []
    for T in types:
        for w in widths_of(T):
            vec = w > 1
            mine = [op for op in ops if vec or op not in BROADCAST]
            outs = "".join(f", __global {result_type(op, T, vec)} *o{j}" for j, op in enumerate(mine))
            if vec:
                head = f"    {T}{w} " + ", ".join(f"{v} = vload{w}(i, {v.upper()})" for v in "abcd") + ";\n"
                body = "".join(f"    vstore{w}({expression(op, T, vec, w)}, i, o{j});\n" for j, op in enumerate(mine))
            else:
                head = "    " + f"{T} " + ", ".join(f"{v} = {v.upper()}[i]" for v in "abcd") + ";\n"
                body = "".join(f"    o{j}[i] = ({result_type(op, T, vec)})({expression(op, T, vec, w)});\n"
                               for j, op in enumerate(mine))
            out.append(f"__kernel void k_{T}_{w}(__global const {T} *A, __global const {T} *B, "
                       f"__global const {T} *C, __global const {T} *D{outs})\n"
                       f"{{\n    size_t i = get_global_id(0);\n{head}{body}}}\n")
    return "".join(out)


def judge(t, op, T, w, a, b, c, got, report):
    """Compare got (the results of op on the columns a, b, c, for width w) with the reference."""
    vec = w > 1
    rt = result_type(op, T, vec)
    d = [divisor(T, x, y) for x, y in zip(a, b)]
    used = operands(op)
    bad = 0
    for i in range(len(a)):
        x, y, z = a[i], (d[i] if "d" in used else b[i]), c[i]
        if op in BROADCAST:
            y, z = b[i - i % w], c[i - i % w]
        want = reference(op, T, vec, x, y, z)
        if want is UNDEF:
            continue
        want = wrap(want, rt)
        g = int(got[i])
        if g != want:
            bad += 1
            args = ", ".join(f"{v}={val}" for v, val in (("a", x), ("b", y), ("c", z))
                             if v in used or (v == "b" and used & {"d", "ub"}))
            what = f"{op} on {T}{w if vec else ''}"
            report(what, f"{what} with {args}{f' [element {i % w}]' if vec else ''}: "
                         f"expected {want}, got {g}")
    return bad


def operands(op):
    return set(re.findall(r"\b(?:ub|[abcd])\b", op))


class Report:
    def __init__(self, t):
        self.t, self.counts, self.examples = t, {}, {}

    def __call__(self, key, message):
        self.counts[key] = self.counts.get(key, 0) + 1
        if self.counts[key] <= 2:
            self.examples.setdefault(key, []).append(message)

    def close(self, total):
        if not self.counts:
            return
        listed = ", ".join(f"{k}: {c}" for k, c in list(self.counts.items())[:10])
        self.t.true(False, f"{sum(self.counts.values())} wrong of {total} results ({listed}"
                           f"{', ...' if len(self.counts) > 10 else ''})")
        for rank in (0, 1):
            for msgs in self.examples.values():
                if rank < len(msgs):
                    self.t.true(False, msgs[rank])


def run_group(env, t, group):
    ops, types, kind = GROUPS[group]
    types = types or list(TYPES)
    src = kernel_source(ops, types, lambda T: widths(env, group, T))
    prog, code = env.program(t, src, expect_ok=False)
    if code != C.CL_SUCCESS and group == "ctz":
        # ctz is OpenCL C 2.0: try the newer language versions the compiler may accept
        log = env.build_log(prog).strip()
        for std in ("-cl-std=CL3.0", "-cl-std=CL2.0"):
            prog, code = env.program(t, src, std, expect_ok=False)
            if code == C.CL_SUCCESS:
                break
        else:
            t.skip(f"ctz (OpenCL C 2.0) does not build with the default, CL2.0 or CL3.0 -cl-std: "
                   f"{log[:200]}")
    if code != C.CL_SUCCESS:
        log = env.build_log(prog).strip()
        t.fail(f"clBuildProgram gave {C.err_name(code)}; build log:\n{log[:1500]}")
    report = Report(t)
    total = 0
    n_random = env.samples(24, 480)
    for ti, T in enumerate(types):
        rng = env.rng(7000 + 31 * sorted(GROUPS).index(group) + ti)
        a, b, c = inputs(rng, T, n_random, kind)
        d = [divisor(T, x, y) for x, y in zip(a, b)]
        n = len(a)
        bufs = []
        for col in (a, b, c, d):
            arr = np.array(col, dtype=NP[T])
            host = ctypes.create_string_buffer(arr.tobytes(), arr.nbytes)
            bufs.append(env.buffer(t, arr.nbytes, C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, host))
        for w in widths(env, group, T):
            vec = w > 1
            mine = [op for op in ops if vec or op not in BROADCAST]
            k = env.kernel(t, prog, f"k_{T}_{w}")
            outs = []
            for op in mine:
                dt = np.dtype(NP[result_type(op, T, vec)])
                outs.append((env.buffer(t, n * dt.itemsize), dt))
            env.set_args(t, k, *[("mem", x) for x in bufs], *[("mem", o) for o, _ in outs])
            env.enqueue(t, k, (n // w,))
            for op, (o, dt) in zip(mine, outs):
                got = np.frombuffer(env.read(t, o, n * dt.itemsize), dtype=dt)
                judge(t, op, T, w, a, b, c, got, report)
                total += n
    report.close(total)
    t.note(f"{total} results")


def _make(group):
    def fn(env, t):
        run_group(env, t, group)
    ops, types, _ = GROUPS[group]
    fn.__doc__ = f"{', '.join(ops)} on {', '.join(types or TYPES)}, scalar and vectors of 2-16"
    return fn


for _group in GROUPS:
    CATEGORY.check(_make(_group), name=_group)
