"""The driver interface (thesis Table 4.1) and the drivers PyPlat has.

A driver receives commands whose dependencies are linked and runs them once ready:
  submit(cmd)        a new command is handed to the driver (it may not be ready yet)
  ready(cmd)         its wait count reached zero: it may run now
  flush()            make submitted commands eventually run
  join(cmds)         block until the given commands have finished (the host sleeps)
  notify(cmd, ev)    an event `cmd` waits for has finished
The default broadcast (graph.Command.set_status) calls notify on the driver of every command
waiting for a finished event, so drivers never need to know about each other.
"""
import collections
import os
import threading


class Driver:
    def submit(self, command):
        pass

    def ready(self, command):
        raise NotImplementedError

    def flush(self):
        pass

    def join(self, commands):
        for command in commands:
            command.wait()

    def notify(self, command, event):
        command.dependency_done(event)


class BasicDriver(Driver):
    """No threads: ready commands run at once, on the thread that made them ready."""

    def ready(self, command):
        command.execute()


class WorkerDriver(Driver):
    """One native thread per device running ready commands in the order they became ready.

    Commands block only in their own action; the host sleeps in join. (Several workers,
    per-worker queues and work stealing are the next step of the runtime.)
    """

    def __init__(self, name="pyplat-worker"):
        self._queue = collections.deque()
        self._cv = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def ready(self, command):
        with self._cv:
            self._queue.append(command)
            self._cv.notify()

    def _run(self):
        while True:
            with self._cv:
                while not self._queue:
                    self._cv.wait()
                command = self._queue.popleft()
            command.execute()


_default = None
_default_lock = threading.Lock()


def default_driver():
    """The driver CPU devices share: PYPLAT_DRIVER=basic selects the thread-less one."""
    global _default
    with _default_lock:
        if _default is None:
            if os.environ.get("PYPLAT_DRIVER", "worker") == "basic":
                _default = BasicDriver()
            else:
                _default = WorkerDriver()
        return _default
