/* What the hardware allows, without any runtime: the work of sched_bench's in-order
 * parallelisation (640 units of the `reader` kernel's loop, 20000 dependent multiply-adds each)
 * on T plain threads, each taking every T-th unit. Prints microseconds per unit, the best of 5;
 * the speedup over T = 1 bounds what a runtime can reach on the machine (turbo clocks and shared
 * cores make it less than T).
 *
 *   cc -O2 -march=native -o threads_bound bench/threads_bound.c -lpthread && ./threads_bound 1 16
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { UNITS = 640, ITERS = 20000 };
static int threads;
static volatile float sink;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void *work(void *arg) {
    float total = 0;
    for (long u = (long)arg; u < UNITS; u += threads) {
        float x = (float)u;
        for (int i = 0; i < ITERS; i++) x = x * 0.999f + 0.5f;
        total += x;
    }
    sink = total;
    return NULL;
}

int main(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        pthread_t t[256];
        double best = 1e30;
        threads = atoi(argv[a]);
        if (threads < 1 || threads > 256) return 2;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = now_us();
            for (long i = 0; i < threads; i++) pthread_create(&t[i], NULL, work, (void *)i);
            for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
            double t = now_us() - t0;
            if (t < best) best = t;
        }
        printf("threads_bound\t%d\t%.3f\n", threads, best / UNITS);
    }
    return 0;
}
