# Part of pyplat/api/_native.pyx (included there, before native_kernel_args.pxi).
# ---------------------------------------------------------------------------------------------
# clSetKernelArg's rules of an argument's index, size and value, written once: the native entry
# (native_kernel_args.pxi) refuses with them itself, the Python entry (api/kernel.py) raises
# the same refusals through kernel_arg_refusal. An argument's kind is its LaunchShape.kinds
# entry (core/kernel.py): a value, a buffer, a __local pointer or a sampler. Whether a buffer
# handle is a buffer of the kernel's context is the handles' rule (native_handle_rules.pxi,
# api/kernel.py).
# ---------------------------------------------------------------------------------------------

DEF KA_VALUE = 0                  # argument kinds (LaunchShape.kinds)
DEF KA_MEM = 1
DEF KA_LOCAL = 2
DEF KA_SAMPLER = 3


cdef int kernel_arg_valid(uint32_t index, uint32_t n_args, int kind, uint64_t expected_size, uint64_t size,
                          size_t value, refusal_t *why) noexcept nogil:
    """Spec (clSetKernelArg): CL_INVALID_ARG_INDEX if arg_index is not a valid argument index;
    CL_INVALID_ARG_VALUE if arg_value is NULL for an argument not declared __local, or not NULL
    for one that is; CL_INVALID_ARG_SIZE if arg_size does not match the size of the argument's
    data type, is not sizeof(cl_mem) for a memory object or sizeof(cl_sampler) for a sampler,
    or is 0 for a __local argument; CL_INVALID_SAMPLER if the value of a sampler argument is not
    a valid sampler -- none is here: clCreateSampler needs image support, which no device has."""
    if index >= n_args:
        return refuse(why, CL_INVALID_ARG_INDEX, "argument {a} of a kernel with {b} arguments", index, n_args)
    if kind == KA_LOCAL:
        if value != 0:
            return refuse(why, CL_INVALID_ARG_VALUE, "argument {a} is __local: its value must be NULL", index, 0)
        if size == 0:
            return refuse(why, CL_INVALID_ARG_SIZE, "argument {a} is __local: its size must not be 0", index, 0)
    elif kind == KA_MEM:
        if size != sizeof(void *):
            return refuse(why, CL_INVALID_ARG_SIZE, "argument {a} is a buffer: its size is sizeof(cl_mem), not {b}",
                          index, size)
    elif kind == KA_SAMPLER:
        if size != sizeof(void *):
            return refuse(why, CL_INVALID_ARG_SIZE, "argument {a} is a sampler_t: its size is sizeof(cl_sampler), "
                          "not {b}", index, size)
        return refuse(why, CL_INVALID_SAMPLER, "argument {a} is a sampler_t: no samplers can be created on this "
                      "platform", index, 0)
    else:
        if value == 0:
            return refuse(why, CL_INVALID_ARG_VALUE, "argument {a}'s arg_value is NULL", index, 0)
        if size != expected_size:
            return refuse3(why, CL_INVALID_ARG_SIZE, "argument {a} takes {b} bytes, not {c}", index, expected_size,
                           size)
    return 1


def kernel_arg_refusal(uint32_t index, uint32_t n_args, int kind, uint64_t expected_size, uint64_t size, size_t value):
    """kernel_arg_valid for the Python entry: None, or the refusal (code, reason)."""
    cdef refusal_t why
    return refusal_of(kernel_arg_valid(index, n_args, kind, expected_size, size, value, &why), &why)
