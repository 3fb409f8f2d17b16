/* Geometric functions (OpenCL C spec, "Geometric Functions") written in OpenCL C; dot, length,
 * distance and normalize are lowered in Python (pyplat/compiler/builtins/geometric.py).
 *
 * cross: each product its own statement, so no component is contracted into a fused
 * multiply-add (see common.cl); components in order x, y, z. The 4-component forms return 0
 * in w. */
#include "gentype.h"

/* T: float3, float4, double3 or double4; S: its element type */
#define CROSS(T, S) T __pyplat_cross_##T(T a, T b) { \
    T r = (T)0; \
    S p = a.y * b.z, q = a.z * b.y; \
    r.x = p - q; \
    p = a.z * b.x; \
    q = a.x * b.z; \
    r.y = p - q; \
    p = a.x * b.y; \
    q = a.y * b.x; \
    r.z = p - q; \
    return r; \
}
CROSS(float3, float)
CROSS(float4, float)
CROSS(double3, double)
CROSS(double4, double)
