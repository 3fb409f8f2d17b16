"""PyPlat kernel compiler: OpenCL C -> libclang -> typed tree -> LLVM IR -> native.

Public interface::

    build(source, options="", *, device_name="cpu") -> BuildResult

See docs/compiler.md for the pipeline, the ABI (abi.py) and what is supported.
"""
import os
import re
import time

import clang.cindex as ci

from .. import cl
from . import options as _options
from . import clangapi as _capi  # noqa: F401  (configures libclang)
from . import library as _builtin_library
from .abi import WorkGroupContext, WORK_GROUP_FUNCTION  # noqa: F401
from .tree import CompileError

HEADER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "kernels", "pyplat_opencl.h")
if not os.path.exists(HEADER):      # installed layout: site-packages/pyplat/kernels
    HEADER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels",
                          "pyplat_opencl.h")
SOURCE_NAME = "<source>"

_ADDR_Q = {"global": cl.CL_KERNEL_ARG_ADDRESS_GLOBAL, "constant": cl.CL_KERNEL_ARG_ADDRESS_CONSTANT,
           "local": cl.CL_KERNEL_ARG_ADDRESS_LOCAL, "private": cl.CL_KERNEL_ARG_ADDRESS_PRIVATE,
           "generic": cl.CL_KERNEL_ARG_ADDRESS_GLOBAL}


class ArgInfo:
    __slots__ = ("name", "type_name", "address_qualifier", "access_qualifier", "type_qualifier",
                 "kind", "size", "written")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __repr__(self):
        return "ArgInfo(%s)" % ", ".join("%s=%r" % (k, getattr(self, k)) for k in self.__slots__)


class KernelInfo:
    __slots__ = ("name", "address", "args", "attributes", "reqd_work_group_size", "local_mem_size",
                 "private_mem_size", "prints", "_engine")  # prints: may call printf; _engine keeps the code alive

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __repr__(self):
        return "KernelInfo(%s, args=%r)" % (self.name, self.args)


class BuildResult:
    def __init__(self, ok=False, log="", invalid_options=False, kernels=None, engine=None, timings=None):
        self.ok = ok
        self.log = log
        self.invalid_options = invalid_options
        self.kernels = kernels if kernels is not None else {}
        self.engine = engine          # keeps the JIT code alive
        self.timings = timings or {}
        self.llvm_ir = None
        self.package = None           # object code + metadata (program binaries, the cache)
        self.cache_key = None

    def __repr__(self):
        return "BuildResult(ok=%r, kernels=%r)" % (self.ok, list(self.kernels))


class _Sources(dict):
    """File name -> text; files other than the program source are read on demand."""

    def __missing__(self, name):
        try:
            with open(name, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except (OSError, TypeError):
            text = None
        self[name] = text
        return text


_index = None


def _get_index():
    global _index
    if _index is None:
        _index = ci.Index.create()
    return _index


_SEV = {2: "warning", 3: "error", 4: "fatal error"}


def _diag_lines(tu):
    lines, errors = [], False
    for d in tu.diagnostics:
        if d.severity < 2:
            continue
        errors |= d.severity >= 3
        loc = d.location
        fname = loc.file.name if loc.file else SOURCE_NAME
        lines.append("%s:%d:%d: %s: %s" % (fname, loc.line, loc.column, _SEV.get(d.severity, "error"),
                                           d.spelling))
    return lines, errors


def _error_line(e):
    c = e.cur
    fname, line, col = SOURCE_NAME, 0, 0
    if c is not None:
        try:
            loc = c.location
            fname = loc.file.name if loc.file else SOURCE_NAME
            line, col = loc.line, loc.column
        except Exception:
            pass
    return "%s:%d:%d: error: %s" % (fname, line, col, e.msg)


def build(source, options="", *, device_name="cpu", use_cache=True):
    """Compile an OpenCL C program; never raises for bad user code. Served from the on-disk
    cache (cache.py) when an entry for the same source, options and environment exists."""
    t0 = time.perf_counter()
    try:
        opts = _options.parse(options)
    except _options.InvalidOption as e:
        return BuildResult(False, "error: %s\n" % e, invalid_options=True)
    from . import cache
    k = None
    try:
        k = cache.key(source, options or "", HEADER) if use_cache else None
        hit = cache.load(k) if k else None
        if hit is not None:
            r = from_package_parts(*hit)
            r.timings = {"cached": True, "total": time.perf_counter() - t0}
            r.cache_key = k
            return r
    except Exception:              # a broken cache entry is only a miss
        if os.environ.get("PYPLAT_COMPILER_DEBUG"):
            raise
    try:
        r = _build(source, opts, t0)
        if r.ok and k is not None:
            cache.store(k, r.package)
            r.cache_key = k
        return r
    except CompileError as e:
        return BuildResult(False, _error_line(e) + "\n")
    except Exception as e:  # an internal compiler bug: report it, no traceback
        if os.environ.get("PYPLAT_COMPILER_DEBUG"):
            raise
        return BuildResult(False, "%s:0:0: error: internal compiler error: %s: %s\n"
                           % (SOURCE_NAME, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))


def _build(source, opts, t0):
    from . import jit, cache
    parsed = _compile_unit(source, opts, t0)
    if isinstance(parsed, BuildResult):
        return parsed
    ir_text, meta, tu_info = parsed
    ir_text = _builtin_library.link(ir_text, _compile_unit)     # builtins written in OpenCL C
    t_gen = time.perf_counter()
    # many parallel regions (barrier-heavy kernels such as scans): unrolling and vectorising the
    # loops of every region costs far more compile time than it gains (pyopencl's scan: 1.8 s ->
    # 1.1 s to build, runs as fast); with few regions it matters (a 16x16 local-tile matmul runs
    # 3.7x faster with its k loop unrolled: the work-item loop then vectorises)
    few = meta["regions"] <= 12
    obj = jit.compile_object(ir_text, opts.opt_level, unroll=few, vectorize=few)
    t_jit = time.perf_counter()
    pmeta = {"log": meta["log"], "kernels": meta["kernels"],
             "includes": cache.include_hashes(tu_info["includes"] + [HEADER])}
    r = from_package_parts(pmeta, obj)
    r.package = cache.pack(pmeta, obj)
    r.timings = dict(tu_info["timings"], llvm=t_jit - t_gen, total=time.perf_counter() - t0)
    r.llvm_ir = ir_text
    return r


HEADER_DIR = "/__pyplat_input_headers__"     # where clCompileProgram's input headers appear


def _compile_unit(source, opts, t0, headers=None, for_link=False):
    """Parse and lower one translation unit: (LLVM IR text, meta, info) or a failed
    BuildResult. for_link: a compiled object; functions of the source with external linkage
    are emitted (callable from other units) and calls of functions only declared here stay
    external declarations, resolved by link()."""
    from .frontend import Frontend
    from .codegen import ModuleGen
    from . import jit, barriers

    args = ["-x", "cl", "-cl-no-stdinc", "-Xclang", "-fdeclare-opencl-builtins",
            "-Xclang", "-cl-ext=+all", "-include", HEADER] + opts.clang_args()
    unsaved = [(SOURCE_NAME, source)]
    sources = _Sources()
    sources[SOURCE_NAME] = source
    if headers:
        args.append("-I" + HEADER_DIR)
        for name, text in headers:
            path = HEADER_DIR + "/" + name.lstrip("/")
            unsaved.append((path, text))
            sources[path] = text
    tu = _get_index().parse(SOURCE_NAME, args=args, unsaved_files=unsaved, options=0)
    t_parse = time.perf_counter()
    lines, errors = _diag_lines(tu)
    if errors:
        return BuildResult(False, "\n".join(lines) + "\n")
    log_prefix = ("\n".join(lines) + "\n") if lines else ""

    fe = Frontend(tu, sources)
    fe.header = HEADER
    kernels = fe.run()
    exported, unavailable = [], {}
    if for_link:
        kernel_names = {k.name for k in kernels}
        memo = {}
        for c in fe.exported_functions():
            if c.spelling in kernel_names or fe.is_kernel(c):
                continue
            try:
                f = fe.function(c, False)
                if barriers.func_has_barrier(f, memo):
                    raise CompileError("function '%s' uses barrier(): it can only be called from kernels "
                                       "of its own compilation unit" % f.name, c)
            except CompileError as e:
                unavailable[c.spelling] = _error_line(e)
                continue
            exported.append((f, c))
        fe.resolve_swizzles()
    else:
        for f in fe.externs.values():
            raise CompileError("function '%s' is declared but not defined (compile with "
                               "clCompileProgram and link the unit that defines it)" % f.name, f.cur)
    t_front = time.perf_counter()

    for k in kernels:
        off = 0
        for v in k.local_vars:
            a = max(v.type.align, 1)
            off = (off + a - 1) // a * a
            v.index = off
            off += v.type.size
    triple, layout = jit.target_info()
    mg = ModuleGen(opts, triple, layout)
    for f, c in exported:
        mg.linkage[f] = "linkonce_odr" if _is_inline(c) else "external"
    names = mg.generate(kernels, [f for f, _ in exported])
    ir_text = str(mg.module)
    t_gen = time.perf_counter()
    meta = {"log": log_prefix, "kernels": _kernel_meta(kernels, names), "regions": mg.regions,
            "unavailable": unavailable, "opt_level": opts.opt_level}
    if for_link:        # signatures, so that link() can refuse a call through a wrong prototype
        meta["exports"] = {f.name: str(mg.fns[f].function_type) for f, _ in exported if f in mg.fns}
        meta["imports"] = {f.name: str(mg.fns[f].function_type) for f in fe.externs.values() if f in mg.fns}
    includes = []
    for inc in tu.get_includes():
        f = inc.include
        if f is not None and f.name and f.name != SOURCE_NAME:
            includes.append(os.path.abspath(f.name))
    info = {"includes": includes,
            "timings": {"parse": t_parse - t0, "frontend": t_front - t_parse, "codegen": t_gen - t_front}}
    return ir_text, meta, info


def _is_inline(c):
    for t in c.get_tokens():
        if t.spelling == c.spelling:
            break
        if t.spelling in ("inline", "__inline", "__inline__"):
            return True
    return False


def _kernel_meta(kernels, names):
    from . import analysis
    out = []
    for k in kernels:
        written = analysis.written_params(k)
        args_info = []
        for p, pi in zip(k.params, k.param_info):
            t = p.type
            if t.is_pointer:
                kind = {"global": "global", "constant": "constant", "local": "local"}.get(pi["addrspace"], "global")
                aq = _ADDR_Q.get(pi["addrspace"], cl.CL_KERNEL_ARG_ADDRESS_GLOBAL)
                tq = 0
                if pi["const"] or kind == "constant":
                    tq |= cl.CL_KERNEL_ARG_TYPE_CONST
                if pi["restrict"]:
                    tq |= cl.CL_KERNEL_ARG_TYPE_RESTRICT
                if pi["volatile"]:
                    tq |= cl.CL_KERNEL_ARG_TYPE_VOLATILE
                size = 8
                w = (p in written) and kind != "constant"
            else:
                kind, aq, tq, size, w = "value", cl.CL_KERNEL_ARG_ADDRESS_PRIVATE, cl.CL_KERNEL_ARG_TYPE_NONE, t.size, False
            args_info.append(ArgInfo(name=p.name, type_name=pi["type_name"], address_qualifier=aq,
                                     access_qualifier=cl.CL_KERNEL_ARG_ACCESS_NONE, type_qualifier=tq,
                                     kind=kind, size=size, written=w))
        local_size = 0
        for v in k.local_vars:
            local_size = max(local_size, v.index + v.type.size)
        out.append({"name": k.name, "symbol": names[k.name],
                    "args": [{s: getattr(a, s) for s in ArgInfo.__slots__} for a in args_info],
                    "attributes": k.attributes, "reqd_work_group_size": list(k.reqd),
                    "local_mem_size": local_size, "private_mem_size": analysis.private_size(k),
                    "prints": analysis.prints(k)})
    return out


def from_package_parts(meta, obj):
    """A BuildResult from kernel metadata and object code: links the code, compiles nothing."""
    from . import jit, cache
    ee = jit.load_object(obj)
    infos = {}
    for kd in meta["kernels"]:
        infos[kd["name"]] = KernelInfo(
            name=kd["name"], address=ee.get_function_address(kd["symbol"]),
            args=[ArgInfo(**a) for a in kd["args"]], attributes=kd["attributes"],
            reqd_work_group_size=tuple(kd["reqd_work_group_size"]), local_mem_size=kd["local_mem_size"],
            private_mem_size=kd["private_mem_size"], prints=kd.get("prints", True), _engine=ee)
    r = BuildResult(True, meta.get("log", ""), kernels=infos, engine=ee)
    r.package = cache.pack(meta, obj)
    return r


def load_package(data):
    """BuildResult from a package (bytes, as BuildResult.package), or None if it is not one made
    for this machine, compiler and LLVM (the caller then compiles from source)."""
    from . import cache
    parts = cache.unpack(data)
    if parts is None:
        return None
    return from_package_parts(*parts)


# ---------------------------------------------------------------------------- compile and link
OBJECT_MAGIC = b"PYPLAT-IR-1\n"


class ObjectResult:
    """A compiled object or a library: LLVM IR of one or more units + their kernels' metadata.
    `data` is its byte form (program binaries), None when compilation failed."""

    def __init__(self, ok, log="", data=None, kind="object", invalid_options=False):
        self.ok, self.log, self.data, self.kind, self.invalid_options = ok, log, data, kind, invalid_options

    def __repr__(self):
        return "ObjectResult(ok=%r, kind=%r)" % (self.ok, self.kind)


def _pack_object(meta, ir_text):
    import json
    import struct
    from . import cache
    meta = dict(meta, env=cache.environment())
    j = json.dumps(meta, separators=(",", ":")).encode()
    return OBJECT_MAGIC + struct.pack("<Q", len(j)) + j + ir_text.encode()


def unpack_object(data):
    """(meta, IR text) of a compiled object or library made by this compiler on this machine,
    else None."""
    import json
    import struct
    from . import cache
    if not isinstance(data, (bytes, bytearray)) or not data.startswith(OBJECT_MAGIC):
        return None
    try:
        (n,) = struct.unpack_from("<Q", data, len(OBJECT_MAGIC))
        start = len(OBJECT_MAGIC) + 8
        meta = json.loads(data[start:start + n])
        ir_text = bytes(data[start + n:]).decode()
    except (struct.error, ValueError, UnicodeDecodeError):
        return None
    if meta.get("env") != cache.environment() or meta.get("kind") not in ("object", "library"):
        return None
    return meta, ir_text


def compile_object(source, options="", headers=None):
    """clCompileProgram: one translation unit -> ObjectResult (kind "object"). headers:
    [(include name, text)] visible to #include under those names. Never raises for bad code."""
    t0 = time.perf_counter()
    try:
        opts = _options.parse(options)
    except _options.InvalidOption as e:
        return ObjectResult(False, "error: %s\n" % e, invalid_options=True)
    try:
        parsed = _compile_unit(source, opts, t0, headers=headers, for_link=True)
        if isinstance(parsed, BuildResult):
            return ObjectResult(False, parsed.log)
        ir_text, meta, _ = parsed
        meta["kind"] = "object"
        return ObjectResult(True, meta["log"], _pack_object(meta, ir_text))
    except CompileError as e:
        return ObjectResult(False, _error_line(e) + "\n")
    except Exception as e:
        if os.environ.get("PYPLAT_COMPILER_DEBUG"):
            raise
        return ObjectResult(False, "%s:0:0: error: internal compiler error: %s: %s\n"
                            % (SOURCE_NAME, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))


LINK_FLAGS = {"-create-library", "-enable-link-options", "-cl-denorms-are-zero", "-cl-no-signed-zeros",
              "-cl-unsafe-math-optimizations", "-cl-finite-math-only", "-cl-fast-relaxed-math",
              "-cl-no-subgroup-ifp"}


def parse_link_options(text):
    """The set of link options, or raises InvalidOption (CL_INVALID_LINKER_OPTIONS)."""
    import shlex
    try:
        toks = shlex.split(text or "")
    except ValueError as e:
        raise _options.InvalidOption("invalid link option: %s" % e)
    for t in toks:
        if t not in LINK_FLAGS:
            raise _options.InvalidOption("invalid link option '%s'" % t)
    flags = set(toks)
    if "-enable-link-options" in flags and "-create-library" not in flags:
        raise _options.InvalidOption("-enable-link-options is only valid with -create-library")
    return flags


def _symbol_name(llvm_name):
    return llvm_name.split(".", 1)[1] if llvm_name.startswith(("f.", "k.")) else llvm_name


def link(objects, options="", use_cache=True):
    """clLinkProgram: compiled objects / libraries (bytes from compile_object / link) -> a
    BuildResult (executable) or, with -create-library, an ObjectResult of kind "library".
    The units' LLVM modules are linked (functions defined in one unit and declared in another
    resolve), then optimised and compiled as a whole. Never raises for bad input."""
    t0 = time.perf_counter()
    try:
        flags = parse_link_options(options)
    except _options.InvalidOption as e:
        return BuildResult(False, "error: %s\n" % e, invalid_options=True)
    library = "-create-library" in flags
    parts = []
    for i, data in enumerate(objects):
        p = unpack_object(data)
        if p is None:
            return BuildResult(False, "error: input %d is not a compiled object or library of this "
                                      "compiler and machine\n" % i)
        parts.append(p)
    from . import cache
    k = None
    if not library and use_cache:
        import hashlib
        h = hashlib.sha256()
        for data in objects:
            h.update(hashlib.sha256(data).digest())
        try:
            k = cache.key(h.hexdigest(), "link:" + " ".join(sorted(flags)), HEADER)
            hit = cache.load(k)
            if hit is not None:
                r = from_package_parts(*hit)
                r.timings = {"cached": True, "total": time.perf_counter() - t0}
                r.cache_key = k
                return r
        except Exception:
            if os.environ.get("PYPLAT_COMPILER_DEBUG"):
                raise
            k = None
    try:
        r = _link(parts, library, t0)
        if not library and r.ok and k is not None:
            cache.store(k, r.package)
            r.cache_key = k
        return r
    except Exception as e:
        if os.environ.get("PYPLAT_COMPILER_DEBUG"):
            raise
        cls = ObjectResult if library else BuildResult
        return cls(False, "error: internal linker error: %s: %s\n"
                   % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))


def _link(parts, library, t0):
    import llvmlite.binding as llvm
    from . import jit, cache
    fail = (lambda msg: ObjectResult(False, msg, kind="library")) if library else \
        (lambda msg: BuildResult(False, msg))
    kernels, seen = [], {}
    unavailable = {}
    log = "".join(m.get("log", "") for m, _ in parts)
    for i, (meta, _) in enumerate(parts):
        for kd in meta["kernels"]:
            if kd["name"] in seen:
                return fail(log + "error: kernel '%s' is defined in more than one input (inputs %d and %d)\n"
                            % (kd["name"], seen[kd["name"]], i))
            seen[kd["name"]] = i
            kernels.append(kd)
        unavailable.update(meta.get("unavailable", {}))
    exports = {}
    for meta, _ in parts:
        exports.update(meta.get("exports", {}))
    for meta, _ in parts:
        for name, sig in meta.get("imports", {}).items():
            if name in exports and exports[name] != sig:
                def show(t):       # without the hidden work-item parameter
                    return t.replace("(ptr, ", "(", 1).replace("(ptr)", "()", 1)
                return fail(log + "error: function '%s' is declared with LLVM type '%s' in one "
                            "program but defined as '%s'\n" % (name, show(sig), show(exports[name])))
    with jit._lock:
        jit._init()
        mod = llvm.parse_assembly(parts[0][1])
        for meta, ir_text in parts[1:]:
            other = llvm.parse_assembly(ir_text)
            try:
                mod.link_in(other)
            except RuntimeError as e:
                msg = str(e).strip()
                m = re.search(r"'([^']+)'", msg)
                if m and "multiply defined" in msg:
                    return fail(log + "error: function '%s' is defined in more than one input\n"
                                % _symbol_name(m.group(1)))
                return fail(log + "error: link failed: %s\n" % msg)
        if not library:
            _builtin_library.link_module(mod, _compile_unit)    # builtins written in OpenCL C
        undefined = [fn.name for fn in mod.functions
                     if fn.is_declaration and fn.name.startswith(("f.", "k."))]
        if library:
            imports = {}
            for m, _ in parts:
                imports.update(m.get("imports", {}))
            meta = {"log": log, "kernels": kernels, "kind": "library", "unavailable": unavailable,
                    "exports": exports, "imports": {n: s for n, s in imports.items() if n not in exports},
                    "regions": sum(m.get("regions", 0) for m, _ in parts),
                    "opt_level": min(m.get("opt_level", 3) for m, _ in parts)}
            return ObjectResult(True, log, _pack_object(meta, str(mod)), kind="library")
        if undefined:
            lines = []
            for name in undefined:
                sym = _symbol_name(name)
                if sym in unavailable:
                    lines.append("error: undefined function '%s': %s" % (sym, unavailable[sym]))
                else:
                    lines.append("error: undefined function '%s' (declared and called, but defined in "
                                 "none of the linked programs)" % sym)
            return fail(log + "\n".join(lines) + "\n")
        keep = {kd["symbol"] for kd in kernels}
        for fn in mod.functions:
            if not fn.is_declaration and fn.name not in keep:
                fn.linkage = llvm.Linkage.internal
        ir_text = str(mod)
    t_link = time.perf_counter()
    regions = sum(m.get("regions", 0) for m, _ in parts)
    opt_level = min(m.get("opt_level", 3) for m, _ in parts)
    obj = jit.compile_object(ir_text, opt_level, unroll=regions <= 12, vectorize=regions <= 12)
    pmeta = {"log": log, "kernels": kernels, "includes": []}
    r = from_package_parts(pmeta, obj)
    r.package = cache.pack(pmeta, obj)
    r.timings = {"link": t_link - t0, "llvm": time.perf_counter() - t_link, "total": time.perf_counter() - t0}
    r.llvm_ir = ir_text
    return r
