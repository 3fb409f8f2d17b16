"""The event graph: commands, their wait lists and notify lists (native: _sched.pyx).

Every command has an event (user-visible or implicit). At enqueue a command is linked to the
events it waits for: each not-yet-complete event adds the command to its notify list and one to
the command's wait count; an already complete event adds no link (a failed one marks the command
failed). When the count reaches zero the command is ready and its driver is told. Completion
fires the C callbacks due, notifies every command on the notify list through its own driver
(the default broadcast) and wakes host waiters -- all in C, without the GIL.

    Command(kind, driver)       a node; payload set with set_copy / set_fill / set_rect /
                                set_native_kernel / set_action (Python, GIL)
    .add_dependency(other)      link (before commit)
    .attach(tracker)            count it among a queue's unfinished commands
    .commit()                   SUBMITTED; hand to the driver; ready once its waits are done
    .wait()                     sleep (GIL released) until finished; returns the status
    .add_callback(trigger, fn, user, handle)   a C callback, once per registration
    .add_hook(fn)               Python clean-up after completion (see reap())
"""
from pyplat.runtime._sched import (COMPLETE, KIND_COPY, KIND_FILL, KIND_NATIVE, KIND_NDRANGE,  # noqa: F401
                                   KIND_NOP, KIND_PY, KIND_RECT, KIND_USER, QUEUED, RUNNING, SUBMITTED,
                                   ORDER_AUTO, ORDER_OUT_OF_ORDER, ORDER_SERIAL, Command, KernelSizes,
                                   LaunchPlan,
                                   QueueCore, QueueTracker, STREAM_FUNCTIONS, choose_local_size, dimensions_refusal,
                                   launch_geometry, launch_kernel, stream_driver, stream_launch, now_ns, reap, set_hold_hooks)
from pyplat.runtime import trace

trace.start_if_asked()           # PYPLAT_TRACE: before the first queue or command is made
