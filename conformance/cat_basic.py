"""basic: kernels doing arithmetic on every scalar type, vectors and swizzles, structs passed by
value, work-item functions in 1-3 dimensions with offsets, uneven sizes, local memory with
barriers, constant memory, conversions, control flow and atomics. Results are compared with a
host reference element by element; a mismatch names the input."""
import ctypes

import numpy as np

from . import clapi as C
from .framework import Category

CATEGORY = Category("basic", "kernels: arithmetic per type, vectors, structs, work-item ids, local memory")
check = CATEGORY.check

INT_TYPES = [("char", np.int8), ("uchar", np.uint8), ("short", np.int16), ("ushort", np.uint16),
             ("int", np.int32), ("uint", np.uint32), ("long", np.int64), ("ulong", np.uint64)]
INT_OPERATORS = ["a + b", "a - b", "a * b", "a / b", "a % b", "a & b", "a | b", "a ^ b", "a << b",
                 "a >> b", "~a", "-a", "a < b", "a == b", "a >= b"]
INT_BUILTINS = ["max(a, b)", "min(a, b)", "abs_diff(a, b)", "rotate(a, b)", "clz(a)", "popcount(a)",
                "mul_hi(a, b)", "add_sat(a, b)", "hadd(a, b)"]


def _wrap(v, dt):
    info = np.iinfo(dt)
    bits = info.bits
    v &= (1 << bits) - 1
    if info.min < 0 and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def int_reference(op, a, b, dt):
    """The OpenCL C value of `op` on integers a, b of type dt (Python ints in, Python int out)."""
    info = np.iinfo(dt)
    bits, signed = info.bits, info.min < 0
    mask = max(bits, 32) - 1   # shift counts use log2 of the width after integer promotion
    ua = a & ((1 << bits) - 1)
    if op == "a + b":
        return _wrap(a + b, dt)
    if op == "a - b":
        return _wrap(a - b, dt)
    if op == "a * b":
        return _wrap(a * b, dt)
    if op == "a / b":
        q = abs(a) // abs(b)
        return _wrap(q if (a < 0) == (b < 0) else -q, dt)
    if op == "a % b":
        r = abs(a) % abs(b)
        return _wrap(-r if a < 0 else r, dt)
    if op == "a & b":
        return _wrap(a & b, dt)
    if op == "a | b":
        return _wrap(a | b, dt)
    if op == "a ^ b":
        return _wrap(a ^ b, dt)
    if op == "a << b":
        return _wrap(a << (b & mask), dt)
    if op == "a >> b":
        return _wrap(a >> (b & mask), dt)  # arithmetic for signed (Python >> floors)
    if op == "~a":
        return _wrap(~a, dt)
    if op == "-a":
        return _wrap(-a, dt)
    if op == "a < b":
        return int(a < b)
    if op == "a == b":
        return int(a == b)
    if op == "a >= b":
        return int(a >= b)
    if op == "max(a, b)":
        return max(a, b)
    if op == "min(a, b)":
        return min(a, b)
    if op == "abs_diff(a, b)":
        return abs(a - b)  # of the unsigned type: fits
    if op == "rotate(a, b)":
        s = b & (bits - 1)  # rotate counts modulo the element width, no promotion
        return _wrap(((ua << s) | (ua >> (bits - s))) if s else ua, dt)
    if op == "clz(a)":
        return bits - ua.bit_length()
    if op == "popcount(a)":
        return bin(ua).count("1")
    if op == "mul_hi(a, b)":
        return _wrap((a * b) >> bits, dt)
    if op == "add_sat(a, b)":
        return min(max(a + b, info.min), info.max)
    if op == "hadd(a, b)":
        return (a + b) >> 1
    raise KeyError(op)


def int_result_type(name, op):
    """OpenCL C result type of op on two `name`s (comparisons are int; abs_diff unsigned)."""
    if op in ("a < b", "a == b", "a >= b"):
        return "int", np.int32
    if op == "abs_diff(a, b)":
        u = name if name.startswith("u") else "u" + name
        return u, dict(INT_TYPES)[u]
    if op in ("a + b", "a - b", "a * b", "a / b", "a % b", "a & b", "a | b", "a ^ b", "~a", "-a",
              "a << b", "a >> b") and name in ("char", "uchar", "short", "ushort"):
        return name, dict(INT_TYPES)[name]  # promoted to int, converted back by the store
    return name, dict(INT_TYPES)[name]


def int_inputs(rng, dt, n):
    info = np.iinfo(dt)
    bits = info.bits
    signed = info.min < 0
    special = [0, 1, info.max, info.min, 2, 3, 7, bits - 1, bits, bits + 1]
    if signed:
        special += [-1, -2, info.min + 1]
    a = [int(x) for x in rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)]
    b = [int(x) for x in rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)]
    for i, s in enumerate(special):
        a[i % n], b[(i * 7 + 3) % n] = s, special[(i + 3) % len(special)]
    return a, b


def int_case_ok(op, a, b, dt):
    """Inputs for which op is defined in OpenCL C (no division by 0, no signed overflow)."""
    info = np.iinfo(dt)
    signed, bits = info.min < 0, info.bits
    if op in ("a / b", "a % b"):
        return b != 0 and not (signed and a == info.min and b == -1)
    if signed and bits >= 32:  # int and long arithmetic overflow is undefined
        if op == "a + b":
            return info.min <= a + b <= info.max
        if op == "a - b":
            return info.min <= a - b <= info.max
        if op == "a * b":
            return info.min <= a * b <= info.max
        if op == "-a":
            return a != info.min
        if op == "a << b":
            return a >= 0 and (a << (b & (bits - 1))) <= info.max
    if bits < 32:  # promoted to int: the int result must not overflow
        exact = {"a + b": a + b, "a - b": a - b, "a * b": a * b,
                 "a << b": a << (b & 31) if a >= 0 else -1}.get(op, 0)
        return -2 ** 31 <= exact < 2 ** 31
    return True


def compare_ints(t, name, op, a, b, got, dt):
    bad = []
    for i, (x, y, g) in enumerate(zip(a, b, got)):
        if not int_case_ok(op, x, y, dt):
            continue
        want = int_reference(op, x, y, dt)
        rt = int_result_type(name, op)[1]
        want = _wrap(want, rt)
        if int(g) != want:
            bad.append(f"{name} {op} with a={x}, b={y}: expected {want}, got {int(g)}")
    for m in bad[:3]:
        t.true(False, m)
    if len(bad) > 3:
        t.true(False, f"{name} {op}: {len(bad) - 3} more wrong results")
    return not bad


@check
def integer_operators(env, t):
    """operators on char, uchar, short, ushort, int, uint, long, ulong"""
    integer_ops(env, t, INT_OPERATORS)


@check
def integer_builtins(env, t):
    """max, min, abs_diff, rotate, clz, popcount, mul_hi, add_sat, hadd on every integer type"""
    integer_ops(env, t, INT_BUILTINS)


def integer_ops(env, t, INT_OPS):
    n = env.samples(32, 256)
    lines = []
    for name, dt in INT_TYPES:
        body = "\n".join(f"    o{j}[i] = ({int_result_type(name, op)[0]})({op});" for j, op in enumerate(INT_OPS))
        outs = ", ".join(f"__global {int_result_type(name, op)[0]} *o{j}" for j, op in enumerate(INT_OPS))
        lines.append(f"__kernel void k_{name}(__global const {name} *A, __global const {name} *B, {outs})\n"
                     f"{{\n    size_t i = get_global_id(0);\n    {name} a = A[i], b = B[i];\n{body}\n}}\n")
    prog = env.program(t, "\n".join(lines))
    for salt, (name, dt) in enumerate(INT_TYPES):
        rng = env.rng(100 + salt)
        a, b = int_inputs(rng, dt, n)
        # keep / and % defined everywhere so that one kernel run covers all ops
        b_safe = [y if y != 0 else 1 for y in b]
        k = env.kernel(t, prog, f"k_{name}")
        ba = env.buffer(t, n * dt().itemsize)
        bb = env.buffer(t, n * dt().itemsize)
        env.write(t, ba, np.array(a, dtype=dt).tobytes())
        env.write(t, bb, np.array(b_safe, dtype=dt).tobytes())
        outs = []
        for op in INT_OPS:
            rt = int_result_type(name, op)[1]
            outs.append((env.buffer(t, n * np.dtype(rt).itemsize), rt))
        env.set_args(t, k, ("mem", ba), ("mem", bb), *[("mem", o) for o, _ in outs])
        env.enqueue(t, k, (n,))
        for op, (o, rt) in zip(INT_OPS, outs):
            got = np.frombuffer(env.read(t, o, n * np.dtype(rt).itemsize), dtype=rt)
            compare_ints(t, name, op, a, b_safe, got, dt)


FLOAT_OPS = [("a + b", 0), ("a - b", 0), ("a * b", 0), ("a / b", 2.5), ("-a", 0), ("fabs(a)", 0),
             ("fmin(a, b)", 0), ("fmax(a, b)", 0), ("mad(a, b, a)", None)]


def float_op_reference(op, a, b):
    a64, b64 = np.float64(a), np.float64(b)
    with np.errstate(all="ignore"):
        return {"a + b": a64 + b64, "a - b": a64 - b64, "a * b": a64 * b64, "a / b": a64 / b64,
                "-a": -a64, "fabs(a)": abs(a64), "fmin(a, b)": min(a64, b64), "fmax(a, b)": max(a64, b64),
                "mad(a, b, a)": a64 * b64 + a64}[op]


def float_ulps(got, exact):
    """|got - exact| in ulps of float32 at exact (exact: float64 or better)."""
    got, exact = float(got), float(exact)
    if np.isnan(exact):
        return 0.0 if np.isnan(got) else float("inf")
    if np.isinf(got) and not np.isinf(exact):
        with np.errstate(over="ignore"):
            return 0.0 if np.float32(exact) == got else float("inf")  # rounds to infinity
    if np.isinf(exact) or np.isinf(got):
        return 0.0 if got == exact else float("inf")
    if exact == 0:
        e = -149
    else:
        e = max(int(np.floor(np.log2(abs(exact)))) - 23, -149)
    return abs(got - exact) / 2.0 ** e


@check
def float_arithmetic(env, t):
    """float + - * exact, / within 2.5 ulp, fabs/fmin/fmax, mad"""
    n = env.samples(64, 512)
    rng = env.rng(200)
    a = (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, n)).astype(np.float32)
    b = (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, n)).astype(np.float32)
    a[:6] = [0.0, -0.0, 1.0, 3.0, 1e30, -2.5]
    b[:6] = [1.0, 2.0, 3.0, 7.0, 1e-30, 0.5]
    body = "\n".join(f"    o[{j} * n + i] = {op};" for j, (op, _) in enumerate(FLOAT_OPS))
    src = (f"__kernel void k(__global const float *A, __global const float *B, __global float *o, uint n)\n"
           f"{{\n    size_t i = get_global_id(0);\n    float a = A[i], b = B[i];\n{body}\n}}\n")
    out = env.run_kernel(t, src, "k", [a.tobytes(), b.tobytes()], 4 * n * len(FLOAT_OPS), (n,),
                         extra_args=(np.uint32(n),))
    got = np.frombuffer(out, dtype=np.float32).reshape(len(FLOAT_OPS), n)
    denorm = env.device_info(C.CL_DEVICE_SINGLE_FP_CONFIG, "ulong") & C.CL_FP_DENORM
    for j, (op, bound) in enumerate(FLOAT_OPS):
        bad = 0
        for i in range(n):
            exact = float_op_reference(op, a[i], b[i])
            g = got[j, i]
            if bound is None:  # mad: either fused or separately rounded
                sep = np.float32(np.float32(a[i] * b[i]) + a[i])
                if g == np.float32(exact) or g == sep or float_ulps(g, exact) <= 1:
                    continue
            elif float_ulps(g, exact) <= max(bound, 0.5) or (not denorm and abs(exact) < 2 ** -126 and g == 0):
                continue
            bad += 1
            if bad <= 3:
                with np.errstate(over="ignore"):
                    rounded = float(np.float32(exact))
                t.true(False, f"{op} with a={float(a[i])!r}, b={float(b[i])!r}: got {float(g)!r}, correctly "
                              f"rounded {rounded!r} ({float_ulps(g, exact):.1f} ulp, "
                              f"allowed {bound if bound is not None else 'mad'})")
        if bad > 3:
            t.true(False, f"{op}: {bad - 3} more wrong results")


@check
def vectors(env, t):
    """float4/int4 arithmetic, swizzles, .lo/.hi, vector comparisons (-1/0), vload/vstore"""
    n = 16
    rng = env.rng(300)
    a = rng.standard_normal(4 * n).astype(np.float32)
    b = rng.standard_normal(4 * n).astype(np.float32)
    src = r"""
__kernel void k(__global const float4 *a, __global const float4 *b, __global float4 *o)
{
    size_t i = get_global_id(0);
    float4 x = a[i], y = b[i];
    o[4 * i] = x + y * 2.0f;
    o[4 * i + 1] = x.wzyx * y;
    o[4 * i + 2] = (float4)(x.lo, y.hi);
    o[4 * i + 3] = convert_float4(x < y) + (float4)(x.s3, 1.0f, x.odd);
}
__kernel void v(__global const float *a, __global float *o, __global int *c)
{
    size_t i = get_global_id(0);
    float3 t = vload3(i, a);
    vstore3(t.zxy, i, o);
    int8 w = (int8)((int)i, 1, 2, 3, 4, 5, 6, 7);
    int8 z = w * (int8)(2) - (int8)(1);
    c[i] = z.s0 + z.s7 + (int)(all(w >= (int8)(0))) + 10 * (int)(any(w > (int8)(6)));
}
"""
    out = env.run_kernel(t, src, "k", [a.tobytes(), b.tobytes()], 16 * 4 * n, (n,))
    got = np.frombuffer(out, dtype=np.float32).reshape(n, 4, 4)
    X, Y = a.reshape(n, 4), b.reshape(n, 4)
    for i in range(n):
        x, y = X[i], Y[i]
        lt = np.where(x < y, -1.0, 0.0).astype(np.float32)
        want = [x + y * np.float32(2), x[::-1] * y, np.concatenate([x[:2], y[2:]]),
                lt + np.array([x[3], 1.0, x[1], x[3]], dtype=np.float32)]
        for j, w in enumerate(want):
            if not np.allclose(got[i, j], w, rtol=1e-6, atol=0):
                t.true(False, f"vector expression {j} for x={x.tolist()}, y={y.tolist()}: expected "
                              f"{np.asarray(w).tolist()}, got {got[i, j].tolist()}")
    prog = env.program(t, src)
    k = env.kernel(t, prog, "v")
    m = 8
    data = rng.standard_normal(3 * m).astype(np.float32)
    ha = ctypes.create_string_buffer(data.tobytes(), data.nbytes)
    ba = env.buffer(t, data.nbytes, C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, ha)
    bo, bc = env.buffer(t, data.nbytes), env.buffer(t, 4 * m)
    env.set_args(t, k, ("mem", ba), ("mem", bo), ("mem", bc))
    env.enqueue(t, k, (m,))
    o = np.frombuffer(env.read(t, bo, data.nbytes), dtype=np.float32).reshape(m, 3)
    want = data.reshape(m, 3)[:, [2, 0, 1]]
    t.true(np.array_equal(o, want), f"vload3/vstore3 of .zxy: expected {want.tolist()}, got {o.tolist()}")
    c = np.frombuffer(env.read(t, bc, 4 * m), dtype=np.int32)
    wantc = [(2 * i - 1) + 13 + 1 + 10 * int(i > 6 or True) for i in range(m)]
    t.eq(c.tolist(), wantc, "int8 arithmetic, all() and any()")


class S(ctypes.Structure):
    _fields_ = [("a", ctypes.c_int32), ("b", ctypes.c_float), ("c", ctypes.c_int8),
                ("d", ctypes.c_int64), ("e", ctypes.c_float * 4)]


@check
def struct_arguments(env, t):
    """a struct passed by value and an array of structs in global memory"""
    src = r"""
typedef struct { int a; float b; char c; long d; float4 e; } S;
__kernel void k(S s, __global const S *arr, __global long *out)
{
    size_t i = get_global_id(0);
    out[8 * i + 0] = s.a;
    out[8 * i + 1] = (long)(s.b * 4.0f);
    out[8 * i + 2] = s.c;
    out[8 * i + 3] = s.d;
    out[8 * i + 4] = (long)(s.e.w);
    out[8 * i + 5] = arr[i].a + arr[i].c;
    out[8 * i + 6] = arr[i].d;
    out[8 * i + 7] = (long)(arr[i].e.y * 2.0f);
}
"""
    s = S(-7, 2.25, -3, 1 << 40, (ctypes.c_float * 4)(0, 1, 2, 9))
    # the OpenCL C layout of S: float4 is 16-aligned, so the struct is 48 bytes
    class SCL(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int32), ("b", ctypes.c_float), ("c", ctypes.c_int8),
                    ("_p", ctypes.c_int8 * 7), ("d", ctypes.c_int64), ("_q", ctypes.c_int8 * 8),
                    ("e", ctypes.c_float * 4)]
    v = SCL(s.a, s.b, s.c, (ctypes.c_int8 * 7)(), s.d, (ctypes.c_int8 * 8)(), s.e)
    arr = (SCL * 3)(*[SCL(10 * i, 0.0, i, (ctypes.c_int8 * 7)(), -i * 1000, (ctypes.c_int8 * 8)(),
                          (ctypes.c_float * 4)(0, i + 0.5, 0, 0)) for i in range(3)])
    t.require(ctypes.sizeof(SCL) == 48, f"host copy of S is {ctypes.sizeof(SCL)} bytes, not 48")
    prog = env.program(t, src)
    k = env.kernel(t, prog, "k")
    harr = ctypes.create_string_buffer(bytes(arr), ctypes.sizeof(arr))
    barr = env.buffer(t, ctypes.sizeof(arr), C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, harr)
    out = env.buffer(t, 8 * 8 * 3)
    env.set_args(t, k, v, ("mem", barr), ("mem", out))
    env.enqueue(t, k, (3,))
    got = np.frombuffer(env.read(t, out, 8 * 8 * 3), dtype=np.int64).reshape(3, 8).tolist()
    for i in range(3):
        want = [-7, 9, -3, 1 << 40, 9, 10 * i + i, -i * 1000, int((i + 0.5) * 2)]
        t.eq(got[i], want, f"fields read by work-item {i} (struct by value, then arr[{i}])")


WORK_ITEM_SRC = r"""
__kernel void ids(__global uint *out)
{
    uint d = get_work_dim();
    size_t lin = 0, stride = 1;
    for (uint k = 0; k < d; k++) {
        lin += (get_global_id(k) - get_global_offset(k)) * stride;
        stride *= get_global_size(k);
    }
    __global uint *r = out + lin * 19;
    r[0] = d;
    for (uint k = 0; k < 3; k++) {
        r[1 + k] = get_global_id(k);
        r[4 + k] = get_local_id(k);
        r[7 + k] = get_group_id(k);
        r[10 + k] = get_global_size(k);
        r[13 + k] = get_local_size(k);
        r[16 + k] = get_num_groups(k) * 1000 + get_global_offset(k);
    }
}
"""


def work_item_expectations(gsize, lsize, offset):
    """{linear index: 19 expected values} of the ids kernel (uniform work-groups)."""
    d = len(gsize)
    g = list(gsize) + [1] * (3 - d)
    loc = list(lsize) + [1] * (3 - d)
    off = list(offset) + [0] * (3 - d)
    out = {}
    for z in range(g[2]):
        for y in range(g[1]):
            for x in range(g[0]):
                idx = (x, y, z)
                lin = x + y * g[0] + z * g[0] * g[1]
                rec = [d]
                rec += [idx[k] + off[k] for k in range(3)]
                rec += [idx[k] % loc[k] for k in range(3)]
                rec += [idx[k] // loc[k] for k in range(3)]
                rec += g
                rec += loc
                rec += [(g[k] // loc[k]) * 1000 + off[k] for k in range(3)]
                out[lin] = rec
    return out


FIELD_NAMES = (["work_dim"] + [f"global_id({k})" for k in range(3)] + [f"local_id({k})" for k in range(3)] +
               [f"group_id({k})" for k in range(3)] + [f"global_size({k})" for k in range(3)] +
               [f"local_size({k})" for k in range(3)] + [f"num_groups({k})*1000+global_offset({k})" for k in range(3)])


def work_item_problems(got, expected, what):
    out = []
    for lin, rec in expected.items():
        g = got[lin]
        for f, (a, b) in enumerate(zip(g, rec)):
            if a != b:
                out.append(f"{what}: work-item {rec[1:4]}: {FIELD_NAMES[f]} = {a}, expected {b}")
                break
        if len(out) >= 3:
            break
    return out


@check
def work_item_functions(env, t):
    """get_global_id/local_id/group_id/sizes/offsets in 1, 2 and 3 dimensions with offsets"""
    prog = env.program(t, WORK_ITEM_SRC)
    k = env.kernel(t, prog, "ids")
    for gsize, lsize, offset in [((64,), (16,), (5,)), ((12, 6), (4, 3), (1, 2)),
                                 ((4, 6, 8), (2, 3, 2), (3, 0, 7)), ((7,), (7,), (0,)),
                                 ((1, 1, 1), (1, 1, 1), (100, 200, 300))]:
        total = int(np.prod(gsize))
        out = env.buffer(t, total * 19 * 4)
        env.set_args(t, k, ("mem", out))
        env.enqueue(t, k, gsize, lsize, offset)
        got = np.frombuffer(env.read(t, out, total * 19 * 4), dtype=np.uint32).reshape(total, 19).tolist()
        for m in work_item_problems(got, work_item_expectations(gsize, lsize, offset),
                                    f"global={gsize} local={lsize} offset={offset}"):
            t.true(False, m)


@check
def uneven_sizes(env, t):
    """prime global sizes with local=NULL; non-uniform work-groups where the device supports them"""
    src = r"""
__kernel void count(__global uint *out)
{
    size_t i = get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
    out[i] += 1;
}
__kernel void sizes(__global uint *out)
{
    size_t i = get_global_id(0);
    out[2 * i] = get_local_size(0);
    out[2 * i + 1] = get_enqueued_local_size(0);
}
"""
    from .cat_computeinfo import parse_version
    cver = parse_version(env.device_info(C.CL_DEVICE_OPENCL_C_VERSION), "OpenCL C") or (1, 0)
    nonuniform = False
    if env.version >= (2, 0) and cver >= (2, 0):  # OpenCL C 1.x programs need uniform groups
        try:
            nonuniform = bool(env.device_info(C.CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, "uint"))
        except C.CLError:
            nonuniform = env.version < (3, 0)
    opts = f"-cl-std=CL{cver[0]}.{cver[1]}" if nonuniform else ""
    prog = env.program(t, src if nonuniform else src.split("__kernel void sizes")[0], opts)
    k = env.kernel(t, prog, "count")
    for g in [(37,), (11, 13), (3, 5, 7), (1009,)]:
        n = int(np.prod(g))
        out = env.buffer(t, 4 * n)
        env.write(t, out, b"\0" * (4 * n))
        env.set_args(t, k, ("mem", out))
        env.enqueue(t, k, g)
        got = np.frombuffer(env.read(t, out, 4 * n), dtype=np.uint32)
        wrong = np.nonzero(got != 1)[0]
        t.true(len(wrong) == 0, f"global={g}, local=NULL: {len(wrong)} work-items did not run exactly once "
                                f"(first linear index {wrong[:1].tolist()}, count {got[wrong[:1]].tolist()})")
    if not nonuniform:
        t.note("non-uniform work-groups not supported (or OpenCL C < 2.0): only local=NULL checked")
        return
    k2 = env.kernel(t, prog, "sizes")
    out = env.buffer(t, 2 * 4 * 37)
    env.set_args(t, k2, ("mem", out))
    env.enqueue(t, k2, (37,), (8,))
    got = np.frombuffer(env.read(t, out, 2 * 4 * 37), dtype=np.uint32).reshape(37, 2).tolist()
    want = [[8 if i < 32 else 5, 8] for i in range(37)]
    t.eq(got, want, "[get_local_size(0), get_enqueued_local_size(0)] per work-item, global 37, local 8")


@check
def local_memory(env, t):
    """a work-group reduction in __local memory with barriers; a __local kernel argument"""
    src = r"""
__kernel void reduce(__global const int *in, __global int *out, __local int *scratch)
{
    __local int fixed[64];
    size_t l = get_local_id(0), n = get_local_size(0);
    scratch[l] = in[get_global_id(0)];
    fixed[l] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = n / 2; s > 0; s /= 2) {
        if (l < s) { scratch[l] += scratch[l + s]; fixed[l] += fixed[l + s]; }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) { out[2 * get_group_id(0)] = scratch[0]; out[2 * get_group_id(0) + 1] = fixed[0]; }
}
"""
    rng = env.rng(400)
    groups, lsize = 8, 64
    data = rng.integers(-1000, 1000, groups * lsize, dtype=np.int32)
    prog = env.program(t, src)
    k = env.kernel(t, prog, "reduce")
    h = ctypes.create_string_buffer(data.tobytes(), data.nbytes)
    bi = env.buffer(t, data.nbytes, C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, h)
    bo = env.buffer(t, 8 * groups)
    env.set_args(t, k, ("mem", bi), ("mem", bo), ("local", 4 * lsize))
    env.enqueue(t, k, (groups * lsize,), (lsize,))
    got = np.frombuffer(env.read(t, bo, 8 * groups), dtype=np.int32).reshape(groups, 2)
    want = data.reshape(groups, lsize).sum(axis=1)
    t.eq(got[:, 0].tolist(), want.tolist(), "per-group sums through a __local argument")
    t.eq(got[:, 1].tolist(), [lsize] * groups, "per-group sums of a __local array declared in the kernel")


@check
def constant_memory(env, t):
    """program-scope __constant data and __constant kernel arguments"""
    src = r"""
__constant int table[8] = {1, 2, 3, 5, 8, 13, 21, 34};
__kernel void k(__constant float *c, __global float *out)
{
    size_t i = get_global_id(0);
    out[i] = c[i] * (float)table[i % 8];
}
"""
    c = np.arange(16, dtype=np.float32) + 0.5
    out = env.run_kernel(t, src, "k", [c.tobytes()], 4 * 16, (16,))
    got = np.frombuffer(out, dtype=np.float32)
    fib = np.array([1, 2, 3, 5, 8, 13, 21, 34] * 2, dtype=np.float32)
    t.eq(got.tolist(), (c * fib).tolist(), "c[i] * table[i % 8]")


@check
def conversions(env, t):
    """explicit casts, convert_*_sat and rounding-mode conversions"""
    src = r"""
__kernel void k(__global const float *f, __global const int *i, __global int *o)
{
    size_t g = get_global_id(0);
    o[8 * g + 0] = (int)f[g];
    o[8 * g + 1] = convert_int_sat(f[g]);
    o[8 * g + 2] = convert_int_rte(f[g]);
    o[8 * g + 3] = convert_int_rtn(f[g]);
    o[8 * g + 4] = convert_int_rtp(f[g]);
    o[8 * g + 5] = convert_uchar_sat(i[g]);
    o[8 * g + 6] = convert_char_sat(i[g]);
    o[8 * g + 7] = (int)(uchar)i[g];
}
"""
    f = np.array([0.0, 1.5, -1.5, 2.5, -2.5, 3e9, -3e9, 0.49999997, 127.7, -128.9, 1e-3, -7.0],
                 dtype=np.float32)
    i = np.array([0, 255, 256, -1, 127, 128, -128, -129, 1000, -1000, 65, 300], dtype=np.int32)
    out = env.run_kernel(t, src, "k", [f.tobytes(), i.tobytes()], 4 * 8 * len(f), (len(f),))
    got = np.frombuffer(out, dtype=np.int32).reshape(len(f), 8)
    import math

    def rte(x):
        r = math.floor(x + 0.5)
        return r - 1 if (x + 0.5) == r and r % 2 else r

    for g in range(len(f)):
        x, y = float(f[g]), int(i[g])
        sat = lambda v, lo, hi: max(lo, min(hi, v))  # noqa: E731
        want = [int(x) if abs(x) < 2 ** 31 else None, sat(int(x), -2 ** 31, 2 ** 31 - 1) if abs(x) < 1e30 else None,
                sat(rte(x), -2 ** 31, 2 ** 31 - 1), sat(math.floor(x), -2 ** 31, 2 ** 31 - 1),
                sat(math.ceil(x), -2 ** 31, 2 ** 31 - 1), sat(y, 0, 255), sat(y, -128, 127), y & 0xFF]
        if abs(x) >= 2 ** 31:
            want[2:5] = [None, None, None]  # without _sat, out-of-range results are undefined
        names = ["(int)f", "convert_int_sat(f)", "convert_int_rte(f)", "convert_int_rtn(f)",
                 "convert_int_rtp(f)", "convert_uchar_sat(i)", "convert_char_sat(i)", "(int)(uchar)i"]
        for j, w in enumerate(want):
            if w is not None and int(got[g, j]) != w:
                t.true(False, f"{names[j]} with f={x!r}, i={y}: expected {w}, got {int(got[g, j])}")


@check
def control_flow(env, t):
    """loops, branches, a private array sorted in the kernel, a helper function"""
    src = r"""
int collatz(int n) { int s = 0; while (n != 1) { n = (n & 1) ? 3 * n + 1 : n / 2; s++; } return s; }
__kernel void k(__global const int *in, __global int *out)
{
    size_t g = get_global_id(0);
    int v[8];
    for (int j = 0; j < 8; j++) v[j] = in[8 * g + j];
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 7 - a; b++)
            if (v[b] > v[b + 1]) { int x = v[b]; v[b] = v[b + 1]; v[b + 1] = x; }
    for (int j = 0; j < 8; j++) out[9 * g + j] = v[j];
    int c = in[8 * g] & 1023;
    out[9 * g + 8] = c > 0 ? collatz(c) : -1;
}
"""
    rng = env.rng(500)
    n = 16
    data = rng.integers(-100, 1000, 8 * n, dtype=np.int32)
    out = env.run_kernel(t, src, "k", [data.tobytes()], 4 * 9 * n, (n,))
    got = np.frombuffer(out, dtype=np.int32).reshape(n, 9)

    def collatz(m):
        s = 0
        while m != 1:
            m = 3 * m + 1 if m & 1 else m // 2
            s += 1
        return s

    for g in range(n):
        row = data[8 * g:8 * g + 8]
        c = int(row[0]) & 1023
        want = sorted(row.tolist()) + [collatz(c) if c > 0 else -1]
        t.eq(got[g].tolist(), want, f"sorted {row.tolist()} + collatz steps")


@check
def atomics(env, t):
    """atomic_add/inc/min/max/xchg on global and local ints from every work-item"""
    src = r"""
__kernel void k(__global int *c, __global const int *v)
{
    __local int lc;
    size_t g = get_global_id(0);
    if (get_local_id(0) == 0) lc = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&c[0]);
    atomic_add(&c[1], v[g]);
    atomic_min(&c[2], v[g]);
    atomic_max(&c[3], v[g]);
    atomic_add(&lc, 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) atomic_add(&c[4], lc);
}
"""
    rng = env.rng(600)
    n = 1024
    v = rng.integers(-10 ** 6, 10 ** 6, n, dtype=np.int32)
    prog = env.program(t, src)
    k = env.kernel(t, prog, "k")
    init = np.array([0, 0, 2 ** 31 - 1, -2 ** 31, 0], dtype=np.int32)
    hc = ctypes.create_string_buffer(init.tobytes(), init.nbytes)
    hv = ctypes.create_string_buffer(v.tobytes(), v.nbytes)
    bc = env.buffer(t, init.nbytes, C.CL_MEM_READ_WRITE | C.CL_MEM_COPY_HOST_PTR, hc)
    bv = env.buffer(t, v.nbytes, C.CL_MEM_READ_ONLY | C.CL_MEM_COPY_HOST_PTR, hv)
    env.set_args(t, k, ("mem", bc), ("mem", bv))
    env.enqueue(t, k, (n,), (64,))
    got = np.frombuffer(env.read(t, bc, init.nbytes), dtype=np.int32).tolist()
    want = [n, int(v.astype(np.int64).sum() & 0xFFFFFFFF), int(v.min()), int(v.max()), n]
    want[1] = want[1] - (1 << 32) if want[1] >= 1 << 31 else want[1]
    t.eq(got, want, "[atomic_inc count, atomic_add sum, atomic_min, atomic_max, local atomic count]")
