"""Registration of entry points: ``@entry`` marks a function as the implementation of the
OpenCL function of the same name. Arguments arrive as in C: integers for values, and integer
addresses (0 for NULL) for pointers and handles."""
import importlib

IMPLEMENTED = {}

# The API modules, one per area of the spec; importing them registers their entry points.
MODULES = ("platform", "device", "context", "memory", "queue", "event", "program", "kernel",
           "enqueue", "optional")


def entry(fn):
    IMPLEMENTED[fn.__name__] = fn
    return fn


def load_all():
    for name in MODULES:
        try:
            importlib.import_module(f"pyplat.api.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"pyplat.api.{name}":
                raise
