/* Common functions (OpenCL C spec, "Common Functions") written in OpenCL C; min, max and clamp
 * are lowered in Python (pyplat/compiler/builtins/common.py).
 *
 * Products and sums are separate statements on purpose: within one expression OpenCL C
 * contracts a*b + c into a fused multiply-add, which rounds once where the spec's formulas
 * round twice (and the conformance tests compare against the formulas). */
#include "gentype.h"

/* x + (y - x) * a */
#define MIX(T) T __pyplat_mix_##T(T x, T y, T a) { \
    T d = (y - x) * a; \
    return x + d; \
}
FOR_EACH_FLOATN(MIX)

/* 0 where x < edge, else 1 (also for NaN) */
#define STEP(T) T __pyplat_step_##T(T edge, T x) { \
    return x < edge ? (T)0 : (T)1; \
}
FOR_EACH_FLOATN(STEP)

/* t * t * (3 - 2 * t) for t = clamp((x - edge0) / (edge1 - edge0), 0, 1) */
#define SMOOTHSTEP(T) T __pyplat_smoothstep_##T(T edge0, T edge1, T x) { \
    T t = clamp((x - edge0) / (edge1 - edge0), (T)0, (T)1); \
    T t2 = t * t; \
    T twice = (T)2 * t; \
    T k = (T)3 - twice; \
    return t2 * k; \
}
FOR_EACH_FLOATN(SMOOTHSTEP)

/* 1 for x > 0, -1 for x < 0, x itself for +-0 (the sign of zero kept), 0 for NaN */
#define SIGN(T) T __pyplat_sign_##T(T x) { \
    T positive = x > (T)0 ? (T)1 : x; \
    T r = x < (T)0 ? (T)-1 : positive; \
    return isnan(x) ? (T)0 : r; \
}
FOR_EACH_FLOATN(SIGN)

/* radians * 180 / pi and degrees * pi / 180, the factor rounded to T */
#define DEGREES(T) T __pyplat_degrees_##T(T radians) { \
    return radians * (T)57.29577951308232; \
}
FOR_EACH_FLOATN(DEGREES)

#define RADIANS(T) T __pyplat_radians_##T(T degrees) { \
    return degrees * (T)0.017453292519943295; \
}
FOR_EACH_FLOATN(RADIANS)
