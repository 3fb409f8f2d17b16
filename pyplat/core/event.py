"""Events: the user-visible face of a command in the runtime's graph.

The command itself (status, links, profiling times, C callbacks) lives in the native runtime
(pyplat/runtime/_sched.pyx); an Event adds the OpenCL object around it: reference count, context,
queue and command type. Dropping the last reference to an Event never affects its command.
"""
from pyplat import cl
from pyplat.core.object import RefCounted
from pyplat.runtime.graph import KIND_USER, Command


class Event(RefCounted):
    """An event of a command (``queue`` set) or a user event (``queue`` None)."""

    def __init__(self, context, queue, command_type, command):
        super().__init__()
        self.context = context.retain()
        self.queue = queue
        self.command_type = command_type
        self.command = command

    @property
    def status(self):
        return self.command.status

    def add_c_callback(self, trigger, fn, user_data, handle):
        """A C callback fn(handle, status, user_data), called once (natively, without the GIL)
        when the command reaches `trigger` or a later status; a failure reaches every status."""
        self.command.add_callback(trigger, fn, user_data, handle)

    def on_finish(self, fn):
        """Python clean-up once the command has finished (at once if it has)."""
        self.command.add_hook(fn)

    def wait(self):
        return self.command.wait()

    def destroy(self):
        self.context.release()


class UserEvent(Event):
    """clCreateUserEvent: starts CL_SUBMITTED; the host sets its status once."""

    def __init__(self, context, command=None):
        """`command`: the K_USER command of a user event the API layer made natively (adopted)."""
        if command is None:
            command = Command(KIND_USER, None, name="user event")
        super().__init__(context, None, cl.CL_COMMAND_USER, command)
        self.status_set = False

    def set_status(self, status):
        self.status_set = True
        self.command.set_status(status)
