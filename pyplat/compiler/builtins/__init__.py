"""OpenCL C builtin functions, one module per chapter of the OpenCL C spec's builtin functions.

The code generator calls `lower(g, n)` for each builtin call; the registry (registry.py) maps
the name to the lowering its chapter module registered with @builtin / @family, or to the
definition written in OpenCL C (kernels/builtins/*.cl, registered by from_library.py).
Importing the chapter modules here is what registers them.
"""
from . import (async_copies, atomics, common, conversions, from_library, geometric, integer,  # noqa: F401
               math, misc_vector, printf, relational, synchronisation, vector_data, workitem,
               clang_builtins)
from .registry import REGISTRY, lower  # noqa: F401

CHAPTERS = (workitem, math, integer, common, geometric, relational, vector_data, synchronisation,
            async_copies, atomics, printf, conversions, misc_vector, clang_builtins)
