/* Geometric functions (OpenCL C spec, "Geometric Functions") written in OpenCL C; dot, length,
 * distance and normalize are lowered in Python (pyplat/compiler/builtins/geometric.py).
 *
 * cross: each product its own statement, so no component is contracted into a fused
 * multiply-add (see common.cl). The 4-component forms return 0 in w. */
#include "gentype.h"

float3 __pyplat_cross_float3(float3 a, float3 b) {
    float x1 = a.y * b.z, x2 = a.z * b.y;
    float y1 = a.z * b.x, y2 = a.x * b.z;
    float z1 = a.x * b.y, z2 = a.y * b.x;
    return (float3)(x1 - x2, y1 - y2, z1 - z2);
}

float4 __pyplat_cross_float4(float4 a, float4 b) {
    float x1 = a.y * b.z, x2 = a.z * b.y;
    float y1 = a.z * b.x, y2 = a.x * b.z;
    float z1 = a.x * b.y, z2 = a.y * b.x;
    return (float4)(x1 - x2, y1 - y2, z1 - z2, 0.0f);
}

double3 __pyplat_cross_double3(double3 a, double3 b) {
    double x1 = a.y * b.z, x2 = a.z * b.y;
    double y1 = a.z * b.x, y2 = a.x * b.z;
    double z1 = a.x * b.y, z2 = a.y * b.x;
    return (double3)(x1 - x2, y1 - y2, z1 - z2);
}

double4 __pyplat_cross_double4(double4 a, double4 b) {
    double x1 = a.y * b.z, x2 = a.z * b.y;
    double y1 = a.z * b.x, y2 = a.x * b.z;
    double z1 = a.x * b.y, z2 = a.y * b.x;
    return (double4)(x1 - x2, y1 - y2, z1 - z2, 0.0);
}
