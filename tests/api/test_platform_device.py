"""Platform and device entry points, called directly as the C shim would call them."""
import ctypes
import struct

import pytest

from pyplat import cl
from pyplat.api import device as dev_api, platform as plat_api
from pyplat.core.platform import get_platform
from support.direct_calls import addr, call, device_id, get_info, platform_id


# ---------------------------------------------------------------- platform

def test_get_platform_ids():
    n = ctypes.c_uint32()
    assert call(plat_api.clGetPlatformIDs, 0, 0, addr(n)) == cl.CL_SUCCESS
    assert n.value == 1
    ids = (ctypes.c_size_t * 2)(0, 0)
    assert call(plat_api.clGetPlatformIDs, 2, addr(ids), 0) == cl.CL_SUCCESS
    assert ids[0] != 0 and ids[1] == 0
    assert ids[0] == platform_id()                       # the same handle every time


def test_get_platform_ids_errors():
    ids = (ctypes.c_size_t * 1)()
    assert call(plat_api.clGetPlatformIDs, 0, addr(ids), 0) == cl.CL_INVALID_VALUE
    assert call(plat_api.clGetPlatformIDs, 1, 0, 0) == cl.CL_INVALID_VALUE
    assert call(plat_api.clGetPlatformIDs, 0, 0, 0) == cl.CL_INVALID_VALUE


PLATFORM_STRINGS = {
    cl.CL_PLATFORM_PROFILE: "FULL_PROFILE",
    cl.CL_PLATFORM_VERSION: "OpenCL 3.0 PyPlat 0.1.0",
    cl.CL_PLATFORM_NAME: "PyPlat",
    cl.CL_PLATFORM_VENDOR: "PyPlat project",
    cl.CL_PLATFORM_ICD_SUFFIX_KHR: "PYPL",
}


@pytest.mark.parametrize("param,expected", sorted(PLATFORM_STRINGS.items()))
def test_platform_strings(param, expected):
    code, data = get_info(plat_api.clGetPlatformInfo, platform_id(), param)
    assert code == 0
    assert data == expected.encode() + b"\0"


def test_platform_extensions():
    p = platform_id()
    code, data = get_info(plat_api.clGetPlatformInfo, p, cl.CL_PLATFORM_EXTENSIONS)
    names = data.rstrip(b"\0").decode().split()
    assert data.endswith(b"\0") and "cl_khr_icd" in names and "cl_khr_fp64" in names
    code, data = get_info(plat_api.clGetPlatformInfo, p, cl.CL_PLATFORM_EXTENSIONS_WITH_VERSION)
    assert code == 0 and len(data) == 68 * len(names)
    versioned = [data[i + 4:i + 68].rstrip(b"\0").decode() for i in range(0, len(data), 68)]
    assert versioned == names
    assert all(struct.unpack_from("=I", data, i)[0] == 1 << 22 for i in range(0, len(data), 68))


def test_platform_numbers():
    p = platform_id()
    code, data = get_info(plat_api.clGetPlatformInfo, p, cl.CL_PLATFORM_NUMERIC_VERSION)
    assert code == 0 and struct.unpack("=I", data)[0] == (3 << 22)
    code, data = get_info(plat_api.clGetPlatformInfo, p, cl.CL_PLATFORM_HOST_TIMER_RESOLUTION)
    assert code == 0 and len(data) == 8 and struct.unpack("=Q", data)[0] >= 1


def test_platform_info_errors():
    p = platform_id()
    size = ctypes.c_size_t()
    assert call(plat_api.clGetPlatformInfo, p, 0x1234, 0, 0, addr(size)) == cl.CL_INVALID_VALUE
    small = ctypes.create_string_buffer(3)
    assert call(plat_api.clGetPlatformInfo, p, cl.CL_PLATFORM_NAME, 3, addr(small), 0) == \
        cl.CL_INVALID_VALUE
    bogus = ctypes.c_uint64(0)
    assert call(plat_api.clGetPlatformInfo, addr(bogus), cl.CL_PLATFORM_NAME, 0, 0, addr(size)) == \
        cl.CL_INVALID_PLATFORM
    assert call(plat_api.clGetPlatformInfo, device_id(), cl.CL_PLATFORM_NAME, 0, 0, addr(size)) == \
        cl.CL_INVALID_PLATFORM
    # NULL platform: ours (implementation-defined by the spec)
    assert call(plat_api.clGetPlatformInfo, 0, cl.CL_PLATFORM_NAME, 0, 0, addr(size)) == 0


def test_unload_compiler():
    assert call(plat_api.clUnloadPlatformCompiler, platform_id()) == 0
    assert call(plat_api.clUnloadPlatformCompiler, 0) == cl.CL_INVALID_PLATFORM
    assert call(plat_api.clUnloadCompiler) == 0


# ---------------------------------------------------------------- device ids

def test_get_device_ids():
    p = platform_id()
    for device_type in (cl.CL_DEVICE_TYPE_ALL, cl.CL_DEVICE_TYPE_CPU, cl.CL_DEVICE_TYPE_DEFAULT,
                        cl.CL_DEVICE_TYPE_CPU | cl.CL_DEVICE_TYPE_GPU):
        n = ctypes.c_uint32()
        assert call(dev_api.clGetDeviceIDs, p, device_type, 0, 0, addr(n)) == 0
        expected = 1 if device_type == cl.CL_DEVICE_TYPE_DEFAULT else len(get_platform().devices)
        assert n.value == expected
    out = (ctypes.c_size_t * 1)()
    assert call(dev_api.clGetDeviceIDs, p, cl.CL_DEVICE_TYPE_DEFAULT, 1, addr(out), 0) == 0
    assert out[0] == device_id(0)
    # NULL platform means ours
    assert call(dev_api.clGetDeviceIDs, 0, cl.CL_DEVICE_TYPE_ALL, 1, addr(out), 0) == 0


def test_get_device_ids_errors():
    p = platform_id()
    n = ctypes.c_uint32()
    out = (ctypes.c_size_t * 1)()
    for bad in (0, 1 << 5, 0x80000000):
        assert call(dev_api.clGetDeviceIDs, p, bad, 0, 0, addr(n)) == cl.CL_INVALID_DEVICE_TYPE
    for none in (cl.CL_DEVICE_TYPE_GPU, cl.CL_DEVICE_TYPE_ACCELERATOR, cl.CL_DEVICE_TYPE_CUSTOM):
        assert call(dev_api.clGetDeviceIDs, p, none, 0, 0, addr(n)) == cl.CL_DEVICE_NOT_FOUND
    assert call(dev_api.clGetDeviceIDs, p, cl.CL_DEVICE_TYPE_ALL, 0, addr(out), 0) == cl.CL_INVALID_VALUE
    assert call(dev_api.clGetDeviceIDs, p, cl.CL_DEVICE_TYPE_ALL, 1, 0, 0) == cl.CL_INVALID_VALUE
    bogus = ctypes.c_uint64(0)
    assert call(dev_api.clGetDeviceIDs, addr(bogus), cl.CL_DEVICE_TYPE_ALL, 0, 0, addr(n)) == \
        cl.CL_INVALID_PLATFORM


# ---------------------------------------------------------------- device info

U32, U64, STR = 4, 8, "str"
NV = "name_version"

DEVICE_PARAMS = {
    "TYPE": U64, "VENDOR_ID": U32, "MAX_COMPUTE_UNITS": U32, "MAX_WORK_ITEM_DIMENSIONS": U32,
    "MAX_WORK_ITEM_SIZES": 24, "MAX_WORK_GROUP_SIZE": U64,
    "PREFERRED_VECTOR_WIDTH_CHAR": U32, "PREFERRED_VECTOR_WIDTH_SHORT": U32,
    "PREFERRED_VECTOR_WIDTH_INT": U32, "PREFERRED_VECTOR_WIDTH_LONG": U32,
    "PREFERRED_VECTOR_WIDTH_FLOAT": U32, "PREFERRED_VECTOR_WIDTH_DOUBLE": U32,
    "PREFERRED_VECTOR_WIDTH_HALF": U32, "NATIVE_VECTOR_WIDTH_CHAR": U32,
    "NATIVE_VECTOR_WIDTH_SHORT": U32, "NATIVE_VECTOR_WIDTH_INT": U32, "NATIVE_VECTOR_WIDTH_LONG": U32,
    "NATIVE_VECTOR_WIDTH_FLOAT": U32, "NATIVE_VECTOR_WIDTH_DOUBLE": U32,
    "NATIVE_VECTOR_WIDTH_HALF": U32, "MAX_CLOCK_FREQUENCY": U32, "ADDRESS_BITS": U32,
    "MAX_MEM_ALLOC_SIZE": U64, "IMAGE_SUPPORT": U32, "MAX_READ_IMAGE_ARGS": U32,
    "MAX_WRITE_IMAGE_ARGS": U32, "MAX_READ_WRITE_IMAGE_ARGS": U32, "IL_VERSION": STR,
    "ILS_WITH_VERSION": NV, "IMAGE2D_MAX_WIDTH": U64, "IMAGE2D_MAX_HEIGHT": U64,
    "IMAGE3D_MAX_WIDTH": U64, "IMAGE3D_MAX_HEIGHT": U64, "IMAGE3D_MAX_DEPTH": U64,
    "IMAGE_MAX_BUFFER_SIZE": U64, "IMAGE_MAX_ARRAY_SIZE": U64, "MAX_SAMPLERS": U32,
    "IMAGE_PITCH_ALIGNMENT": U32, "IMAGE_BASE_ADDRESS_ALIGNMENT": U32, "MAX_PIPE_ARGS": U32,
    "PIPE_MAX_ACTIVE_RESERVATIONS": U32, "PIPE_MAX_PACKET_SIZE": U32, "MAX_PARAMETER_SIZE": U64,
    "MEM_BASE_ADDR_ALIGN": U32, "MIN_DATA_TYPE_ALIGN_SIZE": U32, "SINGLE_FP_CONFIG": U64,
    "DOUBLE_FP_CONFIG": U64, "GLOBAL_MEM_CACHE_TYPE": U32, "GLOBAL_MEM_CACHELINE_SIZE": U32,
    "GLOBAL_MEM_CACHE_SIZE": U64, "GLOBAL_MEM_SIZE": U64, "MAX_CONSTANT_BUFFER_SIZE": U64,
    "MAX_CONSTANT_ARGS": U32, "MAX_GLOBAL_VARIABLE_SIZE": U64,
    "GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE": U64, "LOCAL_MEM_TYPE": U32, "LOCAL_MEM_SIZE": U64,
    "ERROR_CORRECTION_SUPPORT": U32, "PROFILING_TIMER_RESOLUTION": U64, "ENDIAN_LITTLE": U32,
    "AVAILABLE": U32, "COMPILER_AVAILABLE": U32, "LINKER_AVAILABLE": U32,
    "EXECUTION_CAPABILITIES": U64, "QUEUE_ON_HOST_PROPERTIES": U64,
    "QUEUE_ON_DEVICE_PROPERTIES": U64, "QUEUE_ON_DEVICE_PREFERRED_SIZE": U32,
    "QUEUE_ON_DEVICE_MAX_SIZE": U32, "MAX_ON_DEVICE_QUEUES": U32, "MAX_ON_DEVICE_EVENTS": U32,
    "BUILT_IN_KERNELS": STR, "BUILT_IN_KERNELS_WITH_VERSION": NV, "PLATFORM": U64, "NAME": STR,
    "VENDOR": STR, "PROFILE": STR, "VERSION": STR, "NUMERIC_VERSION": U32,
    "OPENCL_C_VERSION": STR, "OPENCL_C_ALL_VERSIONS": NV, "OPENCL_C_FEATURES": NV,
    "EXTENSIONS": STR, "EXTENSIONS_WITH_VERSION": NV, "PRINTF_BUFFER_SIZE": U64,
    "PREFERRED_INTEROP_USER_SYNC": U32, "PARENT_DEVICE": U64, "PARTITION_MAX_SUB_DEVICES": U32,
    "PARTITION_PROPERTIES": 8, "PARTITION_AFFINITY_DOMAIN": U64, "PARTITION_TYPE": 0,
    "REFERENCE_COUNT": U32, "SVM_CAPABILITIES": U64, "PREFERRED_PLATFORM_ATOMIC_ALIGNMENT": U32,
    "PREFERRED_GLOBAL_ATOMIC_ALIGNMENT": U32, "PREFERRED_LOCAL_ATOMIC_ALIGNMENT": U32,
    "MAX_NUM_SUB_GROUPS": U32, "SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS": U32,
    "ATOMIC_MEMORY_CAPABILITIES": U64, "ATOMIC_FENCE_CAPABILITIES": U64,
    "NON_UNIFORM_WORK_GROUP_SUPPORT": U32, "WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT": U32,
    "GENERIC_ADDRESS_SPACE_SUPPORT": U32, "DEVICE_ENQUEUE_CAPABILITIES": U64, "PIPE_SUPPORT": U32,
    "PREFERRED_WORK_GROUP_SIZE_MULTIPLE": U64, "LATEST_CONFORMANCE_VERSION_PASSED": STR,
}


def test_every_core_device_param_is_answered():
    """Every CL_DEVICE_* info param of cl.h (3.0) is in the table."""
    import re
    names = set(re.findall(r"#define (CL_DEVICE_[A-Z0-9_]+)\s+0x10[0-9A-Fa-f]{2}\b",
                           open("/usr/include/CL/cl.h").read()))
    names -= {"CL_DEVICE_PARTITION_EQUALLY", "CL_DEVICE_PARTITION_BY_COUNTS",
              "CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN"}      # partition names, not info params
    names.add("CL_DRIVER_VERSION")
    missing = [n for n in names if getattr(cl, n) not in dev_api.DEVICE_INFO]
    assert not missing


@pytest.mark.parametrize("name,kind", sorted(DEVICE_PARAMS.items()))
def test_device_param_size(name, kind):
    code, data = get_info(dev_api.clGetDeviceInfo, device_id(), getattr(cl, "CL_DEVICE_" + name))
    assert code == cl.CL_SUCCESS
    if kind == STR:
        assert data.endswith(b"\0") and b"\0" not in data[:-1]
    elif kind == NV:
        assert len(data) % 68 == 0
    else:
        assert len(data) == kind


def test_driver_version():
    code, data = get_info(dev_api.clGetDeviceInfo, device_id(), cl.CL_DRIVER_VERSION)
    assert code == 0 and data == b"0.1.0\0"


def value(param, fmt="=Q"):
    code, data = get_info(dev_api.clGetDeviceInfo, device_id(), param)
    assert code == 0
    return struct.unpack(fmt, data)[0] if fmt else data


def test_device_values():
    assert value(cl.CL_DEVICE_TYPE) == cl.CL_DEVICE_TYPE_CPU
    assert value(cl.CL_DEVICE_MAX_WORK_GROUP_SIZE) == 4096
    assert value(cl.CL_DEVICE_MAX_WORK_ITEM_SIZES, "=3Q") == 4096
    assert value(cl.CL_DEVICE_ADDRESS_BITS, "=I") == 64
    assert value(cl.CL_DEVICE_ENDIAN_LITTLE, "=I") == 1
    assert value(cl.CL_DEVICE_IMAGE_SUPPORT, "=I") == 0
    assert value(cl.CL_DEVICE_MEM_BASE_ADDR_ALIGN, "=I") == 1024
    assert value(cl.CL_DEVICE_PLATFORM) == platform_id()
    assert value(cl.CL_DEVICE_PARENT_DEVICE) == 0
    assert value(cl.CL_DEVICE_REFERENCE_COUNT, "=I") == 1
    assert value(cl.CL_DEVICE_PARTITION_MAX_SUB_DEVICES, "=I") == 0
    assert value(cl.CL_DEVICE_PARTITION_PROPERTIES) == 0
    assert value(cl.CL_DEVICE_SVM_CAPABILITIES) == 0
    assert value(cl.CL_DEVICE_QUEUE_ON_HOST_PROPERTIES) == (
        cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | cl.CL_QUEUE_PROFILING_ENABLE)
    fp = value(cl.CL_DEVICE_SINGLE_FP_CONFIG)
    assert fp & cl.CL_FP_ROUND_TO_NEAREST and fp & cl.CL_FP_INF_NAN and fp & cl.CL_FP_FMA
    dfp = value(cl.CL_DEVICE_DOUBLE_FP_CONFIG)
    assert dfp & cl.CL_FP_DENORM and dfp & cl.CL_FP_ROUND_TO_ZERO and dfp & cl.CL_FP_ROUND_TO_INF
    assert value(cl.CL_DEVICE_GLOBAL_MEM_SIZE) >= value(cl.CL_DEVICE_MAX_MEM_ALLOC_SIZE) >= 128 << 20
    assert value(cl.CL_DEVICE_LOCAL_MEM_SIZE) >= 32 << 10
    assert value(cl.CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE) >= 64 << 10
    assert value(cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, "=I") in (4, 8, 16)
    assert value(cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF, "=I") == 0
    assert value(cl.CL_DEVICE_VERSION, None).startswith(b"OpenCL 3.0 ")
    assert value(cl.CL_DEVICE_OPENCL_C_VERSION, None) == b"OpenCL C 1.2 PyPlat\0"
    assert value(cl.CL_DEVICE_NUMERIC_VERSION, "=I") == 3 << 22
    assert value(cl.CL_DEVICE_PARTITION_TYPE, None) == b""


def test_cpu_vendor_is_the_cpuid_vendor_string():
    # as PoCL: CL_DEVICE_VENDOR is /proc/cpuinfo's vendor_id; the ID its vendor's PCI ID
    from pyplat.devices import host_machine
    cpuid = ""
    for line in open("/proc/cpuinfo"):
        if line.startswith("vendor_id"):
            cpuid = line.partition(":")[2].strip()
            break
    vendor = value(cl.CL_DEVICE_VENDOR, None).rstrip(b"\0").decode()
    vendor_id = value(cl.CL_DEVICE_VENDOR_ID, "=I")
    if cpuid:
        assert vendor == cpuid
    assert (vendor, vendor_id) == host_machine.cpu_vendor(cpuid) or not cpuid
    assert {"GenuineIntel": 0x8086, "AuthenticAMD": 0x1022}.get(vendor, vendor_id) == vendor_id


@pytest.mark.parametrize("text, expected", [
    ("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: X\n", ("GenuineIntel", 0x8086)),
    ("vendor_id\t: AuthenticAMD\nvendor_id\t: GenuineIntel\n", ("AuthenticAMD", 0x1022)),
    ("vendor_id\t: HygonGenuine\n", ("HygonGenuine", 0x1d94)),
    ("vendor_id\t: SomeNewVendor\n", ("SomeNewVendor", 0)),
    ("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n", ("ARM", 0x13b5)),
    ("CPU implementer\t: 0x99\n", ("CPU implementer 0x99", 0)),
    ("", ("Unknown", 0)),
])
def test_cpu_vendor_from_cpuinfo(text, expected):
    from pyplat.devices import host_machine
    assert host_machine.cpu_info(text)[0] == expected


def test_device_versioned_lists():
    data = value(cl.CL_DEVICE_OPENCL_C_ALL_VERSIONS, None)
    entries = [(struct.unpack_from("=I", data, i)[0], data[i + 4:i + 68].rstrip(b"\0"))
               for i in range(0, len(data), 68)]
    assert [v for v, _ in entries] == [1 << 22, (1 << 22) | (1 << 12), (1 << 22) | (2 << 12), 3 << 22]
    assert all(n == b"OpenCL C" for _, n in entries)
    data = value(cl.CL_DEVICE_OPENCL_C_FEATURES, None)
    features = {data[i + 4:i + 68].rstrip(b"\0") for i in range(0, len(data), 68)}
    assert {b"__opencl_c_fp64", b"__opencl_c_int64"} <= features
    assert b"__opencl_c_images" not in features
    ext = value(cl.CL_DEVICE_EXTENSIONS, None).rstrip(b"\0").split()
    data = value(cl.CL_DEVICE_EXTENSIONS_WITH_VERSION, None)
    assert [data[i + 4:i + 68].rstrip(b"\0") for i in range(0, len(data), 68)] == ext
    assert b"cl_khr_fp64" in ext
    assert value(cl.CL_DEVICE_ILS_WITH_VERSION, None) == b""
    assert value(cl.CL_DEVICE_BUILT_IN_KERNELS, None) == b"\0"


def test_device_info_errors():
    d = device_id()
    size = ctypes.c_size_t()
    assert call(dev_api.clGetDeviceInfo, d, 0x1FFF, 0, 0, addr(size)) == cl.CL_INVALID_VALUE
    assert call(dev_api.clGetDeviceInfo, d, cl.CL_DEVICE_PLATFORM + 0x10000, 0, 0, addr(size)) == \
        cl.CL_INVALID_VALUE
    small = ctypes.c_uint32()
    assert call(dev_api.clGetDeviceInfo, d, cl.CL_DEVICE_GLOBAL_MEM_SIZE, 4, addr(small), 0) == \
        cl.CL_INVALID_VALUE
    name = ctypes.create_string_buffer(4)
    assert call(dev_api.clGetDeviceInfo, d, cl.CL_DEVICE_NAME, 4, addr(name), 0) == cl.CL_INVALID_VALUE
    big = ctypes.c_uint64(0)
    assert call(dev_api.clGetDeviceInfo, d, cl.CL_DEVICE_MAX_COMPUTE_UNITS, 8, addr(big), addr(size)) == 0
    assert size.value == 4 and big.value >= 1
    assert call(dev_api.clGetDeviceInfo, 0, cl.CL_DEVICE_NAME, 0, 0, addr(size)) == cl.CL_INVALID_DEVICE
    assert call(dev_api.clGetDeviceInfo, platform_id(), cl.CL_DEVICE_NAME, 0, 0, addr(size)) == \
        cl.CL_INVALID_DEVICE
    bogus = ctypes.c_uint64(0)
    assert call(dev_api.clGetDeviceInfo, addr(bogus), cl.CL_DEVICE_NAME, 0, 0, addr(size)) == \
        cl.CL_INVALID_DEVICE


def test_retain_release_root_device():
    d = device_id()
    for _ in range(3):
        assert call(dev_api.clRetainDevice, d) == 0
    for _ in range(5):
        assert call(dev_api.clReleaseDevice, d) == 0
    assert value(cl.CL_DEVICE_REFERENCE_COUNT, "=I") == 1
    assert call(dev_api.clRetainDevice, 0) == cl.CL_INVALID_DEVICE
    assert call(dev_api.clReleaseDevice, platform_id()) == cl.CL_INVALID_DEVICE


def test_create_sub_devices():
    d = device_id()
    out = (ctypes.c_size_t * 4)()
    n = ctypes.c_uint32()
    equally = (ctypes.c_ssize_t * 3)(cl.CL_DEVICE_PARTITION_EQUALLY, 1, 0)
    assert call(dev_api.clCreateSubDevices, d, addr(equally), 4, addr(out), addr(n)) == \
        cl.CL_INVALID_VALUE
    bogus = (ctypes.c_ssize_t * 3)(0x4242, 1, 0)
    assert call(dev_api.clCreateSubDevices, d, addr(bogus), 4, addr(out), addr(n)) == cl.CL_INVALID_VALUE
    assert call(dev_api.clCreateSubDevices, d, 0, 4, addr(out), addr(n)) == cl.CL_INVALID_VALUE
    assert call(dev_api.clCreateSubDevices, 0, addr(equally), 4, addr(out), addr(n)) == \
        cl.CL_INVALID_DEVICE


def test_timers():
    d = device_id()
    a, b, h = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
    assert call(dev_api.clGetDeviceAndHostTimer, d, addr(a), addr(b)) == 0
    assert call(dev_api.clGetHostTimer, d, addr(h)) == 0
    assert a.value > 0 and h.value >= b.value
    assert call(dev_api.clGetHostTimer, d, 0) == cl.CL_INVALID_VALUE
    assert call(dev_api.clGetDeviceAndHostTimer, d, addr(a), 0) == cl.CL_INVALID_VALUE
    assert call(dev_api.clGetHostTimer, 0, addr(h)) == cl.CL_INVALID_DEVICE


def test_core_device_attributes():
    d = get_platform().devices[0]
    for attr in ("max_work_group_size", "max_work_item_sizes", "compute_units", "global_mem_size",
                 "max_mem_alloc_size", "local_mem_size", "mem_base_addr_align", "name",
                 "llvm_cpu_name", "llvm_cpu_features", "profiling_timer_resolution",
                 "queue_properties", "platform"):
        assert hasattr(d, attr), attr
    assert d.platform is get_platform()
    assert d.now_ns() > 0


def test_multiple_devices(monkeypatch):
    from pyplat.core.platform import Platform
    monkeypatch.setenv("PYPLAT_DEVICES", "3")
    monkeypatch.setenv("PYPLAT_WORKERS", "5")
    p = Platform()
    assert len(p.devices) == 3 and p.devices[2].compute_units == 5
    assert p.devices_of_type(cl.CL_DEVICE_TYPE_DEFAULT) == [p.devices[0]]
    assert p.devices_of_type(cl.CL_DEVICE_TYPE_CPU) == p.devices
    assert p.devices_of_type(cl.CL_DEVICE_TYPE_GPU) == []
