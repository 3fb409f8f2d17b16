"""The NVPTX back end: a program's complete LLVM module (NvptxModuleGen's, the builtin library
linked) -> PTX text for one `sm_XX`.

libdevice is linked when the module calls `__nv_*` functions; everything but the kernels' entries
(and printf's buffer, which the host reads) is made internal, so the optimiser keeps only what
the kernels use. Before code generation the module's remaining external calls are checked:
LLVM's NVPTX back end ends the whole process on what it cannot select (a libm call,
`llvm.sin`), so such a program is a build error here instead.
"""
import llvmlite.binding as llvm

from ... import jit
from ...tree import CompileError
from . import libdevice
from .abi import PRINTF_SYMBOL
from .module import HOST_ONLY_INTRINSICS, LIBDEVICE_PREFIX, TRIPLE
from .ptx_fixups import fix_truncating_stores

_ready = []


def _init():
    """Register LLVM's NVPTX target (once; only programs built for NVPTX pay for it)."""
    if not _ready:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        _ready.append(llvm.Target.from_triple(TRIPLE))
    return _ready[0]


def llvm_version():
    return ".".join(map(str, llvm.llvm_version_info))


def ptx_version(arch):
    """The PTX ISA version LLVM emits for GPU architecture arch ((major, minor)); an
    architecture LLVM does not know gets its oldest (3.2), after a warning on stderr."""
    with jit._lock:
        tm = _init().create_target_machine(cpu=arch)
        text = tm.emit_assembly(llvm.parse_assembly('target triple = "%s"\n' % TRIPLE))
    major, minor = text.split(".version", 1)[1].split()[0].split(".")
    return int(major), int(minor)


def ptx(ir_text, arch, opt_level, entries):
    """PTX text of module ir_text for GPU architecture arch (`sm_90`); entries: the kernels'
    entry names (kept external). Raises CompileError for what the device cannot run."""
    with jit._lock:               # one LLVM context for the whole process: see jit.py
        target = _init()
        mod = llvm.parse_assembly(ir_text)
        if any(f.is_declaration and f.name.startswith(LIBDEVICE_PREFIX) for f in mod.functions):
            _link_libdevice(mod)
        keep = set(entries)
        for f in mod.functions:
            if not f.is_declaration and f.name not in keep:
                f.linkage = "internal"
        for g in mod.global_variables:      # (the printf buffer stays visible to the host)
            if not g.is_declaration and g.name != PRINTF_SYMBOL:
                g.linkage = "internal"
        mod.verify()
        tm = target.create_target_machine(cpu=arch, opt=opt_level or 0)
        mod.data_layout = str(tm.target_data)        # (the lowering's types carry their own sizes)
        _optimise(mod, tm, opt_level)
        _check_calls(mod)
        return fix_truncating_stores(tm.emit_assembly(mod))


def _link_libdevice(mod):
    data = libdevice.bitcode()
    if data is None:
        raise CompileError(libdevice.MISSING)
    lib = llvm.parse_bitcode(data)
    lib.triple = mod.triple                 # (libdevice says nvptx64-nvidia-gpulibs)
    lib.data_layout = mod.data_layout
    mod.link_in(lib)


def _optimise(mod, tm, opt_level):
    """LLVM's pipeline for opt_level with the NVPTX target machine's passes; at 0 too, which
    then only inlines and resolves libdevice's __nvvm_reflect queries (NVVMReflect)."""
    pto = llvm.create_pipeline_tuning_options(speed_level=opt_level or 0)
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    try:
        mpm.run(mod, pb)
    finally:
        jit._dispose_pass_manager(mpm)


def _check_calls(mod):
    for f in mod.functions:
        if not f.is_declaration or f.name.startswith("llvm.nvvm."):
            continue
        if f.name.startswith("llvm."):
            base = f.name[5:].partition(".")[0]
            if base not in HOST_ONLY_INTRINSICS:
                continue
        raise CompileError("the program calls '%s', which has no implementation on this device "
                           "(NVPTX)" % f.name)
