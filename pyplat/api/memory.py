"""Buffers and sub-buffers: creation with the spec's flag rules, info, destructor callbacks."""
import ctypes

from pyplat import cl
from pyplat.api import _native, handles, info
from pyplat.api.entry import entry
from pyplat.api.errors import CLError, check
from pyplat.core.context import Context
from pyplat.core import memory as core_memory
from pyplat.core.memory import ALIGNMENT, Buffer

ACCESS = cl.CL_MEM_READ_WRITE | cl.CL_MEM_WRITE_ONLY | cl.CL_MEM_READ_ONLY
HOST_PTR = cl.CL_MEM_USE_HOST_PTR | cl.CL_MEM_ALLOC_HOST_PTR | cl.CL_MEM_COPY_HOST_PTR
HOST_ACCESS = cl.CL_MEM_HOST_WRITE_ONLY | cl.CL_MEM_HOST_READ_ONLY | cl.CL_MEM_HOST_NO_ACCESS
KNOWN = ACCESS | HOST_PTR | HOST_ACCESS | cl.CL_MEM_KERNEL_READ_AND_WRITE

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


def _one_of(flags, group):
    bits = flags & group
    return bits & (bits - 1) == 0


def check_flags(flags):
    check(not flags & ~KNOWN, cl.CL_INVALID_VALUE, f"unknown memory flags {flags & ~KNOWN:#x}")
    check(_one_of(flags, ACCESS), cl.CL_INVALID_VALUE, "more than one of READ_WRITE/READ_ONLY/WRITE_ONLY")
    check(_one_of(flags, HOST_ACCESS), cl.CL_INVALID_VALUE, "more than one CL_MEM_HOST_* access flag")
    check(not (flags & cl.CL_MEM_USE_HOST_PTR and flags & (cl.CL_MEM_ALLOC_HOST_PTR | cl.CL_MEM_COPY_HOST_PTR)),
          cl.CL_INVALID_VALUE, "CL_MEM_USE_HOST_PTR excludes ALLOC_HOST_PTR and COPY_HOST_PTR")


def _create(context, properties, flags, size, host_ptr):
    ctx = handles.lookup(context, Context, cl.CL_INVALID_CONTEXT)
    pairs, flat = info.read_properties(properties)
    check(not pairs, cl.CL_INVALID_PROPERTY, "PyPlat knows no buffer properties")
    check_flags(flags)
    if not flags & ACCESS:
        flags |= cl.CL_MEM_READ_WRITE
    limit = min(d.max_mem_alloc_size for d in ctx.devices)
    check(0 < size <= limit, cl.CL_INVALID_BUFFER_SIZE, f"size {size} is 0 or above {limit}")
    wants_ptr = bool(flags & (cl.CL_MEM_USE_HOST_PTR | cl.CL_MEM_COPY_HOST_PTR))
    check(bool(host_ptr) == wants_ptr, cl.CL_INVALID_HOST_PTR,
          "host_ptr must be given exactly when USE_HOST_PTR or COPY_HOST_PTR is set")
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
    check(parent.parent is None, cl.CL_INVALID_MEM_OBJECT, "buffer is itself a sub-buffer")
    check(not flags & ~KNOWN, cl.CL_INVALID_VALUE, "unknown memory flags")
    check(not flags & HOST_PTR, cl.CL_INVALID_VALUE, "host pointer flags are inherited, not given")
    check(_one_of(flags, ACCESS) and _one_of(flags, HOST_ACCESS), cl.CL_INVALID_VALUE, "conflicting flags")
    p = parent.flags
    if flags & (cl.CL_MEM_READ_WRITE | cl.CL_MEM_READ_ONLY):
        check(not p & cl.CL_MEM_WRITE_ONLY, cl.CL_INVALID_VALUE, "parent is write-only")
    if flags & (cl.CL_MEM_READ_WRITE | cl.CL_MEM_WRITE_ONLY):
        check(not p & cl.CL_MEM_READ_ONLY, cl.CL_INVALID_VALUE, "parent is read-only")
    if flags & cl.CL_MEM_HOST_WRITE_ONLY:
        check(not p & cl.CL_MEM_HOST_READ_ONLY, cl.CL_INVALID_VALUE, "parent is host-read-only")
    if flags & cl.CL_MEM_HOST_READ_ONLY:
        check(not p & cl.CL_MEM_HOST_WRITE_ONLY, cl.CL_INVALID_VALUE, "parent is host-write-only")
    if flags & (cl.CL_MEM_HOST_WRITE_ONLY | cl.CL_MEM_HOST_READ_ONLY):
        check(not p & cl.CL_MEM_HOST_NO_ACCESS, cl.CL_INVALID_VALUE, "parent has no host access")
    check(buffer_create_type == cl.CL_BUFFER_CREATE_TYPE_REGION, cl.CL_INVALID_VALUE,
          "buffer_create_type must be CL_BUFFER_CREATE_TYPE_REGION")
    check(buffer_create_info, cl.CL_INVALID_VALUE, "buffer_create_info is NULL")
    origin, size = (ctypes.c_size_t * 2).from_address(buffer_create_info)
    check(size > 0, cl.CL_INVALID_BUFFER_SIZE, "region size is 0")
    check(origin + size <= parent.size, cl.CL_INVALID_VALUE, "region is outside the buffer")
    check(origin % ALIGNMENT == 0, cl.CL_MISALIGNED_SUB_BUFFER_OFFSET,
          f"origin must be a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN ({ALIGNMENT} bytes)")
    inherited = p & (HOST_PTR | (0 if flags & ACCESS else ACCESS) | (0 if flags & HOST_ACCESS else HOST_ACCESS))
    sub = Buffer(parent.context, flags | inherited, size, parent.host_ptr + origin if parent.host_ptr else 0,
                 parent=parent, origin=origin)
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
