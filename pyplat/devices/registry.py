"""The device classes PyPlat knows: one line each (docs/devices.md, "Adding a device class").

A device class is an object with: `name`; `count()`, how many devices of it the machine has (0:
none, and no error); `describe(index)`, its devices' info as plain attributes; `driver()`, the
runtime driver its queues use; `memory_space(index)`, where its buffers live
(devices/spaces.py); `compiler_target(index)`, the target object pyplat.compiler builds its
programs for (compiler/targets/: the host's, or one of the GPU's architecture). A class whose
target runs code of its own (`runs_own_code`) also has `launch_command(index, build result,
kernel info, argument values, work_dim, global size, local size, offset)`: the launch as a
runtime Command of one of its drivers, payload set, which the core links and commits (its
profiled span: the device's time for it, where the driver knows it). Optional: `unavailable(index)`, why a device cannot be used any more
(None while it can)."""
import importlib

DEVICE_CLASSES = {
    "cpu": ("pyplat.devices.cpu", "CPU"),
    "cpu-separate": ("pyplat.devices.cpu_separate", "CPUSeparate"),
    "cuda": ("pyplat.devices.cuda", "CUDA"),
}

_made = {}


def device_class(name):
    """The (one) object of device class `name`; KeyError if there is no such class."""
    if name not in _made:
        module, attribute = DEVICE_CLASSES[name]
        _made[name] = getattr(importlib.import_module(module), attribute)()
    return _made[name]


def devices_for(names):
    """[(device class, index within its class)] for PYPLAT_DEVICES' list of class names, in
    order; names that are not classes are left out with one line on stderr."""
    import sys
    found, seen = [], {}
    for name in names:
        if name not in DEVICE_CLASSES:
            sys.stderr.write(f"pyplat: PYPLAT_DEVICES names '{name}', which is not a device class "
                             f"({', '.join(DEVICE_CLASSES)}); left out\n")
            continue
        cls = device_class(name)
        for _ in range(cls.count()):
            index = seen.get(name, 0)
            seen[name] = index + 1
            found.append((cls, index))
    return found
