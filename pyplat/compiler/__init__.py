"""PyPlat kernel compiler: OpenCL C -> libclang -> typed tree -> LLVM IR -> native.

Public interface (the modules behind it: driver.py builds, linker.py links, objects.py holds the
byte formats, results.py the result types, abi.py the work-group ABI)::

    build(source, options="", *, use_cache=True, target=HOST) -> BuildResult
    nvptx_target(arch="sm_90") -> NvptxTarget     # build(..., target=...): PTX in result.ptx
    compile_object(source, options="", headers=None, target=HOST) -> ObjectResult
    link(objects, options="", use_cache=True, target=HOST) -> BuildResult | ObjectResult

Targets (targets/): HOST, native code for this machine; nvptx_target(arch), PTX.

See docs/compiler.md for the pipeline, the ABI and what is supported.
"""
from .abi import WorkGroupContext, WORK_GROUP_FUNCTION
from .driver import HEADER, build, compile_object
from .linker import LINK_FLAGS, link, parse_link_options
from .objects import OBJECT_MAGIC, from_package_parts, load_package, read_package, seal, unpack_object, unseal
from .results import ArgInfo, BuildResult, KernelInfo, ObjectResult
from .targets.host import HOST
from .targets.nvptx import NvptxTarget, nvptx_target
from .tree import CompileError

__all__ = ["WorkGroupContext", "WORK_GROUP_FUNCTION", "HEADER", "build", "compile_object", "LINK_FLAGS",
           "link", "parse_link_options", "OBJECT_MAGIC", "from_package_parts", "load_package",
           "read_package", "seal", "unseal", "unpack_object", "ArgInfo", "BuildResult", "KernelInfo", "ObjectResult", "CompileError",
           "HOST", "NvptxTarget", "nvptx_target"]
