"""async_work_group_copy / async_work_group_strided_copy / wait_group_events / prefetch, and the
other builtins that write through a pointer argument.

The runtime orders a read of a buffer after the kernels that write it, and learns which arguments
a kernel writes from the compiler (ArgInfo.written). A destination written only by a builtin (the
__global destination of an async copy from __local, the out parameters of fract, modf, sincos,
frexp, lgamma_r, remquo) used to count as unwritten, so with more than one worker the host could
read the buffer before the kernel had run: the whole destination came back unwritten now and
then (CTS test_basic async_copy_local_to_global, test_half vstore_half __local variants)."""
import sys
import textwrap

import pytest

from support.compiled import ok

WRITERS = {
    "async_local_to_global": """
        __kernel void k(__global int *dst, __global const int *src, __local int *lb) {
            lb[get_local_id(0)] = src[get_global_id(0)];
            barrier(CLK_LOCAL_MEM_FENCE);
            event_t e = async_work_group_copy(dst + get_group_id(0) * get_local_size(0),
                                              (__local const int *)lb, get_local_size(0), 0);
            wait_group_events(1, &e);
        }""",
    "async_strided_local_to_global": """
        __kernel void k(__global int *dst, __global const int *src, __local int *lb) {
            lb[get_local_id(0)] = src[get_global_id(0)];
            barrier(CLK_LOCAL_MEM_FENCE);
            event_t e = async_work_group_strided_copy(dst + get_group_id(0), (__local const int *)lb,
                                                      get_local_size(0), 2, 0);
            wait_group_events(1, &e);
        }""",
    "fract": "__kernel void k(__global float *dst, __global const float *src) "
             "{ int i = get_global_id(0); float f = fract(src[i], dst + i); }",
    "modf": "__kernel void k(__global float *dst, __global const float *src) "
            "{ int i = get_global_id(0); src[i] > 0 ? modf(src[i], &dst[i]) : 0.0f; }",
    "sincos": "__kernel void k(__global float4 *dst, __global const float4 *src) "
              "{ float4 s = sincos(*src, dst); }",
    "frexp": "__kernel void k(__global int *dst, __global const float *src) "
             "{ float m = frexp(src[0], &dst[get_global_id(0)]); }",
    "lgamma_r": "__kernel void k(__global int *dst, __global const double *src) "
                "{ double m = lgamma_r(src[0], dst); }",
    "remquo": "__kernel void k(__global int *dst, __global const float *src) "
              "{ float m = remquo(src[0], src[1], dst + 3); }",
}


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_builtin_destinations_count_as_written(name):
    r = ok(WRITERS[name])
    args = {a.name: a.written for a in r.kernels["k"].args}
    assert args["dst"] is True and args["src"] is False, args


def test_readers_leave_arguments_unwritten():
    r = ok("""__kernel void k(__global float *dst, __global const float *src, __local float *lb) {
        float4 v = vload4(0, src);
        prefetch(src, 4);
        event_t e = async_work_group_copy(lb, src, 16, 0);
        wait_group_events(1, &e);
        dst[get_global_id(0)] = v.x + lb[0] + vload_half(0, (__global const half *)src);
    }""")
    args = {a.name: a.written for a in r.kernels["k"].args}
    assert args == {"dst": True, "src": False, "lb": True}, args


# Every direction, plain and strided, element types of 1 to 16 bytes (vectors included), work-group
# sizes from 1 to 128 and several copies per work-item, repeated: each result read back at once.
CHILD = textwrap.dedent('''
    import sys
    import numpy as np
    import pyopencl as cl

    platform = next(p for p in cl.get_platforms() if p.name == "PyPlat")
    ctx = cl.Context(platform.get_devices())
    q = cl.CommandQueue(ctx)
    TYPES = [("char", np.int8, 1), ("short2", np.int16, 2), ("int", np.int32, 1),
             ("float4", np.float32, 4), ("long2", np.int64, 2)]
    bad = []
    for T, dt, width in TYPES:
        prg = cl.Program(ctx, """
        __kernel void l2g(__global const ELT *src, __global ELT *dst, __local ELT *lb, int cpw, int cpi) {
            for (int i = 0; i < cpi; i++) lb[get_local_id(0) * cpi + i] = src[get_global_id(0) * cpi + i];
            barrier(CLK_LOCAL_MEM_FENCE);
            event_t e = async_work_group_copy(dst + cpw * get_group_id(0), (__local const ELT *)lb, cpw, 0);
            wait_group_events(1, &e);
        }
        __kernel void g2l(__global const ELT *src, __global ELT *dst, __local ELT *lb, int cpw, int cpi) {
            event_t e = async_work_group_copy(lb, src + cpw * get_group_id(0), cpw, 0);
            wait_group_events(1, &e);
            for (int i = 0; i < cpi; i++) dst[get_global_id(0) * cpi + i] = lb[get_local_id(0) * cpi + i];
        }
        __kernel void l2g_strided(__global const ELT *src, __global ELT *dst, __local ELT *lb, int cpw, int cpi) {
            for (int i = 0; i < cpi; i++) lb[get_local_id(0) * cpi + i] = src[get_global_id(0) * cpi + i];
            barrier(CLK_LOCAL_MEM_FENCE);
            event_t e = async_work_group_strided_copy(dst + get_group_id(0), (__local const ELT *)lb, cpw,
                                                      get_num_groups(0), 0);
            wait_group_events(1, &e);
        }
        __kernel void g2l_strided(__global const ELT *src, __global ELT *dst, __local ELT *lb, int cpw, int cpi) {
            prefetch(src + get_group_id(0), cpw);
            event_t e = async_work_group_strided_copy(lb, src + get_group_id(0), cpw, get_num_groups(0), 0);
            wait_group_events(1, &e);
            for (int i = 0; i < cpi; i++) dst[get_global_id(0) * cpi + i] = lb[get_local_id(0) * cpi + i];
        }""".replace("ELT", T)).build()
        kernels = {n: cl.Kernel(prg, n) for n in ("l2g", "g2l", "l2g_strided", "g2l_strided")}
        for ls in (1, 3, 16, 64, 128):
            for cpi in (1, 5):
                ng, cpw = 6, ls * cpi
                a = (np.arange(cpw * ng * width) % 119 + 1).astype(dt)
                src = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
                by_group = a.reshape(ng, cpw, width)
                for name, k in kernels.items():
                    want = a if not name.endswith("strided") else (
                        by_group.transpose(1, 0, 2).reshape(-1) if name.startswith("l2g") else
                        a.reshape(cpw, ng, width).transpose(1, 0, 2).reshape(-1))
                    for rep in range(4):
                        got = np.zeros_like(a)
                        dst = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=got)
                        k(q, (ls * ng,), (ls,), src, dst, cl.LocalMemory(cpw * a.itemsize * width),
                          np.int32(cpw), np.int32(cpi))
                        cl.enqueue_copy(q, got, dst)
                        if not np.array_equal(got, want):
                            bad.append((T, name, ls, cpi, rep, int(np.count_nonzero(got != want))))
    print("bad", bad[:10])
    print("ok" if not bad else "FAILED")
''')


@pytest.mark.parametrize("workers", [1, 2, 3, 4])
def test_async_copies_every_direction_under_stress(run_with_pyplat, workers):
    pytest.importorskip("pyopencl")
    r = run_with_pyplat([sys.executable, "-c", CHILD], env={"PYPLAT_WORKERS": str(workers)})
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (r.stdout[-2000:], r.stderr[-3000:])
