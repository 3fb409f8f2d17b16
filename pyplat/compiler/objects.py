"""The compiler's byte formats, and loading a compiled program from them.

* A *package* (an executable program: the cache's entries, inside program binaries) is
  ``PACKAGE_MAGIC + <8-byte length> + JSON + object code``. The JSON holds the environment
  (environment.py), the build log, the kernels' metadata (metadata.py) and the files the
  program included with their content hashes. Loading one links the object code into a fresh
  MCJIT engine: no libclang, no optimiser.
* A *compiled object* or *library* (clCompileProgram, clLinkProgram -create-library) is
  ``OBJECT_MAGIC + <8-byte length> + JSON + LLVM IR text``; its JSON adds what linking needs
  (kind, exported and imported signatures, regions, opt level, functions unavailable to others).

Both are refused (None) when made for another environment.
"""
import json
import struct

from . import jit
from .environment import environment
from .metadata import kernel_infos
from .results import BuildResult

PACKAGE_MAGIC = b"PYPLAT-OBJ-1\n"
OBJECT_MAGIC = b"PYPLAT-IR-1\n"


def _pack(magic, meta, payload):
    meta = dict(meta, env=environment())
    j = json.dumps(meta, separators=(",", ":")).encode()
    return magic + struct.pack("<Q", len(j)) + j + payload


def _unpack(magic, data):
    """(meta, payload bytes), or None when data is not in this format."""
    if not isinstance(data, (bytes, bytearray)) or not data.startswith(magic):
        return None
    try:
        (n,) = struct.unpack_from("<Q", data, len(magic))
        start = len(magic) + 8
        meta = json.loads(data[start:start + n])
    except (struct.error, ValueError):
        return None
    return meta, bytes(data[start + n:])


# ----------------------------------------------------------------------------- packages
def pack_package(meta, obj):
    return _pack(PACKAGE_MAGIC, meta, obj)


def unpack_package(data):
    """(meta, object bytes) or None if not a package of this environment."""
    parts = _unpack(PACKAGE_MAGIC, data)
    if parts is None or parts[0].get("env") != environment():
        return None
    return parts


def from_package_parts(meta, obj):
    """A BuildResult from kernel metadata and object code: links the code, compiles nothing."""
    ee = jit.load_object(obj)
    r = BuildResult(True, meta.get("log", ""), kernels=kernel_infos(meta["kernels"], ee), engine=ee)
    r.package = pack_package(meta, obj)
    return r


def load_package(data):
    """BuildResult from a package (bytes, as BuildResult.package), or None if it is not one made
    for this machine, compiler and LLVM (the caller then compiles from source)."""
    parts = unpack_package(data)
    if parts is None:
        return None
    return from_package_parts(*parts)


# ----------------------------------------------------------------------------- compiled objects
def pack_object(meta, ir_text):
    return _pack(OBJECT_MAGIC, meta, ir_text.encode())


def unpack_object(data):
    """(meta, IR text) of a compiled object or library made by this compiler on this machine,
    else None."""
    parts = _unpack(OBJECT_MAGIC, data)
    if parts is None:
        return None
    meta, payload = parts
    try:
        ir_text = payload.decode()
    except UnicodeDecodeError:
        return None
    if meta.get("env") != environment() or meta.get("kind") not in ("object", "library"):
        return None
    return meta, ir_text
