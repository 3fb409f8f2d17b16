# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Native launcher of work-group functions: runs an NDRange without the GIL.

The layout of WorkGroupContext and the work-group function's signature are the compiler's ABI
(pyplat/compiler/abi.py); keep the two in step.
"""
from libc.stdint cimport uint64_t

cdef struct WorkGroupContext:
    uint64_t work_dim
    uint64_t global_size[3]
    uint64_t local_size[3]
    uint64_t num_groups[3]
    uint64_t global_offset[3]
    uint64_t group_id[3]
    void *local_mem

ctypedef void (*work_group_fn)(void **args, const WorkGroupContext *ctx) noexcept nogil


def run_ndrange(size_t function, size_t args, unsigned work_dim, global_size, local_size,
                global_offset, size_t local_mem):
    """Run every work-group of the range, one after another, on the calling thread."""
    cdef WorkGroupContext ctx
    cdef int d
    ctx.work_dim = work_dim
    for d in range(3):
        ctx.global_size[d] = global_size[d]
        ctx.local_size[d] = local_size[d]
        ctx.global_offset[d] = global_offset[d]
        ctx.num_groups[d] = ctx.global_size[d] // ctx.local_size[d]
    ctx.local_mem = <void *>local_mem
    cdef work_group_fn fn = <work_group_fn>function
    cdef void **argv = <void **>args
    cdef uint64_t gx, gy, gz
    with nogil:
        for gz in range(ctx.num_groups[2]):
            ctx.group_id[2] = gz
            for gy in range(ctx.num_groups[1]):
                ctx.group_id[1] = gy
                for gx in range(ctx.num_groups[0]):
                    ctx.group_id[0] = gx
                    fn(argv, &ctx)
