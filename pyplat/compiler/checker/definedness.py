"""PYPLAT_CHECK=uninit: which values are defined, tracked through the kernel (docs/tools.md).

A load of `__local` bytes that no work-item of the group wrote (local_shadow.py's flags) is not a
finding: its value is *undefined*. Like Valgrind's Memcheck, the check follows that value and
reports it only where it is *used*: a loop's branch or a switch on it, an address computed from
it, a store of it to `__global` memory, a `__global` store in an arm of an `if` on it (the
variables those arms assign are not made undefined: branch_on). Not a division by it: PyPlat's
divisions never trap, and the quotient is just another value. pyopencl's scan reads slots it
never wrote, computes with them, writes them back to `__local` memory and reads them again, but
uses them only under range guards: no finding.

Each IR value may have a shadow, an i32 `origin`: 0 when defined, else 1 + the site number of
the `__local` load it came from (so a finding names where the value was read and where it was
used). Values without an entry are defined; so the shadow code exists only where a `__local`
load's value flows, and constant shadows fold away in LLVM. The function's Builder calls
`Definedness.before` / `after` for every instruction it inserts (irbuild.Builder._insert):
- arithmetic, compares, casts, vector and aggregate element operations, GEPs and calls of
  builtins: undefined if any operand is (the largest origin: llvm.umax);
- select, and the phi of `?:`, `&&`, `||`: the chosen operand's shadow, undefined also if the
  condition is;
- phi: a shadow phi of the incoming shadows (made when first asked for, filled at the end);
- private scalar and vector variables (FuncGen.alloca): an i32 shadow variable each (kernels
  with barriers: per-work-item variables get a shadow array after theirs), loads and stores
  copy it; `__local` stores clear the bytes' flags when the value is undefined (CheckTable.guard,
  local_shadow.local_access);
- not tracked (treated as defined; this can only miss a use, never invent one): arguments and
  results of calls of user functions, private arrays and structs, memory behind pointers of
  unknown origin, atomics, vector lanes separately (one shadow per vector value).

A use is branchless: `frame[FR_UNDEFINED] = umin(frame[FR_UNDEFINED], key)`, the key
(local linear id + 1) << 40 | use site << 20 | origin where the value is undefined, all ones
where not; CheckTable.group_result reports the group's smallest (report_use).
"""
from llvmlite import ir

from .. import abi
from ..lowering.instrumentation import ValueHooks
from ..lowering.irbuild import I1, I8, I32, I64, PTR, VOIDT, WI_FRAME, WI_LID, WI_TYPE
from .layout import FR_UNDEFINED, KIND_UNDEFINED_USE

UNINIT = "uninit"
NONE = (1 << 64) - 1                     # the frame word when no work-item used an undefined value
_SITE_BITS = 20                          # a key: (lin + 1) << 40 | use site << 20 | origin
_NOT_PROPAGATED = {"alloca", "load", "store", "call", "phi", "atomicrmw", "cmpxchg", "fence", "br", "ret",
                   "switch", "unreachable", "indirectbr", "load atomic", "store atomic", "landingpad",
                   "invoke", "resume", "select"}


class Definedness(ValueHooks):
    """The value hooks of one function g (FuncGen) lowers (the checker's Instrumentation.values)."""

    def __init__(self, g, table):
        self.g = g
        self.table = table
        self.shadows = {}          # id(value) -> (value, its i32 shadow)
        self.variables = {}        # id(alloca or per-work-item address) -> (it, its shadow's address, key)
        # (finish: variables whose shadow is never stored anything but 0 read as 0, see clean)
        self.shadow_loads = {}     # id(load of a variable's shadow) -> the variable's key
        self.var_loads = {}        # key -> [loads of its shadow]
        self.var_stores = {}       # key -> [(store of its shadow, the value stored)]
        self.per_item = {}         # per-work-item variable -> its shadows' array (barriers.py)
        self.waiting_phis = {}     # id(phi) -> phi whose shadow nobody asked for yet
        self.phis = []             # [(phi, shadow phi)] filled by finish()
        self.quiet = False         # emitting check code: not tracked itself
        self.node = None           # the last expression lowered (FuncGen.rv): a use's location
        self.control = None        # inside `if`s on undefined values: their conditions' shadow
        self.implicit = None       # id of the next branch's condition when it is no use

    # ------------------------------------------------------------------ values
    def of(self, v):
        got = self.shadows.get(id(v))
        if got is not None:
            return got[1]
        phi = self.waiting_phis.pop(id(v), None)
        if phi is None:
            return None
        shadow = ir.IRBuilder(phi.parent)
        shadow.position_at_start(phi.parent)
        s = shadow.phi(I32, name="defined.phi")
        main = self.g.b
        if main.block is phi.parent:    # (it inserts at an index: one more instruction before it)
            main._anchor += 1
        self.phis.append((phi, s))
        self.set(phi, s)
        return s

    def set(self, v, s):
        if s is not None:
            self.shadows[id(v)] = (v, s)

    def _any(self, b, values):
        """The shadow of a result computed from `values`: the largest of their origins."""
        out = None
        for v in values:
            s = self.of(v)
            if s is None or s is out:
                continue
            out = self._max(b, out, s)
        return out

    def _max(self, b, s, t):
        """The shadow undefined where s or t is (either may be None: defined)."""
        if s is None or t is None:
            return t if s is None else s
        return b.call(self.g.mg.intrinsic("llvm.umax.i32", I32, [I32, I32]), [s, t])

    def variable(self, alloca, t):
        """A private variable of type t: scalars and vectors get a shadow variable (defined at
        the start: uninitialised private variables are not this check's business)."""
        if t.is_struct or t.is_array:
            return
        a = self.g.abuild.alloca(I32, name="defined.var")
        self.g.abuild.store(I32(0), a)
        self.variables[id(alloca)] = (alloca, a, id(a))

    def frame_bytes(self, variables):
        """Per work-item bytes the shadows of the per-work-item `variables` need: an i32 each,
        and room to align them."""
        n = sum(1 for v in variables if not (v.type.is_struct or v.type.is_array))
        return 4 * n + 3 if n else 0

    def per_work_item(self, b, base, off, nwi, variables):
        """Kernels with barriers: shadows of the per-work-item variables (barriers.py), after
        theirs at byte offset `off` of `base` (room: frame_bytes), all defined at the start.
        Returns the offset after them."""
        tracked = [v for v in variables if not (v.type.is_struct or v.type.is_array)]
        if not tracked:
            return off
        quiet, self.quiet = self.quiet, True
        off = b.and_(b.add(off, I64(3)), I64(-4))
        start = b.gep(base, [off], inbounds=True, source_etype=I8)
        for v in tracked:
            self.per_item[v] = b.gep(base, [off], inbounds=True, source_etype=I8)
            off = b.add(off, b.mul(nwi, I64(4)))
        b.call(self.g.mg.intrinsic("llvm.memset.p0.i64", VOIDT, [PTR, I8, I64, I1]),
               [start, I8(0), b.mul(nwi, I64(4 * len(tracked))), I1(0)])
        self.quiet = quiet
        return off

    def per_work_item_at(self, b, p, v, lin):
        """p: variable v's copy of work-item `lin` (barriers.pw_ptr): its shadow there."""
        shadow = self.per_item.get(v)
        if shadow is not None:
            quiet, self.quiet = self.quiet, True
            self.variables[id(p)] = (p, b.gep(shadow, [lin], inbounds=True, source_etype=I32), id(shadow))
            self.quiet = quiet

    def branch_on(self, b, cond):
        """An `if`, `?:`, `&&` or `||` branches on cond next: no use by itself; a `__global`
        store in its arms is one (self.control, until end_branch(the value returned)).
        Variables its arms assign are not made undefined (implicit flows are not followed:
        pyopencl's segmented scan sets a variable under an `if` on a flag it never wrote,
        and only a min() of it reaches memory, past the data's end)."""
        saved = self.control
        s = self.of(cond)
        if s is not None:
            quiet, self.quiet = self.quiet, True
            self.control = self._max(b, saved, s)
            self.implicit = id(cond)
            self.quiet = quiet
        return saved

    def end_branch(self, saved):
        self.control = saved

    def chosen_by(self, b, phi, cond):
        """phi joins the arms of a branch on cond: undefined also where cond is."""
        s, c = self.of(phi), self.of(cond)
        if c is not None:
            quiet, self.quiet = self.quiet, True
            self.set(phi, self._max(b, s, c))
            self.quiet = quiet

    def loaded(self, b, v, undefined, site):
        """v was loaded from __local bytes; `undefined` (i1): some of them were not written."""
        if site + 1 < 1 << _SITE_BITS:
            self.set(v, b.select(undefined, I32(site + 1), I32(0)))

    def joined(self, b, phi, v, v_block, other_block):
        """phi (at the top of b's block) joins v from v_block with a defined value."""
        s = self.of(v)
        if s is not None:
            sp = b.phi(I32, name="defined.phi")
            sp.add_incoming(s, v_block)
            sp.add_incoming(I32(0), other_block)
            self.set(phi, sp)

    # ------------------------------------------------------------------ the Builder's hook
    def before(self, b, instr):
        """Uses of undefined values by instr, recorded before it is inserted."""
        op = instr.opname
        if op == "br" and len(instr.operands) == 3 and id(instr.operands[0]) == self.implicit:
            self.implicit = None
        elif op == "br" and len(instr.operands) == 3 or op == "switch":
            self.use(b, instr.operands[0], "branch")
        elif op == "load":
            self.use(b, instr.operands[0], "address")
        elif op == "store":
            self.use(b, instr.operands[1], "address")

    def after(self, b, instr):
        """instr's shadow, from its operands'."""
        op = instr.opname
        if op == "phi":
            self.waiting_phis[id(instr)] = instr
        elif op == "load":
            var = self.variables.get(id(instr.operands[0]))
            if var is not None:
                shadow = b.load(var[1], typ=I32, align=4)
                self.set(instr, shadow)
                self.shadow_loads[id(shadow)] = var[2]
                self.var_loads.setdefault(var[2], []).append(shadow)
        elif op == "store":
            var = self.variables.get(id(instr.operands[1]))
            if var is not None:
                value = self.of(instr.operands[0]) or I32(0)
                self.var_stores.setdefault(var[2], []).append((b.store(value, var[1], align=4), value))
        elif op == "select":
            cond, yes, no = instr.operands
            sy, sn = self.of(yes), self.of(no)
            if sy is None and sn is None:
                chosen = None
            elif isinstance(cond.type, ir.VectorType):     # some lane from yes, some from no
                lanes = ir.IntType(cond.type.count)
                mask = b.bitcast(cond, lanes)
                chosen = self._max(b, b.select(b.icmp_unsigned("!=", mask, lanes(0)), sy or I32(0), I32(0)),
                                   b.select(b.icmp_unsigned("!=", mask, lanes(-1)), sn or I32(0), I32(0)))
            else:
                chosen = b.select(cond, sy or I32(0), sn or I32(0))
            self.set(instr, self._max(b, chosen, self.of(cond)))
        elif op == "call":
            callee = instr.callee
            name = getattr(callee, "name", "")
            if not isinstance(instr.type, ir.VoidType) and isinstance(callee, ir.Function) and \
                    not name.startswith(("f.", "k.", "__pyplat_check")):
                self.set(instr, self._any(b, instr.args))     # a builtin: a function of its arguments
        elif op not in _NOT_PROPAGATED and not isinstance(instr.type, ir.VoidType):
            self.set(instr, self._any(b, instr.operands))

    # ------------------------------------------------------------------ uses
    def use(self, b, v, what, like=None, shadow=None):
        """Record, without a branch, that the work-item used v (`what`: "branch", "address",
        "store"; "control": a store done or not by a branch on it): a finding where v (or
        `shadow`, given instead) is undefined. The use's site: at the access site `like` (its
        place and object), else at the last expression lowered."""
        s = self.of(v) if shadow is None else shadow
        if s is None:
            return
        quiet, self.quiet = self.quiet, True
        g = self.g
        if like is None:
            site = self.table.site(g, self.node, what, 0, None, None)
        else:
            self.table.sites.append([what if i == 3 else x for i, x in enumerate(self.table.sites[like])])
            site = len(self.table.sites) - 1
        if site >= 1 << _SITE_BITS:              # (a million sites: not recorded)
            self.quiet = quiet
            return
        frame = self.table._invariant(b.load(b.gep(g.wi, [I32(0), I32(WI_FRAME)], inbounds=True,
                                                   source_etype=WI_TYPE), typ=PTR, align=8))
        lid = [g.wi_slot(WI_LID + d) for d in range(3)]
        ls = [g.wi_slot(abi.CTX_LOCAL_SIZE + d) for d in range(2)]
        lin = b.add(lid[0], b.mul(ls[0], b.add(lid[1], b.mul(ls[1], lid[2]))))
        code = b.or_(b.shl(b.add(lin, I64(1)), I64(2 * _SITE_BITS)),
                     b.or_(I64(site << _SITE_BITS), b.zext(s, I64)))
        key = b.select(b.icmp_unsigned("!=", s, I32(0)), code, I64(NONE))
        slot = _use_slot(self.table, g, frame)
        old = b.load(slot, typ=I64, align=8)
        b.store(b.select(b.icmp_unsigned("<", key, old), key, old), slot, align=8)
        self.quiet = quiet

    def finish(self):
        """Fill the shadow phis (each incoming value's shadow; new ones it asks for too)."""
        done = 0
        while done < len(self.phis):
            phi, s = self.phis[done]
            done += 1
            for v, block in phi.incomings:
                s.add_incoming(self.of(v) or I32(0), block)
        self._clean()

    def _zero(self, v, dirty, memo):
        return _zero_shadow(self, v, dirty, memo)

    def _clean(self):
        """Variables never undefined read as 0: those whose shadow only ever gets 0, or a copy of
        such a variable's shadow (a lockstep loop's accumulator and flags, loaded from their
        per-work-item arrays into registers and stored back: pyopencl's reduction), to a
        fixpoint. Their shadow loads then read a constant 0 and their stores go to a sink
        (LLVM folds and drops both): otherwise the shadows' per-work-item arrays are loaded and
        stored in every pass of the loop, which stays wider and slower."""
        dirty = set()
        changed = True
        while changed:
            changed = False
            zero = {}
            for key, stores in self.var_stores.items():
                if key not in dirty and not all(self._zero(value, dirty, zero) for _, value in stores):
                    dirty.add(key)
                    changed = True
        module = self.g.mg.module
        zero = _module_global(module, "__pyplat_defined_zero", True)
        sink = _module_global(module, "__pyplat_defined_sink", False)
        for key, loads in self.var_loads.items():
            if key not in dirty:
                for load in loads:
                    load.replace_usage(load.operands[0], zero)
        for key, stores in self.var_stores.items():
            if key not in dirty:
                for store, _ in stores:
                    store.replace_usage(store.operands[1], sink)


def _zero_shadow(d, v, dirty, memo):
    """Whether the shadow value v is 0 wherever the variables not in `dirty` read 0: a constant
    0, a load of such a variable's shadow, or a select, umax or phi of such values (a cycle of
    phis: not known, so not 0). memo: {id: True/False, or None while being worked out}."""
    if isinstance(v, ir.Constant):
        return v.constant == 0
    key = id(v)
    if key in memo:
        return bool(memo[key])          # (None: on the cycle being worked out)
    memo[key] = None
    source = d.shadow_loads.get(key)
    if source is not None:
        got = source not in dirty
    elif isinstance(v, ir.PhiInstr):
        got = all(_zero_shadow(d, x, dirty, memo) for x, _ in v.incomings)
    elif isinstance(v, ir.SelectInstr):
        got = all(_zero_shadow(d, x, dirty, memo) for x in v.operands[1:])
    elif isinstance(v, ir.CallInstr) and getattr(v.callee, "name", "") == "llvm.umax.i32":
        got = all(_zero_shadow(d, x, dirty, memo) for x in v.args)
    else:
        got = False
    memo[key] = got
    return got


def _module_global(module, name, constant):
    """An internal i32 global of the module, 0: read-only (`constant`: loads of it fold to 0) or
    only written (LLVM drops it and its stores)."""
    g = module.globals.get(name)
    if g is None:
        g = ir.GlobalVariable(module, I32, name=name)
        g.linkage = "internal"
        g.global_constant = constant
        g.initializer = I32(0)
        g.align = 4
    return g


def _use_slot(table, g, frame):
    """Where the uses' smallest key accumulates: in a work-group function lowered whole
    (barriers.py) an alloca of it, which LLVM keeps in a register (a store to the frame, which
    escapes, under a work-item's `if` kept pyopencl's lockstep loop scalar: the reduction ran
    30x its unchecked time); else the frame's word FR_UNDEFINED."""
    if not getattr(g, "whole_group", False):
        return g.b.gep(frame, [I64(FR_UNDEFINED)], inbounds=True, source_etype=I64)
    registers = table.undefined_registers
    slot = registers.get(g.f.name)
    if slot is None:
        slot = registers[g.f.name] = g.abuild.alloca(I64, name="check.undefined")
        g.abuild.store(I64(NONE), slot)
    return slot


def report_use(table, b, frame, wi, k):
    """At kernel k's work-group function's end: the smallest key of the group's uses of undefined
    values reported (table.report_key: the work-item, the use site, the origin)."""
    slot = table.undefined_registers.get(k.name)
    if slot is None:
        slot = b.gep(frame, [I64(FR_UNDEFINED)], inbounds=True, source_etype=I64)
    key = b.load(slot, typ=I64, align=8)
    fn = b.function
    found_bb = fn.append_basic_block("check.undefined")
    next_bb = fn.append_basic_block("check.undefined.next")
    b.cbranch(b.icmp_unsigned("!=", key, I64(NONE)), found_bb, next_bb)
    b.position_at_end(found_bb)
    mask = I64((1 << _SITE_BITS) - 1)
    site = b.and_(b.lshr(key, I64(_SITE_BITS)), mask)
    origin = b.sub(b.and_(key, mask), I64(1))
    table.report_key(b, frame, wi, key, site, I64(0), I64(0), I64(KIND_UNDEFINED_USE), origin)
    b.branch(next_bb)
    b.position_at_end(next_bb)
