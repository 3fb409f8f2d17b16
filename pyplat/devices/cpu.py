"""The CPU device class (`cpu`): kernels run on the host's cores through the runtime's thread
pool (or the basic driver, PYPLAT_DRIVER=basic), and buffers are host memory (the host space:
no copies, maps cost nothing)."""
from pyplat import cl, config
from pyplat.devices import host_machine as machine
from pyplat.devices.spaces import HOST
from pyplat.runtime.driver import default_driver

KiB, MiB = machine.KiB, machine.MiB


class CPU:
    """The `cpu` device class: one device each time it is listed in PYPLAT_DEVICES."""

    name = "cpu"

    def count(self):
        """Devices of this class the machine has (listed once: one)."""
        return 1

    def driver(self):
        """The runtime driver its queues use: the process's pool (or the basic driver)."""
        return default_driver()

    def memory_space(self, index):
        return HOST

    def compiler_target(self, index):
        """Native code for this machine: the compiler's host target (imported when first asked:
        the compiler is not loaded to make the platform)."""
        from pyplat.compiler.targets.host import HOST as HOST_TARGET
        return HOST_TARGET

    def describe(self, index):
        """The device's info (clGetDeviceInfo) and the limits the other layers check: plain
        attributes, set on the core Device."""
        (vendor, vendor_id), model, mhz = machine.cpu_info()
        llvm_cpu_name, llvm_cpu_features, cpu_features = machine.host_cpu()
        widths = machine.vector_widths(cpu_features)
        global_mem = machine.memory_size()
        # At least the spec's minimum (max(1/4 of global, 128 MiB)), never more than exists.
        max_alloc = max(global_mem // 4, min(global_mem, 128 * MiB))
        cache = machine.caches()
        last_level = cache[max(cache)] if cache else (0, 64)
        # Local memory is a host buffer per work-group: size it like the L2 cache (it stays hot).
        l2 = cache.get(2, (256 * KiB, 64))[0] or 256 * KiB
        return dict(
            vendor_id=vendor_id, vendor=vendor, cpu_model=model or "unknown CPU",
            max_clock_frequency=mhz or 1000, llvm_cpu_name=llvm_cpu_name,
            llvm_cpu_features=llvm_cpu_features, cpu_features=cpu_features,
            name=f"PyPlat CPU ({model or 'unknown CPU'})",
            compute_units=config.value("PYPLAT_WORKERS"),          # one per worker thread
            preferred_vector_widths=dict(widths), native_vector_widths=dict(widths),
            preferred_work_group_size_multiple=widths["float"],
            global_mem_size=global_mem, max_mem_alloc_size=max_alloc,
            global_mem_cacheline_size=last_level[1] or 64, global_mem_cache_size=last_level[0],
            global_mem_cache_type=cl.CL_READ_WRITE_CACHE,
            local_mem_size=max(64 * KiB, min(1 * MiB, l2)), local_mem_type=cl.CL_GLOBAL,
            max_constant_buffer_size=min(max_alloc, 1 * MiB))
