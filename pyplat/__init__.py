"""PyPlat: an OpenCL platform written in Python.

Loaded by the standard ICD loaders through the C shim in pyplat/_icd. For pyopencl users,
``pyplat.enable()`` (call it before pyopencl looks for platforms) makes PyPlat visible next
to every other installed platform.
"""
__version__ = "0.1.0"


def enable():
    """Make PyPlat visible to OpenCL loaders started later in this process and its children."""
    from pyplat import discovery
    discovery.enable()
