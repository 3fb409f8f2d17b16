"""Devices: the OpenCL device objects. What a device is and offers comes from its device class
(pyplat/devices: its info, its runtime driver, its memory space, its compiler target); what is
the same for every device PyPlat has so far is set here."""
import functools
import time

from pyplat import cl
from pyplat.core.object import RefCounted

FP_CONFIG = (cl.CL_FP_DENORM | cl.CL_FP_INF_NAN | cl.CL_FP_ROUND_TO_NEAREST | cl.CL_FP_ROUND_TO_ZERO
             | cl.CL_FP_ROUND_TO_INF | cl.CL_FP_FMA)
SINGLE_FP_CONFIG = FP_CONFIG | cl.CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT
DOUBLE_FP_CONFIG = FP_CONFIG


class Device(RefCounted):
    """A device of the platform. Root devices live as long as the platform: retain/release do
    nothing."""

    device_type = cl.CL_DEVICE_TYPE_CPU
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
    printf_buffer_size = 1 << 20           # 1 MiB
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

    def __init__(self, platform, index, device_class, class_index=0):
        super().__init__()
        self.platform = platform
        self.index = index
        self.driver_version = platform.driver_version
        self.version = f"OpenCL 3.0 PyPlat {platform.driver_version}"
        self.numeric_version = (3, 0, 0)
        self.device_class, self.class_index = device_class, class_index
        self.__dict__.update(device_class.describe(class_index))
        self.memory_space = device_class.memory_space(class_index)
        self._driver = None

    @functools.cached_property
    def compiler_target(self):
        """What pyplat.compiler builds this device's programs for (compiler/targets/: the host's
        for a CPU). Asked when a program is built, not at start-up: it imports the compiler."""
        return self.device_class.compiler_target(self.class_index)

    @property
    def started_driver(self):
        """The driver if a queue of this device started it already, else None."""
        return self._driver

    @property
    def driver(self):
        """The runtime driver of this device's queues (made on first use: a pool's threads start
        with the first queue)."""
        if self._driver is None:
            self._driver = self.device_class.driver()
        return self._driver

    @property
    def unavailable(self):
        """Why the device cannot be used any more (a GPU after a kernel fault), else None."""
        ask = getattr(self.device_class, "unavailable", None)
        return ask(self.class_index) if ask is not None else None

    @property
    def shares_host_memory(self):
        return self.memory_space.shares_host

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
