"""Kernel launches on a CUDA device, following the NVPTX target's launch ABI (docs/compiler.md,
"NVPTX target", "Launch ABI"): one thread block per work-group, the arguments as the kernel's
parameters (buffers as device addresses, `__local` pointers as offsets into the launch's
dynamic shared memory, values as their bytes), then the 56-byte launch record."""
import ctypes
import os
import threading

from pyplat.devices.cuda import driver_api as cu
from pyplat.devices.cuda import faults, streams

_modules = {}              # (id of the build result, context handle) -> LoadedModule
_lock = threading.Lock()
STATIC_SHARED_LIMIT = 48 << 10    # beyond it a launch must opt in (cuFuncSetAttribute)


class LoadedModule:
    """A build result's PTX loaded in one context: its functions by name, and where its printf
    buffer is (device address, size; 0 when its kernels cannot print). Printing launches of a
    module take turns (`printing`): they share its one buffer."""

    def __init__(self, context, result):
        lib = cu.api()
        self.result = result           # (kept with the module, so its id stays its own)
        self.handle = ctypes.c_void_p()
        context.make_current()
        cu.check(lib.cuModuleLoadData(ctypes.byref(self.handle), result.ptx.encode() + b"\0"),
                 "cuModuleLoadData")
        self.functions = {}
        self.printf_address, self.printf_size = 0, 0
        if getattr(result, "printf_formats", None):
            from pyplat.compiler.targets.nvptx.abi import PRINTF_SYMBOL
            address, size = ctypes.c_uint64(), ctypes.c_size_t()
            cu.check(lib.cuModuleGetGlobal_v2(ctypes.byref(address), ctypes.byref(size), self.handle,
                                              PRINTF_SYMBOL.encode()), "cuModuleGetGlobal")
            self.printf_address, self.printf_size = address.value, size.value
        self.printing = threading.Lock()

    def function(self, symbol):
        if symbol not in self.functions:
            fn = ctypes.c_void_p()
            cu.check(cu.api().cuModuleGetFunction(ctypes.byref(fn), self.handle, symbol.encode()),
                     "cuModuleGetFunction")
            self.functions[symbol] = fn
        return self.functions[symbol]

    def printed(self):
        """What the last printing launch printed (its buffer read back and formatted)."""
        from pyplat.devices.cuda import printf_output

        def read(offset, n):
            out = ctypes.create_string_buffer(n)
            cu.check(cu.api().cuMemcpyDtoH_v2(out, self.printf_address + offset, n), "printf buffer")
            return out.raw
        return printf_output.drain(read, self.result.printf_formats, capacity=self.printf_size)


def loaded_module(context, result):
    """The LoadedModule of a build result in `context`, loaded once."""
    key = (id(result), context.handle.value)
    with _lock:
        entry = _modules.get(key)
        if entry is None:
            entry = _modules[key] = LoadedModule(context, result)
        return entry


def _layout(args, work_dim, global_size, local_size, offset):
    """What the launch ABI makes of a launch (compiler/targets/nvptx/abi.py): the `__local`
    arguments' offsets and the dynamic shared memory, the grid and block, the launch record."""
    from pyplat.compiler.targets.nvptx import abi    # (only where a GPU launches: not at start-up)
    offsets, dynamic = abi.shared_layout([value for kind, value in args if kind == "local"])
    grid, block = abi.launch_dimensions(work_dim, global_size, local_size)
    return offsets, dynamic, grid, block, abi.launch_record(work_dim, global_size, offset)


def _parameters(args, offsets, record):
    """The bytes of each kernel parameter, in order, as the launch ABI lays them out: buffers as
    device addresses (the callables give them), `__local` pointers as offsets into the dynamic
    shared memory, values as their bytes, then the launch record."""
    next_local, out = iter(offsets), []
    for kind, value in args:
        if kind == "mem":
            out.append((value() if value is not None else 0).to_bytes(8, "little"))
        elif kind == "local":
            out.append(next(next_local).to_bytes(8, "little"))
        else:
            out.append(bytes(value))
    out.append(bytes(record))
    return out


def _opt_in_shared(lib, fn, dynamic, kernel_info):
    """Beyond 48 KiB of shared memory a launch must opt in (cuFuncSetAttribute)."""
    if dynamic + kernel_info.local_mem_size > STATIC_SHARED_LIMIT:
        cu.check(lib.cuFuncSetAttribute(fn, cu.FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic),
                 "cuFuncSetAttribute")


def launch_command(driver, context, result, kernel_info, args, work_dim, global_size, local_size, offset):
    """The launch as a command of the GPU's stream driver (runtime/sched/stream_driver.pxi: put
    on the GPU's stream when its dependencies are done, completed from the GPU's events; no
    Python, no GIL, no pool thread on the way), or None where it needs Python when it runs: a
    kernel that prints (its records are read back after it), a context a fault broke. The
    buffers' device addresses are taken now (device memory allocated where it was not yet)."""
    from pyplat.runtime.graph import stream_launch
    if context.broken is not None or (getattr(result, "printf_formats", None) and getattr(kernel_info, "prints", True)):
        return None
    lib = cu.api()
    module = loaded_module(context, result)
    fn = module.function(kernel_info.symbol)
    offsets, dynamic, grid, block, record = _layout(args, work_dim, global_size, local_size, offset)
    context.make_current()
    _opt_in_shared(lib, fn, dynamic, kernel_info)
    params = _parameters(args, offsets, record)
    return stream_launch(driver, fn.value, grid, block, dynamic, params, "kernel " + kernel_info.name)


def launch_action(context, result, kernel_info, args, work_dim, global_size, local_size, offset):
    """A callable that launches the kernel once on the running thread's stream, waits for it and
    returns the GPU's time for it in ns (the command's profiled span): the way of launches that
    need Python when they run (launch_command). args: per kernel argument, ("mem", a callable
    giving the device address, or None) | ("local", size) | ("value", bytes); sizes padded to
    3. Nothing touches the GPU before the call (a forked child, where CUDA cannot work, gets a
    failed command, not a failed enqueue)."""
    from pyplat.compiler.targets.nvptx import abi    # (only where a GPU launches: not at start-up)
    offsets, dynamic, grid, block, record = _layout(args, work_dim, global_size, local_size, offset)

    def launch():
        lib = cu.api()
        module = loaded_module(context, result)
        fn = module.function(kernel_info.symbol)
        storage = [ctypes.create_string_buffer(value, max(len(value), 1))
                   for value in _parameters(args, offsets, record)]
        params = (ctypes.c_void_p * len(storage))(*[ctypes.cast(s, ctypes.c_void_p) for s in storage])
        context.make_current()
        _opt_in_shared(lib, fn, dynamic, kernel_info)

        def work(stream):
            cu.check(lib.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                        dynamic, stream, params, None), "cuLaunchKernel")
        lane = streams.lane(context)
        if not (module.printf_address and getattr(kernel_info, "prints", True)):
            return lane.run(work, "kernel " + kernel_info.name)
        with module.printing:           # the cursor zeroed first, the records read after
            def printing_work(stream):
                cu.check(lib.cuMemsetD8Async(module.printf_address, 0, abi.PRINTF_HEADER_BYTES, stream),
                         "cuMemsetD8Async")
                work(stream)
            elapsed = lane.run(printing_work, "kernel " + kernel_info.name)
            out = module.printed()
        while out:                      # (the descriptor the CPU device's printf writes to)
            out = out[os.write(1, out):]
        return elapsed
    return faults.contained(context, "kernel " + kernel_info.name, launch)
