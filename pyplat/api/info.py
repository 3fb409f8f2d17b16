"""Info queries: typed values and the spec's rules for returning them.

An info table maps a param name to (encoder, getter). The encoder fixes the C type, so a query
can never drift from its declared type and size; the getter reads the value from a core object.
"""
import ctypes
import struct

from pyplat import cl
from pyplat.api.errors import CLError


def uint(v):        return struct.pack("=I", v)
def int32(v):       return struct.pack("=i", v)
def ulong(v):       return struct.pack("=Q", v)
def size_t(v):      return struct.pack("=Q", v)
def boolean(v):     return struct.pack("=I", 1 if v else 0)
def pointer(v):     return struct.pack("=Q", v or 0)
bitfield = ulong
version = uint                                     # cl_version: major<<22 | minor<<12 | patch


def string(v):
    return v.encode() + b"\0"


def size_t_array(values):
    return struct.pack(f"={len(values)}Q", *values)


def ulong_array(values):
    return struct.pack(f"={len(values)}Q", *values)


def name_versions(pairs):
    """cl_name_version[]: {cl_version version; char name[64]} per entry."""
    out = bytearray()
    for name, ver in pairs:
        out += struct.pack("=I", ver) + name.encode().ljust(cl.CL_NAME_VERSION_MAX_NAME_SIZE, b"\0")
    return bytes(out)


def raw(v):
    return bytes(v)


def make_version(major, minor, patch=0):
    return (major << 22) | (minor << 12) | patch


def return_value(data, param_value_size, param_value, param_value_size_ret):
    """Copy an encoded value out as clGet*Info does: CL_INVALID_VALUE if it does not fit."""
    if param_value:
        if param_value_size < len(data):
            raise CLError(cl.CL_INVALID_VALUE, "param_value_size is smaller than the value")
        ctypes.memmove(param_value, data, len(data))
    if param_value_size_ret:
        ctypes.c_size_t.from_address(param_value_size_ret).value = len(data)


def query(table, obj, param_name, param_value_size, param_value, param_value_size_ret):
    """Answer one query from a table of param -> (encoder, getter(obj))."""
    entry = table.get(param_name)
    if entry is None:
        raise CLError(cl.CL_INVALID_VALUE, f"unknown param_name {param_name:#x}")
    encode, get = entry
    return_value(encode(get(obj)), param_value_size, param_value, param_value_size_ret)


def read_properties(address, width=8):
    """A zero-terminated (name, value) property list at `address` -> list of pairs and raw list."""
    if not address:
        return [], []
    ctype = ctypes.c_uint64 if width == 8 else ctypes.c_uint32
    pairs, flat, i = [], [], 0
    while True:
        name = ctype.from_address(address + i * width).value
        flat.append(name)
        if name == 0:
            return pairs, flat
        value = ctype.from_address(address + (i + 1) * width).value
        flat.append(value)
        pairs.append((name, value))
        i += 2
        if i > 1024:
            raise CLError(cl.CL_INVALID_PROPERTY, "property list is not terminated")


def write_uint(address, value):
    if address:
        ctypes.c_uint32.from_address(address).value = value
