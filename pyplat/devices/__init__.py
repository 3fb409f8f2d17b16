"""Device classes: what kinds of devices the platform offers (registry.py), each one module.

A device class composes a runtime driver (where and when commands run), a memory space (where
buffers live; spaces.py) and a compiler target (what programs are built for), and describes its
devices. The core makes OpenCL devices from them (core/platform.py) and asks them for drivers and
spaces; device classes import only the runtime and the compiler, never the core or the API.
See docs/devices.md.
"""
