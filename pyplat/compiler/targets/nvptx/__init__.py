"""The NVPTX target: OpenCL C compiled to PTX for NVIDIA GPUs (docs/compiler.md, "NVPTX target").
All of NVPTX's code generation is in this package:

    target.py      NvptxTarget, the target object (nvptx_target("sm_90"))
    module.py      its module generator (the lowering's hooks: barriers, shared memory, libdevice)
    entry.py       each kernel's PTX .entry
    printf.py      printf as records in a device buffer
    abi.py         the launch and printf ABI that devices/cuda is written against
    codegen.py     LLVM module -> PTX, with libdevice (libdevice.py) and PTX fixups (ptx_fixups.py)
"""
from .target import NvptxTarget, nvptx_target

__all__ = ["NvptxTarget", "nvptx_target"]
