"""Reference counting shared by every OpenCL object."""
import threading

from pyplat import log


class RefCounted:
    """An object with the spec's retain/release semantics.

    The count starts at 1 (the creator's reference). Objects that keep others alive (a queue its
    context, a kernel its program, a pending command its buffers) call ``retain`` on them and
    ``release`` in their own ``destroy``. Listeners (the API layer's handle registry) hear of
    every destruction.
    """
    destroy_listeners = []

    def __init__(self):
        self._refcount = 1
        self._ref_lock = threading.Lock()

    @property
    def reference_count(self):
        return self._refcount

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
        with self._ref_lock:
            self._refcount -= 1
            count = self._refcount
            last = count == 0
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
