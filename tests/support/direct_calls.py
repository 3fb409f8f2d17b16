"""The Python entry points (pyplat/api) called directly, as the bridge calls them for the C shim:
an entry's cl_int result (a raised CLError gives its code), the platform and device handles, and
clGet*Info queries done the two-call way."""
import ctypes

from pyplat import cl
from pyplat.api import device as dev_api, platform as plat_api
from pyplat.api.errors import CLError


def call(fn, *args):
    """Run an entry point as the bridge does: its cl_int result."""
    try:
        result = fn(*args)
        return cl.CL_SUCCESS if result is None else result
    except CLError as e:
        return e.code


def addr(obj):
    return ctypes.addressof(obj)


def platform_id():
    out = ctypes.c_size_t()
    assert call(plat_api.clGetPlatformIDs, 1, addr(out), 0) == cl.CL_SUCCESS
    return out.value


def device_id(index=0):
    n = ctypes.c_uint32()
    assert call(dev_api.clGetDeviceIDs, platform_id(), cl.CL_DEVICE_TYPE_ALL, 0, 0, addr(n)) == 0
    out = (ctypes.c_size_t * n.value)()
    assert call(dev_api.clGetDeviceIDs, platform_id(), cl.CL_DEVICE_TYPE_ALL, n.value, addr(out), 0) == 0
    return out[index]


def get_info(fn, obj, param):
    """(code, bytes) of a clGet*Info query done the two-call way."""
    size = ctypes.c_size_t()
    code = call(fn, obj, param, 0, 0, addr(size))
    if code:
        return code, None
    buf = ctypes.create_string_buffer(max(size.value, 1))
    size2 = ctypes.c_size_t()
    code = call(fn, obj, param, size.value, addr(buf), addr(size2))
    assert size2.value == size.value
    return code, buf.raw[:size.value]
