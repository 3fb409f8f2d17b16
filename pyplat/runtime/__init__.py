"""Runtime: the event graph, the driver interface and the device drivers.

A command is ready when every event it waits for has completed; a driver runs ready commands and
reports completion, which notifies the commands waiting on it (see graph.py and driver.py).
The native runtime is _sched.pyx (written in parts, sched/*.pxi); work-groups run there without
the GIL. _sched.pxd is its C interface for other native modules (the API layer's fast path). The
runtime imports nothing from pyplat.api or pyplat.core; the layers above install the hooks it
needs (set_hold_hooks).
"""
