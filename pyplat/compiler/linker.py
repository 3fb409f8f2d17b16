"""clLinkProgram: compiled objects and libraries (objects.py) linked into an executable program
or a library. The units' LLVM modules are linked with LLVM's linker after checking kernels and
function signatures across them; an executable then goes the way of every build (its target's
`codegen`, targets/) and is cached like one. All inputs of a link are of its target."""
import hashlib
import re
import shlex
import time

import llvmlite.binding as llvm

from . import cache, driver, jit
from . import library as builtin_library
from . import options as _options
from .objects import ANY_TARGET, pack_object, unpack_object
from .results import BuildResult, ObjectResult, debugging, describe
from .targets.host import HOST
from .tree import CompileError

LINK_FLAGS = {"-create-library", "-enable-link-options", "-cl-denorms-are-zero", "-cl-no-signed-zeros",
              "-cl-unsafe-math-optimizations", "-cl-finite-math-only", "-cl-fast-relaxed-math",
              "-cl-no-subgroup-ifp"}


def parse_link_options(text):
    """The set of link options, or raises InvalidOption (CL_INVALID_LINKER_OPTIONS)."""
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


def link(objects, options="", use_cache=True, target=HOST):
    """clLinkProgram: compiled objects / libraries (bytes from compile_object / link) -> a
    BuildResult (executable) or, with -create-library, an ObjectResult of kind "library".
    The units' LLVM modules are linked (functions defined in one unit and declared in another
    resolve), then optimised and compiled as a whole. target: the code-generation target
    (HOST, targets.nvptx) every input was compiled for; its executables carry the target's code
    (NVPTX's `ptx`), its libraries name it. Never raises for bad input."""
    t0 = time.perf_counter()
    try:
        flags = parse_link_options(options)
    except _options.InvalidOption as e:
        return BuildResult(False, "error: %s\n" % e, invalid_options=True)
    library = "-create-library" in flags
    cls = ObjectResult if library else BuildResult
    parts = []
    for i, data in enumerate(objects):
        p = unpack_object(data, ANY_TARGET)
        if p is None:
            return cls(False, "error: input %d is not a compiled object or library of this "
                              "compiler and machine\n" % i)
        parts.append(p)
    wrong = _other_targets(parts, target)
    if wrong:
        return cls(False, wrong)
    k = origin = None
    if not library:
        h = hashlib.sha256()
        for data in objects:
            h.update(hashlib.sha256(data).digest())
        try:        # the identity the package carries; the cache key too (per target, as build's)
            origin = cache.key(h.hexdigest(), "link:" + " ".join(sorted(flags)) + target.key_suffix,
                               driver.HEADER)
            k = origin if use_cache else None
            hit = cache.load(k) if k else None
            if hit is not None:
                r = target.from_package_parts(*hit)
                r.timings = {"cached": True, "total": time.perf_counter() - t0}
                r.cache_key = k
                return r
        except Exception:
            if debugging():
                raise
            k = None
    try:
        r = _link(parts, library, t0, origin, target)
        if not library and r.ok and k is not None:
            cache.store(k, r.package)
            r.cache_key = k
        return r
    except CompileError as e:        # what the target's back end refuses (NVPTX: a host-only call)
        return cls(False, "".join(m.get("log", "") for m, _ in parts) + "error: %s\n" % e.msg)
    except Exception as e:
        if debugging():
            raise
        return cls(False, "error: internal linker error: %s\n" % describe(e))


def _other_targets(parts, target):
    """The error lines for inputs compiled for another target than the link's ("" when none):
    one module holds one target's code, so objects of different targets never link."""
    want = target.recorded_name
    lines = ["error: %s was compiled for %s, but this link is for %s (objects of different targets "
             "cannot be linked)" % (_unit(i, meta), _recorded_label(meta.get("target")), target.label)
             for i, (meta, _) in enumerate(parts) if meta.get("target") != want]
    return "".join(line + "\n" for line in lines)


def _recorded_label(recorded_name):
    """How a link error names the target an input records (the host's records none)."""
    return HOST.label if recorded_name == HOST.recorded_name else recorded_name


def _unit(i, meta):
    """An input named for the build log: its position in clLinkProgram's list, its kind and
    what it defines."""
    names = [k["name"] for k in meta["kernels"]] or sorted(meta.get("exports", {})) or \
        sorted(meta.get("var_exports", {}))
    what = (" defining %s" % ", ".join(names[:3] + (["..."] if len(names) > 3 else []))) if names else ""
    return "input %d (a %s%s)" % (i, "library" if meta.get("kind") == "library" else "compiled object", what)


def _definitions(meta):
    """name -> 'kernel' | 'function' | 'variable' for every symbol an input defines for others
    (inline functions excepted: each unit may have its own copy)."""
    out = {n: "function" for n in meta.get("exports", {}) if n not in set(meta.get("inline", ()))}
    out.update((k["name"], "kernel") for k in meta["kernels"])
    out.update((n, "variable") for n in meta.get("var_exports", {}))
    return out


def _check(parts):
    """The error lines of a link of these inputs that can be told from their metadata: symbols
    defined twice, calls through a prototype that does not match the definition, variables
    declared `extern` with another size than their definition or defined nowhere."""
    where, exports, var_exports, errors = {}, {}, {}, []
    for i, (meta, _) in enumerate(parts):
        for name, kind in _definitions(meta).items():
            if name in where:
                j, other = where[name]
                errors.append("error: %s '%s' is defined in more than one input: %s and %s"
                              % (kind if kind == other else "symbol", name, _unit(j, parts[j][0]), _unit(i, meta)))
            else:
                where[name] = (i, kind)
        exports.update(meta.get("exports", {}))
        var_exports.update(meta.get("var_exports", {}))
    for i, (meta, _) in enumerate(parts):
        for name, sig in meta.get("imports", {}).items():
            if name in exports and exports[name] != sig:
                def show(t):       # without the hidden work-item parameter
                    return t.replace("(ptr, ", "(", 1).replace("(ptr)", "()", 1)
                errors.append("error: function '%s' is declared with LLVM type '%s' in %s but defined as "
                              "'%s'" % (name, show(sig), _unit(i, meta), show(exports[name])))
        for name, size in meta.get("var_imports", {}).items():
            if name in var_exports and size and var_exports[name] != size:
                errors.append("error: variable '%s' is declared with a size of %d bytes in %s but defined "
                              "with %d bytes" % (name, size, _unit(i, meta), var_exports[name]))
    return errors


def _rename_calls(parts):
    """A function declared as a plain function in one unit (`f.<name>`) and defined as a kernel in
    another (`k.<name>`), or the reverse: the declaring unit's references take the definition's
    symbol. Returns the parts with their IR adjusted."""
    defined = {}
    for meta, _ in parts:
        for name, sym in meta.get("symbols", {}).items():
            if name in meta.get("exports", {}):
                defined[name] = sym
    out = []
    for meta, ir_text in parts:
        for name, sym in meta.get("symbols", {}).items():
            definition = defined.get(name)
            if name in meta.get("imports", {}) and definition is not None and definition != sym:
                ir_text = re.sub(r'@"?%s"?(?=[^\w.$"]|$)' % re.escape(sym), "@" + definition, ir_text)
        out.append((meta, ir_text))
    return out


def _link(parts, library, t0, origin=None, target=HOST):
    fail = (lambda msg: ObjectResult(False, msg, kind="library")) if library else \
        (lambda msg: BuildResult(False, msg))
    log = "".join(m.get("log", "") for m, _ in parts)
    errors = _check(parts)
    if errors:
        return fail(log + "\n".join(errors) + "\n")
    kernels, unavailable, exports, inline, var_exports = [], {}, {}, set(), {}
    for meta, _ in parts:
        kernels += meta["kernels"]
        unavailable.update(meta.get("unavailable", {}))
        exports.update(meta.get("exports", {}))
        inline.update(meta.get("inline", ()))
        var_exports.update(meta.get("var_exports", {}))
    parts = _rename_calls(parts)
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
        if not library:         # an executable gets the kernels/builtins/*.cl definitions it calls
            builtin_library.link_module(mod, driver._compile_unit)
        undefined = [fn.name for fn in mod.functions
                     if fn.is_declaration and fn.name.startswith(("f.", "k."))]
        undefined_vars = [g.name[2:] for g in mod.global_variables
                          if g.is_declaration and g.name.startswith("g.")]
        if library:
            imports, var_imports, symbols = {}, {}, {}
            for m, _ in parts:
                imports.update(m.get("imports", {}))
                var_imports.update(m.get("var_imports", {}))
                symbols.update((n, sym) for n, sym in m.get("symbols", {}).items() if n not in symbols
                               or n in m.get("exports", {}))
            meta = {"log": log, "kernels": kernels, "kind": "library", "unavailable": unavailable,
                    "exports": exports, "imports": {n: s for n, s in imports.items() if n not in exports},
                    "inline": sorted(inline), "symbols": symbols, "var_exports": var_exports,
                    "var_imports": {n: s for n, s in var_imports.items() if n not in var_exports},
                    "regions": sum(m.get("regions", 0) for m, _ in parts),
                    "opt_level": min(m.get("opt_level", 3) for m, _ in parts)}
            if any(m.get("lines") for m, _ in parts):
                meta["lines"] = True
            return ObjectResult(True, log, pack_object(target.tagged(meta), str(mod)), kind="library")
        if undefined or undefined_vars:
            lines = ["error: undefined variable '%s' (declared extern, but defined in none of the linked "
                     "programs)" % name for name in undefined_vars]
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
        for g in mod.global_variables:
            if g.name.startswith("g.") and not g.is_declaration:
                g.linkage = llvm.Linkage.internal
        ir_text = str(mod)
    t_link = time.perf_counter()
    regions = sum(m.get("regions", 0) for m, _ in parts)
    opt_level = min(m.get("opt_level", 3) for m, _ in parts)
    pmeta = {"log": log, "kernels": kernels, "includes": [], "origin": origin}
    if any(m.get("lines") for m, _ in parts):
        pmeta["lines"] = True       # (-g units: the object has a line table; checks: sites)
    notes = []                 # LLVM's diagnostics: end of the link log, as in driver._build
    code = target.codegen(ir_text, opt_level, regions, kernels, notes)
    pmeta["log"] = log + "".join(notes)
    r = target.from_package_parts(target.tagged(pmeta), code)       # (also packs it: r.package)
    r.timings = {"link": t_link - t0, "llvm": time.perf_counter() - t_link, "total": time.perf_counter() - t0}
    r.llvm_ir = ir_text
    return r
