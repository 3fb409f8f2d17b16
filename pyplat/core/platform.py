"""The one PyPlat platform and its devices.

``get_platform()`` creates it on first use (thread-safe) and returns the same object afterwards.
Its devices come from ``PYPLAT_DEVICES``: a list of device classes (pyplat/devices/registry.py),
default the CPU and any NVIDIA GPUs the driver finds; a bare number n means n CPU devices.
"""
import threading
import time

import pyplat
from pyplat import config
from pyplat.core.device import Device
from pyplat.devices.registry import devices_for
from pyplat.core.object import RefCounted


def _version(major, minor, patch=0):
    return (major << 22) | (minor << 12) | patch


class Platform(RefCounted):
    name = "PyPlat"
    vendor = "PyPlat project"
    profile = "FULL_PROFILE"
    driver_version = pyplat.__version__
    version = f"OpenCL 3.0 PyPlat {pyplat.__version__}"
    numeric_version = (3, 0, 0)
    icd_suffix = "PYPL"
    # Extensions with their versions (major, minor, patch).
    extensions_with_version = (
        ("cl_khr_icd", (1, 0, 0)),
        ("cl_khr_fp64", (1, 0, 0)),
        ("cl_khr_byte_addressable_store", (1, 0, 0)),
        ("cl_khr_global_int32_base_atomics", (1, 0, 0)),
        ("cl_khr_global_int32_extended_atomics", (1, 0, 0)),
        ("cl_khr_local_int32_base_atomics", (1, 0, 0)),
        ("cl_khr_local_int32_extended_atomics", (1, 0, 0)),
        ("cl_khr_int64_base_atomics", (1, 0, 0)),
        ("cl_khr_int64_extended_atomics", (1, 0, 0)),
    )

    def __init__(self, device_classes=None):
        """device_classes: a list of device class names (default: PYPLAT_DEVICES)."""
        super().__init__()
        if device_classes is None:
            device_classes = config.value("PYPLAT_DEVICES")
        self.devices = [Device(self, i, cls, index)
                        for i, (cls, index) in enumerate(devices_for(device_classes))]

    @property
    def extensions(self):
        return " ".join(name for name, _ in self.extensions_with_version)

    @property
    def host_timer_resolution(self):
        """ns; the host timer is CLOCK_MONOTONIC."""
        try:
            return max(1, int(time.clock_getres(time.CLOCK_MONOTONIC) * 1e9))
        except (AttributeError, OSError):
            return 1

    @staticmethod
    def host_timer_ns():
        return time.monotonic_ns()

    def devices_of_type(self, device_type):
        return [d for d in self.devices if d.is_type(device_type)]

    # The platform lives as long as the process.
    def retain(self):
        return self

    def release(self):
        return False

    def __repr__(self):
        return f"<Platform {self.name}, {len(self.devices)} device(s)>"


_platform = None
_lock = threading.Lock()


def get_platform():
    """The platform singleton, created on first use."""
    global _platform
    if _platform is None:
        with _lock:
            if _platform is None:
                _platform = Platform()
    return _platform
