"""The `cuda` device class: NVIDIA GPUs through the CUDA driver API (ctypes on libcuda.so.1).

Found at run time: no library, no driver or no GPU means no device, and no error. Programs are
built for the GPU's architecture by the compiler's NVPTX target (docs/compiler.md, "NVPTX
target", whose launch ABI launch.py follows); buffers live in device memory (memory.py) and
reach it through the core's transfers. Kernel launches go through the runtime's stream driver
(runtime/sched/stream_driver.pxi) on a stream of the GPU's own: put on it once ready, completed
from its events, no Python on the way. Transfers, and launches that need Python when they run
(printing kernels: their records come back after each, launch.py, printf_output.py), run as
actions on the runtime's pool threads, each on its thread's CUDA stream (streams.py), waiting
for the GPU: their completion is the GPU's.
"""
import ctypes
import threading

from pyplat import cl
from pyplat.devices.cuda import driver_api as cu
from pyplat.devices.cuda import faults, launch
from pyplat.devices.cuda.memory import CudaSpace
from pyplat.runtime.driver import default_driver
from pyplat.runtime.graph import STREAM_FUNCTIONS, Command, stream_driver

KiB = 1 << 10


class PrimaryContext:
    """A device's primary context, made current on whichever thread works for it. `broken`:
    why it cannot be used any more (a kernel fault, faults.py), else None; `on_break`
    listeners (its memory space) are told once."""

    def __init__(self, ordinal):
        lib = cu.api()
        self.name = f"GPU {ordinal}"
        self.device = ctypes.c_int()
        cu.check(lib.cuDeviceGet(ctypes.byref(self.device), ordinal), "cuDeviceGet")
        self.handle = ctypes.c_void_p()
        cu.check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.handle), self.device), "cuDevicePrimaryCtxRetain")
        self.broken = None
        self.on_break = []
        self._breaking = threading.Lock()

    def make_current(self):
        cu.check(cu.api().cuCtxSetCurrent(self.handle), "cuCtxSetCurrent")

    def mark_broken(self, reason):
        """Record that the context is unusable (once). Returns whether this call marked it."""
        with self._breaking:
            if self.broken is not None:
                return False
            self.broken = reason
        for listener in list(self.on_break):
            listener(reason)
        return True


class CUDA:
    name = "cuda"

    def __init__(self):
        self._contexts, self._spaces, self._targets, self._stream_drivers = {}, {}, {}, {}

    def count(self):
        lib = cu.api()
        if lib is None:
            return 0
        n = ctypes.c_int()
        return n.value if lib.cuDeviceGetCount(ctypes.byref(n)) == cu.CUDA_SUCCESS else 0

    def context(self, index):
        if index not in self._contexts:
            self._contexts[index] = PrimaryContext(index)
        return self._contexts[index]

    def driver(self):
        return default_driver()

    def memory_space(self, index):
        if index not in self._spaces:
            self._spaces[index] = CudaSpace(index, self.context(index))
        return self._spaces[index]

    def launch_command(self, index, result, kernel_info, args, work_dim, global_size, local_size, offset):
        """One launch on device `index` as a runtime Command: on the GPU's stream driver where
        nothing of it needs Python when it runs (launch.py, launch_command), else an action on
        the pool that launches and waits (launch_action: printing kernels, a broken context, a
        process where CUDA fails at enqueue)."""
        context = self.context(index)
        try:
            command = launch.launch_command(self.stream_driver(index), context, result, kernel_info, args,
                                            work_dim, global_size, local_size, offset)
        except cu.CudaError:
            command = None                 # (launch_action fails the command, saying why)
        if command is None:
            command = Command(0, self.driver(), kernel_info.name)
            command.set_action(launch.launch_action(context, result, kernel_info, args, work_dim,
                                                    global_size, local_size, offset))
        return command

    def stream_driver(self, index):
        """The runtime's stream driver on a stream of the GPU's primary context, given libcuda's
        functions (made once per GPU)."""
        if index not in self._stream_drivers:
            lib = cu.api()
            context = self.context(index)
            context.make_current()
            stream = ctypes.c_void_p()
            cu.check(lib.cuStreamCreate(ctypes.byref(stream), cu.STREAM_NON_BLOCKING), "cuStreamCreate")
            functions = [ctypes.cast(getattr(lib, name), ctypes.c_void_p).value for name in STREAM_FUNCTIONS]
            self._stream_drivers[index] = stream_driver(functions, context.handle.value, stream.value,
                                                        faults.hook(context))
        return self._stream_drivers[index]

    def compiler_target(self, index):
        """The NVPTX target of the GPU's architecture (made once: describe() makes it first, so
        an architecture LLVM does not know is found when the platform is made)."""
        if index not in self._targets:
            from pyplat.compiler.targets.nvptx import nvptx_target
            self._targets[index] = nvptx_target(self.arch(index))
        return self._targets[index]

    def arch(self, index):
        """The GPU's architecture, `sm_XX` from its compute capability."""
        major, minor = (self.attribute(index, "compute_capability_" + part) for part in ("major", "minor"))
        return f"sm_{major}{minor}"

    def unavailable(self, index):
        context = self._contexts.get(index)
        return None if context is None else context.broken

    def attribute(self, index, name):
        value = ctypes.c_int()
        cu.check(cu.api().cuDeviceGetAttribute(ctypes.byref(value), cu.ATTRIBUTES[name],
                                                self.context(index).device), name)
        return value.value

    def describe(self, index):
        from pyplat.compiler.targets.nvptx.abi import PRINTF_BUFFER_BYTES, PRINTF_HEADER_BYTES
        lib = cu.api()
        ctx = self.context(index)
        raw = ctypes.create_string_buffer(256)
        cu.check(lib.cuDeviceGetName(raw, 256, ctx.device), "cuDeviceGetName")
        total = ctypes.c_size_t()
        cu.check(lib.cuDeviceTotalMem_v2(ctypes.byref(total), ctx.device), "cuDeviceTotalMem")
        a = lambda name: self.attribute(index, name)     # noqa: E731
        target = self.compiler_target(index)
        max_alloc = max(total.value // 4, 128 << 20)
        return dict(
            device_type=cl.CL_DEVICE_TYPE_GPU, vendor_id=0x10DE, vendor="NVIDIA Corporation",
            name=f"PyPlat CUDA ({raw.value.decode()})", cuda_arch=target.arch,
            max_clock_frequency=a("clock_rate_khz") // 1000,
            compute_units=a("multiprocessor_count"),
            max_work_group_size=a("max_threads_per_block"),
            max_work_item_sizes=(a("max_block_dim_x"), a("max_block_dim_y"), a("max_block_dim_z")),
            preferred_vector_widths=dict.fromkeys(("char", "short", "int", "long", "float", "double"), 1)
            | {"half": 0},
            native_vector_widths=dict.fromkeys(("char", "short", "int", "long", "float", "double"), 1)
            | {"half": 0},
            preferred_work_group_size_multiple=a("warp_size"),
            global_mem_size=total.value, max_mem_alloc_size=max_alloc,
            global_mem_cacheline_size=128, global_mem_cache_size=a("l2_cache_size"),
            global_mem_cache_type=cl.CL_READ_WRITE_CACHE,
            local_mem_size=48 * KiB, local_mem_type=cl.CL_LOCAL,
            max_constant_buffer_size=a("total_constant_memory"),
            execution_capabilities=cl.CL_EXEC_KERNEL,
            # each module's printf buffer (compiler/targets/nvptx/abi.py), less its cursor
            printf_buffer_size=PRINTF_BUFFER_BYTES - PRINTF_HEADER_BYTES)
