"""Buffers and sub-buffers: creation with the spec's flag rules (api/native_creation_rules.pxi, which the
native entries refuse with too), info, destructor callbacks."""
import ctypes

from pyplat import cl
from pyplat.api import _native, handles, info
from pyplat.api.entry import entry
from pyplat.api.errors import CLError, check, raise_refusal
from pyplat.core.context import Context
from pyplat.core import memory as core_memory
from pyplat.core.memory import Buffer

ACCESS = cl.CL_MEM_READ_WRITE | cl.CL_MEM_WRITE_ONLY | cl.CL_MEM_READ_ONLY

IMAGE_TYPES = (cl.CL_MEM_OBJECT_IMAGE1D, cl.CL_MEM_OBJECT_IMAGE1D_BUFFER, cl.CL_MEM_OBJECT_IMAGE2D,
               cl.CL_MEM_OBJECT_IMAGE3D, cl.CL_MEM_OBJECT_IMAGE1D_ARRAY, cl.CL_MEM_OBJECT_IMAGE2D_ARRAY)

DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_size_t, ctypes.c_void_p)


def _map_table_of(root):
    """A root buffer's mapping table (api/native_maps.pxi): its native record's, which the native
    map and unmap entries share, if its handle has one; else one of its own."""
    return _native.map_table(getattr(root, handles.HANDLE, 0))


core_memory.map_table_of = _map_table_of


def lookup_buffer(address, error=cl.CL_INVALID_MEM_OBJECT):
    return handles.lookup(address, Buffer, error)


def check_flags(flags):
    raise_refusal(_native.mem_flags_refusal(flags))          # (api/native_creation_rules.pxi)


def _create(context, properties, flags, size, host_ptr):
    ctx = handles.lookup(context, Context, cl.CL_INVALID_CONTEXT)
    pairs, flat = info.read_properties(properties)
    check(not pairs, cl.CL_INVALID_PROPERTY, "PyPlat knows no buffer properties")
    # flags, size, host_ptr: the rules the native clCreateBuffer refuses with
    limit = min(d.max_mem_alloc_size for d in ctx.devices)
    raise_refusal(_native.buffer_refusal(flags, size, limit, host_ptr or 0))
    if not flags & ACCESS:
        flags |= cl.CL_MEM_READ_WRITE
    buffer = Buffer(ctx, flags, size, host_ptr, flat if properties else [])
    return handles.created(buffer, handles.MEM)


def adopt_native_buffer(context, flags, size, host_ptr, address, record, key, parent=None, origin=0):
    """The core Buffer of a buffer the native clCreateBuffer or clCreateSubBuffer made
    (native_buffers.pxi), when a Python entry first needs it: the same bytes (kept by `record`,
    or a view of its parent's) and ordering key (a sub-buffer's is its root's)."""
    if parent is not None:
        return Buffer(context, flags, size, host_ptr, parent=parent, origin=origin)
    buffer = Buffer(context, flags, size, host_ptr, native_bytes=(address, record))
    buffer.native_key = key
    return buffer


@entry
def clCreateBuffer(context, flags, size, host_ptr, errcode_ret):
    return _create(context, 0, flags, size, host_ptr)


@entry
def clCreateBufferWithProperties(context, properties, flags, size, host_ptr, errcode_ret):
    return _create(context, properties, flags, size, host_ptr)


@entry
def clCreateSubBuffer(buffer, flags, buffer_create_type, buffer_create_info, errcode_ret):
    parent = lookup_buffer(buffer)
    raise_refusal(_native.sub_buffer_refusal(parent.parent is not None, parent.flags, parent.size, flags,
                                             buffer_create_type, buffer_create_info or 0))
    origin, size = (ctypes.c_size_t * 2).from_address(buffer_create_info)
    sub = Buffer(parent.context, _native.sub_buffer_flags(flags, parent.flags), size,
                 parent.host_ptr + origin if parent.host_ptr else 0, parent=parent, origin=origin)
    return handles.created(sub, handles.MEM)


@entry
def clRetainMemObject(memobj):
    handles.retain(lookup_buffer(memobj))


@entry
def clReleaseMemObject(memobj):
    # (native commands may use the buffer without a reference while the application holds it)
    handles.release(lookup_buffer(memobj), before_last=_native.let_go_memory)


INFO = {
    cl.CL_MEM_TYPE: (info.uint, lambda m: m.mem_type),
    cl.CL_MEM_FLAGS: (info.bitfield, lambda m: m.flags),
    cl.CL_MEM_SIZE: (info.size_t, lambda m: m.size),
    cl.CL_MEM_HOST_PTR: (info.pointer, lambda m: m.host_ptr),
    cl.CL_MEM_MAP_COUNT: (info.uint, lambda m: m.map_count),
    cl.CL_MEM_REFERENCE_COUNT: (info.uint, handles.reference_count),
    cl.CL_MEM_CONTEXT: (info.pointer, lambda m: handles.handle_of(m.context, handles.CONTEXT)),
    cl.CL_MEM_ASSOCIATED_MEMOBJECT: (info.pointer, lambda m: handles.handle_of(m.parent, handles.MEM)),
    cl.CL_MEM_OFFSET: (info.size_t, lambda m: m.origin),
    cl.CL_MEM_USES_SVM_POINTER: (info.boolean, lambda m: False),
    cl.CL_MEM_PROPERTIES: (info.ulong_array, lambda m: m.properties),
}


@entry
def clGetMemObjectInfo(memobj, param_name, param_value_size, param_value, param_value_size_ret):
    info.query(INFO, lookup_buffer(memobj), param_name, param_value_size, param_value,
               param_value_size_ret)


@entry
def clSetMemObjectDestructorCallback(memobj, pfn_notify, user_data):
    buffer = lookup_buffer(memobj)
    check(pfn_notify, cl.CL_INVALID_VALUE, "pfn_notify is NULL")
    callback = DESTRUCTOR(pfn_notify)
    handle = handles.handle_of(buffer, handles.MEM)
    buffer.add_destructor(lambda: callback(handle, user_data))


@entry
def clGetSupportedImageFormats(context, flags, image_type, num_entries, image_formats, num_image_formats):
    handles.lookup(context, Context, cl.CL_INVALID_CONTEXT)
    # "CL_INVALID_VALUE if flags or image_type are not valid, or if num_entries is 0 and
    # image_formats is not NULL" ("If image_formats is NULL, it is ignored").
    check_flags(flags)
    check(image_type in IMAGE_TYPES, cl.CL_INVALID_VALUE, f"image_type {image_type:#x} is no image type")
    check(not (num_entries == 0 and image_formats), cl.CL_INVALID_VALUE, "num_entries is 0")
    info.write_uint(num_image_formats, 0)     # no device of PyPlat supports images yet
