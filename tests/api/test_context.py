"""Context entry points, called directly as the C shim would call them."""
import ctypes
import struct

from pyplat import cl
from pyplat.api import context as ctx_api, handles
from pyplat.api.context import DESTRUCTOR_PROTO, NOTIFY_PROTO
from pyplat.api.errors import CLError
from pyplat.core.context import Context
from pyplat.core.platform import get_platform
from support.direct_calls import addr, call, device_id, get_info, platform_id


def create(fn, *args):
    """Run a creator entry point as the bridge does: (handle, errcode)."""
    try:
        return fn(*args, 0), cl.CL_SUCCESS
    except CLError as e:
        return 0, e.code


_keep = []   # arrays whose addresses are passed must outlive the call


def props(*values):
    _keep.append((ctypes.c_ssize_t * len(values))(*values))
    return _keep[-1]


def devices_array(*ids):
    _keep.append((ctypes.c_size_t * len(ids))(*ids))
    return _keep[-1]


def new_context(properties=0, device=None):
    devs = devices_array(device or device_id())
    c, code = create(ctx_api.clCreateContext, properties, 1, addr(devs), 0, 0)
    assert code == 0 and c
    return c


def refcount(c):
    code, data = get_info(ctx_api.clGetContextInfo, c, cl.CL_CONTEXT_REFERENCE_COUNT)
    assert code == 0
    return struct.unpack("=I", data)[0]


def test_create_context_and_info():
    d = device_id()
    p = props(cl.CL_CONTEXT_PLATFORM, platform_id(), 0)
    c = new_context(addr(p), d)
    code, data = get_info(ctx_api.clGetContextInfo, c, cl.CL_CONTEXT_NUM_DEVICES)
    assert code == 0 and data == struct.pack("=I", 1)
    code, data = get_info(ctx_api.clGetContextInfo, c, cl.CL_CONTEXT_DEVICES)
    assert code == 0 and data == struct.pack("=Q", d)
    code, data = get_info(ctx_api.clGetContextInfo, c, cl.CL_CONTEXT_PROPERTIES)
    assert code == 0 and data == struct.pack("=3Q", cl.CL_CONTEXT_PLATFORM, platform_id(), 0)
    assert refcount(c) == 1
    core = handles.lookup(c, Context, cl.CL_INVALID_CONTEXT)
    assert core.devices == [get_platform().devices[0]] and core.platform is get_platform()
    assert call(ctx_api.clReleaseContext, c) == 0


def test_properties_none_given():
    c = new_context()
    size = ctypes.c_size_t(99)
    assert call(ctx_api.clGetContextInfo, c, cl.CL_CONTEXT_PROPERTIES, 0, 0, addr(size)) == 0
    assert size.value == 0
    assert call(ctx_api.clReleaseContext, c) == 0


def test_interop_user_sync_and_duplicate_devices():
    d = device_id()
    p = props(cl.CL_CONTEXT_INTEROP_USER_SYNC, 1, 0)
    devs = devices_array(d, d)
    c, code = create(ctx_api.clCreateContext, addr(p), 2, addr(devs), 0, 0)
    assert code == 0
    code, data = get_info(ctx_api.clGetContextInfo, c, cl.CL_CONTEXT_NUM_DEVICES)
    assert data == struct.pack("=I", 1)          # duplicates are ignored
    assert handles.lookup(c, Context, 0).interop_user_sync
    assert call(ctx_api.clReleaseContext, c) == 0


def test_create_context_errors():
    d = device_id()
    devs = devices_array(d)
    bogus = ctypes.c_uint64(0)
    noop = NOTIFY_PROTO(lambda *a: None)
    cases = [
        ((0, 0, addr(devs), 0, 0), cl.CL_INVALID_VALUE),              # num_devices 0
        ((0, 1, 0, 0, 0), cl.CL_INVALID_VALUE),                       # devices NULL
        ((0, 1, addr(devs), 0, 1234), cl.CL_INVALID_VALUE),           # user_data, no pfn_notify
        ((0, 1, addr(devices_array(addr(bogus))), 0, 0), cl.CL_INVALID_DEVICE),
        ((0, 1, addr(devices_array(platform_id())), 0, 0), cl.CL_INVALID_DEVICE),
        ((0, 1, addr(devices_array(0)), 0, 0), cl.CL_INVALID_DEVICE),
        ((addr(props(cl.CL_CONTEXT_PLATFORM, addr(bogus), 0)), 1, addr(devs), 0, 0),
         cl.CL_INVALID_PLATFORM),
        ((addr(props(cl.CL_CONTEXT_PLATFORM, d, 0)), 1, addr(devs), 0, 0), cl.CL_INVALID_PLATFORM),
        ((addr(props(0x7777, 1, 0)), 1, addr(devs), 0, 0), cl.CL_INVALID_PROPERTY),
        ((addr(props(cl.CL_CONTEXT_PLATFORM, platform_id(), cl.CL_CONTEXT_PLATFORM, platform_id(), 0)),
          1, addr(devs), 0, 0), cl.CL_INVALID_PROPERTY),
        ((addr(props(cl.CL_CONTEXT_INTEROP_USER_SYNC, 7, 0)), 1, addr(devs), 0, 0),
         cl.CL_INVALID_PROPERTY),
    ]
    for args, expected in cases:
        handle, code = create(ctx_api.clCreateContext, *args)
        assert (handle, code) == (0, expected), args
    # pfn_notify with user_data is fine
    fn = ctypes.cast(noop, ctypes.c_void_p).value
    handle, code = create(ctx_api.clCreateContext, 0, 1, addr(devs), fn, 1234)
    assert code == 0 and call(ctx_api.clReleaseContext, handle) == 0


def test_create_context_from_type():
    for device_type in (cl.CL_DEVICE_TYPE_DEFAULT, cl.CL_DEVICE_TYPE_CPU, cl.CL_DEVICE_TYPE_ALL):
        c, code = create(ctx_api.clCreateContextFromType, 0, device_type, 0, 0)
        assert code == 0 and c
        code, data = get_info(ctx_api.clGetContextInfo, c, cl.CL_CONTEXT_DEVICES)
        assert struct.unpack_from("=Q", data)[0] == device_id()
        assert call(ctx_api.clReleaseContext, c) == 0
    p = props(cl.CL_CONTEXT_PLATFORM, platform_id(), 0)
    c, code = create(ctx_api.clCreateContextFromType, addr(p), cl.CL_DEVICE_TYPE_CPU, 0, 0)
    assert code == 0 and call(ctx_api.clReleaseContext, c) == 0
    assert create(ctx_api.clCreateContextFromType, 0, cl.CL_DEVICE_TYPE_GPU, 0, 0) == \
        (0, cl.CL_DEVICE_NOT_FOUND)
    assert create(ctx_api.clCreateContextFromType, 0, 1 << 20, 0, 0) == (0, cl.CL_INVALID_DEVICE_TYPE)
    assert create(ctx_api.clCreateContextFromType, 0, 0, 0, 0) == (0, cl.CL_INVALID_DEVICE_TYPE)
    assert create(ctx_api.clCreateContextFromType, 0, cl.CL_DEVICE_TYPE_CPU, 0, 5) == \
        (0, cl.CL_INVALID_VALUE)
    bad = props(0x7777, 0, 0)
    assert create(ctx_api.clCreateContextFromType, addr(bad), cl.CL_DEVICE_TYPE_CPU, 0, 0) == \
        (0, cl.CL_INVALID_PROPERTY)


def test_refcount_and_release():
    c = new_context()
    assert call(ctx_api.clRetainContext, c) == 0
    assert call(ctx_api.clRetainContext, c) == 0
    assert refcount(c) == 3
    assert call(ctx_api.clReleaseContext, c) == 0
    assert refcount(c) == 2
    assert call(ctx_api.clReleaseContext, c) == 0
    assert call(ctx_api.clReleaseContext, c) == 0
    # gone: the handle is no longer valid
    assert call(ctx_api.clRetainContext, c) == cl.CL_INVALID_CONTEXT
    assert call(ctx_api.clReleaseContext, c) == cl.CL_INVALID_CONTEXT
    size = ctypes.c_size_t()
    assert call(ctx_api.clGetContextInfo, c, cl.CL_CONTEXT_NUM_DEVICES, 0, 0, addr(size)) == \
        cl.CL_INVALID_CONTEXT


def test_context_info_errors():
    c = new_context()
    size = ctypes.c_size_t()
    assert call(ctx_api.clGetContextInfo, c, 0x1234, 0, 0, addr(size)) == cl.CL_INVALID_VALUE
    small = ctypes.c_uint16()
    assert call(ctx_api.clGetContextInfo, c, cl.CL_CONTEXT_REFERENCE_COUNT, 2, addr(small), 0) == \
        cl.CL_INVALID_VALUE
    assert call(ctx_api.clGetContextInfo, 0, cl.CL_CONTEXT_REFERENCE_COUNT, 0, 0, addr(size)) == \
        cl.CL_INVALID_CONTEXT
    assert call(ctx_api.clGetContextInfo, device_id(), cl.CL_CONTEXT_REFERENCE_COUNT, 0, 0,
                addr(size)) == cl.CL_INVALID_CONTEXT
    assert call(ctx_api.clRetainContext, 0) == cl.CL_INVALID_CONTEXT
    assert call(ctx_api.clReleaseContext, platform_id()) == cl.CL_INVALID_CONTEXT
    assert call(ctx_api.clReleaseContext, c) == 0


def test_destructor_callbacks_lifo():
    c = new_context()
    order = []

    def make(tag):
        return DESTRUCTOR_PROTO(lambda ctx, user: order.append((tag, ctx, user)))
    callbacks = [make(i) for i in range(3)]          # keep them alive
    for i, cb in enumerate(callbacks):
        fn = ctypes.cast(cb, ctypes.c_void_p).value
        assert call(ctx_api.clSetContextDestructorCallback, c, fn, 100 + i) == 0
    assert call(ctx_api.clSetContextDestructorCallback, c, 0, 0) == cl.CL_INVALID_VALUE
    assert call(ctx_api.clSetContextDestructorCallback, 0, ctypes.cast(callbacks[0], ctypes.c_void_p).value,
                0) == cl.CL_INVALID_CONTEXT
    assert call(ctx_api.clRetainContext, c) == 0
    assert call(ctx_api.clReleaseContext, c) == 0
    assert order == []
    assert call(ctx_api.clReleaseContext, c) == 0
    assert order == [(2, c, 102), (1, c, 101), (0, c, 100)]


def test_notify_error():
    seen = []
    cb = NOTIFY_PROTO(lambda msg, priv, cb_size, user: seen.append((msg, priv, cb_size, user)))
    devs = devices_array(device_id())
    c, code = create(ctx_api.clCreateContext, 0, 1, addr(devs),
                     ctypes.cast(cb, ctypes.c_void_p).value, 77)
    assert code == 0
    core = handles.lookup(c, Context, cl.CL_INVALID_CONTEXT)
    core.notify_error("something broke")
    core.notify_error("with info", b"\x01\x02")
    assert seen[0] == (b"something broke", None, 0, 77)
    assert seen[1][0] == b"with info" and seen[1][2] == 2 and seen[1][3] == 77
    assert call(ctx_api.clReleaseContext, c) == 0
    # a context without pfn_notify ignores errors
    c = new_context()
    handles.lookup(c, Context, cl.CL_INVALID_CONTEXT).notify_error("nobody listens")
    assert call(ctx_api.clReleaseContext, c) == 0


def test_context_retains_devices():
    from pyplat.core.object import RefCounted
    from pyplat.core.context import Context as CoreContext

    class FakeDevice(RefCounted):
        pass
    d = FakeDevice()
    ctx = CoreContext(get_platform(), [d])
    assert d.reference_count == 2
    ctx.release()
    assert d.reference_count == 1
