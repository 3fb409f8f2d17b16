"""Command queues: order commands (in-order or out-of-order) through the event graph."""
import threading

from pyplat import cl
from pyplat.core.event import Event
from pyplat.core.object import RefCounted
from pyplat.runtime.driver import default_driver
from pyplat.runtime.graph import Command


class CommandQueue(RefCounted):
    """In an in-order queue each command waits for the one before it. In an out-of-order queue
    commands wait only for their wait lists and for the last barrier."""

    def __init__(self, context, device, properties, property_list):
        super().__init__()
        self.context = context.retain()
        self.device = device
        self.properties = properties
        self.property_list = property_list
        self.out_of_order = bool(properties & cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        self.profiling = bool(properties & cl.CL_QUEUE_PROFILING_ENABLE)
        self.driver = default_driver()
        self._last = None             # in-order: the latest command
        self._barrier = None          # out-of-order: the latest barrier
        self._pending = set()         # events of unfinished commands
        self._lock = threading.Lock()

    def enqueue(self, command_type, action, wait_events=(), retain=(), barrier=False, name=""):
        """Add a command; returns its Event (owned by the caller: one reference).

        `retain` lists objects the command keeps alive until it finishes. A barrier (or a marker
        with an empty wait list) waits for every earlier command of the queue.
        """
        command = Command(action, self.driver, name=name or hex(command_type))
        event = Event(self.context, self, command_type, command)
        for dependency in wait_events:
            command.add_dependency(dependency.command)
        for obj in retain:
            obj.retain()
            event.on_finish(obj.release)
        event.retain()                                     # the queue's reference until done
        event.on_finish(lambda: self._finished(event))
        with self._lock:
            if not self.out_of_order:
                if self._last is not None:
                    command.add_dependency(self._last)
                self._last = command
            else:
                if barrier:
                    for other in self._pending:
                        command.add_dependency(other.command)
                    self._barrier = command
                elif self._barrier is not None:
                    command.add_dependency(self._barrier)
            self._pending.add(event)
        command.commit()
        return event

    def _finished(self, event):
        with self._lock:
            self._pending.discard(event)
        event.release()

    def flush(self):
        self.driver.flush()

    def finish(self):
        with self._lock:
            pending = [e.command for e in self._pending]
        self.driver.join(pending)

    def destroy(self):
        self.finish()
        self.context.release()
