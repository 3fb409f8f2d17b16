"""The stream driver (pyplat/runtime/sched/stream_driver.pxi) on stand-in device functions with
the CUDA driver API's conventions, so that it is tested where there is no GPU: launches reach
the device in dependency order with their parameters, complete in launch order with the
device's time as their profiled span, and a failed launch or wait fails its command with the
status the fault hook gives, while later commands carry on."""
import ctypes
import threading
import time

import pytest

from pyplat.runtime.graph import (ORDER_SERIAL, STREAM_FUNCTIONS, Command, QueueCore, QueueTracker, stream_driver,
                                  stream_launch)

I, U, VP = ctypes.c_int, ctypes.c_uint, ctypes.c_void_p
PROTOTYPES = {
    "cuCtxSetCurrent": ctypes.CFUNCTYPE(I, VP),
    "cuLaunchKernel": ctypes.CFUNCTYPE(I, VP, U, U, U, U, U, U, U, VP, ctypes.POINTER(VP), ctypes.POINTER(VP)),
    "cuEventCreate": ctypes.CFUNCTYPE(I, ctypes.POINTER(VP), U),
    "cuEventRecord": ctypes.CFUNCTYPE(I, VP, VP),
    "cuEventSynchronize": ctypes.CFUNCTYPE(I, VP),
    "cuEventElapsedTime": ctypes.CFUNCTYPE(I, ctypes.POINTER(ctypes.c_float), VP, VP),
}
DEVICE_MS = 0.25                          # every launch "takes" this long on the stand-in


class StandIn:
    """A device that records launches; each end event is 'done' once waited for, unless the
    launch is told to fail (fail_launch) or to fault when waited for (fault_wait)."""

    def __init__(self):
        self.launches, self.events, self.lock = [], 0, threading.Lock()
        self.fail_launch, self.fault_wait, self.ends = set(), set(), {}
        self.keep = [PROTOTYPES[name](getattr(self, name)) for name in STREAM_FUNCTIONS]

    def addresses(self):
        return [ctypes.cast(f, VP).value for f in self.keep]

    def cuCtxSetCurrent(self, context):
        return 0

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        if fn in self.fail_launch:
            return 1                             # CUDA_ERROR_INVALID_VALUE
        first = ctypes.cast(params[0], ctypes.POINTER(ctypes.c_uint32))[0]
        second = ctypes.cast(params[1], ctypes.POINTER(ctypes.c_uint64))[0]
        with self.lock:
            self.launches.append((fn, (gx, gy, gz), (bx, by, bz), shared, first, second))
            self.last_fn = fn
        return 0

    def cuEventCreate(self, out, flags):
        with self.lock:
            self.events += 1
            out[0] = self.events
        return 0

    def cuEventRecord(self, event, stream):
        self.ends[event] = getattr(self, "last_fn", None)
        return 0

    def cuEventSynchronize(self, event):
        time.sleep(0.001)
        if getattr(self, "pause", None) is not None:
            self.pause.wait(10)
        return 700 if self.ends.get(event) in self.fault_wait else 0

    def cuEventElapsedTime(self, ms, start, end):
        ms[0] = DEVICE_MS
        return 0


_KEPT = []                                # a driver's thread lives as long as the process: so do
                                          # the functions it was given


@pytest.fixture
def device():
    stand_in = StandIn()
    _KEPT.append(stand_in)
    faults = []

    def fault_hook(name, code):
        faults.append((name, code))
        return -5                                # CL_OUT_OF_RESOURCES
    driver = stream_driver(stand_in.addresses(), 1, 2, fault_hook)
    return stand_in, driver, faults


def launch(driver, fn, first, second, after=()):
    cmd = stream_launch(driver, fn, (4, 2, 1), (32, 1, 1), 256,
                        [first.to_bytes(4, "little"), second.to_bytes(8, "little")], f"k{fn}")
    for other in after:
        cmd.add_dependency(other)
    cmd.commit()
    return cmd


def test_launches_run_in_order_with_their_parameters_and_the_devices_time(device):
    stand_in, driver, faults = device
    gate = Command(7, None, "")              # a user event (K_USER) holding the chain back
    first = launch(driver, 11, 1, 2 ** 40, after=[gate])
    chain = [first]
    for i in range(2, 6):
        chain.append(launch(driver, 10 + i, i, i, after=[chain[-1]]))
    assert stand_in.launches == []           # nothing runs before its dependencies
    gate.set_status(0)
    for cmd in chain:
        assert cmd.wait() == 0
    assert [entry[0] for entry in stand_in.launches] == [11, 12, 13, 14, 15]
    assert stand_in.launches[0] == (11, (4, 2, 1), (32, 1, 1), 256, 1, 2 ** 40)
    for cmd in chain:
        queued, submitted, start, end = cmd.times[:4]
        assert end - start == pytest.approx(DEVICE_MS * 1e6, rel=0.01)   # the device's span
    assert faults == []


def test_a_failed_launch_or_wait_fails_its_command_and_others_carry_on(device):
    stand_in, driver, faults = device
    stand_in.fail_launch.add(21)
    stand_in.fault_wait.add(22)
    commands = [launch(driver, fn, 0, 0) for fn in (20, 21, 22, 23)]
    statuses = [cmd.wait() for cmd in commands]
    assert statuses == [0, -5, -5, 0]
    assert sorted(faults) == [("k21", 1), ("k22", 700)]


def test_a_failed_dependency_fails_the_launch_without_running_it(device):
    stand_in, driver, faults = device
    gate = Command(7, None, "")
    cmd = launch(driver, 30, 0, 0, after=[gate])
    gate.set_status(-5)
    assert cmd.wait() < 0 and stand_in.launches == []


def test_an_in_order_queues_launches_go_on_the_stream_ahead_of_time(device):
    """A launch whose one link is the queue's order after a launch already on the stream is put
    on the stream at commit (the stream keeps the order: the GPU runs them back to back), one
    with a wait list only once ready; all complete in order."""
    stand_in, driver, faults = device
    queue = QueueCore(driver, QueueTracker(), ORDER_SERIAL)
    gate = Command(7, None, "")
    first = stream_launch(driver, 41, (1, 1, 1), (1, 1, 1), 0, [b"\0" * 4, b"\0" * 8], "k41")
    first.add_dependency(gate)               # a wait list: not ahead of time
    queue.order(first, False, None)
    queue.submit(first)
    chain = [first]
    for fn in (42, 43, 44):
        cmd = stream_launch(driver, fn, (1, 1, 1), (1, 1, 1), 0, [b"\0" * 4, b"\0" * 8], f"k{fn}")
        queue.order(cmd, False, None)
        queue.submit(cmd)
        chain.append(cmd)
    assert stand_in.launches == []           # the first waits for its gate, so all wait
    gate.set_status(0)
    for cmd in chain:
        assert cmd.wait() == 0
    assert [entry[0] for entry in stand_in.launches] == [41, 42, 43, 44]
    # the gate open, a launch after one still on the stream goes there at once
    slow = stream_launch(driver, 45, (1, 1, 1), (1, 1, 1), 0, [b"\0" * 4, b"\0" * 8], "k45")
    queue.order(slow, False, None)
    stand_in.pause = threading.Event()       # the stand-in's waits hold until released
    queue.submit(slow)
    behind = stream_launch(driver, 46, (1, 1, 1), (1, 1, 1), 0, [b"\0" * 4, b"\0" * 8], "k46")
    queue.order(behind, False, None)
    queue.submit(behind)
    assert [entry[0] for entry in stand_in.launches][-2:] == [45, 46]   # before 45 finished
    stand_in.pause.set()
    assert slow.wait() == 0 and behind.wait() == 0
    assert faults == []
