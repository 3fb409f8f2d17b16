"""Every ``PYPLAT_*`` environment variable ("knob") in one table.

Each knob has a name, what it expects, a default, a one-line doc and who reads it: ``python``
(this package, through `value`), ``shim`` (the C library in icd/, which reads its own with
getenv because it runs before any Python exists; listed here so `pyplat config` and the docs
show them), ``example``, ``conformance`` or ``tools`` (programs of this repository).

Reading rules, the same for every knob:
- unset, or set to an empty string, means the default (except where a knob says otherwise);
- a value is parsed once: `value` keeps the parse of the text it last saw, and parses again
  only when the environment's text changed (tests set knobs per test);
- an invalid value never stops the platform (its host program must not crash): one line on
  stderr names the variable, the value and what is expected, and the default is used.
  `pyplat config` shows such values as invalid; `check` raises `ConfigError` for them.

Nothing here imports the rest of PyPlat: every layer (and discovery, which runs in processes
that never load the platform) may use it.
"""
import math
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional

READERS = ("python", "shim", "example", "conformance", "tools")


class ConfigError(ValueError):
    """A knob set to a value its parser does not accept."""

    def __init__(self, name, text, expected):
        super().__init__(f"{name}={text!r} is not {expected}")
        self.name, self.text, self.expected = name, text, expected


# --- Parsers: text -> value, ValueError when the text is not what the knob expects --------------

def _positive_int(text):
    n = int(text.strip())
    if n <= 0:
        raise ValueError(text)
    return n


def _microseconds(text):
    us = float(text.strip())
    if not math.isfinite(us) or us < 0:
        raise ValueError(text)
    return us


_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


def _switch(text):
    word = text.strip().lower()
    if word in _ON:
        return True
    if word in _OFF:
        return False
    raise ValueError(text)


def _shim_switch(text):
    # The shim's own rule (icd/shim.c): any value but empty or "0" turns it on.
    return text != "0"


class DeviceClassList(tuple):
    """Device class names; shown as PYPLAT_DEVICES is written."""

    def __str__(self):
        return ",".join(self)


def _device_classes(text):
    """'cpu,cpu-separate' -> ('cpu', 'cpu-separate'); a bare number n: n CPU devices. Names are
    checked against the registry when the platform is made (pyplat/devices/registry.py)."""
    text = text.strip()
    if text.isdigit():
        n = int(text)
        if n < 1:
            raise ValueError("is not a positive number of devices")
        return DeviceClassList(("cpu",) * n)
    names = DeviceClassList(part.strip().lower() for part in text.split(","))
    if not names or not all(names) or not all(n.replace("-", "").isalnum() for n in names):
        raise ValueError("is not a comma list of device classes (e.g. cpu,cpu-separate)")
    return names


DEBUG_CATEGORIES = ("err", "warn", "build", "cache", "memory", "events", "refcounts")


def _name_list(known, what):
    """A parser of comma lists of `known` names: 'a,b' -> frozenset({'a', 'b'}); 'all' -> every
    name; an unknown name is a ValueError saying it is not a `what`."""
    def parse(text):
        names = {part.strip().lower() for part in text.split(",") if part.strip()}
        if "all" in names:
            return frozenset(known)
        unknown = names - set(known)
        if unknown:
            raise ValueError(f"names {', '.join(sorted(unknown))}, not a {what}")
        return frozenset(names)
    return parse


_debug_categories = _name_list(DEBUG_CATEGORIES, "category")     # PYPLAT_DEBUG (pyplat/log.py)

CHECK_KINDS = ("bounds", "uninit", "races", "divzero")
_check_kinds = _name_list(CHECK_KINDS, "check")                  # PYPLAT_CHECK (docs/tools.md)


def _driver(text):
    name = text.strip().lower()
    aliases = {"pool": "pool", "worker": "pool", "threads": "pool", "basic": "basic"}
    if name not in aliases:
        raise ValueError(text)
    return aliases[name]


def _cache_dir(text):
    # None: no cache. An empty value disables it too (the compiler's rule since the cache began).
    return None if text.strip().lower() in ("", "off", "0", "none") else text


def _text(text):
    return text


def _default_cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pyplat")


def _one_per_core():
    return os.cpu_count() or 1


# --- The table ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Knob:
    name: str
    parse: Callable[[str], Any]
    expected: str        # what `parse` accepts, as the error message and the docs say it
    default: Any         # the value when unset or invalid; a callable computes it when read
    default_doc: str     # the default as the docs and messages say it
    doc: str
    reader: str          # one of READERS
    empty_is_unset: bool = True

    def default_value(self):
        return self.default() if callable(self.default) else self.default


KNOBS = {k.name: k for k in (
    Knob("PYPLAT_DEVICES", _device_classes, "device classes, comma-separated, or a number",
         DeviceClassList(("cpu", "cuda")), "cpu,cuda (cuda: where a GPU is found)",
         "the platform's devices: cpu (host memory, the worker pool), cpu-separate (CPU, memory of "
         "its own), cuda (NVIDIA GPUs, where the driver finds some); a number n: n cpu devices",
         "python"),
    Knob("PYPLAT_WORKERS", _positive_int, "a positive integer", _one_per_core, "one per core",
         "worker threads of the pool, also the devices' compute units", "python"),
    Knob("PYPLAT_DRIVER", _driver, "pool or basic", "pool", "pool",
         "basic: run commands on the thread that makes them ready, no worker threads",
         "python"),
    Knob("PYPLAT_IDLE_US", _microseconds, "a number of µs", 1000.0, "1000",
         "how long an idle worker polls before it sleeps; lower it on oversubscribed machines",
         "python"),
    Knob("PYPLAT_DEBUG", _debug_categories, "categories, comma-separated: "
         + ", ".join(DEBUG_CATEGORIES) + " or all", frozenset(), "none",
         "what PyPlat logs on stderr: err (every API error with its reason), warn, build, cache, "
         "memory (transfers), events (commands queued and ended), refcounts; all", "python"),
    Knob("PYPLAT_CHECK", _check_kinds, "checks, comma-separated: " + ", ".join(CHECK_KINDS)
         + " or all", frozenset(), "none",
         "checks compiled into kernels built from then on: bounds (every access through a "
         "__global, __constant or __local pointer within its object), uninit (reads of __local "
         "memory the group never wrote), races (on __local memory between barriers); a finding "
         "fails the command and names the kernel, work-item, source line and object", "python"),
    Knob("PYPLAT_TRACE", _cache_dir, "a file name, or off", None, "off",
         "write a timeline of API calls, commands, dependencies and workers to this file at exit "
         "(Chrome trace event JSON, for Perfetto; `pyplat trace FILE` summarises it)", "python",
         empty_is_unset=False),
    Knob("PYPLAT_POOL_STATS", _switch, "1 or 0", False, "0",
         "1: print per-worker counts of commands run and stolen at exit", "python"),
    Knob("PYPLAT_INORDER_PARALLEL", _switch, "1 or 0", True, "1",
         "0: in-order queues run their commands one after another (no automatic overlap)",
         "python"),
    Knob("PYPLAT_FAST_PATH", _switch, "1 or 0", True, "1",
         "0: no native fast path of hot entry points; every call through Python", "python"),
    Knob("PYPLAT_DIRECT_ENTRIES", _switch, "1 or 0", True, "1",
         "0: ctypes callbacks for every entry point (no direct Cython entries, no fast path)",
         "python"),
    Knob("PYPLAT_CACHE_DIR", _cache_dir, "a directory, or off", _default_cache_dir,
         "$XDG_CACHE_HOME/pyplat or ~/.cache/pyplat",
         "compiled-kernel cache; off (or empty) disables it", "python", empty_is_unset=False),
    Knob("PYPLAT_COMPILER_DEBUG", _switch, "1 or 0", False, "0",
         "1: compiler errors raise the Python exception instead of an internal-error build log",
         "python"),
    Knob("PYPLAT_LIBDEVICE", _text, "a path", None,
         "the nvidia-cuda-nvcc-cu12 wheel's, else $CUDA_HOME's, else /usr/local/cuda's",
         "NVIDIA's libdevice.10.bc for the NVPTX target's math builtins", "python"),
    Knob("PYPLAT_ICD_LIBRARY", _text, "a path", None, "the installed libpyplat-icd.so",
         "the ICD library pyplat.discovery and the test fixtures use", "python"),
    Knob("PYPLAT_ICD_DEBUG", _shim_switch, "any value but 0", False, "off",
         "the shim says on stderr what it loads (library, site-packages, libpython)", "shim"),
    Knob("PYPLAT_ICD_DISABLE", _shim_switch, "any value but 0", False, "off",
         "the shim reports no platforms, so loaders skip PyPlat", "shim"),
    Knob("PYPLAT_LIBPYTHON", _text, "a path", None, "the build's libpython",
         "the libpython the shim loads in C programs (tried first)", "shim"),
    Knob("PYPLAT_PLATFORM", _text, "part of a platform name", None, "the platform PyPlat",
         "the platform examples/vecadd.c (pyplat-vecadd) runs on", "example"),
    Knob("PYPLAT_CONFORMANCE_LIBOPENCL", _text, "a library name or path", "libOpenCL.so.1",
         "libOpenCL.so.1", "the OpenCL library the conformance subset loads", "conformance"),
    Knob("PYPLAT_SUITE_EVENTS", _text, "a path", None, "unset",
         "internal: tools/pyopencl_suite.py tells its pytest child where to write results",
         "tools"),
)}


# --- Reading ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Reading:
    """One knob as the environment has it now."""
    knob: Knob
    text: Optional[str]      # the environment's text, None when unset
    value: Any
    source: str              # "default", "environment" or "invalid"

    @property
    def error(self):
        if self.source != "invalid":
            return None
        return ConfigError(self.knob.name, self.text, self.knob.expected)


_readings = {}               # name -> Reading of the text last seen


def _read(knob, text):
    if text is None or (knob.empty_is_unset and not text.strip()):
        return Reading(knob, text, knob.default_value(), "default")
    try:
        return Reading(knob, text, knob.parse(text), "environment")
    except ValueError:
        return Reading(knob, text, knob.default_value(), "invalid")


def reading(name):
    """The knob's `Reading`, parsed once per text; an invalid text is reported on stderr the
    first time it is seen."""
    knob = KNOBS[name]
    text = os.environ.get(name)
    last = _readings.get(name)
    if last is not None and last.text == text:
        return last
    now = _read(knob, text)
    if now.error:
        sys.stderr.write(f"pyplat: {now.error}; using the default, {knob.default_doc}\n")
    _readings[name] = now
    return now


def value(name):
    """The knob's value (the default when unset or invalid)."""
    return reading(name).value


def check(name):
    """The knob's value, or ConfigError when the environment's text is invalid."""
    now = _read(KNOBS[name], os.environ.get(name))
    if now.error:
        raise now.error
    return now.value


_reload_hooks = []


def on_reload(fn):
    """Call fn() on every `reload` (modules that keep a knob's value at hand: pyplat/log.py)."""
    _reload_hooks.append(fn)


def reload():
    """Forget every parse (tests: the next read parses, and reports, afresh)."""
    _readings.clear()
    for fn in _reload_hooks:
        fn()


def describe():
    """Every knob's Reading, in table order, without reporting anything on stderr."""
    return [_read(knob, os.environ.get(name)) for name, knob in KNOBS.items()]
