"""A ctypes binding to the system ICD loader (libOpenCL.so.1), with the argtypes of every entry
point the conformance checks call, the numeric constants they use, and small helpers for info
queries. Nothing here imports PyPlat: the same binding drives any installed platform.

Handles are plain integers (c_void_p), so checks can pass NULL, a handle of the wrong type or a
handle of another context exactly as a C program could.
"""
import ctypes
import ctypes.util
import os
from ctypes import (CFUNCTYPE, POINTER, c_char_p, c_int32, c_size_t, c_uint32, c_uint64,
                    c_void_p)

cl_int = c_int32
cl_uint = c_uint32
cl_ulong = c_uint64
cl_bitfield = c_uint64
size_t = c_size_t
handle = c_void_p
P = POINTER

# --- Constants (values of the Khronos headers, CL/cl.h) ------------------------------------------
CL_SUCCESS = 0
CL_DEVICE_NOT_FOUND = -1
CL_MEM_COPY_OVERLAP = -8
CL_BUILD_PROGRAM_FAILURE = -11
CL_MISALIGNED_SUB_BUFFER_OFFSET = -13
CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST = -14
CL_KERNEL_ARG_INFO_NOT_AVAILABLE = -19
CL_INVALID_VALUE = -30
CL_INVALID_DEVICE_TYPE = -31
CL_INVALID_PLATFORM = -32
CL_INVALID_DEVICE = -33
CL_INVALID_CONTEXT = -34
CL_INVALID_QUEUE_PROPERTIES = -35
CL_INVALID_COMMAND_QUEUE = -36
CL_INVALID_HOST_PTR = -37
CL_INVALID_MEM_OBJECT = -38
CL_INVALID_IMAGE_FORMAT_DESCRIPTOR = -39
CL_INVALID_IMAGE_SIZE = -40
CL_INVALID_BINARY = -42
CL_INVALID_BUILD_OPTIONS = -43
CL_INVALID_PROGRAM = -44
CL_INVALID_PROGRAM_EXECUTABLE = -45
CL_INVALID_KERNEL_NAME = -46
CL_INVALID_KERNEL_DEFINITION = -47
CL_INVALID_KERNEL = -48
CL_INVALID_ARG_INDEX = -49
CL_INVALID_ARG_VALUE = -50
CL_INVALID_ARG_SIZE = -51
CL_INVALID_KERNEL_ARGS = -52
CL_INVALID_WORK_DIMENSION = -53
CL_INVALID_WORK_GROUP_SIZE = -54
CL_INVALID_WORK_ITEM_SIZE = -55
CL_INVALID_GLOBAL_OFFSET = -56
CL_INVALID_EVENT_WAIT_LIST = -57
CL_INVALID_EVENT = -58
CL_INVALID_OPERATION = -59
CL_INVALID_BUFFER_SIZE = -61
CL_INVALID_GLOBAL_WORK_SIZE = -63
CL_INVALID_PROPERTY = -64

ERROR_NAMES = {v: k for k, v in list(globals().items()) if k.startswith("CL_") and isinstance(v, int)
               and v <= 0}
ERROR_NAMES.update({-2: "CL_DEVICE_NOT_AVAILABLE", -3: "CL_COMPILER_NOT_AVAILABLE",
                    -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE", -5: "CL_OUT_OF_RESOURCES",
                    -6: "CL_OUT_OF_HOST_MEMORY", -7: "CL_PROFILING_INFO_NOT_AVAILABLE",
                    -12: "CL_MAP_FAILURE", -41: "CL_INVALID_SAMPLER", -60: "CL_INVALID_GL_OBJECT",
                    -62: "CL_INVALID_MIP_LEVEL", -1001: "CL_PLATFORM_NOT_FOUND_KHR"})
CL_PROFILING_INFO_NOT_AVAILABLE = -7


def err_name(code):
    if code is None:
        return "None"
    return f"{ERROR_NAMES.get(code, 'unknown')}({code})"


CL_FALSE, CL_TRUE = 0, 1

# platform
CL_PLATFORM_PROFILE = 0x0900
CL_PLATFORM_VERSION = 0x0901
CL_PLATFORM_NAME = 0x0902
CL_PLATFORM_VENDOR = 0x0903
CL_PLATFORM_EXTENSIONS = 0x0904
CL_PLATFORM_HOST_TIMER_RESOLUTION = 0x0905
CL_PLATFORM_NUMERIC_VERSION = 0x0906
CL_PLATFORM_EXTENSIONS_WITH_VERSION = 0x0907

# device types
CL_DEVICE_TYPE_DEFAULT = 1 << 0
CL_DEVICE_TYPE_CPU = 1 << 1
CL_DEVICE_TYPE_GPU = 1 << 2
CL_DEVICE_TYPE_ACCELERATOR = 1 << 3
CL_DEVICE_TYPE_CUSTOM = 1 << 4
CL_DEVICE_TYPE_ALL = 0xFFFFFFFF

# device info
CL_DEVICE_TYPE = 0x1000
CL_DEVICE_VENDOR_ID = 0x1001
CL_DEVICE_MAX_COMPUTE_UNITS = 0x1002
CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS = 0x1003
CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004
CL_DEVICE_MAX_WORK_ITEM_SIZES = 0x1005
CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR = 0x1006
CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT = 0x1007
CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT = 0x1008
CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG = 0x1009
CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT = 0x100A
CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE = 0x100B
CL_DEVICE_MAX_CLOCK_FREQUENCY = 0x100C
CL_DEVICE_ADDRESS_BITS = 0x100D
CL_DEVICE_MAX_READ_IMAGE_ARGS = 0x100E
CL_DEVICE_MAX_WRITE_IMAGE_ARGS = 0x100F
CL_DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010
CL_DEVICE_IMAGE2D_MAX_WIDTH = 0x1011
CL_DEVICE_IMAGE2D_MAX_HEIGHT = 0x1012
CL_DEVICE_IMAGE3D_MAX_WIDTH = 0x1013
CL_DEVICE_IMAGE3D_MAX_HEIGHT = 0x1014
CL_DEVICE_IMAGE3D_MAX_DEPTH = 0x1015
CL_DEVICE_IMAGE_SUPPORT = 0x1016
CL_DEVICE_MAX_PARAMETER_SIZE = 0x1017
CL_DEVICE_MAX_SAMPLERS = 0x1018
CL_DEVICE_MEM_BASE_ADDR_ALIGN = 0x1019
CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE = 0x101A
CL_DEVICE_SINGLE_FP_CONFIG = 0x101B
CL_DEVICE_GLOBAL_MEM_CACHE_TYPE = 0x101C
CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE = 0x101D
CL_DEVICE_GLOBAL_MEM_CACHE_SIZE = 0x101E
CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F
CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE = 0x1020
CL_DEVICE_MAX_CONSTANT_ARGS = 0x1021
CL_DEVICE_LOCAL_MEM_TYPE = 0x1022
CL_DEVICE_LOCAL_MEM_SIZE = 0x1023
CL_DEVICE_ERROR_CORRECTION_SUPPORT = 0x1024
CL_DEVICE_PROFILING_TIMER_RESOLUTION = 0x1025
CL_DEVICE_ENDIAN_LITTLE = 0x1026
CL_DEVICE_AVAILABLE = 0x1027
CL_DEVICE_COMPILER_AVAILABLE = 0x1028
CL_DEVICE_EXECUTION_CAPABILITIES = 0x1029
CL_DEVICE_QUEUE_PROPERTIES = 0x102A
CL_DEVICE_NAME = 0x102B
CL_DEVICE_VENDOR = 0x102C
CL_DRIVER_VERSION = 0x102D
CL_DEVICE_PROFILE = 0x102E
CL_DEVICE_VERSION = 0x102F
CL_DEVICE_EXTENSIONS = 0x1030
CL_DEVICE_PLATFORM = 0x1031
CL_DEVICE_DOUBLE_FP_CONFIG = 0x1032
CL_DEVICE_HOST_UNIFIED_MEMORY = 0x1035
CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR = 0x1036
CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE = 0x103B
CL_DEVICE_OPENCL_C_VERSION = 0x103D
CL_DEVICE_LINKER_AVAILABLE = 0x103E
CL_DEVICE_BUILT_IN_KERNELS = 0x103F
CL_DEVICE_IMAGE_MAX_BUFFER_SIZE = 0x1040
CL_DEVICE_IMAGE_MAX_ARRAY_SIZE = 0x1041
CL_DEVICE_PARENT_DEVICE = 0x1042
CL_DEVICE_PARTITION_MAX_SUB_DEVICES = 0x1043
CL_DEVICE_PARTITION_PROPERTIES = 0x1044
CL_DEVICE_PARTITION_AFFINITY_DOMAIN = 0x1045
CL_DEVICE_PARTITION_TYPE = 0x1046
CL_DEVICE_REFERENCE_COUNT = 0x1047
CL_DEVICE_PREFERRED_INTEROP_USER_SYNC = 0x1048
CL_DEVICE_PRINTF_BUFFER_SIZE = 0x1049
CL_DEVICE_QUEUE_ON_HOST_PROPERTIES = 0x102A
CL_DEVICE_NUMERIC_VERSION = 0x105E
CL_DEVICE_EXTENSIONS_WITH_VERSION = 0x1060
CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT = 0x1069

# fp config bits
CL_FP_DENORM = 1 << 0
CL_FP_INF_NAN = 1 << 1
CL_FP_ROUND_TO_NEAREST = 1 << 2
CL_FP_ROUND_TO_ZERO = 1 << 3
CL_FP_ROUND_TO_INF = 1 << 4
CL_FP_FMA = 1 << 5
CL_FP_SOFT_FLOAT = 1 << 6
CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT = 1 << 7

CL_NONE, CL_READ_ONLY_CACHE, CL_READ_WRITE_CACHE = 0, 1, 2
CL_LOCAL, CL_GLOBAL = 1, 2
CL_EXEC_KERNEL, CL_EXEC_NATIVE_KERNEL = 1, 2

# queue
CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE = 1 << 0
CL_QUEUE_PROFILING_ENABLE = 1 << 1
CL_QUEUE_CONTEXT = 0x1090
CL_QUEUE_DEVICE = 0x1091
CL_QUEUE_REFERENCE_COUNT = 0x1092
CL_QUEUE_PROPERTIES = 0x1093

# context
CL_CONTEXT_REFERENCE_COUNT = 0x1080
CL_CONTEXT_DEVICES = 0x1081
CL_CONTEXT_PROPERTIES = 0x1082
CL_CONTEXT_NUM_DEVICES = 0x1083
CL_CONTEXT_PLATFORM = 0x1084

# memory
CL_MEM_READ_WRITE = 1 << 0
CL_MEM_WRITE_ONLY = 1 << 1
CL_MEM_READ_ONLY = 1 << 2
CL_MEM_USE_HOST_PTR = 1 << 3
CL_MEM_ALLOC_HOST_PTR = 1 << 4
CL_MEM_COPY_HOST_PTR = 1 << 5
CL_MEM_HOST_WRITE_ONLY = 1 << 7
CL_MEM_HOST_READ_ONLY = 1 << 8
CL_MEM_HOST_NO_ACCESS = 1 << 9
CL_MIGRATE_MEM_OBJECT_HOST = 1 << 0
CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED = 1 << 1
CL_MEM_OBJECT_BUFFER = 0x10F0
CL_MEM_OBJECT_IMAGE2D = 0x10F1
CL_MEM_TYPE = 0x1100
CL_MEM_FLAGS = 0x1101
CL_MEM_SIZE = 0x1102
CL_MEM_HOST_PTR = 0x1103
CL_MEM_MAP_COUNT = 0x1104
CL_MEM_REFERENCE_COUNT = 0x1105
CL_MEM_CONTEXT = 0x1106
CL_MEM_ASSOCIATED_MEMOBJECT = 0x1107
CL_MEM_OFFSET = 0x1108
CL_BUFFER_CREATE_TYPE_REGION = 0x1220
CL_MAP_READ = 1 << 0
CL_MAP_WRITE = 1 << 1
CL_MAP_WRITE_INVALIDATE_REGION = 1 << 2

# images
CL_RGBA = 0x10B5
CL_BGRA = 0x10B6
CL_R = 0x10B0
CL_UNORM_INT8 = 0x10D2
CL_UNORM_INT16 = 0x10D3
CL_SIGNED_INT8 = 0x10D7
CL_SIGNED_INT16 = 0x10D8
CL_SIGNED_INT32 = 0x10D9
CL_UNSIGNED_INT8 = 0x10DA
CL_UNSIGNED_INT16 = 0x10DB
CL_UNSIGNED_INT32 = 0x10DC
CL_HALF_FLOAT = 0x10DD
CL_FLOAT = 0x10DE
CL_SNORM_INT8 = 0x10D0
CL_SNORM_INT16 = 0x10D1

# programs
CL_PROGRAM_REFERENCE_COUNT = 0x1160
CL_PROGRAM_CONTEXT = 0x1161
CL_PROGRAM_NUM_DEVICES = 0x1162
CL_PROGRAM_DEVICES = 0x1163
CL_PROGRAM_SOURCE = 0x1164
CL_PROGRAM_BINARY_SIZES = 0x1165
CL_PROGRAM_BINARIES = 0x1166
CL_PROGRAM_NUM_KERNELS = 0x1167
CL_PROGRAM_KERNEL_NAMES = 0x1168
CL_PROGRAM_BUILD_STATUS = 0x1181
CL_PROGRAM_BUILD_OPTIONS = 0x1182
CL_PROGRAM_BUILD_LOG = 0x1183
CL_BUILD_SUCCESS, CL_BUILD_NONE, CL_BUILD_ERROR, CL_BUILD_IN_PROGRESS = 0, -1, -2, -3

# kernels
CL_KERNEL_FUNCTION_NAME = 0x1190
CL_KERNEL_NUM_ARGS = 0x1191
CL_KERNEL_REFERENCE_COUNT = 0x1192
CL_KERNEL_CONTEXT = 0x1193
CL_KERNEL_PROGRAM = 0x1194
CL_KERNEL_ARG_ADDRESS_QUALIFIER = 0x1196
CL_KERNEL_ARG_ACCESS_QUALIFIER = 0x1197
CL_KERNEL_ARG_TYPE_NAME = 0x1198
CL_KERNEL_ARG_TYPE_QUALIFIER = 0x1199
CL_KERNEL_ARG_NAME = 0x119A
CL_KERNEL_ARG_ADDRESS_GLOBAL = 0x119B
CL_KERNEL_ARG_ADDRESS_LOCAL = 0x119C
CL_KERNEL_ARG_ADDRESS_CONSTANT = 0x119D
CL_KERNEL_ARG_ADDRESS_PRIVATE = 0x119E
CL_KERNEL_ARG_TYPE_CONST = 1 << 0
CL_KERNEL_ARG_TYPE_RESTRICT = 1 << 1
CL_KERNEL_ARG_TYPE_VOLATILE = 1 << 2
CL_KERNEL_WORK_GROUP_SIZE = 0x11B0
CL_KERNEL_COMPILE_WORK_GROUP_SIZE = 0x11B1

# events
CL_EVENT_COMMAND_QUEUE = 0x11D0
CL_EVENT_COMMAND_TYPE = 0x11D1
CL_EVENT_REFERENCE_COUNT = 0x11D2
CL_EVENT_COMMAND_EXECUTION_STATUS = 0x11D3
CL_EVENT_CONTEXT = 0x11D4
CL_COMPLETE, CL_RUNNING, CL_SUBMITTED, CL_QUEUED = 0, 1, 2, 3
CL_COMMAND_NDRANGE_KERNEL = 0x11F0
CL_COMMAND_READ_BUFFER = 0x11F3
CL_COMMAND_WRITE_BUFFER = 0x11F4
CL_COMMAND_COPY_BUFFER = 0x11F5
CL_COMMAND_MAP_BUFFER = 0x11FB
CL_COMMAND_UNMAP_MEM_OBJECT = 0x11FD
CL_COMMAND_MARKER = 0x11FE
CL_COMMAND_USER = 0x1204
CL_COMMAND_FILL_BUFFER = 0x1207
CL_COMMAND_BARRIER = 0x1205
CL_PROFILING_COMMAND_QUEUED = 0x1280
CL_PROFILING_COMMAND_SUBMIT = 0x1281
CL_PROFILING_COMMAND_START = 0x1282
CL_PROFILING_COMMAND_END = 0x1283
CL_PROFILING_COMMAND_COMPLETE = 0x1284

# --- Callback types --------------------------------------------------------------------------------
EVENT_CALLBACK = CFUNCTYPE(None, handle, cl_int, c_void_p)
CONTEXT_NOTIFY = CFUNCTYPE(None, c_char_p, c_void_p, size_t, c_void_p)
PROGRAM_NOTIFY = CFUNCTYPE(None, handle, c_void_p)
MEM_CALLBACK = CFUNCTYPE(None, handle, c_void_p)


class ImageFormat(ctypes.Structure):
    _fields_ = [("image_channel_order", cl_uint), ("image_channel_data_type", cl_uint)]


class ImageDesc(ctypes.Structure):
    _fields_ = [("image_type", cl_uint), ("image_width", size_t), ("image_height", size_t),
                ("image_depth", size_t), ("image_array_size", size_t),
                ("image_row_pitch", size_t), ("image_slice_pitch", size_t),
                ("num_mip_levels", cl_uint), ("num_samples", cl_uint), ("mem_object", handle)]


# --- Prototypes ------------------------------------------------------------------------------------
# Pointer arguments are c_void_p: callers pass ctypes.byref(...), arrays, or plain addresses.
V = c_void_p
PROTOTYPES = {
    "clGetPlatformIDs": (cl_int, [cl_uint, V, V]),
    "clGetPlatformInfo": (cl_int, [handle, cl_uint, size_t, V, V]),
    "clGetDeviceIDs": (cl_int, [handle, cl_bitfield, cl_uint, V, V]),
    "clGetDeviceInfo": (cl_int, [handle, cl_uint, size_t, V, V]),
    "clRetainDevice": (cl_int, [handle]),
    "clReleaseDevice": (cl_int, [handle]),
    "clCreateContext": (handle, [V, cl_uint, V, V, V, V]),
    "clCreateContextFromType": (handle, [V, cl_bitfield, V, V, V]),
    "clRetainContext": (cl_int, [handle]),
    "clReleaseContext": (cl_int, [handle]),
    "clGetContextInfo": (cl_int, [handle, cl_uint, size_t, V, V]),
    "clCreateCommandQueue": (handle, [handle, handle, cl_bitfield, V]),
    "clCreateCommandQueueWithProperties": (handle, [handle, handle, V, V]),
    "clRetainCommandQueue": (cl_int, [handle]),
    "clReleaseCommandQueue": (cl_int, [handle]),
    "clGetCommandQueueInfo": (cl_int, [handle, cl_uint, size_t, V, V]),
    "clFlush": (cl_int, [handle]),
    "clFinish": (cl_int, [handle]),
    "clCreateBuffer": (handle, [handle, cl_bitfield, size_t, V, V]),
    "clCreateSubBuffer": (handle, [handle, cl_bitfield, cl_uint, V, V]),
    "clCreateImage": (handle, [handle, cl_bitfield, V, V, V, V]),
    "clGetSupportedImageFormats": (cl_int, [handle, cl_bitfield, cl_uint, cl_uint, V, V]),
    "clRetainMemObject": (cl_int, [handle]),
    "clReleaseMemObject": (cl_int, [handle]),
    "clGetMemObjectInfo": (cl_int, [handle, cl_uint, size_t, V, V]),
    "clSetMemObjectDestructorCallback": (cl_int, [handle, V, V]),
    "clEnqueueReadBuffer": (cl_int, [handle, handle, cl_uint, size_t, size_t, V, cl_uint, V, V]),
    "clEnqueueWriteBuffer": (cl_int, [handle, handle, cl_uint, size_t, size_t, V, cl_uint, V, V]),
    "clEnqueueCopyBuffer": (cl_int, [handle, handle, handle, size_t, size_t, size_t, cl_uint, V, V]),
    "clEnqueueReadBufferRect": (cl_int, [handle, handle, cl_uint, V, V, V, size_t, size_t, size_t,
                                         size_t, V, cl_uint, V, V]),
    "clEnqueueWriteBufferRect": (cl_int, [handle, handle, cl_uint, V, V, V, size_t, size_t, size_t,
                                          size_t, V, cl_uint, V, V]),
    "clEnqueueCopyBufferRect": (cl_int, [handle, handle, handle, V, V, V, size_t, size_t, size_t,
                                         size_t, cl_uint, V, V]),
    "clEnqueueFillBuffer": (cl_int, [handle, handle, V, size_t, size_t, size_t, cl_uint, V, V]),
    "clEnqueueMapBuffer": (c_void_p, [handle, handle, cl_uint, cl_bitfield, size_t, size_t, cl_uint,
                                      V, V, V]),
    "clEnqueueUnmapMemObject": (cl_int, [handle, handle, V, cl_uint, V, V]),
    "clEnqueueMigrateMemObjects": (cl_int, [handle, cl_uint, V, cl_bitfield, cl_uint, V, V]),
    "clEnqueueReadImage": (cl_int, [handle, handle, cl_uint, V, V, size_t, size_t, V, cl_uint, V, V]),
    "clEnqueueWriteImage": (cl_int, [handle, handle, cl_uint, V, V, size_t, size_t, V, cl_uint, V,
                                     V]),
    "clCreateProgramWithSource": (handle, [handle, cl_uint, V, V, V]),
    "clCreateProgramWithBinary": (handle, [handle, cl_uint, V, V, V, V, V]),
    "clBuildProgram": (cl_int, [handle, cl_uint, V, c_char_p, V, V]),
    "clRetainProgram": (cl_int, [handle]),
    "clReleaseProgram": (cl_int, [handle]),
    "clGetProgramInfo": (cl_int, [handle, cl_uint, size_t, V, V]),
    "clGetProgramBuildInfo": (cl_int, [handle, handle, cl_uint, size_t, V, V]),
    "clCreateKernel": (handle, [handle, c_char_p, V]),
    "clCreateKernelsInProgram": (cl_int, [handle, cl_uint, V, V]),
    "clRetainKernel": (cl_int, [handle]),
    "clReleaseKernel": (cl_int, [handle]),
    "clSetKernelArg": (cl_int, [handle, cl_uint, size_t, V]),
    "clGetKernelInfo": (cl_int, [handle, cl_uint, size_t, V, V]),
    "clGetKernelArgInfo": (cl_int, [handle, cl_uint, cl_uint, size_t, V, V]),
    "clGetKernelWorkGroupInfo": (cl_int, [handle, handle, cl_uint, size_t, V, V]),
    "clEnqueueNDRangeKernel": (cl_int, [handle, handle, cl_uint, V, V, V, cl_uint, V, V]),
    "clEnqueueTask": (cl_int, [handle, handle, cl_uint, V, V]),
    "clCreateUserEvent": (handle, [handle, V]),
    "clSetUserEventStatus": (cl_int, [handle, cl_int]),
    "clWaitForEvents": (cl_int, [cl_uint, V]),
    "clGetEventInfo": (cl_int, [handle, cl_uint, size_t, V, V]),
    "clGetEventProfilingInfo": (cl_int, [handle, cl_uint, size_t, V, V]),
    "clRetainEvent": (cl_int, [handle]),
    "clReleaseEvent": (cl_int, [handle]),
    "clSetEventCallback": (cl_int, [handle, cl_int, V, V]),
    "clEnqueueMarkerWithWaitList": (cl_int, [handle, cl_uint, V, V]),
    "clEnqueueBarrierWithWaitList": (cl_int, [handle, cl_uint, V, V]),
}


class Library:
    """The loader's entry points as attributes (``lib.clGetPlatformIDs(...)``), argtypes set.

    A name the loader does not export raises AttributeError when used."""

    def __init__(self, path=None):
        path = path or os.environ.get("PYPLAT_CONFORMANCE_LIBOPENCL") or "libOpenCL.so.1"
        try:
            self._dll = ctypes.CDLL(path)
        except OSError:
            found = ctypes.util.find_library("OpenCL")
            if not found:
                raise
            self._dll = ctypes.CDLL(found)
        self.path = path

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        fn = getattr(self._dll, name)
        restype, argtypes = PROTOTYPES[name]
        fn.restype = restype
        fn.argtypes = argtypes
        setattr(self, name, fn)
        return fn


_LIB = None


def library():
    global _LIB
    if _LIB is None:
        _LIB = Library()
    return _LIB


# --- Helpers ---------------------------------------------------------------------------------------

def ptrs(handles):
    """A C array of handles (for device lists, wait lists...)."""
    handles = list(handles)
    return (c_void_p * max(1, len(handles)))(*handles)


def as_void_array(seq):
    return (c_void_p * len(seq))(*seq)


class CLError(Exception):
    def __init__(self, call, code):
        super().__init__(f"{call} failed with {err_name(code)}")
        self.call = call
        self.code = code


def ok(code, call):
    if code != CL_SUCCESS:
        raise CLError(call, code)


def raw_info(fn, *args, name="info"):
    """Query an info parameter the two-step way; returns (bytes, size_ret of the size query)."""
    size = c_size_t(0)
    ok(fn(*args, 0, None, ctypes.byref(size)), name)
    buf = ctypes.create_string_buffer(max(1, size.value))
    size2 = c_size_t(0)
    ok(fn(*args, size.value, buf, ctypes.byref(size2)), name)
    if size2.value != size.value:
        raise CLError(f"{name}: size_ret {size2.value} on the second call, {size.value} on the first",
                      CL_INVALID_VALUE)
    return buf.raw[:size.value], size.value


def decode(raw, kind):
    """Decode raw info bytes as kind: 'str', 'uint', 'int', 'ulong', 'size', 'bool', 'ptr',
    'sizes' (array of size_t), 'ptrs' (array of handles), 'ulongs', 'bytes'."""
    import struct
    if kind == "str":
        return raw.split(b"\0", 1)[0].decode("utf-8", "replace")
    if kind == "bytes":
        return raw
    fmt = {"uint": "I", "int": "i", "ulong": "Q", "size": "N", "bool": "I", "ptr": "P",
           "sizes": "N", "ptrs": "P", "ulongs": "Q", "uints": "I", "ints": "i"}[kind]
    width = struct.calcsize(fmt)
    if kind in ("sizes", "ptrs", "ulongs", "uints", "ints"):
        return list(struct.unpack(f"{len(raw) // width}{fmt}", raw[:len(raw) // width * width]))
    if len(raw) != width:
        raise CLError(f"value of {len(raw)} bytes where a {kind} ({width} bytes) was expected",
                      CL_INVALID_VALUE)
    return struct.unpack(fmt, raw)[0]


KIND_SIZES = {"uint": 4, "int": 4, "ulong": 8, "size": ctypes.sizeof(c_size_t), "bool": 4,
              "ptr": ctypes.sizeof(c_void_p)}


def info(fn, *args, kind="str", name="info"):
    raw, _ = raw_info(fn, *args, name=name)
    return decode(raw, kind)
