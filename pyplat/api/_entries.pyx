# cython: language_level=3
"""Direct C entries for the hottest OpenCL functions (the "fast path" of docs/runtime.md).

The shim's entry table normally holds ctypes callbacks (pyplat/api/bridge.py). For the functions
below, the bridge writes the address of a C function with the exact C signature instead: it runs
with the GIL (the shim's stub took it) and calls the same Python implementation, turning its
result into the status code exactly as the bridge does (None -> CL_SUCCESS, CLError -> its code,
anything else -> CL_OUT_OF_HOST_MEMORY with the traceback on stderr), which saves ctypes'
argument objects and libffi closure. Where there is a native entry (answered without the
GIL, PYPLAT_DEFER otherwise: pyplat/api/_native.pyx), the shim calls it before taking the GIL and
these functions call it first as well, so in-process callers (tests/support/capi.py) run the same code as
C programs.
"""
from libc.stdint cimport int32_t, uint32_t, uint64_t

cdef object _clerror = None
cdef object _report = None
cdef object _failed = None
cdef object _prime_ndrange = None
cdef object _prime_command = None

# The native fast path (pyplat/api/_native.pyx, n_*): C functions with the OpenCL signature that
# need no GIL and return PYPLAT_DEFER (icd/pyplat_handle.h) when they did not answer. The shim
# calls them before taking the GIL; the entries below call them too (in-process callers come here
# directly).
cdef extern from "pyplat_handle.h":
    enum:
        PYPLAT_DEFER
    void *PYPLAT_DEFER_HANDLE

# Generated at build time (icd/gen_cython_decls.py, from pyplat/api/native_entry_list.py and the
# headers): the CL_* constants, the entries' C types, and their tables -- the slot indices I_*,
# NAMES, KINDS, the native entries _n_<short> and addresses().
include "cl_constants.pxi"
include "native_entry_types.pxi"
include "direct_entry_table.pxi"
include "direct_creations.pxi"

cdef list _impl = [None] * len(NAMES)


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
    return _on_handle(_n_retain_context, False, I_RETAIN_CONTEXT, h)


cdef int32_t e_release_context(size_t h) noexcept with gil:
    return _on_handle(_n_release_context, False, I_RELEASE_CONTEXT, h)


cdef int32_t e_retain_queue(size_t h) noexcept with gil:
    return _on_handle(_n_retain_queue, False, I_RETAIN_QUEUE, h)


cdef int32_t e_release_queue(size_t h) noexcept with gil:
    return _on_handle(_n_release_queue, False, I_RELEASE_QUEUE, h)


cdef int32_t e_retain_mem(size_t h) noexcept with gil:
    return _on_handle(_n_retain_mem, False, I_RETAIN_MEM, h)


cdef int32_t e_release_mem(size_t h) noexcept with gil:
    return _on_handle(_n_release_mem, False, I_RELEASE_MEM, h)


cdef int32_t e_retain_program(size_t h) noexcept with gil:
    return _on_handle(_n_retain_program, False, I_RETAIN_PROGRAM, h)


cdef int32_t e_release_program(size_t h) noexcept with gil:
    return _on_handle(_n_release_program, False, I_RELEASE_PROGRAM, h)


cdef int32_t e_retain_kernel(size_t h) noexcept with gil:
    return _on_handle(_n_retain_kernel, False, I_RETAIN_KERNEL, h)


cdef int32_t e_release_kernel(size_t h) noexcept with gil:
    return _on_handle(_n_release_kernel, False, I_RELEASE_KERNEL, h)


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


def configure(implementations, clerror, report, failed):
    """Bind the Python implementations (name -> function), CLError, the reporter of internal
    errors and the hook of CL errors (bridge._failed)."""
    global _clerror, _report, _failed
    _clerror, _report, _failed = clerror, report, failed
    for i, name in enumerate(NAMES):
        _impl[i] = implementations.get(name)
    return {name: address for name, address in addresses().items() if _impl[NAMES.index(name)] is not None}


def use_fast_path(addresses, prime_ndrange, prime_command):
    """Try the native entries first: {name: address} from _native.fast_path_entries, and
    prime_ndrange(queue, kernel, wants_event) -> whether it prepared something that may let the
    native launch answer now; prime_command(queue, buffers, wants_event) the same for the native
    buffer commands and markers."""
    global _prime_ndrange, _prime_command
    _set_native_entries(addresses)              # (direct_entry_table.pxi)
    _prime_ndrange, _prime_command = prime_ndrange, prime_command


# KINDS (direct_entry_table.pxi): the argument kinds (pyplat/api/_entry_points.py) of the headers'
# prototypes, which addresses() holds each C entry above to; the bridge installs an entry only where
# the slot's generated signature agrees. NATIVE_KINDS: the same for the native entries
# (pyplat/api/_native.pyx): each has its direct entry here, so in-process callers (tests/support/capi.py)
# run the native code C programs run.
NATIVE_KINDS = dict(KINDS)
