"""Contexts: a set of devices and the callbacks the application attached to them."""
import sys
import threading

from pyplat.core.object import RefCounted
from pyplat.runtime.faults import keep_fault_guard_first


class Context(RefCounted):
    native_key = 0          # a context the API layer made natively: the key its objects were
    native_record = None    # matched by before this object existed, and the record keeping it
    """A context over `devices` (core Device objects, retained for the context's lifetime).

    `properties` is the raw property list as the application gave it (terminating 0 included;
    empty when none was given). `notify` is a Python callable (message, private_info bytes) built
    by the API layer around the application's pfn_notify, or None.
    """

    def __init__(self, platform, devices, properties=(), notify=None, interop_user_sync=False):
        super().__init__()
        self.platform = platform
        self.devices = list(devices)
        self.properties = list(properties)
        self.interop_user_sync = interop_user_sync
        self._notify = notify
        self._destructor_callbacks = []
        self._callback_lock = threading.Lock()
        for device in self.devices:
            device.retain()
        # Other platforms loaded next to ours (their LLVM) may have installed signal handlers.
        keep_fault_guard_first()

    @property
    def num_devices(self):
        return len(self.devices)

    # No caller inside pyplat yet: kept on purpose for the tools issue (issue 16), whose error
    # reporting goes through it; tests/api/test_context.py holds its contract.
    def notify_error(self, message, private_info=b""):
        """Report an error to the application's pfn_notify (if any). Never raises."""
        if self._notify is None:
            return
        try:
            self._notify(message, private_info)
        except Exception as e:  # an error in reporting an error must not take the caller down
            sys.stderr.write(f"pyplat: context notify callback failed: {e}\n")

    def add_destructor_callback(self, callback):
        """callback() runs when the context is destroyed; the last added runs first."""
        with self._callback_lock:
            self._destructor_callbacks.append(callback)

    def destroy(self):
        with self._callback_lock:
            callbacks, self._destructor_callbacks = self._destructor_callbacks, []
        for callback in reversed(callbacks):
            try:
                callback()
            except Exception as e:
                sys.stderr.write(f"pyplat: context destructor callback failed: {e}\n")
        for device in self.devices:
            device.release()

    def __repr__(self):
        return f"<Context {len(self.devices)} device(s), refcount {self.reference_count}>"
