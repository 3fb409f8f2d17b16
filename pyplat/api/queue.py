"""Command queues: clCreateCommandQueue(WithProperties), info, clFlush, clFinish."""
from pyplat import cl
from pyplat.api import handles, info
from pyplat.api.entry import entry
from pyplat.api.errors import CLError, check
from pyplat.core.context import Context
from pyplat.core.device import Device
from pyplat.core.queue import CommandQueue

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
    return handles.created(CommandQueue(ctx, dev, properties, property_list), handles.QUEUE)


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
    lookup_queue(command_queue).finish()
