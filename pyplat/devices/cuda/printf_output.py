"""The output of printf on a CUDA device: the records a kernel left in the module's printf buffer
(layout: pyplat/compiler/targets/nvptx/abi.py), formatted with the C library's snprintf as
the CPU device's printf formats them, byte for byte.

    data = drain(read_bytes, result.printf_formats)   # after the kernel; read_bytes(offset, n)
    os.write(1, data)

Imports the compiler: import this module where a GPU launches, not at start-up.
"""
import ctypes
import struct

from pyplat.compiler.targets.nvptx.abi import (CURSOR_FORMAT, PRINTF_BUFFER_BYTES, PRINTF_HEADER_BYTES,
                                               RECORD_HEADER_BYTES, RECORD_HEADER_FORMAT, VALUE_BYTES,
                                               VALUE_FORMATS)

_libc = ctypes.CDLL(None)
_snprintf = _libc.snprintf
_snprintf.restype = ctypes.c_int
# the C vararg type of each record kind
_C_TYPES = {"i": ctypes.c_int, "l": ctypes.c_longlong, "d": ctypes.c_double, "p": ctypes.c_void_p}


def drain(read_bytes, formats, capacity=PRINTF_BUFFER_BYTES):
    """The printed bytes of one launch: read_bytes(offset, n) reads the device's printf buffer
    (offsets from its start); reads the cursor, then only the records it counts."""
    cursor = struct.unpack_from(CURSOR_FORMAT, bytes(read_bytes(0, PRINTF_HEADER_BYTES)))[0]
    if cursor == 0:
        return b""
    used = min(cursor, capacity - PRINTF_HEADER_BYTES)
    head = struct.pack(CURSOR_FORMAT, cursor).ljust(PRINTF_HEADER_BYTES, b"\0")
    return format_records(head + bytes(read_bytes(PRINTF_HEADER_BYTES, used)), formats, capacity)


def format_records(data, formats, capacity=PRINTF_BUFFER_BYTES):
    """The printed bytes of a printf buffer's contents `data` (from its start, possibly cut
    short); formats: {format id: (C format, kinds)} (BuildResult.printf_formats). Stops at the
    first record that is cut short or malformed; says so when records did not fit."""
    if len(data) < PRINTF_HEADER_BYTES:
        return b""
    cursor = struct.unpack_from(CURSOR_FORMAT, data)[0]
    end = min(PRINTF_HEADER_BYTES + cursor, capacity, len(data))
    out = []
    pos = PRINTF_HEADER_BYTES
    while pos + RECORD_HEADER_BYTES <= end:
        fid, size = struct.unpack_from(RECORD_HEADER_FORMAT, data, pos)
        if size < RECORD_HEADER_BYTES or size % VALUE_BYTES or pos + size > end:
            break
        values = data[pos + RECORD_HEADER_BYTES:pos + size]
        entry = formats.get(fid)
        if entry is None:
            out.append(b"[pyplat: unknown printf format id 0x%08x]\n" % fid)
        else:
            fmt, kinds = entry
            if len(kinds) * VALUE_BYTES != len(values):
                break
            out.append(_format(fmt.encode("latin-1"), kinds, values))
        pos += size
    if PRINTF_HEADER_BYTES + cursor > capacity:
        out.append(b"[pyplat: the printf buffer (%d bytes) is full: later printf output of this "
                   b"launch was dropped]\n" % capacity)
    return b"".join(out)


def _format(c_format, kinds, values):
    """snprintf(c_format, values...) as the CPU device's printf calls it."""
    args = [_argument(k, values[i * VALUE_BYTES:(i + 1) * VALUE_BYTES]) for i, k in enumerate(kinds)]
    n = _snprintf(None, ctypes.c_size_t(0), c_format, *args)
    if n < 0:
        return b""
    buf = ctypes.create_string_buffer(n + 1)
    _snprintf(buf, ctypes.c_size_t(n + 1), c_format, *args)
    return buf.raw[:n]


def _argument(kind, raw):
    """The C vararg of one record value (a null pointer as None: ctypes passes it as NULL)."""
    value = struct.unpack_from(VALUE_FORMATS[kind], raw)[0]
    return _C_TYPES[kind](value or None) if kind == "p" else _C_TYPES[kind](value)
