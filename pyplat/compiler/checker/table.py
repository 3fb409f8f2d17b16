"""CheckTable: what every check of a module shares (its sites, each kernel's objects, the check
frame, the report), and PYPLAT_CHECK=bounds compiled into host kernels (docs/tools.md,
"PYPLAT_CHECK"). The checker's hooks (instrument.py) call it.

Every load and store through a `__global`, `__constant` or `__local` pointer (kernels and the
helpers inlined into them) is guarded: the accessed bytes must lie inside one object of that
address space. A failing access does not happen (a store is skipped, a load yields 0); the
first of a launch is written to the launch's check record, and the work-group function returns
1, which fails the command (the runtime's `run_chunks`).

Objects of a kernel: its pointer arguments (base from the argument block, size from the check
record, which the core fills per launch plan: sizes of buffers and of `__local` arguments),
its kernel-scope `__local` variables (offset and size known here) and the module's program-scope
`__constant` variables. The work-group function copies bases and sizes into its check frame
once per group; `wi` points to the frame, so inlined helpers reach it too.

Provenance: where the pointer of an access derives from one object on the typed tree (a kernel
argument, a `__local` or `__constant` variable, through pointer arithmetic, casts and `&p[i]`),
the access is checked against that object inline (two compares). Otherwise, or when that check
fails, a cold function scans every object of the address space before calling it a finding, so
an access the hint gets wrong is never reported if it is inside another object (no false
positives). Each access is a site: its number goes into the record, and the site table (file,
line, column, access, size, object) goes into the kernel's metadata.
"""
from llvmlite import ir

from .. import abi
from ..lowering.barrier_tree import assigned_vars
from ..lowering.irbuild import I1, I32, I64, PTR, VOIDT, WI_FRAME, WI_LID, WI_SLOTS_TYPE, WI_TYPE, Builder
from ..tree import source_position
from . import definedness, global_races, intervals, local_shadow
from .layout import (FR_COUNT, FR_FOUND, FR_OBJECTS, FR_RECORD, KIND_BOUNDS, KIND_DIVZERO, REC_FOUND,
                     REC_GLOBAL_ID, REC_HEADER, REC_KIND, REC_LOCAL_ID, REC_OFFSET, REC_OTHER, REC_SITE,
                     REC_SIZE)

BOUNDS = "bounds"
SPACE_CODES = {"global": 1, "constant": 2, "local": 3}

SLOW = "__pyplat_check_slow"
REPORT = "__pyplat_check_report"


SITE_SLOTS = 32                # sites per kernel whose findings are kept without a call
_OFFSET_BITS = 40              # a site slot: (local linear id + 1) << 40 | (offset + 2^39)


def _i64p(b, base, index):
    return b.gep(base, [I64(index)] if isinstance(index, int) else [index], inbounds=True, source_etype=I64)


class CheckTable:
    """The module's checks: its sites, each kernel's objects, the constant variables. kinds:
    PYPLAT_CHECK's kinds compiled in (uninit and races include bounds: they watch the accesses
    bounds finds inside an object)."""

    def __init__(self, mg, kinds):
        self.mg = mg
        self.kinds = frozenset(kinds)
        self.sites = []                 # [file, line, col, access, size, object name, space]
        self.objects = {}               # kernel name -> [[name, space, kind]]
        self.slow = None
        self.report = None
        self.site_slots = {}           # kernel name -> [site] of its frame's site slots
        self.called_kernels = set()    # kernels also called as functions: no frame hints there
        self.slot_registers = {}       # kernel name -> [alloca] of site slots kept in registers
        # (global_races.py) kernel name -> [site] of its frame's global race slots, and
        # -> {slot: alloca} of those kept in registers; (definedness.py) kernel name -> the
        # register of its uninit use key
        self.global_race_slots = {}
        self.race_slot_registers = {}
        self.undefined_registers = {}
        self.race_skip = None          # (kernel, argument indices) whose race checks the version
                                       # being lowered leaves out (versions.py)
        self.race_private_sites = {}   # kernel name -> {argument: [window]} (private_proofs.py)
        self.race_window_sites = {}    # kernel name -> {argument: [(g, node, size, write)]} (windows.py)
        self.race_proofs = {}          # (kernel name, argument) -> Proof or None, once the full version is lowered
        self.window_kernels = {}       # kernel name -> its windows analysis
        self.race_written = {}         # kernel name -> {argument with a race-checked write}
        self.local_inside = {}         # kernel name -> ids of __local accesses always inside their variable
        self.written_reads = {}        # kernel name -> ids of __local reads surely written (local_written.py)
        self.race_free = {}            # kernel name -> ids of its __local access nodes that
                                       # cannot race (intervals.py)
        self.global_race_scopes = None # (global_races.py) the tags' and frame's alias scopes,
        self.tag_array_scopes = None   # and the tag arrays'

    def forget_kernel_slots(self, name):
        """A kernel's frame slots and their registers start again: a second version of its
        work-group function is lowered (versions.py)."""
        for per_kernel in (self.site_slots, self.slot_registers, self.global_race_slots,
                           self.race_slot_registers, self.undefined_registers):
            per_kernel.pop(name, None)

    def note_kernels(self, kernels):
        """Before lowering: the kernels some function calls (their body then runs with another
        kernel's frame, so it gets no hints of its own objects)."""
        seen, todo = set(), list(kernels)
        while todo:
            f = todo.pop()
            if f in seen or f.body is None:
                continue
            seen.add(f)
            nodes = [f.body]
            while nodes:
                n = nodes.pop()
                if n is None or not hasattr(n, "op"):
                    continue
                if n.op == "call" and hasattr(n.val, "is_kernel"):
                    if n.val.is_kernel:
                        self.called_kernels.add(n.val)
                    todo.append(n.val)
                nodes.extend(n.kids or ())

    # ------------------------------------------------------------------ kernel objects
    def kernel_objects(self, k):
        """[(key, name, space, kind)]: pointer arguments (key: the param Var), then __local variables."""
        out = []
        for p, info in zip(k.params, k.param_info):
            space = info["addrspace"] if p.type.is_pointer else None
            if space in SPACE_CODES:
                out.append((p, p.name, space, "argument"))
        for v in k.local_vars:
            out.append((v, v.name, "local", "variable"))
        # [name, space, kind, size]: an argument's size is the launch's (the record's)
        self.objects[k.name] = [[name, space, kind, None if kind == "argument" else key.type.size]
                                for key, name, space, kind in out]
        return out

    def setup_frame(self, k, alloca_b, b, wi, args_p, argument):
        """In a work-group function's prologue: the frame filled, its pointer stored in `wi`.
        argument(b, args_p, i, type): workgroup.argument."""
        objects = self.kernel_objects(k)
        words = FR_OBJECTS + 3 * len(objects) + SITE_SLOTS + global_races.frame_words(k)
        frame = alloca_b.alloca(ir.ArrayType(I64, words), name="check.frame")
        record = b.load(b.gep(args_p, [I64(len(k.params))], inbounds=True, source_etype=PTR), typ=PTR, align=8)
        record = b.load(record, typ=PTR, align=8)
        b.store(b.ptrtoint(record, I64), _i64p(b, frame, FR_RECORD))
        b.store(I64(len(objects)), _i64p(b, frame, FR_COUNT))
        b.store(I64(0), _i64p(b, frame, FR_FOUND))
        lm = b.load(b.gep(wi, [I32(0), I32(1)], inbounds=True, source_etype=WI_TYPE), typ=PTR, align=8)
        params = list(k.params)
        for j, (key, _, space, kind) in enumerate(objects):
            if kind == "argument":
                i = params.index(key)
                base = argument(b, args_p, i, key.type)
                size = b.load(_i64p(b, record, REC_HEADER + i), typ=I64, align=8)
            else:
                base = b.gep(lm, [I64(key.index)], inbounds=True, source_etype=ir.IntType(8))
                size = I64(key.type.size)
            at = FR_OBJECTS + 3 * j
            b.store(b.ptrtoint(base, I64), _i64p(b, frame, at))
            b.store(size, _i64p(b, frame, at + 1))
            b.store(I64(SPACE_CODES[space]), _i64p(b, frame, at + 2))
        local_shadow.setup(self, b, frame, record, lm, any(space == "local" for _, _, space, _ in objects))
        b.call(self.mg.intrinsic("llvm.memset.p0.i64", VOIDT, [PTR, ir.IntType(8), I64, I1]),
               [_i64p(b, frame, FR_OBJECTS + 3 * len(objects)), ir.IntType(8)(0), I64(8 * SITE_SLOTS), I1(0)])
        global_races.setup(self, k, b, frame, record, wi, args_p, FR_OBJECTS + 3 * len(objects) + SITE_SLOTS)
        b.store(frame, b.gep(wi, [I32(0), I32(WI_FRAME)], inbounds=True, source_etype=WI_TYPE))
        return frame

    def barrier(self, b, frame):
        """At each barrier of the group (the races check's epochs)."""
        local_shadow.barrier(self, b, frame)

    def group_result(self, b, frame, k, wi):
        """At the work-group function's end: the site slots' findings reported (the first site
        that has one), uninit's use of an undefined value, and the function's return value: 1
        if this group had a finding."""
        slots = self.site_slots.get(k.name, [])
        if slots:
            fn = b.function
            end_bb = fn.append_basic_block("check.end")
            first = FR_OBJECTS + 3 * len(self._objects_of(k))
            registers = self.slot_registers.get(k.name)
            for j, site in enumerate(slots):
                key = b.load(registers[j] if registers else _i64p(b, frame, first + j), typ=I64, align=8)
                found_bb = fn.append_basic_block("check.site")
                next_bb = fn.append_basic_block("check.site.next")
                b.cbranch(b.icmp_unsigned(">=", key, I64(1 << _OFFSET_BITS)), found_bb, next_bb)
                b.position_at_end(found_bb)
                offset = b.sub(b.and_(key, I64((1 << _OFFSET_BITS) - 1)), I64(1 << (_OFFSET_BITS - 1)))
                self.report_key(b, frame, wi, key, I64(site), offset, I64(self.sites[site][4]), I64(KIND_BOUNDS),
                                I64(0))
                b.branch(end_bb)
                b.position_at_end(next_bb)
            b.branch(end_bb)
            b.position_at_end(end_bb)
        if definedness.UNINIT in self.kinds:
            definedness.report_use(self, b, frame, wi, k)
        global_races.group_end(self, b, frame, k, wi, FR_OBJECTS + 3 * len(self._objects_of(k)) + SITE_SLOTS)
        return b.trunc(b.load(_i64p(b, frame, FR_FOUND), typ=I64, align=8), I32)

    def report_key(self, b, frame, wi, key, site, offset, size, kind, other, lid_shift=_OFFSET_BITS):
        """Report a finding kept in a frame word whose bits from lid_shift up are the work-item's
        local linear id + 1 (the site slots, definedness's uses, global_races' slots)."""
        # a copy of the work-item state for the report: `wi` itself is passed to no call, so
        # that LLVM splits it into registers (and the frame stays private)
        copy = b.alloca(WI_TYPE, name="check.wi")
        cs = b.gep(copy, [I32(0), I32(0)], inbounds=True, source_etype=WI_TYPE)
        wis = b.gep(wi, [I32(0), I32(0)], inbounds=True, source_etype=WI_TYPE)

        def slot(base, i):
            return b.gep(base, [I64(0), I64(i)], inbounds=True, source_etype=WI_SLOTS_TYPE)
        for i in [abi.CTX_GROUP_ID + d for d in range(3)] + [abi.CTX_LOCAL_SIZE + d for d in range(3)] + \
                [abi.CTX_GLOBAL_OFFSET + d for d in range(3)]:
            b.store(b.load(slot(wis, i), typ=I64, align=8), slot(cs, i))
        lin = b.sub(b.lshr(key, I64(lid_shift)), I64(1))
        lx = b.load(slot(wis, abi.CTX_LOCAL_SIZE), typ=I64, align=8)
        ly = b.load(slot(wis, abi.CTX_LOCAL_SIZE + 1), typ=I64, align=8)
        b.store(b.urem(lin, lx), slot(cs, WI_LID))
        b.store(b.urem(b.udiv(lin, lx), ly), slot(cs, WI_LID + 1))
        b.store(b.udiv(lin, b.mul(lx, ly)), slot(cs, WI_LID + 2))
        b.call(self.report_function(), [frame, copy, site, offset, size, kind, other])

    def _site_slot(self, g, frame, j):
        """Where site slot j accumulates. In a work-group function lowered in one piece
        (barriers.py: its regions' loops are in it) an alloca of that function, which LLVM keeps
        in a register: a max under a work-item's `if` is then a conditional reduction the loop
        vectoriser takes, where a store to the frame (which escapes) is not. Otherwise (a plain
        kernel's body, called per work-item) the frame's word."""
        if not getattr(g, "whole_group", False):
            return _i64p(g.b, frame, FR_OBJECTS + 3 * len(self._objects_of(g.f)) + j)
        registers = self.slot_registers.setdefault(g.f.name, [])
        while len(registers) <= j:
            a = g.abuild.alloca(I64, name="check.slot")
            g.abuild.store(I64(0), a)
            registers.append(a)
        return registers[j]

    def cannot_race(self, g, node):
        """Whether the __local access `node` of the kernel being lowered cannot race
        (intervals.py): True, False, or intervals.ONE_ROW (not in groups of one row)."""
        f = g.f
        if node is None or not f.is_kernel or f in self.called_kernels:
            return False
        free = self.race_free.get(f.name)
        if free is None:
            free = self.race_free[f.name] = intervals.race_free_accesses(f)
        return free.get(id(node), False)

    def local_in_bounds(self, g, node):
        """Whether the __local access `node` of the kernel being lowered stays inside its
        variable for every local id and loop turn (its footprint: local_footprints.py)."""
        f = g.f
        if node is None or not f.is_kernel or f in self.called_kernels:
            return False
        found = self.local_inside.get(f.name)
        if found is None:
            found = self.local_inside[f.name] = set()
            if f.body is not None and all(x > 0 for x in f.reqd):
                from . import local_footprints      # (numpy: not imported with the platform)
                occurrences, _ = intervals.local_accesses(f)
                footprints = local_footprints.Footprints(f)
                for a in occurrences.values():
                    got = footprints.of(a) if a.var.val in f.local_vars else None
                    size = a.var.val.type.size if got is not None else 0
                    if got is not None and (not len(got[1]) or (got[1].min() >= 0 and got[1].max() + got[3] <= size)):
                        found.update(a.chain)
        return id(node) in found

    def surely_written(self, g, node, write):
        """Whether the __local read `node` of the kernel being lowered reads bytes surely
        written with defined values, or the write `node` finds its bytes so and writes a
        defined value (local_written.py)."""
        f = g.f
        if node is None or not f.is_kernel or f in self.called_kernels or "uninit" not in self.kinds:
            return False
        found = self.written_reads.get(f.name)
        if found is None:
            from . import local_written             # (numpy: not imported with the platform)
            found = self.written_reads[f.name] = local_written.surely_written(f)
        return id(node) in found[1 if write else 0]

    def exact(self, g, hint):
        """Whether an access outside the hinted object is outside every object: the hint is a
        __local or __constant variable, or a kernel argument the kernel never assigns to."""
        if hint is None:
            return False
        if hint[0] == "global":
            return True
        key = self._objects_of(g.f)[hint[1]][0]
        if key not in g.f.params:
            return True
        return key not in self.assigned(g)

    def assigned(self, g):
        """The variables the function being lowered assigns to, increments or takes the
        address of."""
        assigned = getattr(g, "check_assigned", None)
        if assigned is None:
            assigned = g.check_assigned = assigned_vars(g.f.body)
        return assigned

    # ------------------------------------------------------------------ provenance
    def provenance(self, g, n):
        """The object pointer expression n derives from: ('frame', index, name) for a kernel
        argument or __local variable of the kernel being lowered, ('global', LLVM global,
        size, name) for a __constant variable, or None."""
        while n is not None:
            op = n.op
            if op in ("conv", "astype") or (op == "bin" and n.type is not None and n.type.is_pointer):
                n = next((x for x in n.kids if x.type is not None and x.type.is_pointer), None)
            elif op in ("decay", "addr"):
                n = n.kids[0]
            elif op in ("index", "member") and n.kids and n.kids[0].type is not None and \
                    (n.kids[0].type.is_pointer or n.kids[0].type.is_array):
                n = n.kids[0]
            elif op == "load" and n.kids[0].op == "var":
                n = n.kids[0]
            elif op == "var":
                v = n.val
                if v.storage == "constant":
                    return ("global", self.mg.global_var(v), v.type.size, v.name)
                follow = self._initialiser(g, v)
                if follow is not None:      # `__global float *x = base + offset;`, never assigned
                    n = follow
                    continue
                keys = getattr(g, "check_keys", None)
                if keys is None:
                    keys = g.check_keys = {key: j for j, (key, *_rest) in enumerate(
                        self._objects_of(g.f))} if g.f.is_kernel and g.f not in self.called_kernels else {}
                j = keys.get(v)
                return ("frame", j, v.name) if j is not None else None
            else:
                return None
        return None

    def _initialiser(self, g, v):
        """The initialiser of a private variable of the kernel being lowered that nothing
        assigns to after its declaration (pyopencl's `x = (global float *)((global char *)
        x__base + x__offset)`), else None."""
        f = g.f
        if not f.is_kernel or f in self.called_kernels or v.storage != "private":
            return None
        decls = getattr(g, "check_decls", None)
        if decls is None:
            decls = g.check_decls = {}
            nodes = [f.body]
            while nodes:
                n = nodes.pop()
                if n is None or not hasattr(n, "op"):
                    continue
                if n.op == "decl" and n.kids and n.kids[0] is not None and hasattr(n.kids[0], "op"):
                    decls[n.val] = None if n.val in decls else n.kids[0]    # (declared twice: no)
                nodes.extend(n.kids or ())
        return decls.get(v) if v not in self.assigned(g) else None

    def _objects_of(self, k):
        return [(p,) for p, info in zip(k.params, k.param_info)
                if p.type.is_pointer and info["addrspace"] in SPACE_CODES] + [(v,) for v in k.local_vars]

    # ------------------------------------------------------------------ guarded accesses
    def site(self, g, n, access, size, space, name):
        fname, line, col = source_position(n.cur if n is not None and n.cur is not None else g.f.cur)
        self.sites.append([fname, line, col, access, size, name, space])
        return len(self.sites) - 1

    def object_range(self, g, hint, frame=None):
        """(address, size) of the object a provenance hint names, as i64 values."""
        b = g.b
        if hint[0] == "global":
            return b.ptrtoint(hint[1], I64), I64(hint[2])
        key = self._objects_of(g.f)[hint[1]][0]
        if getattr(key, "storage", None) == "local" and key.type.size:
            # a __local variable: its place and size are the kernel's own, so the offset is the
            # access's own index arithmetic, which LLVM may prove in range (the scan's `t[k][lid]`
            # in a loop over k < K, groups of a required size: no check left)
            return (b.ptrtoint(b.gep(g.local_mem(), [I64(key.index)], inbounds=True, source_etype=ir.IntType(8)),
                               I64), I64(key.type.size))
        if frame is None:
            frame = self._invariant(b.load(b.gep(g.wi, [I32(0), I32(WI_FRAME)], inbounds=True, source_etype=WI_TYPE),
                                           typ=PTR, align=8))
        at = FR_OBJECTS + 3 * hint[1]
        # written once per group before any access: loads LLVM may hoist out of loops
        return (self._invariant(b.load(_i64p(b, frame, at), typ=I64, align=8)),
                self._invariant(b.load(_i64p(b, frame, at + 1), typ=I64, align=8)))

    def twin_slot(self, slots, site, site_of=lambda s: s):
        """The index of a slot already kept for an access with the same site entry (one access
        lowered twice: a lockstep loop's exit-free and generic passes), or None. The twins share
        it: their findings would be reported alike, and the kernel's slots last longer."""
        entry = self.sites[site]
        return next((j for j, s in enumerate(slots) if self.sites[site_of(s)] == entry), None)

    def guard(self, g, ptr, size, space, hint, site, access_fn, zero=None, write=False, atomic=False,
              stored=None, value=None, align=1, node=None):
        """Emit access_fn() (which returns the loaded value, or None for a store) only when
        [ptr, ptr + size) is inside an object; a load yields `zero` otherwise. `__local`
        accesses also go through the shadow checks (local_shadow.py); an atomic one only counts
        as written there (atomics do not race). stored: a store's value's shadow (uninit:
        definedness.py), None where defined. align: the address's known alignment. node: the
        access on the typed tree, where known (private_proofs.py)."""
        b = g.b
        defined = g.values
        if defined is not None:         # uninit: an address computed from an undefined value
            defined.use(b, ptr, "address", like=site)
            was_quiet, defined.quiet = defined.quiet, True
        frame = self._invariant(b.load(b.gep(g.wi, [I32(0), I32(WI_FRAME)], inbounds=True, source_etype=WI_TYPE),
                                       typ=PTR, align=8))
        p = b.ptrtoint(ptr, I64)
        fn = g.fn
        do_bb = fn.append_basic_block("check.ok")
        bad_bb = fn.append_basic_block("check.slow")
        join_bb = fn.append_basic_block("check.join")
        base = I64(0)
        ok_bb, race = do_bb, None   # (PYPLAT_CHECK=races: __global accesses pass a race check first)
        if space == "global" and hint is not None and hint[0] == "frame" and not atomic and \
                global_races.wanted(self, g.f):
            races_at = FR_OBJECTS + 3 * len(self._objects_of(g.f)) + SITE_SLOTS
            race = global_races.prepare(self, g, frame, races_at, hint, node, size, write)
            ok_bb = fn.append_basic_block("check.global") if race is not None else do_bb
        if hint is not None:
            base, limit = self.object_range(g, hint, frame)
            off = b.sub(p, base)
            if node is not None and id(node) in getattr(g, "in_range", ()):
                inside = I1(1)          # (tested for the whole pass at group level: lockstep_ranges)
            elif space == "local" and self.local_in_bounds(g, node):
                inside = I1(1)          # (every byte it can touch is inside its variable)
            else:
                # off + size <= limit without overflow, in one compare per access: limit - size
                # and whether the object holds `size` bytes at all do not change in a loop (hoisted)
                inside = b.and_(b.icmp_unsigned("<=", off, b.sub(limit, I64(size))),
                                b.icmp_unsigned("<=", I64(size), limit))
            slots = self.site_slots.setdefault(g.f.name, []) if g.f.is_kernel else None
            twin = self.twin_slot(slots, site) if slots is not None else None
            if self.exact(g, hint) and slots is not None and (twin is not None or len(slots) < SITE_SLOTS):
                # no call: the site's slot keeps the largest (local linear id + 1, offset) of the
                # failing work-items, a max over the work-item loop that LLVM still vectorises;
                # group_result reports it when the group ends
                if twin is None:
                    twin = len(slots)
                    slots.append(site)
                at = self._site_slot(g, frame, twin)
                lid = [g.wi_slot(WI_LID + d) for d in range(3)]
                ls = [g.wi_slot(abi.CTX_LOCAL_SIZE + d) for d in range(2)]
                lin = b.add(lid[0], b.mul(ls[0], b.add(lid[1], b.mul(ls[1], lid[2]))))
                code = b.or_(b.shl(b.add(lin, I64(1)), I64(_OFFSET_BITS)),
                             b.and_(b.add(off, I64(1 << (_OFFSET_BITS - 1))), I64((1 << _OFFSET_BITS) - 1)))
                # (1, not 0, where inside: umax(old, 0) would fold into a select of the max,
                # which the vectoriser does not take for a reduction; a finding is >= 2^40)
                key = b.select(inside, I64(1), code)
                # (no FR_FOUND here: group_result's report of the slot sets it)
                word = global_races.frame_access          # (races: no tag store aliases it)
                old = word(self, b.load(at, typ=I64, align=8))
                word(self, b.store(b.select(b.icmp_unsigned(">", key, old), key, old), at))
                skip_bb = b.block
                b.cbranch(inside, ok_bb, join_bb)
                b.position_at_end(bad_bb)
                b.unreachable()
            else:
                b.cbranch(inside, ok_bb, bad_bb)
                skip_bb = None
        else:
            b.branch(bad_bb)
            skip_bb = None
        slow_bb = None
        if skip_bb is None:
            b.position_at_end(bad_bb)
            ok = b.call(self.slow_function(), [frame, g.wi, p, I64(size), I64(site), base, I64(SPACE_CODES[space])])
            skip_bb = slow_bb = b.block
            b.cbranch(ok, do_bb, join_bb)
        race_key = None     # (the race check's conflict key, its slot): kept at the join
        if ok_bb is not do_bb:
            b.position_at_end(ok_bb)
            race_key = global_races.access(self, g, frame, races_at, p, size, race, site, write, value, align)
            race_bb = b.block
            b.branch(do_bb)
        b.position_at_end(do_bb)
        if race_key is not None and slow_bb is not None:
            race_key = (global_races.joined_key(b, race_key[0], race_bb, slow_bb), race_key[1])
        undefined = None
        if space == "local" and local_shadow.wanted(self.kinds):
            undefined, local_key = local_shadow.local_access(
                self, g, frame, p, size, base if hint is not None else None, site, write, atomic, stored, align,
                FR_OBJECTS + 3 * len(self._objects_of(g.f)) + SITE_SLOTS, free=self.cannot_race(g, node),
                written=self.surely_written(g, node, write))
            race_key = local_key or race_key
        before = len(b.block.instructions)
        v = access_fn()
        global_races.data_accesses(self, b.block.instructions[before:])
        if undefined is not None and v is not None and v is not ptr:    # (a struct's: its address)
            defined.loaded(b, v, undefined, site)
        done_bb = b.block
        b.branch(join_bb)
        b.position_at_end(join_bb)
        if race_key is not None:
            key = global_races.joined_key(b, race_key[0], done_bb, skip_bb)
        phi = None
        if v is not None:
            phi = b.phi(v.type)
            phi.add_incoming(v, done_bb)
            phi.add_incoming(zero if zero is not None else ir.Constant(v.type, None), skip_bb)
        if defined is not None and phi is not None:
            defined.joined(b, phi, v, done_bb, skip_bb)
        if race_key is not None:            # (after the join's phis)
            global_races.keep(self, g, frame, race_key[1], key)
        if defined is not None:
            defined.quiet = was_quiet
        return phi

    def guard_division(self, g, n, zero, size):
        """PYPLAT_CHECK=divzero: report an integer division or remainder whose divisor is 0 (in
        any lane: `zero` is i1 or a vector of i1), before the lowering replaces that divisor by
        1 (operators.int_divide: OpenCL C leaves the result undefined, x86 would trap). The
        report is a cold call on the failing path only."""
        b = g.b
        if isinstance(zero.type, ir.VectorType):
            zero = b.icmp_unsigned("!=", b.bitcast(zero, ir.IntType(zero.type.count)),
                                   ir.Constant(ir.IntType(zero.type.count), 0))
        site = self.site(g, n, "divide", size, None, None)
        report_bb = g.fn.append_basic_block("check.divzero")
        go_on_bb = g.fn.append_basic_block("check.divided")
        b.cbranch(zero, report_bb, go_on_bb)
        b.position_at_end(report_bb)
        frame = b.load(b.gep(g.wi, [I32(0), I32(WI_FRAME)], inbounds=True, source_etype=WI_TYPE), typ=PTR, align=8)
        b.call(self.report_function(), [frame, g.wi, I64(site), I64(0), I64(size), I64(KIND_DIVZERO), I64(0)])
        b.branch(go_on_bb)
        b.position_at_end(go_on_bb)

    def objects_space(self, k, j):
        """The address space of object j of kernel k."""
        key = self._objects_of(k)[j][0]
        for p, info in zip(k.params, k.param_info):
            if p is key:
                return info["addrspace"]
        return "local"

    def _site_of(self, g, lv, access):
        space, hint, n = lv.check
        name = hint[-1] if hint is not None else None
        return self.site(g, n, access, lv.type.size, space, name)

    def checked_load(self, g, lv):
        space, hint, _ = lv.check
        t = lv.type
        site = self._site_of(g, lv, "read")
        if t.is_struct or t.is_array:       # read later, by address: a zero copy where outside
            return self.guard(g, lv.ptr, t.size, space, hint, site, lambda: lv.ptr, self.zeros(t.size))
        return self.guard(g, lv.ptr, t.size, space, hint, site, lambda: g.load(lv.ptr, t, lv.align),
                          align=lv.align or t.align, node=lv.check[2])

    def checked_store(self, g, lv, v):
        space, hint, _ = lv.check
        site = self._site_of(g, lv, "write")
        stored = None
        if g.values is not None and space == "global":     # uninit: an undefined value leaves
            g.values.use(g.b, v, "store", like=site)
            g.values.use(g.b, None, "control", like=site, shadow=g.values.control)
        elif g.values is not None:
            stored = g.values.of(v)
        self.guard(g, lv.ptr, lv.type.size, space, hint, site,
                   lambda: g.store(v, lv.ptr, lv.type, lv.align), write=True, stored=stored, value=v,
                   align=lv.align or lv.type.align, node=lv.check[2])

    def zeros(self, size):
        """A constant of `size` zero bytes (what a struct read outside its object reads)."""
        name = "__pyplat_check_zeros.%d" % size
        gv = self.mg.module.globals.get(name)
        if gv is None:
            gv = ir.GlobalVariable(self.mg.module, ir.ArrayType(ir.IntType(8), size), name=name)
            gv.initializer = ir.Constant(gv.value_type, None)
            gv.global_constant = True
            gv.linkage = "internal"
            gv.align = 16
        return gv

    def _invariant(self, load):
        md = self.mg.module.add_metadata([])
        load.set_metadata("invariant.load", md)
        return load

    # ------------------------------------------------------------------ the cold path
    def slow_function(self):
        if self.slow is None:
            fnty = ir.FunctionType(I1, [PTR, PTR, I64, I64, I64, I64, I64])
            self.slow = ir.Function(self.mg.module, fnty, name=SLOW)
            self.slow.linkage = "internal"
            for a in ("noinline", "cold", "nounwind"):
                self.slow.attributes.add(a)
            self.slow.args[0].add_attribute("captures(none)")
            self.slow.args[1].add_attribute("captures(none)")
        return self.slow

    def finish(self, constant_globals):
        """Emit the cold functions' bodies once every function is lowered (constant_globals:
        [(LLVM global, size)] of the module's __constant variables)."""
        if self.slow is not None:
            self._finish_slow(constant_globals)
        local_shadow.finish(self)
        global_races.finish(self)
        self.finish_report()

    def _finish_slow(self, constant_globals):
        fn = self.slow
        frame, wi, p, size, site, base, space = fn.args
        b = Builder(fn.append_basic_block("entry"))
        ok_bb = fn.append_basic_block("inside")
        fail_bb = fn.append_basic_block("finding")
        loop_bb = fn.append_basic_block("scan")
        consts_bb = fn.append_basic_block("constants")
        count = b.load(_i64p(b, frame, FR_COUNT), typ=I64, align=8)
        entry = b.block
        b.cbranch(b.icmp_unsigned("==", count, I64(0)), consts_bb, loop_bb)
        b.position_at_end(loop_bb)
        j = b.phi(I64)
        j.add_incoming(I64(0), entry)
        at = b.add(I64(FR_OBJECTS), b.mul(j, I64(3)))
        obase = b.load(_i64p(b, frame, at), typ=I64, align=8)
        osize = b.load(_i64p(b, frame, b.add(at, I64(1))), typ=I64, align=8)
        ospace = b.load(_i64p(b, frame, b.add(at, I64(2))), typ=I64, align=8)
        off = b.sub(p, obase)
        inside = b.and_(b.icmp_unsigned("==", ospace, space),
                        b.and_(b.icmp_unsigned("<=", off, osize), b.icmp_unsigned("<=", size, b.sub(osize, off))))
        nxt = b.add(j, I64(1))
        more_bb = fn.append_basic_block("scan.next")
        b.cbranch(inside, ok_bb, more_bb)
        b.position_at_end(more_bb)
        b.cbranch(b.icmp_unsigned("<", nxt, count), loop_bb, consts_bb)
        j.add_incoming(nxt, more_bb)
        b.position_at_end(consts_bb)
        for gv, gsize in constant_globals:
            off = b.sub(p, b.ptrtoint(gv, I64))
            inside = b.and_(b.icmp_unsigned("==", space, I64(SPACE_CODES["constant"])),
                            b.and_(b.icmp_unsigned("<=", off, I64(gsize)),
                                   b.icmp_unsigned("<=", size, b.sub(I64(gsize), off))))
            next_bb = fn.append_basic_block("constants.next")
            b.cbranch(inside, ok_bb, next_bb)
            b.position_at_end(next_bb)
        b.branch(fail_bb)
        b.position_at_end(ok_bb)
        b.ret(I1(1))
        b.position_at_end(fail_bb)
        b.call(self.report_function(), [frame, wi, site, b.sub(p, base), size, I64(KIND_BOUNDS), I64(0)])
        b.ret(I1(0))

    def report_function(self):
        """void report(frame, wi, site, offset, size, kind, other): the finding of a work-item."""
        if self.report is None:
            fnty = ir.FunctionType(VOIDT, [PTR, PTR, I64, I64, I64, I64, I64])
            self.report = ir.Function(self.mg.module, fnty, name=REPORT)
            self.report.linkage = "internal"
            for a in ("noinline", "cold", "nounwind"):
                self.report.attributes.add(a)
        return self.report

    def finish_report(self):
        if self.report is None or self.report.blocks:
            return
        fn = self.report
        frame, wi, site, offset, size, kind, other = fn.args
        b = Builder(fn.append_basic_block("entry"))
        b.store(I64(1), _i64p(b, frame, FR_FOUND))
        record = b.inttoptr(b.load(_i64p(b, frame, FR_RECORD), typ=I64, align=8), PTR)
        won = b.cmpxchg(_i64p(b, record, REC_FOUND), I64(0), I64(1), "seq_cst", "seq_cst")
        write_bb = fn.append_basic_block("record")
        out_bb = fn.append_basic_block("out")
        b.cbranch(b.extract_value(won, 1), write_bb, out_bb)
        b.position_at_end(write_bb)
        slots = b.gep(wi, [I32(0), I32(0)], inbounds=True, source_etype=WI_TYPE)

        def slot(i):
            return b.load(b.gep(slots, [I64(0), I64(i)], inbounds=True, source_etype=WI_SLOTS_TYPE), typ=I64, align=8)
        b.store(site, _i64p(b, record, REC_SITE))
        for d in range(3):
            lid = slot(WI_LID + d)
            gid = b.add(b.add(b.mul(slot(abi.CTX_GROUP_ID + d), slot(abi.CTX_LOCAL_SIZE + d)), lid),
                        slot(abi.CTX_GLOBAL_OFFSET + d))
            b.store(gid, _i64p(b, record, REC_GLOBAL_ID + d))
            b.store(lid, _i64p(b, record, REC_LOCAL_ID + d))
        b.store(offset, _i64p(b, record, REC_OFFSET))
        b.store(size, _i64p(b, record, REC_SIZE))
        b.store(kind, _i64p(b, record, REC_KIND))
        b.store(other, _i64p(b, record, REC_OTHER))
        b.branch(out_bb)
        b.position_at_end(out_bb)
        b.ret_void()
