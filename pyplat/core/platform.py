"""The one PyPlat platform and its devices.

``get_platform()`` creates it on first use (thread-safe) and returns the same object afterwards.
The number of CPU devices comes from ``PYPLAT_DEVICES`` (default 1); they all share the host's
memory, so a buffer moves between them for free.
"""
import threading
import time

import pyplat
from pyplat import config
from pyplat.core.device import Device
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

    def __init__(self, n_devices=None):
        super().__init__()
        if n_devices is None:
            n_devices = config.value("PYPLAT_DEVICES")
        self.devices = [Device(self, i) for i in range(n_devices)]

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
