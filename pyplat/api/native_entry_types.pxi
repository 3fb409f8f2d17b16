# Signatures of the native entries (_native.pyx, n_*): C functions with the OpenCL signature that
# need no GIL and return PYPLAT_DEFER when they do not answer. Included by _native.pyx, which
# defines them, and _entries.pyx, which calls them first.
ctypedef int32_t (*ndrange_fn)(size_t, size_t, uint32_t, size_t, size_t, size_t, uint32_t, size_t,
                               size_t) noexcept nogil
ctypedef int32_t (*handle_fn)(size_t) noexcept nogil
ctypedef int32_t (*setarg_fn)(size_t, uint32_t, uint64_t, size_t) noexcept nogil
ctypedef int32_t (*wait_fn)(uint32_t, size_t) noexcept nogil
ctypedef int32_t (*event_info_fn)(size_t, uint32_t, uint64_t, size_t, size_t) noexcept nogil
ctypedef int32_t (*transfer_fn)(size_t, size_t, uint32_t, uint64_t, uint64_t, size_t, uint32_t, size_t,
                                size_t) noexcept nogil
ctypedef int32_t (*copy_fn)(size_t, size_t, size_t, uint64_t, uint64_t, uint64_t, uint32_t, size_t,
                            size_t) noexcept nogil
ctypedef int32_t (*fill_fn)(size_t, size_t, size_t, uint64_t, uint64_t, uint64_t, uint32_t, size_t,
                            size_t) noexcept nogil
ctypedef int32_t (*marker_fn)(size_t, uint32_t, size_t, size_t) noexcept nogil
ctypedef size_t (*create_buffer_fn)(size_t, uint64_t, uint64_t, size_t, size_t) noexcept nogil
ctypedef int32_t (*kernel_wg_info_fn)(size_t, size_t, uint32_t, uint64_t, size_t, size_t) noexcept nogil
ctypedef size_t (*create_fn)(size_t, size_t) noexcept nogil      # handle-returning: clCreateUserEvent
ctypedef int32_t (*set_status_fn)(size_t, int32_t) noexcept nogil
ctypedef size_t (*create_kernel_fn)(size_t, size_t, size_t) noexcept nogil
ctypedef size_t (*create_sub_buffer_fn)(size_t, uint64_t, uint32_t, size_t, size_t) noexcept nogil
ctypedef size_t (*create_queue_fn)(size_t, size_t, uint64_t, size_t) noexcept nogil
ctypedef size_t (*create_queue_props_fn)(size_t, size_t, size_t, size_t) noexcept nogil
ctypedef size_t (*create_context_fn)(size_t, uint32_t, size_t, size_t, size_t, size_t) noexcept nogil
ctypedef size_t (*create_context_type_fn)(size_t, uint64_t, size_t, size_t, size_t) noexcept nogil
ctypedef size_t (*map_fn)(size_t, size_t, uint32_t, uint64_t, uint64_t, uint64_t, uint32_t, size_t, size_t,
                          size_t) noexcept nogil      # handle-returning (the mapped pointer): clEnqueueMapBuffer
ctypedef int32_t (*unmap_fn)(size_t, size_t, size_t, uint32_t, size_t, size_t) noexcept nogil
