/* vecadd: the smallest complete OpenCL host program, for PyPlat or any other platform.
 *
 * Picks the platform named "PyPlat" if the ICD loader sees one (else the first platform;
 * PYPLAT_PLATFORM=<substring of a platform name> overrides), builds a kernel from source,
 * adds two vectors of 1<<20 floats and checks every element.
 *
 *   pyplat run -- pyplat-vecadd        # PyPlat next to the installed platforms
 *   PYPLAT_PLATFORM=Portable pyplat run -- pyplat-vecadd
 *
 * Exit status 0 only if every element is right.
 */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1 << 20)

static const char *source =
    "__kernel void vecadd(__global const float *a, __global const float *b,\n"
    "                     __global float *c, unsigned int n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        c[i] = a[i] + b[i];\n"
    "}\n";

#define CHECK(call)                                                                   \
    do {                                                                              \
        cl_int err_ = (call);                                                         \
        if (err_ != CL_SUCCESS) {                                                     \
            fprintf(stderr, "vecadd: %s failed: %d (line %d)\n", #call, err_, __LINE__); \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

#define CHECK_ERR(what)                                                            \
    do {                                                                           \
        if (err != CL_SUCCESS) {                                                   \
            fprintf(stderr, "vecadd: %s failed: %d (line %d)\n", what, err, __LINE__); \
            return 1;                                                              \
        }                                                                          \
    } while (0)

static char *platform_name(cl_platform_id p) {
    size_t size = 0;
    if (clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, NULL, &size) != CL_SUCCESS || size == 0)
        return NULL;
    char *name = calloc(1, size + 1);
    if (name && clGetPlatformInfo(p, CL_PLATFORM_NAME, size, name, NULL) != CL_SUCCESS) {
        free(name);
        return NULL;
    }
    return name;
}

int main(void) {
    cl_int err;
    cl_uint n_platforms = 0;
    CHECK(clGetPlatformIDs(0, NULL, &n_platforms));
    if (n_platforms == 0) {
        fprintf(stderr, "vecadd: no OpenCL platform found\n");
        return 1;
    }
    cl_platform_id *platforms = calloc(n_platforms, sizeof *platforms);
    CHECK(clGetPlatformIDs(n_platforms, platforms, NULL));

    const char *want = getenv("PYPLAT_PLATFORM");
    if (!want || !*want)
        want = NULL;
    cl_platform_id platform = NULL;
    char *chosen = NULL;
    for (cl_uint i = 0; i < n_platforms && !platform; i++) {
        char *name = platform_name(platforms[i]);
        if (name && (want ? strstr(name, want) != NULL : strcmp(name, "PyPlat") == 0)) {
            platform = platforms[i];
            chosen = name;
        } else {
            free(name);
        }
    }
    if (!platform) {
        if (want) {
            fprintf(stderr, "vecadd: no platform matches PYPLAT_PLATFORM=%s\n", want);
            return 1;
        }
        platform = platforms[0];
        chosen = platform_name(platform);
    }
    free(platforms);

    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    cl_context context = clCreateContext(props, 1, &device, NULL, NULL, &err);
    CHECK_ERR("clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK_ERR("clCreateCommandQueue");

    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    CHECK_ERR("clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t log_size = 0;
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size);
        char *log = calloc(1, log_size + 1);
        if (log && clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, log_size, log,
                                         NULL) == CL_SUCCESS)
            fprintf(stderr, "vecadd: build log:\n%s\n", log);
        free(log);
        fprintf(stderr, "vecadd: clBuildProgram failed: %d\n", err);
        return 1;
    }
    cl_kernel kernel = clCreateKernel(program, "vecadd", &err);
    CHECK_ERR("clCreateKernel");

    size_t bytes = (size_t)N * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    if (!a || !b || !c) {
        fprintf(stderr, "vecadd: out of memory\n");
        return 1;
    }
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = (float)(2 * (N - i)) + 0.5f;
        c[i] = -1.0f;
    }
    cl_mem da = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a, &err);
    CHECK_ERR("clCreateBuffer(a)");
    cl_mem db = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b, &err);
    CHECK_ERR("clCreateBuffer(b)");
    cl_mem dc = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
    CHECK_ERR("clCreateBuffer(c)");

    cl_uint n = N;
    CHECK(clSetKernelArg(kernel, 0, sizeof da, &da));
    CHECK(clSetKernelArg(kernel, 1, sizeof db, &db));
    CHECK(clSetKernelArg(kernel, 2, sizeof dc, &dc));
    CHECK(clSetKernelArg(kernel, 3, sizeof n, &n));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
    CHECK(clFinish(queue));

    long bad = 0;
    for (int i = 0; i < N; i++) {
        float want_c = a[i] + b[i];
        if (c[i] != want_c) {
            if (bad < 5)
                fprintf(stderr, "vecadd: c[%d] = %g, expected %g\n", i, c[i], want_c);
            bad++;
        }
    }

    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(dc);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a);
    free(b);
    free(c);

    if (bad) {
        printf("vecadd: %d elements, %ld WRONG on %s\n", N, bad, chosen ? chosen : "?");
        free(chosen);
        return 1;
    }
    printf("vecadd: %d elements OK on %s\n", N, chosen ? chosen : "?");
    free(chosen);
    return 0;
}
