# Part of pyplat/api/_entries.pyx (included there): the direct entries of the creations whose
# native entries are in native_queues.pxi (and native_contexts.pxi) -- the native entry first,
# then, when it defers, the Python implementation with the bridge's rules for creators.


cdef size_t e_create_queue(size_t context, size_t device, uint64_t properties,
                           size_t errcode_ret) noexcept with gil:
    cdef size_t queue
    if _n_create_queue != NULL:
        queue = _n_create_queue(context, device, properties, errcode_ret)
        if queue != <size_t>PYPLAT_DEFER_HANDLE:
            return queue
    return _created(I_CREATE_QUEUE, (context, device, properties, errcode_ret), errcode_ret)


cdef size_t e_create_queue_with_properties(size_t context, size_t device, size_t properties,
                                           size_t errcode_ret) noexcept with gil:
    cdef size_t queue
    if _n_create_queue_with_properties != NULL:
        queue = _n_create_queue_with_properties(context, device, properties, errcode_ret)
        if queue != <size_t>PYPLAT_DEFER_HANDLE:
            return queue
    return _created(I_CREATE_QUEUE_WITH_PROPERTIES, (context, device, properties, errcode_ret), errcode_ret)


cdef size_t e_create_context(size_t properties, uint32_t num_devices, size_t devices, size_t notify,
                             size_t user_data, size_t errcode_ret) noexcept with gil:
    cdef size_t context
    if _n_create_context != NULL:
        context = _n_create_context(properties, num_devices, devices, notify, user_data, errcode_ret)
        if context != <size_t>PYPLAT_DEFER_HANDLE:
            return context
    return _created(I_CREATE_CONTEXT, (properties, num_devices, devices, notify, user_data, errcode_ret),
                    errcode_ret)


cdef size_t e_create_context_from_type(size_t properties, uint64_t device_type, size_t notify,
                                       size_t user_data, size_t errcode_ret) noexcept with gil:
    cdef size_t context
    if _n_create_context_from_type != NULL:
        context = _n_create_context_from_type(properties, device_type, notify, user_data, errcode_ret)
        if context != <size_t>PYPLAT_DEFER_HANDLE:
            return context
    return _created(I_CREATE_CONTEXT_FROM_TYPE, (properties, device_type, notify, user_data, errcode_ret),
                    errcode_ret)
