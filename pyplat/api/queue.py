"""Command queues: clCreateCommandQueue(WithProperties), info, clFlush, clFinish."""
from pyplat import cl, config
from pyplat.api import _native, handles, info
from pyplat.api.entry import entry
from pyplat.api.errors import CLError, check
from pyplat.core.context import Context
from pyplat.core.device import Device
from pyplat.core.queue import CommandQueue, order_mode

SUPPORTED = cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | cl.CL_QUEUE_PROFILING_ENABLE


def lookup_queue(address):
    return handles.lookup(address, CommandQueue, cl.CL_INVALID_COMMAND_QUEUE)


def _create(context, device, properties, property_list):
    ctx = handles.lookup(context, Context, cl.CL_INVALID_CONTEXT)
    dev = handles.lookup(device, Device, cl.CL_INVALID_DEVICE)
    check(dev in ctx.devices, cl.CL_INVALID_DEVICE, "device is not in the context")
    check(not properties & ~(SUPPORTED | cl.CL_QUEUE_ON_DEVICE | cl.CL_QUEUE_ON_DEVICE_DEFAULT),
          cl.CL_INVALID_VALUE, "unknown queue properties")
    check(not properties & (cl.CL_QUEUE_ON_DEVICE | cl.CL_QUEUE_ON_DEVICE_DEFAULT),
          cl.CL_INVALID_QUEUE_PROPERTIES, "on-device queues are not supported")
    queue = CommandQueue(ctx, dev, properties, property_list)
    if handles.native_of is not None:      # its driver started: native queues may use it now
        _native.note_queue_driver(context, device, queue.driver)
    return handles.created(queue, handles.QUEUE)


def native_devices(context):
    """A context's devices as native queues need them (_native.set_queue_devices): handle,
    Device, its driver if started."""
    return [(handles.handle_of(d, handles.DEVICE), d, d.started_driver) for d in context.devices]


def native_queue_modes():
    """(the ordering mode for each OUT_OF_ORDER / PROFILING combination, the knob the in-order
    mode follows and its text now): _native.set_queue_modes' arguments."""
    knob = "PYPLAT_INORDER_PARALLEL"
    return tuple(order_mode(bits) for bits in range(4)), knob.encode(), config.reading(knob).text


def adopt_native_queue(context, device, properties, property_list, core):
    """The core CommandQueue of a queue made natively (_native.adopt_queue)."""
    return CommandQueue(context, device, properties, property_list, core)


@entry
def clCreateCommandQueue(context, device, properties, errcode_ret):
    return _create(context, device, properties, [])


@entry
def clCreateCommandQueueWithProperties(context, device, properties, errcode_ret):
    pairs, flat = info.read_properties(properties)
    bits = 0
    seen = set()
    for name, value in pairs:
        check(name not in seen, cl.CL_INVALID_PROPERTY, "duplicate queue property")
        seen.add(name)
        if name == cl.CL_QUEUE_PROPERTIES:
            bits = value
        elif name == cl.CL_QUEUE_SIZE:
            raise CLError(cl.CL_INVALID_QUEUE_PROPERTIES, "CL_QUEUE_SIZE needs an on-device queue")
        else:
            raise CLError(cl.CL_INVALID_VALUE, f"unknown queue property {name:#x}")
    return _create(context, device, bits, flat if properties else [])


@entry
def clRetainCommandQueue(command_queue):
    handles.retain(lookup_queue(command_queue))


@entry
def clReleaseCommandQueue(command_queue):
    queue = lookup_queue(command_queue)
    queue.flush()
    handles.release(queue)


INFO = {
    cl.CL_QUEUE_CONTEXT: (info.pointer, lambda q: handles.handle_of(q.context, handles.CONTEXT)),
    cl.CL_QUEUE_DEVICE: (info.pointer, lambda q: handles.handle_of(q.device, handles.DEVICE)),
    cl.CL_QUEUE_REFERENCE_COUNT: (info.uint, handles.reference_count),
    cl.CL_QUEUE_PROPERTIES: (info.bitfield, lambda q: q.properties),
    cl.CL_QUEUE_PROPERTIES_ARRAY: (info.ulong_array, lambda q: q.property_list),
    cl.CL_QUEUE_SIZE: (info.uint, lambda q: _no_device_queue()),
    cl.CL_QUEUE_DEVICE_DEFAULT: (info.pointer, lambda q: 0),
}


def _no_device_queue():
    raise CLError(cl.CL_INVALID_COMMAND_QUEUE, "CL_QUEUE_SIZE is only valid for on-device queues")


@entry
def clGetCommandQueueInfo(command_queue, param_name, param_value_size, param_value, param_value_size_ret):
    info.query(INFO, lookup_queue(command_queue), param_name, param_value_size, param_value,
               param_value_size_ret)


@entry
def clFlush(command_queue):
    lookup_queue(command_queue).flush()


@entry
def clFinish(command_queue):
    if not _native.finish_unadopted_queue(command_queue):    # (a queue made natively: no adoption)
        lookup_queue(command_queue).finish()
    _native.reclaim_native_plans()      # (released kernels' plans whose launches finished)
