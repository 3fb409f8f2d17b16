"""ModuleGen: one LLVM module for a translation unit: intrinsics and C functions, constant
globals and strings, one LLVM function per OpenCL function used, and generate(), which emits each
kernel's exported work-group function (workgroup.py without barriers, barriers.py with them).

Each OpenCL function becomes an internal, always-inline LLVM function (`k.<name>` for kernels,
`f.<name>` for helpers; in a program too large to inline fully, some helpers are left to
LLVM's inliner: inline_budget.py) taking the hidden work-item state first; compiled objects give the
functions they export another linkage (self.linkage).
"""
import bisect as _bisect
import struct as _struct

from llvmlite import ir

from .. import progvars as PV
from ..builtins.printf import emit_host_printf
from ..tree import CompileError
from . import barrier_tree, group_stride, inline_budget, workgroup
from .barriers import BarrierKernelGen
from .function import FuncGen
from .instrumentation import Instrumentation
from .irbuild import I8, PTR, VOIDT


class ModuleGen:
    PRINTF_STRING_POINTERS = True      # printf's %s may take a pointer (else: string literals only)
    # One thread runs a whole work-group and owns its local memory: atomics on __local need no
    # atomic instruction (builtins/atomics.py).
    GROUP_IN_ONE_THREAD = True
    # Helpers of a program too large to inline fully are left to LLVM's inliner
    # (inline_budget.py); the NVPTX target keeps every call inline (no calls in its PTX).
    INLINE_BUDGET = True
    # A large switch that is a table may become constant arrays (switch_table.py); the NVPTX
    # target keeps the switch (its constants live in other address spaces).
    SWITCH_TABLES = True

    def __init__(self, opts, triple="", data_layout=""):
        self.module = ir.Module(name="pyplat")
        self.module.triple = triple
        self.module.data_layout = data_layout
        self.opts = opts
        self.fast = opts.fast_math
        self.fns = {}
        self.globals = {}
        self.intrinsics = {}
        self.pending = []
        self.regions = 0               # parallel regions emitted for kernels with barriers
        self.linkage = {}              # Func -> LLVM linkage when not internal (compiled objects)
        self.unforced = set()          # Funcs not forced inline (inline_budget.py)
        self.export_vars = False       # a compiled object: program-scope variables are linkable
        self.var_symbols = {}          # name -> (size, declared only) of those (export_vars)
        self.fp_contract = None        # pragmas.FPContract where the program has FP_CONTRACT pragmas
        self.printf_formats = {}       # format id -> (C format, value kinds): NVPTX's printf records
        self.line_tables = None        # -g on the host: line_tables.LineTables (targets/host.py)
        # a tool's hooks (instrumentation.py; PYPLAT_CHECK's checker on host builds: targets/host.py)
        self.instr = Instrumentation()

    # -------------------------------------------------------------- helpers
    def intrinsic(self, name, ret, args, var_arg=False):
        f = self.intrinsics.get(name)
        if f is None:
            f = self.module.globals.get(name)
            if f is None:
                f = ir.Function(self.module, ir.FunctionType(ret, args, var_arg=var_arg or name == "snprintf"),
                                name=name)
            self.intrinsics[name] = f
        return f

    def float_remainder(self, g, a, c, t):
        """fmod(a, c) of type t: LLVM's frem, which the host's back end makes exact."""
        return g.b.frem(a, c)

    def emit_printf(self, g, c_format, values):
        """printf's call (builtins/printf.py parsed it): C format bytes and vararg values."""
        return emit_host_printf(g, c_format, values)

    def memory_fence(self, b):
        """mem_fence(): nothing to emit, one thread runs the work-group in program order."""

    def global_var(self, v):
        """The LLVM global of a __constant variable: internal (function scope, static, or any in
        a program built whole), `g.<name>` with external linkage for the program-scope ones a
        compiled object defines (self.export_vars), or an external declaration for those it only
        declares (`extern constant ...`: defined in another unit, resolved by the linker)."""
        g = self.globals.get(v)
        if g is None:
            t = v.type
            size = t.size
            c = v.cur
            scope = PV.is_program_scope(c) and not PV.is_static(c)
            declared = scope and v.init is None and not c.is_definition()
            if declared and not self.export_vars:
                raise CompileError("variable '%s' is declared but not defined (compile with "
                                   "clCompileProgram and link the unit that defines it)" % v.name, c)
            if scope and self.export_vars:
                name = "g." + v.name
                self.var_symbols[v.name] = (size, declared)
            else:
                name = "__const.%s.%d" % (v.name, len(self.globals))
            init = None if declared else _image(t, v.init)
            g = ir.GlobalVariable(self.module, init.type if init is not None else ir.ArrayType(I8, size),
                                  name=name)
            g.global_constant = True
            g.align = max(t.align, 1)
            if not declared:
                g.initializer = init
                g.linkage = "" if name.startswith("g.") else "internal"     # "": external
            self.globals[v] = g
        return g

    def string(self, data):
        g = self.globals.get(("str", data))
        if g is None:
            ty = ir.ArrayType(I8, len(data))
            g = ir.GlobalVariable(self.module, ty, name="__str.%d" % len(self.globals))
            g.initializer = ir.Constant(ty, bytearray(data))
            g.global_constant = True
            g.linkage = "internal"
            self.globals[("str", data)] = g
        return g

    def function(self, f):
        fn = self.fns.get(f)
        if fn is None:
            args = [PTR]
            if f.ret.is_struct:
                args.append(PTR)
            for p in f.params:
                args.append(PTR if p.type.is_struct else p.type.llvm())
            ret = VOIDT if (f.ret.is_struct or f.ret.is_void) else f.ret.llvm()
            fn = ir.Function(self.module, ir.FunctionType(ret, args), name=("k." if f.is_kernel else "f.") + f.name)
            fn.attributes.add("nounwind")
            if f.body is None:         # declared only: defined in another compilation unit
                self.fns[f] = fn
                return fn
            fn.linkage = self.linkage.get(f, "internal")
            if f not in self.unforced:
                fn.attributes.add("alwaysinline")
            off = 2 if f.ret.is_struct else 1
            for i, p in enumerate(f.params):
                if p.restrict and p.type.is_pointer:
                    fn.args[i + off].add_attribute("noalias")
            self.fns[f] = fn
            self.pending.append(f)
        return fn

    def generate(self, kernels, exported=()):
        """Emit the kernels' work-group functions and every function they use; `exported`:
        further functions to emit (compiled objects: callable from other units)."""
        for k in kernels:
            barrier_tree.inline_barrier_functions(k)
        if self.INLINE_BUDGET:         # (after the barrier helpers are inlined on the tree)
            self.unforced = inline_budget.left_to_llvm(list(kernels) + list(exported))
        for f in exported:
            self.function(f)
        self.instr.start(kernels)
        memo = {}
        with_barriers = [k for k in kernels if barrier_tree.has_barrier(k.body, memo)]
        strided = [k for k in kernels if k not in with_barriers and not barrier_tree.uses_goto(k.body)
                   and group_stride.qualifies(k, workgroup.required_size(k))]
        for k in with_barriers:
            if barrier_tree.uses_goto(k.body):
                raise CompileError("kernel '%s' uses goto together with barrier() (also counted: goto in "
                                   "barrier-using functions it calls, which are inlined): not supported" % k.name, k.cur)
        names = {}
        for k in kernels:
            if k not in with_barriers:
                self.function(k)
        for k in with_barriers + strided:   # (strided: their functions are made above too)
            names[k.name] = workgroup.name_of(k)
            self.instr.kernel_versions(k, names[k.name],
                                       lambda name, k=k: BarrierKernelGen(self, k, name).emit())
        while self.pending:
            f = self.pending.pop()
            FuncGen(self, f).emit()
        for k in kernels:
            if k not in with_barriers and k not in strided:
                names[k.name] = self.workgroup_function(k)
        self.instr.finish()
        if self.line_tables is not None:
            self.line_tables.finish()
        return names

    def workgroup_function(self, k):
        """The work-group function of kernel k without barriers (its body lowered already), made
        through the instrumentation (which may make versions of it)."""
        def loop_nest(name=None, body=None):
            return workgroup.plain_workgroup_function(self, k, name, body)
        return self.instr.plain_versions(k, lambda f: FuncGen(self, f).emit(), loop_nest)


_GAP = 64      # zero runs at least this long become zeroinitializer parts of an initialiser


def _image(t, init):
    """The LLVM constant of `size` bytes holding initialiser `init` of type t: [N x i8] when it
    is dense, else a packed struct of its written runs and [K x i8] zeroinitializer for the zero
    runs between and after them (`int big[1 << 18] = {1}` is 4 bytes and 1 MiB - 4 of zeros, and
    nothing materialises the zeros); the global is indexed through byte offsets, so only its size
    and alignment matter."""
    size = t.size
    pieces = []
    if init is not None:
        _pack(pieces, 0, t, init)
    spans = []                         # [start, end) of runs of written bytes, merged over short gaps
    for off, data in sorted(pieces, key=lambda p: p[0]):
        if spans and off - spans[-1][1] < _GAP:
            spans[-1][1] = max(spans[-1][1], off + len(data))
        else:
            spans.append([off, off + len(data)])
    if size - sum(e - s for s, e in spans) < _GAP:       # dense: one byte array, as always
        spans = [[0, size]]
    bufs = [bytearray(e - s) for s, e in spans]
    starts = [s for s, _ in spans]
    for off, data in pieces:           # in the order written: a later write wins
        i = _bisect.bisect_right(starts, off) - 1
        bufs[i][off - starts[i]:off - starts[i] + len(data)] = data
    if len(spans) == 1 and spans[0] == [0, size]:
        return ir.Constant(ir.ArrayType(I8, size), bufs[0])
    parts, at = [], 0
    for (s, e), buf in zip(spans, bufs):
        if s > at:
            parts.append(ir.Constant(ir.ArrayType(I8, s - at), None))
        parts.append(ir.Constant(ir.ArrayType(I8, e - s), buf))
        at = e
    if size > at:
        parts.append(ir.Constant(ir.ArrayType(I8, size - at), None))
    ty = ir.LiteralStructType([p.type for p in parts], packed=True)
    return ir.Constant(ty, parts)


def _items(v):
    """(index, value) of an initialiser's members: a dict (brace lists), a list or one value."""
    if isinstance(v, dict):
        return sorted(v.items())
    return enumerate(v if isinstance(v, list) else [v])


def _pack(out, off, t, v):
    """Appends (offset, bytes) to `out` for the initialised scalars of value v of type t."""
    if v is None:                      # a member without initialiser: zero
        return
    if t.is_scalar:
        if t.is_float:
            out.append((off, _struct.pack({16: "<e", 32: "<f", 64: "<d"}[t.bits], float(v))))
        else:
            out.append((off, _struct.pack("<" + {8: "B", 16: "H", 32: "I", 64: "Q"}[t.bits],
                                          int(v) & ((1 << t.bits) - 1))))
    elif t.is_vector or t.is_array:
        vals = [v] * t.count if t.is_vector and not isinstance(v, (list, dict)) else v
        for i, x in _items(vals):
            if i < t.count:
                _pack(out, off + i * t.elem.size, t.elem, x)
    elif t.is_struct:
        fields = sorted(t.fields.values(), key=lambda p: p[0])
        for i, x in _items(v):
            if i < len(fields):
                _pack(out, off + fields[i][0], fields[i][1], x)
    elif t.is_pointer:
        out.append((off, _struct.pack("<Q", int(v))))
