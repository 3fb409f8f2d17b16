"""Compiled programs as bytes (object code + kernel metadata), and the on-disk cache.

A *package* is ``MAGIC + <8-byte length> + JSON + object code``. The JSON holds the environment
key (compiler sources, header, llvmlite/LLVM, host CPU name and features, PyPlat version), the
build log, the kernels' metadata and the files the program included with their content hashes.
Loading one links the object code into a fresh MCJIT engine: no libclang, no optimiser.

The cache (``PYPLAT_CACHE_DIR``, default ``$XDG_CACHE_HOME/pyplat`` or ``~/.cache/pyplat``;
``PYPLAT_CACHE_DIR=off`` disables it) keys each entry on sha256(environment, source, options);
an entry is used only if every file the program included still has the recorded hash, so a
changed header or ``#include``d file is a miss. Entries are written to a temporary file in the
same directory and renamed into place (``os.replace``), so concurrent processes never see a
partial entry.
"""
import hashlib
import json
import os
import struct
import tempfile

from . import library

MAGIC = b"PYPLAT-OBJ-1\n"
_env = {}


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def _file_sha(path):
    try:
        with open(path, "rb") as f:
            return _sha(f.read())
    except OSError:
        return None


def compiler_version():
    """Hash of the compiler's own sources, its subpackages' and the builtin library's
    (kernels/builtins) (once per process)."""
    v = _env.get("compiler")
    if v is None:
        h = hashlib.sha256()
        top = os.path.dirname(os.path.abspath(__file__))
        for d, _, files in sorted(os.walk(top)):
            for name in sorted(files):
                if name.endswith(".py"):
                    with open(os.path.join(d, name), "rb") as f:
                        h.update(os.path.relpath(os.path.join(d, name), top).encode() + b"\0" + f.read())
        h.update(b"library\0" + library.fingerprint().encode())
        v = _env["compiler"] = h.hexdigest()
    return v


def environment():
    """Everything besides the program that changes the generated code (cached per process)."""
    e = _env.get("env")
    if e is None:
        import llvmlite
        import llvmlite.binding as llvm
        from . import jit
        s = jit._init()
        try:
            from pyplat import __version__ as pv
        except ImportError:
            pv = "?"
        e = _env["env"] = "|".join([
            "compiler=" + compiler_version(), "llvmlite=" + llvmlite.__version__,
            "llvm=%s" % (llvm.llvm_version_info,), "cpu=" + s["cpu"], "features=" + s["features"],
            "triple=" + s["triple"], "pyplat=" + str(pv)])
    return e


def key(source, options, header):
    """Cache key: environment + header contents + source + options."""
    h = hashlib.sha256()
    for part in (environment(), _file_sha(header) or "", options or "", source):
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        h.update(struct.pack("<Q", len(data)) + data)
    return h.hexdigest()


# ----------------------------------------------------------------------------- packages
def pack(meta, obj):
    meta = dict(meta, env=environment())
    j = json.dumps(meta, separators=(",", ":")).encode()
    return MAGIC + struct.pack("<Q", len(j)) + j + obj


def unpack(data):
    """(meta, object bytes) or None if not a package of this environment."""
    if not data.startswith(MAGIC):
        return None
    try:
        (n,) = struct.unpack_from("<Q", data, len(MAGIC))
        start = len(MAGIC) + 8
        meta = json.loads(data[start:start + n])
        obj = data[start + n:]
    except (struct.error, ValueError):
        return None
    if meta.get("env") != environment():
        return None
    return meta, bytes(obj)


def includes_fresh(meta):
    for path, sha in meta.get("includes", []):
        if _file_sha(path) != sha:
            return False
    return True


def include_hashes(paths):
    return [[p, _file_sha(p)] for p in sorted(set(paths)) if p]


# ----------------------------------------------------------------------------- the directory
def cache_dir():
    d = os.environ.get("PYPLAT_CACHE_DIR")
    if d is not None:
        if d.strip().lower() in ("", "off", "0", "none"):
            return None
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pyplat")


def load(k):
    d = cache_dir()
    if d is None:
        return None
    try:
        with open(os.path.join(d, k[:2], k), "rb") as f:
            data = f.read()
    except OSError:
        return None
    r = unpack(data)
    if r is None or not includes_fresh(r[0]):
        return None
    return r


def store(k, data):
    d = cache_dir()
    if d is None:
        return
    sub = os.path.join(d, k[:2])
    try:
        os.makedirs(sub, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=sub, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, os.path.join(sub, k))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass        # a read-only or full cache directory only costs the next build
