/* pyplat_opencl.h: the header every PyPlat kernel sees (included with -include).
 * clang declares the builtin functions itself (-fdeclare-opencl-builtins); this
 * header supplies the types and macros they and OpenCL C programs refer to.
 * Generated once by hand-run script (see docs/compiler.md); keep it declarations only. */
#ifndef PYPLAT_OPENCL_H
#define PYPLAT_OPENCL_H

/* clang's builtin declarations (-fdeclare-opencl-builtins) key the vload/vstore/atomic
 * overloads on named address spaces on this macro (opencl-c-base.h defines it). */
#define __opencl_c_named_address_space_builtins 1

/* Version macros clang leaves to the default header: the platform's OpenCL version and the
 * CL_VERSION_x_y values programs compare __OPENCL_C_VERSION__ against. */
#ifndef __OPENCL_VERSION__
#define __OPENCL_VERSION__ 300
#endif
#ifndef CL_VERSION_1_0
#define CL_VERSION_1_0 100
#define CL_VERSION_1_1 110
#define CL_VERSION_1_2 120
#define CL_VERSION_2_0 200
#define CL_VERSION_3_0 300
#endif

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef unsigned long size_t;
typedef long ptrdiff_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef uint cl_mem_fence_flags;
/* Each vector type has a twin declared first: clang gives a swizzle's result the first
 * typedef of its vector type, so `.wxxw` of a ulong4 has type __pyplat_swizzle_ulong4
 * while an implicit conversion keeps ulong4. That is how the front end tells a swizzle
 * from a conversion of the same type anywhere, macro bodies included; build logs show
 * the public name. */
typedef char __pyplat_swizzle_char2 __attribute__((ext_vector_type(2)));
typedef char char2 __attribute__((ext_vector_type(2)));
typedef char __pyplat_swizzle_char3 __attribute__((ext_vector_type(3)));
typedef char char3 __attribute__((ext_vector_type(3)));
typedef char __pyplat_swizzle_char4 __attribute__((ext_vector_type(4)));
typedef char char4 __attribute__((ext_vector_type(4)));
typedef char __pyplat_swizzle_char8 __attribute__((ext_vector_type(8)));
typedef char char8 __attribute__((ext_vector_type(8)));
typedef char __pyplat_swizzle_char16 __attribute__((ext_vector_type(16)));
typedef char char16 __attribute__((ext_vector_type(16)));
typedef uchar __pyplat_swizzle_uchar2 __attribute__((ext_vector_type(2)));
typedef uchar uchar2 __attribute__((ext_vector_type(2)));
typedef uchar __pyplat_swizzle_uchar3 __attribute__((ext_vector_type(3)));
typedef uchar uchar3 __attribute__((ext_vector_type(3)));
typedef uchar __pyplat_swizzle_uchar4 __attribute__((ext_vector_type(4)));
typedef uchar uchar4 __attribute__((ext_vector_type(4)));
typedef uchar __pyplat_swizzle_uchar8 __attribute__((ext_vector_type(8)));
typedef uchar uchar8 __attribute__((ext_vector_type(8)));
typedef uchar __pyplat_swizzle_uchar16 __attribute__((ext_vector_type(16)));
typedef uchar uchar16 __attribute__((ext_vector_type(16)));
typedef short __pyplat_swizzle_short2 __attribute__((ext_vector_type(2)));
typedef short short2 __attribute__((ext_vector_type(2)));
typedef short __pyplat_swizzle_short3 __attribute__((ext_vector_type(3)));
typedef short short3 __attribute__((ext_vector_type(3)));
typedef short __pyplat_swizzle_short4 __attribute__((ext_vector_type(4)));
typedef short short4 __attribute__((ext_vector_type(4)));
typedef short __pyplat_swizzle_short8 __attribute__((ext_vector_type(8)));
typedef short short8 __attribute__((ext_vector_type(8)));
typedef short __pyplat_swizzle_short16 __attribute__((ext_vector_type(16)));
typedef short short16 __attribute__((ext_vector_type(16)));
typedef ushort __pyplat_swizzle_ushort2 __attribute__((ext_vector_type(2)));
typedef ushort ushort2 __attribute__((ext_vector_type(2)));
typedef ushort __pyplat_swizzle_ushort3 __attribute__((ext_vector_type(3)));
typedef ushort ushort3 __attribute__((ext_vector_type(3)));
typedef ushort __pyplat_swizzle_ushort4 __attribute__((ext_vector_type(4)));
typedef ushort ushort4 __attribute__((ext_vector_type(4)));
typedef ushort __pyplat_swizzle_ushort8 __attribute__((ext_vector_type(8)));
typedef ushort ushort8 __attribute__((ext_vector_type(8)));
typedef ushort __pyplat_swizzle_ushort16 __attribute__((ext_vector_type(16)));
typedef ushort ushort16 __attribute__((ext_vector_type(16)));
typedef int __pyplat_swizzle_int2 __attribute__((ext_vector_type(2)));
typedef int int2 __attribute__((ext_vector_type(2)));
typedef int __pyplat_swizzle_int3 __attribute__((ext_vector_type(3)));
typedef int int3 __attribute__((ext_vector_type(3)));
typedef int __pyplat_swizzle_int4 __attribute__((ext_vector_type(4)));
typedef int int4 __attribute__((ext_vector_type(4)));
typedef int __pyplat_swizzle_int8 __attribute__((ext_vector_type(8)));
typedef int int8 __attribute__((ext_vector_type(8)));
typedef int __pyplat_swizzle_int16 __attribute__((ext_vector_type(16)));
typedef int int16 __attribute__((ext_vector_type(16)));
typedef uint __pyplat_swizzle_uint2 __attribute__((ext_vector_type(2)));
typedef uint uint2 __attribute__((ext_vector_type(2)));
typedef uint __pyplat_swizzle_uint3 __attribute__((ext_vector_type(3)));
typedef uint uint3 __attribute__((ext_vector_type(3)));
typedef uint __pyplat_swizzle_uint4 __attribute__((ext_vector_type(4)));
typedef uint uint4 __attribute__((ext_vector_type(4)));
typedef uint __pyplat_swizzle_uint8 __attribute__((ext_vector_type(8)));
typedef uint uint8 __attribute__((ext_vector_type(8)));
typedef uint __pyplat_swizzle_uint16 __attribute__((ext_vector_type(16)));
typedef uint uint16 __attribute__((ext_vector_type(16)));
typedef long __pyplat_swizzle_long2 __attribute__((ext_vector_type(2)));
typedef long long2 __attribute__((ext_vector_type(2)));
typedef long __pyplat_swizzle_long3 __attribute__((ext_vector_type(3)));
typedef long long3 __attribute__((ext_vector_type(3)));
typedef long __pyplat_swizzle_long4 __attribute__((ext_vector_type(4)));
typedef long long4 __attribute__((ext_vector_type(4)));
typedef long __pyplat_swizzle_long8 __attribute__((ext_vector_type(8)));
typedef long long8 __attribute__((ext_vector_type(8)));
typedef long __pyplat_swizzle_long16 __attribute__((ext_vector_type(16)));
typedef long long16 __attribute__((ext_vector_type(16)));
typedef ulong __pyplat_swizzle_ulong2 __attribute__((ext_vector_type(2)));
typedef ulong ulong2 __attribute__((ext_vector_type(2)));
typedef ulong __pyplat_swizzle_ulong3 __attribute__((ext_vector_type(3)));
typedef ulong ulong3 __attribute__((ext_vector_type(3)));
typedef ulong __pyplat_swizzle_ulong4 __attribute__((ext_vector_type(4)));
typedef ulong ulong4 __attribute__((ext_vector_type(4)));
typedef ulong __pyplat_swizzle_ulong8 __attribute__((ext_vector_type(8)));
typedef ulong ulong8 __attribute__((ext_vector_type(8)));
typedef ulong __pyplat_swizzle_ulong16 __attribute__((ext_vector_type(16)));
typedef ulong ulong16 __attribute__((ext_vector_type(16)));
typedef float __pyplat_swizzle_float2 __attribute__((ext_vector_type(2)));
typedef float float2 __attribute__((ext_vector_type(2)));
typedef float __pyplat_swizzle_float3 __attribute__((ext_vector_type(3)));
typedef float float3 __attribute__((ext_vector_type(3)));
typedef float __pyplat_swizzle_float4 __attribute__((ext_vector_type(4)));
typedef float float4 __attribute__((ext_vector_type(4)));
typedef float __pyplat_swizzle_float8 __attribute__((ext_vector_type(8)));
typedef float float8 __attribute__((ext_vector_type(8)));
typedef float __pyplat_swizzle_float16 __attribute__((ext_vector_type(16)));
typedef float float16 __attribute__((ext_vector_type(16)));
typedef double __pyplat_swizzle_double2 __attribute__((ext_vector_type(2)));
typedef double double2 __attribute__((ext_vector_type(2)));
typedef double __pyplat_swizzle_double3 __attribute__((ext_vector_type(3)));
typedef double double3 __attribute__((ext_vector_type(3)));
typedef double __pyplat_swizzle_double4 __attribute__((ext_vector_type(4)));
typedef double double4 __attribute__((ext_vector_type(4)));
typedef double __pyplat_swizzle_double8 __attribute__((ext_vector_type(8)));
typedef double double8 __attribute__((ext_vector_type(8)));
typedef double __pyplat_swizzle_double16 __attribute__((ext_vector_type(16)));
typedef double double16 __attribute__((ext_vector_type(16)));
#ifdef cl_khr_fp16
typedef half __pyplat_swizzle_half2 __attribute__((ext_vector_type(2)));
typedef half half2 __attribute__((ext_vector_type(2)));
typedef half __pyplat_swizzle_half3 __attribute__((ext_vector_type(3)));
typedef half half3 __attribute__((ext_vector_type(3)));
typedef half __pyplat_swizzle_half4 __attribute__((ext_vector_type(4)));
typedef half half4 __attribute__((ext_vector_type(4)));
typedef half __pyplat_swizzle_half8 __attribute__((ext_vector_type(8)));
typedef half half8 __attribute__((ext_vector_type(8)));
typedef half __pyplat_swizzle_half16 __attribute__((ext_vector_type(16)));
typedef half half16 __attribute__((ext_vector_type(16)));
#endif

/* printf is OpenCL C 1.2 and later; earlier versions reject a variadic prototype outright. */
#if __OPENCL_C_VERSION__ >= 120
int printf(__constant const char *restrict format, ...);
#endif

#if defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ >= 200
typedef enum memory_scope {
  memory_scope_work_item = __OPENCL_MEMORY_SCOPE_WORK_ITEM,
  memory_scope_work_group = __OPENCL_MEMORY_SCOPE_WORK_GROUP,
  memory_scope_device = __OPENCL_MEMORY_SCOPE_DEVICE,
  memory_scope_all_svm_devices = __OPENCL_MEMORY_SCOPE_ALL_SVM_DEVICES,
  memory_scope_all_devices = __OPENCL_MEMORY_SCOPE_ALL_SVM_DEVICES,
  memory_scope_sub_group = __OPENCL_MEMORY_SCOPE_SUB_GROUP
} memory_scope;
typedef enum memory_order {
  memory_order_relaxed = __ATOMIC_RELAXED,
  memory_order_acquire = __ATOMIC_ACQUIRE,
  memory_order_release = __ATOMIC_RELEASE,
  memory_order_acq_rel = __ATOMIC_ACQ_REL,
  memory_order_seq_cst = __ATOMIC_SEQ_CST
} memory_order;
#endif

#if !defined(__OPENCL_C_VERSION__) || __OPENCL_C_VERSION__ < 200
/* OpenCL 2.0's name for barrier(); offered to 1.x programs too (clang declares it for 2.0+). */
void __attribute__((overloadable)) work_group_barrier(uint flags);
#endif

/* OpenCL C 1.x's kernel qualifier with attributes (spec 6.7.2 in 1.2) */
#define __kernel_exec(X, typen) __kernel __attribute__((work_group_size_hint(X, 1, 1))) \
    __attribute__((vec_type_hint(typen)))
#define kernel_exec(X, typen) __kernel_exec(X, typen)

#if __OPENCL_C_VERSION__ >= 200
#define ATOMIC_VAR_INIT(x) (x)
#define ATOMIC_FLAG_INIT 0
#endif

#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
#define CLK_IMAGE_MEM_FENCE 4

/* Sampler properties (spec 6.12.14.1 in 1.2), or-ed into a sampler_t initialiser. sampler_t is
 * part of OpenCL C whatever the device's image support, and buffer-only kernels declare them.
 * The bits are the SPIR 1.2 encoding clang uses too: addressing mode in bits 1-3, normalized
 * coordinates in bit 0, filter in bits 4-5 (docs/compiler.md, "Samplers"). */
#define CLK_ADDRESS_NONE 0
#define CLK_ADDRESS_CLAMP_TO_EDGE 2
#define CLK_ADDRESS_CLAMP 4
#define CLK_ADDRESS_REPEAT 6
#define CLK_ADDRESS_MIRRORED_REPEAT 8
#define CLK_NORMALIZED_COORDS_FALSE 0
#define CLK_NORMALIZED_COORDS_TRUE 1
#define CLK_FILTER_NEAREST 0x10
#define CLK_FILTER_LINEAR 0x20

#define CHAR_BIT 8
#define SCHAR_MAX 127
#define SCHAR_MIN (-127-1)
#define CHAR_MAX SCHAR_MAX
#define CHAR_MIN SCHAR_MIN
#define UCHAR_MAX 255
#define SHRT_MAX 32767
#define SHRT_MIN (-32767-1)
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-2147483647-1)
#define UINT_MAX 0xffffffffU
#define LONG_MAX 0x7fffffffffffffffL
#define LONG_MIN (-0x7fffffffffffffffL-1)
#define ULONG_MAX 0xffffffffffffffffUL

#define FLT_DIG 6
#define FLT_MANT_DIG 24
#define FLT_MAX_10_EXP +38
#define FLT_MAX_EXP +128
#define FLT_MIN_10_EXP -37
#define FLT_MIN_EXP -125
#define FLT_RADIX 2
#define FLT_MAX 0x1.fffffep127f
#define FLT_MIN 0x1.0p-126f
#define FLT_EPSILON 0x1.0p-23f
#define DBL_DIG 15
#define DBL_MANT_DIG 53
#define DBL_MAX_10_EXP +308
#define DBL_MAX_EXP +1024
#define DBL_MIN_10_EXP -307
#define DBL_MIN_EXP -1021
#define DBL_MAX 0x1.fffffffffffffp1023
#define DBL_MIN 0x1.0p-1022
#define DBL_EPSILON 0x1.0p-52
#define DBL_RADIX 2

/* ilogb's results for 0 and NaN (the spec allows INT_MIN or -INT_MAX, and INT_MAX or INT_MIN):
 * ilogb calls the host's libm, which returns INT_MIN for both on x86-64. */
#define FP_ILOGB0 INT_MIN
#define FP_ILOGBNAN INT_MIN

#define MAXFLOAT FLT_MAX
#define HUGE_VALF __builtin_huge_valf()
#define HUGE_VAL __builtin_huge_val()
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")

#define M_E_F 2.71828182845904523536f
#define M_LOG2E_F 1.44269504088896340736f
#define M_LOG10E_F 0.434294481903251827651f
#define M_LN2_F 0.693147180559945309417f
#define M_LN10_F 2.30258509299404568402f
#define M_PI_F 3.14159265358979323846f
#define M_PI_2_F 1.57079632679489661923f
#define M_PI_4_F 0.785398163397448309616f
#define M_1_PI_F 0.318309886183790671538f
#define M_2_PI_F 0.636619772367581343076f
#define M_2_SQRTPI_F 1.12837916709551257390f
#define M_SQRT2_F 1.41421356237309504880f
#define M_SQRT1_2_F 0.707106781186547524401f
#define M_E 2.71828182845904523536
#define M_LOG2E 1.44269504088896340736
#define M_LOG10E 0.434294481903251827651
#define M_LN2 0.693147180559945309417
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.785398163397448309616
#define M_1_PI 0.318309886183790671538
#define M_2_PI 0.636619772367581343076
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.707106781186547524401

/* as_type(): __builtin_astype wrapped in a marker call so the compiler can tell a
 * reinterpretation from an implicit conversion (libclang shows both as UNEXPOSED_EXPR). */
char __attribute__((overloadable, const)) __pyplat_astype(char);
#define as_char(x) __pyplat_astype(__builtin_astype((x), char))
char2 __attribute__((overloadable, const)) __pyplat_astype(char2);
#define as_char2(x) __pyplat_astype(__builtin_astype((x), char2))
char3 __attribute__((overloadable, const)) __pyplat_astype(char3);
#define as_char3(x) __pyplat_astype(__builtin_astype((x), char3))
char4 __attribute__((overloadable, const)) __pyplat_astype(char4);
#define as_char4(x) __pyplat_astype(__builtin_astype((x), char4))
char8 __attribute__((overloadable, const)) __pyplat_astype(char8);
#define as_char8(x) __pyplat_astype(__builtin_astype((x), char8))
char16 __attribute__((overloadable, const)) __pyplat_astype(char16);
#define as_char16(x) __pyplat_astype(__builtin_astype((x), char16))
uchar __attribute__((overloadable, const)) __pyplat_astype(uchar);
#define as_uchar(x) __pyplat_astype(__builtin_astype((x), uchar))
uchar2 __attribute__((overloadable, const)) __pyplat_astype(uchar2);
#define as_uchar2(x) __pyplat_astype(__builtin_astype((x), uchar2))
uchar3 __attribute__((overloadable, const)) __pyplat_astype(uchar3);
#define as_uchar3(x) __pyplat_astype(__builtin_astype((x), uchar3))
uchar4 __attribute__((overloadable, const)) __pyplat_astype(uchar4);
#define as_uchar4(x) __pyplat_astype(__builtin_astype((x), uchar4))
uchar8 __attribute__((overloadable, const)) __pyplat_astype(uchar8);
#define as_uchar8(x) __pyplat_astype(__builtin_astype((x), uchar8))
uchar16 __attribute__((overloadable, const)) __pyplat_astype(uchar16);
#define as_uchar16(x) __pyplat_astype(__builtin_astype((x), uchar16))
short __attribute__((overloadable, const)) __pyplat_astype(short);
#define as_short(x) __pyplat_astype(__builtin_astype((x), short))
short2 __attribute__((overloadable, const)) __pyplat_astype(short2);
#define as_short2(x) __pyplat_astype(__builtin_astype((x), short2))
short3 __attribute__((overloadable, const)) __pyplat_astype(short3);
#define as_short3(x) __pyplat_astype(__builtin_astype((x), short3))
short4 __attribute__((overloadable, const)) __pyplat_astype(short4);
#define as_short4(x) __pyplat_astype(__builtin_astype((x), short4))
short8 __attribute__((overloadable, const)) __pyplat_astype(short8);
#define as_short8(x) __pyplat_astype(__builtin_astype((x), short8))
short16 __attribute__((overloadable, const)) __pyplat_astype(short16);
#define as_short16(x) __pyplat_astype(__builtin_astype((x), short16))
ushort __attribute__((overloadable, const)) __pyplat_astype(ushort);
#define as_ushort(x) __pyplat_astype(__builtin_astype((x), ushort))
ushort2 __attribute__((overloadable, const)) __pyplat_astype(ushort2);
#define as_ushort2(x) __pyplat_astype(__builtin_astype((x), ushort2))
ushort3 __attribute__((overloadable, const)) __pyplat_astype(ushort3);
#define as_ushort3(x) __pyplat_astype(__builtin_astype((x), ushort3))
ushort4 __attribute__((overloadable, const)) __pyplat_astype(ushort4);
#define as_ushort4(x) __pyplat_astype(__builtin_astype((x), ushort4))
ushort8 __attribute__((overloadable, const)) __pyplat_astype(ushort8);
#define as_ushort8(x) __pyplat_astype(__builtin_astype((x), ushort8))
ushort16 __attribute__((overloadable, const)) __pyplat_astype(ushort16);
#define as_ushort16(x) __pyplat_astype(__builtin_astype((x), ushort16))
int __attribute__((overloadable, const)) __pyplat_astype(int);
#define as_int(x) __pyplat_astype(__builtin_astype((x), int))
int2 __attribute__((overloadable, const)) __pyplat_astype(int2);
#define as_int2(x) __pyplat_astype(__builtin_astype((x), int2))
int3 __attribute__((overloadable, const)) __pyplat_astype(int3);
#define as_int3(x) __pyplat_astype(__builtin_astype((x), int3))
int4 __attribute__((overloadable, const)) __pyplat_astype(int4);
#define as_int4(x) __pyplat_astype(__builtin_astype((x), int4))
int8 __attribute__((overloadable, const)) __pyplat_astype(int8);
#define as_int8(x) __pyplat_astype(__builtin_astype((x), int8))
int16 __attribute__((overloadable, const)) __pyplat_astype(int16);
#define as_int16(x) __pyplat_astype(__builtin_astype((x), int16))
uint __attribute__((overloadable, const)) __pyplat_astype(uint);
#define as_uint(x) __pyplat_astype(__builtin_astype((x), uint))
uint2 __attribute__((overloadable, const)) __pyplat_astype(uint2);
#define as_uint2(x) __pyplat_astype(__builtin_astype((x), uint2))
uint3 __attribute__((overloadable, const)) __pyplat_astype(uint3);
#define as_uint3(x) __pyplat_astype(__builtin_astype((x), uint3))
uint4 __attribute__((overloadable, const)) __pyplat_astype(uint4);
#define as_uint4(x) __pyplat_astype(__builtin_astype((x), uint4))
uint8 __attribute__((overloadable, const)) __pyplat_astype(uint8);
#define as_uint8(x) __pyplat_astype(__builtin_astype((x), uint8))
uint16 __attribute__((overloadable, const)) __pyplat_astype(uint16);
#define as_uint16(x) __pyplat_astype(__builtin_astype((x), uint16))
long __attribute__((overloadable, const)) __pyplat_astype(long);
#define as_long(x) __pyplat_astype(__builtin_astype((x), long))
long2 __attribute__((overloadable, const)) __pyplat_astype(long2);
#define as_long2(x) __pyplat_astype(__builtin_astype((x), long2))
long3 __attribute__((overloadable, const)) __pyplat_astype(long3);
#define as_long3(x) __pyplat_astype(__builtin_astype((x), long3))
long4 __attribute__((overloadable, const)) __pyplat_astype(long4);
#define as_long4(x) __pyplat_astype(__builtin_astype((x), long4))
long8 __attribute__((overloadable, const)) __pyplat_astype(long8);
#define as_long8(x) __pyplat_astype(__builtin_astype((x), long8))
long16 __attribute__((overloadable, const)) __pyplat_astype(long16);
#define as_long16(x) __pyplat_astype(__builtin_astype((x), long16))
ulong __attribute__((overloadable, const)) __pyplat_astype(ulong);
#define as_ulong(x) __pyplat_astype(__builtin_astype((x), ulong))
ulong2 __attribute__((overloadable, const)) __pyplat_astype(ulong2);
#define as_ulong2(x) __pyplat_astype(__builtin_astype((x), ulong2))
ulong3 __attribute__((overloadable, const)) __pyplat_astype(ulong3);
#define as_ulong3(x) __pyplat_astype(__builtin_astype((x), ulong3))
ulong4 __attribute__((overloadable, const)) __pyplat_astype(ulong4);
#define as_ulong4(x) __pyplat_astype(__builtin_astype((x), ulong4))
ulong8 __attribute__((overloadable, const)) __pyplat_astype(ulong8);
#define as_ulong8(x) __pyplat_astype(__builtin_astype((x), ulong8))
ulong16 __attribute__((overloadable, const)) __pyplat_astype(ulong16);
#define as_ulong16(x) __pyplat_astype(__builtin_astype((x), ulong16))
float __attribute__((overloadable, const)) __pyplat_astype(float);
#define as_float(x) __pyplat_astype(__builtin_astype((x), float))
float2 __attribute__((overloadable, const)) __pyplat_astype(float2);
#define as_float2(x) __pyplat_astype(__builtin_astype((x), float2))
float3 __attribute__((overloadable, const)) __pyplat_astype(float3);
#define as_float3(x) __pyplat_astype(__builtin_astype((x), float3))
float4 __attribute__((overloadable, const)) __pyplat_astype(float4);
#define as_float4(x) __pyplat_astype(__builtin_astype((x), float4))
float8 __attribute__((overloadable, const)) __pyplat_astype(float8);
#define as_float8(x) __pyplat_astype(__builtin_astype((x), float8))
float16 __attribute__((overloadable, const)) __pyplat_astype(float16);
#define as_float16(x) __pyplat_astype(__builtin_astype((x), float16))
double __attribute__((overloadable, const)) __pyplat_astype(double);
#define as_double(x) __pyplat_astype(__builtin_astype((x), double))
double2 __attribute__((overloadable, const)) __pyplat_astype(double2);
#define as_double2(x) __pyplat_astype(__builtin_astype((x), double2))
double3 __attribute__((overloadable, const)) __pyplat_astype(double3);
#define as_double3(x) __pyplat_astype(__builtin_astype((x), double3))
double4 __attribute__((overloadable, const)) __pyplat_astype(double4);
#define as_double4(x) __pyplat_astype(__builtin_astype((x), double4))
double8 __attribute__((overloadable, const)) __pyplat_astype(double8);
#define as_double8(x) __pyplat_astype(__builtin_astype((x), double8))
double16 __attribute__((overloadable, const)) __pyplat_astype(double16);
#define as_double16(x) __pyplat_astype(__builtin_astype((x), double16))

#endif /* PYPLAT_OPENCL_H */
