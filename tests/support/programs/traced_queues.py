"""Run under PYPLAT_TRACE by tests/runtime/test_trace.py: two queues, an in-order queue with independent
kernels (the automatic mode may run them side by side), a wait list across queues, a user event.
13 commands: 5 copies, 4 scale_a, 3 scale_b, 1 user event."""
import numpy as np
import pyopencl as cl

platform = [p for p in cl.get_platforms() if p.name == "PyPlat"][0]
ctx = cl.Context(platform.get_devices()[:1])
q1 = cl.CommandQueue(ctx)                    # in-order: auto-parallel
q2 = cl.CommandQueue(ctx)
src = """
__kernel void scale_a(__global float *x) { x[get_global_id(0)] *= 2.0f; }
__kernel void scale_b(__global float *x) { x[get_global_id(0)] *= 3.0f; }
"""
prg = cl.Program(ctx, src).build()
n = 1 << 16
bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n) for _ in range(4)]
host = np.ones(n, np.float32)
for b in bufs:
    cl.enqueue_copy(q1, b, host)
gate = cl.UserEvent(ctx)
scale_a, scale_b = cl.Kernel(prg, "scale_a"), cl.Kernel(prg, "scale_b")


def launch(queue, kernel, buf, wait_for=None):
    kernel.set_arg(0, buf)
    return cl.enqueue_nd_range_kernel(queue, kernel, (n,), (64,), wait_for=wait_for)


evs = [launch(q1, scale_a, b) for b in bufs]          # independent: may run side by side
evs += [launch(q1, scale_b, b) for b in bufs[:2]]     # each after its buffer's scale_a
cross = launch(q2, scale_b, bufs[3], wait_for=[evs[3], gate])   # a wait list across queues
gate.set_status(cl.command_execution_status.COMPLETE)
out = np.empty(n, np.float32)
cl.enqueue_copy(q2, out, bufs[3], wait_for=[cross])
q1.finish(); q2.finish()
assert out[0] == 6.0, out[0]
print("ok")
