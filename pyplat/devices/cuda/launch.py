"""Kernel launches on a CUDA device, following the NVPTX target's launch ABI (docs/compiler.md,
"NVPTX target", "Launch ABI"): one thread block per work-group, the arguments as the kernel's
parameters (buffers as device addresses, `__local` pointers as offsets into the launch's
dynamic shared memory, values as their bytes), then the 56-byte launch record."""
import ctypes
import threading

from pyplat.devices.cuda import driver_api as cu
from pyplat.devices.cuda import streams

_modules = {}              # (id of the build result, context handle) -> (result, module)
_lock = threading.Lock()
STATIC_SHARED_LIMIT = 48 << 10    # beyond it a launch must opt in (cuFuncSetAttribute)


def load_function(context, result, symbol):
    """The CUfunction of entry `symbol` of a build result's PTX, its module loaded once per
    context (the result is kept with it, so its id stays its own)."""
    key = (id(result), context.handle.value)
    with _lock:
        entry = _modules.get(key)
        if entry is None:
            context.make_current()
            module = ctypes.c_void_p()
            cu.check(cu.api().cuModuleLoadData(ctypes.byref(module), result.ptx.encode() + b"\0"),
                     "cuModuleLoadData")
            entry = _modules[key] = (result, module, {})
        functions = entry[2]
        if symbol not in functions:
            fn = ctypes.c_void_p()
            cu.check(cu.api().cuModuleGetFunction(ctypes.byref(fn), entry[1], symbol.encode()),
                     "cuModuleGetFunction")
            functions[symbol] = fn
        return functions[symbol]


def launch_action(context, result, kernel_info, args, work_dim, global_size, local_size, offset):
    """A callable that launches the kernel once on the running thread's stream, waits for it and
    returns the GPU's time for it in ns (the command's profiled span). args: per kernel argument,
    ("mem", a callable giving the device address, or None) | ("local", size) | ("value", bytes);
    sizes padded to 3. Nothing touches the GPU before the call (the enqueue only validates: a
    forked child, where CUDA cannot work, gets a failed command, not a failed enqueue)."""
    from pyplat.compiler.targets import nvptx      # (only where a GPU launches: not at start-up)
    local_sizes = [value for kind, value in args if kind == "local"]
    offsets, dynamic = nvptx.shared_layout(local_sizes)
    grid, block = nvptx.launch_dimensions(work_dim, global_size, local_size)
    record = nvptx.launch_record(work_dim, global_size, offset)

    def launch():
        lib = cu.api()
        fn = load_function(context, result, kernel_info.symbol)
        storage, next_local = [], iter(offsets)
        for kind, value in args:
            if kind == "mem":
                storage.append(ctypes.c_uint64(value() if value is not None else 0))
            elif kind == "local":
                storage.append(ctypes.c_uint64(next(next_local)))
            else:
                storage.append(ctypes.create_string_buffer(bytes(value), max(len(value), 1)))
        storage.append(ctypes.create_string_buffer(record, len(record)))
        params = (ctypes.c_void_p * len(storage))(
            *[ctypes.cast(ctypes.pointer(s) if isinstance(s, ctypes.c_uint64) else s, ctypes.c_void_p)
              for s in storage])
        context.make_current()
        if dynamic + kernel_info.local_mem_size > STATIC_SHARED_LIMIT:
            cu.check(lib.cuFuncSetAttribute(fn, cu.FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic),
                     "cuFuncSetAttribute")

        def work(stream):
            cu.check(lib.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                        dynamic, stream, params, None), "cuLaunchKernel")
        return streams.lane(context).run(work, "kernel " + kernel_info.name)
    return launch
