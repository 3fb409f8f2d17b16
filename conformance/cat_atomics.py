"""atomics: the OpenCL C 1.x atomic functions (atomic_* and the cl_khr_*_int32_* atom_* forms) on
int and uint in __global and __local memory, atomic_xchg on float, and the cl_khr_int64_base /
extended atomics on long and ulong when the device reports them.

Every work-item of many work-groups hits the same few addresses. The final values are checked as
exact totals and the values the functions return (the old values) as a consistent history: for
an operation that changes the value at every step (add of positive amounts, sub, inc, dec, xchg
of distinct values, a cmpxchg retry loop, and/or/xor of distinct bits) the old values must chain
from the initial value to the final one, each work-item's step applied exactly once; min/max
return values must be values that were stored; exactly one cmpxchg of the initial value wins."""
import ctypes

import numpy as np

from . import clapi as C
from .framework import Category

CATEGORY = Category("atomics", "atomic functions: totals and returned old values under contention")
check = CATEGORY.check

LOCAL_SIZE = 64
NSLOT = 13                    # old values recorded per work-item
TYPES = {"int": (np.int32, "uint", 32), "uint": (np.uint32, "uint", 32),
         "long": (np.int64, "ulong", 64), "ulong": (np.uint64, "ulong", 64)}
BASE_OPS = ("add", "sub", "xchg", "inc", "dec", "cmpxchg")
EXTENDED_OPS = ("min", "max", "and", "or", "xor")
CAS_INIT = 1234567            # the value only one cmpxchg may replace
CAS_OFFSET = 100              # what the winner stores: its index + CAS_OFFSET


def wrap(x, tname):
    bits = TYPES[tname][2]
    x = int(x) & ((1 << bits) - 1)
    if tname in ("int", "long") and x >= 1 << (bits - 1):
        x -= 1 << bits
    return x


def ncounters(n, bits):
    return 10 + 3 * (n // bits)


# --- kernels -----------------------------------------------------------------------------------------

def _body(pfx, tname, ops, space):
    """Statements of one work-item: index i among n work-items sharing counters c[]."""
    ut = TYPES[tname][1]
    bits = TYPES[tname][2]
    on = set(ops)
    s = []

    def op(slot, text):
        s.append(f"    o[{slot}] = {text};")

    if "add" in on:
        op(0, f"{pfx}_add(&c[0], v[gi])")
        op(8, f"{pfx}_add(&c[8], w[gi])")
    if "sub" in on:
        op(1, f"{pfx}_sub(&c[1], v[gi])")
    if "xchg" in on:
        op(2, f"{pfx}_xchg(&c[2], ({tname})(i + 1))")
    if "inc" in on:
        op(3, f"{pfx}_inc(&c[3])")
    if "dec" in on:
        op(4, f"{pfx}_dec(&c[4])")
    if "min" in on:
        op(5, f"{pfx}_min(&c[5], m[gi])")
    if "max" in on:
        op(6, f"{pfx}_max(&c[6], m[gi])")
    if "cmpxchg" in on:
        s.append(f"    {{ {tname} cur = 0; for (;;) {{ {tname} seen = {pfx}_cmpxchg(&c[7], cur, "
                 f"({tname})(cur + 1)); if (seen == cur) break; cur = seen; }} o[7] = cur; }}")
        op(9, f"{pfx}_cmpxchg(&c[9], ({tname}){CAS_INIT}, ({tname})(i + {CAS_OFFSET}))")
    s.append(f"    size_t nw = n / {bits}, word = i % nw, bit = i / nw;")
    s.append(f"    {tname} one = ({tname})(({ut})1 << bit);")
    if "and" in on:
        op(10, f"{pfx}_and(&c[10 + word], ~one)")
    if "or" in on:
        op(11, f"{pfx}_or(&c[10 + nw + word], one)")
    if "xor" in on:
        op(12, f"{pfx}_xor(&c[10 + 2 * nw + word], one)")
    return "\n".join(s)


def kernel_source(name, pfx, tname, ops, space):
    """A kernel(c, old, v, w, m) doing every op of `ops` on counters in `space` memory."""
    bits = TYPES[tname][2]
    args = (f"__global {tname} *gc, __global {tname} *old, __global const {tname} *v, "
            f"__global const {tname} *w, __global const {tname} *m")
    body = _body(pfx, tname, ops, space)
    if space == "global":
        return f"""
__kernel void {name}({args})
{{
    size_t i = get_global_id(0), gi = i, n = get_global_size(0);
    volatile __global {tname} *c = gc;
    __global {tname} *o = old + gi * {NSLOT};
{body}
}}
"""
    k = ncounters(LOCAL_SIZE, bits)
    return f"""
__kernel void {name}({args})
{{
    __local {tname} lc[{k}];
    size_t i = get_local_id(0), gi = get_global_id(0), n = get_local_size(0);
    size_t base = get_group_id(0) * {k};
    for (size_t j = i; j < {k}; j += n) lc[j] = gc[base + j];
    barrier(CLK_LOCAL_MEM_FENCE);
    volatile __local {tname} *c = lc;
    __global {tname} *o = old + gi * {NSLOT};
{body}
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t j = i; j < {k}; j += n) gc[base + j] = lc[j];
}}
"""


PRAGMAS32 = "".join(f"#pragma OPENCL EXTENSION cl_khr_{s}_int32_{k}_atomics : enable\n"
                    for s in ("global", "local") for k in ("base", "extended"))


# --- inputs and the reference ------------------------------------------------------------------------

def make_inputs(rng, tname, n, group):
    """(v, w, m, init) for n work-items; `group` work-items share one set of counters."""
    dt, _, bits = TYPES[tname]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1))) if tname in ("int", "long") else (0, 1 << bits)
    v = rng.integers(1, 1000 if bits == 32 else 1 << 40, n, dtype=np.int64).astype(dt)
    w = np.array([wrap(int(x), tname) for x in rng.integers(0, 1 << 64, n, dtype=np.uint64)]).astype(dt)
    m = np.array([wrap(int(x), tname) for x in rng.integers(0, 1 << 64, n, dtype=np.uint64)]).astype(dt)
    groups = n // group
    k = ncounters(group, bits)
    init = np.zeros((groups, k), dtype=dt)
    for g in range(groups):
        vs = [int(x) for x in v[g * group:(g + 1) * group]]
        row = [5, sum(vs) + 17, 0, wrap(-(group // 2), tname), wrap(group + 3, tname), hi - 1, lo, 0,
               wrap(int(rng.integers(lo, hi, dtype=np.int64)) if bits == 32 else 99, tname), CAS_INIT]
        nw = group // bits
        row += [wrap(-1, tname)] * nw + [0] * nw + [wrap(int("10" * (bits // 2), 2), tname)] * nw
        init[g] = [wrap(x, tname) for x in row]
    return v, w, m, init


def chain_problems(what, init, final, olds, step):
    """The old values returned by an operation that changes the value at each step: starting at
    `init`, the work-item whose old value is the current value must be unique, its step gives the
    next value, every work-item is visited once and the walk ends at `final`."""
    owner = {}
    for i, o in enumerate(olds):
        if o in owner:
            return [f"{what}: work-items {owner[o]} and {i} both got old value {o}"]
        owner[o] = i
    cur, seen = init, 0
    while seen < len(olds):
        if cur not in owner:
            return [f"{what}: after {seen} of {len(olds)} updates the value is {cur}, but no work-item "
                    f"got it as its old value (initial value {init})"]
        cur = step(cur, owner.pop(cur))
        seen += 1
    if cur != final:
        return [f"{what}: the returned old values imply a final value {cur}, the counter holds {final}"]
    return []


def group_problems(what, tname, ops, init, final, olds, v, w, m):
    """Problems of one set of counters shared by len(olds) work-items (olds: rows of NSLOT ints;
    v, w, m: their inputs as Python ints; init, final: the counters)."""
    bits = TYPES[tname][2]
    n = len(olds)
    on = set(ops)
    out = []

    def col(j):
        return [r[j] for r in olds]

    if "add" in on:
        out += chain_problems(f"{what} add", init[0], final[0], col(0), lambda c, i: wrap(c + v[i], tname))
        want = wrap(init[8] + sum(w), tname)
        if final[8] != want:
            out.append(f"{what} add of full-range values: total {final[8]}, expected {want}")
    if "sub" in on:
        out += chain_problems(f"{what} sub", init[1], final[1], col(1), lambda c, i: wrap(c - v[i], tname))
    if "xchg" in on:
        out += chain_problems(f"{what} xchg", init[2], final[2], col(2), lambda c, i: wrap(i + 1, tname))
    if "inc" in on:
        out += chain_problems(f"{what} inc (tickets)", init[3], final[3], col(3), lambda c, i: wrap(c + 1, tname))
    if "dec" in on:
        out += chain_problems(f"{what} dec (tickets)", init[4], final[4], col(4), lambda c, i: wrap(c - 1, tname))
    for j, name, fn in ((5, "min", min), (6, "max", max)):
        if name not in on:
            continue
        want = fn([init[j]] + m)
        if final[j] != want:
            out.append(f"{what} {name}: final {final[j]}, expected {want}")
        stored = set(m) | {init[j]}
        bad = [(i, o) for i, o in enumerate(col(j)) if o not in stored or fn(o, final[j]) != final[j]]
        if bad:
            out.append(f"{what} {name}: work-item {bad[0][0]} got old value {bad[0][1]}, never stored "
                       f"there or beyond the final value ({len(bad)} such)")
        if init[j] not in col(j):
            out.append(f"{what} {name}: no work-item got the initial value {init[j]} back")
    if "cmpxchg" in on:
        out += chain_problems(f"{what} cmpxchg retry loop", 0, final[7], col(7), lambda c, i: wrap(c + 1, tname))
        got = col(9)
        winners = [i for i, o in enumerate(got) if o == init[9]]
        if len(winners) != 1:
            out.append(f"{what} cmpxchg: {len(winners)} work-items saw the initial value, expected 1")
        else:
            want = wrap(winners[0] + CAS_OFFSET, tname)
            if final[9] != want:
                out.append(f"{what} cmpxchg: final {final[9]}, expected the winner's {want}")
            losers = [(i, o) for i, o in enumerate(got) if i != winners[0] and o != want]
            if losers:
                out.append(f"{what} cmpxchg: work-item {losers[0][0]} got {losers[0][1]}, expected the "
                           f"stored {want} ({len(losers)} such)")
    nw = n // bits
    for j, name, fn in ((10, "and", lambda c, b: c & ~b), (11, "or", lambda c, b: c | b),
                        (12, "xor", lambda c, b: c ^ b)):
        if name not in on:
            continue
        base = 10 + (j - 10) * nw
        for word in range(nw):
            members = list(range(word, n, nw))
            olds_w = [olds[i][j] for i in members]
            mask = (1 << bits) - 1

            def step(c, k, members=members):
                return wrap(fn(c & mask, 1 << (members[k] // nw)), tname)
            out += chain_problems(f"{what} {name} word {word}", init[base + word], final[base + word],
                                  olds_w, step)
    return out


# --- running ------------------------------------------------------------------------------------------

def _buf(env, t, arr, flags=C.CL_MEM_READ_WRITE):
    h = ctypes.create_string_buffer(arr.tobytes(), max(1, arr.nbytes))
    b = env.buffer(t, max(1, arr.nbytes), flags | C.CL_MEM_COPY_HOST_PTR, h)
    return b


def run_case(env, t, prog, kname, tname, ops, space, n, salt):
    dt, _, bits = TYPES[tname]
    group = LOCAL_SIZE if space == "local" else n
    v, w, m, init = make_inputs(env.rng(salt), tname, n, group)
    k = env.kernel(t, prog, kname)
    bc = _buf(env, t, init.reshape(-1))
    bo = env.buffer(t, n * NSLOT * dt().itemsize)
    bv, bw, bm = (_buf(env, t, a, C.CL_MEM_READ_ONLY) for a in (v, w, m))
    env.set_args(t, k, ("mem", bc), ("mem", bo), ("mem", bv), ("mem", bw), ("mem", bm))
    env.enqueue(t, k, (n,), (LOCAL_SIZE,))
    final = np.frombuffer(env.read(t, bc, init.nbytes), dtype=dt).reshape(init.shape)
    olds = np.frombuffer(env.read(t, bo, n * NSLOT * dt().itemsize), dtype=dt).reshape(n, NSLOT)
    problems = []
    vl, wl, ml = v.tolist(), w.tolist(), m.tolist()
    for g in range(init.shape[0]):
        sl = slice(g * group, (g + 1) * group)
        what = f"{kname} ({space} {tname}{'' if space == 'global' else f', group {g}'})"
        problems += group_problems(what, tname, ops, init[g].tolist(), final[g].tolist(),
                                   olds[sl].tolist(), vl[sl], wl[sl], ml[sl])
        if len(problems) > 8:
            break
    for p in problems[:8]:
        t.true(False, p)


def _sizes(env):
    return env.samples(2048, 8192)


def _int32(env, t, space):
    kernels = []
    src = PRAGMAS32
    for tname in ("int", "uint"):
        for pfx in ("atomic", "atom"):
            name = f"{pfx}_{tname}_{space}"
            kernels.append((name, tname))
            src += kernel_source(name, pfx, tname, BASE_OPS + EXTENDED_OPS, space)
    prog = env.program(t, src)
    for j, (name, tname) in enumerate(kernels):
        run_case(env, t, prog, name, tname, BASE_OPS + EXTENDED_OPS, space, _sizes(env), 10 + j)


@check
def global_int32(env, t):
    """atomic_* and atom_* on __global int/uint: every work-item of every group on the same counters"""
    _int32(env, t, "global")


@check
def local_int32(env, t):
    """atomic_* and atom_* on __local int/uint: per-group counters, results copied out"""
    _int32(env, t, "local")


FLOAT_SRC = r"""
__kernel void fx_global(__global float *f, __global float *old)
{
    size_t i = get_global_id(0);
    old[i] = atomic_xchg(&f[0], (float)i + 0.5f);
}
__kernel void fx_local(__global float *f, __global float *old)
{
    __local float lf;
    size_t l = get_local_id(0);
    if (l == 0) lf = f[get_group_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    old[get_global_id(0)] = atomic_xchg(&lf, (float)l + 0.5f);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) f[get_group_id(0)] = lf;
}
"""


@check
def float_xchg(env, t):
    """atomic_xchg on float in __global and __local memory: the old values form one history"""
    prog = env.program(t, FLOAT_SRC)
    n = _sizes(env)
    groups = n // LOCAL_SIZE
    for space in ("global", "local"):
        k = env.kernel(t, prog, f"fx_{space}")
        init = np.full(groups, -3.25, dtype=np.float32)
        bf = _buf(env, t, init)
        bo = env.buffer(t, 4 * n)
        env.set_args(t, k, ("mem", bf), ("mem", bo))
        env.enqueue(t, k, (n,), (LOCAL_SIZE,))
        final = np.frombuffer(env.read(t, bf, init.nbytes), dtype=np.float32).tolist()
        olds = np.frombuffer(env.read(t, bo, 4 * n), dtype=np.float32).tolist()
        if space == "global":
            for p in chain_problems("atomic_xchg(global float)", -3.25, final[0], olds,
                                    lambda c, i: i + 0.5):
                t.true(False, p)
            continue
        for g in range(groups):
            ps = chain_problems(f"atomic_xchg(local float), group {g}", -3.25, final[g],
                                olds[g * LOCAL_SIZE:(g + 1) * LOCAL_SIZE], lambda c, i: i + 0.5)
            for p in ps:
                t.true(False, p)
            if ps:
                break


def _int64(env, t, ext, ops):
    if f"cl_khr_int64_{ext}_atomics" not in env.extensions:
        t.skip(f"the device does not report cl_khr_int64_{ext}_atomics")
    src = f"#pragma OPENCL EXTENSION cl_khr_int64_{ext}_atomics : enable\n"
    kernels = [(f"atom_{tn}_{sp}", tn, sp) for tn in ("long", "ulong") for sp in ("global", "local")]
    for name, tn, sp in kernels:
        src += kernel_source(name, "atom", tn, ops, sp)
    prog = env.program(t, src)
    for j, (name, tn, sp) in enumerate(kernels):
        run_case(env, t, prog, name, tn, ops, sp, _sizes(env) // 2, 40 + j)


@check
def int64_base(env, t):
    """cl_khr_int64_base_atomics: atom_add/sub/xchg/inc/dec/cmpxchg on long/ulong, global and local"""
    _int64(env, t, "base", BASE_OPS)


@check
def int64_extended(env, t):
    """cl_khr_int64_extended_atomics: atom_min/max/and/or/xor on long/ulong, global and local"""
    _int64(env, t, "extended", EXTENDED_OPS)
