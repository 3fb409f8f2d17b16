"""API layer: the OpenCL entry points as the spec defines them.

Each module covers one area; its functions carry the spec's names and argument names, validate
in the spec's order and raise CLError with the spec's code. ``bridge`` turns them into the C
function pointers the ICD shim calls. Native code (Cython): ``_entries`` (direct C entries that
call these functions without ctypes) and ``_native`` (the fast path: native entries answered
without the GIL, the native handle table, native events; it uses the runtime through
pyplat/runtime/_sched.pxd).
"""
