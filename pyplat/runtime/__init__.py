"""Runtime: the event graph, the driver interface and the device drivers.

A command is ready when every event it waits for has completed; a driver runs ready commands and
reports completion, which notifies the commands waiting on it (see graph.py and driver.py).
The native work-group launcher is in _launch.pyx and runs without the GIL.
"""
