"""The event graph: commands, their wait lists and notify lists.

Every command has an event (user-visible or implicit). At enqueue a command is linked to the
events it waits for: each not-yet-complete event adds the command to its notify list and one to
the command's wait count; an already complete event adds no link. When the count reaches zero the
command is ready and its driver is told. Completion notifies every command on the notify list
through their drivers (the default broadcast).
"""
import threading
import time

from pyplat import cl

QUEUED, SUBMITTED, RUNNING, COMPLETE = cl.CL_QUEUED, cl.CL_SUBMITTED, cl.CL_RUNNING, cl.CL_COMPLETE


def now_ns():
    return time.monotonic_ns()


class Command:
    """One node of the graph. ``action`` runs on the device (None for markers and user events).

    ``status`` follows the spec: QUEUED → SUBMITTED → RUNNING → COMPLETE, or a negative error.
    Observers (the core Event) hear of each status change through ``on_status``.
    """
    __slots__ = ("action", "driver", "status", "wait_count", "notify_list", "failed_dependency",
                 "times", "on_status", "_lock", "_done", "name")

    def __init__(self, action, driver, on_status=None, name=""):
        self.action = action
        self.driver = driver
        self.status = QUEUED
        self.wait_count = 1          # held by enqueue until linking is finished
        self.notify_list = []
        self.failed_dependency = False
        self.times = [now_ns(), 0, 0, 0, 0]   # queued, submit, start, end, complete
        self.on_status = on_status
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)
        self.name = name

    # --- linking -------------------------------------------------------------------------
    def add_dependency(self, other):
        """Make this command wait for `other`; nothing to do if it already finished."""
        with other._lock:
            if other.status > COMPLETE:
                other.notify_list.append(self)
                with self._lock:
                    self.wait_count += 1
                return
            failed = other.status < 0
        if failed:
            self.failed_dependency = True

    def commit(self):
        """Linking done: drop enqueue's hold, and hand the command to its driver."""
        self.set_status(SUBMITTED)
        self.driver.submit(self)
        self.dependency_done(None)

    # --- progress --------------------------------------------------------------------------
    def dependency_done(self, event):
        with self._lock:
            if event is not None and event.status < 0:
                self.failed_dependency = True
            self.wait_count -= 1
            ready = self.wait_count == 0
        if ready:
            self.driver.ready(self)

    def set_status(self, status):
        index = {SUBMITTED: 1, RUNNING: 2, COMPLETE: 3}.get(status)
        if index:
            self.times[index] = now_ns()
        notify = []
        with self._lock:
            if self.status <= COMPLETE:
                return          # already finished (complete or failed): status never changes again
            self.status = status
            if status <= COMPLETE:
                self.times[4] = now_ns()
                notify, self.notify_list = self.notify_list, []
                self._done.notify_all()
        if self.on_status is not None:
            self.on_status(self, status)
        for waiter in notify:              # default broadcast: tell every waiting command's driver
            waiter.driver.notify(waiter, self)

    def execute(self):
        """Run on a driver's thread once ready."""
        if self.failed_dependency:
            self.set_status(cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
            return
        self.set_status(RUNNING)
        status = COMPLETE
        if self.action is not None:
            try:
                result = self.action()
                if isinstance(result, int) and result < 0:
                    status = result
            except Exception as e:                      # a failing command fails its event
                import sys, traceback
                sys.stderr.write(f"pyplat: command {self.name} failed: {e}\n{traceback.format_exc()}")
                status = cl.CL_OUT_OF_RESOURCES
        self.set_status(status)

    def wait(self):
        """Block until finished (releases the GIL while sleeping). Returns the final status."""
        with self._lock:
            while self.status > COMPLETE:
                self._done.wait()
            return self.status

    @property
    def finished(self):
        return self.status <= COMPLETE
