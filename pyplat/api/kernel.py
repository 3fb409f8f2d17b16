"""Kernels: creation, arguments, kernel / work-group / argument info."""
import ctypes

from pyplat import cl
from pyplat.api import _native, handles, info
from pyplat.api.entry import entry
from pyplat.api.errors import CLError, check, raise_refusal
from pyplat.api.program import lookup_program
from pyplat.core.device import Device
from pyplat.core.kernel import Kernel
from pyplat.core.memory import Buffer


def lookup_kernel(address):
    return handles.lookup(address, Kernel, cl.CL_INVALID_KERNEL)


@entry
def clCreateKernel(program, kernel_name, errcode_ret):
    prog = lookup_program(program)
    check(prog.built, cl.CL_INVALID_PROGRAM_EXECUTABLE, "the program has not been built")
    check(kernel_name, cl.CL_INVALID_VALUE, "kernel_name is NULL")
    name = ctypes.string_at(kernel_name).decode("utf-8", errors="replace")
    kinfo = prog.result.kernels.get(name)
    check(kinfo is not None, cl.CL_INVALID_KERNEL_NAME, f"no kernel named {name!r}")
    return handles.created(_learnt(program, Kernel(prog, kinfo)), handles.KERNEL)


def _learnt(program, kernel):
    """A kernel the Python entry made: later ones of its name are made natively
    (api/native_kernels.pxi)."""
    if kernel.slot is not None and kernel.shape.fast:
        _native.learn_kernel_layout(program, kernel.name.encode("utf-8"), kernel.slot, kernel.program.context)
    return kernel


def adopt_native_kernel(program, name, slot):
    """The core Kernel of a kernel the native clCreateKernel made (api/native_kernels.pxi),
    around its slot: the arguments set natively so far are taken from there."""
    return Kernel(program, program.result.kernels[name], slot=slot)


@entry
def clCreateKernelsInProgram(program, num_kernels, kernels, num_kernels_ret):
    prog = lookup_program(program)
    check(prog.built, cl.CL_INVALID_PROGRAM_EXECUTABLE, "the program has not been built")
    infos = list(prog.result.kernels.values())
    if kernels:
        check(num_kernels >= len(infos), cl.CL_INVALID_VALUE, "num_kernels is too small")
        handles.write_handles(kernels, [handles.created(_learnt(program, Kernel(prog, k)), handles.KERNEL)
                                        for k in infos])
    info.write_uint(num_kernels_ret, len(infos))


@entry
def clCloneKernel(source_kernel, errcode_ret):
    return handles.created(lookup_kernel(source_kernel).clone(), handles.KERNEL)


@entry
def clRetainKernel(kernel):
    handles.retain(lookup_kernel(kernel))


@entry
def clReleaseKernel(kernel):
    handles.release(lookup_kernel(kernel))


@entry
def clSetKernelArg(kernel, arg_index, arg_size, arg_value):
    k = lookup_kernel(kernel)
    n = len(k.args)
    raise_refusal(_native.kernel_arg_refusal(arg_index, n, k.shape.kinds[arg_index] if arg_index < n else 0,
                                             k.shape.value_sizes[arg_index] if arg_index < n else 0, arg_size,
                                             arg_value or 0))      # (native_kernel_arg_rules.pxi)
    arg = k.info.args[arg_index]
    handle = None
    if arg.kind == "local":
        k.set_arg(arg_index, ("local", arg_size))
    elif arg.kind in ("global", "constant"):
        handle = ctypes.c_size_t.from_address(arg_value).value if arg_value else 0
        buffer = handles.lookup(handle, Buffer, cl.CL_INVALID_MEM_OBJECT) if handle else None
        if buffer is not None:
            check(buffer.context is k.program.context, cl.CL_INVALID_MEM_OBJECT, "buffer from another context")
        k.set_arg(arg_index, ("mem", buffer))
    else:
        k.set_arg(arg_index, ("value", ctypes.string_at(arg_value, arg_size)))
    if k.slot is not None:            # what the native clSetKernelArg compares with
        k.slot.note_set(arg_index, handle)


INFO = {
    cl.CL_KERNEL_FUNCTION_NAME: (info.string, lambda k: k.name),
    cl.CL_KERNEL_NUM_ARGS: (info.uint, lambda k: len(k.args)),
    cl.CL_KERNEL_REFERENCE_COUNT: (info.uint, handles.reference_count),
    cl.CL_KERNEL_CONTEXT: (info.pointer, lambda k: handles.handle_of(k.program.context, handles.CONTEXT)),
    cl.CL_KERNEL_PROGRAM: (info.pointer, lambda k: handles.handle_of(k.program, handles.PROGRAM)),
    cl.CL_KERNEL_ATTRIBUTES: (info.string, lambda k: k.info.attributes),
}


@entry
def clGetKernelInfo(kernel, param_name, param_value_size, param_value, param_value_size_ret):
    info.query(INFO, lookup_kernel(kernel), param_name, param_value_size, param_value, param_value_size_ret)


def work_group_size(kernel, device):
    reqd = kernel.info.reqd_work_group_size
    if reqd and reqd[0]:
        return reqd[0] * reqd[1] * reqd[2]
    return device.max_work_group_size


def _global_work_size(kd):
    raise CLError(cl.CL_INVALID_VALUE, "CL_KERNEL_GLOBAL_WORK_SIZE is only for custom devices and built-in kernels")


WG_INFO = {
    cl.CL_KERNEL_WORK_GROUP_SIZE: (info.size_t, lambda kd: work_group_size(*kd)),
    cl.CL_KERNEL_COMPILE_WORK_GROUP_SIZE: (info.size_t_array, lambda kd: list(kd[0].info.reqd_work_group_size or (0, 0, 0))),
    cl.CL_KERNEL_LOCAL_MEM_SIZE: (info.ulong, lambda kd: kd[0].info.local_mem_size + kd[0].local_args_size()),
    cl.CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: (info.size_t, lambda kd: kd[1].preferred_work_group_size_multiple),
    cl.CL_KERNEL_PRIVATE_MEM_SIZE: (info.ulong, lambda kd: kd[0].info.private_mem_size),
    cl.CL_KERNEL_GLOBAL_WORK_SIZE: (info.size_t_array, _global_work_size),
}


@entry
def clGetKernelWorkGroupInfo(kernel, device, param_name, param_value_size, param_value, param_value_size_ret):
    k = lookup_kernel(kernel)
    if device:
        dev = handles.lookup(device, Device, cl.CL_INVALID_DEVICE)
        check(dev in k.program.devices, cl.CL_INVALID_DEVICE, "device not associated with the kernel")
    else:
        check(len(k.program.devices) == 1, cl.CL_INVALID_DEVICE, "device is NULL but the program has several")
        dev = k.program.devices[0]
    info.query(WG_INFO, (k, dev), param_name, param_value_size, param_value, param_value_size_ret)
    if k.slot is not None and param_name in WG_CONSTANTS:    # the native entry answers from now on
        k.slot.learn_work_group_info(device or 0, work_group_size(k, dev),
                                     list(k.info.reqd_work_group_size or (0, 0, 0)),
                                     dev.preferred_work_group_size_multiple,
                                     k.info.local_mem_size + k.local_args_size(), k.info.private_mem_size)


# What the native clGetKernelWorkGroupInfo answers once the Python entry has (per device)
WG_CONSTANTS = (cl.CL_KERNEL_WORK_GROUP_SIZE, cl.CL_KERNEL_COMPILE_WORK_GROUP_SIZE, cl.CL_KERNEL_LOCAL_MEM_SIZE,
                cl.CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, cl.CL_KERNEL_PRIVATE_MEM_SIZE)


ARG_INFO = {
    cl.CL_KERNEL_ARG_ADDRESS_QUALIFIER: (info.uint, lambda a: a.address_qualifier),
    cl.CL_KERNEL_ARG_ACCESS_QUALIFIER: (info.uint, lambda a: a.access_qualifier),
    cl.CL_KERNEL_ARG_TYPE_NAME: (info.string, lambda a: a.type_name),
    cl.CL_KERNEL_ARG_TYPE_QUALIFIER: (info.bitfield, lambda a: a.type_qualifier),
    cl.CL_KERNEL_ARG_NAME: (info.string, lambda a: a.name),
}


@entry
def clGetKernelArgInfo(kernel, arg_index, param_name, param_value_size, param_value, param_value_size_ret):
    k = lookup_kernel(kernel)
    check(arg_index < len(k.args), cl.CL_INVALID_ARG_INDEX, f"kernel has {len(k.args)} arguments")
    check(param_name in ARG_INFO, cl.CL_INVALID_VALUE, f"unknown param_name {param_name:#x}")
    # "Kernel argument information is only available if the program object associated with
    # kernel ... is created with clCreateProgramWithSource and the program executable is built
    # with the -cl-kernel-arg-info option specified in the options argument to clBuildProgram
    # or clCompileProgram" and "CL_KERNEL_ARG_INFO_NOT_AVAILABLE if the argument information is
    # not available for kernel" (OpenCL 3.0, clGetKernelArgInfo): all five queries alike, as
    # PoCL 5 answers. A binary or a linked program keeps what its compile recorded per kernel.
    check(k.info.arg_info, cl.CL_KERNEL_ARG_INFO_NOT_AVAILABLE,
          "the program was not built with -cl-kernel-arg-info")
    info.query(ARG_INFO, k.info.args[arg_index], param_name, param_value_size, param_value, param_value_size_ret)
