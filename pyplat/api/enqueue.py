"""Commands: buffer transfers, maps, kernels, markers and barriers.

Each entry point validates, then describes the work as a native command (copy, fill, rectangle
copy, kernel launch, native kernel: run by the driver without Python) or, where Python is needed,
a Python action, and enqueues it with the memory objects it reads and writes (the in-order
queue's automatic parallelisation orders by those). Blocking calls wait with the GIL released.
"""
import ctypes

from pyplat import cl
from pyplat.api import _native, handles
from pyplat.api.entry import entry
from pyplat.api.errors import CLError, check, raise_refusal
from pyplat.api.event import return_event, wait_list
from pyplat.api.kernel import lookup_kernel
from pyplat.api.memory import lookup_buffer
from pyplat.api.queue import lookup_queue
from pyplat.core import checks, migration
from pyplat.core.event import Event
from pyplat.core.kernel import Kernel
from pyplat.core.queue import HOST, CommandQueue
from pyplat.devices.spaces import HOST as HOST_SPACE
from pyplat.runtime.graph import dimensions_refusal, launch_geometry


def _submit(queue, command_type, command, num_events, event_list, event, retain=(), blocking=False,
            barrier=False, accesses=None, needs=(), writes=()):
    """Enqueue a command with the caller's wait list; hand back or drop its event; block if asked.

    `command` is a runtime Command with its payload set, or None (a marker-like no-op). Where the
    context has devices with memory of their own (core/migration.py): `needs` lists the (piece,
    space) whose contents the command needs there, brought first, and `writes` the (piece,
    space) it overwrites (a piece: a buffer, or (buffer, offset, size))."""
    waits = wait_list(num_events, event_list, queue.context)
    if command is None:
        command = queue.new_command()
    after = []
    if queue.moves_memory:
        for piece, space in needs:
            after += migration.bring(queue, (piece,), space)
        for piece, space in writes:
            after += migration.settle((piece,), space)
    ev = queue.enqueue(command_type, command, waits, retain=retain, barrier=barrier, accesses=accesses,
                       after=after)
    if queue.moves_memory:
        for piece, space in writes:
            migration.wrote((piece,), space, ev.command)
    if blocking:
        if any(w.status < 0 for w in waits):
            return_event(ev, event)
            raise CLError(cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
                          "an event of the wait list ended with an error")
        status = ev.wait()
        return_event(ev, event)
        if status < 0:
            raise CLError(cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
                          f"the blocking command, or one it waited for, failed ({status})")
        return
    return_event(ev, event)


def _buffer_of(queue, address):
    buffer = lookup_buffer(address)
    raise_refusal(_native.buffer_context_refusal(buffer.context is queue.context))
    return buffer


def _source(queue, buf, offset, size):
    """Where a command of `queue` reads [offset, offset + size) of `buf`: (address of the
    buffer's bytes in a space holding all of that range's current contents, what the command
    needs brought first). The queue device's space if it holds them, else the host's, else
    another; if no one space does, the range is gathered in the queue device's."""
    if not queue.moves_memory:
        return buf.address, ()
    piece = (buf, offset, size)
    space = migration.readable_space(piece, _host_side(queue))
    if space is None or not space.host_addressable:
        space = _host_side(queue)
        return migration.address_in(buf, space), ((piece, space),)
    return migration.address_in(buf, space), ()


def _host_side(queue):
    """Where the queue's reads, writes, fills and copies work: its device's space, or the host's
    where the host cannot address that (device memory: only kernels and transfers touch it)."""
    space = queue.device.memory_space
    return space if space.host_addressable else HOST_SPACE


def _target(queue, buf, offset, size):
    """Where a command of `queue` overwrites [offset, offset + size) of `buf`: (address of the
    buffer's bytes in the queue device's space, the write to record). No transfer is needed:
    the range is overwritten, and becomes current only there."""
    if not queue.moves_memory:
        return buf.address, ()
    space = _host_side(queue)
    return migration.address_in(buf, space), (((buf, offset, size), space),)


def _spanned_target(queue, buf, offset, size):
    """Where a rectangle written into [offset, offset + size) of `buf` goes: (address, the
    range as both need and write). A rectangle writes only part of the range it spans, so the
    rest must be current where it writes: the range is brought there first."""
    if not queue.moves_memory:
        return buf.address, ()
    space = _host_side(queue)
    return migration.address_in(buf, space), (((buf, offset, size), space),)


# --- transfers ----------------------------------------------------------------------------

@entry
def clEnqueueReadBuffer(command_queue, buffer, blocking_read, offset, size, ptr, num_events_in_wait_list,
                        event_wait_list, event):
    queue = lookup_queue(command_queue)
    buf = _buffer_of(queue, buffer)
    raise_refusal(_native.transfer_refusal(buf.size, offset, size, ptr or 0, buf.flags, False))
    command = queue.new_command()
    at, needs = _source(queue, buf, offset, size)
    command.set_copy(ptr, at + offset, size)
    _submit(queue, cl.CL_COMMAND_READ_BUFFER, command, num_events_in_wait_list, event_wait_list, event,
            (buf,), blocking_read, accesses=((buf, False), (HOST, True)), needs=needs)


@entry
def clEnqueueWriteBuffer(command_queue, buffer, blocking_write, offset, size, ptr, num_events_in_wait_list,
                         event_wait_list, event):
    queue = lookup_queue(command_queue)
    buf = _buffer_of(queue, buffer)
    raise_refusal(_native.transfer_refusal(buf.size, offset, size, ptr or 0, buf.flags, True))
    command = queue.new_command()
    at, writes = _target(queue, buf, offset, size)
    command.set_copy(at + offset, ptr, size)
    _submit(queue, cl.CL_COMMAND_WRITE_BUFFER, command, num_events_in_wait_list, event_wait_list, event,
            (buf,), blocking_write, accesses=((buf, True), (HOST, False)), writes=writes)


@entry
def clEnqueueCopyBuffer(command_queue, src_buffer, dst_buffer, src_offset, dst_offset, size,
                        num_events_in_wait_list, event_wait_list, event):
    queue = lookup_queue(command_queue)
    src, dst = _buffer_of(queue, src_buffer), _buffer_of(queue, dst_buffer)
    raise_refusal(_native.copy_refusal(src.size, src_offset, dst.size, dst_offset, size, src.address, dst.address))
    command = queue.new_command()
    src_at, needs = _source(queue, src, src_offset, size)
    dst_at, writes = _target(queue, dst, dst_offset, size)
    command.set_copy(dst_at + dst_offset, src_at + src_offset, size)
    _submit(queue, cl.CL_COMMAND_COPY_BUFFER, command, num_events_in_wait_list, event_wait_list, event,
            (src, dst), accesses=((src, False), (dst, True)), needs=needs, writes=writes)


@entry
def clEnqueueFillBuffer(command_queue, buffer, pattern, pattern_size, offset, size,
                        num_events_in_wait_list, event_wait_list, event):
    queue = lookup_queue(command_queue)
    buf = _buffer_of(queue, buffer)
    raise_refusal(_native.fill_refusal(pattern or 0, pattern_size, buf.size, offset, size))
    command = queue.new_command()
    at, writes = _target(queue, buf, offset, size)
    command.set_fill(at + offset, ctypes.string_at(pattern, pattern_size), size)
    _submit(queue, cl.CL_COMMAND_FILL_BUFFER, command, num_events_in_wait_list, event_wait_list, event,
            (buf,), accesses=((buf, True),), writes=writes)


# --- rectangular transfers -------------------------------------------------------------------

def _rect(origin, region, row_pitch, slice_pitch):
    """(x bytes, y, z) origin and region plus pitches, defaults applied: validated as the spec says."""
    check(origin and region, cl.CL_INVALID_VALUE, "origin or region is NULL")
    o = list((ctypes.c_size_t * 3).from_address(origin))
    r = list((ctypes.c_size_t * 3).from_address(region))
    check(r[0] and r[1] and r[2], cl.CL_INVALID_VALUE, "a region dimension is 0")
    row_pitch = row_pitch or r[0]
    check(row_pitch >= r[0], cl.CL_INVALID_VALUE, "row pitch is smaller than region[0]")
    slice_pitch = slice_pitch or r[1] * row_pitch
    check(slice_pitch >= r[1] * row_pitch and slice_pitch % row_pitch == 0, cl.CL_INVALID_VALUE,
          "slice pitch must be a multiple of the row pitch and at least region[1] rows")
    offset = o[2] * slice_pitch + o[1] * row_pitch + o[0]
    extent = offset + (r[2] - 1) * slice_pitch + (r[1] - 1) * row_pitch + r[0]
    return offset, r, row_pitch, slice_pitch, extent


def _rects_overlap(a, a_row, a_slice, b, b_row, b_slice, region):
    """Do the rectangles at addresses a and b (same region, their own pitches) share a byte?

    Exact: bytes interleaved between rows or slices of the other rectangle are no overlap.
    (Buffers of distinct storage have distinct addresses, so this also covers sub-buffers.)"""
    rx, ry, rz = region
    a_end = a + (rz - 1) * a_slice + (ry - 1) * a_row + rx
    b_end = b + (rz - 1) * b_slice + (ry - 1) * b_row + rx
    if a_end <= b or b_end <= a:
        return False
    if (a_row, a_slice) == (b_row, b_slice):
        # a byte of both: b - a = dz*slice + dy*row + dx with |dz| < rz, |dy| < ry, |dx| < rx.
        # Slices and rows do not wrap (slice >= ry*row, row >= rx), so only dz near the quotient
        # can work; for each, the dy range comes from the dx bounds.
        delta, reach = b - a, (ry - 1) * a_row + rx - 1
        for dz in range(max(-(rz - 1), -((reach - delta) // a_slice)),
                        min(rz - 1, (delta + reach) // a_slice) + 1):
            t = delta - dz * a_slice
            if max(-(ry - 1), -((rx - 1 - t) // a_row)) <= min(ry - 1, (t + rx - 1) // a_row):
                return True
        return False
    # different pitches (sub-buffers of one buffer): each row of a against b's rows near it
    return any(_row_meets(a + z * a_slice + y * a_row, rx, b, b_row, b_slice, region)
               for z in range(rz) for y in range(ry))


def _row_meets(lo, n, base, row, slice_, region):
    """Does [lo, lo + n) share a byte with a row of the rectangle at base?"""
    rx, ry, rz = region
    span = (ry - 1) * row + rx
    for z in range(max(0, -((base + span - 1 - lo) // slice_)), min(rz - 1, (lo + n - 1 - base) // slice_) + 1):
        s = base + z * slice_
        if max(0, -((s + rx - 1 - lo) // row)) <= min(ry - 1, (lo + n - 1 - s) // row):
            return True
    return False


def _copy_rect(queue, dst, dst_row, dst_slice, src, src_row, src_slice, region):
    command = queue.new_command()
    command.set_rect(dst, dst_row, dst_slice, src, src_row, src_slice, region)
    return command


def _rect_transfer(command_queue, buffer, blocking, buffer_origin, host_origin, region, buffer_row_pitch,
                   buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events, event_list, event,
                   to_host):
    queue = lookup_queue(command_queue)
    buf = _buffer_of(queue, buffer)
    check(ptr, cl.CL_INVALID_VALUE, "ptr is NULL")
    b_off, r, b_row, b_slice, b_end = _rect(buffer_origin, region, buffer_row_pitch, buffer_slice_pitch)
    h_off, _, h_row, h_slice, _ = _rect(host_origin, region, host_row_pitch, host_slice_pitch)
    check(b_end <= buf.size, cl.CL_INVALID_VALUE, "the region reaches beyond the buffer")
    if to_host:
        raise_refusal(_native.host_access_refusal(buf.flags, False))
        at, needs = _source(queue, buf, b_off, b_end - b_off)
        command = _copy_rect(queue, ptr + h_off, h_row, h_slice, at + b_off, b_row, b_slice, r)
        kind, writes = cl.CL_COMMAND_READ_BUFFER_RECT, ()
        accesses = ((buf, False), (HOST, True))
    else:
        raise_refusal(_native.host_access_refusal(buf.flags, True))
        at, needs = _spanned_target(queue, buf, b_off, b_end - b_off)
        command = _copy_rect(queue, at + b_off, b_row, b_slice, ptr + h_off, h_row, h_slice, r)
        kind, writes = cl.CL_COMMAND_WRITE_BUFFER_RECT, needs
        accesses = ((buf, True), (HOST, False))
    _submit(queue, kind, command, num_events, event_list, event, (buf,), blocking, accesses=accesses,
            needs=needs, writes=writes)


@entry
def clEnqueueReadBufferRect(command_queue, buffer, blocking_read, buffer_origin, host_origin, region,
                            buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr,
                            num_events_in_wait_list, event_wait_list, event):
    _rect_transfer(command_queue, buffer, blocking_read, buffer_origin, host_origin, region, buffer_row_pitch,
                   buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events_in_wait_list,
                   event_wait_list, event, to_host=True)


@entry
def clEnqueueWriteBufferRect(command_queue, buffer, blocking_write, buffer_origin, host_origin, region,
                             buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr,
                             num_events_in_wait_list, event_wait_list, event):
    _rect_transfer(command_queue, buffer, blocking_write, buffer_origin, host_origin, region, buffer_row_pitch,
                   buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events_in_wait_list,
                   event_wait_list, event, to_host=False)


@entry
def clEnqueueCopyBufferRect(command_queue, src_buffer, dst_buffer, src_origin, dst_origin, region,
                            src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch,
                            num_events_in_wait_list, event_wait_list, event):
    queue = lookup_queue(command_queue)
    src, dst = _buffer_of(queue, src_buffer), _buffer_of(queue, dst_buffer)
    s_off, r, s_row, s_slice, s_end = _rect(src_origin, region, src_row_pitch, src_slice_pitch)
    d_off, _, d_row, d_slice, d_end = _rect(dst_origin, region, dst_row_pitch, dst_slice_pitch)
    check(s_end <= src.size and d_end <= dst.size, cl.CL_INVALID_VALUE, "the region reaches beyond a buffer")
    if src is dst:
        check(s_row == d_row and s_slice == d_slice, cl.CL_INVALID_VALUE,
              "copies within one buffer need equal pitches")
    check(not _rects_overlap(src.address + s_off, s_row, s_slice, dst.address + d_off, d_row, d_slice, r),
          cl.CL_MEM_COPY_OVERLAP, "source and destination rectangles share bytes")
    src_at, needs = _source(queue, src, s_off, s_end - s_off)
    dst_at, dst_piece = _spanned_target(queue, dst, d_off, d_end - d_off)
    _submit(queue, cl.CL_COMMAND_COPY_BUFFER_RECT,
            _copy_rect(queue, dst_at + d_off, d_row, d_slice, src_at + s_off, s_row, s_slice, r),
            num_events_in_wait_list, event_wait_list, event, (src, dst), accesses=((src, False), (dst, True)),
            needs=tuple(needs) + dst_piece, writes=dst_piece)


# --- mapping ----------------------------------------------------------------------------------
# A mapped pointer is host memory: the buffer's own bytes (or the CL_MEM_USE_HOST_PTR memory). For
# a device sharing the host's memory nothing moves; a buffer whose contents are elsewhere is brought
# to the host first, and a map for writing leaves the host's copy the only current one.



@entry
def clEnqueueMapBuffer(command_queue, buffer, blocking_map, map_flags, offset, size, num_events_in_wait_list,
                       event_wait_list, event, errcode_ret):
    queue = lookup_queue(command_queue)
    buf = _buffer_of(queue, buffer)
    raise_refusal(_native.map_refusal(buf.size, offset, size, map_flags, buf.flags))
    mapping = buf.add_mapping(offset, size, map_flags)
    check(mapping is not None, cl.CL_INVALID_OPERATION,
          "the region overlaps a mapping (of this buffer, its parent or a sub-buffer) that is not unmapped, "
          "and one of the two maps for writing")
    try:
        piece = ((buf, offset, size), HOST_SPACE)
        writes = map_flags & (cl.CL_MAP_WRITE | cl.CL_MAP_WRITE_INVALIDATE_REGION)
        _submit(queue, cl.CL_COMMAND_MAP_BUFFER, None, num_events_in_wait_list, event_wait_list, event,
                (buf,), blocking_map, accesses=((buf, True), (HOST, True)),
                needs=() if map_flags & cl.CL_MAP_WRITE_INVALIDATE_REGION else (piece,),
                writes=(piece,) if writes else ())
    except BaseException:
        buf.drop_mapping(mapping)          # no pointer returned: nothing to unmap
        raise
    return mapping.pointer


@entry
def clEnqueueUnmapMemObject(command_queue, memobj, mapped_ptr, num_events_in_wait_list, event_wait_list, event):
    queue = lookup_queue(command_queue)
    buf = _buffer_of(queue, memobj)
    # "CL_INVALID_VALUE if mapped_ptr is not a valid pointer returned by clEnqueueMapBuffer or
    # clEnqueueMapImage for memobj" (OpenCL 3.0): each unmap takes one mapping of memobj whose
    # unmap is not enqueued yet, so a pointer mapped twice needs two unmaps and a third fails.
    mapping = buf.begin_unmap(mapped_ptr or 0)
    check(mapping is not None, cl.CL_INVALID_VALUE,
          f"mapped_ptr {mapped_ptr or 0:#x} is not a pointer of this memory object that is mapped and not "
          "yet unmapped")
    command = queue.new_command()
    try:
        # The host's writes through the pointer are already in the buffer (one address space).
        _submit(queue, cl.CL_COMMAND_UNMAP_MEM_OBJECT, command, num_events_in_wait_list, event_wait_list,
                event, (buf,), accesses=((buf, mapping.writes), (HOST, True)))
    except BaseException:
        buf.cancel_unmap(mapping)
        raise
    # Counted in CL_MEM_MAP_COUNT until the unmap has finished (or failed).
    buf.unmap_enqueued(mapping, command)


@entry
def clEnqueueMigrateMemObjects(command_queue, num_mem_objects, mem_objects, flags, num_events_in_wait_list,
                               event_wait_list, event):
    queue = lookup_queue(command_queue)
    check(num_mem_objects and mem_objects, cl.CL_INVALID_VALUE, "no memory objects")
    check(not flags & ~(cl.CL_MIGRATE_MEM_OBJECT_HOST | cl.CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED),
          cl.CL_INVALID_VALUE, "unknown migration flags")
    buffers = [_buffer_of(queue, h) for h in (ctypes.c_size_t * num_mem_objects).from_address(mem_objects)]
    # To the host, or to the queue's device (for devices sharing the host's memory: nothing
    # moves). Contents undefined: nothing is copied, the target's copy becomes the current one.
    undefined = flags & cl.CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED
    target = HOST_SPACE if flags & cl.CL_MIGRATE_MEM_OBJECT_HOST else queue.device.memory_space
    pieces = [(b, target) for b in buffers]
    _submit(queue, cl.CL_COMMAND_MIGRATE_MEM_OBJECTS, None, num_events_in_wait_list, event_wait_list, event,
            buffers, accesses=[(b, bool(undefined)) for b in buffers], needs=() if undefined else pieces,
            writes=pieces if undefined else ())


# --- markers and barriers ------------------------------------------------------------------------

@entry
def clEnqueueMarkerWithWaitList(command_queue, num_events_in_wait_list, event_wait_list, event):
    queue = lookup_queue(command_queue)
    _submit(queue, cl.CL_COMMAND_MARKER, None, num_events_in_wait_list, event_wait_list, event,
            barrier=not num_events_in_wait_list)


@entry
def clEnqueueBarrierWithWaitList(command_queue, num_events_in_wait_list, event_wait_list, event):
    queue = lookup_queue(command_queue)
    _submit(queue, cl.CL_COMMAND_BARRIER, None, num_events_in_wait_list, event_wait_list, event, barrier=True)


@entry
def clEnqueueMarker(command_queue, event):
    lookup_queue(command_queue)
    check(event, cl.CL_INVALID_VALUE, "event is NULL")
    clEnqueueMarkerWithWaitList(command_queue, 0, 0, event)


@entry
def clEnqueueBarrier(command_queue):
    clEnqueueBarrierWithWaitList(command_queue, 0, 0, 0)


@entry
def clEnqueueWaitForEvents(command_queue, num_events, event_list):
    queue = lookup_queue(command_queue)
    check(num_events and event_list, cl.CL_INVALID_VALUE, "no events")
    # OpenCL 1.1: "CL_INVALID_EVENT if event objects specified in event_list are not valid
    # events" (its event_list is no wait list: not CL_INVALID_EVENT_WAIT_LIST).
    for e in handles.lookup_array(num_events, event_list, Event, cl.CL_INVALID_EVENT):
        raise_refusal(_native.event_context_refusal(e.context is queue.context))
    _submit(queue, cl.CL_COMMAND_BARRIER, None, num_events, event_list, 0, barrier=True)


# --- kernels --------------------------------------------------------------------------------------

def prime_ndrange(command_queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size,
                  wants_event):
    """The native clEnqueueNDRangeKernel (api/_native.pyx) did not answer: give the kernel a
    plan that knows this launch's sizes and holds its objects and, for an event, make the queue
    hold the references native events need, so that it may answer now (and next time). True if
    anything changed. A request the checks refuse is left to clEnqueueNDRangeKernel, which reports it."""
    queue, k = handles.adopted(command_queue), handles.peek(kernel)   # (a native queue: adopted)
    if k is None and isinstance(queue, CommandQueue):     # a kernel made natively, with a plan
        primed = _native.prime_native_kernel(kernel)       # built natively: its buffers held
        if primed is not None:                             # (api/native_plans.pxi)
            if wants_event and not queue.core.holds_events:
                queue.hold_native_events()
                primed = True
            if primed:
                return True
    if not isinstance(queue, CommandQueue) or not isinstance(k, Kernel) or queue.moves_memory \
            or checks.is_checked(k.info):
        return False                 # (the fast path leaves memory moves and checked kernels to Python)
    # a kernel made natively, adopted with its arguments set there: its first plan armed, as
    # set_arg arms a Python kernel's (unarmed, its hold is taken and let go at every launch)
    primed = k.prepare_plan()
    plan = k.current_plan()
    if plan is not None and not plan.knows_geometry(queue.device, work_dim, global_work_size, local_work_size or 0):
        plan = None                  # (these sizes: checked, and told to the plan, below)
    if plan is None:
        try:
            plan = _prepared_launch(queue, k, work_dim, global_work_offset, global_work_size, local_work_size)
        except CLError:
            return False
        primed = True
    if not plan.holding and not plan.armed:   # (an armed plan launches without its hold)
        if not plan.hold():                 # an argument was released: the Python path says so
            k.drop_plan()
            return False
        primed = True
    if wants_event and not queue.core.holds_events:
        queue.hold_native_events()
        primed = True
    return primed


def prime_command(command_queue, buffers, wants_event):
    """A native buffer command or marker (api/native_commands.pxi) did not answer: let the
    buffers' records hold them and, for an event, the queue hold what native events need. True
    if anything changed (the native entry may answer now); a call the checks refuse is left to
    the Python entry, which reports it."""
    queue = handles.peek(command_queue)
    unadopted = queue is None and _native.is_unadopted_queue(command_queue)   # (its events' hold: pinned)
    if not unadopted and (not isinstance(queue, CommandQueue) or queue.moves_memory):
        return False
    primed = False
    for address in buffers:
        primed |= _native.hold_memory(address)
    if wants_event and not unadopted and not queue.core.holds_events:
        queue.hold_native_events()
        primed = True
    return primed


def adopt_native_event(queue, command, reference_count, command_type=cl.CL_COMMAND_NDRANGE_KERNEL):
    """The core Event of an event the fast path made natively, when Python first needs it."""
    ev = Event(queue.context, queue, command_type, command)
    ev._refcount = reference_count
    return ev


@entry
def clEnqueueNDRangeKernel(command_queue, kernel, work_dim, global_work_offset, global_work_size,
                           local_work_size, num_events_in_wait_list, event_wait_list, event):
    queue = lookup_queue(command_queue)
    k = lookup_kernel(kernel)
    if not global_work_size and 1 <= work_dim <= 3:
        # OpenCL 2.1 on: a NULL global size is a zero-sized launch, which "will trivially
        # succeed after its event dependencies are satisfied" (the error it was is deprecated)
        no_work_items = (ctypes.c_size_t * 3)()
        global_work_size = ctypes.addressof(no_work_items)
    if queue.device.compiler_target.runs_own_code:         # its own code, its own launch
        _launch_checks(queue, k, work_dim, global_work_size)
        global_size, local, offset, empty = _geometry(k, queue.device, work_dim, global_work_offset,
                                                      global_work_size, local_work_size)
        check(k.info.local_mem_size + k.local_args_size() <= queue.device.local_mem_size, cl.CL_OUT_OF_RESOURCES,
              f"kernel needs more than the device's {queue.device.local_mem_size} bytes of local memory")
        waits = wait_list(num_events_in_wait_list, event_wait_list, queue.context)
        return_event(k.device_launch(queue, work_dim, global_size, local, offset, empty, waits), event)
        return
    plan = _prepared_launch(queue, k, work_dim, global_work_offset, global_work_size, local_work_size)
    waits = wait_list(num_events_in_wait_list, event_wait_list, queue.context)
    if not queue.moves_memory:
        ev = queue.launch(plan, work_dim, global_work_size, local_work_size or 0, global_work_offset or 0, waits)
    else:
        after, record = k.bring_arguments(queue)
        ev = queue.launch(plan, work_dim, global_work_size, local_work_size or 0, global_work_offset or 0, waits,
                          after=after)
        record(ev.command)
    if plan in k.check_records:          # PYPLAT_CHECK: its finding reported when it ends
        checks.watch(ev.command, k.info, k.check_records[plan])
    return_event(ev, event)


def _launch_checks(queue, k, work_dim, global_work_size):
    """clEnqueueNDRangeKernel's checks of the kernel, its arguments and the dimensions."""
    check(k.program.context is queue.context, cl.CL_INVALID_CONTEXT, "kernel and queue in different contexts")
    check(k.program.built_for(queue.device), cl.CL_INVALID_PROGRAM_EXECUTABLE,
          "no program executable for the queue's device")
    raise_refusal(dimensions_refusal(work_dim))
    # (the entry makes a NULL global size zero-sized first; prime_ndrange leaves it to the entry)
    check(global_work_size, cl.CL_INVALID_GLOBAL_WORK_SIZE, "global_work_size is NULL")
    check(k.all_args_set, cl.CL_INVALID_KERNEL_ARGS, "not every kernel argument has been set")
    released = k.released_arg()
    if released is not None:
        k.drop_plan()
        raise CLError(cl.CL_INVALID_KERNEL_ARGS, f"argument {released} is a memory object the program released")


def _prepared_launch(queue, k, work_dim, global_work_offset, global_work_size, local_work_size):
    """clEnqueueNDRangeKernel's checks but the wait list's: the kernel's plan for its current
    arguments, told this request's validated sizes. From then on the native fast path
    (api/_native.pyx) answers repeats of the launch -- same queue device, arguments and sizes,
    any offset -- without Python."""
    _launch_checks(queue, k, work_dim, global_work_size)
    device = queue.device
    geometry = _geometry(k, device, work_dim, global_work_offset, global_work_size, local_work_size)
    width = 8 * work_dim
    k.shape.remember_launch(device, work_dim, ctypes.string_at(global_work_size, width),   # (the kernel's
                            ctypes.string_at(local_work_size, width) if local_work_size else None,  # latest)
                            geometry)
    global_size, local, offset, empty = geometry
    plan = k.plan(device.memory_space)
    local_size = checks.kernel_local_size(k.info, plan.scratch_size)    # (PYPLAT_CHECK: less its shadows)
    if local_size > device.local_mem_size:
        raise CLError(cl.CL_OUT_OF_RESOURCES, f"kernel needs {local_size} bytes of local memory, "
                      f"the device has {device.local_mem_size}")
    plan.remember_geometry(device, work_dim, global_work_size, local_work_size or 0, global_size, local, empty)
    return plan


def _geometry(k, device, work_dim, global_work_offset, global_work_size, local_work_size):
    """(global size, local size, offset, empty) padded to 3 dimensions, validated by the rules
    the native entry applies too (runtime/sched/launch_sizes.pxi: written once, with reasons)."""
    global_size = list((ctypes.c_size_t * work_dim).from_address(global_work_size))
    local = list((ctypes.c_size_t * work_dim).from_address(local_work_size)) if local_work_size else None
    offset = list((ctypes.c_size_t * work_dim).from_address(global_work_offset)) if global_work_offset else None
    refusal, geometry = launch_geometry(work_dim, global_size, local, offset, device.max_work_group_size,
                                        device.max_work_item_sizes, k.info.reqd_work_group_size)
    raise_refusal(refusal)
    return geometry


@entry
def clEnqueueTask(command_queue, kernel, num_events_in_wait_list, event_wait_list, event):
    one = (ctypes.c_size_t * 1)(1)
    return clEnqueueNDRangeKernel(command_queue, kernel, 1, 0, ctypes.addressof(one), ctypes.addressof(one),
                                  num_events_in_wait_list, event_wait_list, event)


@entry
def clEnqueueNativeKernel(command_queue, user_func, args, cb_args, num_mem_objects, mem_list, args_mem_loc,
                          num_events_in_wait_list, event_wait_list, event):
    """Calls user_func(copy of args) on the device, natively; memory objects in the copy are
    replaced by their host addresses (brought to the host first where a device has memory of its
    own; the function may write any of them)."""
    queue = lookup_queue(command_queue)
    check(queue.device.execution_capabilities & cl.CL_EXEC_NATIVE_KERNEL, cl.CL_INVALID_OPERATION,
          "the device does not execute native kernels")
    check(user_func, cl.CL_INVALID_VALUE, "user_func is NULL")
    check(bool(args) == bool(cb_args), cl.CL_INVALID_VALUE, "args and cb_args disagree")
    check(bool(num_mem_objects) == bool(mem_list) and bool(num_mem_objects) == bool(args_mem_loc),
          cl.CL_INVALID_VALUE, "num_mem_objects, mem_list and args_mem_loc disagree")
    buffers, locations = [], []
    if num_mem_objects:
        handles_ = (ctypes.c_size_t * num_mem_objects).from_address(mem_list)
        locs = (ctypes.c_size_t * num_mem_objects).from_address(args_mem_loc)
        for h, loc in zip(handles_, locs):
            buf = _buffer_of(queue, h)
            check(args <= loc and loc + 8 <= args + cb_args, cl.CL_INVALID_VALUE,
                  "args_mem_loc points outside args")
            buffers.append(buf)
            locations.append(loc - args)
    block = bytearray(ctypes.string_at(args, cb_args) if cb_args else b"")
    for buf, at in zip(buffers, locations):
        block[at:at + 8] = buf.address.to_bytes(8, "little")
    command = queue.new_command()
    command.set_native_kernel(user_func, bytes(block))
    pieces = [(b, HOST_SPACE) for b in buffers]
    _submit(queue, cl.CL_COMMAND_NATIVE_KERNEL, command, num_events_in_wait_list, event_wait_list, event,
            buffers, needs=pieces, writes=pieces)
