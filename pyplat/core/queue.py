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
These order links never pass a failure on; only a wait-list entry does (docs/runtime.md, "When a
command fails").
"""
import threading

from pyplat import cl, config, log
from pyplat.core import migration
from pyplat.core.event import Event
from pyplat.core.object import RefCounted
from pyplat.runtime.graph import (ORDER_AUTO, ORDER_OUT_OF_ORDER, ORDER_SERIAL, Command, QueueCore,
                                  QueueTracker, launch_kernel, set_hold_hooks)

HOST = "host memory"          # the pseudo memory object of host pointers
STDOUT = "printf output"      # written by every kernel that may call printf


def _root(buffer):
    while getattr(buffer, "parent", None) is not None:
        buffer = buffer.parent
    return buffer


class Retained:
    """Objects kept alive while commands use them (a command's, or a launch plan's while it
    holds): retain() takes a reference on each, release() drops them, last retained first."""
    __slots__ = ("objects",)

    def __init__(self, objects):
        self.objects = tuple(objects)

    def retain(self):
        """False, taking nothing, if one of them was destroyed already. (Plain loops: a
        kernel's first launch from C takes its plan's hold here.)"""
        objects = self.objects
        for obj in objects:
            if obj.reference_count <= 0:
                return False
        RefCounted.retain_all(objects)
        return True

    def release(self):
        failure = None
        for obj in reversed(self.objects):
            try:
                obj.release()
            except BaseException as e:        # release the others all the same
                failure = e
        if failure is not None:
            raise failure


# What the runtime's holds (a launch plan's while launches are pending, a queue's while the
# fast path's native events live) take and drop: a Retained's references.
set_hold_hooks(Retained.retain, Retained.release)


def order_key(obj):
    """The runtime's ordering key of a memory object or of HOST/STDOUT: an integer, one per root
    memory object (a buffer adopted from the native fast path keeps the key its native commands
    used: its `native_key`)."""
    if isinstance(obj, str):
        return id(obj)
    root = _root(obj)
    return getattr(root, "native_key", 0) or id(root)


def merged_accesses(accesses):
    """(memory object, writes) pairs -> ((order key, writes), ...) with one entry per key (a
    writer wins); None stays None (unknown accesses)."""
    if accesses is None:
        return None
    merged = {}
    for obj, writes in accesses:
        key = order_key(obj)
        merged[key] = merged.get(key, False) or bool(writes)
    return tuple(merged.items())


def order_mode(properties):
    """The runtime's ordering mode of a queue with these properties (CommandQueue's, and the
    API layer's for the queues it makes natively)."""
    if properties & cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE:
        return ORDER_OUT_OF_ORDER
    if not properties & cl.CL_QUEUE_PROFILING_ENABLE and config.value("PYPLAT_INORDER_PARALLEL"):
        return ORDER_AUTO
    return ORDER_SERIAL


class CommandQueue(RefCounted):

    def __init__(self, context, device, properties, property_list, core=None):
        """core: the QueueCore of a queue the API layer made natively, which this object adopts
        (its ordering state and pending commands kept); None: a new one."""
        super().__init__()
        self.context = context.retain()
        self.device = device
        self.properties = properties
        self.property_list = property_list
        self.out_of_order = bool(properties & cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        self.profiling = bool(properties & cl.CL_QUEUE_PROFILING_ENABLE)
        # (profiling timestamps would show commands overlapping: a profiling queue is serial)
        self.auto_parallel = (not self.out_of_order and not self.profiling
                              and config.value("PYPLAT_INORDER_PARALLEL"))
        self.driver = device.driver             # each device class brings its driver
        # Some device of the context has memory of its own: commands may need transfers first
        # (core/migration.py).
        self.moves_memory = migration.context_moves_memory(context)
        if core is not None:               # (its mode: the one it was made with)
            self.auto_parallel = core.mode == ORDER_AUTO
            self.tracker, self.core = core.tracker, core
            return
        mode = order_mode(properties)
        self.tracker = QueueTracker()
        # The ordering state, native and shared with the native fast path of kernel launches
        # (api/_native.pyx).
        self.core = QueueCore(self.driver, self.tracker, mode, self.context, self.device)

    def new_command(self, name=""):
        return Command(0, self.driver, name)

    def enqueue(self, command_type, command, wait_events=(), retain=(), barrier=False, accesses=None,
                after=()):
        """Add a command (payload set); returns its Event (owned by the caller: one reference).

        `retain` lists objects kept alive until it finishes. `accesses`: (memory object, writes)
        pairs, or None when unknown. A barrier (or a marker with an empty wait list) waits for
        every earlier command of the queue. `after`: runtime commands it waits for too (the
        transfers of core/migration.py).
        """
        event = Event(self.context, self, command_type, command)
        for dependency in wait_events:
            command.add_dependency(dependency.command)
        for dependency in after:
            command.add_dependency(dependency)
        if retain:
            kept = Retained(retain)
            kept.retain()
            command.add_hook(kept.release)
        self.core.order(command, barrier, merged_accesses(accesses))
        if log.on("events"):
            log_command(command, command_type, self.device.name, len(wait_events) + len(after))
        self.core.submit(command)
        return event

    def launch(self, plan, work_dim, global_size, local_size, offset, wait_events, after=()):
        """A kernel launch whose geometry the caller validated and gave to the plan
        (plan.remember_geometry); the same path as the native fast path. `after`: as in
        enqueue."""
        command = launch_kernel(self.core, plan, self.device, work_dim, global_size, local_size, offset,
                                [e.command for e in wait_events] + list(after))
        event = Event(self.context, self, cl.CL_COMMAND_NDRANGE_KERNEL, command)
        if log.on("events"):
            log_command(command, cl.CL_COMMAND_NDRANGE_KERNEL, self.device.name, len(wait_events) + len(after),
                        getattr(plan, "name", ""))
        return event

    def hold_native_events(self):
        """Let the fast path hand out native events of this queue (QueueCore.hold_events): they
        may outlive the program's references, so the context stays with them."""
        return self.core.hold_events(self, Retained([self.context]))

    def flush(self):
        self.driver.flush()

    def finish(self):
        self.tracker.join()

    def destroy(self):
        # "clReleaseCommandQueue performs an implicit flush"; "after the command-queue reference
        # count becomes zero and all commands queued to the command-queue have finished ..., the
        # command-queue is deleted": the release never waits (a command behind a user event not
        # set yet would block the releasing thread for good); the context goes once they finish.
        self.flush()
        if not self.tracker.pending:
            self.context.release()
            return
        threading.Thread(target=self._release_when_finished, name="pyplat-queue-release", daemon=True).start()

    def _release_when_finished(self):
        self.finish()
        self.context.release()


_COMMAND_NAMES = {}


def log_command(command, command_type, device_name, waits, what=""):
    """PYPLAT_DEBUG=events: a command enqueued (by the Python entries or the native ones:
    api/native_logging.pxi), then how it ended (a hook run when it has)."""
    if not _COMMAND_NAMES:
        _COMMAND_NAMES.update({v: k[len("CL_COMMAND_"):].lower() for k, v in vars(cl).items()
                               if k.startswith("CL_COMMAND_") and isinstance(v, int)})
    kind = _COMMAND_NAMES.get(command_type, str(command_type))
    name = f"{kind}{' ' + what if what else ''} #{command.address:x} on {device_name}"
    log.say("events", f"{name} queued, after {waits} wait-list or transfer events")
    command.add_hook(lambda: log.say("events", f"{name} ended: "
                                               f"{'complete' if command.status == 0 else 'error %d' % command.status}"))