"""PYPLAT_DEBUG: what PyPlat says on stderr about what it does, by category (docs/tools.md).

Categories, as PoCL's POCL_DEBUG names them: `err` (every error an entry point returns: its name,
the code by name and the reason), `warn`, `build` (each program build: target, time, cache hit
or not), `cache` (the compiled-program cache: hits, misses, stores), `memory` (transfers between
memory spaces), `events` (each command queued, and how it ended, by the native entries as by the Python
ones), `refcounts` (every retain and
release of an object), and `all`. Off by default. Each place that logs asks `on(category)` first:
the categories are read from the environment once (and again after config.reload()), so a check
is one set lookup, and nothing is formatted when the category is off. Like config, this module imports nothing of PyPlat's layers: all of them use it.
"""
import sys
import threading

from pyplat import config

_write = threading.Lock()
_categories = None                 # PYPLAT_DEBUG's value, once read


def on(category):
    """Whether PYPLAT_DEBUG asks for `category`."""
    categories = _categories
    if categories is None:
        categories = _read()
    return category in categories


def _read():
    global _categories
    _categories = config.value("PYPLAT_DEBUG")
    return _categories


def _forget():
    global _categories
    _categories = None


config.on_reload(_forget)


def say(category, message):
    """One line on stderr, `pyplat[category]: message` (lines of several threads never mix)."""
    line = f"pyplat[{category}]: {message}\n"
    with _write:
        sys.stderr.write(line)
        sys.stderr.flush()
