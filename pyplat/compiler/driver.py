"""The build driver: OpenCL C source -> libclang -> typed tree -> LLVM IR -> native code.

build() compiles a program (clBuildProgram; served from the cache when it can be),
compile_object() one translation unit into a compiled object (clCompileProgram; linker.py links
objects). Both never raise for bad user code: the log says what is wrong. Both compile for a
target (targets/: the host, the default, or NVPTX), which lowers, generates and loads the code.
"""
import os
import time

import clang.cindex as ci

from .. import config, log
from . import cache
from . import library as builtin_library
from . import loop_nesting
from . import clangapi as _capi  # noqa: F401  (configures libclang)
from . import options as _options
from . import progvars as PV
from . import pragmas as FPC
from . import analysis, limits
from .frontend import Frontend
from .swizzle import SWIZZLE_TYPE_PREFIX
from .lowering.barrier_tree import func_has_barrier
from .metadata import kernel_meta
from .objects import pack_object
from .results import BuildResult, ObjectResult, debugging, describe
from .targets.host import HOST
from .tree import CompileError, source_position

HEADER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "kernels", "pyplat_opencl.h")
if not os.path.exists(HEADER):      # installed layout: site-packages/pyplat/kernels
    HEADER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels",
                          "pyplat_opencl.h")
SOURCE_NAME = "<source>"
HEADER_DIR = "/__pyplat_input_headers__"     # where clCompileProgram's input headers appear


_index = None


def _get_index():
    global _index
    if _index is None:
        _index = ci.Index.create()
    return _index


def _fork_child():
    """A forked child makes its own libclang index: a thread of the parent may have been parsing
    with the shared one at the fork, and that thread is gone (docs/runtime.md, "fork")."""
    global _index
    _index = None


os.register_at_fork(after_in_child=_fork_child)


_SEV = {2: "warning", 3: "error", 4: "fatal error"}


def _diag_lines(tu):
    lines, errors = [], False
    for d in tu.diagnostics:
        if d.severity < 2:
            continue
        errors |= d.severity >= 3
        loc = d.location
        fname = loc.file.name if loc.file else SOURCE_NAME
        # a swizzle's type is our header's twin of its vector type: show the public name
        text = d.spelling.replace(SWIZZLE_TYPE_PREFIX, "")
        lines.append("%s:%d:%d: %s: %s" % (fname, loc.line, loc.column, _SEV.get(d.severity, "error"),
                                           text))
    return lines, errors


def _error_line(e, severity="error"):
    # an error raised without a cursor (a type, a builtin or a printf format checked deep in the
    # lowering) is placed at the construct being compiled when it was raised
    c = e.cur if e.cur is not None else limits.deepest_construct(e)
    fname, line, col = SOURCE_NAME, 0, 0
    if c is not None:
        try:
            loc = c.location
            fname = loc.file.name if loc.file else SOURCE_NAME
            line, col = loc.line, loc.column
        except Exception:
            pass
    return "%s:%d:%d: %s: %s" % (fname, line, col, severity, e.msg)


def _internal_error(e):
    # located too: the construct it failed on is where a workaround can start
    c = limits.deepest_construct(e)
    fname, line, col = source_position(c) if c is not None else (SOURCE_NAME, 0, 0)
    return "%s:%d:%d: error: internal compiler error: %s\n" % (fname, line, col, describe(e))


def build(source, options="", *, use_cache=True, target=HOST):
    """Compile an OpenCL C program; never raises for bad user code. Served from the on-disk
    cache (cache.py) when an entry for the same source (up to comments and whitespace), options,
    target and environment exists.
    target: the code-generation target: HOST (native code, JIT) or another such as
    targets.nvptx.nvptx_target("sm_90") (its results carry the target's code, e.g. `ptx`)."""
    t0 = time.perf_counter()
    try:
        opts = _options.parse(options)
    except _options.InvalidOption as e:
        return BuildResult(False, "error: %s\n" % e, invalid_options=True)
    k = origin = None
    # PYPLAT_CHECK: checked kernels are another build (host code only; docs/tools.md)
    checks = config.value("PYPLAT_CHECK") if target.supports_checks else frozenset()
    try:
        # the identity the package carries; another target's programs are other entries
        origin = cache.key(source, (options or "") + target.key_suffix
                           + ("\n--check=" + ",".join(sorted(checks)) if checks else ""), HEADER)
        k = origin if use_cache else None
        hit = cache.load(k, source) if k else None     # verified: checksum, origin, env, source
        if hit is not None:
            r = target.from_package_parts(*hit)
            r.timings = {"cached": True, "total": time.perf_counter() - t0}
            r.cache_key = k
            _log_build(r, target, "from the cache")
            return r
    except Exception:              # a cache entry that still fails to load is only a miss
        if debugging():
            raise
    try:
        r = limits.run_deep(_build, source, opts, t0, origin, target, checks)   # (deep recursion: limits.py)
        if r.ok and k is not None:
            cache.store(k, r.package)
            r.cache_key = k
        _log_build(r, target, "compiled")
        return r
    except CompileError as e:
        return BuildResult(False, _error_line(e) + "\n")
    except Exception as e:  # an internal compiler bug: report it, no traceback
        if debugging():
            raise
        err = limits.resource_error(e)          # out of memory: a build error too
        return BuildResult(False, _error_line(err) + "\n" if err else _internal_error(e))


def _log_build(r, target, how):
    """PYPLAT_DEBUG=build: one line per build; warn: the log of a build that succeeded with one."""
    if log.on("build"):
        ms = 1000 * (r.timings or {}).get("total", 0.0)
        state = f"{len(r.kernels)} kernels" if r.ok else "failed"
        log.say("build", f"program for {target.label} {how} in {ms:.1f} ms: {state}")
    if r.ok and r.log and r.log.strip() and log.on("warn"):
        log.say("warn", "build log:\n" + r.log.rstrip())


def _build(source, opts, t0, origin=None, target=HOST, checks=frozenset()):
    parsed = _compile_unit(source, opts, t0, target=target, checks=checks)
    if isinstance(parsed, BuildResult):
        return parsed
    ir_text, meta, tu_info = parsed
    ir_text = builtin_library.link(ir_text, _compile_unit)    # kernels/builtins/*.cl it calls
    t_gen = time.perf_counter()
    notes = []                 # LLVM's diagnostics (missed unrolling): end of the build log
    code = target.codegen(ir_text, meta["opt_level"], meta["regions"], meta["kernels"], notes)
    t_code = time.perf_counter()
    log = meta["log"] + "".join(notes)
    pmeta = {"log": log, "kernels": meta["kernels"], "origin": origin,
             "includes": cache.include_hashes(tu_info["includes"] + [HEADER])}
    pmeta.update(cache.source_record(source, log, tu_info["includes"],
                                     extra_positions=bool(meta.get("lines"))))
    if "printf_formats" in meta:
        pmeta["printf_formats"] = meta["printf_formats"]
    if meta.get("lines"):
        pmeta["lines"] = True
    if checks:                 # a program binary of it is reloaded only under the same checks
        pmeta["checks"] = sorted(checks)
    r = target.from_package_parts(target.tagged(pmeta), code)       # (also packs it: r.package)
    r.timings = dict(tu_info["timings"], llvm=t_code - t_gen, total=time.perf_counter() - t0)
    r.llvm_ir = ir_text
    return r


def compile_object(source, options="", headers=None, target=HOST):
    """clCompileProgram: one translation unit -> ObjectResult (kind "object"). headers:
    [(include name, text)] visible to #include under those names. target: the code-generation
    target whose module the object holds (linker.link(..., target=) links it with objects of
    that target only). Never raises for bad code."""
    t0 = time.perf_counter()
    try:
        opts = _options.parse(options)
    except _options.InvalidOption as e:
        return ObjectResult(False, "error: %s\n" % e, invalid_options=True)
    try:
        parsed = limits.run_deep(_compile_unit, source, opts, t0, headers, True, target)
        if isinstance(parsed, BuildResult):
            return ObjectResult(False, parsed.log)
        ir_text, meta, _ = parsed
        meta["kind"] = "object"
        return ObjectResult(True, meta["log"], pack_object(target.tagged(meta), ir_text))
    except CompileError as e:
        return ObjectResult(False, _error_line(e) + "\n")
    except Exception as e:
        if debugging():
            raise
        err = limits.resource_error(e)
        return ObjectResult(False, _error_line(err) + "\n" if err else _internal_error(e))


def _compile_unit(source, opts, t0, headers=None, for_link=False, target=HOST, checks=frozenset()):
    """Parse and lower one translation unit: (LLVM IR text, meta, info) or a failed
    BuildResult. for_link: a compiled object; functions of the source with external linkage
    are emitted (callable from other units) and calls of functions only declared here stay
    external declarations, resolved by link(). target: the target whose module generator
    lowers the unit. checks: PYPLAT_CHECK's kinds compiled into the kernels (the checker:
    checker/instrument.py, which the host target installs as the module's instrumentation)."""
    args = ["-x", "cl", "-cl-no-stdinc", "-Xclang", "-fdeclare-opencl-builtins",
            "-include", HEADER] + opts.clang_args()
    unsaved = [(SOURCE_NAME, source)]
    if headers:
        args.append("-I" + HEADER_DIR)
        for name, text in headers:
            path = HEADER_DIR + "/" + name.lstrip("/")
            unsaved.append((path, text))
    texts = dict(unsaved)
    detailed = FPC.mentioned(texts.values())       # skipped lines are known only then
    try:
        tu = _get_index().parse(SOURCE_NAME, args=args, unsaved_files=unsaved,
                                options=FPC.DETAILED_RECORD if detailed else 0)
        if not detailed and FPC.included_mention(tu, texts, (HEADER,)):
            detailed = True
            tu = _get_index().parse(SOURCE_NAME, args=args, unsaved_files=unsaved,
                                    options=FPC.DETAILED_RECORD)
    except ci.TranslationUnitLoadError:
        # clang itself crashed (libclang recovers and says so on stderr): seen only on invalid
        # programs so far (tests/support/fuzz_source.py); there are no diagnostics to show
        return BuildResult(False, "%s:1:1: error: the OpenCL C front end (clang) crashed on this "
                           "program and gave no diagnostic; it is most likely not valid OpenCL C\n"
                           % SOURCE_NAME)
    t_parse = time.perf_counter()
    lines, errors = _diag_lines(tu)
    if errors:
        return BuildResult(False, "\n".join(lines) + "\n")
    log_prefix = ("\n".join(lines) + "\n") if lines else ""

    fe = Frontend(tu)
    fe.header = HEADER
    kernels = fe.run()
    for k in kernels:
        analysis.check_private(k, limits.MAX_PRIVATE_SIZE)
    exported, unavailable, variables = [], {}, []
    if for_link:
        memo = {}
        for k in kernels:          # a kernel is also a function other units may call (6.9)
            if func_has_barrier(k, memo):
                unavailable[k.name] = _error_line(CompileError(
                    "kernel '%s' uses barrier(): it can only be called as a function from kernels of "
                    "its own compilation unit" % k.name, k.cur))
        kernel_names = {k.name for k in kernels}
        for c in fe.exported_functions():
            if c.spelling in kernel_names or fe.is_kernel(c):
                continue
            try:
                f = fe.function(c, False)
                if func_has_barrier(f, memo):
                    raise CompileError("function '%s' uses barrier(): it can only be called from kernels "
                                       "of its own compilation unit" % f.name, c)
            except CompileError as e:
                unavailable[c.spelling] = _error_line(e)
                continue
            exported.append((f, c))
        variables = [fe.global_var(c, c) for c in PV.exported_variables(fe)]
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
    mg = target.module_gen(opts, checks, SOURCE_NAME)
    if detailed:
        mg.fp_contract = FPC.FPContract.from_tu(tu, texts, (HEADER,))
    for f, c in exported:
        mg.linkage[f] = "linkonce_odr" if _is_inline(c) else "external"
    if for_link:
        mg.export_vars = True
        for k in kernels:
            if k.name not in unavailable:
                mg.linkage[k] = "external"
        for v in variables:
            mg.global_var(v)
    names = mg.generate(kernels, [f for f, _ in exported])
    ir_text = str(mg.module)
    t_gen = time.perf_counter()
    opt_level = opts.opt_level
    depth, deep_loop = loop_nesting.deepest(kernels + [f for f, _ in exported])
    if opt_level and depth > loop_nesting.OPTIMISED_LOOP_DEPTH:     # (loop_nesting.py: why)
        opt_level = 0
        log_prefix += _error_line(CompileError(
            "loops nested %d deep (more than %d): the program is compiled without optimisation"
            % (depth, loop_nesting.OPTIMISED_LOOP_DEPTH), deep_loop), "warning") + "\n"
    check_sites = mg.instr.metadata()
    meta = {"log": log_prefix, "kernels": kernel_meta(kernels, names, check_sites,
                                                         "-cl-kernel-arg-info" in opts.flags), "regions": mg.regions,
            "unavailable": unavailable, "opt_level": opt_level}
    if check_sites is not None or mg.line_tables is not None:
        meta["lines"] = True        # source positions beyond the log's: cached for this exact text
    if mg.printf_formats:     # NVPTX: the formats of its printf records (JSON: string keys)
        meta["printf_formats"] = {str(i): list(f) for i, f in mg.printf_formats.items()}
    if for_link:        # signatures, so that link() can refuse a call through a wrong prototype
        callable_ = [f for f, _ in exported] + [k for k in kernels if k.name not in unavailable]
        meta["exports"] = {f.name: str(mg.fns[f].function_type) for f in callable_ if f in mg.fns}
        meta["inline"] = sorted(f.name for f, c in exported if mg.linkage.get(f) == "linkonce_odr")
        meta["symbols"] = {f.name: mg.fns[f].name for f in callable_ + list(fe.externs.values())
                           if f in mg.fns}
        meta["var_exports"] = {n: s for n, (s, decl) in mg.var_symbols.items() if not decl}
        meta["var_imports"] = {n: s for n, (s, decl) in mg.var_symbols.items() if decl}
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
