"""PYPLAT_DEBUG: what PyPlat says on stderr about what it does, by category (docs/tools.md).

Categories, as PoCL's POCL_DEBUG names them: `err` (every error an entry point returns: its name,
the code by name and the reason), `warn`, `build` (each program build: target, time, cache hit
or not), `cache` (the compiled-program cache: hits, misses, stores), `memory` (transfers between
memory spaces), `events` (each command queued, and how it ended; the native fast path of kernel
launches is off while it is on, so that every launch is seen), `refcounts` (every retain and
release of an object), and `all`. Off by default. Each place that logs asks `on(category)` first, so a
category that is off costs one dictionary lookup and a comparison (config.value's), and nothing
is formatted. Like config, this module imports nothing of PyPlat's layers: all of them use it.
"""
import sys
import threading

from pyplat import config

_write = threading.Lock()


def on(category):
    """Whether PYPLAT_DEBUG asks for `category`."""
    return category in config.value("PYPLAT_DEBUG")


def say(category, message):
    """One line on stderr, `pyplat[category]: message` (lines of several threads never mix)."""
    line = f"pyplat[{category}]: {message}\n"
    with _write:
        sys.stderr.write(line)
        sys.stderr.flush()
