"""The builtin library: builtins written in OpenCL C (kernels/builtins/*.cl).

A builtin `<name>` of the library is defined per type T as `__pyplat_<name>_<T>` (gentype.h
says how); the lowering (builtins/from_library.py) calls that definition and this module links
the definitions a program calls into its LLVM module before optimisation, where the calls inline
(PoCL's kernel library and libclc work the same way). The library is compiled by our own
compiler, once per process and code-generation setting (fast-math or not: it sets the
instructions' flags), when the first program that needs it is built. Its sources are part of the
compile cache's environment (cache.compiler_version), so a changed .cl file is never served
from a stale cache entry.
"""
import hashlib
import os
import re
import shlex
import time

import llvmlite.binding as llvm

from . import jit
from . import options as _options
from .tree import CompileError

_HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS_DIR = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "kernels")
if not os.path.isdir(KERNELS_DIR):      # installed layout: site-packages/pyplat/kernels
    KERNELS_DIR = os.path.join(os.path.dirname(_HERE), "kernels")
LIBRARY_DIR = os.path.join(KERNELS_DIR, "builtins")

PREFIX = "f.__pyplat_"            # the code generator names an OpenCL C function f.<name>
FAST = ".fast"                    # suffix of the fast-math variant's symbols
_TYPE = r"(?:half|float|double|u?char|u?short|u?int|u?long)(?:2|3|4|8|16)?"
_DEFINITION = re.compile(r"\b__pyplat_([a-z][a-z0-9_]*?)_(?:##|%s\b)" % _TYPE)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_DECLARED = re.compile(r"^declare [^\n]*@\"?(%s[\w.]+)" % re.escape(PREFIX), re.M)
_DEFINED = re.compile(r"@\"?([\w.$-]+)\"?\(")          # the name in a `define` line
_CALLED = re.compile(r"@\"?(%s[\w.]+)\"?\(" % re.escape(PREFIX))

_compiled = {}                    # (fast, fingerprint) -> _Library


def source_files():
    """Paths of the library's files (.cl and the headers they include), sorted."""
    try:
        names = sorted(os.listdir(LIBRARY_DIR))
    except OSError:
        return []
    return [os.path.join(LIBRARY_DIR, n) for n in names if n.endswith((".cl", ".h"))]


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def fingerprint():
    """sha256 of the library's file names and contents."""
    h = hashlib.sha256()
    for path in source_files():
        with open(path, "rb") as f:
            h.update(os.path.basename(path).encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def builtin_names():
    """{builtin name: .cl file name} of every builtin the library defines."""
    out = {}
    for path in source_files():
        if path.endswith(".cl"):
            for m in _DEFINITION.finditer(_COMMENT.sub(" ", _read(path))):
                out.setdefault(m.group(1), os.path.basename(path))
    return out


def symbol(name, t, fast):
    """The LLVM symbol of builtin `name`'s definition for type t (a pyplat.compiler.types type)."""
    return PREFIX + name + "_" + t.name + (FAST if fast else "")


class _Library:
    """The library compiled for one code-generation setting, as LLVM IR text in pieces, so that
    a program links only the definitions it calls (the optimiser then has nothing else to do)."""

    def __init__(self, text, fast):
        mod = llvm.parse_assembly(text)
        if fast:
            for fn in mod.functions:
                if fn.name.startswith(PREFIX):
                    fn.name = fn.name + FAST
        self.head, self.tail, self.definitions = [], [], {}
        lines = iter(str(mod).splitlines())
        for line in lines:
            if line.startswith("define "):
                body = [line]
                while not body[-1].startswith("}"):
                    body.append(next(lines))
                self.definitions[_DEFINED.search(line).group(1)] = "\n".join(body)
            elif line.startswith(("target ", "declare ")):
                self.head.append(line)
            elif line.startswith(("attributes ", "!")):
                self.tail.append(line)

    def module(self, names):
        """The definitions of `names` and of the library functions they call, as a module."""
        todo, text = list(names), []
        done = set()
        while todo:
            name = todo.pop()
            if name in done or name not in self.definitions:
                continue
            done.add(name)
            text.append(self.definitions[name])
            todo += _CALLED.findall(self.definitions[name])
        return llvm.parse_assembly("\n".join(self.head + text + self.tail) + "\n")


def _library(fast, compile_unit):
    """The library compiled for one code-generation setting; call under jit._lock."""
    key = (fast, fingerprint())
    lib = _compiled.get(key)
    if lib is None:
        source = "".join(_read(p) + "\n" for p in source_files() if p.endswith(".cl"))
        opts = _options.parse("-I " + shlex.quote(LIBRARY_DIR) +
                              (" -cl-unsafe-math-optimizations" if fast else ""))
        parsed = compile_unit(source, opts, time.perf_counter(), for_link=True)
        if not isinstance(parsed, tuple):       # a failed BuildResult: the library is broken
            raise CompileError("the builtin library (%s) does not compile:\n%s" % (LIBRARY_DIR, parsed.log))
        lib = _compiled[key] = _Library(parsed[0], fast)
    return lib


def link(ir_text, compile_unit):
    """ir_text with the library's definitions it calls linked in (unchanged when it calls none).
    compile_unit: the build driver's function compiling one unit (source, opts, t0, for_link)."""
    if PREFIX not in ir_text or not _DECLARED.search(ir_text):
        return ir_text
    with jit._lock:
        jit._init()
        mod = llvm.parse_assembly(ir_text)
        link_module(mod, compile_unit)
        return str(mod)


def link_module(mod, compile_unit):
    """Link the library's definitions that module `mod` (llvmlite.binding) declares into it, as
    internal functions; call under jit._lock."""
    wanted = [fn.name for fn in mod.functions if fn.is_declaration and fn.name.startswith(PREFIX)]
    for fast in sorted({name.endswith(FAST) for name in wanted}):
        names = [n for n in wanted if n.endswith(FAST) == fast]
        mod.link_in(_library(fast, compile_unit).module(names))
    for fn in mod.functions:
        if fn.name.startswith(PREFIX):
            if fn.is_declaration:
                raise CompileError("the builtin library (%s) has no definition %s"
                                   % (LIBRARY_DIR, fn.name[len("f."):]))
            fn.linkage = llvm.Linkage.internal
