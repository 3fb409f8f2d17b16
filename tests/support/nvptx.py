"""PTX of test kernels for the NVPTX target (pyplat/compiler/targets/nvptx/), offline: the build
for sm_90, ptxas where one is installed, an .entry's text, and the check that PTX calls no host
function."""
import glob
import importlib.util
import os
import re
import shutil

from pyplat.compiler import build, nvptx_target


SM90 = nvptx_target("sm_90")


HOST_SYMBOLS = re.compile(r"\b(sinf?|cosf?|expf?|powf?|logf?|tanhf?|fmodf?|cbrtf?|erff?|atan2f?|frexpf?|ldexpf?|"
                          r"lgammaf?_r|snprintf|malloc|free|write|memcpy|memset)\b")


def ptx_of(source, options="", target=SM90):
    r = build(source, options, use_cache=False, target=target)
    assert r.ok, r.log
    return r


def find_ptxas():
    """The ptxas of a CUDA toolkit on PATH or of the nvidia-cuda-nvcc wheel, or None."""
    found = shutil.which("ptxas")
    if found:
        return found
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for p in glob.glob(os.path.join(root, "cuda_nvcc", "bin", "ptxas")):
            return p
    return None


def entry(ptx, name):
    """The text of .entry `name` (its parameter list and body)."""
    start = ptx.index(".entry %s(" % name)
    end = ptx.find(".entry ", start + 1)
    return ptx[start:end if end > 0 else len(ptx)]


def assert_device_only(ptx):
    """No call of a host function: only .entry code, libdevice's code inlined."""
    assert ".extern .func" not in ptx
    called = re.findall(r"call(?:\.uni)?\s+(?:\([^)]*\),\s*)?(\w+)", ptx)
    assert not [c for c in called if HOST_SYMBOLS.fullmatch(c)], called
