"""What the host machine offers, read from the system: the CPU (vendor, model, clock, LLVM's name and
features for it), its memory (capped by a cgroup limit) and its caches. The CPU device classes
(cpu.py, cpu_separate.py) describe their devices from these figures, so sizes match what the
runtime can really do."""
import os

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

# CL_DEVICE_VENDOR of a CPU is its CPUID vendor string, as PoCL reports it ("GenuineIntel"); the
# vendor ID is that vendor's PCI ID: "If the vendor has a PCI vendor ID, the low 16 bits must
# contain that PCI vendor ID" (OpenCL 3.0, CL_DEVICE_VENDOR_ID).
PCI_VENDOR_IDS = {"GenuineIntel": 0x8086, "AuthenticAMD": 0x1022, "HygonGenuine": 0x1d94,
                  "CentaurHauls": 0x1106, "Shanghai": 0x1d17}
# Arm Linux has no vendor_id line: "CPU implementer" (MIDR) names the designer, taken as the vendor.
ARM_IMPLEMENTERS = {0x41: ("ARM", 0x13b5), 0x4e: ("NVIDIA", 0x10de), 0x51: ("Qualcomm", 0x17cb),
                    0x61: ("Apple", 0x106b), 0xc0: ("Ampere", 0x1def)}


def cpu_vendor(vendor_id="", implementer=""):
    """(CL_DEVICE_VENDOR, CL_DEVICE_VENDOR_ID) from /proc/cpuinfo's vendor_id (x86) or CPU
    implementer (Arm); an unknown vendor keeps its name with ID 0 (no PCI ID known)."""
    if vendor_id:
        return vendor_id, PCI_VENDOR_IDS.get(vendor_id, 0)
    try:
        code = int(implementer, 0)
    except ValueError:
        code = None
    if code in ARM_IMPLEMENTERS:
        return ARM_IMPLEMENTERS[code]
    if code is not None:
        return f"CPU implementer {code:#x}", 0
    return "Unknown", 0


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


def cpu_info(text=None):
    """((vendor, vendor ID), model name, max MHz) from /proc/cpuinfo (or `text`) and cpufreq."""
    vendor, implementer, model, mhz = "", "", "", 0.0
    text = _read("/proc/cpuinfo", "") if text is None else text
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "vendor_id" and not vendor:
            vendor = value
        elif key == "CPU implementer" and not implementer:
            implementer = value
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
    return cpu_vendor(vendor, implementer), model, int(round(mhz))


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
