"""fork(): a child of a process that used PyPlat gets a working platform at once (docs/runtime.md,
"fork"). The child makes its own queues and uses them fully, builds programs (libclang and the JIT
after fork), and keeps the parent's objects; the parent's commands not finished at the fork are
terminated in the child (CL_OUT_OF_RESOURCES) at once, never run, never waited for.

Every case runs in a subprocess with a time limit, and forked children give up on their own
(faulthandler), so a hang is a failure and never wedges pytest. Through pyopencl (os.fork,
multiprocessing) and a C program through the ICD loader (fork() from C).
"""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pyopencl")

LIMIT = 120          # the whole script (a hang fails here at the latest)

# Shared by the scripts: PyPlat through pyopencl, a kernel whose source differs per caller (so
# the child really builds: no in-memory or on-disk cache entry), a checked launch.
PRELUDE = '''
import os, signal, sys, time, faulthandler
import numpy as np
import pyplat
pyplat.enable()
import pyopencl as cl

SRC = "__kernel void k(__global int *a, int v) { int i = get_global_id(0); a[i] = i * v + %d; }"
N = 4096

def platform():
    return [p for p in cl.get_platforms() if p.name == "PyPlat"][0]

def run(ctx, queue, add, v, buf=None):
    prg = cl.Program(ctx, SRC % add).build()
    a = np.zeros(N, np.int32)
    buf = buf or cl.Buffer(ctx, cl.mem_flags.READ_WRITE, a.nbytes)
    prg.k(queue, a.shape, None, buf, np.int32(v))
    cl.enqueue_copy(queue, a, buf)
    assert (a == np.arange(N) * v + add).all(), (add, v, a[:8])
    return prg, buf

def threads():
    return len(os.listdir("/proc/self/task"))

def fork(child, limit=20):
    """child() in a forked child (exit 0 if it returns); its exit status, or 'hang'."""
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        # A hang ends the child, with a traceback (an alarm: faulthandler's own watchdog thread
        # would not survive a further fork).
        faulthandler.register(signal.SIGALRM, chain=True)
        signal.alarm(limit)
        try:
            child()
            sys.stdout.flush()
            os._exit(0)
        except BaseException:
            import traceback
            traceback.print_exc()
            sys.stdout.flush()
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
'''


@pytest.fixture
def script(run_with_pyplat, tmp_path):
    def run(body, env=None):
        path = tmp_path / "script.py"
        path.write_text(PRELUDE + textwrap.dedent(body))
        env = dict(env or {})
        env.setdefault("PYPLAT_CACHE_DIR", str(tmp_path / "cache"))
        r = run_with_pyplat([sys.executable, str(path)], env=env, timeout=LIMIT, cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        return r
    return run


@pytest.mark.parametrize("driver", ["pool", "basic"])
def test_child_builds_and_runs_after_the_parent_used_the_platform(script, driver):
    r = script('''
    ctx = cl.Context(platform().get_devices())
    queue = cl.CommandQueue(ctx)
    for add in range(3):
        run(ctx, queue, add, 3)
    if os.environ.get("PYPLAT_DRIVER") != "basic":
        assert threads() > 2, threads()           # the pool's workers and the reaper are alive
    def child():
        t = time.monotonic()
        c2 = cl.Context(platform().get_devices())
        q2 = cl.CommandQueue(c2)
        run(c2, q2, 1000 + os.getpid() % 1000, 5)   # a program never built before: compiled here
        for v in range(20):                         # many commands: the child's own pool
            run(c2, q2, 7, v)
        print("child ok", round(time.monotonic() - t, 2))
        assert time.monotonic() - t < 10
    assert fork(child) == 0
    run(ctx, queue, 9, 4)                           # the parent is unaffected
    print("parent ok")
    ''', env={"PYPLAT_DRIVER": driver})
    assert "child ok" in r.stdout and "parent ok" in r.stdout


def test_inherited_objects_follow_the_rule(script):
    r = script('''
    ctx = cl.Context(platform().get_devices())
    queue = cl.CommandQueue(ctx)
    prg, buf = run(ctx, queue, 0, 3)
    kernel = cl.Kernel(prg, "k")
    event = cl.enqueue_marker(queue)
    queue.finish()
    def child():
        # Kept: the context (a new queue on it), the memory object's contents, the program and
        # its kernel object.
        q2 = cl.CommandQueue(ctx)
        a = np.zeros(N, np.int32)
        cl.enqueue_copy(q2, a, buf)
        assert (a == np.arange(N) * 3).all()
        kernel.set_args(buf, np.int32(11))
        cl.enqueue_nd_range_kernel(q2, kernel, (N,), None)
        cl.enqueue_copy(q2, a, buf)
        assert (a == np.arange(N) * 11).all()
        run(ctx, q2, 5, 2)
        # The parent's queue and (finished) event work too.
        assert event.command_execution_status == cl.command_execution_status.COMPLETE
        event.wait()
        run(ctx, queue, 6, 2)
        cl.enqueue_copy(queue, a, buf)
        queue.finish()
        assert (a == np.arange(N) * 11).all()
        print("child ok")
    assert fork(child) == 0
    a = np.zeros(N, np.int32)                # the parent's objects are the parent's
    cl.enqueue_copy(queue, a, buf)
    assert (a == np.arange(N) * 3).all()
    event.wait()
    print("parent ok")
    ''')
    assert "child ok" in r.stdout and "parent ok" in r.stdout


def test_fork_while_commands_run_in_the_parent(script):
    # Commands in flight at the fork belong to the parent: the child neither runs them nor waits
    # for them; its own work is not held up by them.
    r = script('''
    SLOW = """__kernel void slow(__global float *a) { int i = get_global_id(0); float x = a[i];
        for (int k = 0; k < 20000; k++) x = x * 0.999f + 1.0f; a[i] = x; }"""
    ctx = cl.Context(platform().get_devices())
    queue = cl.CommandQueue(ctx)
    slow = cl.Program(ctx, SLOW).build().slow
    data = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 65536)
    events = [slow(queue, (65536,), None, data) for _ in range(4)]
    def child():
        t = time.monotonic()
        q2 = cl.CommandQueue(ctx)
        run(ctx, q2, 21, 3)
        small = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                          hostbuf=np.zeros(64, np.float32))
        slow(q2, (64,), None, small)       # a kernel whose launches were pending at the fork
        out = np.empty(64, np.float32)
        cl.enqueue_copy(q2, out, small)
        assert np.allclose(out, (1 - 0.999 ** 20000) / (1 - 0.999), rtol=1e-3), out[:4]
        # The parent's unfinished commands are terminated here, at once: CL_OUT_OF_RESOURCES.
        assert events[-1].command_execution_status == -5
        try:
            events[-1].wait()
        except cl.Error as e:
            assert "EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST" in str(e), e
        else:
            raise AssertionError("waiting for a lost command succeeded")
        marker = cl.enqueue_marker(q2, wait_for=[events[-1]])     # fails as its wait list did
        try:
            marker.wait()
        except cl.Error:
            pass
        assert marker.command_execution_status == -14, marker.command_execution_status
        queue.finish()                      # nothing unfinished on the inherited queue
        run(ctx, queue, 22, 3)              # which runs the child's commands
        assert time.monotonic() - t < 10
        print("child ok", round(time.monotonic() - t, 2))
    assert fork(child) == 0
    queue.finish()
    assert all(e.command_execution_status == cl.command_execution_status.COMPLETE for e in events)
    print("parent ok")
    ''')
    assert "child ok" in r.stdout and "parent ok" in r.stdout


def test_grandchild(script):
    r = script('''
    ctx = cl.Context(platform().get_devices())
    run(ctx, cl.CommandQueue(ctx), 0, 1)
    def grandchild():
        run(ctx, cl.CommandQueue(ctx), 31, 2)
        print("grandchild ok")
    def child():
        run(ctx, cl.CommandQueue(ctx), 30, 2)
        assert fork(grandchild) == 0
        run(ctx, cl.CommandQueue(ctx), 32, 2)
    assert fork(child) == 0
    ''')
    assert "grandchild ok" in r.stdout


def test_multiprocessing_pool_fork_and_spawn(script):
    r = script('''
    import multiprocessing as mp

    def square_on_device(x):
        # (fork: the context made at module level in the parent; spawn: made on import here)
        q = cl.CommandQueue(CTX)
        prg = cl.Program(CTX, "__kernel void sq(__global int *a) { int i = get_global_id(0); "
                              "a[i] = a[i] * a[i]; }").build()
        a = np.full(16, x, np.int32)
        buf = cl.Buffer(CTX, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
        prg.sq(q, a.shape, None, buf)
        cl.enqueue_copy(q, a, buf)
        return int(a.sum())

    CTX = cl.Context(platform().get_devices())

    if __name__ == "__main__":
        run(CTX, cl.CommandQueue(CTX), 0, 3)
        for method in ("fork", "spawn"):
            with mp.get_context(method).Pool(2) as pool:
                result = pool.map_async(square_on_device, range(6)).get(timeout=60)
            assert result == [16 * x * x for x in range(6)], (method, result)
            print(method, "ok")
    ''')
    assert "fork ok" in r.stdout and "spawn ok" in r.stdout


# --- a C program: fork() from C, through the ICD loader ------------------------------------------

FORK_C = r"""
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *SRC =
    "__kernel void k(__global int *a, int v) { int i = get_global_id(0); a[i] = i * v + ADD; }";

static cl_platform_id find(const char *name) {
    cl_platform_id ps[16]; cl_uint n = 0;
    clGetPlatformIDs(16, ps, &n);
    for (cl_uint i = 0; i < n; i++) {
        char buf[256] = {0};
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof buf, buf, NULL);
        if (strcmp(buf, name) == 0) return ps[i];
    }
    return NULL;
}

/* A context, a queue, a program built with ADD = add, a launch, a read; checked. */
static int work(cl_platform_id p, int v, int add, const char *tag, cl_command_queue *q_out) {
    cl_device_id dev; cl_int err;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL)) { printf("%s: no device\n", tag); return 1; }
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err) { printf("%s: context %d\n", tag, err); return 1; }
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    if (err) { printf("%s: queue %d\n", tag, err); return 1; }
    cl_program prg = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &err);
    char opts[64]; snprintf(opts, sizeof opts, "-DADD=%d", add);
    if ((err = clBuildProgram(prg, 1, &dev, opts, NULL, NULL))) { printf("%s: build %d\n", tag, err); return 1; }
    cl_kernel k = clCreateKernel(prg, "k", &err);
    int n = 4096, *a = malloc(n * sizeof(int));
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(int), NULL, &err);
    clSetKernelArg(k, 0, sizeof buf, &buf);
    clSetKernelArg(k, 1, sizeof v, &v);
    size_t g = n;
    if ((err = clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL))) { printf("%s: launch %d\n", tag, err); return 1; }
    if ((err = clEnqueueReadBuffer(q, buf, CL_TRUE, 0, n * sizeof(int), a, 0, NULL, NULL))) { printf("%s: read %d\n", tag, err); return 1; }
    for (int i = 0; i < n; i++)
        if (a[i] != i * v + add) { printf("%s: a[%d] = %d\n", tag, i, a[i]); return 1; }
    printf("%s ok\n", tag);
    *q_out = q;
    return 0;
}

int main(int argc, char **argv) {
    cl_platform_id p = find(argc > 1 ? argv[1] : "PyPlat");
    if (!p) { printf("no platform\n"); return 2; }
    cl_command_queue q, q2;
    if (work(p, 3, 0, "parent", &q)) return 1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);                                 /* a hang ends the child */
        int rc = work(p, 5, 17, "child", &q2);
        printf("child inherited clFinish %d\n", clFinish(q));   /* the parent's queue */
        fflush(stdout);
        _exit(rc);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child status %d\n", st);
    if (work(p, 7, 1, "parent after", &q2)) return 1;
    return st == 0 ? 0 : 1;
}
"""


@pytest.fixture(scope="module")
def fork_program(tmp_path_factory):
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("fork")
    (d / "fork.c").write_text(FORK_C)
    r = subprocess.run([cc, "-O1", "-o", str(d / "fork"), str(d / "fork.c"), "-lOpenCL"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("cannot build a C program against -lOpenCL: " + r.stderr[-500:])
    return d / "fork"


def test_c_program_forks(fork_program, run_with_pyplat, tmp_path):
    r = run_with_pyplat([fork_program], env={"PYPLAT_CACHE_DIR": str(tmp_path)}, timeout=LIMIT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "child ok" in r.stdout and "parent after ok" in r.stdout
    assert "child inherited clFinish 0" in r.stdout
