"""The driver interface (thesis Table 4.1) and the drivers PyPlat has (native: _sched.pyx).

A driver is a table of C functions (``driver_t``) receiving commands whose dependencies are linked:
  submit(d, cmd)        a new command is handed to the driver (it may not be ready yet)
  ready(d, cmd)         its wait count reached zero: it may run now
  flush(d)              make submitted commands eventually run
  join(d, cmd)          block until cmd has finished (the host sleeps, GIL released)
  notify(d, cmd, ev)    an event cmd waits for has finished (default: count down; ready at 0)
broadcast is the graph's: completion calls notify on the driver of every waiting command, so
drivers never need to know about each other. See docs/runtime.md.

Drivers:
  pool   native worker threads (PYPLAT_WORKERS, default one per core), a queue per worker,
         round robin, stealing, kernels' work-groups shared out in chunks (the default)
  basic  no threads: commands run on the thread that makes them ready (PYPLAT_DRIVER=basic)
"""
from pyplat.runtime._sched import Driver, default_driver, get_driver  # noqa: F401
