"""A GPU fault fails commands, not the program (pyplat/devices/cuda/faults.py), checked without a
GPU: the CUDA driver API is replaced by a stand-in whose calls succeed, and actions raise the
errors a real driver returns (the device machine runs the same paths on an H100:
docs/devices.md, "Faults")."""
import pytest

from pyplat import cl
from pyplat.devices.cuda import driver_api as cu
from pyplat.devices.cuda import faults


class StandInDriver:
    """Every driver call the context and space make at creation succeeds."""

    def __getattr__(self, name):
        return lambda *args: cu.CUDA_SUCCESS


@pytest.fixture
def gpu(monkeypatch):
    monkeypatch.setattr(cu, "_lib", StandInDriver())
    monkeypatch.setattr(cu, "_tried", True)
    from pyplat.devices.cuda import PrimaryContext
    from pyplat.devices.cuda.memory import CudaSpace
    context = PrimaryContext(0)
    return context, CudaSpace(0, context)


def test_a_fault_fails_its_command_marks_the_gpu_broken_and_loses_its_memory(gpu, capsys):
    context, space = gpu
    lost = []
    space.loss_listeners.append(lambda s, reason: lost.append((s, reason)))

    def faulting_kernel():
        raise cu.CudaError(700, "kernel wild")
    assert faults.contained(context, "kernel wild", faulting_kernel)() == cl.CL_OUT_OF_RESOURCES
    assert context.broken and "kernel wild" in context.broken
    assert lost == [(space, context.broken)]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "kernel wild failed on GPU 0" in err

    ran = []
    later = faults.contained(context, "kernel add", lambda: ran.append(1))
    assert later() == cl.CL_OUT_OF_RESOURCES and ran == []        # CUDA is not touched again
    assert "kernel add not run" in capsys.readouterr().err
    assert context.mark_broken("again") is False and len(lost) == 1  # told once


def test_other_cuda_errors_fail_only_their_own_command(gpu, capsys):
    context, space = gpu

    def too_big():
        raise cu.CudaError(faults.CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc")
    assert faults.contained(context, "transfer", too_big)() == cl.CL_MEM_OBJECT_ALLOCATION_FAILURE
    assert context.broken is None
    assert faults.contained(context, "kernel add", lambda: 1234)() == 1234   # device time, ns
    capsys.readouterr()


def test_the_stream_drivers_fault_hook_does_what_contained_does(gpu, capsys):
    """A launch of the GPU's stream driver (runtime/sched/stream_driver.pxi) that meets a fault
    fails the same way as an action that does (faults.hook, faults.failed: one rule)."""
    context, space = gpu
    fault = faults.hook(context)
    assert fault("kernel big", faults.CUDA_ERROR_OUT_OF_MEMORY) == cl.CL_MEM_OBJECT_ALLOCATION_FAILURE
    assert context.broken is None
    assert fault("kernel wild", 700) == cl.CL_OUT_OF_RESOURCES
    assert context.broken and "kernel wild" in context.broken
    err = capsys.readouterr().err
    assert "kernel big failed on GPU 0" in err and "kernel wild failed on GPU 0" in err
