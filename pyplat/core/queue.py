"""Command queues: order commands (in-order or out-of-order) through the event graph.

Ordering is expressed as dependencies only, so drivers see one model:
- out-of-order: a command waits for its wait list and the last barrier; a barrier (or a marker
  with an empty wait list) waits for every command since the previous barrier;
- in-order, automatically parallelised (default): each memory object keeps a synchronisation
  point -- its last writer and the readers since -- and a command waits only for the points it
  conflicts with (a writer for the writer and the readers, a reader for the writer). Whether a
  kernel writes an argument comes from the compiler (KernelInfo.args[i].written). Host memory of
  read/write transfers is one more object (HOST), printf output another (STDOUT: written by every
  kernel that may call printf). A command whose accesses are not known (markers, barriers, native
  kernels, ...) is a barrier. The program sees in-order semantics; a profiling queue is serial
  (its timestamps would show the overlaps);
- in-order, serial (PYPLAT_INORDER_PARALLEL=0): each command waits for the one before it.
"""
import os
import threading

from pyplat import cl
from pyplat.core.event import Event
from pyplat.core.object import RefCounted
from pyplat.runtime.driver import default_driver
from pyplat.runtime.graph import Command, QueueTracker

HOST = "host memory"          # the pseudo memory object of host pointers
STDOUT = "printf output"      # written by every kernel that may call printf


def _root(buffer):
    while getattr(buffer, "parent", None) is not None:
        buffer = buffer.parent
    return buffer


class _Release:
    """One clean-up hook releasing every object a command kept alive (last retained first)."""
    __slots__ = ("objects",)

    def __init__(self, objects):
        self.objects = tuple(objects)

    def __call__(self):
        failure = None
        for obj in reversed(self.objects):
            try:
                obj.release()
            except BaseException as e:        # release the others all the same
                failure = e
        if failure is not None:
            raise failure


class CommandQueue(RefCounted):

    def __init__(self, context, device, properties, property_list):
        super().__init__()
        self.context = context.retain()
        self.device = device
        self.properties = properties
        self.property_list = property_list
        self.out_of_order = bool(properties & cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        self.profiling = bool(properties & cl.CL_QUEUE_PROFILING_ENABLE)
        # (profiling timestamps would show commands overlapping: a profiling queue is serial)
        self.auto_parallel = (not self.out_of_order and not self.profiling
                              and os.environ.get("PYPLAT_INORDER_PARALLEL", "1") != "0")
        self.driver = default_driver()
        self.tracker = QueueTracker()
        self._last = None             # serial in-order: the latest command
        self._barrier = None          # the latest barrier
        self._since = []              # commands since the latest barrier (finished ones pruned)
        self._prune_at = 64
        self._sync = {}               # memory object -> [last writer, [readers since]]
        self._lock = threading.Lock()

    def new_command(self, name=""):
        return Command(0, self.driver, name)

    def enqueue(self, command_type, command, wait_events=(), retain=(), barrier=False, accesses=None):
        """Add a command (payload set); returns its Event (owned by the caller: one reference).

        `retain` lists objects kept alive until it finishes. `accesses`: (memory object, writes)
        pairs, or None when unknown. A barrier (or a marker with an empty wait list) waits for
        every earlier command of the queue.
        """
        event = Event(self.context, self, command_type, command)
        for dependency in wait_events:
            command.add_dependency(dependency.command)
        if retain:
            for obj in retain:
                obj.retain()
            command.add_hook(_Release(retain))
        with self._lock:
            if self.out_of_order:
                self._order_out_of_order(command, barrier)
            elif self.auto_parallel:
                self._order_auto(command, None if barrier else accesses)
            else:
                if self._last is not None:
                    command.add_dependency(self._last)
                self._last = command
            command.attach(self.tracker)
        command.commit()
        return event

    def _prune(self, items):
        if len(items) > self._prune_at:
            items[:] = [c for c in items if not c.finished]
            self._prune_at = max(64, 2 * len(items))

    def _become_barrier(self, command):
        for other in self._since:
            command.add_dependency(other)
        if self._barrier is not None:
            command.add_dependency(self._barrier)
        self._barrier = command
        self._since = []
        self._sync.clear()

    def _order_out_of_order(self, command, barrier):
        if barrier:
            self._become_barrier(command)
            return
        if self._barrier is not None:
            command.add_dependency(self._barrier)
        self._since.append(command)
        self._prune(self._since)

    def _order_auto(self, command, accesses):
        if accesses is None:
            self._become_barrier(command)
            return
        if self._barrier is not None:
            command.add_dependency(self._barrier)
        merged = {}
        for obj, writes in accesses:
            key = obj if obj is HOST else _root(obj)
            merged[key] = merged.get(key, False) or bool(writes)
        for key, writes in merged.items():
            point = self._sync.get(key)
            if writes:
                if point is not None:
                    if point[0] is not None:
                        command.add_dependency(point[0])
                    for reader in point[1]:
                        command.add_dependency(reader)
                self._sync[key] = [command, []]
            else:
                if point is None:
                    point = self._sync[key] = [None, []]
                elif point[0] is not None:
                    command.add_dependency(point[0])
                point[1].append(command)
                n = len(point[1])
                if n >= 64 and n & (n - 1) == 0:        # amortised: at powers of two
                    point[1][:] = [c for c in point[1] if not c.finished]
        self._since.append(command)
        self._prune(self._since)

    def flush(self):
        self.driver.flush()

    def finish(self):
        self.tracker.join()

    def destroy(self):
        self.finish()
        self.context.release()
