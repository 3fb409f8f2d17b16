"""What changes the generated code besides the program: the compiler's own sources, llvmlite and
LLVM, the host CPU and PyPlat's version. Packages and compiled objects record it (made for
another environment, they are refused) and cache keys include it."""
import hashlib
import os

import llvmlite
import llvmlite.binding as llvm

from .. import __version__
from . import jit, library

_env = {}


def compiler_version():
    """Hash of the compiler's own sources, subpackages included, and of the builtin library
    (kernels/builtins) (once per process)."""
    v = _env.get("compiler")
    if v is None:
        h = hashlib.sha256()
        top = os.path.dirname(os.path.abspath(__file__))
        paths = []
        for d, dirs, files in os.walk(top):
            dirs[:] = [x for x in dirs if x != "__pycache__"]
            paths += [os.path.join(d, f) for f in files if f.endswith(".py")]
        for path in sorted(paths, key=lambda p: os.path.relpath(p, top)):
            with open(path, "rb") as f:
                h.update(os.path.relpath(path, top).encode() + b"\0" + f.read())
        h.update(b"library\0" + library.fingerprint().encode())     # kernels/builtins/*.cl, *.h
        v = _env["compiler"] = h.hexdigest()
    return v


def environment():
    """Everything besides the program that changes the generated code (cached per process)."""
    e = _env.get("env")
    if e is None:
        s = jit._init()
        e = _env["env"] = "|".join([
            "compiler=" + compiler_version(), "llvmlite=" + llvmlite.__version__,
            "llvm=%s" % (llvm.llvm_version_info,), "cpu=" + s["cpu"], "features=" + s["features"],
            "triple=" + s["triple"], "pyplat=" + str(__version__)])
    return e
