/* The thesis's chapter 5 scheduler benchmarks, for any OpenCL platform.
 *
 *   sched_bench PLATFORM_SUBSTRING [scale]
 *
 * prints one line per measurement:  name  parameter  microseconds-per-kernel
 * Kernels are small (one work-group of 1 item unless said) so scheduling costs dominate. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *SRC =
    "__kernel void spin(__global float *out, int iters) {\n"
    "  float x = (float)get_global_id(0);\n"
    "  for (int i = 0; i < iters; i++) x = x * 0.999f + 0.5f;\n"
    "  out[get_global_id(0)] = x;\n"
    "}\n"
    "__kernel void spin_groups(__global float *out, int iters, int skew) {\n"
    "  float x = (float)get_global_id(0);\n"
    "  int n = skew ? iters * (int)(get_group_id(0) % 8 + 1) / 4 : iters;\n"
    "  for (int i = 0; i < n; i++) x = x * 0.999f + 0.5f;\n"
    "  out[get_global_id(0)] = x;\n"
    "}\n"
    "__kernel void reader(__global const float *in, __global float *out, int iters) {\n"
    "  size_t g = get_global_id(0);\n"
    "  float x = in[g];\n"
    "  for (int i = 0; i < iters; i++) x = x * 0.999f + 0.5f;\n"
    "  out[g] = x;\n"
    "}\n"
    "__kernel void reader_rw(__global float *in, __global float *out, int iters) {\n"
    "  size_t g = get_global_id(0);\n"
    "  float x = in[g];\n"
    "  for (int i = 0; i < iters; i++) x = x * 0.999f + 0.5f;\n"
    "  out[g] = x;\n"
    "}\n";

#define CHECK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static cl_context ctx;
static cl_device_id dev;
static cl_program prog;

static cl_kernel kernel(const char *name, cl_mem out, int iters) {
    cl_int e;
    cl_kernel k = clCreateKernel(prog, name, &e);
    CHECK(e);
    CHECK(clSetKernelArg(k, 0, sizeof out, &out));
    CHECK(clSetKernelArg(k, 1, sizeof iters, &iters));
    return k;
}

static cl_command_queue queue(cl_command_queue_properties p) {
    cl_int e;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, p, &e);
    CHECK(e);
    return q;
}

static cl_mem buffer(size_t n, cl_mem_flags f) {
    cl_int e;
    cl_mem m = clCreateBuffer(ctx, f, n, NULL, &e);
    CHECK(e);
    return m;
}

int main(int argc, char **argv) {
    const char *want = argc > 1 ? argv[1] : "";
    int scale = argc > 2 ? atoi(argv[2]) : 1;
    cl_platform_id plats[16];
    cl_uint np = 0, i;
    CHECK(clGetPlatformIDs(16, plats, &np));
    cl_platform_id plat = NULL;
    for (i = 0; i < np; i++) {
        char name[256];
        clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, want)) { plat = plats[i]; break; }
    }
    if (!plat) { fprintf(stderr, "no platform matching '%s'\n", want); return 2; }
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_int e;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CHECK(e);
    prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e);
    CHECK(e);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    size_t one = 1, n;
    int N = 2000 * scale;
    cl_mem out = buffer(1 << 20, CL_MEM_READ_WRITE);

    /* 1. in-order chain: enqueue N tiny kernels, finish. */
    {
        cl_command_queue q = queue(0);
        cl_kernel k = kernel("spin", out, 0);
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, NULL));
        CHECK(clFinish(q));
        double t = now_us();
        for (int j = 0; j < N; j++)
            CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, NULL));
        CHECK(clFinish(q));
        printf("inorder_chain\t%d\t%.3f\n", N, (now_us() - t) / N);
        clReleaseKernel(k);
        clReleaseCommandQueue(q);
    }
    /* 2. out-of-order chain over two queues, gated by a user event: enqueue cost excluded. */
    {
        cl_command_queue q[2] = {queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE),
                                 queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)};
        cl_kernel k = kernel("spin", out, 0);
        cl_event user = clCreateUserEvent(ctx, &e), prev = user, ev;
        CHECK(e);
        double te = now_us();
        for (int j = 0; j < N; j++) {
            CHECK(clEnqueueNDRangeKernel(q[j & 1], k, 1, NULL, &one, &one, 1, &prev, &ev));
            if (prev != user) clReleaseEvent(prev);
            prev = ev;
        }
        double enq = (now_us() - te) / N;
        CHECK(clFlush(q[0]));
        CHECK(clFlush(q[1]));
        double t = now_us();
        CHECK(clSetUserEventStatus(user, CL_COMPLETE));
        CHECK(clWaitForEvents(1, &prev));
        printf("ooo_chain_2q\t%d\t%.3f\n", N, (now_us() - t) / N);
        printf("enqueue_waitlist\t%d\t%.3f\n", N, enq);
        clReleaseEvent(prev);
        clReleaseEvent(user);
        clReleaseKernel(k);
        clReleaseCommandQueue(q[0]);
        clReleaseCommandQueue(q[1]);
    }
    /* 3. kernel imbalance: P independent single-item kernels of a fixed cost, out-of-order. */
    int iters = 20000;
    int ps[] = {1, 2, 4, 8, 16, 32, 64};
    for (unsigned pi = 0; pi < sizeof ps / sizeof *ps; pi++) {
        int P = ps[pi];
        cl_command_queue q = queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
        cl_kernel k = kernel("spin", out, iters);
        int reps = 4 * scale;
        double t = now_us();
        for (int r = 0; r < reps; r++) {
            for (int j = 0; j < P; j++) {
                size_t off = j;
                CHECK(clEnqueueNDRangeKernel(q, k, 1, &off, &one, &one, 0, NULL, NULL));
            }
            CHECK(clFinish(q));
        }
        printf("kernel_imbalance\t%d\t%.3f\n", P, (now_us() - t) / (reps * P));
        clReleaseKernel(k);
        clReleaseCommandQueue(q);
    }
    /* 4. work-group imbalance: one kernel, 64 groups of 1 item, costs 1..8 units. */
    {
        cl_command_queue q = queue(0);
        cl_kernel k = kernel("spin_groups", out, iters);
        int skew = 1, reps = 20 * scale;
        CHECK(clSetKernelArg(k, 2, sizeof skew, &skew));
        n = 64;
        double t = now_us();
        for (int r = 0; r < reps; r++)
            CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, &one, 0, NULL, NULL));
        CHECK(clFinish(q));
        printf("workgroup_imbalance\t64\t%.3f\n", (now_us() - t) / reps);
        clReleaseKernel(k);
        clReleaseCommandQueue(q);
    }
    /* 5. both: P out-of-order kernels of 16 skewed groups each. */
    for (unsigned pi = 0; pi < 4; pi++) {
        int P = ps[pi * 2];
        cl_command_queue q = queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
        cl_kernel k = kernel("spin_groups", out, iters / 4);
        int skew = 1, reps = 4 * scale;
        CHECK(clSetKernelArg(k, 2, sizeof skew, &skew));
        n = 16;
        double t = now_us();
        for (int r = 0; r < reps; r++) {
            for (int j = 0; j < P; j++) {
                size_t off = 16 * j;
                CHECK(clEnqueueNDRangeKernel(q, k, 1, &off, &n, &one, 0, NULL, NULL));
            }
            CHECK(clFinish(q));
        }
        printf("combined_imbalance\t%d\t%.3f\n", P, (now_us() - t) / (reps * P));
        clReleaseKernel(k);
        clReleaseCommandQueue(q);
    }
    /* 6. in-order parallelisation: 32 kernels read one input, each writes its own output. */
    const char *names[2] = {"reader", "reader_rw"};
    cl_mem_flags flags[2] = {CL_MEM_READ_ONLY, CL_MEM_READ_WRITE};
    const char *labels[2] = {"inorder_readonly_input", "inorder_rw_input_read"};
    for (int v = 0; v < 2; v++) {
        cl_command_queue q = queue(0);
        cl_mem in = buffer(4096, flags[v]);
        cl_mem outs[32];
        cl_kernel ks[32];
        float zero = 0;
        CHECK(clEnqueueFillBuffer(q, in, &zero, 4, 0, 4096, 0, NULL, NULL));
        for (int j = 0; j < 32; j++) {
            outs[j] = buffer(4096, CL_MEM_WRITE_ONLY);
            ks[j] = clCreateKernel(prog, names[v], &e);
            CHECK(e);
            CHECK(clSetKernelArg(ks[j], 0, sizeof(cl_mem), &in));
            CHECK(clSetKernelArg(ks[j], 1, sizeof(cl_mem), &outs[j]));
            CHECK(clSetKernelArg(ks[j], 2, sizeof iters, &iters));
        }
        CHECK(clFinish(q));
        /* Each kernel's first launch is timed apart (enqueue only): platforms may prepare a
         * kernel object there (PoCL its code for the work-group size; PyPlat has built its
         * launch plan when the last argument was set; the first object checks the new sizes), which is
         * not the scheduling the loop below measures. */
        double tf = now_us();
        for (int j = 0; j < 32; j++)
            CHECK(clEnqueueNDRangeKernel(q, ks[j], 1, NULL, &one, &one, 0, NULL, NULL));
        if (v == 0) printf("first_launch\t32\t%.3f\n", (now_us() - tf) / 32);
        CHECK(clFinish(q));
        int reps = 2 * scale;
        double t = now_us();
        for (int r = 0; r < reps; r++)
            for (int j = 0; j < 32; j++)
                CHECK(clEnqueueNDRangeKernel(q, ks[j], 1, NULL, &one, &one, 0, NULL, NULL));
        CHECK(clFinish(q));
        printf("%s\t32\t%.3f\n", labels[v], (now_us() - t) / (reps * 32));
        for (int j = 0; j < 32; j++) { clReleaseKernel(ks[j]); clReleaseMemObject(outs[j]); }
        clReleaseMemObject(in);
        clReleaseCommandQueue(q);
    }
    /* 7. a scalar argument set before each launch (a loop parameter): clSetKernelArg plus
     * clEnqueueNDRangeKernel from C, in-order, one-item kernels; enqueue and run included. */
    {
        cl_command_queue q = queue(0);
        cl_kernel k = kernel("spin", out, 0);
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, NULL));
        CHECK(clFinish(q));
        double t = now_us();
        for (int j = 0; j < N; j++) {
            int iters_j = j & 1;
            CHECK(clSetKernelArg(k, 1, sizeof iters_j, &iters_j));
            CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, NULL));
        }
        CHECK(clFinish(q));
        printf("setarg_scalar_launch\t%d\t%.3f\n", N, (now_us() - t) / N);
        clReleaseKernel(k);
        clReleaseCommandQueue(q);
    }
    clReleaseMemObject(out);
    clReleaseProgram(prog);
    clReleaseContext(ctx);
    return 0;
}
