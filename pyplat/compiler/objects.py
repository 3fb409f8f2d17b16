"""The compiler's byte formats, and loading a compiled program from them.

* A *package* (an executable program: the cache's entries, inside program binaries) is
  ``PACKAGE_MAGIC + <8-byte length> + JSON + object code + sha256``. The JSON holds the
  environment (environment.py), the identity it was made for (``origin``: the cache key of its
  source, options and header, or of a link's inputs and flags), the build log, the kernels'
  metadata (metadata.py) and the files the program included with their content hashes. Loading
  one links the object code into a fresh MCJIT engine: no libclang, no optimiser.
* A *compiled object* or *library* (clCompileProgram, clLinkProgram -create-library) is
  ``OBJECT_MAGIC + <8-byte length> + JSON + LLVM IR text + sha256``; its JSON adds what linking
  needs (kind, exported and imported signatures, regions, opt level, functions unavailable to
  others) and, for another target than the host (NVPTX), that target's name: its IR is that
  target's module, linkable only with objects of the same target.

The last 32 bytes of both are the sha256 of every byte before them. It is checked before
anything else is read (before the JSON is parsed, long before object code reaches llvmlite), so
a truncated, zeroed or bit-flipped file is refused (None) instead of loading corrupted machine
code. It guards against damage, not against someone who forges a file and its checksum. Both
are also refused (None) when made for another environment.
"""
import hashlib
import json
import struct

from .. import config
from . import jit, line_table
from .environment import environment
from .metadata import kernel_infos
from .results import BuildResult

PACKAGE_MAGIC = b"PYPLAT-OBJ-2\n"     # -1: no checksum, no origin (refused)
OBJECT_MAGIC = b"PYPLAT-IR-2\n"
DIGEST_SIZE = 32


def seal(data):
    """data + its sha256: the trailer every byte format of the compiler (and of program
    binaries, core/program.py) ends with."""
    return data + hashlib.sha256(data).digest()


def unseal(data):
    """The bytes before a valid sha256 trailer, or None when data is not `seal`ed bytes (any
    byte changed, lost or added)."""
    if not isinstance(data, (bytes, bytearray)) or len(data) <= DIGEST_SIZE:
        return None
    body = memoryview(data)[:-DIGEST_SIZE]
    if hashlib.sha256(body).digest() != bytes(data[-DIGEST_SIZE:]):
        return None
    return body


def _pack(magic, meta, payload):
    meta = dict(meta, env=environment())
    j = json.dumps(meta, separators=(",", ":")).encode()
    return seal(magic + struct.pack("<Q", len(j)) + j + payload)


def _unpack(magic, data):
    """(meta, payload bytes), or None when data is not in this format or fails its checksum."""
    if not isinstance(data, (bytes, bytearray)) or not data.startswith(magic):
        return None
    body = unseal(data)
    if body is None:
        return None
    try:
        (n,) = struct.unpack_from("<Q", body, len(magic))
        start = len(magic) + 8
        if start + n > len(body):
            return None
        meta = json.loads(bytes(body[start:start + n]))
    except (struct.error, ValueError):
        return None
    if not isinstance(meta, dict):
        return None
    return meta, bytes(body[start + n:])


# ----------------------------------------------------------------------------- packages
def pack_package(meta, obj):
    return _pack(PACKAGE_MAGIC, meta, obj)


def read_package(data):
    """(meta, object bytes) of an intact package of any environment, else None."""
    parts = _unpack(PACKAGE_MAGIC, data)
    if parts is None or not isinstance(parts[0].get("kernels"), list):
        return None
    return parts


def unpack_package(data):
    """(meta, object bytes) or None if not an intact package of this environment."""
    parts = read_package(data)
    if parts is None or parts[0].get("env") != environment():
        return None
    return parts


def from_package_parts(meta, obj, package=None):
    """A BuildResult from kernel metadata and object code: links the code, compiles nothing.
    `package`: the verified bytes they came from (else they are packed again)."""
    ee = jit.load_object(obj)
    r = BuildResult(True, meta.get("log", ""), kernels=kernel_infos(meta["kernels"], ee), engine=ee)
    r.line_table = line_table.read(obj) if meta.get("lines") else None
    r.package = bytes(package) if package is not None else pack_package(meta, obj)
    return r


def load_package(data):
    """BuildResult from a package (bytes, as BuildResult.package), or None if it is not one made
    for this machine, compiler and LLVM (the caller then compiles from source)."""
    parts = unpack_package(data)
    if parts is None or parts[0].get("target"):     # another target's code (PTX): not for the host
        return None
    if parts[0].get("checks", []) != sorted(config.value("PYPLAT_CHECK")):
        return None          # built with other checks compiled in (PYPLAT_CHECK): from source
    return from_package_parts(*parts, data)


# ----------------------------------------------------------------------------- compiled objects
def pack_object(meta, ir_text):
    return _pack(OBJECT_MAGIC, meta, ir_text.encode())


ANY_TARGET = "any"        # unpack_object(data, ANY_TARGET): an object of whichever target


def unpack_object(data, target):
    """(meta, IR text) of a compiled object or library made by this compiler on this machine for
    `target` (a target object, targets/; ANY_TARGET: any; meta["target"] holds the target's
    recorded_name), else None."""
    parts = _unpack(OBJECT_MAGIC, data)
    if parts is None:
        return None
    meta, payload = parts
    try:
        ir_text = payload.decode()
    except UnicodeDecodeError:
        return None
    if meta.get("env") != environment() or meta.get("kind") not in ("object", "library") \
            or not isinstance(meta.get("kernels"), list):
        return None
    if target is not ANY_TARGET and meta.get("target") != target.recorded_name:
        return None
    return meta, ir_text
