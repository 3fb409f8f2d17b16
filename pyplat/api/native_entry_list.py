"""The OpenCL entries answered in C: each has a direct entry (pyplat/api/_entries.pyx, e_<short>)
and a native one (pyplat/api/_native.pyx and its native_*.pxi parts, n_<short>).

This list is the only place that names them. At build time icd/gen_cython_decls.py reads it with
the Khronos headers and writes the Cython declarations both modules include: the C type of each
entry (from the header's prototype), the slot indices I_<SHORT> and tables of _entries.pyx, and
the address tables that check every e_/n_ function against its type (a signature that drifts
from the header does not compile). Entries that share a type name must have the same prototype.
The package never imports this module: the generator reads the literal below (ast).
"""

# (OpenCL name, short name, name of its C type), in slot order.
ENTRIES = (
    ("clEnqueueNDRangeKernel", "ndrange", "ndrange_fn"),
    ("clSetKernelArg", "setarg", "setarg_fn"),
    ("clRetainEvent", "retain_event", "handle_fn"),
    ("clReleaseEvent", "release_event", "handle_fn"),
    ("clWaitForEvents", "wait", "wait_fn"),
    ("clFlush", "flush", "handle_fn"),
    ("clFinish", "finish", "handle_fn"),
    ("clEnqueueReadBuffer", "read", "transfer_fn"),
    ("clEnqueueWriteBuffer", "write", "transfer_fn"),
    ("clGetEventInfo", "event_info", "event_info_fn"),
    ("clEnqueueCopyBuffer", "copy", "copy_fn"),
    ("clEnqueueFillBuffer", "fill", "fill_fn"),
    ("clEnqueueMarkerWithWaitList", "marker", "marker_fn"),
    ("clEnqueueBarrierWithWaitList", "barrier", "marker_fn"),
    ("clRetainContext", "retain_context", "handle_fn"),
    ("clReleaseContext", "release_context", "handle_fn"),
    ("clRetainCommandQueue", "retain_queue", "handle_fn"),
    ("clReleaseCommandQueue", "release_queue", "handle_fn"),
    ("clRetainMemObject", "retain_mem", "handle_fn"),
    ("clReleaseMemObject", "release_mem", "handle_fn"),
    ("clRetainProgram", "retain_program", "handle_fn"),
    ("clReleaseProgram", "release_program", "handle_fn"),
    ("clRetainKernel", "retain_kernel", "handle_fn"),
    ("clReleaseKernel", "release_kernel", "handle_fn"),
    ("clGetMemObjectInfo", "mem_info", "event_info_fn"),
    ("clGetKernelInfo", "kernel_info", "event_info_fn"),
    ("clGetKernelWorkGroupInfo", "kernel_wg_info", "kernel_wg_info_fn"),
    ("clCreateKernel", "create_kernel", "create_kernel_fn"),
    ("clCreateUserEvent", "create_user_event", "create_fn"),
    ("clSetUserEventStatus", "set_user_event_status", "set_status_fn"),
    ("clCreateBuffer", "create_buffer", "create_buffer_fn"),
    ("clCreateSubBuffer", "create_sub_buffer", "create_sub_buffer_fn"),
    ("clEnqueueMapBuffer", "map", "map_fn"),
    ("clEnqueueUnmapMemObject", "unmap", "unmap_fn"),
    ("clCreateCommandQueue", "create_queue", "create_queue_fn"),
    ("clCreateCommandQueueWithProperties", "create_queue_with_properties", "create_queue_props_fn"),
    ("clCreateContext", "create_context", "create_context_fn"),
    ("clCreateContextFromType", "create_context_from_type", "create_context_type_fn"),
)
