"""The runtime is the bottom layer: nothing under pyplat/runtime imports or cimports pyplat.api or
pyplat.core (absolutely or relatively). Services it needs from above (taking and dropping the
references a hold keeps) are hooks those layers install at start-up."""
import re

import pytest

from support import REPO

RUNTIME = REPO / "pyplat" / "runtime"
SOURCES = sorted(p for pattern in ("*.py", "*.pyx", "*.pxi", "*.pxd") for p in RUNTIME.rglob(pattern))

# import X / cimport X / from X import|cimport ..., anywhere on a line (also inside functions)
_STATEMENT = re.compile(r"^\s*(?:from\s+(\S+)\s+c?import\b|c?import\s+([^#\n]+))", re.M)
_UPPER = re.compile(r"^(?:pyplat\.(?:api|core)(?:\.|$)|\.\.+(?:api|core)?(?:\.|$))")


def upward_imports(text):
    """The modules an import or cimport statement in `text` names above the runtime."""
    found = []
    for frm, names in _STATEMENT.findall(text):
        modules = [frm] if frm else [n.split(" as ")[0].strip() for n in names.split(",")]
        found += [m for m in modules if _UPPER.match(m)]
    return found


def test_the_scan_sees_upward_imports():
    assert upward_imports("from pyplat.api import handles") == ["pyplat.api"]
    assert upward_imports("    import pyplat.core.queue as q") == ["pyplat.core.queue"]
    assert upward_imports("from pyplat.api._native cimport tab") == ["pyplat.api._native"]
    assert upward_imports("from ..core import kernel") == ["..core"]
    assert upward_imports("from .. import api") == [".."]
    assert upward_imports("import os, pyplat.api") == ["pyplat.api"]
    assert upward_imports("from pyplat.runtime._sched import reap\nfrom .graph import Command") == []


def test_there_are_runtime_sources():
    names = {p.name for p in SOURCES}
    assert {"_sched.pyx", "_sched.pxd", "graph.py", "holds.pxi"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(RUNTIME)))
def test_runtime_imports_nothing_from_the_layers_above(path):
    assert upward_imports(path.read_text()) == []
