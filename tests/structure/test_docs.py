"""The docs are true: every repository path, `pyplat.x.y` module and PYPLAT_* knob that README.md
and docs/*.md name exists, and the README and docs/configuration.md list exactly the knobs of
pyplat/config.py's table.

Runs from the repository (the package installed); skipped where the docs are not there.
"""
import importlib
import re
from pathlib import Path

import pytest

import pyplat
from pyplat import config
from support import REPO

INSTALLED = Path(pyplat.__file__).resolve().parent       # generated files live only here
if not (REPO / "docs").is_dir():
    pytest.skip("no docs/ next to the tests", allow_module_level=True)

DOCS = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))

# A path claim: starts with a top-level directory of the repository (or a package of pyplat/,
# which the docs use relative to pyplat/), not inside a longer path ("<site-packages>/pyplat/...").
TOP = ("icd", "pyplat", "kernels", "bench", "tools", "scripts", "docs", "conformance",
       "examples", "tests")
PACKAGES = ("api", "core", "compiler", "runtime")
_PATH = re.compile(r"(?<![\w./<>$~-])((?:%s)/[\w./*<>-]*)" % "|".join(TOP + PACKAGES))
# A bare Python or Cython file name ("`jit.py`, `fast_path.pxi`"): ours, somewhere in the tree.
_BARE = re.compile(r"(?<![\w./<>$~-])([\w-]+\.(?:py|pyx|pxi|pxd))\b")
# Bare names the docs use for files that are not ours (pyopencl's tests, a user's script).
NOT_OURS = {"test_wrapper.py", "test_algorithm.py", "test_array.py", "test_clmath.py",
            "test_clrandom.py", "script.py", "my_pyopencl_script.py"}
_MODULE = re.compile(r"(?<![\w./-])pyplat(?:\.[A-Za-z_]\w*)+")
_KNOB = re.compile(r"\bPYPLAT_[A-Z0-9_]*[A-Z0-9]\b")
_FILE_SUFFIXES = {"icd", "so", "h", "c", "py", "pyx", "pxi", "md", "cl"}


def _text(doc):
    return doc.read_text(encoding="utf-8")


def _claims(pattern, group=0):
    """[(doc name, line number, claim)] for every match in the docs."""
    found = []
    for doc in DOCS:
        for n, line in enumerate(_text(doc).splitlines(), 1):
            found += [(doc.relative_to(REPO).as_posix(), n, m.group(group))
                      for m in pattern.finditer(line)]
    return found


def _path_exists(claim):
    claim = claim.rstrip(".,:;")
    if "<" in claim:                       # a pattern: conformance/cat_<category>.py
        return True
    if claim.split("/")[0] in PACKAGES:
        # Relative to pyplat/ ("core/queue.py"), but only where it reads as a file or directory:
        # "runtime/partial unrolling" and "api/bridge.direct_entries" are not paths.
        if not (claim.endswith("/") or "*" in claim or claim.rsplit(".", 1)[-1] in _FILE_SUFFIXES):
            return True
        claim = "pyplat/" + claim
    if "*" in claim:
        return any(REPO.glob(claim))
    if (REPO / claim).exists():
        return True
    # Built or installed files (pyplat/cl.py, pyplat/_icd/...) and the installed conformance
    # package exist in the installation only.
    if claim.startswith("pyplat/"):
        return (INSTALLED / claim[len("pyplat/"):]).exists()
    return False


def test_every_path_named_exists():
    false = [f"{doc}:{n}: {claim}" for doc, n, claim in _claims(_PATH, 1)
             if not _path_exists(claim)]
    assert not false, "paths named in the docs that do not exist:\n" + "\n".join(false)


def test_every_file_named_exists():
    """Docs often name a file without its directory (`jit.py`, `fast_path.pxi`)."""
    ours = {p.name for top in TOP for p in (REPO / top).rglob("*")}
    ours |= {p.name for p in INSTALLED.rglob("*")}
    false = [f"{doc}:{n}: {claim}" for doc, n, claim in _claims(_BARE, 1)
             if claim not in ours and claim not in NOT_OURS]
    assert not false, "file names in the docs that exist nowhere in the tree:\n" + "\n".join(false)


def _module_exists(dotted):
    parts = dotted.split(".")
    if parts[-1] in _FILE_SUFFIXES:        # a file name such as pyplat.icd
        return True
    for cut in range(len(parts), 0, -1):   # the longest importable prefix, then attributes
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(obj, attribute):
                return False
            obj = getattr(obj, attribute)
        return True
    return False


def test_every_module_named_exists():
    false = [f"{doc}:{n}: {claim}" for doc, n, claim in _claims(_MODULE)
             if not _module_exists(claim)]
    assert not false, "modules named in the docs that do not exist:\n" + "\n".join(false)


def _source_identifiers():
    """PYPLAT_* identifiers defined or used in the sources (C macros such as PYPLAT_DEFER)."""
    names = set()
    for pattern in ("icd/*.[ch]", "icd/*.py", "kernels/*", "pyplat/**/*.py", "pyplat/**/*.pyx",
                    "pyplat/**/*.pxi", "pyplat/**/*.pxd"):
        for path in REPO.glob(pattern):
            if path.is_file():
                names.update(_KNOB.findall(path.read_text(errors="replace")))
    return names


def test_every_knob_named_exists():
    """A PYPLAT_* name in the docs is a knob of the table or an identifier of the sources."""
    known = set(config.KNOBS) | _source_identifiers()
    false = [f"{doc}:{n}: {claim}" for doc, n, claim in _claims(_KNOB) if claim not in known]
    assert not false, "PYPLAT_* names in the docs that exist nowhere:\n" + "\n".join(false)


@pytest.mark.parametrize("doc", ["README.md", "docs/configuration.md"])
def test_knob_lists_match_the_table(doc):
    """Both ways: each knob of pyplat/config.py is listed, and nothing else is."""
    named = set(_KNOB.findall(_text(REPO / doc)))
    assert named - set(config.KNOBS) == set(), f"{doc} lists knobs the table lacks"
    assert set(config.KNOBS) - named == set(), f"{doc} does not list these knobs of the table"
