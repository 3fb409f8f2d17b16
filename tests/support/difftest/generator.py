"""Random, valid, deterministic OpenCL C programs (one seed -> one program, byte for byte).

Every program is an entry function `<prefix>k(__global const ulong *in, __global ulong *out,
__local ulong *lm)` (called by its batch's kernel, see runner.py) plus its own helper functions,
struct type and macros, all named with the program's prefix so that many
programs can share one cl_program (and one included header). Each work-item writes one hash per
top-level variable to `out[base + gid * SLOTS + j]`.

Behaviour is fully defined by the OpenCL C spec, so any difference between two platforms is a bug
in one of them:
  - signed +, -, * are done on the unsigned type and reinterpreted (as_T), narrow scalars through
    uint (no signed overflow, no promotion surprises);
  - / and % never see 0 (or MIN / -1); shift counts are whatever they are, since OpenCL C masks
    them (left shifts only on unsigned bits);
  - float -> integer conversions only through convert_T_sat[_rtX]; mul24/mad24 inputs in range;
  - float results are compared exactly, so only exactly rounded operations are used (+ - * /
    sqrt are exact under -cl-fp32-correctly-rounded-divide-sqrt, which the runner passes),
    FP_CONTRACT is off, NaNs are made canonical wherever their bits could be seen (as_T,
    copysign, bitselect, the output hash) and fmin/fmax get + 0 (their zero sign is unspecified).
"""
import random

SCALARS = {  # name: (bits, signed, float)
    "char": (8, True, False), "uchar": (8, False, False),
    "short": (16, True, False), "ushort": (16, False, False),
    "int": (32, True, False), "uint": (32, False, False),
    "long": (64, True, False), "ulong": (64, False, False),
    "float": (32, True, True), "double": (64, True, True),
}
INTS = [s for s, (_, _, f) in SCALARS.items() if not f]
WIDTHS = [1, 2, 3, 4, 8, 16]
SLOTS = 16          # output slots per work-item per program
NIN = 256           # ulongs in the input buffer
WG = 8              # work-group size (local reductions assume it)
HEX = "0123456789abcdef"

LIMITS = {"char": ("CHAR_MIN", "CHAR_MAX"), "uchar": ("0", "UCHAR_MAX"),
          "short": ("SHRT_MIN", "SHRT_MAX"), "ushort": ("0", "USHRT_MAX"),
          "int": ("INT_MIN", "INT_MAX"), "uint": ("0", "UINT_MAX"),
          "long": ("LONG_MIN", "LONG_MAX"), "ulong": ("0", "ULONG_MAX")}
FLOAT_EDGES = {"float": ["0.0f", "-0.0f", "1.0f", "-1.5f", "INFINITY", "-INFINITY", "NAN",
                         "FLT_MAX", "FLT_MIN", "0x1p-149f", "0.5f", "2.5f", "-2.5f", "8388609.0f"],
               "double": ["0.0", "-0.0", "1.0", "-1.5", "(double)INFINITY", "(double)NAN",
                          "DBL_MAX", "DBL_MIN", "0x1p-1074", "0.5", "-2.5", "4503599627370497.0"]}

BIG_FLOAT_EDGES = ("FLT_MAX", "8388609.0f", "DBL_MAX", "4503599627370497.0")


class Ty:
    __slots__ = ("s", "n")

    def __init__(self, s, n=1):
        self.s, self.n = s, n

    def __eq__(self, o):
        return isinstance(o, Ty) and (self.s, self.n) == (o.s, o.n)

    def __hash__(self):
        return hash((self.s, self.n))

    def __repr__(self):
        return self.name

    @property
    def name(self):
        return self.s if self.n == 1 else f"{self.s}{self.n}"

    @property
    def bits(self):
        return SCALARS[self.s][0]

    @property
    def signed(self):
        return SCALARS[self.s][1]

    @property
    def isfloat(self):
        return SCALARS[self.s][2]

    @property
    def vec(self):
        return self.n > 1

    def with_s(self, s):
        return Ty(s, self.n)

    @property
    def unsigned(self):   # the unsigned integer type of the same shape
        return Ty({8: "uchar", 16: "ushort", 32: "uint", 64: "ulong"}[self.bits], self.n)

    @property
    def signed_int(self):
        return Ty({8: "char", 16: "short", 32: "int", 64: "long"}[self.bits], self.n)


class Options:
    """What the generator may use (flags keep a construct out while a bug is open)."""

    def __init__(self, fp64=True, div_sqrt=True, local_reductions=True, macros=True,
                 header=True, structs=True, abs_of_min=False,
                 macro_rvalue_fullwidth=True, abs_diff_overflow=False,
                 fp_contract_pragma=True, inf_nan_literals=False, big_float_literals=False):
        self.fp64, self.div_sqrt, self.local_reductions = fp64, div_sqrt, local_reductions
        self.macros, self.header, self.structs = macros, header, structs
        self.abs_of_min = abs_of_min    # off: PoCL gets abs(MIN) wrong (docs/differential.md)
        self.macro_rvalue_fullwidth = macro_rvalue_fullwidth   # (was off while seed 1000079 was open)
        self.abs_diff_overflow = abs_diff_overflow   # off: PoCL gets it wrong
        self.fp_contract_pragma = fp_contract_pragma  # (was off while PyPlat ignored the pragma)
        # off: PoCL 3.1 folds code reached by literal infinities and NaNs as if they could not
        # occur (a lost store, a wrong select arm, a NaN lane); the inputs still bring
        # infinities and NaNs at run time
        self.inf_nan_literals = inf_nan_literals
        # off: PoCL 3.1 folds a constant float -> integer conversion out of the integer's range
        # (even convert_T_sat, which the spec defines) as undefined: whole batches wrote nothing
        # or the process crashed (seeds 22002280, 22000797); the inputs bring such values at run
        # time
        self.big_float_literals = big_float_literals


class Program:
    """One generated program: `items` are the kernel body's top-level statements (the reducer
    drops them), `outputs` the variables hashed into the output slots."""

    def __init__(self, seed, prefix):
        self.seed, self.prefix = seed, prefix
        self.defs = []        # macro lines, struct and helper definitions (program text)
        self.header = []      # lines for the shared included header
        self.items = []       # top-level statements of the kernel body
        self.outputs = []     # (name, Ty)
        self.uses_local = False

    def kernel_source(self, base, items=None, outputs=None):
        items = self.items if items is None else items
        outputs = self.outputs if outputs is None else outputs
        p = self.prefix
        body = [f"void {p}k(__global const ulong *in, __global ulong *out, __local ulong *{p}lm)",
                "{", "    uint gid = get_global_id(0);", "    uint lid = get_local_id(0);"]
        for it in items:
            body.extend("    " + line for line in it.splitlines())
        for j, (name, ty) in enumerate(outputs):
            body.append(f"    out[{base}u + gid * {SLOTS}u + {j}u] = {hash_expr(name, ty)};")
        body.append("}")
        return "\n".join(self.defs + body) + "\n"


def implicit_ok(src, dst):
    """An implicit scalar conversion src -> dst defined for every value of src: to an unsigned
    type (modular), to a signed type that holds src's range, any integer to float/double
    (rounded to nearest even), float to double."""
    sb, ss, sf = SCALARS[src]
    db, ds, df = SCALARS[dst]
    if df:
        return not sf or db >= sb
    if sf:
        return False
    return not ds or (db >= sb if ss else db > sb)


def comp(name, ty, i):
    if not ty.vec:
        return name
    return f"{name}.s{HEX[i]}"


def hash_expr(name, ty):
    parts = []
    for i in range(ty.n):
        c = comp(name, ty, i)
        if ty.s == "float":
            parts.append(f"(ulong)(isnan({c}) ? 0x7fc00000u : as_uint({c}))")
        elif ty.s == "double":
            parts.append(f"(isnan({c}) ? 0x7ff8000000000000UL : as_ulong({c}))")
        else:
            parts.append(f"(ulong)({ty.unsigned.s})({c})")
    h = parts[0]
    for p in parts[1:]:
        h = f"({h}) * 0x100000001b3UL + {p}"
    return h


def swizzle_accessors(m, n, rng, write=False):
    """A valid accessor selecting n components of an m-component vector (distinct if write)."""
    cands = []
    if n * 2 == m or (m == 3 and n == 2):
        cands += ["lo", "even"] if m == 3 else ["lo", "hi", "even", "odd"]
    idx = list(range(m))
    if write:
        if n > m:
            return cands
        pick = rng.sample(idx, n)
    else:
        pick = [rng.choice(idx) for _ in range(n)]
    if n in (1, 2, 3, 4, 8, 16):
        cands.append("s" + "".join(HEX[i] for i in pick))
        if m <= 4 and n <= 4:
            cands.append("".join("xyzw"[i] for i in pick))
    return cands


class Gen:
    def __init__(self, seed, prefix, opts=None):
        self.rng = random.Random(seed)
        self.opts = opts or Options()
        self.p = Program(seed, prefix)
        self.pre = prefix
        self.scopes = [[]]      # lists of (name, Ty) visible
        self.nvar = 0
        self.nmacro = 0
        self.helpers = []       # (name, ret Ty, [param Ty])
        self.struct = None      # (name, [(field, Ty)])
        self.structvars = []
        self.arrays = []        # (name, Ty)
        self.loopvars = []      # int names usable as leaves
        self.in_helper = False  # helpers see their parameters, not in/gid

    # ---------------------------------------------------------------- types
    def scalars(self):
        return [s for s in SCALARS if self.opts.fp64 or s != "double"]

    def rand_ty(self, vec_p=0.5):
        s = self.rng.choice(self.scalars())
        n = self.rng.choices(WIDTHS[1:], [4, 2, 4, 2, 1])[0] if self.rng.random() < vec_p else 1
        return Ty(s, n)

    def fresh(self, stem="v"):
        self.nvar += 1
        return f"{stem}{self.nvar}"

    def visible(self, pred=lambda t: True):
        return [(n, t) for sc in self.scopes for (n, t) in sc if pred(t)]

    # ---------------------------------------------------------------- leaves
    def input_leaf(self, s):
        r = self.rng
        i = f"in[(gid * {r.randrange(1, 32)}u + {r.randrange(NIN)}u) & {NIN - 1}u]"
        if s == "ulong":
            return i
        if s == "long":
            return f"as_long({i})"
        if s in ("uint", "ushort", "uchar"):
            return f"(({s}){i})"
        if s in ("int", "short", "char"):
            return f"as_{s}(({'u' + s}){i})"
        if s == "float":
            if r.random() < 0.5:
                return f"as_float((uint){i})"
            return f"((float)as_short((ushort){i}) * 0.125f)"
        if r.random() < 0.5:
            return f"as_double({i})"
        return f"((double)as_int((uint){i}) * 0.25)"

    def const_leaf(self, s):
        r = self.rng
        if s in FLOAT_EDGES:
            edges = FLOAT_EDGES[s]
            if not self.opts.inf_nan_literals:
                edges = [e for e in edges if "INFINITY" not in e and "NAN" not in e]
            if not self.opts.big_float_literals:
                edges = [e for e in edges if e not in BIG_FLOAT_EDGES]
            return r.choice(edges)
        lo, hi = LIMITS[s]
        c = [lo, hi, "0", "1"] + (["-1"] if SCALARS[s][1] else []) + [str(r.randrange(0, 100))]
        return f"(({s}){r.choice(c)})"

    def scalar_leaf(self, s):
        r = self.rng
        cands = [(n, t) for n, t in self.visible() if t.s == s]
        x = r.random()
        if cands and x < 0.45:
            n, t = r.choice(cands)
            return n if not t.vec else f"{n}.s{HEX[r.randrange(t.n)]}"
        if s == "int" and self.loopvars and x < 0.55:
            return r.choice(self.loopvars)
        if self.arrays and x < 0.6:
            a = [(n, t) for n, t in self.arrays if t.s == s]
            if a:
                n, t = r.choice(a)
                return f"{n}[({self.scalar_leaf('int')}) & 7]"
        if self.structvars and x < 0.65:
            f = [(sv, fn, ft) for sv in self.structvars for fn, ft in self.struct[1] if ft.s == s]
            if f:
                sv, fn, ft = r.choice(f)
                return f"{sv}.{fn}" if not ft.vec else f"{sv}.{fn}.s{HEX[r.randrange(ft.n)]}"
        if x < 0.8 and not self.in_helper:
            return self.input_leaf(s)
        return self.const_leaf(s)

    def leaf(self, t):
        r = self.rng
        same = [n for n, vt in self.visible() if vt == t]
        if same and r.random() < 0.5:
            return r.choice(same)
        if not t.vec:
            return self.scalar_leaf(t.s)
        if r.random() < 0.25:
            return f"(({t.name})({self.scalar_leaf(t.s)}))"
        parts, left = [], t.n
        while left:
            k = r.choice([w for w in (1, 2, 4) if w <= left and (w == 1 or r.random() < 0.3)])
            part = self.scalar_leaf(t.s) if k == 1 else self.expr(Ty(t.s, k), 0)
            parts.append(part)
            left -= k
        return f"(({t.name})({', '.join(parts)}))"

    # ---------------------------------------------------------------- expressions
    def expr(self, t, d):
        if d <= 0 or self.rng.random() < 0.15:
            return self.leaf(t)
        makers = self.float_makers(t) if t.isfloat else self.int_makers(t)
        makers += [self.conversion, self.swizzle, self.choose]
        if self.helpers and self.rng.random() < 0.3:
            makers.append(self.call)
        for _ in range(4):
            e = self.rng.choice(makers)(t, d - 1)
            if e is not None:
                return e
        return self.leaf(t)

    def wrap_arith(self, t, a, op, b):
        """a op b in type t with modular (never undefined) overflow."""
        if not t.signed and (t.vec or t.bits >= 32):
            return f"({a} {op} {b})"
        if t.vec or t.bits >= 32:
            u = t.unsigned.name
            return f"as_{t.name}(as_{u}({a}) {op} as_{u}({b}))"
        wide = "ulong" if t.bits > 32 else "uint"
        if not t.signed:
            return f"(({t.s})(({wide})({a}) {op} ({wide})({b})))"
        return f"as_{t.s}(({t.unsigned.s})(({wide})({a}) {op} ({wide})({b})))"

    def int_makers(self, t):
        g = self.rng
        e = lambda d, tt=t: self.expr(tt, d)  # noqa: E731

        def arith(t, d):
            return self.wrap_arith(t, e(d), g.choice("+-*"), e(d))

        def bitwise(t, d):
            op = g.choice("&|^")
            return f"({e(d)} {op} {e(d)})" if t.vec else f"(({t.s})({e(d)} {op} {e(d)}))"

        def bnot(t, d):
            return f"(~{e(d)})" if t.vec else f"(({t.s})~{e(d)})"

        def shift(t, d):
            if not t.vec and t.bits < 32:
                return None
            if g.random() < 0.5 or not t.signed:
                op = g.choice(["<<", ">>"]) if not t.signed else ">>"
                return f"({e(d)} {op} {e(d, t.unsigned if op == '<<' and t.signed else t)})"
            u = t.unsigned.name
            return f"as_{t.name}(as_{u}({e(d)}) << {e(d, t.unsigned)})"

        def divrem(t, d):
            # the divisor expression is written twice (expressions have no side effects)
            op, b = g.choice("/%"), f"({e(d)})"
            if t.vec:
                bad = f"({b} == ({t.name})0)" + (f" | ({b} == ({t.name})-1)" if t.signed else "")
                safe = f"select({b}, ({t.name})1, {bad})"
            else:
                bad = f"{b} == ({t.s})0" + (f" || {b} == ({t.s})-1" if t.signed else "")
                safe = f"(({bad}) ? ({t.s})1 : {b})"
            if t.vec or t.bits >= 32:
                return f"({e(d)} {op} {safe})"
            return f"(({t.s})((int)({e(d)}) {op} (int)({safe})))"

        def builtin2(t, d):
            f = g.choice(["add_sat", "sub_sat", "hadd", "rhadd", "mul_hi", "max", "min",
                          "rotate"])
            return f"{f}({e(d)}, {e(d)})"

        def builtin3(t, d):
            f = g.choice(["mad_sat", "clamp", "bitselect"] + (["mad_hi"] if not t.signed else []))
            if f == "clamp":
                x, y = e(d), e(d)
                return f"clamp({e(d)}, min({x}, {y}), max({x}, {y}))"
            return f"{f}({e(d)}, {e(d)}, {e(d)})"

        def builtin1(t, d):
            f = g.choice(["clz", "popcount", "abs", "abs_diff"])
            if f in ("abs", "abs_diff"):
                x = e(d)
                if f == "abs" and t.signed and not self.opts.abs_of_min:
                    # PoCL 3.1 treats abs(MIN) as poison (its result's sign bit is assumed
                    # clear, so as_int(abs(INT_MIN)) < 0 is false): keep MIN away from abs
                    x = f"max({x}, ({t.name})-{LIMITS[t.s][1]})"
                y = e(d)
                if f == "abs_diff" and t.signed and not self.opts.abs_diff_overflow:
                    # PoCL 3.1 computes abs_diff(x, y) as |x - y| in the signed type: wrong
                    # when x - y overflows (abs_diff(0, LONG_MIN)): keep x - y in range
                    x, y = (f"(({t.name})({v} >> 1))" for v in (e(d), y))
                args = x if f == "abs" else f"{x}, {y}"
                r = f"{f}({args})"
                return f"as_{t.name}({r})" if t.signed else r
            return f"{f}({e(d)})"

        def bits24(t, d):
            if t.s not in ("int", "uint"):
                return None
            sh = "17" if t.signed else "16"
            a, b = f"({e(d)} >> {sh})", f"({e(d)} >> {sh})"
            if g.random() < 0.5:
                return f"mul24({a}, {b})"
            return f"mad24({a}, {b}, ({e(d)} >> 2))"

        def ups(t, d):
            if t.bits == 8:
                return None
            half = {16: "char", 32: "short", 64: "int"}[t.bits]
            hi = Ty(half if t.signed else "u" + half, t.n)
            return f"upsample({e(d, hi)}, {e(d, Ty('u' + half, t.n))})"

        def compare(t, d):
            # a comparison's result type is the signed integer type of the operands' shape
            cands = [s for s in self.scalars() if SCALARS[s][0] == t.bits] if t.vec else \
                self.scalars()
            s = g.choice(cands)
            ot = Ty(s, t.n)
            if ot.isfloat and g.random() < 0.5:
                f = g.choice(["isequal", "isnotequal", "isgreater", "isless", "islessgreater",
                              "isordered", "isunordered"])
                r = f"{f}({e(d, ot)}, {e(d, ot)})"
            elif ot.isfloat and g.random() < 0.3:
                r = f"{g.choice(['isnan', 'isinf', 'isfinite', 'isnormal'])}({e(d, ot)})"
            else:
                r = f"({e(d, ot)} {g.choice(['<', '<=', '>', '>=', '==', '!='])} {e(d, ot)})"
            if t.vec:
                return r if t.signed else f"as_{t.name}({r})"
            return f"(({t.s}){r})"

        def anyall(t, d):
            if t.vec:
                return None
            at = Ty(g.choice(["char", "short", "int", "long"]), g.choice(WIDTHS))
            return f"(({t.s}){g.choice(['any', 'all'])}({e(d, at)}))"

        return [arith, arith, bitwise, bnot, shift, divrem, builtin1, builtin2, builtin3, bits24,
                ups, compare, anyall]

    def float_makers(self, t):
        g = self.rng
        e = lambda d, tt=t: self.expr(tt, d)  # noqa: E731
        canon = self.canon

        def arith(t, d):
            ops = "+-*" + ("/" if self.opts.div_sqrt else "")
            op = g.choice(ops)
            if op == "*" and not self.opts.fp_contract_pragma:
                # for a platform that fuses a*b+c even under FP_CONTRACT OFF (PyPlat did, seed
                # 424208): "* 1" makes any fusion with an enclosing + or - exact
                one = "1.0f" if t.s == "float" else "1.0"
                return f"(({e(d)} * {e(d)}) * {one})"
            return f"({e(d)} {op} {e(d)})"

        def fn1(t, d):
            fs = ["fabs", "floor", "ceil", "trunc", "rint", "round"]
            if self.opts.div_sqrt:
                fs.append("sqrt")
            return f"{g.choice(fs)}({e(d)})"

        def fn2(t, d):
            f = g.choice(["fmin", "fmax", "copysign", "fma", "bitselect"])
            zero = "0.0f" if t.s == "float" else "0.0"
            if f in ("fmin", "fmax"):
                return f"({f}({e(d)}, {e(d)}) + {zero})"
            if f == "copysign":
                return f"copysign({e(d)}, {canon(t, e(d))})"
            if f == "fma":
                return f"fma({e(d)}, {e(d)}, {e(d)})"
            return f"bitselect({canon(t, e(d))}, {canon(t, e(d))}, {canon(t, e(d))})"

        def sel(t, d):
            if not t.vec:
                return f"(({t.s})({e(d, Ty('int'))} > 0 ? {e(d)} : {e(d)}))"
            return f"select({e(d)}, {e(d)}, {e(d, t.signed_int)})"

        return [arith, arith, fn1, fn2, sel]

    def canon(self, t, x):
        # not NAN: its payload is the implementation's (PoCL's is all ones). NaN is recognised
        # and replaced on the bits alone (integer compare and select): with isnan or a float
        # select an optimiser may keep x's own NaN (LLVM does, in PyPlat: x86's default NaN has
        # the sign bit set), and OpenCL leaves a NaN's sign and payload unspecified.
        f = t.s == "float"
        bits, absm, inf = (("0x7fc00000u", "0x7fffffffu", "0x7f800000u") if f else
                           ("0x7ff8000000000000UL", "0x7fffffffffffffffUL", "0x7ff0000000000000UL"))
        ut = ("uint" if f else "ulong") + t.name[len(t.s):]
        u = f"as_{ut}({x})"
        if t.vec:
            return f"as_{t.name}(select({u}, ({ut})({bits}), ({u} & ({ut})({absm})) > ({ut})({inf})))"
        return f"as_{t.name}((({u} & {absm}) > {inf}) ? {bits} : {u})"

    def conversion(self, t, d):
        g = self.rng
        src = self.rand_ty(0)
        src = Ty(src.s, t.n)
        x = self.expr(src, d)
        mode = g.choice(["", "_rte", "_rtz", "_rtp", "_rtn"])
        if src.isfloat:
            x = self.canon(src, x) if g.random() < 0.3 else x
        if t.isfloat:
            if src.s == t.s:
                return f"convert_{t.name}({x})"
            return f"convert_{t.name}{mode}({x})"
        if src.isfloat:
            return f"convert_{t.name}_sat{mode}({x})"
        fits = not t.signed or (t.bits >= src.bits if src.signed else t.bits > src.bits)
        choice = g.random()
        if choice < 0.3 or (not fits and t.n == 3):
            return f"convert_{t.name}_sat{mode if g.random() < 0.3 else ''}({x})"
        if fits and choice < 0.75:
            if not t.vec and choice < 0.55:
                return f"(({t.s})({x}))"          # a cast: value preserving or modular
            return f"convert_{t.name}({x})"
        if t.n == 3:
            return f"convert_{t.name}({x})"
        # as_T between same-size types (never 3-component)
        same = [s for s in self.scalars() if SCALARS[s][0] == t.bits and s != t.s]
        s2 = Ty(g.choice(same), t.n)
        y = self.expr(s2, d)
        if s2.isfloat:
            y = self.canon(s2, y)
        return f"as_{t.name}({y})"

    def swizzle(self, t, d):
        g = self.rng
        m = g.choice([w for w in WIDTHS[1:]])
        src = Ty(t.s, m)
        cands = [n for n, vt in self.visible() if vt == src]
        if cands and g.random() < 0.7:
            base = g.choice(cands)
        else:
            base = self.leaf(src)
        accs = swizzle_accessors(m, t.n, g)
        if not accs:
            return None
        acc = g.choice(accs)
        # a full-width swizzle of an rvalue inside a macro body (PyPlat once gave its accessor to
        # another same-type implicit conversion in the function: seed 1000079)
        ambiguous = m == t.n and not base.isidentifier() and not self.opts.macro_rvalue_fullwidth
        if self.opts.macros and g.random() < 0.5 and not ambiguous:
            return self.macro_swizzle(base, acc, m, t.n)
        return f"{base}.{acc}" if base.isidentifier() else f"({base}).{acc}"

    def macro_swizzle(self, base, acc, m, n):
        """base.acc written through a macro: plain, nested, token-pasted, under #if/#else with
        a second definition of the same name, or defined in the included header."""
        g = self.rng
        self.nmacro += 1
        name = f"{self.pre}M{self.nmacro}"
        where = self.p.header if (self.opts.header and g.random() < 0.4) else self.p.defs
        kind = g.choice(["plain", "nested", "paste", "cond", "cond"])
        if kind == "plain":
            where.append(f"#define {name}(v) ((v).{acc})")
        elif kind == "nested":
            where.append(f"#define {name}_in(v) (v).{acc}")
            where.append(f"#define {name}(v) ({name}_in(v))")
        elif kind == "paste" and acc.startswith("s") and acc != "s":
            where.append(f"#define {name}_p(v, c) ((v).s##c)")
            where.append(f"#define {name}(v) {name}_p(v, {acc[1:]})")
        else:
            other = g.choice(swizzle_accessors(m, n, g))
            sel = g.randrange(2)
            first, second = (acc, other) if sel else (other, acc)
            where += [f"#define {name}_SEL {sel}", f"#if {name}_SEL",
                      f"#define {name}(v) ((v).{first})", "#else",
                      f"#define {name}(v) ((v).{second})", "#endif"]
        return f"{name}({base})"

    def choose(self, t, d):
        g = self.rng
        if t.vec:
            ct = t.signed_int if g.random() < 0.7 else t.unsigned
            return f"select({self.expr(t, d)}, {self.expr(t, d)}, {self.expr(ct, d)})"
        # (c ? a : b) of two chars is an int (usual arithmetic conversions): cast back
        return f"(({t.s})(({self.expr(Ty('int'), d)} & 1) ? {self.expr(t, d)} : {self.expr(t, d)}))"

    def call(self, t, d):
        fs = [h for h in self.helpers if h[1] == t]
        if not fs:
            return None
        name, rt, params = self.rng.choice(fs)
        return f"{name}({', '.join(self.expr(pt, d) for pt in params)})"

    # ---------------------------------------------------------------- statements
    def assign_target(self):
        """(lvalue text, Ty) of a visible variable, maybe through a (macro) swizzle."""
        g = self.rng
        vs = self.visible()
        if not vs:
            return None
        n, t = g.choice(vs)
        if t.vec and g.random() < 0.5:
            k = g.choice([w for w in WIDTHS if w <= t.n])
            accs = swizzle_accessors(t.n, k, g, write=True)
            if accs:
                acc = g.choice(accs)
                if self.opts.macros and g.random() < 0.4:
                    return self.macro_swizzle(n, acc, t.n, k), Ty(t.s, k)
                return f"{n}.{acc}", Ty(t.s, k)
        return n, t

    def assignment(self, d):
        tgt = self.assign_target()
        if tgt is None:
            return self.decl(d)
        lhs, t = tgt
        if not t.isfloat and self.rng.random() < 0.3:
            return f"{lhs} ^= {self.expr(t, d)};"
        return f"{lhs} = {self.expr(t, d)};"

    def decl(self, d, t=None):
        t = t or self.rand_ty()
        name = self.fresh()
        src = t
        if not t.vec and self.rng.random() < 0.25:
            # an implicit conversion by initialisation, only where it is defined for every value
            src = Ty(self.rng.choice([s for s in self.scalars() if implicit_ok(s, t.s)]))
        s = f"{t.name} {name} = {self.expr(src, d)};"
        self.scopes[-1].append((name, t))
        return s

    def block(self, d, k):
        self.scopes.append([])
        out = []
        for _ in range(k):
            out.append(self.assignment(d) if self.rng.random() < 0.7 else self.decl(d))
        self.scopes.pop()
        return "\n".join("    " + line for s in out for line in s.splitlines())

    def cond(self, d):
        return f"({self.expr(Ty('int'), d)} & {self.rng.choice([1, 2, 3, 5])})"

    def statement(self, depth):
        g = self.rng
        d = g.randrange(1, 3)
        kind = g.choices(["decl", "assign", "if", "for", "while", "do", "switch", "array",
                          "struct", "reduce"], [6, 4, 2, 2, 1, 1, 1, 1, 1, 1])[0]
        if kind == "decl" or not self.visible():
            return self.decl(d)
        if kind == "assign":
            return self.assignment(d)
        if kind == "if":
            s = f"if {self.cond(d)} {{\n{self.block(d, g.randrange(1, 3))}\n}}"
            if g.random() < 0.6:
                s += f" else {{\n{self.block(d, g.randrange(1, 3))}\n}}"
            return s
        if kind == "for":
            i = self.fresh("i")
            self.loopvars.append(i)
            brk = g.choice(["", f"    if (({i} ^ {g.randrange(8)}) == 3) break;\n",
                            f"    if ({i} & 1) continue;\n"])
            body = self.block(d - 1, g.randrange(1, 3))
            self.loopvars.pop()
            return f"for (int {i} = 0; {i} < {g.randrange(1, 6)}; {i}++) {{\n{brk}{body}\n}}"
        if kind in ("while", "do"):
            c = self.fresh("c")
            body = self.block(d - 1, g.randrange(1, 3))
            if kind == "while":
                return f"int {c} = {g.randrange(0, 5)};\nwhile ({c}-- > 0) {{\n{body}\n}}"
            return f"int {c} = {g.randrange(1, 5)};\ndo {{\n{body}\n}} while (--{c} > 0);"
        if kind == "switch":
            cases = []
            for lab in g.sample(range(4), g.randrange(1, 4)):
                brk = "    break;\n" if g.random() < 0.7 else "    /* falls through */\n"
                cases.append(f"case {lab}: {{\n{self.block(d, 1)}\n}}\n{brk}")
            cases.append(f"default: {{\n{self.block(d, 1)}\n}}\n    break;\n")
            return f"switch ({self.expr(Ty('int'), d)} & 3) {{\n{''.join(cases)}}}"
        if kind == "array":
            t = Ty(g.choice([s for s in self.scalars()]))
            a, i = self.fresh("a"), self.fresh("i")
            self.loopvars.append(i)
            val = self.expr(t, d - 1)
            self.loopvars.pop()
            self.arrays.append((a, t))
            return f"{t.name} {a}[8];\nfor (int {i} = 0; {i} < 8; {i}++)\n    {a}[{i}] = {val};"
        if kind == "struct" and self.opts.structs:
            if self.struct is None:
                fields = [(f"f{k}", self.rand_ty(0.4)) for k in range(g.randrange(2, 5))]
                self.struct = (f"{self.pre}S", fields)
                self.p.defs.append(f"struct {self.pre}S {{ " +
                                   " ".join(f"{ft.name} {fn};" for fn, ft in fields) + " };")
            sv = self.fresh("s")
            inits = ", ".join(self.expr(ft, d) for _, ft in self.struct[1])
            self.structvars.append(sv)
            s = f"struct {self.pre}S {sv} = {{ {inits} }};"
            if g.random() < 0.5:
                fn, ft = g.choice(self.struct[1])
                s += f"\n{sv}.{fn} = {self.expr(ft, d)};"
            return s
        if kind == "reduce" and self.opts.local_reductions and depth == 0:
            self.p.uses_local = True
            lm, r = f"{self.pre}lm", self.fresh()
            op = g.choice(["+", "^", "max"])
            comb = (f"max({lm}[lid], {lm}[lid + s])" if op == "max" else
                    f"{lm}[lid] {op} {lm}[lid + s]")
            val = self.expr(Ty("ulong"), d)
            self.scopes[-1].append((r, Ty("ulong")))
            return (f"{lm}[lid] = {val};\nbarrier(CLK_LOCAL_MEM_FENCE);\n"
                    f"for (uint s = {WG // 2}; s > 0; s >>= 1) {{\n"
                    f"    if (lid < s) {lm}[lid] = {comb};\n"
                    f"    barrier(CLK_LOCAL_MEM_FENCE);\n}}\n"
                    f"ulong {r} = {lm}[0] + lid;\nbarrier(CLK_LOCAL_MEM_FENCE);")
        return self.decl(d)

    def helper(self):
        g = self.rng
        rt = self.rand_ty(0.4)
        params = [self.rand_ty(0.4) for _ in range(g.randrange(1, 4))]
        name = f"{self.pre}f{len(self.helpers)}"
        saved = self.scopes
        self.scopes = [[(f"x{k}", pt) for k, pt in enumerate(params)]]
        self.in_helper = True
        body = [self.statement(1) for _ in range(g.randrange(0, 3))]
        ret = self.expr(rt, 1)
        self.scopes = saved
        self.in_helper = False
        self.arrays_reset()
        ps = ", ".join(f"{pt.name} x{k}" for k, pt in enumerate(params))
        lines = [f"{rt.name} {name}({ps})", "{"] + ["    " + ln for s in body
                                                    for ln in s.splitlines()]
        self.p.defs += lines + [f"    return {ret};", "}"]
        self.helpers.append((name, rt, params))

    def arrays_reset(self):
        self.arrays, self.structvars, self.loopvars = [], [], []


def generate(seed, prefix, opts=None, n_items=None):
    """The program of this seed (same seed, prefix and options -> same text)."""
    g = Gen(seed, prefix, opts)
    rng = g.rng
    for _ in range(rng.randrange(0, 3)):
        g.helper()
    for _ in range(n_items or rng.randrange(3, 9)):
        g.p.items.append(g.statement(0))
    outs = [(n, t) for n, t in g.scopes[0]]
    g.p.outputs = outs[-SLOTS:]
    return g.p
