"""Reference counting shared by every OpenCL object."""
import threading

from pyplat import log


class RefCounted:
    """An object with the spec's retain/release semantics.

    The count starts at 1 (the creator's reference). Objects that keep others alive (a queue its
    context, a kernel its program, a pending command its buffers) call ``retain`` on them and
    ``release`` in their own ``destroy``. Listeners (the API layer's handle registry) hear of
    every destruction. The API layer may count the application's references itself and hold
    one reference here for all of them (pyplat/api/native_refs.pxi).
    """
    destroy_listeners = []
    _armed = None          # {id: launch plan} armed on this object (arm_plan below)

    def __init__(self):
        self._refcount = 1
        self._ref_lock = threading.Lock()

    @property
    def reference_count(self):
        """Its references, one more for each armed launch plan with launches pending (they hold
        it as a plan's hold would, without retaining it: arm_plan)."""
        count = self._refcount
        if self._armed:
            count += sum(1 for plan in list(self._armed.values()) if plan.armed_pending)
        return count

    def retain(self):
        with self._ref_lock:
            self._refcount += 1
            count = self._refcount
        if log.on("refcounts"):
            log.say("refcounts", f"{type(self).__name__} {id(self):#x} retained: {count}")
        return self

    @staticmethod
    def retain_all(objects):
        """retain() each of `objects`, asking once whether PYPLAT_DEBUG logs reference counts
        (log.on reads the environment: ~1.4 µs a question; a launch plan's hold retains its
        program and buffers on a kernel object's first launch)."""
        if log.on("refcounts"):
            for obj in objects:
                obj.retain()
            return
        for obj in objects:
            if type(obj).retain is RefCounted.retain:
                with obj._ref_lock:
                    obj._refcount += 1
            else:
                obj.retain()

    def release(self):
        while True:
            if self._armed and self._refcount == 1:
                # the last reference: plans armed on it launch no more without retaining it,
                # and those with launches pending retain it now (it goes when they finished)
                for plan in list(self._armed.values()):
                    disarm_plan(plan)
            with self._ref_lock:
                if self._armed and self._refcount == 1:
                    continue              # (another thread's release came between: again)
                self._refcount -= 1
                count = self._refcount
                last = count == 0
                break
        if log.on("refcounts"):
            log.say("refcounts", f"{type(self).__name__} {id(self):#x} released: {count}"
                                 + (", destroyed" if last else ""))
        if last:
            self.destroy()
            for listener in RefCounted.destroy_listeners:
                listener(self)
        return last

    def destroy(self):
        """Called once when the last reference goes; release what this object holds."""


def arm_plan(plan):
    """Let a kernel's launch plan (runtime LaunchPlan) start launches natively without taking its
    hold, whose references would cost a Python call on the kernel object's first launch: its
    objects (plan.retained: the program, the buffers; the plan keeps them alive) count its
    pending launches in reference_count instead, and the last release of one disarms it first.
    The kernel disarms it when it drops the plan."""
    for obj in plan.retained.objects:
        if obj._armed is None:
            obj._armed = {}
        obj._armed[id(plan)] = plan
    plan.arm()


def disarm_plan(plan):
    """Undo arm_plan: launches take the plan's hold again, and those pending get its references."""
    plan.disarm()
    for obj in plan.retained.objects:
        if obj._armed:
            obj._armed.pop(id(plan), None)
