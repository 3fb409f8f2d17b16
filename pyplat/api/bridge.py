"""The bridge from the ICD shim to the API layer.

The shim calls ``attach`` once per process, handing over its entry table (one function pointer per
dispatch slot, in the order of pyplat.api._entry_points) and its dispatch table. We fill the table
with ctypes callbacks for every entry point the API modules implement; the shim's own fallbacks
stay in the others and answer CL_INVALID_OPERATION.

ctypes callbacks take the GIL on entry, so the shim may call them from any thread. A Python
exception never escapes into C: CLError becomes its code; anything else is printed to stderr and
becomes CL_OUT_OF_HOST_MEMORY (the generic "the implementation failed" code of the spec).
"""
import ctypes
import sys
import traceback

from pyplat import cl, config, log
from pyplat.api import _entries, _native, diagnostics, enqueue, event, handles, memory, queue
from pyplat.api import context as api_context
from pyplat.api import kernel as api_kernel
from pyplat.api.entry import IMPLEMENTED, load_all
from pyplat.api.errors import CLError
from pyplat.core import kernel as core_kernel
from pyplat.core import migration
from pyplat.core.context import Context
from pyplat.core.memory import Buffer
from pyplat.core.platform import get_platform
from pyplat.core.queue import log_command, order_key
from pyplat.runtime import trace

CTYPES = {"i32": ctypes.c_int32, "u32": ctypes.c_uint32, "i64": ctypes.c_int64,
          "u64": ctypes.c_uint64, "ptr": ctypes.c_size_t, "f32": ctypes.c_float,
          "f64": ctypes.c_double, "void": None}

_keepalive = []   # the callbacks must outlive the process's use of the table


def _report(name):
    sys.stderr.write(f"pyplat: internal error in {name}:\n{traceback.format_exc()}")
    sys.stderr.flush()


def _failed(name, error, args):
    try:
        diagnostics.entry_failed(name, error, args)
    except BaseException:             # (reporting an error must not become one)
        _report(name)


def _refused(name, code, reason, args):
    """A native entry's refusal (api/native_refusals.pxi): reported as a Python entry's error."""
    _failed(name, CLError(code, reason), args)


def _wrap_status(name, fn):
    def call(*args):
        try:
            result = fn(*args)
            return cl.CL_SUCCESS if result is None else result
        except CLError as e:
            _failed(name, e, args)
            return e.code
        except BaseException:
            _report(name)
            return cl.CL_OUT_OF_HOST_MEMORY
    return call


def _wrap_creator(name, fn, errcode_index):
    """Functions returning an object and reporting through errcode_ret."""
    def call(*args):
        errcode_ret = args[errcode_index]
        try:
            result = fn(*args)
            code = cl.CL_SUCCESS
        except CLError as e:          # clLinkProgram's failure keeps its program (e.result)
            result, code = getattr(e, "result", 0), e.code
            _failed(name, e, args)
        except BaseException:
            _report(name)
            result, code = 0, cl.CL_OUT_OF_HOST_MEMORY
        if errcode_ret:
            ctypes.c_int32.from_address(errcode_ret).value = code
        return result or 0
    return call


def _wrap_plain(name, fn, ret_kind):
    def call(*args):
        try:
            result = fn(*args)
        except BaseException:
            _report(name)
            result = None
        return None if ret_kind == "void" else (result or 0)
    return call


def make_callback(name, ret_kind, arg_kinds, fn):
    names = [n for n, _ in arg_kinds]
    if ret_kind == "i32":
        wrapped = _wrap_status(name, fn)
    elif ret_kind == "ptr" and "errcode_ret" in names:
        wrapped = _wrap_creator(name, fn, names.index("errcode_ret"))
    else:
        wrapped = _wrap_plain(name, fn, ret_kind)
    proto = ctypes.CFUNCTYPE(CTYPES[ret_kind], *[CTYPES[k] for _, k in arg_kinds])
    return proto(wrapped)


def attach(table_address, n_entries, dispatch_address):
    """Called by the shim (once per process): fill its entry table."""
    from pyplat.api._entry_points import ENTRY_POINTS
    if n_entries != len(ENTRY_POINTS):
        raise RuntimeError(f"shim has {n_entries} slots, Python side {len(ENTRY_POINTS)}: "
                           "the ICD library and the pyplat package come from different builds")
    handles.set_dispatch(dispatch_address)
    load_all()
    implemented = _traced(IMPLEMENTED)
    table = (ctypes.c_void_p * n_entries).from_address(table_address)
    for index, slot in enumerate(ENTRY_POINTS):
        if slot is None:
            continue
        name, ret_kind, arg_kinds = slot
        fn = implemented.get(name)
        if fn is None:
            continue
        callback = make_callback(name, ret_kind, arg_kinds, fn)
        _keepalive.append(callback)
        table[index] = ctypes.cast(callback, ctypes.c_void_p).value
    for index, address in direct_entries(implemented).items():
        table[index] = address
    # The second half of the table: native entries the stubs call before taking the GIL.
    native_table = (ctypes.c_void_p * n_entries).from_address(table_address + n_entries * ctypes.sizeof(ctypes.c_void_p))
    for index, address in native_entries().items():
        native_table[index] = address


_native_entries = {}  # name -> address of the native fast path's entry (set by direct_entries)


def _traced(implemented):
    """PYPLAT_TRACE: the entry points, each call recorded as a slice of its thread's track
    (the native fast path's entries record theirs: _native.traced_fast_path_entries)."""
    if not trace.enabled():
        return implemented
    return {name: trace.traced(name, fn) for name, fn in implemented.items()}


def direct_entries(implemented=IMPLEMENTED):
    """slot index -> address of a direct C entry (pyplat/api/_entries.pyx) for the hot entry
    points, in place of their ctypes callbacks; PYPLAT_DIRECT_ENTRIES=0 keeps ctypes for all.
    Also sets up the native fast path (pyplat/api/_native.pyx; PYPLAT_FAST_PATH=0: off): kernels
    get a slot the native entries can read, the handle table keeps the native references of
    queue, kernel and event handles (handles.native_of), and native events are adopted by
    handles.lookup on first use."""
    if not config.value("PYPLAT_DIRECT_ENTRIES"):
        return {}
    load_all()
    direct = _entries.configure(implemented, CLError, _report, _failed)
    if config.value("PYPLAT_FAST_PATH"):
        core_kernel.new_slot = _native.KernelSlot
        native = (_native.traced_fast_path_entries() if trace.enabled()
                  else _native.fast_path_entries())
        _entries.use_fast_path(native, enqueue.prime_ndrange, enqueue.prime_command)
        _note_logging()
        _native.set_platform_devices(handles.handle_of(get_platform(), handles.PLATFORM),
                                     api_context.native_platform_devices(), api_context.adopt_native_context,
                                     queue.native_queue_modes())
        handles.adopter = _adopt_native
        _native.set_refusal_reporter(_refused)
        _native.set_user_event_factory(event.adopt_native_user_event)
        handles.native_of = _native_of
        _native_entries.update(native)
    return _slots_of(direct)


def _note_logging():
    """PYPLAT_DEBUG (read again at config.reload): the native entries log commands (events) and
    the application's references they count (refcounts) as the Python entries do."""
    _native.set_events_logging(log.on("events"), _log_native_command)
    _native.set_refcounts_logging(log.on("refcounts"), handles.log_application_count)


def _log_native_command(command, command_type, device_id, waits, kernel_name):
    """A command a native entry enqueued, logged as the Python entries log theirs."""
    names = {id(d): d.name for d in get_platform().devices}
    log_command(command, command_type, names.get(device_id, "?"), waits, kernel_name)


config.on_reload(_note_logging)


def _adopt_native(address):
    """The core object of an event, buffer or kernel the fast path made natively (handles.adopter)."""
    return (_native.adopt_event(address, enqueue.adopt_native_event)
            or _native.adopt_buffer(address, memory.adopt_native_buffer)
            or _native.adopt_queue(address, queue.adopt_native_queue)
            or _native.adopt_context(address)
            or _native.adopt_kernel(address, api_kernel.adopt_native_kernel))


def native_entries():
    """slot index -> address of the native fast path's entry (called before the GIL is taken)."""
    return _slots_of(_native_entries)


def _slots_of(addresses):
    from pyplat.api._entry_points import ENTRY_POINTS
    slots = {}
    for index, slot in enumerate(ENTRY_POINTS):
        if slot is None or slot[0] not in addresses:
            continue
        name, ret_kind, arg_kinds = slot
        if ret_kind in ("i32", "ptr") and tuple(k for _, k in arg_kinds) == _entries.NATIVE_KINDS[name]:
            slots[index] = addresses[name]
    return slots


def _native_of(kind, obj):
    """What the handle table keeps for the native fast path next to a new queue, kernel, event,
    buffer or context handle: (native object, core context); None for other kinds, for a kernel made before
    the fast path was set up (it has no slot) and for a buffer of a context that moves memory (its
    commands may need transfers first): the Python entries answer for those."""
    if kind == handles.QUEUE:
        return obj.core, obj.context
    if kind == handles.KERNEL:
        return None if obj.slot is None else (obj.slot, obj.program.context)
    if kind == handles.EVENT:
        return obj.command, obj.context
    if kind == handles.CONTEXT and isinstance(obj, Context):
        record = _native.context_record(obj, min(d.max_mem_alloc_size for d in obj.devices),
                                        not migration.context_moves_memory(obj))
        _native.set_queue_devices(record, queue.native_devices(obj))
        return record, obj
    if isinstance(obj, Buffer) and not migration.context_moves_memory(obj.context):
        return (_native.mem_record(obj.address, obj.size, obj.flags, order_key(obj), obj.parent is not None,
                                   handles.handle_of(obj.context, handles.CONTEXT)), obj.context)
    return None
