"""Entry points of the optional OpenCL 3.0 features PyPlat's device does not report, and of the
extensions (GL/EGL sharing, device fission) whose slots the ICD dispatch table has.

The 3.0 spec keeps these functions in every platform and says what each returns when no device
supports the feature (CL_DEVICE_SVM_CAPABILITIES 0, CL_DEVICE_PIPE_SUPPORT false,
CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES 0, CL_DEVICE_IMAGE_SUPPORT false, no CL_DEVICE_IL_VERSION,
CL_DEVICE_MAX_NUM_SUB_GROUPS 0, no program-scope global destructors, no built-in kernels).
Every entry point first checks what its "Errors" list names and a caller can get wrong whatever
the device supports: its handles (NULL, foreign, released or of the wrong kind give the
CL_INVALID_<OBJECT> code), wait lists, flags and sizes; then it reports the missing feature the
spec's way (mostly CL_INVALID_OPERATION). Objects that cannot exist here (images, samplers,
pipes, GL objects) are invalid handles: a buffer given as an image is CL_INVALID_MEM_OBJECT.
Arguments that could only be valid with the feature (SVM pointers, which only clSVMAlloc can
make) are not checked: the CTS's consistency_* tests pass NULL ones and expect
CL_INVALID_OPERATION.

Each entry point is a row: its name, its checks in order (small step functions over the call's
arguments by name, from the generated dispatch list), and the final error. Answering here,
rather than through the shim's "not implemented" fallback, also keeps stderr quiet for programs
probing for features.
"""
import ctypes

from pyplat import cl
from pyplat.api import _native, info
from pyplat.api._entry_points import ENTRY_POINTS
from pyplat.api.context import lookup_context
from pyplat.api.device import clReleaseDevice, clRetainDevice, lookup_device
from pyplat.api.entry import IMPLEMENTED, entry
from pyplat.api.errors import CLError, check, raise_refusal
from pyplat.api.event import wait_list
from pyplat.api.kernel import lookup_kernel
from pyplat.api.memory import IMAGE_TYPES, check_flags, lookup_buffer
from pyplat.api.program import lookup_program
from pyplat.api.queue import lookup_queue

_ARG_NAMES = {slot[0]: [n for n, _ in slot[2]] for slot in ENTRY_POINTS if slot}


def declare(name, *steps, then):
    """Register entry point `name`: run `steps` (each takes the dict of the call's arguments by
    name; handle steps add the context they found under "_ctx") and raise `then`, a pair
    (code, message), if all pass."""
    names = _ARG_NAMES[name]

    def fn(*args):
        a = dict(zip(names, args))
        for step in steps:
            step(a)
        raise CLError(*then)
    fn.__name__ = fn.__qualname__ = name
    return entry(fn)


def unsupported(what):
    return cl.CL_INVALID_OPERATION, f"the device does not support {what}"


# --- steps: handles -------------------------------------------------------------------------------

def queue(name="command_queue"):
    def step(a):
        a["_ctx"] = lookup_queue(a[name]).context
    return step


def context(name="context"):
    def step(a):
        a["_ctx"] = lookup_context(a[name])
    return step


def kernel(name="kernel"):
    def step(a):
        a["_kernel"] = k = lookup_kernel(a[name])
        a["_ctx"] = k.program.context
    return step


def program(name="program"):
    def step(a):
        a["_ctx"] = lookup_program(a[name]).context
    return step


def device(name="device"):
    """A device of the context found so far."""
    def step(a):
        dev = lookup_device(a[name])
        check(dev in a["_ctx"].devices, cl.CL_INVALID_DEVICE, "device is not in the context")
    return step


def any_device(name):
    def step(a):
        lookup_device(a[name])
    return step


def kernel_device(name="device"):
    """clGetKernel*Info's device: one of the kernel's program's, or NULL if it has only one."""
    def step(a):
        devices = a["_kernel"].program.devices
        if a[name]:
            check(lookup_device(a[name]) in devices, cl.CL_INVALID_DEVICE, "device not associated with the kernel")
        else:
            check(len(devices) == 1, cl.CL_INVALID_DEVICE, "device is NULL but the program has several")
    return step


def mem(name):
    """A buffer of the context found so far."""
    def step(a):
        buf = lookup_buffer(a[name])
        check(buf.context is a["_ctx"], cl.CL_INVALID_CONTEXT, f"{name} is from another context")
    return step


def memobj(name):
    """Any memory object."""
    def step(a):
        lookup_buffer(a[name])
    return step


def image(name, what="an image"):
    """An image (or pipe) argument: none can exist, so a buffer (or anything else) is invalid."""
    def step(a):
        lookup_buffer(a[name])
        raise CLError(cl.CL_INVALID_MEM_OBJECT, f"{name} is not {what}: none can be created on this platform")
    return step


def sampler(name="sampler"):
    def step(a):
        raise CLError(cl.CL_INVALID_SAMPLER, "not a sampler: no samplers can be created on this platform")
    return step


def mem_list(count, array, not_shared):
    """A list of memory objects to share with another API: each must be a buffer of the queue's
    context, and none was made from the other API's objects (`not_shared`: code, message)."""
    def step(a):
        n, address = a[count], a[array]
        check(bool(n) == bool(address), cl.CL_INVALID_VALUE, f"{count} and {array} disagree")
        if n:
            for handle in (ctypes.c_size_t * n).from_address(address):
                check(lookup_buffer(handle).context is a["_ctx"], cl.CL_INVALID_CONTEXT,
                      "memory object from another context")
            raise CLError(*not_shared)
    return step


def waits(count="num_events_in_wait_list", events="event_wait_list"):
    def step(a):
        wait_list(a[count], a[events], a["_ctx"])
    return step


# --- steps: values --------------------------------------------------------------------------------

def require(predicate, message, code=cl.CL_INVALID_VALUE):
    """A check of argument values: predicate(args) must hold."""
    def step(a):
        check(predicate(a), code, message)
    return step


def rule(refusal_of):
    """A rule both kinds of entry apply (api/native_buffer_rules.pxi): refusal_of(args) gives
    None or the refusal (code, reason)."""
    def step(a):
        raise_refusal(refusal_of(a))
    return step


def nonnull(*names):
    return require(lambda a: all(a[n] for n in names), f"{' or '.join(names)} is NULL")


def count_and_array(count, array):
    return require(lambda a: bool(a[count]) == bool(a[array]), f"{count} and {array} disagree")


def only_bits(name, allowed):
    return require(lambda a: not a[name] & ~allowed, f"unknown bits in {name}")


def mem_flags(name="flags"):
    def step(a):
        check_flags(a[name])
    return step


def host_ptr(flags="flags", ptr="host_ptr"):
    return rule(lambda a: _native.host_ptr_refusal(a[flags], a[ptr] or 0))     # (native_creation_rules.pxi)


def no_properties(name="properties"):
    """A property list that must be NULL or empty: PyPlat knows no properties here."""
    def step(a):
        pairs, _ = info.read_properties(a[name])
        check(not pairs, cl.CL_INVALID_PROPERTY, f"unknown property {pairs[0][0]:#x}" if pairs else "")
    return step


# --- shared virtual memory (CL_DEVICE_SVM_CAPABILITIES is 0) ------------------------------------

@entry
def clSVMAlloc(context, flags, size, alignment):
    return 0   # "returns NULL ... if no devices in context support SVM"


@entry
def clSVMFree(context, svm_pointer):
    return None   # nothing can have been allocated


SVM = unsupported("shared virtual memory")
declare("clEnqueueSVMFree", queue(), count_and_array("num_svm_pointers", "svm_pointers"), waits(), then=SVM)
declare("clEnqueueSVMMemcpy", queue(), waits(), then=SVM)
declare("clEnqueueSVMMemFill", queue(),
        rule(lambda a: _native.pattern_refusal(a["pattern"] or 0, a["pattern_size"], 0, a["size"])),
        waits(), then=SVM)
declare("clEnqueueSVMMap", queue(), rule(lambda a: _native.map_flags_refusal(a["flags"])),
        require(lambda a: a["size"], "size is 0"), waits(), then=SVM)
declare("clEnqueueSVMUnmap", queue(), waits(), then=SVM)
declare("clEnqueueSVMMigrateMem", queue(), nonnull("num_svm_pointers", "svm_pointers"),
        only_bits("flags", cl.CL_MIGRATE_MEM_OBJECT_HOST | cl.CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED),
        waits(), then=SVM)
declare("clSetKernelArgSVMPointer", kernel(),
        require(lambda a: a["arg_index"] < len(a["_kernel"].args), "no such argument", cl.CL_INVALID_ARG_INDEX),
        then=SVM)
SVM_EXEC_INFO = (cl.CL_KERNEL_EXEC_INFO_SVM_PTRS, cl.CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM)
declare("clSetKernelExecInfo", kernel(),
        require(lambda a: a["param_name"] in SVM_EXEC_INFO, "unknown param_name"), then=SVM)


# --- pipes (CL_DEVICE_PIPE_SUPPORT is false) ----------------------------------------------------

# "CL_INVALID_VALUE if values specified in flags are not as defined above" (only READ_WRITE and
# HOST_NO_ACCESS) ... "if properties is not NULL"; "CL_INVALID_PIPE_SIZE if pipe_packet_size is 0
# ... or if pipe_max_packets is 0"; "CL_INVALID_OPERATION if no devices in context support pipes".
declare("clCreatePipe", context(), only_bits("flags", cl.CL_MEM_READ_WRITE | cl.CL_MEM_HOST_NO_ACCESS),
        require(lambda a: not a["properties"], "properties must be NULL"),
        require(lambda a: a["pipe_packet_size"] and a["pipe_max_packets"], "pipe size 0", cl.CL_INVALID_PIPE_SIZE),
        then=unsupported("pipes"))
declare("clGetPipeInfo", image("pipe", "a pipe"), then=(cl.CL_INVALID_MEM_OBJECT, ""))


# --- on-device queues (CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES is 0) ------------------------------

def _default_queue(a):
    """"CL_INVALID_COMMAND_QUEUE if command_queue is not a valid command-queue for device": a
    queue handle of the device (the CTS passes NULL and expects CL_INVALID_OPERATION)."""
    if a["command_queue"]:
        check(lookup_queue(a["command_queue"]).device is lookup_device(a["device"]), cl.CL_INVALID_COMMAND_QUEUE,
              "the queue is not the device's")


declare("clSetDefaultDeviceCommandQueue", context(), device(), _default_queue, then=unsupported("on-device queues"))


# --- images and samplers (CL_DEVICE_IMAGE_SUPPORT is false) ---------------------------------------

IMAGES = unsupported("images")
CHANNEL_ORDERS = range(cl.CL_R, cl.CL_ABGR + 1)                   # CL_R .. CL_ABGR (sRGB included)
CHANNEL_TYPES = range(cl.CL_SNORM_INT8, cl.CL_UNORM_INT_101010_2 + 1)


def image_format(name="image_format"):
    """"CL_INVALID_IMAGE_FORMAT_DESCRIPTOR if values specified in image_format are not valid or if
    image_format is NULL" (a cl_image_format is two cl_uint: channel order, data type)."""
    def step(a):
        address = a[name]
        check(address, cl.CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "image_format is NULL")
        order, kind = (ctypes.c_uint32 * 2).from_address(address)
        check(order in CHANNEL_ORDERS and kind in CHANNEL_TYPES, cl.CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
              f"unknown channel order {order:#x} or data type {kind:#x}")
    return step


def image_desc(a):
    """"CL_INVALID_IMAGE_DESCRIPTOR if values specified in image_desc are not valid or if
    image_desc is NULL" (its first member is image_type)."""
    check(a["image_desc"], cl.CL_INVALID_IMAGE_DESCRIPTOR, "image_desc is NULL")
    kind = ctypes.c_uint32.from_address(a["image_desc"]).value
    check(kind in IMAGE_TYPES, cl.CL_INVALID_IMAGE_DESCRIPTOR, f"unknown image_type {kind:#x}")


def sizes(*names, least=1):
    return require(lambda a: all(a[n] >= least for n in names), f"{', '.join(names)} must be at least {least}",
                   cl.CL_INVALID_IMAGE_SIZE)


declare("clCreateImage", context(), mem_flags(), image_format(), image_desc, host_ptr(), then=IMAGES)
declare("clCreateImageWithProperties", context(), no_properties(), mem_flags(), image_format(), image_desc,
        host_ptr(), then=IMAGES)
declare("clCreateImage2D", context(), mem_flags(), image_format(), sizes("image_width", "image_height"),
        host_ptr(), then=IMAGES)
declare("clCreateImage3D", context(), mem_flags(), image_format(), sizes("image_width", "image_height"),
        sizes("image_depth", least=2), host_ptr(), then=IMAGES)
declare("clGetImageInfo", image("image"), then=(cl.CL_INVALID_MEM_OBJECT, ""))
declare("clEnqueueReadImage", queue(), image("image"), then=IMAGES)
declare("clEnqueueWriteImage", queue(), image("image"), then=IMAGES)
declare("clEnqueueFillImage", queue(), image("image"), then=IMAGES)
declare("clEnqueueMapImage", queue(), image("image"), then=IMAGES)
declare("clEnqueueCopyImage", queue(), image("src_image"), image("dst_image"), then=IMAGES)
declare("clEnqueueCopyImageToBuffer", queue(), mem("dst_buffer"), image("src_image"), then=IMAGES)
declare("clEnqueueCopyBufferToImage", queue(), mem("src_buffer"), image("dst_image"), then=IMAGES)

ADDRESSING = (cl.CL_ADDRESS_NONE, cl.CL_ADDRESS_CLAMP_TO_EDGE, cl.CL_ADDRESS_CLAMP, cl.CL_ADDRESS_REPEAT,
              cl.CL_ADDRESS_MIRRORED_REPEAT)
FILTERS = (cl.CL_FILTER_NEAREST, cl.CL_FILTER_LINEAR)


def _sampler_ok(normalized, addressing, filtering):
    """"CL_INVALID_VALUE if addressing_mode, filter_mode, normalized_coords or a combination of
    these arguments are not valid" (the repeat modes need normalized coordinates)."""
    return (normalized in (0, 1) and addressing in ADDRESSING and filtering in FILTERS
            and (normalized or addressing not in (cl.CL_ADDRESS_REPEAT, cl.CL_ADDRESS_MIRRORED_REPEAT)))


def _sampler_properties(a):
    pairs, _ = info.read_properties(a["sampler_properties"])
    given = dict(pairs)
    check(len(given) == len(pairs), cl.CL_INVALID_VALUE, "a sampler property is given twice")
    known = {cl.CL_SAMPLER_NORMALIZED_COORDS: 1, cl.CL_SAMPLER_ADDRESSING_MODE: cl.CL_ADDRESS_CLAMP,
             cl.CL_SAMPLER_FILTER_MODE: cl.CL_FILTER_NEAREST}
    unknown = set(given) - set(known)
    check(not unknown, cl.CL_INVALID_VALUE, f"unknown sampler property {min(unknown or [0]):#x}")
    known.update(given)
    check(_sampler_ok(*known.values()), cl.CL_INVALID_VALUE, "invalid sampler property value")


declare("clCreateSampler", context(),
        require(lambda a: _sampler_ok(a["normalized_coords"], a["addressing_mode"], a["filter_mode"]),
                "invalid normalized_coords, addressing_mode or filter_mode"), then=IMAGES)
declare("clCreateSamplerWithProperties", context(), _sampler_properties, then=IMAGES)
for _name in ("clRetainSampler", "clReleaseSampler", "clGetSamplerInfo"):
    declare(_name, sampler(), then=(cl.CL_INVALID_SAMPLER, ""))


# --- intermediate languages (no CL_DEVICE_IL_VERSION) -------------------------------------------

IL = unsupported("intermediate language (SPIR-V) programs")
declare("clCreateProgramWithIL", context(), nonnull("il", "length"), then=IL)
declare("clSetProgramSpecializationConstant", program(), nonnull("spec_value"), then=IL)


# --- built-in kernels (CL_DEVICE_BUILT_IN_KERNELS is empty) ---------------------------------------

def _device_list(a):
    """"CL_INVALID_VALUE if device_list is NULL or num_devices is zero"; "CL_INVALID_DEVICE if any
    device in device_list is not in the list of devices associated with context"."""
    check(a["num_devices"] and a["device_list"], cl.CL_INVALID_VALUE, "no devices")
    for handle in (ctypes.c_size_t * a["num_devices"]).from_address(a["device_list"]):
        check(lookup_device(handle) in a["_ctx"].devices, cl.CL_INVALID_DEVICE, "device is not in the context")


# "CL_INVALID_VALUE if kernel_names is NULL or kernel_names contains a kernel name that is not
# supported by any of the devices in device_list": every name, as there are none.
declare("clCreateProgramWithBuiltInKernels", context(), _device_list, nonnull("kernel_names"),
        then=(cl.CL_INVALID_VALUE, "the device has no built-in kernels"))


# --- sub-groups (CL_DEVICE_MAX_NUM_SUB_GROUPS is 0) ---------------------------------------------

NDRANGE_INPUT = (cl.CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, cl.CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE)
SUB_GROUP_INFO = NDRANGE_INPUT + (cl.CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, cl.CL_KERNEL_MAX_NUM_SUB_GROUPS,
                                  cl.CL_KERNEL_COMPILE_NUM_SUB_GROUPS)
SIZE_T = ctypes.sizeof(ctypes.c_size_t)


def _sub_group_input(a):
    """"CL_INVALID_VALUE if param_name is not valid, or if ... input_value_size is not valid
    [a local work size of 1 to 3 dimensions; one size_t for the sub-group count] or
    input_value is NULL" for the queries that take an input."""
    name, size = a["param_name"], a["input_value_size"]
    check(name in SUB_GROUP_INFO, cl.CL_INVALID_VALUE, f"unknown param_name {name:#x}")
    if name in NDRANGE_INPUT:
        check(a["input_value"] and size in (SIZE_T, 2 * SIZE_T, 3 * SIZE_T), cl.CL_INVALID_VALUE,
              "input_value must be a local work size of 1 to 3 dimensions")
    elif name == cl.CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT:
        check(a["input_value"] and size == SIZE_T, cl.CL_INVALID_VALUE, "input_value must be one size_t")


SUB_GROUPS = unsupported("sub-groups")
declare("clGetKernelSubGroupInfo", kernel(), kernel_device(), _sub_group_input, then=SUB_GROUPS)
declare("clGetKernelSubGroupInfoKHR", kernel("in_kernel"), kernel_device("in_device"), _sub_group_input,
        then=SUB_GROUPS)


# --- program-scope global constructors and destructors (none supported) -------------------------

declare("clSetProgramReleaseCallback", program(), nonnull("pfn_notify"),
        then=unsupported("program-scope global destructors"))


# --- OpenCL 1.0's clSetCommandQueueProperty (queue properties are fixed at creation since 1.1) ----

declare("clSetCommandQueueProperty", queue(),
        only_bits("properties", cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | cl.CL_QUEUE_PROFILING_ENABLE),
        then=(cl.CL_INVALID_OPERATION, "queue properties are set when the queue is created"))


# --- extensions PyPlat does not report: cl_khr_gl_sharing, cl_khr_gl_event, cl_khr_egl_image,
#     cl_khr_egl_event, cl_ext_device_fission --------------------------------------------------------

# "CL_INVALID_CONTEXT if context is not a valid context or was not created from a GL context";
# "CL_INVALID_VALUE if values specified in flags are not valid" (one access flag only).
NO_GL_CONTEXT = (cl.CL_INVALID_CONTEXT, "the context was not created from an OpenGL context")
NO_GL_OBJECT = (cl.CL_INVALID_GL_OBJECT, "the memory object was not created from an OpenGL object")
GL_FLAGS = (cl.CL_MEM_READ_ONLY, cl.CL_MEM_WRITE_ONLY, cl.CL_MEM_READ_WRITE)
gl_flags = require(lambda a: a["flags"] in GL_FLAGS, "flags must be one of READ_ONLY, WRITE_ONLY, READ_WRITE")
for _name in ("clCreateFromGLBuffer", "clCreateFromGLTexture", "clCreateFromGLTexture2D",
              "clCreateFromGLTexture3D", "clCreateFromGLRenderbuffer"):
    declare(_name, context(), gl_flags, then=NO_GL_CONTEXT)
declare("clCreateEventFromGLsyncKHR", context(), then=NO_GL_CONTEXT)
declare("clGetGLObjectInfo", memobj("memobj"), then=NO_GL_OBJECT)
declare("clGetGLTextureInfo", memobj("memobj"), then=NO_GL_OBJECT)
for _name in ("clEnqueueAcquireGLObjects", "clEnqueueReleaseGLObjects"):
    declare(_name, queue(), mem_list("num_objects", "mem_objects", NO_GL_OBJECT), waits(), then=NO_GL_CONTEXT)
GL_CONTEXT_INFO = (cl.CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, cl.CL_DEVICES_FOR_GL_CONTEXT_KHR)
declare("clGetGLContextInfoKHR", require(lambda a: a["param_name"] in GL_CONTEXT_INFO, "unknown param_name"),
        then=unsupported("OpenGL sharing"))

NO_EGL_OBJECT = (cl.CL_INVALID_EGL_OBJECT_KHR, "no EGL objects can be shared with this platform")
declare("clCreateFromEGLImageKHR", context(), gl_flags, no_properties(), then=NO_EGL_OBJECT)
declare("clCreateEventFromEGLSyncKHR", context(), then=NO_EGL_OBJECT)
for _name in ("clEnqueueAcquireEGLObjectsKHR", "clEnqueueReleaseEGLObjectsKHR"):
    declare(_name, queue(), mem_list("num_objects", "mem_objects", NO_EGL_OBJECT), waits(),
            then=unsupported("EGL sharing"))

# cl_ext_device_fission: its retain/release are OpenCL 1.2's; partitioning goes through
# clCreateSubDevices (the EXT property tokens differ).
IMPLEMENTED["clRetainDeviceEXT"] = clRetainDevice
IMPLEMENTED["clReleaseDeviceEXT"] = clReleaseDevice
declare("clCreateSubDevicesEXT", any_device("in_device"),
        nonnull("partition_properties"), then=unsupported("cl_ext_device_fission (use clCreateSubDevices)"))
