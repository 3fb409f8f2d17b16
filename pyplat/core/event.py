"""Events: the user-visible face of a command in the runtime's graph."""
import threading

from pyplat import cl
from pyplat.core.object import RefCounted
from pyplat.runtime.graph import COMPLETE, SUBMITTED, Command


class Event(RefCounted):
    """An event of a command (``queue`` set) or a user event (``queue`` None).

    Callbacks registered for a status are called exactly once, when the command reaches that
    status or a later one (a failure counts as reaching every status), with the status reached.
    """

    def __init__(self, context, queue, command_type, command):
        super().__init__()
        self.context = context.retain()
        self.queue = queue
        self.command_type = command_type
        self.command = command
        self._callbacks = []          # [trigger status, fn, called]
        self._cb_lock = threading.Lock()
        self._on_finish = []          # runtime hooks: release what the command held
        command.on_status = self._status_changed

    @property
    def status(self):
        return self.command.status

    def add_callback(self, trigger, fn):
        with self._cb_lock:
            self._callbacks.append([trigger, fn, False])
        self._fire(self.command.status)

    def on_finish(self, fn):
        self._on_finish.append(fn)

    def _fire(self, status):
        due = []
        with self._cb_lock:
            for cb in self._callbacks:
                if not cb[2] and (status < 0 or status <= cb[0]):
                    cb[2] = True
                    due.append(cb[1])
        for fn in due:
            fn(status)

    def _status_changed(self, command, status):
        self._fire(status)
        if status <= COMPLETE:
            hooks, self._on_finish = self._on_finish, []
            for fn in reversed(hooks):
                fn()

    def wait(self):
        return self.command.wait()

    def destroy(self):
        self.context.release()


class UserEvent(Event):
    """clCreateUserEvent: starts CL_SUBMITTED; the host sets its status once."""

    def __init__(self, context):
        command = Command(None, None, name="user event")
        command.status = SUBMITTED
        super().__init__(context, None, cl.CL_COMMAND_USER, command)
        self.status_set = False

    def set_status(self, status):
        self.status_set = True
        self.command.set_status(status)
