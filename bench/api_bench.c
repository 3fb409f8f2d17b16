/* The cost of OpenCL API calls from C, for any platform (issue 15 part 5).
 *
 *   api_bench PLATFORM_SUBSTRING [scale] [mixed_per_thread]
 *
 * prints one line per measurement:  name  count  microseconds-per-operation
 * `scale` multiplies every loop count (default 1; 0.01 for a quick check). The mixed command
 * stream enqueues `mixed_per_thread` commands from each host thread (default $API_BENCH_MIXED,
 * else 12500, the size), once per thread count in $API_BENCH_THREADS (default "1,8");
 * so does the held-out style stream of fresh objects (user event, new buffer, launch and read
 * with events each round).
 * $API_BENCH_ONLY (a comma-separated list of groups: create, retain, info, commands, mixed, fresh)
 * runs a subset.
 * Results are checked where it is cheap; a wrong one exits with status 3 and a message, so a
 * broken run never reads as a fast one. Unsupported optional features (samplers without image
 * support) are reported on stderr and skipped. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *SRC =
    "__kernel void add_one(__global int *b) { b[get_global_id(0)] += 1; }\n"
    "__kernel void scaled(__global float *o, float a, int n) {\n"
    "  size_t i = get_global_id(0); if (i < n) o[i] = a * (float)i; }\n";
static const char *TINY_SRC = "__kernel void tiny(__global int *o) { o[0] = 42; }\n";

#define CHECK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)
#define EXPECT(cond, ...) do { if (!(cond)) { fprintf(stderr, "wrong result: " __VA_ARGS__); fputc('\n', stderr); exit(3); } } while (0)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static cl_platform_id plat;
static cl_device_id dev;
static cl_context ctx;
static cl_program prog;
static double scale = 1;

/* A loop's count at this scale (at least one). */
static long scaled_count(long n) {
    long c = (long)(n * scale);
    return c < 1 ? 1 : c;
}

static void report(const char *name, long count, double total_us) {
    printf("%s\t%ld\t%.3f\n", name, count, total_us / count);
    fflush(stdout);
}

/* Times `body` `n * scale` times, after a few untimed rounds (first-call caches warmed on
 * both platforms alike); `after` (e.g. clFinish) is inside the timing, once. */
#define MEASURE(name, n, body, after) do {                                  \
        long n_ = scaled_count(n);                                           \
        for (long i = 0; i < (n_ < 10 ? n_ : 10); i++) { body; }            \
        after;                                                              \
        double t0_ = now_us();                                              \
        for (long i = 0; i < n_; i++) { body; }                             \
        after;                                                              \
        report(name, n_, now_us() - t0_);                                   \
    } while (0)

static int wanted(const char *group) {
    const char *only = getenv("API_BENCH_ONLY");
    if (!only || !*only) return 1;
    size_t len = strlen(group);
    for (const char *p = only; (p = strstr(p, group)); p += len)
        if ((p == only || p[-1] == ',') && (p[len] == ',' || p[len] == 0)) return 1;
    return 0;
}

static cl_command_queue new_queue(cl_command_queue_properties props) {
    cl_queue_properties list[] = {CL_QUEUE_PROPERTIES, props, 0};
    cl_int e;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, props ? list : NULL, &e);
    CHECK(e);
    return q;
}

static cl_mem new_buffer(cl_mem_flags flags, size_t size, void *host) {
    cl_int e;
    cl_mem m = clCreateBuffer(ctx, flags, size, host, &e);
    CHECK(e);
    return m;
}

static cl_kernel new_kernel(cl_program p, const char *name) {
    cl_int e;
    cl_kernel k = clCreateKernel(p, name, &e);
    CHECK(e);
    return k;
}

static int image_support(void) {
    cl_bool yes = CL_FALSE;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof yes, &yes, NULL));
    return yes == CL_TRUE;
}

/* ---- create + release of every object kind ---- */
static void bench_create(void) {
    cl_int e;
    static int host[1024] __attribute__((aligned(4096)));
    for (int i = 0; i < 1024; i++) host[i] = i;
    cl_command_queue q = new_queue(0);

    MEASURE("create_context", 200, {
        cl_context c = clCreateContext(NULL, 1, &dev, NULL, NULL, &e); CHECK(e);
        CHECK(clReleaseContext(c)); }, (void)0);
    MEASURE("create_queue_inorder", 500, CHECK(clReleaseCommandQueue(new_queue(0))), (void)0);
    MEASURE("create_queue_ooo", 500,
            CHECK(clReleaseCommandQueue(new_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))), (void)0);
    MEASURE("create_queue_profiling_ooo", 500,
            CHECK(clReleaseCommandQueue(new_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                                                  CL_QUEUE_PROFILING_ENABLE))), (void)0);
    MEASURE("create_buffer_4k", 1000,
            CHECK(clReleaseMemObject(new_buffer(CL_MEM_READ_WRITE, 4096, NULL))), (void)0);
    MEASURE("create_buffer_copy_host_ptr_4k", 1000,
            CHECK(clReleaseMemObject(new_buffer(CL_MEM_COPY_HOST_PTR, 4096, host))), (void)0);
    MEASURE("create_buffer_use_host_ptr_4k", 1000,
            CHECK(clReleaseMemObject(new_buffer(CL_MEM_USE_HOST_PTR, 4096, host))), (void)0);
    {
        cl_mem m = new_buffer(CL_MEM_COPY_HOST_PTR, 4096, host);
        int got = 0;
        CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 400 * 4, 4, &got, 0, NULL, NULL));
        EXPECT(got == 400, "COPY_HOST_PTR buffer holds %d at index 400", got);
        CHECK(clReleaseMemObject(m));
    }
    MEASURE("create_buffer_write_4k", 500, {
        cl_mem m = new_buffer(CL_MEM_READ_WRITE, 4096, NULL);
        CHECK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, 4096, host, 0, NULL, NULL));
        CHECK(clReleaseMemObject(m)); }, (void)0);
    {
        cl_uint align_bits = 0;
        CHECK(clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL));
        size_t align = align_bits / 8 > 4096 ? align_bits / 8 : 4096;
        cl_mem parent = new_buffer(CL_MEM_READ_WRITE, 2 * align, NULL);
        cl_buffer_region region = {align, 4096};
        MEASURE("create_sub_buffer", 1000, {
            cl_mem s = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &e); CHECK(e);
            CHECK(clReleaseMemObject(s)); }, (void)0);
        CHECK(clReleaseMemObject(parent));
    }
    {
        /* The first build fills whatever cache the platform keeps; the timed ones may hit it. */
        cl_program p = clCreateProgramWithSource(ctx, 1, &TINY_SRC, NULL, &e);
        CHECK(e);
        CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
        CHECK(clReleaseProgram(p));
        MEASURE("create_program_build_tiny", 20, {
            cl_program p2 = clCreateProgramWithSource(ctx, 1, &TINY_SRC, NULL, &e); CHECK(e);
            CHECK(clBuildProgram(p2, 1, &dev, "", NULL, NULL));
            CHECK(clReleaseProgram(p2)); }, (void)0);
    }
    MEASURE("create_kernel", 1000, CHECK(clReleaseKernel(new_kernel(prog, "add_one"))), (void)0);
    MEASURE("create_user_event", 1000, {
        cl_event ev = clCreateUserEvent(ctx, &e); CHECK(e);
        CHECK(clReleaseEvent(ev)); }, (void)0);
    MEASURE("create_marker_event", 1000, {
        cl_event ev;
        CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev));
        CHECK(clReleaseEvent(ev)); }, CHECK(clFinish(q)));
    if (image_support()) {
        MEASURE("create_sampler", 1000, {
            cl_sampler s = clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &e); CHECK(e);
            CHECK(clReleaseSampler(s)); }, (void)0);
    } else {
        fprintf(stderr, "create_sampler: skipped (the device has no image support)\n");
    }
    CHECK(clReleaseCommandQueue(q));
}

/* ---- retain + release pairs ---- */
static void bench_retain(void) {
    cl_int e;
    cl_command_queue q = new_queue(0);
    cl_mem m = new_buffer(CL_MEM_READ_WRITE, 4096, NULL);
    cl_kernel k = new_kernel(prog, "add_one");
    cl_event ev = clCreateUserEvent(ctx, &e);
    CHECK(e);
    MEASURE("retain_release_context", 5000, { CHECK(clRetainContext(ctx)); CHECK(clReleaseContext(ctx)); }, (void)0);
    MEASURE("retain_release_queue", 5000, { CHECK(clRetainCommandQueue(q)); CHECK(clReleaseCommandQueue(q)); }, (void)0);
    MEASURE("retain_release_buffer", 5000, { CHECK(clRetainMemObject(m)); CHECK(clReleaseMemObject(m)); }, (void)0);
    MEASURE("retain_release_program", 5000, { CHECK(clRetainProgram(prog)); CHECK(clReleaseProgram(prog)); }, (void)0);
    MEASURE("retain_release_kernel", 5000, { CHECK(clRetainKernel(k)); CHECK(clReleaseKernel(k)); }, (void)0);
    MEASURE("retain_release_event", 5000, { CHECK(clRetainEvent(ev)); CHECK(clReleaseEvent(ev)); }, (void)0);
    cl_uint refs = 0;
    CHECK(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 1, "a buffer's reference count is %u after balanced retains and releases", refs);
    if (image_support()) {
        cl_sampler s = clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &e);
        CHECK(e);
        MEASURE("retain_release_sampler", 5000, { CHECK(clRetainSampler(s)); CHECK(clReleaseSampler(s)); }, (void)0);
        CHECK(clReleaseSampler(s));
    }
    CHECK(clReleaseEvent(ev));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseMemObject(m));
    CHECK(clReleaseCommandQueue(q));
}

/* ---- queries and kernel arguments ---- */
static void bench_info(void) {
    cl_command_queue q = new_queue(0);
    cl_mem m = new_buffer(CL_MEM_READ_WRITE, 4096, NULL);
    cl_kernel k = new_kernel(prog, "scaled");
    cl_event ev;
    CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev));
    CHECK(clFinish(q));
    cl_int status = -1;
    size_t size = 0, wg = 0;
    MEASURE("get_event_status", 5000,
            CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL)), (void)0);
    EXPECT(status == CL_COMPLETE, "a finished marker's status is %d", status);
    MEASURE("get_mem_size", 5000, CHECK(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL)), (void)0);
    EXPECT(size == 4096, "CL_MEM_SIZE is %zu", size);
    MEASURE("get_kernel_work_group_size", 5000,
            CHECK(clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL)), (void)0);
    EXPECT(wg >= 1, "CL_KERNEL_WORK_GROUP_SIZE is %zu", wg);
    float a = 0;
    MEASURE("set_kernel_arg_scalar", 5000, { a = (float)i; CHECK(clSetKernelArg(k, 1, sizeof a, &a)); }, (void)0);
    MEASURE("set_kernel_arg_buffer", 5000, CHECK(clSetKernelArg(k, 0, sizeof m, &m)), (void)0);
    /* The last values set are the ones a launch uses. */
    a = 2.0f;
    int n = 1024;
    CHECK(clSetKernelArg(k, 1, sizeof a, &a));
    CHECK(clSetKernelArg(k, 2, sizeof n, &n));
    size_t gsz = 1024;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, NULL, 0, NULL, NULL));
    float got = 0;
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 100 * 4, 4, &got, 0, NULL, NULL));
    EXPECT(got == 200.0f, "scaled kernel wrote %g at index 100 (want 200)", got);
    CHECK(clReleaseEvent(ev));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseMemObject(m));
    CHECK(clReleaseCommandQueue(q));
}

/* ---- small commands on an in-order queue ---- */
static void bench_commands(void) {
    cl_int e;
    cl_command_queue q = new_queue(0);
    static int src[1024], dst[1024];
    for (int i = 0; i < 1024; i++) src[i] = 3 * i + 1;
    cl_mem a = new_buffer(CL_MEM_READ_WRITE, 4096, NULL), b = new_buffer(CL_MEM_READ_WRITE, 4096, NULL);
    const size_t sizes[2] = {64, 4096};
    const char *suffix[2] = {"64", "4k"};
    char name[64];
    for (int s = 0; s < 2; s++) {
        for (int blocking = 1; blocking >= 0; blocking--) {
            snprintf(name, sizeof name, "write_%s_%s", blocking ? "blocking" : "nonblocking", suffix[s]);
            MEASURE(name, 2000, CHECK(clEnqueueWriteBuffer(q, a, blocking ? CL_TRUE : CL_FALSE, 0, sizes[s],
                                                           src, 0, NULL, NULL)), CHECK(clFinish(q)));
            memset(dst, 0, sizeof dst);
            snprintf(name, sizeof name, "read_%s_%s", blocking ? "blocking" : "nonblocking", suffix[s]);
            MEASURE(name, 2000, CHECK(clEnqueueReadBuffer(q, a, blocking ? CL_TRUE : CL_FALSE, 0, sizes[s],
                                                          dst, 0, NULL, NULL)), CHECK(clFinish(q)));
            EXPECT(memcmp(dst, src, sizes[s]) == 0, "%s read back other bytes than were written", name);
        }
    }
    MEASURE("copy_4k", 2000, CHECK(clEnqueueCopyBuffer(q, a, b, 0, 0, 4096, 0, NULL, NULL)), CHECK(clFinish(q)));
    CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, 4096, dst, 0, NULL, NULL));
    EXPECT(memcmp(dst, src, 4096) == 0, "copy_4k: the copy differs from its source");
    int pattern = 0x5a5a1234;
    MEASURE("fill_4k", 2000, CHECK(clEnqueueFillBuffer(q, b, &pattern, sizeof pattern, 0, 4096, 0, NULL, NULL)),
            CHECK(clFinish(q)));
    CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, 4096, dst, 0, NULL, NULL));
    EXPECT(dst[0] == pattern && dst[1023] == pattern, "fill_4k: holds %#x, %#x", dst[0], dst[1023]);
    MEASURE("map_unmap_4k", 2000, {
        int *p = clEnqueueMapBuffer(q, b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 4096, 0, NULL, NULL, &e);
        CHECK(e);
        p[i & 1023] = (int)i;
        CHECK(clEnqueueUnmapMemObject(q, b, p, 0, NULL, NULL)); }, CHECK(clFinish(q)));
    CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, 4096, dst, 0, NULL, NULL));
    {
        long last = scaled_count(2000) - 1;
        EXPECT(dst[last & 1023] == (int)last, "map_unmap_4k: a write through the map was lost (%d, want %ld)",
               dst[last & 1023], last);
    }
    cl_kernel k = new_kernel(prog, "add_one");
    CHECK(clSetKernelArg(k, 0, sizeof a, &a));
    size_t one = 1;
    MEASURE("launch_one_item", 2000, CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, NULL)),
            CHECK(clFinish(q)));
    CHECK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, 4, dst, 0, NULL, NULL));
    {
        long launches = scaled_count(2000) + (scaled_count(2000) < 10 ? scaled_count(2000) : 10);
        EXPECT(dst[0] == src[0] + launches, "launch_one_item: %d launches counted, want %ld",
               dst[0] - src[0], launches);
    }
    {
        /* A kernel object per launch: create, set its argument, launch, release (issue 15 part 2:
         * the first plan of a kernel object). Counts on `a` as launch_one_item does. */
        int before = 0, after = 0;
        CHECK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, 4, &before, 0, NULL, NULL));
        MEASURE("create_kernel_set_launch_release", 2000, {
            cl_kernel kk = new_kernel(prog, "add_one");
            CHECK(clSetKernelArg(kk, 0, sizeof a, &a));
            CHECK(clEnqueueNDRangeKernel(q, kk, 1, NULL, &one, &one, 0, NULL, NULL));
            CHECK(clReleaseKernel(kk)); }, CHECK(clFinish(q)));
        CHECK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, 4, &after, 0, NULL, NULL));
        long launches = scaled_count(2000) + (scaled_count(2000) < 10 ? scaled_count(2000) : 10);
        EXPECT(after - before == launches, "create_kernel_set_launch_release: %d launches counted, want %ld",
               after - before, launches);
    }
    {
        /* Another buffer set before each launch, with a scalar (16 buffers in turn): the plan's
         * buffer changes every time. */
        enum { NB = 16 };
        cl_mem bufs[NB];
        for (int j = 0; j < NB; j++) bufs[j] = new_buffer(CL_MEM_READ_WRITE, 64 * sizeof(float), NULL);
        cl_kernel ks = new_kernel(prog, "scaled");
        int n = 64;
        float f = 0;
        size_t g = 64;
        CHECK(clSetKernelArg(ks, 2, sizeof n, &n));
        MEASURE("setarg_new_buffer_launch", 2000, {
            f = (float)(i % 1000);
            CHECK(clSetKernelArg(ks, 0, sizeof(cl_mem), &bufs[i % NB]));
            CHECK(clSetKernelArg(ks, 1, sizeof f, &f));
            CHECK(clEnqueueNDRangeKernel(q, ks, 1, NULL, &g, NULL, 0, NULL, NULL)); }, CHECK(clFinish(q)));
        long last = scaled_count(2000) - 1;
        float got = 0;
        CHECK(clEnqueueReadBuffer(q, bufs[last % NB], CL_TRUE, 10 * sizeof(float), sizeof got, &got, 0, NULL, NULL));
        EXPECT(got == 10.0f * (float)(last % 1000), "setarg_new_buffer_launch: buffer %ld holds %g at 10, want %g",
               last % NB, got, 10.0f * (float)(last % 1000));
        CHECK(clReleaseKernel(ks));
        for (int j = 0; j < NB; j++) CHECK(clReleaseMemObject(bufs[j]));
    }
    MEASURE("finish_idle", 5000, CHECK(clFinish(q)), (void)0);
    MEASURE("flush_idle", 5000, CHECK(clFlush(q)), (void)0);
    cl_event done;
    CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &done));
    CHECK(clFinish(q));
    MEASURE("wait_complete_event", 5000, CHECK(clWaitForEvents(1, &done)), (void)0);
    CHECK(clReleaseEvent(done));
    MEASURE("user_event_create_set_release", 2000, {
        cl_event u = clCreateUserEvent(ctx, &e); CHECK(e);
        CHECK(clSetUserEventStatus(u, CL_COMPLETE));
        CHECK(clReleaseEvent(u)); }, (void)0);
    {
        /* A command gated by a user event runs once the status is set. */
        cl_event u = clCreateUserEvent(ctx, &e), ev;
        CHECK(e);
        CHECK(clEnqueueMarkerWithWaitList(q, 1, &u, &ev));
        CHECK(clSetUserEventStatus(u, CL_COMPLETE));
        CHECK(clWaitForEvents(1, &ev));
        CHECK(clReleaseEvent(ev));
        CHECK(clReleaseEvent(u));
    }
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseMemObject(a));
    CHECK(clReleaseMemObject(b));
    CHECK(clReleaseCommandQueue(q));
}

/* ---- the mixed command stream from T host threads ----
 * Each thread owns an in-order queue, a buffer of WIDTH ints and a kernel over it; all share one
 * out-of-order queue and a buffer where each thread owns WIDTH ints. A round is five commands:
 *   1. write one int of the own buffer (non-blocking, from constant host memory),
 *   2. add_one over the own buffer, waiting on the newest marker another thread published,
 *   3. read the int written in 1 back (non-blocking, into a per-round slot),
 *   4. a marker on the own queue (flushed, then published for the other threads),
 *   5. add_one over the own part of the shared buffer on the out-of-order queue, waiting on
 *      the own marker and on the thread's previous command there.
 * At the end every read must hold the written value + 1, the own buffer what the rounds leave
 * and the shared part the number of rounds. */
enum { WIDTH = 256, COMMANDS_PER_ROUND = 5 };

struct mixed {
    int threads, rounds;
    cl_command_queue shared_q;
    cl_mem shared_buf;
    pthread_barrier_t start;
    pthread_mutex_t lock;
    cl_event *published;            /* newest marker of each thread, retained; under lock */
};

struct worker {
    struct mixed *m;
    int id;
    cl_command_queue q;
    cl_mem own;
    cl_kernel k_own, k_shared;
    int values[WIDTH];
    int *reads;
};

static cl_event take_published(struct mixed *m, int id) {
    pthread_mutex_lock(&m->lock);
    cl_event ev = m->published[id];
    if (ev) CHECK(clRetainEvent(ev));
    pthread_mutex_unlock(&m->lock);
    return ev;
}

static void publish(struct mixed *m, int id, cl_event ev) {
    CHECK(clRetainEvent(ev));
    pthread_mutex_lock(&m->lock);
    cl_event old = m->published[id];
    m->published[id] = ev;
    pthread_mutex_unlock(&m->lock);
    if (old) CHECK(clReleaseEvent(old));
}

static void *mixed_worker(void *arg) {
    struct worker *w = arg;
    struct mixed *m = w->m;
    size_t width = WIDTH, offset = (size_t)w->id * WIDTH;
    cl_event prev_shared = NULL;
    pthread_barrier_wait(&m->start);
    for (int r = 0; r < m->rounds; r++) {
        int slot = r % WIDTH;
        CHECK(clEnqueueWriteBuffer(w->q, w->own, CL_FALSE, slot * sizeof(int), sizeof(int), &w->values[slot],
                                   0, NULL, NULL));
        cl_event other = take_published(m, (w->id + 1) % m->threads);
        CHECK(clEnqueueNDRangeKernel(w->q, w->k_own, 1, NULL, &width, NULL, other ? 1 : 0,
                                     other ? &other : NULL, NULL));
        if (other) CHECK(clReleaseEvent(other));
        CHECK(clEnqueueReadBuffer(w->q, w->own, CL_FALSE, slot * sizeof(int), sizeof(int), &w->reads[r],
                                  0, NULL, NULL));
        cl_event marker, shared_ev;
        CHECK(clEnqueueMarkerWithWaitList(w->q, 0, NULL, &marker));
        CHECK(clFlush(w->q));   /* events waited on from other queues must be flushed (spec 5.13) */
        publish(m, w->id, marker);
        cl_event waits[2] = {marker, prev_shared};
        CHECK(clEnqueueNDRangeKernel(m->shared_q, w->k_shared, 1, &offset, &width, NULL, prev_shared ? 2 : 1,
                                     waits, &shared_ev));
        CHECK(clReleaseEvent(marker));
        if (prev_shared) CHECK(clReleaseEvent(prev_shared));
        prev_shared = shared_ev;
    }
    CHECK(clFinish(w->q));
    if (prev_shared) CHECK(clWaitForEvents(1, &prev_shared));
    if (prev_shared) CHECK(clReleaseEvent(prev_shared));
    return NULL;
}

static void bench_mixed(int threads, int per_thread) {
    struct mixed m = {.threads = threads, .rounds = per_thread / COMMANDS_PER_ROUND};
    if (m.rounds < 1) m.rounds = 1;
    m.shared_q = new_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    m.shared_buf = new_buffer(CL_MEM_READ_WRITE, (size_t)threads * WIDTH * sizeof(int), NULL);
    int zero = 0;
    CHECK(clEnqueueFillBuffer(m.shared_q, m.shared_buf, &zero, sizeof zero, 0,
                              (size_t)threads * WIDTH * sizeof(int), 0, NULL, NULL));
    CHECK(clFinish(m.shared_q));
    m.published = calloc(threads, sizeof(cl_event));
    pthread_barrier_init(&m.start, NULL, threads + 1);
    pthread_mutex_init(&m.lock, NULL);
    struct worker *ws = calloc(threads, sizeof *ws);
    pthread_t *tids = calloc(threads, sizeof *tids);
    for (int t = 0; t < threads; t++) {
        struct worker *w = &ws[t];
        w->m = &m;
        w->id = t;
        w->q = new_queue(0);
        w->own = new_buffer(CL_MEM_READ_WRITE, WIDTH * sizeof(int), NULL);
        CHECK(clEnqueueFillBuffer(w->q, w->own, &zero, sizeof zero, 0, WIDTH * sizeof(int), 0, NULL, NULL));
        CHECK(clFinish(w->q));
        for (int j = 0; j < WIDTH; j++) w->values[j] = 1000 * (t + 1) + 7 * j;
        w->reads = calloc(m.rounds, sizeof(int));
        w->k_own = new_kernel(prog, "add_one");
        w->k_shared = new_kernel(prog, "add_one");
        CHECK(clSetKernelArg(w->k_own, 0, sizeof w->own, &w->own));
        CHECK(clSetKernelArg(w->k_shared, 0, sizeof m.shared_buf, &m.shared_buf));
        pthread_create(&tids[t], NULL, mixed_worker, w);
    }
    double t0 = now_us();
    pthread_barrier_wait(&m.start);
    for (int t = 0; t < threads; t++) pthread_join(tids[t], NULL);
    CHECK(clFinish(m.shared_q));
    double total = now_us() - t0;

    int *shared = calloc((size_t)threads * WIDTH, sizeof(int)), own[WIDTH];
    CHECK(clEnqueueReadBuffer(m.shared_q, m.shared_buf, CL_TRUE, 0, (size_t)threads * WIDTH * sizeof(int),
                              shared, 0, NULL, NULL));
    for (int t = 0; t < threads; t++) {
        struct worker *w = &ws[t];
        for (int r = 0; r < m.rounds; r++)
            EXPECT(w->reads[r] == w->values[r % WIDTH] + 1, "mixed T=%d: thread %d round %d read %d, want %d",
                   threads, t, r, w->reads[r], w->values[r % WIDTH] + 1);
        CHECK(clEnqueueReadBuffer(w->q, w->own, CL_TRUE, 0, sizeof own, own, 0, NULL, NULL));
        for (int j = 0; j < WIDTH; j++) {
            /* the last round that wrote slot j, then one add_one per round from there */
            int want = j < m.rounds ? w->values[j] + (m.rounds - ((m.rounds - 1 - j) / WIDTH * WIDTH + j))
                                    : m.rounds;
            EXPECT(own[j] == want, "mixed T=%d: thread %d's buffer[%d] = %d, want %d", threads, t, j, own[j], want);
            EXPECT(shared[t * WIDTH + j] == m.rounds, "mixed T=%d: shared[%d] = %d, want %d", threads,
                   t * WIDTH + j, shared[t * WIDTH + j], m.rounds);
        }
        free(w->reads);
        CHECK(clReleaseKernel(w->k_own));
        CHECK(clReleaseKernel(w->k_shared));
        CHECK(clReleaseMemObject(w->own));
        CHECK(clReleaseCommandQueue(w->q));
        if (m.published[t]) CHECK(clReleaseEvent(m.published[t]));
    }
    char name[32];
    snprintf(name, sizeof name, "mixed_stream_t%d", threads);
    report(name, (long)threads * m.rounds * COMMANDS_PER_ROUND, total);
    free(shared);
    free(ws);
    free(tids);
    free(m.published);
    pthread_barrier_destroy(&m.start);
    pthread_mutex_destroy(&m.lock);
    CHECK(clReleaseMemObject(m.shared_buf));
    CHECK(clReleaseCommandQueue(m.shared_q));
}

/* ---- the held-out style stream: fresh objects with every command ----
 * Each thread owns an in-order queue and a kernel; a round makes a user event and a new buffer
 * (copied from host memory), sets the buffer as the kernel's argument, launches it gated by the
 * user event with an event of its own, sets the user event complete, reads one int back after
 * the launch's event (non-blocking, with an event) and releases the buffer and the events; every
 * 16th round waits for its read. Counted per round: three commands (user event, launch, read). */
enum { FRESH_WIDTH = 64, FRESH_COMMANDS_PER_ROUND = 3 };

struct fresh_worker {
    int id, rounds;
    pthread_barrier_t *start;
    cl_command_queue q;
    cl_kernel k;
    int values[FRESH_WIDTH];
    int *reads;
};

static void *fresh_worker(void *arg) {
    struct fresh_worker *w = arg;
    size_t width = FRESH_WIDTH;
    cl_int e;
    pthread_barrier_wait(w->start);
    for (int r = 0; r < w->rounds; r++) {
        int slot = r % FRESH_WIDTH;
        cl_event gate = clCreateUserEvent(ctx, &e);
        CHECK(e);
        cl_mem buf = new_buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof w->values, w->values);
        CHECK(clSetKernelArg(w->k, 0, sizeof buf, &buf));
        cl_event launched, read;
        CHECK(clEnqueueNDRangeKernel(w->q, w->k, 1, NULL, &width, NULL, 1, &gate, &launched));
        CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
        CHECK(clEnqueueReadBuffer(w->q, buf, CL_FALSE, slot * sizeof(int), sizeof(int), &w->reads[r], 1,
                                  &launched, &read));
        CHECK(clReleaseMemObject(buf));      /* released while its commands may still run */
        CHECK(clReleaseEvent(gate));
        CHECK(clReleaseEvent(launched));
        if (r % 16 == 15) CHECK(clWaitForEvents(1, &read));
        CHECK(clReleaseEvent(read));
    }
    CHECK(clFinish(w->q));
    return NULL;
}

static void bench_fresh(int threads, int per_thread) {
    int rounds = per_thread / FRESH_COMMANDS_PER_ROUND;
    if (rounds < 1) rounds = 1;
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, threads + 1);
    struct fresh_worker *ws = calloc(threads, sizeof *ws);
    pthread_t *tids = calloc(threads, sizeof *tids);
    for (int t = 0; t < threads; t++) {
        struct fresh_worker *w = &ws[t];
        w->id = t;
        w->rounds = rounds;
        w->start = &start;
        w->q = new_queue(0);
        w->k = new_kernel(prog, "add_one");
        for (int j = 0; j < FRESH_WIDTH; j++) w->values[j] = 100000 * (t + 1) + 3 * j;
        w->reads = calloc(rounds, sizeof(int));
        pthread_create(&tids[t], NULL, fresh_worker, w);
    }
    double t0 = now_us();
    pthread_barrier_wait(&start);
    for (int t = 0; t < threads; t++) pthread_join(tids[t], NULL);
    double total = now_us() - t0;
    for (int t = 0; t < threads; t++) {
        struct fresh_worker *w = &ws[t];
        for (int r = 0; r < rounds; r++)
            EXPECT(w->reads[r] == w->values[r % FRESH_WIDTH] + 1, "fresh T=%d: thread %d round %d read %d, want %d",
                   threads, t, r, w->reads[r], w->values[r % FRESH_WIDTH] + 1);
        free(w->reads);
        CHECK(clReleaseKernel(w->k));
        CHECK(clReleaseCommandQueue(w->q));
    }
    char name[32];
    snprintf(name, sizeof name, "fresh_stream_t%d", threads);
    report(name, (long)threads * rounds * FRESH_COMMANDS_PER_ROUND, total);
    free(ws);
    free(tids);
    pthread_barrier_destroy(&start);
}

int main(int argc, char **argv) {
    const char *want = argc > 1 ? argv[1] : "";
    scale = argc > 2 ? atof(argv[2]) : 1;
    const char *mixed_env = getenv("API_BENCH_MIXED");
    int per_thread = argc > 3 ? atoi(argv[3]) : mixed_env && *mixed_env ? atoi(mixed_env) : 12500;
    const char *threads_env = getenv("API_BENCH_THREADS");
    if (!(scale > 0)) scale = 1;
    cl_platform_id plats[16];
    cl_uint np = 0, i;
    CHECK(clGetPlatformIDs(16, plats, &np));
    for (i = 0; i < np && !plat; i++) {
        char name[256];
        clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, want)) plat = plats[i];
    }
    if (!plat) { fprintf(stderr, "no platform matching '%s'\n", want); return 2; }
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_int e;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CHECK(e);
    prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e);
    CHECK(e);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));

    if (wanted("create")) bench_create();
    if (wanted("retain")) bench_retain();
    if (wanted("info")) bench_info();
    if (wanted("commands")) bench_commands();
    if (wanted("mixed")) {
        char list[64];
        snprintf(list, sizeof list, "%s", threads_env && *threads_env ? threads_env : "1,8");
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
            if (atoi(tok) > 0) bench_mixed(atoi(tok), per_thread);
    }
    if (wanted("fresh")) {
        char list[64];
        snprintf(list, sizeof list, "%s", threads_env && *threads_env ? threads_env : "1,8");
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
            if (atoi(tok) > 0) bench_fresh(atoi(tok), per_thread);
    }
    CHECK(clReleaseProgram(prog));
    CHECK(clReleaseContext(ctx));
    return 0;
}
