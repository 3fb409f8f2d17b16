"""computeinfo: platform and device queries against the spec: answer types and sizes, the
formats of version strings, numeric versions agreeing with them, and the FULL_PROFILE minimums.
"""
import re

from . import clapi as C
from .framework import Category

CATEGORY = Category("computeinfo", "platform and device queries: types, formats, required minimums")
check = CATEGORY.check

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30


# --- validators (pure functions: the runner's tests feed them broken answers) -----------------------

def version_problem(text, prefix="OpenCL"):
    """None if `text` reads "<prefix> <major>.<minor> <platform-specific>", else why not."""
    m = re.fullmatch(re.escape(prefix) + r" (\d+)\.(\d+)( .*)?", text)
    if not m:
        return f"{text!r} does not read '{prefix} <major>.<minor> <vendor-specific information>'"
    if m.group(3) is None and prefix == "OpenCL":
        return f"{text!r} lacks the space and platform-specific part after the version"
    return None


def parse_version(text, prefix="OpenCL"):
    m = re.match(re.escape(prefix) + r" (\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def numeric_version_problem(numeric, text, prefix="OpenCL"):
    v = parse_version(text, prefix)
    major, minor = numeric >> 22, (numeric >> 12) & 0x3FF
    if v is None or (major, minor) != v:
        return (f"numeric version {numeric:#x} ({major}.{minor}.{numeric & 0xFFF}) disagrees with "
                f"{text!r}")
    return None


def extensions_problem(text):
    names = text.split()
    bad = [n for n in names if not re.fullmatch(r"cl_[A-Za-z0-9_]+", n)]
    if bad:
        return f"extension names that are not cl_<vendor>_<name>: {bad}"
    if len(set(names)) != len(names):
        return f"extensions listed twice: {sorted({n for n in names if names.count(n) > 1})}"
    return None


def name_versions(raw):
    """Decode an array of cl_name_version (cl_version + char[64])."""
    import struct
    out = []
    for i in range(0, len(raw) - len(raw) % 68, 68):
        (ver,) = struct.unpack_from("I", raw, i)
        out.append((raw[i + 4:i + 68].split(b"\0", 1)[0].decode(), ver))
    return out


def mem_alloc_minimum(version, global_mem, device_type):
    """The spec's least CL_DEVICE_MAX_MEM_ALLOC_SIZE."""
    if device_type & C.CL_DEVICE_TYPE_CUSTOM:
        return 0
    if version >= (3, 0):
        return max(min(GB, global_mem // 4), 32 * MB)
    return max(global_mem // 4, 128 * MB)


def at_least(t, what, value, minimum):
    return t.true(value >= minimum, f"{what} = {value}, below the required minimum {minimum}")


# --- checks ----------------------------------------------------------------------------------------

@check
def platform_strings(env, t):
    """CL_PLATFORM_PROFILE/VERSION/NAME/VENDOR/EXTENSIONS formats"""
    prof = env.platform_info(C.CL_PLATFORM_PROFILE)
    t.true(prof in ("FULL_PROFILE", "EMBEDDED_PROFILE"), f"CL_PLATFORM_PROFILE is {prof!r}")
    ver = env.platform_info(C.CL_PLATFORM_VERSION)
    problem = version_problem(ver)
    t.true(problem is None, f"CL_PLATFORM_VERSION: {problem}")
    t.true(env.platform_info(C.CL_PLATFORM_NAME).strip(), "CL_PLATFORM_NAME is empty")
    t.true(env.platform_info(C.CL_PLATFORM_VENDOR).strip(), "CL_PLATFORM_VENDOR is empty")
    ext = env.platform_info(C.CL_PLATFORM_EXTENSIONS)
    problem = extensions_problem(ext)
    t.true(problem is None, f"CL_PLATFORM_EXTENSIONS: {problem}")
    t.true("cl_khr_icd" in ext.split(),
           f"CL_PLATFORM_EXTENSIONS lacks cl_khr_icd (an ICD-loaded platform has it): {ext!r}")


@check
def platform_numeric_version(env, t):
    """OpenCL 3.0: CL_PLATFORM_NUMERIC_VERSION and EXTENSIONS_WITH_VERSION agree with the strings"""
    if env.platform_version < (3, 0):
        t.skip(f"platform version {env.platform_version} < 3.0")
    raw, size = C.raw_info(env.cl.clGetPlatformInfo, env.platform, C.CL_PLATFORM_NUMERIC_VERSION)
    t.eq(size, 4, "CL_PLATFORM_NUMERIC_VERSION size (cl_version)")
    if size == 4:
        problem = numeric_version_problem(C.decode(raw, "uint"), env.platform_info(C.CL_PLATFORM_VERSION))
        t.true(problem is None, f"CL_PLATFORM_NUMERIC_VERSION: {problem}")
    raw, size = C.raw_info(env.cl.clGetPlatformInfo, env.platform, C.CL_PLATFORM_EXTENSIONS_WITH_VERSION)
    t.eq(size % 68, 0, "CL_PLATFORM_EXTENSIONS_WITH_VERSION size (a multiple of sizeof(cl_name_version)=68)")
    names = sorted(n for n, _ in name_versions(raw))
    t.eq(names, sorted(env.platform_info(C.CL_PLATFORM_EXTENSIONS).split()),
         "names of CL_PLATFORM_EXTENSIONS_WITH_VERSION vs CL_PLATFORM_EXTENSIONS")


@check
def device_strings(env, t):
    """CL_DEVICE_VERSION, CL_DEVICE_OPENCL_C_VERSION, PROFILE, NAME, VENDOR, DRIVER_VERSION"""
    ver = env.device_info(C.CL_DEVICE_VERSION)
    problem = version_problem(ver)
    t.true(problem is None, f"CL_DEVICE_VERSION: {problem}")
    cver = env.device_info(C.CL_DEVICE_OPENCL_C_VERSION)
    problem = version_problem(cver, "OpenCL C")
    t.true(problem is None, f"CL_DEVICE_OPENCL_C_VERSION: {problem}")
    dv, pv = parse_version(ver), env.platform_version
    if dv:
        t.true(dv <= pv, f"device version {dv} is above the platform's {pv}")
        cv = parse_version(cver, "OpenCL C")
        if cv:
            t.true(cv <= dv, f"OpenCL C version {cv} is above the device version {dv}")
    prof = env.device_info(C.CL_DEVICE_PROFILE)
    t.true(prof in ("FULL_PROFILE", "EMBEDDED_PROFILE"), f"CL_DEVICE_PROFILE is {prof!r}")
    if env.platform_info(C.CL_PLATFORM_PROFILE) == "EMBEDDED_PROFILE":
        t.eq(prof, "EMBEDDED_PROFILE", "CL_DEVICE_PROFILE of a device of an EMBEDDED_PROFILE platform")
    for param, name in [(C.CL_DEVICE_NAME, "NAME"), (C.CL_DEVICE_VENDOR, "VENDOR"),
                        (C.CL_DRIVER_VERSION, "DRIVER_VERSION")]:
        t.true(env.device_info(param).strip(), f"CL_DEVICE_{name} is empty")
    ext = env.device_info(C.CL_DEVICE_EXTENSIONS)
    problem = extensions_problem(ext)
    t.true(problem is None, f"CL_DEVICE_EXTENSIONS: {problem}")
    if dv and dv >= (1, 2) and prof == "FULL_PROFILE":
        for required in ("cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
                         "cl_khr_local_int32_base_atomics", "cl_khr_local_int32_extended_atomics",
                         "cl_khr_byte_addressable_store"):
            if dv < (3, 0):
                t.true(required in ext.split(), f"OpenCL {dv[0]}.{dv[1]} requires {required}")
    if dv and dv >= (3, 0):
        raw, size = C.raw_info(env.cl.clGetDeviceInfo, env.device, C.CL_DEVICE_NUMERIC_VERSION)
        t.eq(size, 4, "CL_DEVICE_NUMERIC_VERSION size")
        if size == 4:
            problem = numeric_version_problem(C.decode(raw, "uint"), ver)
            t.true(problem is None, f"CL_DEVICE_NUMERIC_VERSION: {problem}")
        raw, size = C.raw_info(env.cl.clGetDeviceInfo, env.device, C.CL_DEVICE_EXTENSIONS_WITH_VERSION)
        t.eq(sorted(n for n, _ in name_versions(raw)), sorted(ext.split()),
             "names of CL_DEVICE_EXTENSIONS_WITH_VERSION vs CL_DEVICE_EXTENSIONS")


# param, kind (a scalar kind has an exact size), name
SCALARS = [
    (C.CL_DEVICE_TYPE, "ulong", "TYPE"), (C.CL_DEVICE_VENDOR_ID, "uint", "VENDOR_ID"),
    (C.CL_DEVICE_MAX_COMPUTE_UNITS, "uint", "MAX_COMPUTE_UNITS"),
    (C.CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, "uint", "MAX_WORK_ITEM_DIMENSIONS"),
    (C.CL_DEVICE_MAX_WORK_GROUP_SIZE, "size", "MAX_WORK_GROUP_SIZE"),
    (C.CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR, "uint", "PREFERRED_VECTOR_WIDTH_CHAR"),
    (C.CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, "uint", "PREFERRED_VECTOR_WIDTH_FLOAT"),
    (C.CL_DEVICE_MAX_CLOCK_FREQUENCY, "uint", "MAX_CLOCK_FREQUENCY"),
    (C.CL_DEVICE_ADDRESS_BITS, "uint", "ADDRESS_BITS"),
    (C.CL_DEVICE_MAX_MEM_ALLOC_SIZE, "ulong", "MAX_MEM_ALLOC_SIZE"),
    (C.CL_DEVICE_IMAGE_SUPPORT, "bool", "IMAGE_SUPPORT"),
    (C.CL_DEVICE_MAX_PARAMETER_SIZE, "size", "MAX_PARAMETER_SIZE"),
    (C.CL_DEVICE_MEM_BASE_ADDR_ALIGN, "uint", "MEM_BASE_ADDR_ALIGN"),
    (C.CL_DEVICE_SINGLE_FP_CONFIG, "ulong", "SINGLE_FP_CONFIG"),
    (C.CL_DEVICE_DOUBLE_FP_CONFIG, "ulong", "DOUBLE_FP_CONFIG"),
    (C.CL_DEVICE_GLOBAL_MEM_CACHE_TYPE, "uint", "GLOBAL_MEM_CACHE_TYPE"),
    (C.CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, "uint", "GLOBAL_MEM_CACHELINE_SIZE"),
    (C.CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, "ulong", "GLOBAL_MEM_CACHE_SIZE"),
    (C.CL_DEVICE_GLOBAL_MEM_SIZE, "ulong", "GLOBAL_MEM_SIZE"),
    (C.CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, "ulong", "MAX_CONSTANT_BUFFER_SIZE"),
    (C.CL_DEVICE_MAX_CONSTANT_ARGS, "uint", "MAX_CONSTANT_ARGS"),
    (C.CL_DEVICE_LOCAL_MEM_TYPE, "uint", "LOCAL_MEM_TYPE"),
    (C.CL_DEVICE_LOCAL_MEM_SIZE, "ulong", "LOCAL_MEM_SIZE"),
    (C.CL_DEVICE_ERROR_CORRECTION_SUPPORT, "bool", "ERROR_CORRECTION_SUPPORT"),
    (C.CL_DEVICE_PROFILING_TIMER_RESOLUTION, "size", "PROFILING_TIMER_RESOLUTION"),
    (C.CL_DEVICE_ENDIAN_LITTLE, "bool", "ENDIAN_LITTLE"),
    (C.CL_DEVICE_AVAILABLE, "bool", "AVAILABLE"),
    (C.CL_DEVICE_COMPILER_AVAILABLE, "bool", "COMPILER_AVAILABLE"),
    (C.CL_DEVICE_LINKER_AVAILABLE, "bool", "LINKER_AVAILABLE"),
    (C.CL_DEVICE_EXECUTION_CAPABILITIES, "ulong", "EXECUTION_CAPABILITIES"),
    (C.CL_DEVICE_QUEUE_PROPERTIES, "ulong", "QUEUE_(ON_HOST_)PROPERTIES"),
    (C.CL_DEVICE_PLATFORM, "ptr", "PLATFORM"),
    (C.CL_DEVICE_PARENT_DEVICE, "ptr", "PARENT_DEVICE"),
    (C.CL_DEVICE_PARTITION_MAX_SUB_DEVICES, "uint", "PARTITION_MAX_SUB_DEVICES"),
    (C.CL_DEVICE_PARTITION_AFFINITY_DOMAIN, "ulong", "PARTITION_AFFINITY_DOMAIN"),
    (C.CL_DEVICE_REFERENCE_COUNT, "uint", "REFERENCE_COUNT"),
    (C.CL_DEVICE_PREFERRED_INTEROP_USER_SYNC, "bool", "PREFERRED_INTEROP_USER_SYNC"),
    (C.CL_DEVICE_PRINTF_BUFFER_SIZE, "size", "PRINTF_BUFFER_SIZE"),
    (C.CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, "size", "IMAGE_MAX_BUFFER_SIZE"),
    (C.CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, "size", "IMAGE_MAX_ARRAY_SIZE"),
]
BOOLS = {name for _, kind, name in SCALARS if kind == "bool"}


def size_problems(answers):
    """answers: [(name, kind, size_ret)] -> messages for sizes that are not the type's."""
    return [f"CL_DEVICE_{name}: size_ret {size}, expected {C.KIND_SIZES[kind]} ({kind})"
            for name, kind, size in answers if size != C.KIND_SIZES[kind]]


@check
def device_info_sizes(env, t):
    """every scalar device query answers with exactly its type's size; booleans are 0 or 1"""
    answers = []
    for param, kind, name in SCALARS:
        raw, size = C.raw_info(env.cl.clGetDeviceInfo, env.device, param, name=f"CL_DEVICE_{name}")
        answers.append((name, kind, size))
        if name in BOOLS and size == 4:
            v = C.decode(raw, "uint")
            t.true(v in (0, 1), f"CL_DEVICE_{name} = {v}, not CL_TRUE or CL_FALSE")
    for m in size_problems(answers):
        t.true(False, m)


@check
def device_identity(env, t):
    """type, platform, availability, parent and reference count of a root device"""
    ty = env.device_info(C.CL_DEVICE_TYPE, "ulong")
    kinds = ty & (C.CL_DEVICE_TYPE_CPU | C.CL_DEVICE_TYPE_GPU | C.CL_DEVICE_TYPE_ACCELERATOR |
                  C.CL_DEVICE_TYPE_CUSTOM)
    t.true(kinds and not kinds & (kinds - 1),
           f"CL_DEVICE_TYPE {ty:#x} is not one of CPU, GPU, ACCELERATOR, CUSTOM (+DEFAULT)")
    t.true(not ty & ~0x1F, f"CL_DEVICE_TYPE {ty:#x} has undefined bits")
    t.eq(env.device_info(C.CL_DEVICE_PLATFORM, "ptr"), env.platform, "CL_DEVICE_PLATFORM")
    t.eq(env.device_info(C.CL_DEVICE_AVAILABLE, "uint"), 1, "CL_DEVICE_AVAILABLE")
    if env.device_info(C.CL_DEVICE_PROFILE) == "FULL_PROFILE":
        t.eq(env.device_info(C.CL_DEVICE_COMPILER_AVAILABLE, "uint"), 1,
             "CL_DEVICE_COMPILER_AVAILABLE (FULL_PROFILE)")
    t.eq(env.device_info(C.CL_DEVICE_PARENT_DEVICE, "ptr") or None, None,
         "CL_DEVICE_PARENT_DEVICE of a root device")
    t.eq(env.device_info(C.CL_DEVICE_REFERENCE_COUNT, "uint"), 1, "CL_DEVICE_REFERENCE_COUNT of a root device")
    bits = env.device_info(C.CL_DEVICE_ADDRESS_BITS, "uint")
    t.true(bits in (32, 64), f"CL_DEVICE_ADDRESS_BITS = {bits}, not 32 or 64")
    caps = env.device_info(C.CL_DEVICE_EXECUTION_CAPABILITIES, "ulong")
    t.true(caps & C.CL_EXEC_KERNEL, f"CL_DEVICE_EXECUTION_CAPABILITIES {caps:#x} lacks CL_EXEC_KERNEL")
    qp = env.device_info(C.CL_DEVICE_QUEUE_PROPERTIES, "ulong")
    t.true(qp & C.CL_QUEUE_PROFILING_ENABLE,
           f"CL_DEVICE_QUEUE_PROPERTIES {qp:#x} lacks CL_QUEUE_PROFILING_ENABLE (required)")
    t.true(env.device_info(C.CL_DEVICE_PROFILING_TIMER_RESOLUTION, "size") > 0,
           "CL_DEVICE_PROFILING_TIMER_RESOLUTION is 0")


def work_item_problems(dims, sizes, wg, full):
    out = []
    if full and dims < 3:
        out.append(f"CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS = {dims}, below the minimum 3")
    if len(sizes) != dims:
        out.append(f"CL_DEVICE_MAX_WORK_ITEM_SIZES has {len(sizes)} entries for {dims} dimensions")
    if any(s < 1 for s in sizes):
        out.append(f"CL_DEVICE_MAX_WORK_ITEM_SIZES {sizes} has an entry below 1")
    if wg < 1:
        out.append(f"CL_DEVICE_MAX_WORK_GROUP_SIZE = {wg}")
    return out


@check
def work_item_limits(env, t):
    """MAX_WORK_ITEM_DIMENSIONS >= 3, MAX_WORK_ITEM_SIZES has that many entries >= 1, compute units"""
    dims = env.device_info(C.CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, "uint")
    raw, size = C.raw_info(env.cl.clGetDeviceInfo, env.device, C.CL_DEVICE_MAX_WORK_ITEM_SIZES)
    sizes = C.decode(raw, "sizes")
    t.eq(size, dims * C.KIND_SIZES["size"], "CL_DEVICE_MAX_WORK_ITEM_SIZES size (dims * sizeof(size_t))")
    wg = env.device_info(C.CL_DEVICE_MAX_WORK_GROUP_SIZE, "size")
    full = env.device_info(C.CL_DEVICE_PROFILE) == "FULL_PROFILE"
    for m in work_item_problems(dims, sizes, wg, full):
        t.true(False, m)
    at_least(t, "CL_DEVICE_MAX_COMPUTE_UNITS", env.device_info(C.CL_DEVICE_MAX_COMPUTE_UNITS, "uint"), 1)
    at_least(t, "CL_DEVICE_MAX_CLOCK_FREQUENCY", env.device_info(C.CL_DEVICE_MAX_CLOCK_FREQUENCY, "uint"), 0)
    subs = env.device_info(C.CL_DEVICE_PARTITION_MAX_SUB_DEVICES, "uint")
    cus = env.device_info(C.CL_DEVICE_MAX_COMPUTE_UNITS, "uint")
    t.true(subs <= cus, f"CL_DEVICE_PARTITION_MAX_SUB_DEVICES {subs} > CL_DEVICE_MAX_COMPUTE_UNITS {cus}")


@check
def memory_minimums(env, t):
    """global, allocation, constant, local, parameter and alignment minimums of the profile"""
    full = env.device_info(C.CL_DEVICE_PROFILE) == "FULL_PROFILE"
    glob = env.device_info(C.CL_DEVICE_GLOBAL_MEM_SIZE, "ulong")
    alloc = env.device_info(C.CL_DEVICE_MAX_MEM_ALLOC_SIZE, "ulong")
    ty = env.device_info(C.CL_DEVICE_TYPE, "ulong")
    t.true(glob > 0, "CL_DEVICE_GLOBAL_MEM_SIZE is 0")
    need = mem_alloc_minimum(env.version, glob, ty)
    at_least(t, f"CL_DEVICE_MAX_MEM_ALLOC_SIZE (global {glob}, OpenCL {env.version[0]}.{env.version[1]})",
             alloc, need)
    t.true(alloc <= glob, f"CL_DEVICE_MAX_MEM_ALLOC_SIZE {alloc} > CL_DEVICE_GLOBAL_MEM_SIZE {glob}")
    custom = ty & C.CL_DEVICE_TYPE_CUSTOM
    if not custom:
        at_least(t, "CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE",
                 env.device_info(C.CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, "ulong"), 64 * KB if full else KB)
        at_least(t, "CL_DEVICE_MAX_CONSTANT_ARGS", env.device_info(C.CL_DEVICE_MAX_CONSTANT_ARGS, "uint"),
                 8 if full else 4)
        at_least(t, "CL_DEVICE_LOCAL_MEM_SIZE", env.device_info(C.CL_DEVICE_LOCAL_MEM_SIZE, "ulong"),
                 32 * KB if full else KB)
        at_least(t, "CL_DEVICE_MAX_PARAMETER_SIZE", env.device_info(C.CL_DEVICE_MAX_PARAMETER_SIZE, "size"),
                 1024 if full else 256)
    lt = env.device_info(C.CL_DEVICE_LOCAL_MEM_TYPE, "uint")
    t.true(lt in (C.CL_LOCAL, C.CL_GLOBAL) or (custom and lt == C.CL_NONE),
           f"CL_DEVICE_LOCAL_MEM_TYPE = {lt}, not CL_LOCAL or CL_GLOBAL")
    ct = env.device_info(C.CL_DEVICE_GLOBAL_MEM_CACHE_TYPE, "uint")
    t.true(ct in (C.CL_NONE, C.CL_READ_ONLY_CACHE, C.CL_READ_WRITE_CACHE),
           f"CL_DEVICE_GLOBAL_MEM_CACHE_TYPE = {ct}")
    align = env.device_info(C.CL_DEVICE_MEM_BASE_ADDR_ALIGN, "uint")
    at_least(t, "CL_DEVICE_MEM_BASE_ADDR_ALIGN (bits; sizeof(long16) in FULL_PROFILE)", align,
             1024 if full else 512)
    t.true(align & (align - 1) == 0, f"CL_DEVICE_MEM_BASE_ADDR_ALIGN {align} is not a power of two")
    if env.version >= (1, 2) and full:
        at_least(t, "CL_DEVICE_PRINTF_BUFFER_SIZE", env.device_info(C.CL_DEVICE_PRINTF_BUFFER_SIZE, "size"),
                 MB)


def fp_config_problems(single, double, has_fp64, full):
    out = []
    if single & ~0xFF:
        out.append(f"CL_DEVICE_SINGLE_FP_CONFIG {single:#x} has undefined bits")
    if full and (single & (C.CL_FP_ROUND_TO_NEAREST | C.CL_FP_INF_NAN)) != \
            (C.CL_FP_ROUND_TO_NEAREST | C.CL_FP_INF_NAN):
        out.append(f"CL_DEVICE_SINGLE_FP_CONFIG {single:#x} lacks CL_FP_ROUND_TO_NEAREST|CL_FP_INF_NAN")
    need = (C.CL_FP_FMA | C.CL_FP_ROUND_TO_NEAREST | C.CL_FP_ROUND_TO_ZERO | C.CL_FP_ROUND_TO_INF |
            C.CL_FP_INF_NAN | C.CL_FP_DENORM)
    if has_fp64 and double & need != need:
        out.append(f"CL_DEVICE_DOUBLE_FP_CONFIG {double:#x} lacks required bits "
                   f"{need & ~double:#x} of a device with cl_khr_fp64")
    if not has_fp64 and double:
        out.append(f"CL_DEVICE_DOUBLE_FP_CONFIG {double:#x} without cl_khr_fp64 (should be 0)")
    return out


@check
def fp_config(env, t):
    """single and double precision capabilities agree with the profile and cl_khr_fp64"""
    single = env.device_info(C.CL_DEVICE_SINGLE_FP_CONFIG, "ulong")
    double = env.device_info(C.CL_DEVICE_DOUBLE_FP_CONFIG, "ulong")
    full = env.device_info(C.CL_DEVICE_PROFILE) == "FULL_PROFILE"
    for m in fp_config_problems(single, double, "cl_khr_fp64" in env.extensions, full):
        t.true(False, m)
    pref = env.device_info(C.CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, "uint")
    native = env.device_info(C.CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, "uint")
    if "cl_khr_fp64" not in env.extensions:
        t.eq(pref, 0, "CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE without cl_khr_fp64")
        t.eq(native, 0, "CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE without cl_khr_fp64")
    for off, name in enumerate(["CHAR", "SHORT", "INT", "LONG", "FLOAT"]):
        v = env.device_info(C.CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR + off, "uint")
        t.true(v in (1, 2, 4, 8, 16), f"CL_DEVICE_PREFERRED_VECTOR_WIDTH_{name} = {v}")
        v = env.device_info(C.CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR + off, "uint")
        t.true(v in (1, 2, 4, 8, 16), f"CL_DEVICE_NATIVE_VECTOR_WIDTH_{name} = {v}")


IMAGE_MINIMUMS_12 = [(C.CL_DEVICE_MAX_READ_IMAGE_ARGS, "uint", "MAX_READ_IMAGE_ARGS", 128),
                     (C.CL_DEVICE_MAX_WRITE_IMAGE_ARGS, "uint", "MAX_WRITE_IMAGE_ARGS", 8),
                     (C.CL_DEVICE_IMAGE2D_MAX_WIDTH, "size", "IMAGE2D_MAX_WIDTH", 8192),
                     (C.CL_DEVICE_IMAGE2D_MAX_HEIGHT, "size", "IMAGE2D_MAX_HEIGHT", 8192),
                     (C.CL_DEVICE_IMAGE3D_MAX_WIDTH, "size", "IMAGE3D_MAX_WIDTH", 2048),
                     (C.CL_DEVICE_IMAGE3D_MAX_HEIGHT, "size", "IMAGE3D_MAX_HEIGHT", 2048),
                     (C.CL_DEVICE_IMAGE3D_MAX_DEPTH, "size", "IMAGE3D_MAX_DEPTH", 2048),
                     (C.CL_DEVICE_MAX_SAMPLERS, "uint", "MAX_SAMPLERS", 16),
                     (C.CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, "size", "IMAGE_MAX_BUFFER_SIZE", 65536),
                     (C.CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, "size", "IMAGE_MAX_ARRAY_SIZE", 2048)]


@check
def image_limits(env, t):
    """image minimums of the FULL_PROFILE when CL_DEVICE_IMAGE_SUPPORT is true"""
    if not env.device_info(C.CL_DEVICE_IMAGE_SUPPORT, "uint"):
        t.skip("CL_DEVICE_IMAGE_SUPPORT is CL_FALSE")
    if env.device_info(C.CL_DEVICE_PROFILE) != "FULL_PROFILE":
        t.skip("EMBEDDED_PROFILE image minimums are not checked")
    for param, kind, name, minimum in IMAGE_MINIMUMS_12:
        at_least(t, f"CL_DEVICE_{name}", env.device_info(param, kind), minimum)


@check
def device_count_and_default(env, t):
    """clGetDeviceIDs counts agree with the lists; the device is in CL_DEVICE_TYPE_ALL"""
    import ctypes
    cl = env.cl
    n = C.cl_uint(0)
    t.ok(cl.clGetDeviceIDs(env.platform, C.CL_DEVICE_TYPE_ALL, 0, None, ctypes.byref(n)), "clGetDeviceIDs")
    devs = (ctypes.c_void_p * (n.value + 2))()
    m = C.cl_uint(0)
    t.ok(cl.clGetDeviceIDs(env.platform, C.CL_DEVICE_TYPE_ALL, n.value + 2, devs, ctypes.byref(m)),
         "clGetDeviceIDs(num_entries larger than needed)")
    t.eq(m.value, n.value, "num_devices when num_entries exceeds it")
    t.true(env.device in list(devs)[:n.value], "the device under test is not in CL_DEVICE_TYPE_ALL")
    t.true(not any(list(devs)[n.value:]), "clGetDeviceIDs wrote past num_devices entries")
