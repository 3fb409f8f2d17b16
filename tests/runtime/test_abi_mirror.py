"""The runtime's C declaration of WorkGroupContext must match the compiler's ABI (pyplat/compiler/abi.py):
same fields, same order, same types, same element counts. The launcher hands that struct to the
compiled work-group functions, which read it by slot index, so any drift is silent memory
corruption. The runtime's sources are read wherever under pyplat/runtime the struct is declared
(Cython .pyx/.pxi/.pxd or a C header)."""
import ctypes
import re

import pytest

from pyplat.compiler import abi
from support import REPO

RUNTIME = REPO / "pyplat" / "runtime"
U64_TYPES = {"uint64_t", "unsigned long long", "cl_ulong"}


def expected_fields():
    """[(name, kind, count)] of abi.py: kind 'u64' or 'ptr'."""
    return [(name, "u64", n) for name, n in abi.CONTEXT_FIELDS] + [(abi.LOCAL_MEM_FIELD, "ptr", 1)]


def _field(decl):
    decl = " ".join(decl.split())
    m = re.fullmatch(r"(?:const )?(?P<type>[A-Za-z_]\w*(?: [A-Za-z_]\w*)*?) ?(?P<ptr>\*+)? ?(?P<name>\w+)"
                     r" ?(?:\[ ?(?P<n>\d+) ?\])?", decl)
    if m is None:
        return ("?", decl, 0)
    kind = "ptr" if m.group("ptr") else ("u64" if m.group("type") in U64_TYPES else m.group("type"))
    return (m.group("name"), kind, int(m.group("n") or 1))


def cython_structs(text):
    """Fields of each `cdef struct WorkGroupContext:` / `ctypedef struct WorkGroupContext:` block."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"(\s*)(?:cdef|ctypedef)\s+(?:packed\s+)?struct\s+WorkGroupContext\s*:", line)
        if not m:
            continue
        indent, decls = len(m.group(1)), []
        for body in lines[i + 1:]:
            code = body.split("#", 1)[0].rstrip()
            if not code.strip():
                continue
            if len(code) - len(code.lstrip()) <= indent:
                break
            decls.append(code.strip())
        if decls != ["pass"]:          # `pass`: an extern declaration; the C header is read instead
            out.append([_field(d) for d in decls])
    return out


def c_structs(text):
    """Fields of each C `struct WorkGroupContext { ... }` / `typedef struct {...} WorkGroupContext;`."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    bodies = re.findall(r"struct\s+WorkGroupContext\s*\{([^{}]*)\}", text, re.S)
    bodies += re.findall(r"typedef\s+struct\s*\w*\s*\{([^{}]*)\}\s*WorkGroupContext\s*;", text, re.S)
    return [[_field(d.strip()) for d in body.split(";") if d.strip()] for body in bodies]


def runtime_declarations():
    """[(file, fields)] of every declaration of WorkGroupContext under pyplat/runtime."""
    found = []
    for path in sorted(RUNTIME.rglob("*")):
        if path.suffix not in (".pyx", ".pxi", ".pxd", ".h") or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        if "WorkGroupContext" not in text:
            continue
        structs = c_structs(text) if path.suffix == ".h" else cython_structs(text)
        found += [(path.relative_to(RUNTIME.parent.parent), fields) for fields in structs]
    return found


def drift(fields):
    """Human-readable differences between declared fields and abi.py (empty: they match)."""
    want = expected_fields()
    problems = []
    if len(fields) != len(want):
        problems.append("%d fields, abi.py has %d" % (len(fields), len(want)))
    for i, (got, exp) in enumerate(zip(fields, want)):
        if got != exp:
            problems.append("field %d is (name, kind, count) %r, abi.py has %r" % (i, got, exp))
    return problems


def test_runtime_declares_work_group_context_as_abi_py_does():
    if not RUNTIME.is_dir():
        pytest.skip("no source tree next to the tests")
    decls = runtime_declarations()
    assert decls, "no declaration of WorkGroupContext found under %s" % RUNTIME
    for path, fields in decls:
        assert drift(fields) == [], "%s: WorkGroupContext differs from pyplat/compiler/abi.py" % path


def test_slots_match_the_struct_layout():
    """The code generator reads the context by i64 slot: CTX_* must be the fields' offsets / 8."""
    C = abi.WorkGroupContext
    for name, slot in [("work_dim", abi.CTX_WORK_DIM), ("global_size", abi.CTX_GLOBAL_SIZE),
                       ("local_size", abi.CTX_LOCAL_SIZE), ("num_groups", abi.CTX_NUM_GROUPS),
                       ("global_offset", abi.CTX_GLOBAL_OFFSET), ("group_id", abi.CTX_GROUP_ID),
                       ("local_mem", abi.CTX_LOCAL_MEM)]:
        assert getattr(C, name).offset == 8 * slot, name
    assert ctypes.sizeof(C) == 8 * (abi.CTX_I64_SLOTS + 1)
    assert abi.WI_LOCAL_ID == abi.CTX_I64_SLOTS and abi.WI_SLOTS == abi.WI_LOCAL_ID + 3


GOOD_CYTHON = """
cdef struct WorkGroupContext:       # pyplat/compiler/abi.py
    uint64_t work_dim
    uint64_t global_size[3]
    uint64_t local_size[3]
    uint64_t num_groups[3]
    uint64_t global_offset[3]
    uint64_t group_id[3]
    void *local_mem

ctypedef void (*work_group_fn)(void **args, const WorkGroupContext *ctx) noexcept nogil
"""

GOOD_C = """
typedef struct {
    uint64_t work_dim;   /* dims */
    uint64_t global_size[3], pad_never_used_here;
} Other;
typedef struct {
    uint64_t work_dim;
    uint64_t global_size[3];   // sizes
    uint64_t local_size[3];
    uint64_t num_groups[3];
    uint64_t global_offset[3];
    uint64_t group_id[3];
    void *local_mem;
} WorkGroupContext;
"""


def test_parsers_read_both_forms():
    assert cython_structs(GOOD_CYTHON) == [expected_fields()]
    assert c_structs(GOOD_C) == [expected_fields()]
    assert cython_structs('cdef extern from "wg.h":\n    ctypedef struct WorkGroupContext:\n        pass\n') == []


@pytest.mark.parametrize("change", [
    ("uint64_t local_size[3]\n    uint64_t num_groups[3]", "uint64_t num_groups[3]\n    uint64_t local_size[3]"),
    ("uint64_t group_id[3]", "uint32_t group_id[3]"),
    ("uint64_t global_offset[3]", "uint64_t global_offset[2]"),
    ("    void *local_mem\n", ""),
    ("    void *local_mem\n", "    void *local_mem\n    uint64_t extra\n"),
    ("void *local_mem", "uint64_t local_mem"),
])
def test_drift_is_reported(change):
    """Reordered, retyped, resized, missing and extra fields all fail the check."""
    old, new = change
    assert old in GOOD_CYTHON
    (fields,) = cython_structs(GOOD_CYTHON.replace(old, new))
    assert drift(fields) != []
