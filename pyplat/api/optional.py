"""Entry points of the optional OpenCL 3.0 features PyPlat's device does not report.

The 3.0 spec keeps these functions in every platform and says what each returns when no device
supports the feature (CL_DEVICE_SVM_CAPABILITIES 0, CL_DEVICE_PIPE_SUPPORT false,
CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES 0, CL_DEVICE_IMAGE_SUPPORT false, no CL_DEVICE_IL_VERSION,
CL_DEVICE_MAX_NUM_SUB_GROUPS 0, no program-scope global destructors): mostly
CL_INVALID_OPERATION, after the usual checks of the handles they are given, and
CL_INVALID_MEM_OBJECT for queries of objects that cannot exist (pipes, images). Answering here,
rather than through the shim's "not implemented" fallback, gives the spec's code in every case
and keeps stderr quiet for programs probing for features (the CTS's consistency_* tests do).
"""
from pyplat import cl
from pyplat.api.context import lookup_context
from pyplat.api.device import lookup_device
from pyplat.api.entry import entry
from pyplat.api.errors import CLError, check
from pyplat.api.kernel import lookup_kernel
from pyplat.api.memory import lookup_buffer
from pyplat.api.program import lookup_program
from pyplat.api.queue import lookup_queue


def _unsupported(what):
    return CLError(cl.CL_INVALID_OPERATION, f"the device does not support {what}")


# --- shared virtual memory (CL_DEVICE_SVM_CAPABILITIES is 0) ------------------------------------

@entry
def clSVMAlloc(context, flags, size, alignment):
    return 0   # "returns NULL ... if no devices in context support SVM"


@entry
def clSVMFree(context, svm_pointer):
    return None   # nothing can have been allocated


def _svm_enqueue(command_queue):
    lookup_queue(command_queue)
    raise _unsupported("shared virtual memory")


@entry
def clEnqueueSVMFree(command_queue, num_svm_pointers, svm_pointers, pfn_free_func, user_data,
                     num_events_in_wait_list, event_wait_list, event):
    _svm_enqueue(command_queue)


@entry
def clEnqueueSVMMemcpy(command_queue, blocking_copy, dst_ptr, src_ptr, size, num_events_in_wait_list,
                       event_wait_list, event):
    _svm_enqueue(command_queue)


@entry
def clEnqueueSVMMemFill(command_queue, svm_ptr, pattern, pattern_size, size, num_events_in_wait_list,
                        event_wait_list, event):
    _svm_enqueue(command_queue)


@entry
def clEnqueueSVMMap(command_queue, blocking_map, flags, svm_ptr, size, num_events_in_wait_list,
                    event_wait_list, event):
    _svm_enqueue(command_queue)


@entry
def clEnqueueSVMUnmap(command_queue, svm_ptr, num_events_in_wait_list, event_wait_list, event):
    _svm_enqueue(command_queue)


@entry
def clEnqueueSVMMigrateMem(command_queue, num_svm_pointers, svm_pointers, sizes, flags,
                           num_events_in_wait_list, event_wait_list, event):
    _svm_enqueue(command_queue)


@entry
def clSetKernelArgSVMPointer(kernel, arg_index, arg_value):
    lookup_kernel(kernel)
    raise _unsupported("shared virtual memory")


SVM_EXEC_INFO = (cl.CL_KERNEL_EXEC_INFO_SVM_PTRS, cl.CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM)


@entry
def clSetKernelExecInfo(kernel, param_name, param_value_size, param_value):
    lookup_kernel(kernel)
    check(param_name in SVM_EXEC_INFO, cl.CL_INVALID_VALUE, f"unknown param_name {param_name:#x}")
    raise _unsupported("shared virtual memory")


# --- pipes (CL_DEVICE_PIPE_SUPPORT is false) ----------------------------------------------------

@entry
def clCreatePipe(context, flags, pipe_packet_size, pipe_max_packets, properties, errcode_ret):
    lookup_context(context)
    raise _unsupported("pipes")


@entry
def clGetPipeInfo(pipe, param_name, param_value_size, param_value, param_value_size_ret):
    lookup_buffer(pipe)   # CL_INVALID_MEM_OBJECT for what is no memory object at all
    raise CLError(cl.CL_INVALID_MEM_OBJECT, "not a pipe: no pipes can be created on this platform")


# --- on-device queues (CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES is 0) ------------------------------

@entry
def clSetDefaultDeviceCommandQueue(context, device, command_queue):
    ctx = lookup_context(context)
    dev = lookup_device(device)
    check(dev in ctx.devices, cl.CL_INVALID_DEVICE, "device is not in the context")
    raise _unsupported("on-device queues")


# --- images (CL_DEVICE_IMAGE_SUPPORT is false) ---------------------------------------------------

def _no_images(context):
    lookup_context(context)
    raise _unsupported("images")


@entry
def clCreateImage(context, flags, image_format, image_desc, host_ptr, errcode_ret):
    _no_images(context)


@entry
def clCreateImageWithProperties(context, properties, flags, image_format, image_desc, host_ptr,
                                errcode_ret):
    _no_images(context)


@entry
def clCreateImage2D(context, flags, image_format, image_width, image_height, image_row_pitch,
                    host_ptr, errcode_ret):
    _no_images(context)


@entry
def clCreateImage3D(context, flags, image_format, image_width, image_height, image_depth,
                    image_row_pitch, image_slice_pitch, host_ptr, errcode_ret):
    _no_images(context)


@entry
def clCreateSampler(context, normalized_coords, addressing_mode, filter_mode, errcode_ret):
    _no_images(context)


@entry
def clCreateSamplerWithProperties(context, sampler_properties, errcode_ret):
    _no_images(context)


@entry
def clGetImageInfo(image, param_name, param_value_size, param_value, param_value_size_ret):
    lookup_buffer(image)
    raise CLError(cl.CL_INVALID_MEM_OBJECT, "not an image: no images can be created on this platform")


# --- intermediate languages (no CL_DEVICE_IL_VERSION) -------------------------------------------

@entry
def clCreateProgramWithIL(context, il, length, errcode_ret):
    lookup_context(context)
    raise _unsupported("intermediate language (SPIR-V) programs")


@entry
def clSetProgramSpecializationConstant(program, spec_id, spec_size, spec_value):
    lookup_program(program)
    raise _unsupported("intermediate language (SPIR-V) programs")


# --- sub-groups (CL_DEVICE_MAX_NUM_SUB_GROUPS is 0) ---------------------------------------------

@entry
def clGetKernelSubGroupInfo(kernel, device, param_name, input_value_size, input_value,
                            param_value_size, param_value, param_value_size_ret):
    lookup_kernel(kernel)
    if device:
        lookup_device(device)
    raise _unsupported("sub-groups")


# --- program-scope global constructors and destructors (none supported) -------------------------

@entry
def clSetProgramReleaseCallback(program, pfn_notify, user_data):
    lookup_program(program)
    check(pfn_notify, cl.CL_INVALID_VALUE, "pfn_notify is NULL")
    raise _unsupported("program-scope global destructors")
