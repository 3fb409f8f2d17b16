/* Geometric functions (OpenCL C spec, "Geometric Functions") written in OpenCL C; dot, length,
 * distance and normalize are lowered in Python (pyplat/compiler/builtins/geometric.py).
 *
 * cross: each product its own statement, so no component is contracted into a fused
 * multiply-add (see common.cl); components in order x, y, z. The 4-component forms return 0
 * in w. */
#include "gentype.h"

float3 __pyplat_cross_float3(float3 a, float3 b) {
    float3 r = (float3)0;
    float p = a.y * b.z, q = a.z * b.y;
    r.x = p - q;
    p = a.z * b.x;
    q = a.x * b.z;
    r.y = p - q;
    p = a.x * b.y;
    q = a.y * b.x;
    r.z = p - q;
    return r;
}

float4 __pyplat_cross_float4(float4 a, float4 b) {
    float4 r = (float4)0;
    float p = a.y * b.z, q = a.z * b.y;
    r.x = p - q;
    p = a.z * b.x;
    q = a.x * b.z;
    r.y = p - q;
    p = a.x * b.y;
    q = a.y * b.x;
    r.z = p - q;
    return r;
}

double3 __pyplat_cross_double3(double3 a, double3 b) {
    double3 r = (double3)0;
    double p = a.y * b.z, q = a.z * b.y;
    r.x = p - q;
    p = a.z * b.x;
    q = a.x * b.z;
    r.y = p - q;
    p = a.x * b.y;
    q = a.y * b.x;
    r.z = p - q;
    return r;
}

double4 __pyplat_cross_double4(double4 a, double4 b) {
    double4 r = (double4)0;
    double p = a.y * b.z, q = a.z * b.y;
    r.x = p - q;
    p = a.z * b.x;
    q = a.x * b.z;
    r.y = p - q;
    p = a.x * b.y;
    q = a.y * b.x;
    r.z = p - q;
    return r;
}
