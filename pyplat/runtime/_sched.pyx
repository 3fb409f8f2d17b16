# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The native runtime: event graph, driver interface, Basic and thread-pool drivers.

Everything on the path  ready -> executed -> completed -> dependants notified -> C callbacks
runs in C without the GIL. Only commands whose action is a Python callable take the GIL (to run
it), and Python-side clean-up of finished commands (releasing the objects they kept alive) is
deferred to a *reap list* processed by the next thread that holds the GIL in the runtime (waits,
finish, enqueue) or by a small reaper thread.

Driver interface (thesis Table 4.1), a struct of C function pointers (driver_t):
  submit(d, c)          a new command was handed over (it may not be ready)
  ready(d, c)           its wait count reached zero: it may run now
  flush(d)              make submitted commands eventually run
  join(d, c)            block until c has finished (the host sleeps, GIL released)
  notify(d, c, ev)      an event c waits for has finished (default: count down, ready at zero)
broadcast (cmd_set_status): on completion, notify every command of the notify list through its
own driver -- one implementation for every driver.

Its interface to the layers above: Python classes (Command, QueueCore, LaunchPlan, ...) and,
for native code (the API layer's fast path, pyplat/api/_native.pyx), the structs and cdef
functions of _sched.pxd. It imports nothing from them: where it needs a service from above
(taking and dropping the references a hold keeps), that is a hook installed at start-up.
"""
cimport cython
from cpython.ref cimport Py_INCREF, Py_XDECREF
from libc.stdlib cimport malloc, free, realloc, calloc
from libc.string cimport memcpy, memset, memcmp, strdup
from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t

import os
import sys
import threading
import traceback

from pyplat import config

cdef extern from *:
    """
    #include <pthread.h>
    #include <sched.h>
    #include <time.h>
    #include <stdlib.h>
    #include <string.h>
    static inline void pp_pause(void) {
    #if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
    #else
        __asm__ __volatile__("" ::: "memory");
    #endif
    }
    /* A cheap clock for short intervals on one machine: the time-stamp counter where there is
       one (a few ns, against ~25 for clock_gettime; its rate is ~1-4 per ns), else ns. */
    static inline unsigned long long pp_ticks(void) {
    #if defined(__x86_64__) || defined(__i386__)
        return __builtin_ia32_rdtsc();
    #else
        return pp_now_ns();
    #endif
    }
    static __thread int pp_worker_id = -1;
    static __thread void *pp_worker_pool = NULL;
    static __thread void *pp_basic_head = NULL;
    static __thread void *pp_basic_tail = NULL;
    static __thread int pp_basic_running = 0;
    static __thread void *pp_scratch = NULL;
    static __thread size_t pp_scratch_cap = 0;
    static inline void pp_deadline(struct timespec *ts, long ms) {
        clock_gettime(CLOCK_REALTIME, ts);
        ts->tv_nsec += (ms % 1000) * 1000000L; ts->tv_sec += ms / 1000 + ts->tv_nsec / 1000000000L;
        ts->tv_nsec %= 1000000000L; }
    """
    void pp_pause() nogil
    unsigned long long pp_ticks() nogil
    int pp_worker_id
    void *pp_worker_pool
    void *pp_basic_head
    void *pp_basic_tail
    int pp_basic_running
    void *pp_scratch
    size_t pp_scratch_cap

cdef extern from "<time.h>" nogil:
    cdef struct timespec:
        long tv_sec
        long tv_nsec

cdef extern from *:
    int pthread_cond_timedwait(pthread_cond_t *, pthread_mutex_t *, const timespec *) nogil
    void pp_deadline(timespec *ts, long ms) nogil
    int sched_yield() nogil

# Status values (ST_*) and command kinds (K_*): _sched.pxd.
KIND_NOP, KIND_PY, KIND_COPY, KIND_FILL, KIND_RECT, KIND_NDRANGE, KIND_NATIVE, KIND_USER = range(8)
QUEUED, SUBMITTED, RUNNING, COMPLETE = ST_QUEUED, ST_SUBMITTED, ST_RUNNING, ST_COMPLETE


# The structs (commands, drivers, queues' ordering cores, launch plans, holds) and the cdef
# functions other native modules call are declared in _sched.pxd (the API layer's native fast
# path, pyplat/api/_native.pyx, cimports it).

# The runtime in parts, one concept each, compiled as one module (so the hot path stays inlined
# C; pyplat/runtime/sched/*.pxi):
include "sched/tracing.pxi"
include "sched/commands.pxi"
include "sched/code_lines.pxi"
include "sched/faults.pxi"
include "sched/execution.pxi"
include "sched/reaping.pxi"
include "sched/basic_driver.pxi"
include "sched/pool_driver.pxi"
include "sched/stream_driver.pxi"
include "sched/python_faces.pxi"
include "sched/queue_order.pxi"
include "sched/holds.pxi"
include "sched/host_memory.pxi"
include "sched/launch_sizes.pxi"
include "sched/launch_plans.pxi"
include "sched/forking.pxi"
