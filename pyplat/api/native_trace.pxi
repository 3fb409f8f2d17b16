# Part of pyplat/api/_native.pyx. PYPLAT_TRACE (pyplat/runtime/trace.py): the native entries
# with each call that they answer recorded as an API slice of the calling thread. The bridge
# hands these out instead of the plain ones only when tracing, so an untraced process pays
# nothing. A call that returns PYPLAT_DEFER is not recorded here: the Python entry that answers
# it records itself.
from pyplat.runtime._sched cimport pp_now_ns, trace_intern, trace_api_native

cdef int traced_names[14]


cdef inline int32_t traced(int which, unsigned long long t0, int32_t r) noexcept nogil:
    if r != PYPLAT_DEFER:
        trace_api_native(traced_names[which], t0, pp_now_ns())
    return r


cdef int32_t t_ndrange(size_t queue, size_t kernel, uint32_t work_dim, size_t offset,
                       size_t global_size, size_t local_size, uint32_t n_events, size_t events,
                       size_t event) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(0, t0, n_ndrange(queue, kernel, work_dim, offset, global_size, local_size,
                                   n_events, events, event))


cdef int32_t t_setarg(size_t kernel, uint32_t index, uint64_t size, size_t value) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(1, t0, n_setarg(kernel, index, size, value))


cdef int32_t t_retain_event(size_t h) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(2, t0, n_retain_event(h))


cdef int32_t t_release_event(size_t h) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(3, t0, n_release_event(h))


cdef int32_t t_flush(size_t queue) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(4, t0, n_flush(queue))


cdef int32_t t_finish(size_t queue) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(5, t0, n_finish(queue))


cdef int32_t t_wait(uint32_t n_events, size_t events) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(6, t0, n_wait(n_events, events))


cdef int32_t t_event_info(size_t event, uint32_t param, uint64_t size, size_t value,
                          size_t size_ret) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(7, t0, n_event_info(event, param, size, value, size_ret))


cdef int32_t t_write(size_t queue, size_t buffer, uint32_t blocking, uint64_t offset, uint64_t size,
                     size_t ptr, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(8, t0, n_write(queue, buffer, blocking, offset, size, ptr, n_events, events, event))


cdef int32_t t_read(size_t queue, size_t buffer, uint32_t blocking, uint64_t offset, uint64_t size,
                    size_t ptr, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(9, t0, n_read(queue, buffer, blocking, offset, size, ptr, n_events, events, event))


cdef int32_t t_copy(size_t queue, size_t src, size_t dst, uint64_t src_offset, uint64_t dst_offset,
                    uint64_t size, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(10, t0, n_copy(queue, src, dst, src_offset, dst_offset, size, n_events, events, event))


cdef int32_t t_fill(size_t queue, size_t buffer, size_t pattern, uint64_t pattern_size, uint64_t offset,
                    uint64_t size, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(11, t0, n_fill(queue, buffer, pattern, pattern_size, offset, size, n_events, events,
                                 event))


cdef int32_t t_marker(size_t queue, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(12, t0, n_marker(queue, n_events, events, event))


cdef int32_t t_barrier(size_t queue, uint32_t n_events, size_t events, size_t event) noexcept nogil:
    cdef unsigned long long t0 = pp_now_ns()
    return traced(13, t0, n_barrier(queue, n_events, events, event))


def traced_fast_path_entries():
    """fast_path_entries(), each entry recording the calls it answers (PYPLAT_TRACE)."""
    names = ("clEnqueueNDRangeKernel", "clSetKernelArg", "clRetainEvent", "clReleaseEvent",
             "clFlush", "clFinish", "clWaitForEvents", "clGetEventInfo", "clEnqueueWriteBuffer",
             "clEnqueueReadBuffer", "clEnqueueCopyBuffer", "clEnqueueFillBuffer",
             "clEnqueueMarkerWithWaitList", "clEnqueueBarrierWithWaitList")
    for i, name in enumerate(names):
        traced_names[i] = trace_intern(name.encode())
    addresses = (<size_t><ndrange_fn>t_ndrange, <size_t><setarg_fn>t_setarg,
                 <size_t><handle_fn>t_retain_event, <size_t><handle_fn>t_release_event,
                 <size_t><handle_fn>t_flush, <size_t><handle_fn>t_finish, <size_t><wait_fn>t_wait,
                 <size_t><event_info_fn>t_event_info, <size_t><transfer_fn>t_write,
                 <size_t><transfer_fn>t_read, <size_t><copy_fn>t_copy, <size_t><fill_fn>t_fill,
                 <size_t><marker_fn>t_marker, <size_t><marker_fn>t_barrier)
    return dict(zip(names, addresses))
