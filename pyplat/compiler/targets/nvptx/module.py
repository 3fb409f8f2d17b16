"""NvptxModuleGen: the module generator for the NVPTX target (one CUDA thread per work-item).

What differs from the CPU's ModuleGen (lowering/module.py, whose class attributes and methods
this overrides): no work-group loop and no loop fission (every kernel gets a PTX entry, entry.py,
and `barrier()` is the native `bar.sync`); kernel-scope `__local` variables live in shared
memory; memory fences are real fences; printf appends records to a device buffer (printf.py);
and the math functions the CPU takes from libm or from LLVM intrinsics that NVPTX cannot select
(sin, exp, pow...) become calls of libdevice's `__nv_*` functions (linked later, codegen.py).
What the device cannot do is a CompileError naming it, never an LLVM error (which would end the
process).
"""
from llvmlite import ir

from ...lowering.function import FuncGen
from ...lowering.irbuild import I32, PTR
from ...lowering.module import ModuleGen
from ...tree import CompileError
from . import entry, printf
from .abi import LOCAL_ARG_ALIGN

TRIPLE = "nvptx64-nvidia-cuda"
DATA_LAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"

# LLVM intrinsics our lowering emits that the NVPTX back end cannot select (or only as
# approximations): each becomes libdevice's function of the same name.
HOST_ONLY_INTRINSICS = ("sin", "cos", "tan", "exp", "exp2", "exp10", "log", "log2", "log10", "pow")

# C library functions the lowering calls (libm's names, jit.LIBM_NAMES) that libdevice has
# as __nv_<name>; the float forms end in "f" there as in libm.
LIBDEVICE_FUNCTIONS = frozenset(
    n + s for n in (
        "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
        "atanh", "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "logb", "pow", "fmod",
        "hypot", "cbrt", "erf", "erfc", "tgamma", "lgamma", "nextafter", "fdim", "remainder", "sqrt",
        "floor", "ceil", "round", "trunc", "rint", "nearbyint", "fma", "fmin", "fmax", "copysign",
        "ldexp", "frexp", "sincos", "remquo", "ilogb") for s in ("", "f"))
LIBDEVICE_PREFIX = "__nv_"
MAX_THREADS_PER_BLOCK = 1024        # every GPU sm_70 and newer


class NvptxFuncGen(FuncGen):
    """FuncGen whose `barrier()` statements are the hardware barrier of the thread block."""

    def emit(self):
        self.mg.current = [self.f]
        super().emit()

    def rv(self, n):
        # the innermost expression being lowered locates a refusal (a builtin's arguments are
        # done by the time it asks for its functions, so that is the call itself)
        stack = self.mg.current
        stack.append(n)
        try:
            return super().rv(n)
        finally:
            stack.pop()

    def stmt(self, n):
        if n is not None and n.op == "barrier":
            if self.b.block.is_terminated:
                self.b.position_at_end(self.b.append_basic_block("dead"))
            # bar.sync orders the block's shared and global memory accesses around it (PTX
            # memory model), which is what barrier(CLK_LOCAL|GLOBAL_MEM_FENCE) asks
            self.b.call(self.mg.intrinsic("llvm.nvvm.barrier0", ir.VoidType(), []), [])
            return
        super().stmt(n)


class NvptxModuleGen(ModuleGen):
    PRINTF_STRING_POINTERS = False     # the host formats the records: no device strings to read
    GROUP_IN_ONE_THREAD = False        # a block's threads share __local memory
    INLINE_BUDGET = False              # every call inline, as before (its entry's SROA relies on it)
    SWITCH_TABLES = False              # switches stay switches (switch_tree still splits large ones)

    def __init__(self, opts, arch):
        super().__init__(opts, TRIPLE, DATA_LAYOUT)
        self.arch = arch
        self.current = []     # the function being lowered, then its expressions (errors' location)

    def _refuse(self, msg):
        located = [x.cur for x in self.current if getattr(x, "cur", None) is not None]
        raise CompileError(msg, located[-1] if located else None)

    # -------------------------------------------------------------- functions and intrinsics
    def intrinsic(self, name, ret, args, var_arg=False):
        if name in self.intrinsics:
            return self.intrinsics[name]
        if name.startswith("f."):        # the builtin library's definitions (library.py)
            return super().intrinsic(name, ret, args, var_arg)
        if name.startswith("llvm."):
            base, _, suffix = name[5:].partition(".")
            if base in HOST_ONLY_INTRINSICS and suffix.endswith(("f32", "f64")):
                f = self._libdevice_intrinsic(name, base, ret, args)
                self.intrinsics[name] = f
                return f
            return super().intrinsic(name, ret, args, var_arg)
        if name in LIBDEVICE_FUNCTIONS:
            f = self._libdevice(name, ret, args)
        elif name in ("lgamma_r", "lgammaf_r"):
            f = self._lgamma_r(name, ret)
        else:
            self._refuse("'%s' is not supported on this device yet (NVPTX)" % name)
        self.intrinsics[name] = f
        return f

    def _libdevice(self, cname, ret, args):
        name = LIBDEVICE_PREFIX + cname
        f = self.module.globals.get(name)
        if f is None:
            f = ir.Function(self.module, ir.FunctionType(ret, args), name=name)
        return f

    def _libdevice_intrinsic(self, name, base, ret, args):
        """libdevice's `base` for intrinsic `name`: the function itself for a scalar, else an
        internal always-inline function applying it to each element."""
        scalar = ret.element if isinstance(ret, ir.VectorType) else ret
        cname = base + ("f" if isinstance(scalar, ir.FloatType) else "")
        nv = self._libdevice(cname, scalar, [scalar] * len(args))
        if not isinstance(ret, ir.VectorType):
            return nv
        fn = ir.Function(self.module, ir.FunctionType(ret, args), name="__pyplat_nv." + name[5:])
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        fn.attributes.add("nounwind")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        out = ir.Constant(ret, ir.Undefined)
        for i in range(ret.count):
            r = b.call(nv, [b.extract_element(a, I32(i)) for a in fn.args])
            out = b.insert_element(out, r, I32(i))
        b.ret(out)
        return fn

    def _lgamma_r(self, name, ft):
        """libm's lgamma_r(x, &sign), which libdevice lacks: its lgamma, and the sign of
        gamma(x): -1 for -0 and for negative non-integers whose floor is odd, else 1."""
        fn = ir.Function(self.module, ir.FunctionType(ft, [ft, PTR]), name="__pyplat_nv." + name)
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        fn.attributes.add("nounwind")
        x, sign_p = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        suffix = "f" if isinstance(ft, ir.FloatType) else ""
        r = b.call(self._libdevice("lgamma" + suffix, ft, [ft]), [x])
        fl = b.call(self._libdevice("floor" + suffix, ft, [ft]), [x])
        odd = b.fcmp_ordered("!=", b.frem(fl, ir.Constant(ft, 2.0)), ir.Constant(ft, 0.0))
        negative = b.and_(b.fcmp_ordered("<", x, ir.Constant(ft, 0.0)), b.fcmp_ordered("!=", fl, x))
        bits = ir.IntType(32 if suffix else 64)
        minus_zero = b.icmp_signed("==", b.bitcast(x, bits), ir.Constant(bits, 1 << (bits.width - 1)))
        minus = b.or_(b.and_(negative, odd), minus_zero)
        b.store(b.select(minus, I32(-1), I32(1)), sign_p, align=4)
        b.ret(r)
        return fn

    def float_remainder(self, g, a, c, t):
        """fmod through libdevice: NVPTX's frem is x - trunc(x / y) * y, wrong for infinities and
        for large quotients (fmod(DBL_MAX, 2.5) gave -5e291)."""
        from ...builtins.helpers import libm
        return libm(g, "fmod", t, [a, c])

    def emit_printf(self, g, c_format, values):
        return printf.emit_record(self, g, c_format, values)

    def memory_fence(self, b):
        """mem_fence() and friends: order this work-item's accesses as seen by its work-group."""
        b.fence("acq_rel", "block")

    # -------------------------------------------------------------- shared memory
    def shared_pointer(self, b, name, size, variables=()):
        """A generic pointer (made by b) to shared-memory block `name`: a static block of `size`
        bytes aligned for `variables`, or (size None) the launch's dynamic shared memory."""
        g = self.module.globals.get(name)
        if g is None:
            ty = ir.ArrayType(ir.IntType(8), size or 0)
            g = ir.GlobalVariable(self.module, ty, name=name, addrspace=entry.SHARED)
            if size is None:
                g.linkage = "external"
                g.align = LOCAL_ARG_ALIGN
            else:
                g.linkage = "internal"
                g.initializer = ir.Constant(ty, ir.Undefined)
                g.align = max([16] + [v.type.align for v in variables])
        return b.addrspacecast(g, PTR)

    def annotate_kernel(self, fn, reqd=None):
        """Mark `fn` a kernel entry, with the block sizes it must launch with: its
        reqd_work_group_size, else any up to MAX_THREADS_PER_BLOCK. ptxas then keeps its
        registers within what a block that large can have (64 each at 1024 threads), as an
        OpenCL GPU must: programs launch with the device's max work-group size without asking
        the kernel (pyopencl's bitonic sort and scans do)."""
        md = "nvvm.annotations"
        self.module.add_named_metadata(md, [fn, "kernel", I32(1)])
        if reqd:
            for axis, size in zip("xyz", reqd):
                self.module.add_named_metadata(md, [fn, "reqntid" + axis, I32(size)])
        else:
            self.module.add_named_metadata(md, [fn, "maxntidx", I32(MAX_THREADS_PER_BLOCK)])

    # -------------------------------------------------------------- kernels
    def generate(self, kernels, exported=()):
        """Every kernel's body as an always-inline function plus its PTX entry; no fission."""
        for f in exported:
            self.function(f)
        for k in kernels:
            self.function(k)
        while self.pending:
            NvptxFuncGen(self, self.pending.pop()).emit()
        self.current = []
        names = {}
        for k in kernels:
            local_size = max([v.index + v.type.size for v in k.local_vars] or [0])
            names[k.name] = entry.entry_function(self, k, local_size)
        return names
