"""libdevice: NVIDIA's math library for NVPTX (`libdevice.10.bc`, LLVM bitcode of `__nv_*`
functions), which the NVPTX target links for the math builtins NVPTX has no instruction for.

It is not a dependency of PyPlat: it is looked for, in this order, at `PYPLAT_LIBDEVICE` (a file),
in NVIDIA's `nvidia-cuda-nvcc-cu12` wheel (`nvidia/cuda_nvcc/nvvm/libdevice/`), under
`CUDA_HOME`/`CUDA_PATH` and in /usr/local/cuda. A program that needs it when none is found fails
to build with a log line saying so; programs that call no such builtin never need it.
"""
import glob
import importlib.util
import os

from .... import config

FILE_NAME = "libdevice.10.bc"
MISSING = ("math builtins on NVPTX need NVIDIA's libdevice (%s), which was not found: install the "
           "'nvidia-cuda-nvcc-cu12' wheel or a CUDA toolkit, or set PYPLAT_LIBDEVICE to the file" % FILE_NAME)

_found = {}          # PYPLAT_LIBDEVICE -> the path found (or None)
_bytes = {}          # path -> its contents, read once per process


def _candidates():
    explicit = config.value("PYPLAT_LIBDEVICE")
    if explicit:
        yield explicit
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    for root in (spec.submodule_search_locations or []) if spec else []:
        yield os.path.join(root, "cuda_nvcc", "nvvm", "libdevice", FILE_NAME)
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            yield os.path.join(os.environ[env], "nvvm", "libdevice", FILE_NAME)
    yield os.path.join("/usr/local/cuda", "nvvm", "libdevice", FILE_NAME)
    yield from sorted(glob.glob("/usr/local/cuda-*/nvvm/libdevice/" + FILE_NAME), reverse=True)


def path():
    """The libdevice file to link, or None when there is none."""
    key = config.value("PYPLAT_LIBDEVICE") or ""
    if key not in _found:
        _found[key] = next((p for p in _candidates() if os.path.isfile(p)), None)
    return _found[key]


def bitcode():
    """libdevice's bytes, or None when it is not installed."""
    p = path()
    if p is None:
        return None
    if p not in _bytes:
        with open(p, "rb") as f:
            _bytes[p] = f.read()
    return _bytes[p]
