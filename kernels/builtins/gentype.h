/* Shared by the builtin library's .cl files (kernels/builtins; see pyplat/compiler/library.py).
 *
 * A builtin <name> written in OpenCL C is defined once per type T it takes, as the function
 * __pyplat_<name>_<T> whose arguments all have the result's type T: the compiler brings scalar
 * arguments to the result's shape before the call (mix(float4, float4, float) calls
 * __pyplat_mix_float4). The compiler finds the builtins of the library by these names. */
#ifndef PYPLAT_GENTYPE_H
#define PYPLAT_GENTYPE_H

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

/* DEFINE(T) for every floating-point gentype (half has no arithmetic in PyPlat) */
#define FOR_EACH_FLOATN(DEFINE) \
    DEFINE(float) DEFINE(float2) DEFINE(float3) DEFINE(float4) DEFINE(float8) DEFINE(float16) \
    DEFINE(double) DEFINE(double2) DEFINE(double3) DEFINE(double4) DEFINE(double8) DEFINE(double16)

#endif
