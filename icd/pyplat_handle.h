/* The one definition of what the ICD shim and the API layer's native code share about handles
 * and native entries: the handle layout (magic numbers, kind tags) and the status a native entry
 * returns when it did not answer. Included by shim.h (C) and read by pyplat/api/_native.pyx
 * (`cdef extern from`), which hands the values to pyplat/api/handles.py: nothing else spells
 * them. Plain C, no OpenCL header needed.
 */
#ifndef PYPLAT_HANDLE_H
#define PYPLAT_HANDLE_H

#include <stdint.h>

/* A native entry (the second half of the shim's entry table; pyplat/api/_native.pyx, n_*)
 * returns this when it did not answer: the caller then runs the Python implementation. */
#define PYPLAT_DEFER 0x50594446 /* "PYDF": never an OpenCL status */
/* ... and a native entry that returns a handle (clCreate*) returns this instead, having written
 * nothing through errcode_ret: address 1 is never an object. */
#define PYPLAT_DEFER_HANDLE ((void *)(uintptr_t)1)

/* Layout of every handle (pyplat/api/handles.py owns the memory of most; the fast path's native
 * events are pyplat/api/_native.pyx's). */
#define PYPLAT_HANDLE_MAGIC 0x4C505950u /* "PYPL" */
#define PYPLAT_HANDLE_DEAD 0x44414544u  /* "DEAD" */
enum pyplat_handle_kind {
    PYPLAT_KIND_PLATFORM = 1,
    PYPLAT_KIND_DEVICE,
    PYPLAT_KIND_CONTEXT,
    PYPLAT_KIND_QUEUE,
    PYPLAT_KIND_MEM,
    PYPLAT_KIND_PROGRAM,
    PYPLAT_KIND_KERNEL,
    PYPLAT_KIND_EVENT,
    PYPLAT_KIND_SAMPLER,
};
struct _cl_icd_dispatch;
struct pyplat_handle {
    const struct _cl_icd_dispatch *dispatch;
    uint32_t magic;
    uint32_t kind;
    uint64_t serial;
};

#endif
