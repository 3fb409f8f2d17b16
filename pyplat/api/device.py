"""Device entry points: clGetDeviceIDs, clGetDeviceInfo, retain/release, sub-devices, timers."""
import ctypes

from pyplat import cl
from pyplat.api import handles, info
from pyplat.api.entry import entry
from pyplat.api.errors import CLError, check
from pyplat.api.platform import lookup_platform
from pyplat.core.device import Device
from pyplat.core.object import RefCounted

if handles.forget not in RefCounted.destroy_listeners:
    RefCounted.destroy_listeners.append(handles.forget)

VALID_DEVICE_TYPES = (cl.CL_DEVICE_TYPE_DEFAULT | cl.CL_DEVICE_TYPE_CPU | cl.CL_DEVICE_TYPE_GPU
                      | cl.CL_DEVICE_TYPE_ACCELERATOR | cl.CL_DEVICE_TYPE_CUSTOM)


def check_device_type(device_type):
    check(device_type == cl.CL_DEVICE_TYPE_ALL
          or (device_type and not device_type & ~VALID_DEVICE_TYPES),
          cl.CL_INVALID_DEVICE_TYPE, f"device_type {device_type:#x} is not valid")


def lookup_device(address):
    return handles.lookup(address, Device, cl.CL_INVALID_DEVICE)


def device_handle(device):
    return handles.handle_of(device, handles.DEVICE)


def _v(major, minor, patch=0):
    return info.make_version(major, minor, patch)


def _extensions_with_version(d):
    return [(name, _v(1, 0, 0)) for name in d.extensions]


def _width(kind, which):
    return lambda d: getattr(d, which)[kind]


U, UL, SZ, B, S, BF = info.uint, info.ulong, info.size_t, info.boolean, info.string, info.bitfield
NV = info.name_versions

DEVICE_INFO = {
    cl.CL_DEVICE_TYPE: (BF, lambda d: d.device_type),
    cl.CL_DEVICE_VENDOR_ID: (U, lambda d: d.vendor_id),
    cl.CL_DEVICE_MAX_COMPUTE_UNITS: (U, lambda d: d.compute_units),
    cl.CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS: (U, lambda d: d.max_work_item_dimensions),
    cl.CL_DEVICE_MAX_WORK_ITEM_SIZES: (info.size_t_array, lambda d: d.max_work_item_sizes),
    cl.CL_DEVICE_MAX_WORK_GROUP_SIZE: (SZ, lambda d: d.max_work_group_size),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR: (U, _width("char", "preferred_vector_widths")),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT: (U, _width("short", "preferred_vector_widths")),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT: (U, _width("int", "preferred_vector_widths")),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG: (U, _width("long", "preferred_vector_widths")),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT: (U, _width("float", "preferred_vector_widths")),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE: (U, _width("double", "preferred_vector_widths")),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF: (U, _width("half", "preferred_vector_widths")),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR: (U, _width("char", "native_vector_widths")),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT: (U, _width("short", "native_vector_widths")),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_INT: (U, _width("int", "native_vector_widths")),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG: (U, _width("long", "native_vector_widths")),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: (U, _width("float", "native_vector_widths")),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE: (U, _width("double", "native_vector_widths")),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF: (U, _width("half", "native_vector_widths")),
    cl.CL_DEVICE_MAX_CLOCK_FREQUENCY: (U, lambda d: d.max_clock_frequency),
    cl.CL_DEVICE_ADDRESS_BITS: (U, lambda d: d.address_bits),
    cl.CL_DEVICE_MAX_MEM_ALLOC_SIZE: (UL, lambda d: d.max_mem_alloc_size),
    cl.CL_DEVICE_IMAGE_SUPPORT: (B, lambda d: d.image_support),
    cl.CL_DEVICE_MAX_READ_IMAGE_ARGS: (U, lambda d: 0),
    cl.CL_DEVICE_MAX_WRITE_IMAGE_ARGS: (U, lambda d: 0),
    cl.CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS: (U, lambda d: 0),
    cl.CL_DEVICE_IL_VERSION: (S, lambda d: ""),
    cl.CL_DEVICE_ILS_WITH_VERSION: (NV, lambda d: []),
    cl.CL_DEVICE_IMAGE2D_MAX_WIDTH: (SZ, lambda d: 0),
    cl.CL_DEVICE_IMAGE2D_MAX_HEIGHT: (SZ, lambda d: 0),
    cl.CL_DEVICE_IMAGE3D_MAX_WIDTH: (SZ, lambda d: 0),
    cl.CL_DEVICE_IMAGE3D_MAX_HEIGHT: (SZ, lambda d: 0),
    cl.CL_DEVICE_IMAGE3D_MAX_DEPTH: (SZ, lambda d: 0),
    cl.CL_DEVICE_IMAGE_MAX_BUFFER_SIZE: (SZ, lambda d: 0),
    cl.CL_DEVICE_IMAGE_MAX_ARRAY_SIZE: (SZ, lambda d: 0),
    cl.CL_DEVICE_MAX_SAMPLERS: (U, lambda d: 0),
    cl.CL_DEVICE_IMAGE_PITCH_ALIGNMENT: (U, lambda d: 0),
    cl.CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT: (U, lambda d: 0),
    cl.CL_DEVICE_MAX_PIPE_ARGS: (U, lambda d: 0),
    cl.CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS: (U, lambda d: 0),
    cl.CL_DEVICE_PIPE_MAX_PACKET_SIZE: (U, lambda d: 0),
    cl.CL_DEVICE_MAX_PARAMETER_SIZE: (SZ, lambda d: d.max_parameter_size),
    cl.CL_DEVICE_MEM_BASE_ADDR_ALIGN: (U, lambda d: d.mem_base_addr_align),
    cl.CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE: (U, lambda d: d.min_data_type_align_size),
    cl.CL_DEVICE_SINGLE_FP_CONFIG: (BF, lambda d: d.single_fp_config),
    cl.CL_DEVICE_DOUBLE_FP_CONFIG: (BF, lambda d: d.double_fp_config),
    cl.CL_DEVICE_HALF_FP_CONFIG: (BF, lambda d: 0),          # no cl_khr_fp16
    cl.CL_DEVICE_GLOBAL_MEM_CACHE_TYPE: (U, lambda d: d.global_mem_cache_type),
    cl.CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE: (U, lambda d: d.global_mem_cacheline_size),
    cl.CL_DEVICE_GLOBAL_MEM_CACHE_SIZE: (UL, lambda d: d.global_mem_cache_size),
    cl.CL_DEVICE_GLOBAL_MEM_SIZE: (UL, lambda d: d.global_mem_size),
    cl.CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE: (UL, lambda d: d.max_constant_buffer_size),
    cl.CL_DEVICE_MAX_CONSTANT_ARGS: (U, lambda d: d.max_constant_args),
    cl.CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE: (SZ, lambda d: 0),
    cl.CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE: (SZ, lambda d: 0),
    cl.CL_DEVICE_LOCAL_MEM_TYPE: (U, lambda d: d.local_mem_type),
    cl.CL_DEVICE_LOCAL_MEM_SIZE: (UL, lambda d: d.local_mem_size),
    cl.CL_DEVICE_ERROR_CORRECTION_SUPPORT: (B, lambda d: False),
    cl.CL_DEVICE_HOST_UNIFIED_MEMORY: (B, lambda d: d.shares_host_memory),
    cl.CL_DEVICE_PROFILING_TIMER_RESOLUTION: (SZ, lambda d: d.profiling_timer_resolution),
    cl.CL_DEVICE_ENDIAN_LITTLE: (B, lambda d: d.endian_little),
    cl.CL_DEVICE_AVAILABLE: (B, lambda d: d.unavailable is None),
    cl.CL_DEVICE_COMPILER_AVAILABLE: (B, lambda d: d.compiler_available),
    cl.CL_DEVICE_LINKER_AVAILABLE: (B, lambda d: d.linker_available),
    cl.CL_DEVICE_EXECUTION_CAPABILITIES: (BF, lambda d: d.execution_capabilities),
    cl.CL_DEVICE_QUEUE_ON_HOST_PROPERTIES: (BF, lambda d: d.queue_properties),
    cl.CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES: (BF, lambda d: 0),
    cl.CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE: (U, lambda d: 0),
    cl.CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE: (U, lambda d: 0),
    cl.CL_DEVICE_MAX_ON_DEVICE_QUEUES: (U, lambda d: 0),
    cl.CL_DEVICE_MAX_ON_DEVICE_EVENTS: (U, lambda d: 0),
    cl.CL_DEVICE_BUILT_IN_KERNELS: (S, lambda d: ";".join(d.built_in_kernels)),
    cl.CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION: (
        NV, lambda d: [(k, _v(1, 0, 0)) for k in d.built_in_kernels]),
    cl.CL_DEVICE_PLATFORM: (info.pointer, lambda d: handles.handle_of(d.platform, handles.PLATFORM)),
    cl.CL_DEVICE_NAME: (S, lambda d: d.name),
    cl.CL_DEVICE_VENDOR: (S, lambda d: d.vendor),
    cl.CL_DRIVER_VERSION: (S, lambda d: d.driver_version),
    cl.CL_DEVICE_PROFILE: (S, lambda d: d.platform.profile),
    cl.CL_DEVICE_VERSION: (S, lambda d: d.version),
    cl.CL_DEVICE_NUMERIC_VERSION: (info.version, lambda d: _v(*d.numeric_version)),
    cl.CL_DEVICE_OPENCL_C_VERSION: (S, lambda d: d.opencl_c_version),
    cl.CL_DEVICE_OPENCL_C_ALL_VERSIONS: (
        NV, lambda d: [("OpenCL C", _v(*v)) for v in d.opencl_c_all_versions]),
    cl.CL_DEVICE_OPENCL_C_FEATURES: (NV, lambda d: [(f, _v(3, 0)) for f in d.opencl_c_features]),
    cl.CL_DEVICE_EXTENSIONS: (S, lambda d: " ".join(d.extensions)),
    cl.CL_DEVICE_EXTENSIONS_WITH_VERSION: (NV, _extensions_with_version),
    cl.CL_DEVICE_PRINTF_BUFFER_SIZE: (SZ, lambda d: d.printf_buffer_size),
    cl.CL_DEVICE_PREFERRED_INTEROP_USER_SYNC: (B, lambda d: True),
    cl.CL_DEVICE_PARENT_DEVICE: (info.pointer, lambda d: 0),
    cl.CL_DEVICE_PARTITION_MAX_SUB_DEVICES: (U, lambda d: d.partition_max_sub_devices),
    # Not partitionable: a single 0 (spec); a root device has no partition type (size 0).
    cl.CL_DEVICE_PARTITION_PROPERTIES: (
        info.size_t_array, lambda d: list(d.partition_properties) or [0]),
    cl.CL_DEVICE_PARTITION_AFFINITY_DOMAIN: (BF, lambda d: 0),
    cl.CL_DEVICE_PARTITION_TYPE: (info.size_t_array, lambda d: list(d.partition_type)),
    cl.CL_DEVICE_REFERENCE_COUNT: (U, lambda d: d.reference_count),
    cl.CL_DEVICE_SVM_CAPABILITIES: (BF, lambda d: 0),
    cl.CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT: (U, lambda d: 0),
    cl.CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT: (U, lambda d: 0),
    cl.CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT: (U, lambda d: 0),
    cl.CL_DEVICE_MAX_NUM_SUB_GROUPS: (U, lambda d: 0),
    cl.CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS: (B, lambda d: False),
    cl.CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES: (BF, lambda d: d.atomic_memory_capabilities),
    cl.CL_DEVICE_ATOMIC_FENCE_CAPABILITIES: (BF, lambda d: d.atomic_fence_capabilities),
    cl.CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT: (B, lambda d: False),
    cl.CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT: (B, lambda d: False),
    cl.CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT: (B, lambda d: False),
    cl.CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES: (BF, lambda d: 0),
    cl.CL_DEVICE_PIPE_SUPPORT: (B, lambda d: False),
    cl.CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: (SZ, lambda d: d.preferred_work_group_size_multiple),
    cl.CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED: (S, lambda d: d.latest_conformance_version_passed),
}


@entry
def clGetDeviceIDs(platform, device_type, num_entries, devices, num_devices):
    p = lookup_platform(platform)
    check_device_type(device_type)
    check(not (num_entries == 0 and devices), cl.CL_INVALID_VALUE,
          "num_entries is 0 and devices is not NULL")
    check(devices or num_devices, cl.CL_INVALID_VALUE, "devices and num_devices are NULL")
    found = p.devices_of_type(device_type)
    if not found:
        raise CLError(cl.CL_DEVICE_NOT_FOUND, f"the platform has no device of type {device_type:#x}")
    if devices:
        handles.write_handles(devices, [device_handle(d) for d in found[:num_entries]])
    if num_devices:
        ctypes.c_uint32.from_address(num_devices).value = len(found)


@entry
def clGetDeviceInfo(device, param_name, param_value_size, param_value, param_value_size_ret):
    d = lookup_device(device)
    info.query(DEVICE_INFO, d, param_name, param_value_size, param_value, param_value_size_ret)


@entry
def clRetainDevice(device):
    lookup_device(device).retain()


@entry
def clReleaseDevice(device):
    lookup_device(device).release()


PARTITION_NAMES = (cl.CL_DEVICE_PARTITION_EQUALLY, cl.CL_DEVICE_PARTITION_BY_COUNTS,
                   cl.CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN)


@entry
def clCreateSubDevices(in_device, partition_properties, num_entries, out_devices, num_devices):
    d = lookup_device(in_device)
    check(partition_properties, cl.CL_INVALID_VALUE, "partition_properties is NULL")
    name = ctypes.c_ssize_t.from_address(partition_properties).value
    check(name in PARTITION_NAMES, cl.CL_INVALID_VALUE, f"unknown partition property {name:#x}")
    # The spec's CL_INVALID_VALUE covers "valid but not supported by the device": our devices
    # report no partition types (CL_DEVICE_PARTITION_PROPERTIES is {0}).
    check(name in d.partition_properties, cl.CL_INVALID_VALUE,
          "the device does not support this partition type")
    raise CLError(cl.CL_DEVICE_PARTITION_FAILED, "the device cannot be partitioned")


@entry
def clGetHostTimer(device, host_timestamp):
    d = lookup_device(device)
    check(host_timestamp, cl.CL_INVALID_VALUE, "host_timestamp is NULL")
    ctypes.c_uint64.from_address(host_timestamp).value = d.platform.host_timer_ns()


@entry
def clGetDeviceAndHostTimer(device, device_timestamp, host_timestamp):
    d = lookup_device(device)
    check(device_timestamp and host_timestamp, cl.CL_INVALID_VALUE,
          "device_timestamp or host_timestamp is NULL")
    now = d.now_ns()          # the device and host timers are the same clock
    ctypes.c_uint64.from_address(device_timestamp).value = now
    ctypes.c_uint64.from_address(host_timestamp).value = now
