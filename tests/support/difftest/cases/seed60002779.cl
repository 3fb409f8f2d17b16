#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#include "difftest_batch.h"
float2 p60002779_f0(ushort x0, uint x1, double2 x2)
{
    return ((float2)(-1.5f, -2.5f));
}
void p60002779_k(__global const ulong *in, __global ulong *out, __local ulong *p60002779_lm)
{
    uint gid = get_global_id(0);
    uint lid = get_local_id(0);
    uchar4 v2 = rotate((((uchar4)(((uchar)in[(gid * 8u + 30u) & 255u]))) + ((uchar4)(((uchar)in[(gid * 30u + 219u) & 255u]), ((uchar)in[(gid * 10u + 91u) & 255u]), ((uchar)in[(gid * 31u + 175u) & 255u]), ((uchar)in[(gid * 27u + 15u) & 255u])))), ((uchar4)(((uchar)in[(gid * 5u + 105u) & 255u]), ((uchar2)(((uchar)in[(gid * 26u + 180u) & 255u]), ((uchar)in[(gid * 29u + 13u) & 255u]))), ((uchar)in[(gid * 23u + 22u) & 255u]))));
    if (as_int(as_uint(as_int((uint)in[(gid * 17u + 227u) & 255u])) + as_uint(((int)0))) & 2) {
        int8 v5 = bitselect(((int8)(as_int((uint)in[(gid * 4u + 31u) & 255u]), as_int((uint)in[(gid * 20u + 243u) & 255u]), ((int2)(as_int((uint)in[(gid * 8u + 244u) & 255u]), as_int((uint)in[(gid * 3u + 223u) & 255u]))), ((int4)(((int)INT_MAX), ((int)-1), as_int((uint)in[(gid * 4u + 35u) & 255u]), as_int((uint)in[(gid * 31u + 184u) & 255u]))))), ((int8)(((int)-1))), ((int8)(as_int((uint)in[(gid * 27u + 77u) & 255u]))));
        v2.lo = rotate(((uchar2)(v2.s0, v2.s0)), ((uchar2)(v2.s0, v2.s1)));
    }
    out[0u + gid * 16u + 0u] = ((((ulong)(uchar)(v2.s0)) * 0x100000001b3UL + (ulong)(uchar)(v2.s1)) * 0x100000001b3UL + (ulong)(uchar)(v2.s2)) * 0x100000001b3UL + (ulong)(uchar)(v2.s3);
}

__kernel __attribute__((reqd_work_group_size(8, 1, 1)))
void difftest_batch(__global const ulong *in, __global ulong *out)
{
    __local ulong lm[8];
    p60002779_k(in, out, lm);
}
