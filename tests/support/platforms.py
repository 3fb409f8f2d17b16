"""Helpers for the tests that run kernels through pyopencl on PyPlat and PoCL side by side."""


def pyopencl_context(platform_name):
    """A pyopencl context on the first device of the platform of this name, or None."""
    import pyopencl as cl
    for p in cl.get_platforms():
        if p.name == platform_name:
            devs = p.get_devices()
            return cl.Context(devs[:1]) if devs else None
    return None
