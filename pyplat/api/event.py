"""Events: waiting, info, user events, callbacks and profiling."""
import ctypes

from pyplat import cl
from pyplat.api import _native, handles, info
from pyplat.api.entry import entry
from pyplat.api.errors import CLError, check, error_name, raise_refusal
from pyplat.core.context import Context
from pyplat.core.event import Event, UserEvent

EVENT_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_size_t, ctypes.c_int32, ctypes.c_void_p)


def lookup_event(address):
    return handles.lookup(address, Event, cl.CL_INVALID_EVENT)


def wait_list(num_events, event_list, context=None):
    """Validate an enqueue's wait list: the events, all of the queue's context."""
    raise_refusal(_native.wait_list_refusal(num_events or 0, event_list or 0))   # (the native entries' rules)
    events = handles.lookup_array(num_events, event_list, Event, cl.CL_INVALID_EVENT_WAIT_LIST)
    if context is not None:
        for e in events:
            raise_refusal(_native.event_context_refusal(e.context is context))
    return events


def return_event(event, address):
    """Hand the command's event to the caller if asked for, else drop our reference."""
    if address:
        ctypes.c_size_t.from_address(address).value = handles.created(event, handles.EVENT)
    else:
        event.release()


@entry
def clWaitForEvents(num_events, event_list):
    raise_refusal(_native.events_refusal(num_events or 0, event_list or 0))   # (the native entry's rules)
    events = handles.lookup_array(num_events, event_list, Event, cl.CL_INVALID_EVENT)
    context = events[0].context
    for e in events:
        check(e.context is context, cl.CL_INVALID_CONTEXT, "events from different contexts")
    for e in events:
        if e.queue is not None:
            e.queue.flush()
    failed = [(i, status) for i, status in enumerate([e.wait() for e in events]) if status < 0]
    check(not failed, cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
          "; ".join(f"event {i} of the list ended with status {status} ({error_name(status)})"
                    for i, status in failed[:4]) + ("; ..." if len(failed) > 4 else ""))


INFO = {
    cl.CL_EVENT_COMMAND_QUEUE: (info.pointer, lambda e: handles.handle_of(e.queue, handles.QUEUE)),
    cl.CL_EVENT_CONTEXT: (info.pointer, lambda e: handles.handle_of(e.context, handles.CONTEXT)),
    cl.CL_EVENT_COMMAND_TYPE: (info.uint, lambda e: e.command_type),
    cl.CL_EVENT_COMMAND_EXECUTION_STATUS: (info.int32, lambda e: e.status),
    cl.CL_EVENT_REFERENCE_COUNT: (info.uint, handles.reference_count),
}


@entry
def clGetEventInfo(event, param_name, param_value_size, param_value, param_value_size_ret):
    info.query(INFO, lookup_event(event), param_name, param_value_size, param_value,
               param_value_size_ret)


@entry
def clCreateUserEvent(context, errcode_ret):
    ctx = handles.lookup(context, Context, cl.CL_INVALID_CONTEXT)
    return handles.created(UserEvent(ctx), handles.EVENT)


def adopt_native_user_event(context, command, status_set):
    """The core UserEvent of a user event the fast path made natively (native_user_events.pxi),
    when Python first needs it: its one reference stands for the application's (counted in the
    handle table, as for handles.created), and the context reference the event held there
    becomes its own retain."""
    ev = UserEvent(context, command)
    ev.status_set = status_set
    handles.release(context)
    return ev


@entry
def clSetUserEventStatus(event, execution_status):
    ev = lookup_event(event)
    check(isinstance(ev, UserEvent), cl.CL_INVALID_EVENT, "not a user event")
    check(execution_status == cl.CL_COMPLETE or execution_status < 0, cl.CL_INVALID_VALUE,
          "status must be CL_COMPLETE or negative")
    check(not ev.status_set, cl.CL_INVALID_OPERATION, "the user event's status was already set")
    ev.set_status(execution_status)


@entry
def clRetainEvent(event):
    handles.retain(lookup_event(event))


@entry
def clReleaseEvent(event):
    handles.release(lookup_event(event))


@entry
def clSetEventCallback(event, command_exec_callback_type, pfn_notify, user_data):
    ev = lookup_event(event)
    check(pfn_notify, cl.CL_INVALID_VALUE, "pfn_event_notify is NULL")
    check(command_exec_callback_type in (cl.CL_SUBMITTED, cl.CL_RUNNING, cl.CL_COMPLETE),
          cl.CL_INVALID_VALUE, "callback type must be CL_SUBMITTED, CL_RUNNING or CL_COMPLETE")
    handle = handles.handle_of(ev, handles.EVENT)
    ev.retain()   # the event lives until its command has finished (and its callbacks ran)
    ev.add_c_callback(command_exec_callback_type, pfn_notify, user_data or 0, handle)
    ev.on_finish(ev.release)


PROFILING = {cl.CL_PROFILING_COMMAND_QUEUED: 0, cl.CL_PROFILING_COMMAND_SUBMIT: 1,
             cl.CL_PROFILING_COMMAND_START: 2, cl.CL_PROFILING_COMMAND_END: 3,
             cl.CL_PROFILING_COMMAND_COMPLETE: 4}


@entry
def clGetEventProfilingInfo(event, param_name, param_value_size, param_value, param_value_size_ret):
    ev = lookup_event(event)
    check(ev.queue is not None and ev.queue.profiling, cl.CL_PROFILING_INFO_NOT_AVAILABLE,
          "the event's queue does not have profiling enabled")
    check(ev.status == cl.CL_COMPLETE, cl.CL_PROFILING_INFO_NOT_AVAILABLE, "the command has not completed")
    index = PROFILING.get(param_name)
    check(index is not None, cl.CL_INVALID_VALUE, "unknown profiling parameter")
    info.return_value(info.ulong(ev.command.times[index]), param_value_size, param_value,
                      param_value_size_ret)
