"""LLVM back end: optimise (new pass manager, host CPU) and JIT in process (MCJIT)."""
import ctypes
import os
import threading

import llvmlite.binding as llvm

from . import llvm_messages

_state = {}

# LLVM's JIT is not safe to drive from several threads at once, and a program's native code may
# be freed on any thread (the runtime releases finished commands' objects on a background
# thread). So every LLVM operation takes this lock, and engines whose last user went away are
# parked in a graveyard and disposed of by the next operation, under the lock.
_lock = threading.RLock()
_graveyard = []

# fork() waits until no other thread is inside LLVM, so that the child inherits a consistent
# LLVM (its JIT engines, the code they made) and can build programs (docs/runtime.md, "fork").
os.register_at_fork(before=_lock.acquire, after_in_parent=_lock.release,
                    after_in_child=_lock.release)


class Engine:
    """An MCJIT engine owning a program's native code; freed (later, under the lock) when the
    last BuildResult / KernelInfo referring to it goes."""

    def __init__(self, engine):
        self._engine = engine
        self.lines = None       # what lives as long as the code: its line table's registration
                                # with the runtime (core/program.py), dropped before the code

    def get_function_address(self, name):
        with _lock:
            return self._engine.get_function_address(name)

    def __del__(self, _graveyard=_graveyard):
        # (bound at definition: at interpreter exit the module's globals may already be None)
        self.lines = None           # unregistered before the code can go
        _graveyard.append(self._engine)


def _bury():
    """Dispose of engines nobody uses any more (call with the lock held)."""
    while _graveyard:
        _graveyard.pop()

# C functions generated code may call: registered explicitly, since JIT symbol
# lookup through dlopen(NULL) only sees global libraries.
LIBM_NAMES = [
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "logb", "pow", "fmod",
    "hypot", "cbrt", "erf", "erfc", "tgamma", "lgamma", "nextafter", "fdim", "remainder", "sqrt",
    "floor", "ceil", "round", "trunc", "rint", "nearbyint", "fma", "fmin", "fmax", "copysign", "ldexp",
    "frexp", "sincos", "remquo", "ilogb", "lgamma_r",
]


def _init():
    if _state.get("ready"):
        return _state
    with _lock:
        if not _state.get("ready"):
            _init_locked()
            _state["ready"] = True
        return _state


def _init_locked():
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    cpu = llvm.get_host_cpu_name()
    try:
        features = llvm.get_host_cpu_features().flatten()
    except Exception:
        features = ""
    _state.update(target=target, cpu=cpu, features=features,
                  triple=llvm.get_process_triple())
    # No vectorised epilogue after a vectorised loop (LLVM adds one for wide vectors): it makes
    # every work-item loop ~1.5x bigger to compile for remainders the scalar loop covers well.
    # Likewise no runtime/partial unrolling (remainder loops unrolled 8x, prologues): the vectoriser
    # already interleaves; full unrolling of constant-trip loops (tiles) stays.
    try:
        llvm.set_option("", "-enable-epilogue-vectorization=false")
        llvm.set_option("", "-unroll-runtime=false")
        llvm.set_option("", "-unroll-allow-partial=false")
    except Exception:
        pass
    _avoid_known_miscompiles()
    tm = target.create_target_machine(cpu=cpu, features=features, opt=3, jit=True)
    _state["tm"] = tm
    _state["data_layout"] = str(tm.target_data)
    libm = ctypes.CDLL("libm.so.6")
    libc = ctypes.CDLL("libc.so.6")
    for base in LIBM_NAMES:
        for name in (base, base + "f"):
            for lib in (libm, libc):
                try:
                    addr = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
                except AttributeError:
                    continue
                llvm.add_symbol(name, addr)
                break
    for name in ("lgammaf_r",):
        llvm.add_symbol(name, ctypes.cast(getattr(libm, name), ctypes.c_void_p).value)
    for name in ("memcpy", "memset", "memmove", "malloc", "free", "snprintf", "write"):
        llvm.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
    return _state


def _avoid_known_miscompiles():
    """LLVM up to 22.1 (llvmlite 0.50 ships 22.1.0) miscompiles in VectorCombine's
    foldShuffleToIdentity: a value used both as a splat and as an identity shuffle feeding one
    lane-wise operation is taken as one of them for both (llvm/llvm-project#180338, fixed by
    #188989 for LLVM 23). OpenCL C makes that pattern common: `rotate((uchar2)(v.s0, v.s0),
    (uchar2)(v.s0, v.s1))` computed rotate(v.s1, v.s1) in lane 1 (differential seed 60002779).
    Without the pass the code is right; instcombine and the SLP vectoriser still do most of
    its work."""
    if llvm.llvm_version_info < (23,):
        llvm.set_option("", "-disable-vector-combine")


def target_info():
    s = _init()
    return s["triple"], s["data_layout"]


def compile_object(ir_text, opt_level=3, unroll=True, vectorize=True, notes=None):
    """Parse, verify, optimise for the host CPU and emit native object code (bytes).
    unroll: full unrolling of constant-trip loops; vectorize: the loop vectoriser (the SLP
    vectoriser always runs). Both cost compile time roughly in proportion to the number of
    loops, which barrier-heavy kernels (dozens of parallel regions) have many of.
    notes: a list that gets LLVM's diagnostics as build-log lines (llvm_messages.py; with None
    they are dropped: never on the host's stderr)."""
    with _lock:
        _bury()
        with llvm_messages.captured([] if notes is None else notes, ir_text):
            return _compile_object(ir_text, opt_level, unroll, vectorize)


def optimised_ir(ir_text, opt_level=3, unroll=True, vectorize=True):
    """The module as compile_object optimises it, as LLVM IR text (tests look for the loops
    the vectoriser took)."""
    with _lock:
        _bury()
        with llvm_messages.captured([], ir_text):
            mod, _ = _optimise(ir_text, opt_level, unroll, vectorize)
        return str(mod)


def _compile_object(ir_text, opt_level, unroll, vectorize):
    mod, tm = _optimise(ir_text, opt_level, unroll, vectorize)
    return tm.emit_object(mod)


def _optimise(ir_text, opt_level, unroll, vectorize):
    s = _init()
    mod = llvm.parse_assembly(ir_text)
    mod.verify()
    tm = s["target"].create_target_machine(cpu=s["cpu"], features=s["features"], opt=opt_level or 0, jit=True)
    if opt_level:
        pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
        pto.loop_vectorization = vectorize
        pto.slp_vectorization = True
        pto.loop_unrolling = unroll
        pb = llvm.create_pass_builder(tm, pto)
        mpm = pb.getModulePassManager()
    else:
        pto = llvm.create_pipeline_tuning_options(speed_level=0)
        pb = llvm.create_pass_builder(tm, pto)
        mpm = llvm.create_new_module_pass_manager()
        mpm.add_always_inliner_pass()
    try:
        mpm.run(mod, pb)
    finally:
        _dispose_pass_manager(mpm)
    return mod, tm


def _dispose_pass_manager(mpm):
    """Free a module pass manager now. llvmlite (0.50) never does: in ModulePassManager's MRO its
    ObjectRef base's no-op _dispose comes before NewPassManager's, so every O3 pipeline built
    (~80 kB) stayed, once per program compiled (issue 13 item 9). Where the class resolves
    _dispose to the no-op, the pass manager's own disposal is called and the reference
    detached; else (a fixed llvmlite) close() frees it. (A PassBuilder, or a pipeline, cannot
    be kept for the next module: each run registers callbacks into the builder that live only
    as long as that run.)"""
    own = getattr(llvm.newpassmanagers, "NewPassManager", None)
    if type(mpm)._dispose is llvm.ffi.ObjectRef._dispose and own is not None and isinstance(mpm, own):
        own._dispose(mpm)
        mpm.detach()
    else:
        mpm.close()


def load_object(obj):
    """Link object code into a fresh MCJIT engine (no optimisation, no code generation)."""
    with _lock:
        _bury()
        return _load_object(obj)


def _load_object(obj):
    s = _init()
    tm = s["target"].create_target_machine(cpu=s["cpu"], features=s["features"], opt=0, jit=True)
    empty = llvm.parse_assembly('target triple = "%s"\n' % s["triple"])
    ee = llvm.create_mcjit_compiler(empty, tm)
    ee.add_object_file(llvm.ObjectFileRef.from_data(obj))
    ee.finalize_object()
    return Engine(ee)
