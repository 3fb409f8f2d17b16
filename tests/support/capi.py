"""The OpenCL C API of PyPlat called in-process, without a loader: each clXxx is the very ctypes
callback the ICD shim would call, so arguments, return codes and errcode_ret behave as from C.

    from support.capi import CL, addr, err
    n = ctypes.c_uint32(); CL.clGetPlatformIDs(0, None, ctypes.byref(n))
"""
import ctypes

from pyplat.api import bridge, handles
from pyplat.api._entry_points import ENTRY_POINTS
from pyplat.api.entry import IMPLEMENTED, load_all


class _API:
    def __init__(self):
        load_all()
        self._slots = {s[0]: s for s in ENTRY_POINTS if s is not None}
        self._callbacks = {}
        # The shim's table holds direct C entries (and the runtime's native fast path) for the
        # hot functions: call those here too, so the tests cover what C programs run.
        self._direct = {ENTRY_POINTS[i][0]: address for i, address in bridge.direct_entries().items()}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._callbacks:
            _, ret_kind, arg_kinds = self._slots[name]
            if name in self._direct:
                proto = ctypes.CFUNCTYPE(bridge.CTYPES[ret_kind], *[bridge.CTYPES[k] for _, k in arg_kinds])
                callback = proto(self._direct[name])
            else:
                callback = bridge.make_callback(name, ret_kind, arg_kinds, IMPLEMENTED[name])

            def call(*args, _callback=callback):
                # bytes stand for NUL-terminated C strings, as with ctypes.c_char_p
                keep = [ctypes.create_string_buffer(a) for a in args if isinstance(a, bytes)]
                it = iter(keep)
                return _callback(*[ctypes.addressof(next(it)) if isinstance(a, bytes) else a for a in args])
            self._callbacks[name] = call
        return self._callbacks[name]


CL = _API()
_python_entries = {}


def native_entry(name):
    """The native entry of `name` alone (pyplat/api/_native.pyx: what the shim calls before
    taking the GIL), which answers PYPLAT_DEFER (PYPLAT_DEFER_HANDLE) when it leaves a call to
    the Python entry."""
    from pyplat.api import _native
    _, ret_kind, arg_kinds = CL._slots[name]
    proto = ctypes.CFUNCTYPE(bridge.CTYPES[ret_kind], *[bridge.CTYPES[k] for _, k in arg_kinds])
    return proto(_native.fast_path_entries()[name])


def python_entry(name):
    """The Python implementation of `name` alone, wrapped as the bridge wraps it (no native
    entry before it): what a native entry's answer is compared with."""
    if name not in _python_entries:
        _, ret_kind, arg_kinds = CL._slots[name]
        _python_entries[name] = bridge.make_callback(name, ret_kind, arg_kinds, IMPLEMENTED[name])
    return _python_entries[name]


def addr(obj):
    """Address of a ctypes object or numpy array, for pointer arguments (0 for None)."""
    if obj is None:
        return 0
    if hasattr(obj, "ctypes"):
        return obj.ctypes.data
    return ctypes.addressof(obj)


def err():
    return ctypes.c_int32(12345)
