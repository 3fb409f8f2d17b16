"""Context entry points: clCreateContext[FromType], retain/release, info, destructor callbacks."""
import ctypes

from pyplat import cl
from pyplat.api import handles, info
from pyplat.api.device import check_device_type
from pyplat.api.entry import entry
from pyplat.api.errors import CLError, check
from pyplat.core.context import Context
from pyplat.core.device import Device
from pyplat.core.object import RefCounted
from pyplat.core.platform import Platform, get_platform

if handles.forget not in RefCounted.destroy_listeners:
    RefCounted.destroy_listeners.append(handles.forget)

# void (CL_CALLBACK *pfn_notify)(const char *errinfo, const void *private_info, size_t cb, void *user_data)
NOTIFY_PROTO = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                                ctypes.c_void_p)
# void (CL_CALLBACK *pfn_notify)(cl_context context, void *user_data)
DESTRUCTOR_PROTO = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


def lookup_context(address):
    return handles.lookup(address, Context, cl.CL_INVALID_CONTEXT)


def context_handle(context):
    return handles.handle_of(context, handles.CONTEXT)


def _parse_properties(properties):
    """-> (platform, raw list, interop_user_sync) with the spec's checks on the list."""
    pairs, flat = info.read_properties(properties)
    platform, interop, seen = None, False, set()
    for name, value in pairs:
        check(name not in seen, cl.CL_INVALID_PROPERTY, f"property {name:#x} given twice")
        seen.add(name)
        if name == cl.CL_CONTEXT_PLATFORM:
            platform = handles.lookup(value, Platform, cl.CL_INVALID_PLATFORM)
        elif name == cl.CL_CONTEXT_INTEROP_USER_SYNC:
            check(value in (cl.CL_TRUE, cl.CL_FALSE), cl.CL_INVALID_PROPERTY,
                  "CL_CONTEXT_INTEROP_USER_SYNC is not a cl_bool")
            interop = bool(value)
        else:
            raise CLError(cl.CL_INVALID_PROPERTY, f"unsupported context property {name:#x}")
    return platform or get_platform(), flat, interop


def _notify_callable(pfn_notify, user_data):
    if not pfn_notify:
        return None
    fn = NOTIFY_PROTO(pfn_notify)

    def notify(message, private_info=b""):
        data = ctypes.create_string_buffer(private_info, len(private_info)) if private_info else None
        fn(message.encode() if isinstance(message, str) else message,
           ctypes.cast(data, ctypes.c_void_p) if data is not None else None,
           len(private_info), user_data or None)
    return notify


@entry
def clCreateContext(properties, num_devices, devices, pfn_notify, user_data, errcode_ret):
    platform, raw, interop = _parse_properties(properties)
    check(devices, cl.CL_INVALID_VALUE, "devices is NULL")
    check(num_devices, cl.CL_INVALID_VALUE, "num_devices is 0")
    check(pfn_notify or not user_data, cl.CL_INVALID_VALUE, "user_data without pfn_notify")
    chosen = []
    for d in handles.lookup_array(num_devices, devices, Device, cl.CL_INVALID_DEVICE):
        check(d in platform.devices, cl.CL_INVALID_DEVICE, "not a device of the platform")
        check(d.unavailable is None, cl.CL_DEVICE_NOT_AVAILABLE, f"{d.name} is unusable: {d.unavailable}")
        if not any(c is d for c in chosen):       # duplicates are ignored (spec)
            chosen.append(d)
    context = Context(platform, chosen, raw, _notify_callable(pfn_notify, user_data), interop)
    return handles.created(context, handles.CONTEXT)


@entry
def clCreateContextFromType(properties, device_type, pfn_notify, user_data, errcode_ret):
    platform, raw, interop = _parse_properties(properties)
    check(pfn_notify or not user_data, cl.CL_INVALID_VALUE, "user_data without pfn_notify")
    check_device_type(device_type)
    matching = platform.devices_of_type(device_type)
    if not matching:
        raise CLError(cl.CL_DEVICE_NOT_FOUND, f"the platform has no device of type {device_type:#x}")
    chosen = [d for d in matching if d.unavailable is None]
    check(chosen, cl.CL_DEVICE_NOT_AVAILABLE, f"{matching[0].name} is unusable: {matching[0].unavailable}")
    context = Context(platform, chosen, raw, _notify_callable(pfn_notify, user_data), interop)
    return handles.created(context, handles.CONTEXT)


@entry
def clRetainContext(context):
    handles.retain(lookup_context(context))


@entry
def clReleaseContext(context):
    handles.release(lookup_context(context))


CONTEXT_INFO = {
    cl.CL_CONTEXT_REFERENCE_COUNT: (info.uint, handles.reference_count),
    cl.CL_CONTEXT_NUM_DEVICES: (info.uint, lambda c: c.num_devices),
    cl.CL_CONTEXT_DEVICES: (
        info.size_t_array, lambda c: [handles.handle_of(d, handles.DEVICE) for d in c.devices]),
    cl.CL_CONTEXT_PROPERTIES: (info.ulong_array, lambda c: c.properties),
}


@entry
def clGetContextInfo(context, param_name, param_value_size, param_value, param_value_size_ret):
    c = lookup_context(context)
    info.query(CONTEXT_INFO, c, param_name, param_value_size, param_value, param_value_size_ret)


@entry
def clSetContextDestructorCallback(context, pfn_notify, user_data):
    c = lookup_context(context)
    check(pfn_notify, cl.CL_INVALID_VALUE, "pfn_notify is NULL")
    fn = DESTRUCTOR_PROTO(pfn_notify)
    handle = context_handle(c)
    c.add_destructor_callback(lambda: fn(handle, user_data or None))


def native_platform_devices():
    """The platform's devices as native contexts need them (_native.set_platform_devices):
    handle, Device, type (the first one is the DEFAULT device too), usable, memory of the host's,
    max alloc size, its driver if started."""
    devices = get_platform().devices
    return [(handles.handle_of(d, handles.DEVICE), d,
             d.device_type | (cl.CL_DEVICE_TYPE_DEFAULT if i == 0 else 0), d.unavailable is None,
             d.memory_space.shares_host, d.max_mem_alloc_size, d.started_driver)
            for i, d in enumerate(devices)]


def adopt_native_context(device_handles, properties, notify, user_data, record, key):
    """The core Context of a context made natively (_native.adopt_context): its objects made
    before were matched by `key` (the native record's, which it keeps)."""
    devices = [handles.peek(h) for h in device_handles]
    context = Context(get_platform(), devices, properties, _notify_callable(notify, user_data))
    context.native_key, context.native_record = key, record
    return context
