"""The CPU device: what the machine offers, read once when the platform is created.

Everything the API layer reports through clGetDeviceInfo and everything the other layers need
(work-group limits, memory sizes, the LLVM CPU to compile for) lives here as plain attributes.
Sizes come from the machine (/proc/meminfo, cgroup limits, /sys cache descriptions, LLVM's view of
the CPU features), so they match what the runtime can really do.
"""
import os
import time

from pyplat import cl, config
from pyplat.core.object import RefCounted

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

PCI_VENDOR_IDS = {"GenuineIntel": (0x8086, "Intel"), "AuthenticAMD": (0x1022, "AMD")}


def _read(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def _parse_size(text):
    """'48K' / '1024K' / '32M' / '1234' -> bytes."""
    if not text:
        return 0
    text = text.strip()
    scale = {"K": KiB, "M": MiB, "G": GiB}.get(text[-1].upper(), 1)
    digits = text[:-1] if scale != 1 else text
    try:
        return int(digits) * scale
    except ValueError:
        return 0


def cpu_info():
    """(vendor_id, model name, max MHz) from /proc/cpuinfo and cpufreq."""
    vendor, model, mhz = "", "", 0.0
    text = _read("/proc/cpuinfo", "")
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "vendor_id" and not vendor:
            vendor = value
        elif key == "model name" and not model:
            model = value
        elif key == "cpu MHz":
            try:
                mhz = max(mhz, float(value))
            except ValueError:
                pass
    khz = _read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    if khz and khz.isdigit():
        mhz = max(mhz, int(khz) / 1000)
    return vendor, model, int(round(mhz))


def memory_size():
    """Physical memory usable by this process: MemTotal, capped by a cgroup limit if any."""
    total = 0
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        pass
    for line in _read("/proc/meminfo", "").splitlines():
        if line.startswith("MemTotal:"):
            total = int(line.split()[1]) * KiB
            break
    if not total:
        total = 4 * GiB
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        limit = _read(path)
        if limit and limit.isdigit() and 0 < int(limit) < total:
            total = int(limit)
    return total


def caches():
    """{level: (size, line size)} of the data/unified caches of cpu0."""
    out = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return out
    for entry in entries:
        if not entry.startswith("index"):
            continue
        kind = _read(f"{base}/{entry}/type", "")
        if kind not in ("Data", "Unified"):
            continue
        level = int(_read(f"{base}/{entry}/level", "0") or 0)
        size = _parse_size(_read(f"{base}/{entry}/size"))
        line = int(_read(f"{base}/{entry}/coherency_line_size", "64") or 64)
        out[level] = (size, line)
    return out


def host_cpu():
    """(LLVM CPU name, LLVM feature string, set of enabled features)."""
    try:
        import llvmlite.binding as llvm
        name = llvm.get_host_cpu_name()
        try:
            features = llvm.get_host_cpu_features()
            flat = features.flatten()
            enabled = {k for k, v in features.items() if v}
        except RuntimeError:        # LLVM cannot tell on this host
            flat, enabled = "", set()
        return name, flat, enabled
    except ImportError:
        return "generic", "", set()


def vector_widths(features):
    """Preferred (= native) vector widths per type from the widest SIMD registers."""
    if "avx512f" in features:
        float_bytes = 64
        int_bytes = 64 if "avx512bw" in features else 32
    elif "avx" in features:
        float_bytes = 32
        int_bytes = 32 if "avx2" in features else 16
    elif "sse2" in features or "neon" in features or not features:
        float_bytes = int_bytes = 16
    else:
        float_bytes = int_bytes = 16

    def lanes(register, elem):
        return max(1, min(16, register // elem))
    return {"char": lanes(int_bytes, 1), "short": lanes(int_bytes, 2), "int": lanes(int_bytes, 4),
            "long": lanes(int_bytes, 8), "float": lanes(float_bytes, 4),
            "double": lanes(float_bytes, 8), "half": 0}


FP_CONFIG = (cl.CL_FP_DENORM | cl.CL_FP_INF_NAN | cl.CL_FP_ROUND_TO_NEAREST | cl.CL_FP_ROUND_TO_ZERO
             | cl.CL_FP_ROUND_TO_INF | cl.CL_FP_FMA)
SINGLE_FP_CONFIG = FP_CONFIG | cl.CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT
DOUBLE_FP_CONFIG = FP_CONFIG


class Device(RefCounted):
    """A CPU device. Root devices live as long as the platform: retain/release do nothing."""

    device_type = cl.CL_DEVICE_TYPE_CPU
    # The address space of its memory: all CPU devices share the host's (design §3).
    address_space = "host"
    address_bits = 64
    endian_little = True
    image_support = False
    max_work_group_size = 4096
    max_work_item_sizes = (4096, 4096, 4096)
    max_work_item_dimensions = 3
    mem_base_addr_align = 1024              # bits: 128 bytes, the size of a long16
    min_data_type_align_size = 128          # bytes
    max_parameter_size = 1024
    max_constant_args = 8
    printf_buffer_size = 1 * MiB
    profiling_timer_resolution = 1          # ns: timestamps are CLOCK_MONOTONIC in ns
    queue_properties = (cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | cl.CL_QUEUE_PROFILING_ENABLE)
    single_fp_config = SINGLE_FP_CONFIG
    double_fp_config = DOUBLE_FP_CONFIG
    execution_capabilities = cl.CL_EXEC_KERNEL
    compiler_available = True
    linker_available = True
    opencl_c_version = "OpenCL C 1.2 PyPlat"
    opencl_c_all_versions = ((1, 0), (1, 1), (1, 2), (3, 0))
    opencl_c_features = ("__opencl_c_fp64", "__opencl_c_int64")
    atomic_memory_capabilities = cl.CL_DEVICE_ATOMIC_ORDER_RELAXED | cl.CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
    atomic_fence_capabilities = (cl.CL_DEVICE_ATOMIC_ORDER_RELAXED | cl.CL_DEVICE_ATOMIC_ORDER_ACQ_REL
                                 | cl.CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP)
    extensions = ("cl_khr_fp64", "cl_khr_byte_addressable_store",
                  "cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
                  "cl_khr_local_int32_base_atomics", "cl_khr_local_int32_extended_atomics",
                  "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics")
    built_in_kernels = ()
    partition_max_sub_devices = 0
    partition_properties = ()
    partition_type = ()
    latest_conformance_version_passed = "v0000-01-01-00"   # none passed (yet)

    def __init__(self, platform, index):
        super().__init__()
        self.platform = platform
        self.index = index
        self.driver_version = platform.driver_version
        self.version = f"OpenCL 3.0 PyPlat {platform.driver_version}"
        self.numeric_version = (3, 0, 0)

        vendor_id, model, mhz = cpu_info()
        self.vendor_id, self.vendor = PCI_VENDOR_IDS.get(vendor_id, (0, vendor_id or "Unknown"))
        self.cpu_model = model or "unknown CPU"
        self.max_clock_frequency = mhz or 1000
        self.llvm_cpu_name, self.llvm_cpu_features, self.cpu_features = host_cpu()
        self.name = f"PyPlat CPU ({self.cpu_model})"

        self.compute_units = config.value("PYPLAT_WORKERS")     # one per worker thread

        widths = vector_widths(self.cpu_features)
        self.preferred_vector_widths = dict(widths)
        self.native_vector_widths = dict(widths)
        self.preferred_work_group_size_multiple = widths["float"]

        self.global_mem_size = memory_size()
        # At least the spec's minimum (max(1/4 of global, 128 MiB)), never more than exists.
        self.max_mem_alloc_size = max(self.global_mem_size // 4, min(self.global_mem_size, 128 * MiB))
        cache = caches()
        last_level = cache[max(cache)] if cache else (0, 64)
        self.global_mem_cacheline_size = last_level[1] or 64
        self.global_mem_cache_size = last_level[0]
        self.global_mem_cache_type = cl.CL_READ_WRITE_CACHE
        # Local memory is a host buffer per work-group: size it like the L2 cache (it stays hot).
        l2 = cache.get(2, (256 * KiB, 64))[0] or 256 * KiB
        self.local_mem_size = max(64 * KiB, min(1 * MiB, l2))
        self.local_mem_type = cl.CL_GLOBAL
        self.max_constant_buffer_size = min(self.max_mem_alloc_size, 1 * MiB)

    # Root devices are not reference counted (spec: retain/release on a root device is a no-op).
    @property
    def reference_count(self):
        return 1

    def retain(self):
        return self

    def release(self):
        return False

    def is_type(self, device_type):
        """Whether this device matches a clGetDeviceIDs device_type mask."""
        if device_type == cl.CL_DEVICE_TYPE_ALL:
            return True
        if device_type & cl.CL_DEVICE_TYPE_DEFAULT and self is self.platform.devices[0]:
            return True
        return bool(device_type & self.device_type)

    @staticmethod
    def now_ns():
        """The device timer (ns): the clock of profiling timestamps and clGetDeviceAndHostTimer."""
        return time.monotonic_ns()

    def __repr__(self):
        return f"<Device {self.index}: {self.name}>"
