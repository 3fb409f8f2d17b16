"""Platform entry points: clGetPlatformIDs, clGetPlatformInfo, clUnload*Compiler."""
import ctypes

from pyplat import cl
from pyplat.api import handles, info
from pyplat.api.entry import entry
from pyplat.api.errors import CLError, check
from pyplat.core.object import RefCounted
from pyplat.core.platform import Platform, get_platform

if handles.forget not in RefCounted.destroy_listeners:
    RefCounted.destroy_listeners.append(handles.forget)


def _version(triple):
    return info.make_version(*triple)


PLATFORM_INFO = {
    cl.CL_PLATFORM_PROFILE: (info.string, lambda p: p.profile),
    cl.CL_PLATFORM_VERSION: (info.string, lambda p: p.version),
    cl.CL_PLATFORM_NUMERIC_VERSION: (info.version, lambda p: _version(p.numeric_version)),
    cl.CL_PLATFORM_NAME: (info.string, lambda p: p.name),
    cl.CL_PLATFORM_VENDOR: (info.string, lambda p: p.vendor),
    cl.CL_PLATFORM_EXTENSIONS: (info.string, lambda p: p.extensions),
    cl.CL_PLATFORM_EXTENSIONS_WITH_VERSION: (
        info.name_versions, lambda p: [(n, _version(v)) for n, v in p.extensions_with_version]),
    cl.CL_PLATFORM_HOST_TIMER_RESOLUTION: (info.ulong, lambda p: p.host_timer_resolution),
    cl.CL_PLATFORM_ICD_SUFFIX_KHR: (info.string, lambda p: p.icd_suffix),
}


def platform_handle():
    return handles.handle_of(get_platform(), handles.PLATFORM)


def lookup_platform(address, allow_null=True):
    """The platform behind a handle; NULL means ours (the spec leaves NULL implementation-defined)."""
    if not address and allow_null:
        return get_platform()
    return handles.lookup(address, Platform, cl.CL_INVALID_PLATFORM)


@entry
def clGetPlatformIDs(num_entries, platforms, num_platforms):
    check(not (num_entries == 0 and platforms), cl.CL_INVALID_VALUE,
          "num_entries is 0 and platforms is not NULL")
    check(platforms or num_platforms, cl.CL_INVALID_VALUE, "platforms and num_platforms are NULL")
    if platforms:
        handles.write_handles(platforms, [platform_handle()])
    if num_platforms:
        ctypes.c_uint32.from_address(num_platforms).value = 1


@entry
def clGetPlatformInfo(platform, param_name, param_value_size, param_value, param_value_size_ret):
    p = lookup_platform(platform)
    info.query(PLATFORM_INFO, p, param_name, param_value_size, param_value, param_value_size_ret)


@entry
def clUnloadPlatformCompiler(platform):
    lookup_platform(platform, allow_null=False)
    # The compiler keeps nothing worth dropping between builds; a hint we may ignore.


@entry
def clUnloadCompiler():
    pass
