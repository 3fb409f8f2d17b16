"""The Cython side's declarations of the C entries are generated, not typed twice.

icd/gen_cython_decls.py writes at build time, from the Khronos headers, icd/pyplat_handle.h and
pyplat/api/native_entry_list.py, the CL_* constants, the entries' C types, the slot tables and the
handle kinds that pyplat/api/_native.pyx and _entries.pyx include. The sources are read here so
that a hand-typed copy (a `DEF CL_...`, an entry's ctypedef, a slot index, a table of argument
kinds) fails, and the installed modules' tables are checked against the headers' prototypes.
"""
import ast
import re
import sys
from pathlib import Path

import pytest

from pyplat import cl
from support import REPO

PACKAGE = REPO / "pyplat"
API = PACKAGE / "api"
ICD = REPO / "icd"
if not API.is_dir() or not ICD.is_dir():
    pytest.skip("no pyplat/ and icd/ sources next to the tests", allow_module_level=True)
sys.path.insert(0, str(ICD))
import gen_cython_decls  # noqa: E402  (icd/, with gen_entry_points)

CONSTANTS = {name: value for name, value in vars(cl).items() if name.startswith("CL_")}
ENTRIES = gen_cython_decls.read_entry_list(API / "native_entry_list.py")
TYPE_NAMES = {type_name for _, _, type_name in ENTRIES}

_DEF = re.compile(r"^\s*DEF\s+(\w+)\s*=\s*(.+?)\s*(?:#.*)?$", re.M)
_ASSIGN_CL = re.compile(r"^\s*(?:cdef\s+[\w ]+?\s+)?(CL_\w+)\s*=\s*[-+(~]*\s*(?:0x[0-9A-Fa-f]+|\d+)", re.M)
_LITERAL = re.compile(r"[\s()|&~<>+\-*]*(?:(?:0x[0-9A-Fa-f]+|\d+)[\s()|&~<>+\-*]*)+")
_FN_TYPEDEF = re.compile(r"^\s*ctypedef\s+[\w ]+?\*?\s*\(\s*\*\s*(\w+)\s*\)\s*\(", re.M)
_SLOT_DEF = re.compile(r"^\s*DEF\s+(I_\w+)\s*=", re.M)
_KIND_TUPLE = re.compile(r"""\(\s*["'](?:ptr|u32|u64|i32|i64|f32|f64)["']\s*[,)]""")
_KIND_MEMBER = re.compile(r"^\s+PYPLAT_KIND_\w+\s*$", re.M)
_NAME_TUPLE = re.compile(r"""^\s*\w*NAMES\s*(?:\+?=)\s*\(\s*["']cl[A-Z]""", re.M)


def hand_typed_constants(text):
    """CL_* values typed in a Cython source: `DEF CL_X = ...`, `DEF X = <number>` where the
    headers have CL_X (an alias must be spelled `DEF X = CL_X`), or `CL_X = <number>` (an enum
    member, a cdef) of a header constant."""
    found = []
    for name, value in _DEF.findall(text):
        if name.startswith("CL_"):
            found.append(f"DEF {name}")
        elif "CL_" + name in CONSTANTS and _LITERAL.fullmatch(value):
            found.append(f"DEF {name} = {value} (CL_{name})")
    found += [f"{name} = <number>" for name in _ASSIGN_CL.findall(text) if name in CONSTANTS]
    return found


def hand_typed_entry_tables(text):
    """An entry's C type, a slot index, a table of argument kinds, of entry names or of handle
    kinds typed in a Cython source of the API layer."""
    found = [f"ctypedef (*{name})" for name in _FN_TYPEDEF.findall(text)]
    found += [f"DEF {name}" for name in _SLOT_DEF.findall(text)]
    found += ["argument kinds " + m.group(0) for m in _KIND_TUPLE.finditer(text)]
    found += ["handle kind " + m.group(0).strip() for m in _KIND_MEMBER.finditer(text)]
    found += ["entry names " + m.group(0).strip() for m in _NAME_TUPLE.finditer(text)]
    return found


def _cython_sources(root):
    return [p for suffix in ("*.pyx", "*.pxi", "*.pxd") for p in sorted(root.rglob(suffix))]


def test_no_cl_constant_is_typed_in_the_cython_sources():
    bad = [f"{p.relative_to(REPO)}: {what}" for p in _cython_sources(PACKAGE)
           for what in hand_typed_constants(p.read_text(encoding="utf-8"))]
    assert not bad, ("CL_* values typed by hand (the build generates them all: cl_constants.pxi, "
                     "icd/gen_cython_decls.py):\n" + "\n".join(bad))


def test_no_entry_type_or_table_is_typed_in_the_api_layer():
    bad = [f"{p.relative_to(REPO)}: {what}" for p in _cython_sources(API)
           for what in hand_typed_entry_tables(p.read_text(encoding="utf-8"))]
    assert not bad, ("typed by hand, generated at build time from pyplat/api/native_entry_list.py "
                     "and the headers (icd/gen_cython_decls.py):\n" + "\n".join(bad))
    others = [f"{p.relative_to(REPO)}: ctypedef {name}" for p in _cython_sources(PACKAGE)
              for name in _FN_TYPEDEF.findall(p.read_text(encoding="utf-8")) if name in TYPE_NAMES]
    assert not others, "entry types declared by hand:\n" + "\n".join(others)


def test_no_generated_file_is_in_the_source_tree():
    """Cython looks next to the including .pyx first: a stale copy there would be used instead
    of the build's."""
    stale = [name for name in gen_cython_decls.OUTPUTS if (API / name).exists()]
    assert not stale, f"generated files in pyplat/api (build outputs, not sources): {stale}"


@pytest.mark.parametrize("text, found", [
    ("DEF CL_MEM_READ_WRITE = 0x1\n", ["DEF CL_MEM_READ_WRITE"]),
    ("DEF CL_MEM_READ_WRITE = CL_MEM_READ_WRITE\n", ["DEF CL_MEM_READ_WRITE"]),
    ("DEF MEM_FLAGS = 0x1101      # CL_MEM_FLAGS\n", ["DEF MEM_FLAGS = 0x1101 (CL_MEM_FLAGS)"]),
    ("DEF MEM_FLAGS = CL_MEM_FLAGS\n", []),
    ("DEF QUEUE_MODE_BITS = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE\n", []),
    ("DEF MAX_WG_DEVICES = 4\n", []),
    ("cdef enum:\n    CL_COMPLETE = 0\n    CL_SUCCESS_ = 0\n", ["CL_COMPLETE = <number>"]),
    ("cdef int CL_INVALID_VALUE = -30\n", ["CL_INVALID_VALUE = <number>"]),
    ("    if flags & CL_MEM_READ_WRITE:\n", []),
])
def test_constants_scan(text, found):
    assert hand_typed_constants(text) == found


@pytest.mark.parametrize("text, found", [
    ("ctypedef int32_t (*handle_fn)(size_t) noexcept nogil\n", ["ctypedef (*handle_fn)"]),
    ("ctypedef size_t (*map_fn)(size_t, size_t,\n   uint32_t) noexcept nogil\n", ["ctypedef (*map_fn)"]),
    ("DEF I_NDRANGE = 0\n", ["DEF I_NDRANGE"]),
    ('KINDS = {"clFlush": ("ptr",)}\n', ['argument kinds ("ptr",']),
    ('cdef extern from "pyplat_handle.h":\n    enum:\n        PYPLAT_KIND_EVENT\n',
     ["handle kind PYPLAT_KIND_EVENT"]),
    ('REF_NAMES = ("clRetainContext", "clReleaseContext")\n', ['entry names REF_NAMES = ("clR']),
    ("    if kind == PYPLAT_KIND_EVENT:\n        return _on_handle(_n_flush, False, I_FLUSH, q)\n", []),
])
def test_entry_tables_scan(text, found):
    assert hand_typed_entry_tables(text) == found


# --- the installed modules' tables --------------------------------------------------------------

def test_tables_follow_the_entry_list_and_the_prototypes():
    from pyplat.api import _entries, _native
    from pyplat.api._entry_points import ENTRY_POINTS
    names = tuple(name for name, _, _ in ENTRIES)
    assert _entries.NAMES == names
    assert set(_entries.addresses()) == set(names)
    assert set(_native.fast_path_entries()) == set(names)
    prototypes = {slot[0]: tuple(k for _, k in slot[2]) for slot in ENTRY_POINTS if slot}
    assert _entries.KINDS == {name: prototypes[name] for name in names}
    assert _entries.NATIVE_KINDS == _entries.KINDS


def test_handle_kinds_are_the_headers():
    from pyplat.api import _native
    header = (ICD / "pyplat_handle.h").read_text()
    body = re.search(r"enum\s+pyplat_handle_kind\s*\{(.*?)\}", header, re.S).group(1)
    kinds = re.findall(r"PYPLAT_KIND_(\w+)", body)
    assert list(_native.KINDS) == kinds
    assert len(set(_native.KINDS.values())) == len(kinds)      # (the C compiler's values)


def test_installed_constants_are_pyplat_cl():
    import pyplat.api
    text = (Path(pyplat.api.__file__).parent / "cl_constants.pxi").read_text()
    values = {name: ast.literal_eval(value) for name, value in _DEF.findall(text)}
    assert values == CONSTANTS


# --- the generator's checks ------------------------------------------------------------------

def _slot(name, ret_kind, *kinds):
    return {"name": name, "available": True, "ret_kind": ret_kind,
            "arg_kinds": [(f"a{i}", k) for i, k in enumerate(kinds)]}


SLOTS = [_slot("clFlush", "i32", "ptr"), _slot("clFinish", "i32", "ptr"),
         _slot("clWaitForEvents", "i32", "u32", "ptr"), _slot("clSVMAlloc", "ptr", "ptr", "u64", "u64", "u32"),
         _slot("clSVMFree", "void", "ptr", "ptr"), {"name": "clGetGLContextInfoKHR", "available": False}]


def test_generator_types_entries_from_their_prototypes():
    sigs = gen_cython_decls.signatures([("clFlush", "flush", "handle_fn"), ("clFinish", "finish", "handle_fn"),
                                        ("clWaitForEvents", "wait", "wait_fn")], SLOTS)
    assert [(s[2], s[3], s[4]) for s in sigs] == [("handle_fn", "int32_t", ("size_t",)),
                                                  ("handle_fn", "int32_t", ("size_t",)),
                                                  ("wait_fn", "int32_t", ("uint32_t", "size_t"))]
    types = "\n".join(gen_cython_decls.types_pxi(sigs))
    assert "ctypedef int32_t (*handle_fn)(size_t) noexcept nogil" in types
    assert types.count("(*handle_fn)") == 1


@pytest.mark.parametrize("entries, why", [
    ([("clFlush", "flush", "handle_fn"), ("clWaitForEvents", "wait", "handle_fn")], "differs"),
    ([("clNoSuchEntry", "nope", "nope_fn")], "not an entry"),
    ([("clGetGLContextInfoKHR", "gl", "gl_fn")], "not an entry"),
    ([("clSVMFree", "svm_free", "svm_free_fn")], "no C entry form"),
])
def test_generator_refuses(entries, why):
    with pytest.raises(SystemExit, match=why):
        gen_cython_decls.signatures(entries, SLOTS)
