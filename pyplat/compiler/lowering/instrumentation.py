"""Lowering's instrumentation interface: the defined points at which a tool adds code to the IR
that lowering makes (Oclgrind's plugins are the model, at compile time).

`ModuleGen.instr` is an Instrumentation. This class adds nothing, so a build without a tool is
lowering's own IR; the driver installs a subclass for a checked build (PYPLAT_CHECK:
pyplat/compiler/checker/instrument.py). Lowering imports no tool: it calls these methods, and a
tool may import lowering's IR-building helpers (irbuild, workgroup, barrier_tree, tree_walk).

The points, and who calls them:

* module (module.py): `start` before any function is lowered; `kernel_versions` /
  `plain_versions` around each kernel's work-group function (a tool may make several versions
  and a dispatcher); `finish` once every function is lowered; `metadata` for the kernels'
  metadata (driver.py);
* work-group function (workgroup.py, barriers.py): `frame` in its prologue, `barrier` at each
  barrier of a kernel lowered whole, `group_result` at its end (what it returns);
* function (function.py, barriers.py): `values` gives the function's ValueHooks (below) or None;
* memory (expressions.py, builtins): `access` when an lvalue through a pointer is made, its token
  kept in LV.check; `load` / `store` of such an lvalue; `builtin_access` around a builtin's load
  or store (vloadN/vstoreN, atomics); `local_written` after a builtin wrote `__local` bytes
  (async copies); `object_of` / `object_range` for a lockstep pass whose accesses lowering
  tests once for the whole pass (lockstep_ranges.py);
* integer division (operators.py): `division`, before lowering replaces a zero divisor.

A hook receives the function generator `g` (FuncGen or BarrierKernelGen) and may use what it
shows: g.mg, g.f (the typed tree's function), g.fn, g.b (its Builder), g.abuild (its entry
block's), g.wi (the work-item state), g.values, g.wi_slot(), g.local_mem(), g.load(), g.store();
g.whole_group (True: a work-group function lowered in one piece, barriers.py) and g.in_range
(ids of accesses whose bounds lowering tested for the whole lockstep pass being lowered).
"""
from .irbuild import I32


class Instrumentation:
    """The hooks, each doing what lowering does without a tool."""
    active = False          # a tool adds code (lowering then keeps plain forms: switch_table.py)

    # ------------------------------------------------------------------ module
    def start(self, kernels):
        """Before lowering: the kernels the module exports."""

    def kernel_versions(self, k, name, emit):
        """Kernel k's work-group function `name`, lowered whole (barriers.py) by emit(name)."""
        emit(name)

    def plain_versions(self, k, emit_body, emit_loop):
        """The work-group function of kernel k without barriers; returns its name. emit_loop(name=None,
        body=None): the loop nest around its body (workgroup.plain_workgroup_function);
        emit_body(k): k's body lowered again into mg.fns[k]."""
        return emit_loop()

    def finish(self):
        """Every function is lowered."""

    def metadata(self):
        """What the tool records in the kernels' metadata (metadata.kernel_meta), or None."""
        return None

    # ------------------------------------------------------------------ work-group function
    def frame(self, k, alloca_b, b, wi, args_p):
        """In the prologue of kernel k's work-group function (allocas by alloca_b, code by b):
        the tool's per-group state, reachable through the work-item state `wi`, or None."""
        return None

    def barrier(self, b, frame):
        """At a barrier of the group (a kernel lowered whole), where frame is not None."""

    def group_result(self, b, frame, k, wi):
        """At the work-group function's end, where frame is not None: its i32 result (1: the
        group had a finding, which fails the command)."""
        return I32(0)

    # ------------------------------------------------------------------ functions
    def values(self, g):
        """The ValueHooks of the function g starts to lower, or None."""
        return None

    # ------------------------------------------------------------------ memory
    def access(self, g, n, pointer):
        """An access n (index, deref, member through a pointer) through the pointer expression
        `pointer`: a token for LV.check (load and store then receive that lvalue), or None."""
        return None

    def load(self, g, lv):
        """The value of lvalue lv, whose check is a token of access()."""
        return g.load(lv.ptr, lv.type, lv.align)

    def store(self, g, lv, v):
        """Store v to lvalue lv, whose check is a token of access()."""
        g.store(v, lv.ptr, lv.type, lv.align)

    def builtin_access(self, g, n, pointer, addr, nbytes, access, do, atomic=False):
        """do(): a builtin call n's load (returns the value) or store (returns None) of nbytes at
        addr through the pointer expression `pointer`; access: "read" or "write"."""
        return do()

    def local_written(self, g, pointer, addr, nbytes):
        """A builtin wrote nbytes (an i64 value) at addr through the pointer expression `pointer`."""

    def object_of(self, g, pointer):
        """The object the pointer expression `pointer` derives from, where the tool knows one and
        its bounds (object_range), else None."""
        return None

    def object_range(self, g, obj):
        """(address, size) of object_of's obj, as i64 values."""
        raise NotImplementedError

    # ------------------------------------------------------------------ arithmetic
    def division(self, g, n, zero, size):
        """An integer division or remainder n whose divisor is 0 where `zero` (i1, or a vector of
        i1) holds; lowering then divides by 1 there. size: the element's bytes."""


class ValueHooks:
    """Per-function hooks that follow the values lowering makes (Instrumentation.values). The
    function's Builder calls before/after for every instruction it inserts while `quiet` is
    False (irbuild.Builder._insert); lowering sets `node` to each expression it lowers."""
    quiet = False
    node = None

    def before(self, b, instr):
        """instr is about to be inserted by b."""

    def after(self, b, instr):
        """instr was inserted by b."""

    def variable(self, alloca, t):
        """A private variable of type t was made (FuncGen.alloca)."""

    def branch_on(self, b, cond):
        """An `if`, `?:`, `&&` or `||` branches on cond next; returns what end_branch gets."""
        return None

    def end_branch(self, saved):
        """The branch_on that returned `saved` has ended."""

    def chosen_by(self, b, phi, cond):
        """phi joins the arms of a branch on cond."""

    def frame_bytes(self, variables):
        """Bytes per work-item the hooks need after the per-work-item `variables` (barriers.py)."""
        return 0

    def per_work_item(self, b, base, off, nwi, variables):
        """The per-work-item `variables` lie at `base` before byte offset off (nwi work-items);
        returns the offset after the hooks' own (frame_bytes)."""
        return off

    def per_work_item_at(self, b, p, v, lin):
        """p: per-work-item variable v's copy of work-item `lin`."""

    def finish(self):
        """The function's body is lowered (its epilogue, if any, is not followed)."""
