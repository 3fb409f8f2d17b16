# Part of pyplat/api/_entries.pyx (included there): the direct entries of the creations whose
# native entries are in native_queues.pxi (and native_contexts.pxi) -- the native entry first,
# then, when it defers, the Python implementation with the bridge's rules for creators.

cdef create_queue_fn _n_create_queue = NULL
cdef create_queue_props_fn _n_create_queue_props = NULL
cdef create_context_fn _n_create_context = NULL
cdef create_context_type_fn _n_create_context_type = NULL
cdef dict _creators = {}               # name -> Python implementation


cdef size_t _created_named(str name, tuple args, size_t errcode_ret):
    """_created for the entries here, by name."""
    cdef int32_t code = CL_SUCCESS
    cdef size_t handle = 0
    try:
        handle = _creators[name](*args) or 0
    except BaseException as e:
        if isinstance(e, _clerror):
            _failed(name, e, args)
            code = (<object>e).code
            handle = getattr(e, "result", 0) or 0
        else:
            try:
                _report(name)
            except BaseException:
                pass
            code = CL_OUT_OF_HOST_MEMORY
    if errcode_ret:
        (<int32_t *>errcode_ret)[0] = code
    return handle


cdef size_t e_create_queue(size_t context, size_t device, uint64_t properties,
                           size_t errcode_ret) noexcept with gil:
    cdef size_t queue
    if _n_create_queue != NULL:
        queue = _n_create_queue(context, device, properties, errcode_ret)
        if queue != <size_t>PYPLAT_DEFER_HANDLE:
            return queue
    return _created_named("clCreateCommandQueue", (context, device, properties, errcode_ret), errcode_ret)


cdef size_t e_create_queue_props(size_t context, size_t device, size_t properties,
                                 size_t errcode_ret) noexcept with gil:
    cdef size_t queue
    if _n_create_queue_props != NULL:
        queue = _n_create_queue_props(context, device, properties, errcode_ret)
        if queue != <size_t>PYPLAT_DEFER_HANDLE:
            return queue
    return _created_named("clCreateCommandQueueWithProperties", (context, device, properties, errcode_ret),
                          errcode_ret)


cdef size_t e_create_context(size_t properties, uint32_t num_devices, size_t devices, size_t notify,
                             size_t user_data, size_t errcode_ret) noexcept with gil:
    cdef size_t context
    if _n_create_context != NULL:
        context = _n_create_context(properties, num_devices, devices, notify, user_data, errcode_ret)
        if context != <size_t>PYPLAT_DEFER_HANDLE:
            return context
    return _created_named("clCreateContext", (properties, num_devices, devices, notify, user_data, errcode_ret),
                          errcode_ret)


cdef size_t e_create_context_type(size_t properties, uint64_t device_type, size_t notify, size_t user_data,
                                  size_t errcode_ret) noexcept with gil:
    cdef size_t context
    if _n_create_context_type != NULL:
        context = _n_create_context_type(properties, device_type, notify, user_data, errcode_ret)
        if context != <size_t>PYPLAT_DEFER_HANDLE:
            return context
    return _created_named("clCreateContextFromType", (properties, device_type, notify, user_data, errcode_ret),
                          errcode_ret)


CREATION_KINDS = {
    "clCreateCommandQueue": ("ptr", "ptr", "u64", "ptr"),
    "clCreateCommandQueueWithProperties": ("ptr", "ptr", "ptr", "ptr"),
    "clCreateContext": ("ptr", "u32", "ptr", "ptr", "ptr", "ptr"),
    "clCreateContextFromType": ("ptr", "u64", "ptr", "ptr", "ptr"),
}


def creation_addresses():
    """name -> address of the direct entries here."""
    return {"clCreateCommandQueue": <size_t>e_create_queue,
            "clCreateCommandQueueWithProperties": <size_t>e_create_queue_props,
            "clCreateContext": <size_t>e_create_context, "clCreateContextFromType": <size_t>e_create_context_type}


def configure_creations(implementations):
    """{name: address} of the direct entries here whose Python implementation exists."""
    _creators.clear()
    _creators.update({name: implementations[name] for name in CREATION_KINDS if name in implementations})
    return {name: address for name, address in creation_addresses().items() if name in _creators}


def use_creation_fast_path(addresses):
    global _n_create_queue, _n_create_queue_props, _n_create_context, _n_create_context_type
    _n_create_context = <create_context_fn><size_t>addresses.get("clCreateContext", 0)
    _n_create_context_type = <create_context_type_fn><size_t>addresses.get("clCreateContextFromType", 0)
    _n_create_queue = <create_queue_fn><size_t>addresses.get("clCreateCommandQueue", 0)
    _n_create_queue_props = <create_queue_props_fn><size_t>addresses.get("clCreateCommandQueueWithProperties", 0)
