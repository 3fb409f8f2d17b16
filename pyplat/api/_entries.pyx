# cython: language_level=3
"""Direct C entries for the hottest OpenCL functions (the "fast path" of docs/runtime.md).

The shim's entry table normally holds ctypes callbacks (pyplat/api/bridge.py). For the functions
below, the bridge writes the address of a C function with the exact C signature instead: it runs
with the GIL (the shim's stub took it) and calls the same Python implementation, turning its
result into the status code exactly as the bridge does (None -> CL_SUCCESS, CLError -> its code,
anything else -> CL_OUT_OF_HOST_MEMORY with the traceback on stderr), which saves ctypes'
argument objects and libffi closure. Where there is a native entry (answered without the
GIL, PYPLAT_DEFER otherwise: pyplat/api/_native.pyx), the shim calls it before taking the GIL and
these functions call it first as well, so in-process callers (tests/capi.py) run the same code as
C programs.
"""
from libc.stdint cimport int32_t, uint32_t, uint64_t

DEF CL_SUCCESS = 0
DEF CL_OUT_OF_HOST_MEMORY = -6

cdef object _clerror = None
cdef object _report = None
cdef object _failed = None
cdef list _impl = [None] * 40

# The native fast path (pyplat/api/_native.pyx, n_*): C functions with the OpenCL signature that
# need no GIL and return PYPLAT_DEFER (icd/pyplat_handle.h) when they did not answer. The shim
# calls them before taking the GIL; the entries below call them too (in-process callers come here
# directly).
include "native_entry_types.pxi"
cdef extern from "pyplat_handle.h":
    enum:
        PYPLAT_DEFER
    void *PYPLAT_DEFER_HANDLE
cdef ndrange_fn _n_ndrange = NULL
cdef wait_fn _n_wait = NULL
cdef handle_fn _n_retain_event = NULL
cdef handle_fn _n_release_event = NULL
cdef handle_fn _n_flush = NULL
cdef handle_fn _n_finish = NULL
cdef setarg_fn _n_setarg = NULL
cdef event_info_fn _n_event_info = NULL
cdef transfer_fn _n_write = NULL
cdef transfer_fn _n_read = NULL
cdef copy_fn _n_copy = NULL
cdef fill_fn _n_fill = NULL
cdef marker_fn _n_marker = NULL
cdef marker_fn _n_barrier = NULL
cdef event_info_fn _n_mem_info = NULL
cdef event_info_fn _n_kernel_info = NULL
cdef kernel_wg_info_fn _n_kernel_wg_info = NULL
cdef create_fn _n_create_user_event = NULL
cdef create_buffer_fn _n_create_buffer = NULL
cdef create_sub_buffer_fn _n_create_sub_buffer = NULL
cdef create_kernel_fn _n_create_kernel = NULL
cdef set_status_fn _n_set_user_event_status = NULL
cdef map_fn _n_map = NULL
cdef unmap_fn _n_unmap = NULL
cdef handle_fn _n_refs[10]            # clRetain*/clRelease* (REF_NAMES' order); NULL: none
include "direct_creations.pxi"
cdef object _prime_ndrange = None
cdef object _prime_command = None

DEF I_NDRANGE = 0
DEF I_SETARG = 1
DEF I_RETAIN_EVENT = 2
DEF I_RELEASE_EVENT = 3
DEF I_WAIT = 4
DEF I_FLUSH = 5
DEF I_FINISH = 6
DEF I_READ = 7
DEF I_WRITE = 8
DEF I_EVENT_INFO = 9
DEF I_COPY = 10
DEF I_FILL = 11
DEF I_MARKER = 12
DEF I_BARRIER = 13
DEF I_REFS = 14                        # ... to 23: REF_NAMES
DEF I_MEM_INFO = 24
DEF I_KERNEL_INFO = 25
DEF I_KERNEL_WG_INFO = 26
DEF I_CREATE_KERNEL = 27
DEF I_CREATE_USER_EVENT = 28
DEF I_SET_USER_EVENT_STATUS = 29
DEF I_CREATE_BUFFER = 30
DEF I_CREATE_SUB_BUFFER = 31
DEF I_MAP = 32
DEF I_UNMAP = 33

NAMES = ("clEnqueueNDRangeKernel", "clSetKernelArg", "clRetainEvent", "clReleaseEvent",
         "clWaitForEvents", "clFlush", "clFinish", "clEnqueueReadBuffer", "clEnqueueWriteBuffer",
         "clGetEventInfo", "clEnqueueCopyBuffer", "clEnqueueFillBuffer", "clEnqueueMarkerWithWaitList",
         "clEnqueueBarrierWithWaitList")
# The retain/release entries of contexts, queues, memory objects, programs and kernels (indices
# I_REFS + i in NAMES, native entries in _n_refs).
REF_NAMES = ("clRetainContext", "clReleaseContext", "clRetainCommandQueue", "clReleaseCommandQueue",
             "clRetainMemObject", "clReleaseMemObject", "clRetainProgram", "clReleaseProgram",
             "clRetainKernel", "clReleaseKernel")
NAMES += REF_NAMES
NAMES += ("clGetMemObjectInfo", "clGetKernelInfo", "clGetKernelWorkGroupInfo", "clCreateKernel",
          "clCreateUserEvent", "clSetUserEventStatus", "clCreateBuffer", "clCreateSubBuffer",
          "clEnqueueMapBuffer", "clEnqueueUnmapMemObject")
NAMES += tuple(CREATION_KINDS)            # (direct_creations.pxi: called by name)


cdef int32_t _status(int index, tuple args):
    """Call the Python implementation; the GIL is held."""
    try:
        result = _impl[index](*args)
        return CL_SUCCESS if result is None else result
    except BaseException as e:
        if isinstance(e, _clerror):
            _failed(NAMES[index], e, args)
            return (<object>e).code
        try:
            _report(NAMES[index])
        except BaseException:
            pass
        return CL_OUT_OF_HOST_MEMORY


cdef int32_t e_ndrange(size_t queue, size_t kernel, uint32_t work_dim, size_t offset, size_t global_size,
                       size_t local_size, uint32_t n_events, size_t events, size_t event) noexcept with gil:
    cdef int32_t status
    if _n_ndrange != NULL:
        status = _n_ndrange(queue, kernel, work_dim, offset, global_size, local_size, n_events, events, event)
        if status != PYPLAT_DEFER:
            return status
        # not answered: maybe only because the plan or the queue holds no references yet
        if _primed(queue, kernel, work_dim, offset, global_size, local_size, event):
            status = _n_ndrange(queue, kernel, work_dim, offset, global_size, local_size, n_events, events,
                                event)
            if status != PYPLAT_DEFER:
                return status
    return _status(I_NDRANGE, (queue, kernel, work_dim, offset, global_size, local_size, n_events,
                               events, event))


cdef bint _primed(size_t queue, size_t kernel, uint32_t work_dim, size_t offset, size_t global_size,
                  size_t local_size, size_t event):
    try:
        return bool(_prime_ndrange(queue, kernel, work_dim, offset, global_size, local_size, event != 0))
    except BaseException:
        _report("clEnqueueNDRangeKernel")
        return False


cdef int32_t e_setarg(size_t kernel, uint32_t index, uint64_t size, size_t value) noexcept with gil:
    cdef int32_t status
    if _n_setarg != NULL:
        status = _n_setarg(kernel, index, size, value)
        if status != PYPLAT_DEFER:
            return status
    return _status(I_SETARG, (kernel, index, size, value))


cdef int32_t _on_handle(handle_fn native, bint waits, int index, size_t handle) noexcept with gil:
    """An entry taking one handle: its native entry first (without the GIL if it may wait, since
    commands may need the GIL to finish), then the Python implementation."""
    cdef int32_t status
    if native != NULL:
        if waits:
            with nogil:
                status = native(handle)
        else:
            status = native(handle)
        if status != PYPLAT_DEFER:
            return status
    return _status(index, (handle,))


cdef int32_t e_retain_event(size_t event) noexcept with gil:
    return _on_handle(_n_retain_event, False, I_RETAIN_EVENT, event)


cdef int32_t e_release_event(size_t event) noexcept with gil:
    return _on_handle(_n_release_event, False, I_RELEASE_EVENT, event)


cdef int32_t e_retain_context(size_t h) noexcept with gil:
    return _on_handle(_n_refs[0], False, I_REFS + 0, h)


cdef int32_t e_release_context(size_t h) noexcept with gil:
    return _on_handle(_n_refs[1], False, I_REFS + 1, h)


cdef int32_t e_retain_queue(size_t h) noexcept with gil:
    return _on_handle(_n_refs[2], False, I_REFS + 2, h)


cdef int32_t e_release_queue(size_t h) noexcept with gil:
    return _on_handle(_n_refs[3], False, I_REFS + 3, h)


cdef int32_t e_retain_mem(size_t h) noexcept with gil:
    return _on_handle(_n_refs[4], False, I_REFS + 4, h)


cdef int32_t e_release_mem(size_t h) noexcept with gil:
    return _on_handle(_n_refs[5], False, I_REFS + 5, h)


cdef int32_t e_retain_program(size_t h) noexcept with gil:
    return _on_handle(_n_refs[6], False, I_REFS + 6, h)


cdef int32_t e_release_program(size_t h) noexcept with gil:
    return _on_handle(_n_refs[7], False, I_REFS + 7, h)


cdef int32_t e_retain_kernel(size_t h) noexcept with gil:
    return _on_handle(_n_refs[8], False, I_REFS + 8, h)


cdef int32_t e_release_kernel(size_t h) noexcept with gil:
    return _on_handle(_n_refs[9], False, I_REFS + 9, h)


cdef int32_t e_wait(uint32_t n, size_t events) noexcept with gil:
    cdef int32_t status
    if _n_wait != NULL:
        with nogil:                      # it waits, and commands may need the GIL to finish
            status = _n_wait(n, events)
        if status != PYPLAT_DEFER:
            return status
    return _status(I_WAIT, (n, events))


cdef int32_t e_flush(size_t queue) noexcept with gil:
    return _on_handle(_n_flush, False, I_FLUSH, queue)


cdef int32_t e_finish(size_t queue) noexcept with gil:
    return _on_handle(_n_finish, True, I_FINISH, queue)


cdef bint _primed_command(int index, size_t queue, tuple buffers, size_t event):
    """A native buffer command deferred: maybe only because a buffer or the queue holds no
    references yet (enqueue.prime_command). True if the native entry may answer now."""
    try:
        return bool(_prime_command(queue, buffers, event != 0))
    except BaseException:
        _report(NAMES[index])
        return False


cdef int32_t _transfer(transfer_fn native, int index, size_t queue, size_t buffer, uint32_t blocking,
                       uint64_t offset, uint64_t size, size_t ptr, uint32_t n_events, size_t events,
                       size_t event) noexcept with gil:
    """clEnqueueReadBuffer / clEnqueueWriteBuffer: the native entry (without the GIL if it
    blocks: commands may need the GIL to finish), primed once if it deferred, then Python."""
    cdef int32_t status = PYPLAT_DEFER
    cdef int attempt
    if native != NULL:
        for attempt in range(2):
            if attempt and not _primed_command(index, queue, (buffer,), event):
                break
            if blocking:
                with nogil:
                    status = native(queue, buffer, blocking, offset, size, ptr, n_events, events, event)
            else:
                status = native(queue, buffer, blocking, offset, size, ptr, n_events, events, event)
            if status != PYPLAT_DEFER:
                return status
    return _status(index, (queue, buffer, blocking, offset, size, ptr, n_events, events, event))


cdef int32_t e_read(size_t queue, size_t buffer, uint32_t blocking, uint64_t offset, uint64_t size,
                    size_t ptr, uint32_t n_events, size_t events, size_t event) noexcept with gil:
    return _transfer(_n_read, I_READ, queue, buffer, blocking, offset, size, ptr, n_events, events, event)


cdef int32_t e_write(size_t queue, size_t buffer, uint32_t blocking, uint64_t offset, uint64_t size,
                     size_t ptr, uint32_t n_events, size_t events, size_t event) noexcept with gil:
    return _transfer(_n_write, I_WRITE, queue, buffer, blocking, offset, size, ptr, n_events, events, event)


cdef int32_t e_copy(size_t queue, size_t src, size_t dst, uint64_t src_offset, uint64_t dst_offset,
                    uint64_t size, uint32_t n_events, size_t events, size_t event) noexcept with gil:
    cdef int32_t status
    cdef int attempt
    if _n_copy != NULL:
        for attempt in range(2):
            if attempt and not _primed_command(I_COPY, queue, (src, dst), event):
                break
            status = _n_copy(queue, src, dst, src_offset, dst_offset, size, n_events, events, event)
            if status != PYPLAT_DEFER:
                return status
    return _status(I_COPY, (queue, src, dst, src_offset, dst_offset, size, n_events, events, event))


cdef int32_t e_fill(size_t queue, size_t buffer, size_t pattern, uint64_t pattern_size, uint64_t offset,
                    uint64_t size, uint32_t n_events, size_t events, size_t event) noexcept with gil:
    cdef int32_t status
    cdef int attempt
    if _n_fill != NULL:
        for attempt in range(2):
            if attempt and not _primed_command(I_FILL, queue, (buffer,), event):
                break
            status = _n_fill(queue, buffer, pattern, pattern_size, offset, size, n_events, events, event)
            if status != PYPLAT_DEFER:
                return status
    return _status(I_FILL, (queue, buffer, pattern, pattern_size, offset, size, n_events, events, event))


cdef size_t e_map(size_t queue, size_t buffer, uint32_t blocking, uint64_t flags, uint64_t offset,
                  uint64_t size, uint32_t n_events, size_t events, size_t event,
                  size_t errcode_ret) noexcept with gil:
    """clEnqueueMapBuffer: the native entry (without the GIL if it blocks), primed once if it
    deferred, then Python with the bridge's rules for functions returning a pointer."""
    cdef size_t pointer
    cdef int attempt
    if _n_map != NULL:
        for attempt in range(2):
            if attempt and not _primed_command(I_MAP, queue, (buffer,), event):
                break
            if blocking:
                with nogil:
                    pointer = _n_map(queue, buffer, blocking, flags, offset, size, n_events, events, event,
                                     errcode_ret)
            else:
                pointer = _n_map(queue, buffer, blocking, flags, offset, size, n_events, events, event,
                                 errcode_ret)
            if pointer != <size_t>PYPLAT_DEFER_HANDLE:
                return pointer
    return _created(I_MAP, (queue, buffer, blocking, flags, offset, size, n_events, events, event,
                            errcode_ret), errcode_ret)


cdef int32_t e_unmap(size_t queue, size_t mem, size_t ptr, uint32_t n_events, size_t events,
                     size_t event) noexcept with gil:
    cdef int32_t status
    cdef int attempt
    if _n_unmap != NULL:
        for attempt in range(2):
            if attempt and not _primed_command(I_UNMAP, queue, (mem,), event):
                break
            status = _n_unmap(queue, mem, ptr, n_events, events, event)
            if status != PYPLAT_DEFER:
                return status
    return _status(I_UNMAP, (queue, mem, ptr, n_events, events, event))


cdef int32_t _queue_point(marker_fn native, int index, size_t queue, uint32_t n_events, size_t events,
                          size_t event) noexcept with gil:
    """A marker or barrier: the native entry, primed once if it deferred, then Python."""
    cdef int32_t status
    cdef int attempt
    if native != NULL:
        for attempt in range(2):
            if attempt and not _primed_command(index, queue, (), event):
                break
            status = native(queue, n_events, events, event)
            if status != PYPLAT_DEFER:
                return status
    return _status(index, (queue, n_events, events, event))


cdef int32_t e_marker(size_t queue, uint32_t n_events, size_t events, size_t event) noexcept with gil:
    return _queue_point(_n_marker, I_MARKER, queue, n_events, events, event)


cdef int32_t e_barrier(size_t queue, uint32_t n_events, size_t events, size_t event) noexcept with gil:
    return _queue_point(_n_barrier, I_BARRIER, queue, n_events, events, event)


cdef int32_t _info(event_info_fn native, int index, size_t obj, uint32_t param, uint64_t size,
                   size_t value, size_t size_ret) noexcept with gil:
    """A clGetXInfo entry: its native entry first (the queries programs repeat), then Python."""
    cdef int32_t status
    if native != NULL:
        status = native(obj, param, size, value, size_ret)
        if status != PYPLAT_DEFER:
            return status
    return _status(index, (obj, param, size, value, size_ret))


cdef int32_t e_event_info(size_t event, uint32_t param, uint64_t size, size_t value,
                          size_t size_ret) noexcept with gil:
    return _info(_n_event_info, I_EVENT_INFO, event, param, size, value, size_ret)


cdef int32_t e_mem_info(size_t mem, uint32_t param, uint64_t size, size_t value,
                        size_t size_ret) noexcept with gil:
    return _info(_n_mem_info, I_MEM_INFO, mem, param, size, value, size_ret)


cdef int32_t e_kernel_info(size_t kernel, uint32_t param, uint64_t size, size_t value,
                           size_t size_ret) noexcept with gil:
    return _info(_n_kernel_info, I_KERNEL_INFO, kernel, param, size, value, size_ret)


cdef int32_t e_kernel_wg_info(size_t kernel, size_t device, uint32_t param, uint64_t size, size_t value,
                              size_t size_ret) noexcept with gil:
    cdef int32_t status
    if _n_kernel_wg_info != NULL:
        status = _n_kernel_wg_info(kernel, device, param, size, value, size_ret)
        if status != PYPLAT_DEFER:
            return status
    return _status(I_KERNEL_WG_INFO, (kernel, device, param, size, value, size_ret))


cdef size_t _created(int index, tuple args, size_t errcode_ret):
    """Call the Python implementation of a clCreateX entry with the bridge's rules for creators
    (bridge._wrap_creator): the handle returned, the code written through errcode_ret."""
    cdef int32_t code = CL_SUCCESS
    cdef size_t handle = 0
    try:
        handle = _impl[index](*args) or 0
    except BaseException as e:
        if isinstance(e, _clerror):
            _failed(NAMES[index], e, args)
            code = (<object>e).code
            handle = getattr(e, "result", 0) or 0
        else:
            try:
                _report(NAMES[index])
            except BaseException:
                pass
            code = CL_OUT_OF_HOST_MEMORY
    if errcode_ret:
        (<int32_t *>errcode_ret)[0] = code
    return handle


cdef size_t e_create_kernel(size_t program, size_t name, size_t errcode_ret) noexcept with gil:
    cdef size_t kernel
    if _n_create_kernel != NULL:
        kernel = _n_create_kernel(program, name, errcode_ret)
        if kernel != <size_t>PYPLAT_DEFER_HANDLE:
            return kernel
    return _created(I_CREATE_KERNEL, (program, name, errcode_ret), errcode_ret)


cdef size_t e_create_user_event(size_t context, size_t errcode_ret) noexcept with gil:
    cdef size_t event
    if _n_create_user_event != NULL:
        event = _n_create_user_event(context, errcode_ret)
        if event != <size_t>PYPLAT_DEFER_HANDLE:
            return event
    return _created(I_CREATE_USER_EVENT, (context, errcode_ret), errcode_ret)


cdef size_t e_create_buffer(size_t context, uint64_t flags, uint64_t size, size_t host_ptr,
                           size_t errcode_ret) noexcept with gil:
    cdef size_t buffer
    if _n_create_buffer != NULL:
        buffer = _n_create_buffer(context, flags, size, host_ptr, errcode_ret)
        if buffer != <size_t>PYPLAT_DEFER_HANDLE:
            return buffer
    return _created(I_CREATE_BUFFER, (context, flags, size, host_ptr, errcode_ret), errcode_ret)


cdef size_t e_create_sub_buffer(size_t buffer, uint64_t flags, uint32_t create_type, size_t info,
                               size_t errcode_ret) noexcept with gil:
    cdef size_t sub
    if _n_create_sub_buffer != NULL:
        sub = _n_create_sub_buffer(buffer, flags, create_type, info, errcode_ret)
        if sub != <size_t>PYPLAT_DEFER_HANDLE:
            return sub
    return _created(I_CREATE_SUB_BUFFER, (buffer, flags, create_type, info, errcode_ret), errcode_ret)


cdef int32_t e_set_user_event_status(size_t event, int32_t status) noexcept with gil:
    cdef int32_t answer
    if _n_set_user_event_status != NULL:
        answer = _n_set_user_event_status(event, status)
        if answer != PYPLAT_DEFER:
            return answer
    return _status(I_SET_USER_EVENT_STATUS, (event, status))


def addresses():
    """name -> address of its direct C entry."""
    return {
        "clEnqueueNDRangeKernel": <size_t>e_ndrange, "clSetKernelArg": <size_t>e_setarg,
        "clRetainEvent": <size_t>e_retain_event, "clReleaseEvent": <size_t>e_release_event,
        "clWaitForEvents": <size_t>e_wait, "clFlush": <size_t>e_flush, "clFinish": <size_t>e_finish,
        "clEnqueueReadBuffer": <size_t>e_read, "clEnqueueWriteBuffer": <size_t>e_write,
        "clGetEventInfo": <size_t>e_event_info, "clEnqueueCopyBuffer": <size_t>e_copy,
        "clEnqueueFillBuffer": <size_t>e_fill, "clEnqueueMarkerWithWaitList": <size_t>e_marker,
        "clEnqueueBarrierWithWaitList": <size_t>e_barrier,
        "clRetainContext": <size_t>e_retain_context, "clReleaseContext": <size_t>e_release_context,
        "clRetainCommandQueue": <size_t>e_retain_queue, "clReleaseCommandQueue": <size_t>e_release_queue,
        "clRetainMemObject": <size_t>e_retain_mem, "clReleaseMemObject": <size_t>e_release_mem,
        "clRetainProgram": <size_t>e_retain_program, "clReleaseProgram": <size_t>e_release_program,
        "clRetainKernel": <size_t>e_retain_kernel, "clReleaseKernel": <size_t>e_release_kernel,
        "clGetMemObjectInfo": <size_t>e_mem_info, "clGetKernelInfo": <size_t>e_kernel_info,
        "clGetKernelWorkGroupInfo": <size_t>e_kernel_wg_info, "clCreateKernel": <size_t>e_create_kernel,
        "clCreateUserEvent": <size_t>e_create_user_event,
        "clSetUserEventStatus": <size_t>e_set_user_event_status,
        "clCreateBuffer": <size_t>e_create_buffer, "clCreateSubBuffer": <size_t>e_create_sub_buffer,
        "clEnqueueMapBuffer": <size_t>e_map, "clEnqueueUnmapMemObject": <size_t>e_unmap,
    }


def configure(implementations, clerror, report, failed):
    """Bind the Python implementations (name -> function), CLError, the reporter of internal
    errors and the hook of CL errors (bridge._failed)."""
    global _clerror, _report, _failed
    _clerror, _report, _failed = clerror, report, failed
    for i, name in enumerate(NAMES):
        _impl[i] = implementations.get(name)
    return {**{name: address for name, address in addresses().items()
               if _impl[NAMES.index(name)] is not None}, **configure_creations(implementations)}


def use_fast_path(addresses, prime_ndrange, prime_command):
    """Try the native entries first: {name: address} from _native.fast_path_entries, and
    prime_ndrange(queue, kernel, wants_event) -> whether it prepared something that may let the
    native launch answer now; prime_command(queue, buffers, wants_event) the same for the native
    buffer commands and markers."""
    global _n_ndrange, _n_retain_event, _n_release_event, _n_flush, _n_finish, _n_wait, _prime_ndrange
    global _n_setarg, _n_event_info, _n_write, _n_read, _n_copy, _n_fill, _n_marker, _n_barrier
    global _prime_command, _n_mem_info, _n_kernel_info, _n_kernel_wg_info
    global _n_create_user_event, _n_set_user_event_status, _n_create_buffer, _n_create_sub_buffer
    global _n_create_kernel, _n_map, _n_unmap
    _n_map = <map_fn><size_t>addresses.get("clEnqueueMapBuffer", 0)
    _n_unmap = <unmap_fn><size_t>addresses.get("clEnqueueUnmapMemObject", 0)
    _n_create_kernel = <create_kernel_fn><size_t>addresses.get("clCreateKernel", 0)
    _n_create_buffer = <create_buffer_fn><size_t>addresses.get("clCreateBuffer", 0)
    _n_create_sub_buffer = <create_sub_buffer_fn><size_t>addresses.get("clCreateSubBuffer", 0)
    _n_create_user_event = <create_fn><size_t>addresses.get("clCreateUserEvent", 0)
    _n_set_user_event_status = <set_status_fn><size_t>addresses.get("clSetUserEventStatus", 0)
    _n_mem_info = <event_info_fn><size_t>addresses.get("clGetMemObjectInfo", 0)
    _n_kernel_info = <event_info_fn><size_t>addresses.get("clGetKernelInfo", 0)
    _n_kernel_wg_info = <kernel_wg_info_fn><size_t>addresses.get("clGetKernelWorkGroupInfo", 0)
    _n_write = <transfer_fn><size_t>addresses["clEnqueueWriteBuffer"]
    _n_read = <transfer_fn><size_t>addresses["clEnqueueReadBuffer"]
    _n_copy = <copy_fn><size_t>addresses["clEnqueueCopyBuffer"]
    _n_fill = <fill_fn><size_t>addresses["clEnqueueFillBuffer"]
    _n_marker = <marker_fn><size_t>addresses["clEnqueueMarkerWithWaitList"]
    _n_barrier = <marker_fn><size_t>addresses["clEnqueueBarrierWithWaitList"]
    _prime_command = prime_command
    _n_ndrange = <ndrange_fn><size_t>addresses["clEnqueueNDRangeKernel"]
    _n_event_info = <event_info_fn><size_t>addresses["clGetEventInfo"]
    _n_setarg = <setarg_fn><size_t>addresses["clSetKernelArg"]
    _n_retain_event = <handle_fn><size_t>addresses["clRetainEvent"]
    _n_release_event = <handle_fn><size_t>addresses["clReleaseEvent"]
    _n_flush = <handle_fn><size_t>addresses["clFlush"]
    _n_finish = <handle_fn><size_t>addresses["clFinish"]
    _n_wait = <wait_fn><size_t>addresses["clWaitForEvents"]
    _prime_ndrange = prime_ndrange
    for i, name in enumerate(REF_NAMES):         # (the traced set may lack them: Python answers)
        _n_refs[i] = <handle_fn><size_t>addresses.get(name, 0)
    use_creation_fast_path(addresses)            # (direct_creations.pxi)


# The argument kinds (pyplat/api/_entry_points.py) each C entry above is written for: an entry is
# installed only where the generated signature agrees.
KINDS = {
    "clEnqueueNDRangeKernel": ("ptr", "ptr", "u32", "ptr", "ptr", "ptr", "u32", "ptr", "ptr"),
    "clSetKernelArg": ("ptr", "u32", "u64", "ptr"),
    "clRetainEvent": ("ptr",), "clReleaseEvent": ("ptr",),
    "clWaitForEvents": ("u32", "ptr"),
    "clFlush": ("ptr",), "clFinish": ("ptr",),
    "clEnqueueReadBuffer": ("ptr", "ptr", "u32", "u64", "u64", "ptr", "u32", "ptr", "ptr"),
    "clEnqueueWriteBuffer": ("ptr", "ptr", "u32", "u64", "u64", "ptr", "u32", "ptr", "ptr"),
    "clGetEventInfo": ("ptr", "u32", "u64", "ptr", "ptr"),
    "clEnqueueCopyBuffer": ("ptr", "ptr", "ptr", "u64", "u64", "u64", "u32", "ptr", "ptr"),
    "clEnqueueFillBuffer": ("ptr", "ptr", "ptr", "u64", "u64", "u64", "u32", "ptr", "ptr"),
    "clEnqueueMarkerWithWaitList": ("ptr", "u32", "ptr", "ptr"),
    "clEnqueueBarrierWithWaitList": ("ptr", "u32", "ptr", "ptr"),
    "clGetMemObjectInfo": ("ptr", "u32", "u64", "ptr", "ptr"),
    "clGetKernelInfo": ("ptr", "u32", "u64", "ptr", "ptr"),
    "clGetKernelWorkGroupInfo": ("ptr", "ptr", "u32", "u64", "ptr", "ptr"),
    "clCreateKernel": ("ptr", "ptr", "ptr"),
    "clCreateUserEvent": ("ptr", "ptr"), "clSetUserEventStatus": ("ptr", "i32"),
    "clCreateBuffer": ("ptr", "u64", "u64", "ptr", "ptr"),
    "clCreateSubBuffer": ("ptr", "u64", "u32", "ptr", "ptr"),
    "clEnqueueMapBuffer": ("ptr", "ptr", "u32", "u64", "u64", "u64", "u32", "ptr", "ptr", "ptr"),
    "clEnqueueUnmapMemObject": ("ptr", "ptr", "ptr", "u32", "ptr", "ptr"),
}
KINDS.update({name: ("ptr",) for name in REF_NAMES})
KINDS.update(CREATION_KINDS)
# ... and of the native entries (pyplat/api/_native.pyx): each has its direct entry here, so
# in-process callers (tests/capi.py) run the native code C programs run.
NATIVE_KINDS = dict(KINDS)
