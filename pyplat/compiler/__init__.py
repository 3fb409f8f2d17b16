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
                 "private_mem_size", "_engine")      # _engine keeps the native code alive

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
    from .frontend import Frontend
    from .codegen import ModuleGen
    from . import analysis, jit, builtins, cache

    args = ["-x", "cl", "-cl-no-stdinc", "-Xclang", "-fdeclare-opencl-builtins",
            "-Xclang", "-cl-ext=+all", "-include", HEADER] + opts.clang_args()
    tu = _get_index().parse(SOURCE_NAME, args=args, unsaved_files=[(SOURCE_NAME, source)], options=0)
    t_parse = time.perf_counter()
    lines, errors = _diag_lines(tu)
    if errors:
        return BuildResult(False, "\n".join(lines) + "\n")
    log_prefix = ("\n".join(lines) + "\n") if lines else ""

    sources = _Sources()
    sources[SOURCE_NAME] = source
    fe = Frontend(tu, sources)
    kernels = fe.run()
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
    names = mg.generate(kernels)
    ir_text = str(mg.module)
    t_gen = time.perf_counter()
    # many parallel regions (barrier-heavy kernels such as scans): unrolling every region loop
    # costs more compile time than it gains
    obj = jit.compile_object(ir_text, opts.opt_level, unroll=mg.regions <= 12)
    t_jit = time.perf_counter()

    infos = {}
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
        infos[k.name] = {"name": k.name, "symbol": names[k.name],
                         "args": [{s: getattr(a, s) for s in ArgInfo.__slots__} for a in args_info],
                         "attributes": k.attributes, "reqd_work_group_size": list(k.reqd),
                         "local_mem_size": local_size, "private_mem_size": analysis.private_size(k)}
    includes = []
    for inc in tu.get_includes():
        f = inc.include
        if f is not None and f.name and f.name != SOURCE_NAME:
            includes.append(os.path.abspath(f.name))
    meta = {"log": log_prefix, "kernels": [infos[k.name] for k in kernels],
            "includes": cache.include_hashes(includes + [HEADER])}
    r = from_package_parts(meta, obj)
    r.package = cache.pack(meta, obj)
    r.timings = {"parse": t_parse - t0, "frontend": t_front - t_parse, "codegen": t_gen - t_front,
                 "llvm": t_jit - t_gen, "total": time.perf_counter() - t0}
    r.llvm_ir = ir_text
    return r


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
            private_mem_size=kd["private_mem_size"], _engine=ee)
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
