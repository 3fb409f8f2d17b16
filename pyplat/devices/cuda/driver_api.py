"""The CUDA driver API through ctypes on libcuda.so.1 (no toolkit needed at run time).

`api()` returns the loaded library after cuInit, or None where there is no library, no driver
or no GPU: then the cuda device class has no devices, and nothing is an error. `check` turns a
CUresult into CudaError with the driver's own name for it.
"""
import ctypes
import threading

CUDA_SUCCESS = 0

# CUdevice_attribute values (cuda.h, CUDA 11+).
ATTRIBUTES = {
    "max_threads_per_block": 1, "max_block_dim_x": 2, "max_block_dim_y": 3, "max_block_dim_z": 4,
    "max_shared_memory_per_block": 8, "total_constant_memory": 9, "warp_size": 10,
    "clock_rate_khz": 13, "multiprocessor_count": 16, "unified_addressing": 41,
    "compute_capability_major": 75, "compute_capability_minor": 76,
    "max_shared_memory_per_block_optin": 97, "l2_cache_size": 38,
}
FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
STREAM_NON_BLOCKING = 1          # no implicit ordering with the legacy default stream
EVENT_DEFAULT, EVENT_DISABLE_TIMING = 0, 2

_lock = threading.Lock()
_lib = None
_tried = False


class CudaError(RuntimeError):
    def __init__(self, code, what):
        name = ctypes.c_char_p()
        if _lib is not None:
            _lib.cuGetErrorName(code, ctypes.byref(name))
        self.name = (name.value or b"CUDA error").decode()
        super().__init__(f"{what}: {self.name} ({code})")
        self.code = code


def check(code, what):
    if code != CUDA_SUCCESS:
        raise CudaError(code, what)


def api():
    """libcuda after cuInit(0), or None where CUDA cannot be used here."""
    global _lib, _tried
    with _lock:
        if not _tried:
            _tried = True
            try:
                lib = ctypes.CDLL("libcuda.so.1")
            except OSError:
                return None
            _declare(lib)
            if lib.cuInit(0) != CUDA_SUCCESS:
                return None
            _lib = lib
    return _lib


def _declare(lib):
    u64, u32, i32, vp = ctypes.c_uint64, ctypes.c_uint, ctypes.c_int, ctypes.c_void_p
    sigs = {
        "cuInit": [u32], "cuDeviceGetCount": [ctypes.POINTER(i32)],
        "cuDeviceGet": [ctypes.POINTER(i32), i32],
        "cuDeviceGetName": [ctypes.c_char_p, i32, i32],
        "cuDeviceGetAttribute": [ctypes.POINTER(i32), i32, i32],
        "cuDeviceTotalMem_v2": [ctypes.POINTER(ctypes.c_size_t), i32],
        "cuDevicePrimaryCtxRetain": [ctypes.POINTER(vp), i32],
        "cuCtxSetCurrent": [vp], "cuCtxSynchronize": [],
        "cuMemAlloc_v2": [ctypes.POINTER(u64), ctypes.c_size_t], "cuMemFree_v2": [u64],
        "cuMemcpy": [u64, u64, ctypes.c_size_t],
        "cuMemsetD8_v2": [u64, ctypes.c_ubyte, ctypes.c_size_t],
        "cuModuleLoadData": [ctypes.POINTER(vp), ctypes.c_char_p],
        "cuModuleGetFunction": [ctypes.POINTER(vp), vp, ctypes.c_char_p],
        "cuFuncSetAttribute": [vp, i32, i32],
        "cuLaunchKernel": [vp, u32, u32, u32, u32, u32, u32, u32, vp, ctypes.POINTER(vp), ctypes.POINTER(vp)],
        "cuGetErrorName": [i32, ctypes.POINTER(ctypes.c_char_p)],
        # streams and events: each pool thread's commands on a stream of its own, timed by events
        "cuStreamCreate": [ctypes.POINTER(vp), u32], "cuStreamSynchronize": [vp],
        "cuEventCreate": [ctypes.POINTER(vp), u32], "cuEventRecord": [vp, vp],
        "cuEventSynchronize": [vp], "cuEventElapsedTime": [ctypes.POINTER(ctypes.c_float), vp, vp],
        "cuStreamWaitEvent": [vp, vp, u32],
        "cuMemcpyAsync": [u64, u64, ctypes.c_size_t, vp],
        "cuMemcpyDtoH_v2": [vp, u64, ctypes.c_size_t],
        "cuMemcpyHtoDAsync_v2": [u64, vp, ctypes.c_size_t, vp],
        "cuMemcpyDtoHAsync_v2": [vp, u64, ctypes.c_size_t, vp],
        "cuMemHostAlloc": [ctypes.POINTER(vp), ctypes.c_size_t, u32], "cuMemFreeHost": [vp],
        "cuMemsetD8Async": [u64, ctypes.c_ubyte, ctypes.c_size_t, vp],
        "cuModuleGetGlobal_v2": [ctypes.POINTER(u64), ctypes.POINTER(ctypes.c_size_t), vp, ctypes.c_char_p],
    }
    for name, args in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, ctypes.c_int
