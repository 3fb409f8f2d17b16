"""Work-group functions of kernels that contain barrier(): loop fission into parallel regions.

The kernel body is split at barriers, structurally, on our typed tree:

* a maximal run of barrier-free statements is a *parallel region*: one loop over all work-items
  of the group (z, y, x) with the statements inlined in it (LLVM vectorises it like a kernel
  without barriers);
* a barrier is the boundary between two regions (one thread runs the whole group, so running
  every work-item to the end of a region is exactly "all work-items reached the barrier");
* `if`/`for`/`while`/`do` whose body contains a barrier stay work-group-level control flow. Their
  condition must be uniform (the spec requires all work-items to reach the same barriers); it is
  evaluated in a region of its own for every active work-item (side effects such as `i++` happen
  per work-item) and the group branches on the value of the last one;
* variables declared at work-group level (between barriers) and kernel parameters that the
  kernel modifies live in per-work-item arrays (struct of arrays: work-item `i`'s copy of `x` is
  `x_array[i]`); variables declared inside a region stay ordinary allocas (registers);
* barrier-free loops over __global memory at work-group level run with the work-items in
  lockstep, one region per iteration (_choose_lockstep; lockstep_regions.py), their induction
  variables recomputed from the iteration count;
* `return` inside a region marks the work-item finished (a per-work-item flag the later regions
  test); `break`/`continue` of a work-group-level loop from inside a region set a group flag the
  loop tests after the region (they must be uniform like any control flow around barriers).

Per-work-item storage is `local_size * frame` bytes: on the stack up to STACK_LIMIT, else malloc.
Kernels without barrier() never come here (plain loop nest, unchanged).
"""
from llvmlite import ir

from .. import types as T
from ..tree import CompileError, Node, Var
from .barrier_flow import binds
from .barrier_tree import constant_int, has_barrier, walk
from .function import FuncGen
from .irbuild import Builder, LV, PTR, VOIDT, I1, I8, I64
from . import workgroup
from .lockstep import induction_update, lockstep_eligible
from . import lockstep_regions

STACK_LIMIT = 256 * 1024
# builtins without side effects whose value depends on their arguments and the work-item only
_PURE_BUILTINS = {"get_global_size", "get_local_size", "get_enqueued_local_size", "get_num_groups",
                  "get_global_offset", "get_group_id", "get_local_id", "get_global_id", "get_work_dim",
                  "min", "max", "mul24", "mad24", "clamp"}
# those of them with one value for the whole work-group
_UNIFORM_BUILTINS = {"get_global_size", "get_local_size", "get_enqueued_local_size", "get_num_groups",
                     "get_global_offset", "get_group_id", "get_work_dim"}


class _WGLoop:
    """Marker on the loop stack for a work-group-level loop."""

    def __init__(self, end_bb, inc_bb):
        self.end_bb, self.inc_bb = end_bb, inc_bb
        self.brk = self.cont = None     # group flags (allocas), created on first use


class BarrierKernelGen(FuncGen):
    """Emits the exported work-group function of a kernel containing barriers."""
    whole_group = True             # the work-group function itself (instrumentation may keep state in registers)

    def __init__(self, mg, k, name):
        self.mg, self.f = mg, k
        self.memo = {}
        self.loops = []
        self.vars = {}
        self.name = name
        self.fn = workgroup.declare(mg.module, name)
        self.sret = None
        self.region_next = None
        self.lin = None
        self.cache = None              # inside a region: {variable: its register copy} (pw_ptr)
        self._uniform_vars = {}        # {variable: its uniform initialiser} (_induction_steps)

    # ------------------------------------------------------------------ analysis
    def _analyse(self):
        k = self.f
        pw = []                        # work-group-level variables -> per-work-item arrays
        seen = set()

        def add(v):
            if v not in seen:
                seen.add(v)
                pw.append(v)

        def take_decls(n):
            if n is None:
                return
            if n.op == "decl":
                add(n.val)
            elif n.op == "block" and n.val == "decls":
                for x in n.kids:
                    take_decls(x)

        def scan(n):
            if n is None:
                return
            op = n.op
            if op == "block":
                for x in n.kids:
                    if has_barrier(x, self.memo):
                        scan(x)
                    else:
                        take_decls(x)
            elif op == "if":
                for x in n.kids[1:]:
                    if x is not None and has_barrier(x, self.memo):
                        scan(x)
            elif op == "for":
                take_decls(n.kids[0])
                if has_barrier(n.kids[3], self.memo):
                    scan(n.kids[3])
            elif op in ("while", "do"):
                body = n.kids[1] if op == "while" else n.kids[0]
                if has_barrier(body, self.memo):
                    scan(body)
            elif op != "barrier":
                raise CompileError("barrier() inside this statement ('%s') is not supported yet" % op, n.cur)

        self.lockstep = self._choose_lockstep()
        for flag in self.lockstep.values():
            add(flag)
        scan(k.body)
        flags = {"ret": False}
        written = set()
        self._escaped = set()          # variables whose address is taken: never cached (pw_ptr)

        def visit(n):
            if n.op in ("addr", "decay"):
                x = n.kids[0]
                while x.kids and x.op in ("swz", "vindex", "member", "index"):
                    x = x.kids[0]
                if x.op == "var":
                    self._escaped.add(x.val)
            if n.op == "return":
                flags["ret"] = True
            elif n.op in ("assign", "cassign", "incdec", "addr"):
                x = n.kids[0]
                while x.op in ("swz", "vindex", "member", "index") and x.kids:
                    if x.op == "index" or (x.op == "member" and x.val[1]):
                        break
                    x = x.kids[0]
                if x.op == "var" and x.val.storage == "param":
                    written.add(x.val)
            elif n.op == "decay" and n.kids[0].op == "var" and n.kids[0].val.storage == "param":
                written.add(n.kids[0].val)
        walk(k.body, visit)
        for p in k.params:
            if p in written:
                pw.append(p)
        self._written_params = set(written)
        self.track_returns = flags["ret"]
        steps = self._induction_steps()
        self.remat = self._rematerialisable(pw, written, steps)
        self.induction = {v: st for v, st in steps.items() if v in self.remat}
        return [v for v in pw if v not in self.remat]

    def _choose_lockstep(self):
        """Barrier-free loops at work-group level (statements of a block between barriers) that
        read or write __global memory: {id(loop): its per-work-item `active` flag (a Var)}.
        Run one work-item at a time, such a loop walks memory with the stride of the group (a
        grid-stride or group-stride loop: pyopencl's reduction, a histogram), a scalar chain per
        work-item; run in lockstep (one region per iteration over the work-items still in the
        loop), consecutive work-items touch consecutive addresses and the region vectorises.
        Loops with nested loops, switch, return or goto inside, and loops bounded by a constant
        (LLVM unrolls them in the region: pyopencl scan's `k < K`) stay in their region."""
        chosen = {}
        self._lockstep_nodes = {}

        def visit_wg(n):
            if n is None:
                return
            if n.op == "block":
                for x in n.kids:
                    if x is None:
                        continue
                    if has_barrier(x, self.memo):
                        visit_wg(x)
                    elif x.op in ("for", "while", "do") and lockstep_eligible(x):
                        chosen[id(x)] = Var("active.%d" % len(chosen), T.UCHAR, "private", x.cur)
                        self._lockstep_nodes[id(x)] = x
            elif n.op == "if":
                for x in n.kids[1:]:
                    if x is not None and has_barrier(x, self.memo):
                        visit_wg(x)
            elif n.op in ("for", "while", "do"):
                body = n.kids[3] if n.op == "for" else n.kids[1] if n.op == "while" else n.kids[0]
                # a break/continue of a group-level loop ends its pass for the whole group after
                # the region it is in: a work-item's own (legal after the pass's last barrier:
                # `if (lid == 0 && last) break;`) must not skip the others' later lockstep regions
                if not (binds(body, "break") or binds(body, "continue")):
                    visit_wg(body)
        visit_wg(self.f.body)
        for key in chosen:              # group-level statements from now on
            self.memo[key] = True
        return chosen

    def _induction_steps(self):
        """Variables of lockstep loops that advance by a uniform step: {var: (id(loop), sign,
        step expression or None for 1)}. Such a variable (e.g. `i` of `for (i = gid; i < n;
        i += get_global_size(0))`) is written once, by the loop's increment or by a top-level
        statement of a body without `continue`, read only inside the loop, and its initialiser
        is rematerialisable: in iteration t every work-item still in the loop holds init + t·step,
        which lockstep_loop recomputes from the region's work-item index instead of loading it
        from a per-work-item array (contiguous accesses, no gathers)."""
        found = {}
        uses = {}
        writes = {}

        decl_inits = {}                # variables declared with an initialiser: the initialiser

        def count(n):
            if n.op == "decl" and len(n.kids) == 1:
                decl_inits[n.val] = n.kids[0]
            if n.op == "var" and isinstance(n.val, Var):
                uses[n.val] = uses.get(n.val, 0) + 1
            elif n.op in ("assign", "cassign", "incdec", "addr", "decay"):
                x = n.kids[0]      # a component or member written writes its variable (`v.x = lid`)
                while x.op in ("swz", "vindex", "member") and x.kids and not (x.op == "member" and x.val[1]):
                    x = x.kids[0]
                if x.op == "var":
                    writes[x.val] = writes.get(x.val, 0) + 1
        walk(self.f.body, count)
        # never written after a uniform initialiser (`int gsize = get_global_size(0);`): uniform
        self._uniform_vars = {v: e for v, e in decl_inits.items()
                              if v not in writes and v.storage == "private" and not v.volatile}

        self._for_starts = {}          # {var: its for-init value} (`long i; for (i = gid; ...)`)
        for key, loop in self._lockstep_nodes.items():
            body = loop.kids[3] if loop.op == "for" else loop.kids[1] if loop.op == "while" else loop.kids[0]
            cands = []
            start = None
            if loop.op == "for":
                cands.append(induction_update(loop.kids[2]))
                init = loop.kids[0]
                if init is not None and init.op == "expr" and init.kids and init.kids[0].op == "assign" \
                        and init.kids[0].kids[0].op == "var":
                    start = init.kids[0].kids[0].val, init.kids[0].kids[1]
            has_continue = []
            walk(body, lambda x: has_continue.append(x) if x.op == "continue" else None)
            if not has_continue:
                stmts = body.kids if body.op == "block" else [body]
                cands += [induction_update(x.kids[0]) for x in stmts if x is not None and x.op == "expr" and x.kids]
            inside = {}

            def count_inside(n):
                if n.op == "var" and isinstance(n.val, Var):
                    inside[n.val] = inside.get(n.val, 0) + 1
            walk(loop, count_inside)
            for c in cands:
                if c is None:
                    continue
                v, sign, step = c
                t = v.type
                from_init = start is not None and start[0] is v and v not in decl_inits
                if (v.storage == "private" and t.is_scalar and t.is_int and not t.is_bool and not v.volatile
                        and writes.get(v) == 1 + from_init and uses.get(v) == inside.get(v)
                        and (step is None or self._uniform(step)) and v not in found):
                    found[v] = (key, sign, step)
                    if from_init:
                        self._for_starts[v] = start[1]
        return found

    def _uniform(self, e, outer=frozenset()):
        """Whether e has one value for the whole group: constants, unmodified parameters, sizes,
        group ids, variables never written after such an initialiser, and arithmetic on them
        (no integer division: it is evaluated where the program may not). outer: the variables
        whose initialisers are being looked into (`int g = g;` is not uniform)."""
        op = e.op
        if op in ("const", "zero"):
            return not (e.type.is_struct or e.type.is_array)
        if op == "load":
            v = e.kids[0]
            if v.op == "var" and v.val in self._uniform_vars and v.val not in outer:
                return self._uniform(self._uniform_vars[v.val], outer | {v.val})
            return (v.op == "var" and v.val.storage == "param" and not v.val.volatile
                    and v.val not in self._written_params)
        if op == "builtin":
            if e.val not in _UNIFORM_BUILTINS:
                return False
        elif op not in ("conv", "astype", "bin", "unary"):
            return False
        elif op == "bin" and e.val in ("/", "%") and not e.type.is_float:
            return False
        return all(self._uniform(x, outer) for x in e.kids if isinstance(x, Node))

    def _rematerialisable(self, pw, written, steps=()):
        """Group-level variables recomputed in every region instead of kept in per-work-item
        arrays: declared once with a pure initialiser of work-item ids/sizes, unmodified
        parameters, constants and other such variables, never written afterwards (e.g.
        `int lid = get_local_id(0);`, `__global float *x = base + offset;`). The value is the
        same wherever it is computed, and LLVM sees `lid` as the loop index (no gathers)."""
        inits = {}

        def visit(n):
            if n.op in ("assign", "cassign", "incdec", "addr", "decay"):
                x = n.kids[0]
                while x.op in ("swz", "vindex", "member") and x.kids and not (x.op == "member" and x.val[1]):
                    x = x.kids[0]
                if x.op == "var":
                    written.add(x.val)
            elif n.op == "decl" and isinstance(n.val, Var):
                inits[n.val] = n.kids[0] if len(n.kids) == 1 else self._for_starts.get(n.val)
        walk(self.f.body, visit)
        written = written - set(steps)
        remat = {}

        def pure(e):
            if e is None:
                return False
            op = e.op
            if op in ("const", "zero"):
                return not (e.type.is_struct or e.type.is_array)
            if op == "load":
                v = e.kids[0]
                return v.op == "var" and (v.val in remat or (v.val.storage == "param" and v.val not in written
                                                                 and not v.val.volatile))
            if op in ("decay", "addr"):
                v = e.kids[0]
                return v.op == "var" and v.val.storage in ("local", "constant")
            if op == "builtin":
                if e.val not in _PURE_BUILTINS:
                    return False
            elif op not in ("conv", "astype", "swz", "bin", "unary", "cond", "land", "lor", "veclit"):
                return False
            elif op == "bin" and e.val in ("/", "%") and not e.type.is_float:
                return False           # may trap: regions on paths without the declaration compute it too
            return all(pure(x) for x in e.kids if isinstance(x, Node))

        for v in pw:                   # declaration order: a variable may use earlier ones
            t = v.type
            if (v.storage == "private" and v in inits and v not in written and not v.volatile
                    and not (t.is_struct or t.is_array) and inits[v] is not None
                    and inits[v].op != "initlist" and pure(inits[v])):
                remat[v] = inits[v]
        return remat

    # ------------------------------------------------------------------ emission
    def emit(self):
        k, fn = self.f, self.fn
        pw = self._analyse()
        args_p, ctx = fn.args
        entry = fn.append_basic_block("entry")
        self.entry = entry
        self.abuild = Builder(entry)
        setup = fn.append_basic_block("setup")
        b = self.b = Builder(setup)
        reqd = workgroup.required_size(k)
        self.wi, self.slots = workgroup.work_item_state(self.abuild, b, ctx, reqd)
        self.group_frame = self.mg.instr.frame(k, self.abuild, b, self.wi, args_p)
        self.values = b.values = self.mg.instr.values(self)
        self.sizes = workgroup.local_sizes(b, ctx, reqd)
        self.lx, self.ly, self.lz = self.sizes
        exit_bb = workgroup.skip_empty_group(b, fn, self.sizes)
        nwi = b.mul(b.mul(self.lx, self.ly), self.lz)

        # rematerialised variables: a register, recomputed at the start of each region
        self.remat_live = []
        for v in self.remat:
            self.vars[v] = self.alloca(v.type, v.name)

        # per-work-item storage: arrays ordered by decreasing alignment
        pw.sort(key=lambda v: -max(v.type.align, 1))
        frame = sum(v.type.size for v in pw) + (1 if self.track_returns else 0) + \
            (self.values.frame_bytes(pw) if self.values is not None else 0)
        self.pw = {}
        heap = None
        if frame:
            total = b.mul(nwi, I64(frame))
            big = b.icmp_unsigned(">", total, I64(STACK_LIMIT))
            malloc = self.mg.intrinsic("malloc", PTR, [I64])
            heap_bb = fn.append_basic_block("pw.heap")
            stack_bb = fn.append_basic_block("pw.stack")
            have_bb = fn.append_basic_block("pw.have")
            b.cbranch(big, heap_bb, stack_bb)
            b.position_at_end(heap_bb)
            hp = b.call(malloc, [total])
            b.branch(have_bb)
            b.position_at_end(stack_bb)
            sp = b.alloca(I8, size=total)
            sp.align = 128
            b.branch(have_bb)
            b.position_at_end(have_bb)
            base = b.phi(PTR)
            base.add_incoming(hp, heap_bb)
            base.add_incoming(sp, stack_bb)
            heap = (big, base)
            off = I64(0)
            for v in pw:
                self.pw[v] = b.gep(base, [off], inbounds=True, source_etype=I8)
                off = b.add(off, b.mul(nwi, I64(v.type.size)))
            if self.values is not None:         # (PYPLAT_CHECK=uninit: their values' shadows)
                off = self.values.per_work_item(b, base, off, nwi, pw)
            if self.track_returns:
                self.returned = b.gep(base, [off], inbounds=True, source_etype=I8)
                self.memset(self.returned, nwi)

        # parameters: uniform ones in one slot, modified ones per work-item
        self.param_vals = {}
        for i, p in enumerate(k.params):
            t = p.type
            val = workgroup.argument(b, args_p, i, t)
            if p in self.pw:
                self.param_vals[p] = val
            else:
                a = self.alloca(t, p.name)
                self.store(val, a, t)
                self.vars[p] = a
        init = [p for p in k.params if p in self.pw]
        if init:
            def init_params():
                for p in init:
                    self.store(self.param_vals[p], self.pw_ptr(p), p.type)
            self.region(init_params)

        self.wg_stmt(k.body)
        b = self.b
        if heap is not None:
            big, base = heap
            free_bb = fn.append_basic_block("pw.free")
            b.cbranch(big, free_bb, exit_bb)
            b.position_at_end(free_bb)
            b.call(self.mg.intrinsic("free", VOIDT, [PTR]), [base])
        b.branch(exit_bb)
        b.position_at_end(exit_bb)
        if self.values is not None:
            self.values.finish()
            b.values = None             # (the epilogue is the instrumentation's own code)
        b.ret(workgroup.group_result(self.mg, b, self.group_frame, k, self.wi))
        self.abuild.branch(setup)

    def memset(self, dst, size):
        f = self.mg.intrinsic("llvm.memset.p0.i64", VOIDT, [PTR, I8, I64, I1])
        self.b.call(f, [dst, I8(0), size, I1(0)])

    def pw_ptr(self, v):
        """Work-item `lin`'s copy of v. Inside a region, a scalar or vector whose address is never
        taken is a register copy instead (_cached), loaded at the region's start and stored
        back at its end for every work-item, active or not: the vectoriser then makes plain
        vector loads and stores of the array, not masked ones under the work-items' `if`s
        (masked stores of a lockstep loop's accumulator, reloaded the next iteration, stall).
        Not under value hooks (PYPLAT_CHECK=uninit: its shadows follow the arrays)."""
        if (self.cache is not None and self.values is None and v not in self._escaped
                and (v.type.is_scalar or v.type.is_vector or v.type.is_pointer)):
            return self._cached(v)
        p = self._pw_slot(v)
        if self.values is not None:
            self.values.per_work_item_at(self.b, p, v, self.lin)
        return p

    def _pw_slot(self, v):
        return self.b.gep(self.pw[v], [self.lin], inbounds=True, source_etype=T.mem_llvm(v.type))

    def _cached(self, v):
        a = self.cache.get(v)
        if a is None:
            a = self.cache[v] = self.alloca(v.type, v.name + ".r")
            cb = Builder(self.cache_bb)
            cb.position_before(self.cache_bb.terminator)
            mt, align = T.mem_llvm(v.type), max(v.type.align, 1)
            slot = cb.gep(self.pw[v], [self.lin], inbounds=True, source_etype=mt)
            cb.store(cb.load(slot, typ=mt, align=align), a, align=align)
        return a

    def _store_back(self, first_block):
        """At a region's end: each cached variable that an instruction of the region may have
        written (any use of its copy other than a load) goes back to its array."""
        if not self.cache:
            return
        blocks = self.fn.blocks[first_block:]
        written = {id(op) for bb in blocks for ins in bb.instructions if not isinstance(ins, ir.LoadInstr)
                   for op in ins.operands}
        b = self.b
        for v, a in self.cache.items():
            if id(a) in written:
                mt, align = T.mem_llvm(v.type), max(v.type.align, 1)
                b.store(b.load(a, typ=mt, align=align), self._pw_slot(v), align=align)

    # ------------------------------------------------------------------ regions
    def region(self, body_fn, x_bound=None):
        """Emit a loop over all work-items of the group running body_fn's code for each;
        x_bound (a positive constant): only those whose local id 0 is below it (_x_bound)."""
        self.mg.regions += 1
        sizes = self.sizes
        if x_bound is not None:
            lx = self.lx
            sizes = (self.b.select(self.b.icmp_unsigned("<", lx, I64(x_bound)), lx, I64(x_bound)),) + sizes[1:]
        workgroup.loop_nest(self.b, self.fn, self.slots, sizes,
                            lambda z, y, x: self.region_body(z, y, x, body_fn), "r.")
        self.lin = None

    def _x_bound(self, stmts):
        """A region that is only `if (lid < c) ...` without else, lid the local id 0 (through
        integer conversions of 32 bits or more, or a rematerialised variable holding it) and c
        an integer constant in [0, 2^31): work-items with lid >= c do nothing, so the region
        loops over the first c only (a tree reduction's `if (lid < s)` steps cost s work-items,
        not the whole group's). Returns c (`<=`: c + 1), or None."""
        if len(stmts) != 1 or stmts[0] is None or stmts[0].op != "if" or stmts[0].kids[2] is not None:
            return None
        cond = stmts[0].kids[0]
        while cond.op == "conv" and cond.type.is_scalar and not cond.type.is_float:
            cond = cond.kids[0]
        if cond.op != "bin" or cond.val not in ("<", "<=") or len(cond.kids) != 2:
            return None
        lhs, rhs = cond.kids
        while rhs.op == "conv" and rhs.kids[0].op == "const":
            rhs = rhs.kids[0]
        if rhs.op != "const" or not isinstance(rhs.val, int) or rhs.type.is_float:
            return None
        c = rhs.val + (cond.val == "<=")
        if not 0 <= c < 2 ** 31 or not self._is_local_id0(lhs):
            return None
        return c

    def _is_local_id0(self, e):
        while e.op in ("conv", "astype") and e.type.is_scalar and not e.type.is_float and e.type.size >= 4:
            e = e.kids[0]
        if e.op == "load" and e.kids[0].op == "var" and e.kids[0].val in self.remat:
            init = self.remat[e.kids[0].val]
            return init is not None and self._is_local_id0(init)
        return (e.op == "builtin" and e.val == "get_local_id" and len(e.kids) == 1
                and e.kids[0].op in ("const", "conv") and self._constant_value(e.kids[0]) == 0)

    @staticmethod
    def _constant_value(e):
        while e.op == "conv":
            e = e.kids[0]
        return e.val if e.op == "const" and isinstance(e.val, int) else None

    def region_body(self, z, y, x, body_fn):
        """One work-item's code in a region: skipped once it returned; `return` and group-level
        break/continue jump to the region's next work-item (region_next)."""
        b, fn = self.b, self.fn
        self.lin = b.add(b.mul(b.add(b.mul(z, self.ly), y), self.lx), x)
        self.cache_bb = fn.append_basic_block("r.cache")     # the cached copies' loads (pw_ptr)
        b.branch(self.cache_bb)
        first_block = len(fn.blocks)
        start_bb = fn.append_basic_block("r.start")
        Builder(self.cache_bb).branch(start_bb)
        b.position_at_end(start_bb)
        self.cache = {}
        nxt_bb = fn.append_basic_block("r.next")
        saved = self.region_next
        self.region_next = nxt_bb
        if self.track_returns:
            body_bb = fn.append_basic_block("r.body")
            done = b.load(b.gep(self.returned, [self.lin], inbounds=True, source_etype=I8), typ=I8)
            b.cbranch(b.icmp_unsigned("!=", done, I8(0)), nxt_bb, body_bb)
            b.position_at_end(body_bb)
        for v in self.remat_live:      # declared in an earlier region
            self.init_mem(self.vars[v], v.type, self.remat[v])
        body_fn()
        if not b.block.is_terminated:
            b.branch(nxt_bb)
        b.position_at_end(nxt_bb)
        self._store_back(first_block)
        self.cache = None
        self.region_next = saved

    def group_flag(self, name, ty=I1):
        a = self.abuild.alloca(ty, name=name)
        self.abuild.store(ty(0), a)
        return a

    def uniform(self, cond):
        """The group's value (i1) of a condition every work-item evaluates."""
        v = constant_int(cond)
        if v is not None and (v == 0 or not self.track_returns):
            # no region for a constant (barrier_flow's `do { } while (0)`); where work-items
            # may have returned, a true one still asks whether any is left (else 0)
            return I1(v != 0)
        flag = self.group_flag("uniform")
        self.b.store(I1(0), flag)

        def ev():
            self.b.store(self.truth(self.rv(cond), cond.type), flag)
        self.region(ev)
        return self.b.load(flag, typ=I1)

    def run_region(self, stmts):
        loop = self.loops[-1] if self.loops and isinstance(self.loops[-1], _WGLoop) else None

        def body():
            for s in stmts:
                self.stmt(s)
        bound = self._x_bound(stmts)
        if bound is None:
            self.region(body)
        elif bound > 0:
            self.region(body, x_bound=bound)
        if loop is not None:
            b = self.b
            for flag, target in ((loop.brk, loop.end_bb), (loop.cont, loop.inc_bb)):
                if flag is None:
                    continue
                v = b.load(flag, typ=I1)
                go = self.fn.append_basic_block("wg.jump")
                stay = self.fn.append_basic_block("wg.stay")
                b.cbranch(v, go, stay)
                b.position_at_end(go)
                b.store(I1(0), flag)
                b.branch(target)
                b.position_at_end(stay)

    def wg_stmt(self, n):
        if n is None:
            return
        b = self.b
        if not has_barrier(n, self.memo):
            self.run_region([n])
            return
        op = n.op
        if op == "barrier":
            if self.group_frame is not None:          # (PYPLAT_CHECK=races: the next epoch)
                self.mg.instr.barrier(b, self.group_frame)
            return
        if op == "block":
            run = []
            for k in n.kids:
                if k is not None and has_barrier(k, self.memo):
                    if run:
                        self.run_region(run)
                        run = []
                    self.wg_stmt(k)
                else:
                    run.append(k)
            if run:
                self.run_region(run)
            return
        if op == "if":
            c, then, els = n.kids
            cv = self.uniform(c)
            t_bb = b.append_basic_block("wg.then")
            e_bb = b.append_basic_block("wg.else") if els is not None else None
            end = b.append_basic_block("wg.endif")
            b.cbranch(cv, t_bb, e_bb or end)
            b.position_at_end(t_bb)
            self.wg_stmt(then)
            b.branch(end)
            if els is not None:
                b.position_at_end(e_bb)
                self.wg_stmt(els)
                b.branch(end)
            b.position_at_end(end)
            return
        if op in ("for", "while", "do") and id(n) in self.lockstep:
            lockstep_regions.lockstep_loop(self, n, self.lockstep[id(n)])
            return
        if op in ("for", "while", "do"):
            if op == "for" and n.kids[1] is None and self.track_returns:
                # `for (;;)`: ends once every work-item returned (uniform() of a true constant)
                n = Node("for", kids=[n.kids[0], Node("const", T.INT, val=1, cur=n.cur)] + n.kids[2:], cur=n.cur)

            def body(stmt, end_bb, inc_bb):
                self.loops.append(_WGLoop(end_bb, inc_bb))
                self.wg_stmt(stmt)
                self.loops.pop()
            self.emit_loop(n, "wg", lambda init: self.run_region([init]), self.uniform, body,
                           lambda inc: self.run_region([Node("expr", kids=[inc], cur=inc.cur)]))
            return
        raise CompileError("barrier() inside this statement is not supported yet", n.cur)

    # ------------------------------------------------------------------ overrides inside regions
    def lvalue(self, n):
        if n.op == "var" and n.val in self.pw:
            if self.lin is None:
                self.err("internal: per-work-item variable outside a region", n)
            return LV("addr", self.pw_ptr(n.val), n.type)
        return FuncGen.lvalue(self, n)

    def stmt(self, n):
        if n is None:
            return
        if self.mg.line_tables is not None:
            self.mg.line_tables.mark(self.b, n)
        op = n.op
        b = self.b
        if op in ("return", "break", "continue", "decl", "barrier"):
            if b.block.is_terminated:
                b.position_at_end(b.append_basic_block("dead"))
        if op == "decl" and n.val in self.remat:
            if not n.kids:             # started by its lockstep loop's init (lockstep_loop)
                return
            self.init_mem(self.vars[n.val], n.val.type, n.kids[0])
            if n.val not in self.remat_live:
                self.remat_live.append(n.val)
            return
        if op == "decl" and n.val in self.pw:
            if n.kids:
                self.init_mem(self.pw_ptr(n.val), n.val.type, n.kids[0])
            return
        if op == "return":
            if n.kids:
                self.rv(n.kids[0])
            b.store(I8(1), b.gep(self.returned, [self.lin], inbounds=True, source_etype=I8))
            b.branch(self.region_next)
            return
        target = (self.loops[-1] if self.loops else None) if op == "break" else self.continue_target()
        if op in ("break", "continue") and isinstance(target, _WGLoop):
            loop = target
            attr = "brk" if op == "break" else "cont"
            flag = getattr(loop, attr)
            if flag is None:
                flag = self.group_flag(attr)
                setattr(loop, attr, flag)
            b.store(I1(1), flag)
            b.branch(self.region_next)
            return
        if op == "barrier":
            self.err("barrier() inside this statement is not supported yet", n)
        FuncGen.stmt(self, n)
