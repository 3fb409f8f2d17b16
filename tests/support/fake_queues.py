"""Queues made below the API (pyplat.core.queue.CommandQueue on a fake context and device whose
driver is the one under test), and a Recorder of when each command's action ran: the runtime's
own tests, without contexts, buffers or kernels."""
import itertools
import threading

from pyplat.core.queue import CommandQueue


class FakeContext:
    devices = ()

    def retain(self):
        return self

    def release(self):
        return False


class FakeDevice:
    """A device for queues made below the API: its driver is the one under test."""
    def __init__(self, driver):
        self.driver = driver


class Recorder:
    def __init__(self):
        self.clock = itertools.count()
        self.lock = threading.Lock()
        self.runs = {}

    def action(self, index):
        def run():
            with self.lock:
                start = next(self.clock)
            with self.lock:
                end = next(self.clock)
                self.runs.setdefault(index, []).append((start, end))
        return run


def make_queue(props, driver, monkeypatch, auto="1"):
    monkeypatch.setenv("PYPLAT_INORDER_PARALLEL", auto)
    return CommandQueue(FakeContext(), FakeDevice(driver), props, [])
