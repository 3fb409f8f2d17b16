/* PyPlat ICD shim: what the generated entry points (icd_entry_points.c) and shim.c share.
 *
 * The library is compiled with -fvisibility=hidden: the only exported symbols are the OpenCL
 * entry points under their real names (aliases of the hidden pyplat_clXxx stubs, made by
 * PYPLAT_EXPORT_ALIAS), clIcdGetPlatformIDsKHR and clGetExtensionFunctionAddress[ForPlatform].
 * Nothing inside the library refers to a clXxx name, so no internal call can bind to the ICD
 * loader's exported function of the same name.
 */
#ifndef PYPLAT_SHIM_H
#define PYPLAT_SHIM_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_1_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS

#include <stdint.h>
#include <CL/cl_icd.h>

#include "pyplat_handle.h"

#define PYPLAT_HIDDEN __attribute__((visibility("hidden")))
#define PYPLAT_EXPORT __attribute__((visibility("default")))

/* Export `name` (a clXxx function) as an alias of the hidden pyplat_<name>. */
#define PYPLAT_EXPORT_ALIAS(name) \
    extern __typeof__(pyplat_##name) name \
        __attribute__((alias("pyplat_" #name), visibility("default")));

/* Set (release) once loading has finished, successfully or not. */
PYPLAT_HIDDEN extern int pyplat_load_done;
PYPLAT_HIDDEN void pyplat_ensure_loaded_slow(void);

/* First call in every entry stub: a flag check, and the one-time load on the first call. */
#define PYPLAT_ENSURE_LOADED()                                                         \
    do {                                                                               \
        if (__builtin_expect(!__atomic_load_n(&pyplat_load_done, __ATOMIC_ACQUIRE), 0)) \
            pyplat_ensure_loaded_slow();                                               \
    } while (0)

/* "pyplat: clXxx is not implemented" on stderr, once per name. */
PYPLAT_HIDDEN void pyplat_report_missing(const char *name);

/* Around each call into the Python side: hold the GIL and set aside the calling thread's pending
 * Python exception, if any. A Python host (pyopencl) may call OpenCL while an exception is
 * propagating, e.g. releasing a temporary during unwinding; running our Python code with the
 * error indicator set would lose that exception. */
struct pyplat_py_call {
    int active;
    int gil;
    void *type, *value, *traceback;
};
/* 0 when Python may not be entered (interpreter finalising): the stub then answers without it. */
PYPLAT_HIDDEN int pyplat_py_enter(struct pyplat_py_call *call);
PYPLAT_HIDDEN void pyplat_py_leave(struct pyplat_py_call *call);

/* Generated (icd_entry_points.c). The entry table has 2 * pyplat_n_entries slots: the first
 * half holds what each stub calls with the GIL held (Python's implementation); the second half
 * optionally holds a native entry with the same signature, which the stub calls first, without
 * the GIL, and which returns PYPLAT_DEFER when it did not answer (pyplat_handle.h). */
PYPLAT_HIDDEN extern void *pyplat_entry_table[];
PYPLAT_HIDDEN extern const int pyplat_n_entries;
PYPLAT_HIDDEN void pyplat_entry_table_init(void);
PYPLAT_HIDDEN extern const struct _cl_icd_dispatch pyplat_dispatch;

struct pyplat_named_entry {
    const char *name;
    void *address;
};
/* Extension entry points clGetExtensionFunctionAddress hands out; ends with {NULL, NULL}. */
PYPLAT_HIDDEN extern const struct pyplat_named_entry pyplat_extension_entries[];

/* Implemented in shim.c (they need no Python). */
PYPLAT_HIDDEN void *CL_API_CALL pyplat_clGetExtensionFunctionAddress(const char *function_name);
PYPLAT_HIDDEN void *CL_API_CALL pyplat_clGetExtensionFunctionAddressForPlatform(
    cl_platform_id platform, const char *function_name);
PYPLAT_HIDDEN cl_int CL_API_CALL pyplat_clIcdGetPlatformIDsKHR(
    cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms);

/* Handle layout and kinds, PYPLAT_DEFER: pyplat_handle.h. */

/* Cheap check usable by C fast paths: is `p` a live PyPlat handle of `kind`? (A pointer to
 * unmapped memory still crashes here; the Python registry is the authoritative check.) */
static inline int pyplat_handle_is(const void *p, uint32_t kind) {
    const struct pyplat_handle *h = (const struct pyplat_handle *)p;
    return h && h->dispatch == &pyplat_dispatch && h->magic == PYPLAT_HANDLE_MAGIC && h->kind == kind;
}

#endif
