"""Reference counting shared by every OpenCL object."""
import threading


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
        return self

    def release(self):
        with self._ref_lock:
            self._refcount -= 1
            last = self._refcount == 0
        if last:
            self.destroy()
            for listener in RefCounted.destroy_listeners:
                listener(self)
        return last

    def destroy(self):
        """Called once when the last reference goes; release what this object holds."""
