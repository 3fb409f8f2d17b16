"""images: skipped as a whole on devices without image support (CL_DEVICE_IMAGE_SUPPORT false,
PyPlat today). Elsewhere a first cut: the FULL_PROFILE's required 2D formats and a write/read
round trip of a 2D image."""
import ctypes
from ctypes import byref

from . import clapi as C
from .framework import Category


def _requires(env):
    if not env.device_info(C.CL_DEVICE_IMAGE_SUPPORT, "uint"):
        return "the device has no image support (CL_DEVICE_IMAGE_SUPPORT is CL_FALSE)"
    return None


CATEGORY = Category("images", "image formats and 2D round trips (devices with image support)",
                    requires=_requires)
check = CATEGORY.check

# Required for reading and writing in every FULL_PROFILE device of OpenCL 1.2+ (subset).
REQUIRED_RW = [(C.CL_RGBA, C.CL_UNORM_INT8), (C.CL_RGBA, C.CL_UNORM_INT16), (C.CL_RGBA, C.CL_SIGNED_INT8),
               (C.CL_RGBA, C.CL_SIGNED_INT16), (C.CL_RGBA, C.CL_SIGNED_INT32), (C.CL_RGBA, C.CL_UNSIGNED_INT8),
               (C.CL_RGBA, C.CL_UNSIGNED_INT16), (C.CL_RGBA, C.CL_UNSIGNED_INT32), (C.CL_RGBA, C.CL_HALF_FLOAT),
               (C.CL_RGBA, C.CL_FLOAT), (C.CL_BGRA, C.CL_UNORM_INT8)]
CL_MEM_OBJECT_IMAGE2D = 0x10F1


def missing_formats(supported, required=REQUIRED_RW):
    return [f for f in required if f not in set(supported)]


@check
def required_formats(env, t):
    """clGetSupportedImageFormats for 2D READ_WRITE lists the required formats"""
    cl = env.cl
    n = C.cl_uint(0)
    t.ok(cl.clGetSupportedImageFormats(env.context, C.CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, None,
                                       byref(n)), "clGetSupportedImageFormats(count)")
    fmts = (C.ImageFormat * max(1, n.value))()
    t.ok(cl.clGetSupportedImageFormats(env.context, C.CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, n.value, fmts,
                                       None), "clGetSupportedImageFormats")
    got = [(f.image_channel_order, f.image_channel_data_type) for f in fmts[:n.value]]
    miss = missing_formats(got)
    t.true(not miss, "required 2D formats missing (order, type): " + ", ".join(f"({o:#x}, {d:#x})" for o, d in miss))


@check
def image2d_round_trip(env, t):
    """an RGBA/UNORM_INT8 2D image written and read back, whole and a sub-region"""
    cl = env.cl
    w, h = 37, 19
    fmt = C.ImageFormat(C.CL_RGBA, C.CL_UNORM_INT8)
    desc = C.ImageDesc(CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0, 0, 0, 0, 0, None)
    img, code = env.create("clCreateImage", env.context, C.CL_MEM_READ_WRITE, byref(fmt), byref(desc), None)
    t.ok(code, "clCreateImage(RGBA UNORM_INT8 37x19)")
    t.cleanup(cl.clReleaseMemObject, img)
    rng = env.rng(700)
    data = rng.integers(0, 256, w * h * 4, dtype="uint8").tobytes()
    src = ctypes.create_string_buffer(data, len(data))
    origin = (ctypes.c_size_t * 3)(0, 0, 0)
    region = (ctypes.c_size_t * 3)(w, h, 1)
    t.ok(cl.clEnqueueWriteImage(env.queue, img, 1, origin, region, 0, 0, src, 0, None, None), "clEnqueueWriteImage")
    dst = ctypes.create_string_buffer(len(data))
    t.ok(cl.clEnqueueReadImage(env.queue, img, 1, origin, region, 0, 0, dst, 0, None, None), "clEnqueueReadImage")
    t.true(dst.raw == data, "image contents read back differ from those written")
    o2 = (ctypes.c_size_t * 3)(5, 3, 0)
    r2 = (ctypes.c_size_t * 3)(10, 4, 1)
    part = ctypes.create_string_buffer(10 * 4 * 4)
    t.ok(cl.clEnqueueReadImage(env.queue, img, 1, o2, r2, 0, 0, part, 0, None, None), "clEnqueueReadImage(region)")
    want = b"".join(data[((3 + y) * w + 5) * 4:((3 + y) * w + 15) * 4] for y in range(4))
    t.true(part.raw == want, "sub-region (origin 5,3; 10x4) read back differs")
