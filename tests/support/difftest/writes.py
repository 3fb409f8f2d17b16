"""Generated kernels that write through pointers derived from their arguments, in every way the
language allows: the generator behind the in-order soundness runs (write_chains.py,
docs/differential.md).

A kernel `<prefix>k(a, b, c, src)` (all `__global uint *`, GLOBAL work-items in groups of WG)
writes `a`, `b` or both through a pointer built by a random chain of derivations (element
addresses, pointer arithmetic, pointer variables, helpers returning the pointer, casts to other
element types and back, `?:`, a private struct or array holding it, an integer round trip, a
pointer to the pointer, a walking pointer) and stores with a random form (plain and compound
stores, `++`, helpers several calls deep, `vstore4`, `vstore_half`, atomics, compare-and-swap
loops, stores of other element types, a struct field through `&s->field`, a copy loop, an async
copy from `__local`), sometimes under a condition. It only reads `c` and `src`. Before writing,
every work-item does some arithmetic over `src` so that a command allowed to run beside the
kernel would see the old contents. Each work-item writes only its own elements (or adds into
shared ones with atomics), so the results are deterministic.
"""
import random

GLOBAL, WG = 64, 16
N = 8 * GLOBAL            # uints per buffer
PAIR = "typedef struct { uint lo; uint hi; } %spair_t;"

# span: uints each work-item's store covers (its element offset is span * gid)
STORES = {"plain": 1, "index0": 1, "compound": 1, "incr": 1, "helper": 1, "vstore4": 4,
          "vstore_half": 1, "atomic_add": 1, "atomic_shared": 1, "atomic_xchg": 1, "cas": 1,
          "other_type": 1, "field": 2, "loop": 2, "async": 1}
DERIVATIONS = ("var", "identity_helper", "cast", "ternary", "struct", "array", "int_roundtrip",
               "ptr_to_ptr", "walk", "cast_bytes")


class Kernel:
    def __init__(self, prefix, helpers, body, writes, forms):
        self.prefix, self.helpers, self.body = prefix, helpers, body
        self.writes = writes            # names of the arguments it writes ("a", "b")
        self.forms = forms              # (store, derivations, conditional) per write, for coverage

    def source(self):
        return "\n".join(self.helpers + [
            f"__kernel __attribute__((reqd_work_group_size({WG}, 1, 1)))\n"
            f"void {self.prefix}k(__global uint *a, __global uint *b, __global uint *c, "
            f"__global const uint *src)\n{{\n" + "\n".join("    " + s for s in self.body) + "\n}"])


class _Builder:
    def __init__(self, rng, prefix):
        self.rng, self.prefix = rng, prefix
        self.helpers, self.body, self.n = [], [], 0

    def fresh(self, stem):
        self.n += 1
        return f"{self.prefix}{stem}{self.n}"

    def helper(self, text):
        self.helpers.append(text)

    def helper_chain(self, stem, ret, params, args, body):
        """1-3 helpers, each calling the one before, the first doing `body`; the last one's name."""
        name = self.fresh(stem)
        self.helper(f"{ret} {name}_0({params}) {{ {body} }}")
        depth = self.rng.randint(1, 3)
        call = "return " if ret != "void" else ""
        for d in range(1, depth):
            self.helper(f"{ret} {name}_{d}({params}) {{ {call}{name}_{d - 1}({args}); }}")
        return f"{name}_{depth - 1}"

    # --- derivations: each takes a pointer expression (to uint) and gives another
    def derive(self, kind, e):
        p, r = self.prefix, self.rng
        if kind == "var":
            v = self.fresh("p")
            self.body.append(f"__global uint *{v} = {e};")
            return v
        if kind == "identity_helper":
            name = self.helper_chain("id", "__global uint *", "__global uint *p", "p", "return p;")
            return f"{name}({e})"
        if kind == "cast":
            t = r.choice(["float", "int", "uchar", "ushort2", "char4"])
            return f"((__global uint *)(__global {t} *)({e}))"
        if kind == "cast_bytes":
            return f"((__global uint *)((__global uchar *)({e}) + 0))"
        if kind == "ternary":
            return f"(get_local_id(0) < {WG + 1} ? ({e}) : (__global uint *)c)"
        if kind == "struct":
            s = self.fresh("s")
            self.body.append(f"struct {{ __global uint *ptr; int tag; }} {s};")
            self.body.append(f"{s}.tag = 1; {s}.ptr = {e};")
            return f"{s}.ptr"
        if kind == "array":
            arr = self.fresh("arr")
            self.body.append(f"__global uint *{arr}[2] = {{ (__global uint *)c, {e} }};")
            return f"{arr}[1]"
        if kind == "int_roundtrip":
            return f"((__global uint *)(ulong)({e}))"
        if kind == "ptr_to_ptr":
            q, pp = self.fresh("q"), self.fresh("pp")
            self.body.append(f"__global uint *{q} = (__global uint *)c;")
            self.body.append(f"__global uint * __private *{pp} = &{q};")
            self.body.append(f"*{pp} = {e};")
            return q
        if kind == "walk":
            w = self.fresh("w")
            self.body.append(f"__global uint *{w} = {e};")
            self.body.append(f"for (int {w}k = 0; {w}k < 3; {w}k++) {w}++;")
            self.body.append(f"{w} -= 3;")
            return w
        raise ValueError(kind)

    def offset(self, e, span, how):
        idx = f"{span} * gid" if span != 1 else "gid"
        return f"&({e})[{idx}]" if how == "addr" else f"(({e}) + {idx})"

    # --- stores through a pointer E to this work-item's `span` uints
    def store(self, kind, e, val):
        p, r = self.prefix, self.rng
        if kind == "plain":
            return [f"*({e}) = {val};"]
        if kind == "index0":
            return [f"({e})[0] = {val};"]
        if kind == "compound":
            return [f"({e})[0] += {val};"]
        if kind == "incr":
            return [f"(*({e}))++;"]
        if kind == "helper":
            name = self.helper_chain("put", "void", "__global uint *p, uint v", "p, v", "*p = v;")
            return [f"{name}({e}, {val});"]
        if kind == "vstore4":
            if r.random() < 0.5:
                name = self.fresh("v4")
                self.helper(f"void {name}(__global uint *p, uint4 v) {{ vstore4(v, 0, p); }}")
                return [f"{name}({e}, (uint4)({val}, {val} + 1u, {val} + 2u, {val} + 3u));"]
            return [f"vstore4((uint4)({val}, {val} + 1u, {val} + 2u, {val} + 3u), 0, {e});"]
        if kind == "vstore_half":
            return [f"vstore_half((float)({val} & 1023u), 0, (__global half *)({e}));"]
        if kind == "atomic_add":
            return [f"atomic_add({e}, {val});"]
        if kind == "atomic_xchg":
            return [f"atomic_xchg({e}, {val});"]
        if kind == "cas":
            o, n = self.fresh("o"), self.fresh("n")
            name = self.fresh("cas")
            self.helper(f"void {name}(__global uint *p, uint v) {{\n"
                        f"    uint {o} = *(volatile __global uint *)p, {n};\n"
                        f"    while (({n} = atomic_cmpxchg(p, {o}, {o} + v)) != {o}) {o} = {n};\n}}")
            return [f"{name}({e}, {val});"]
        if kind == "other_type":
            t = r.choice(["float", "int", "uchar", "ushort"])
            return [f"*(__global {t} *)({e}) = ({t})({val});"]
        if kind == "field":
            name = self.fresh("setf")
            self.helper(f"void {name}(__global uint *f, uint v) {{ *f = v; }}")
            fld = r.choice(["lo", "hi"])
            return [f"{name}(&((__global {p}pair_t *)({e}))->{fld}, {val});"]
        if kind == "loop":
            k = self.fresh("i")
            return [f"for (int {k} = 0; {k} < 2; {k}++) ({e})[{k}] = {val} + (uint){k};"]
        raise ValueError(kind)


def generate(seed, prefix):
    """One kernel (a Kernel) for this seed: the same text every time."""
    r = random.Random(seed)
    b = _Builder(r, prefix)
    b.helper(PAIR % prefix)
    b.body += ["size_t gid = get_global_id(0);",
               "uint acc = (uint)gid;",
               f"for (int t = 0; t < {r.choice([16, 64, 256])}; t++) "
               f"acc = acc * 1664525u + src[(acc >> 7) % {N}u] + c[t % {N}u];"]
    writes, forms = [], []
    targets = r.choice([["a"], ["b"], ["a", "b"]])
    for which in targets:
        kind = r.choice(list(STORES))
        val = f"(0x1000u + (uint)gid * 7u + (acc & 15u))"
        if kind == "async":
            b.body += _async_copy(b, which)
            forms.append(("async", (), False))
        else:
            chain = [r.choice(DERIVATIONS) for _ in range(r.randint(0, 3))]
            where = r.randint(0, len(chain))        # the step after which the offset is applied
            e = which
            span = STORES[kind]
            for i, d in enumerate(chain + [None]):
                if i == where:
                    e = b.offset(e, 0 if kind == "atomic_shared" else span, r.choice(["addr", "plus"]))
                if d is not None:
                    e = b.derive(d, e)
            stmts = b.store("atomic_add" if kind == "atomic_shared" else kind, e, val)
            cond = r.random() < 0.3
            if cond:
                stmts = [f"if ((gid % {r.choice([2, 3, 5])}) == {r.randint(0, 1)}) {{"] + \
                    ["    " + s for s in stmts] + ["}"]
            b.body += stmts
            forms.append((kind, tuple(chain), cond))
        writes.append(which)
    return Kernel(prefix, b.helpers, b.body, writes, forms)


def _async_copy(b, which):
    """Each group copies WG values from __local to its own block of the argument."""
    lm, ev = b.fresh("lm"), b.fresh("ev")
    dst = b.derive(b.rng.choice(DERIVATIONS), which)
    return [f"__local uint {lm}[{WG}];",
            f"{lm}[get_local_id(0)] = 0x2000u + (uint)gid + (acc & 3u);",
            "barrier(CLK_LOCAL_MEM_FENCE);",
            f"event_t {ev} = async_work_group_copy({dst} + get_group_id(0) * {WG}, "
            f"(__local const uint *){lm}, {WG}, 0);",
            f"wait_group_events(1, &{ev});"]
