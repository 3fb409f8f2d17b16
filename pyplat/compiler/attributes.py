"""Attributes as clang resolved them: kernel attributes and loop hints.

libclang (18) exposes neither the arguments of an attribute nor the attributes of a
statement: an attribute is an UNEXPOSED_ATTR whose tokens are the unexpanded source
(``reqd_work_group_size(WGS, 1, 1)``), and an attributed statement is an
UNEXPOSED_STMT around the loop. What clang did resolve is in its AST, and its pretty
printer writes the AST back: attribute arguments as the values clang computed (macros
expanded, constant expressions folded), loop hints in a canonical form. We read that
output, never the program's text.
"""
import re

from . import clangapi as capi
from .tree import CompileError


# the kernel attributes of the OpenCL C spec, as clang prints them
_KERNEL_ATTR = re.compile(r"__attribute__\(\((reqd_work_group_size|work_group_size_hint|vec_type_hint|"
                          r"intel_reqd_sub_group_size|nosvm|endian)(\(.*?\))?\)\)")
# a statement attribute or loop pragma at the start of a printed attributed statement
_STMT_ATTR = re.compile(r"[ \t]*(#pragma [^\n]*\n|__attribute__\(\(\w+(?:\([^()]*\))?\)\)|"
                        r"\[\[[\w:]+(?:\([^()]*\))?\]\])\s*")


def kernel_attributes(fn):
    """(attribute strings for CL_KERNEL_ATTRIBUTES, reqd_work_group_size or None) of a
    function cursor, with the argument values clang computed (a macro argument reads as
    its value)."""
    head = capi.pretty_printed(fn, terse=True)
    name_at = head.find(" " + fn.spelling + "(")
    if name_at >= 0:
        head = head[:name_at]
    attrs, reqd = [], None
    for m in _KERNEL_ATTR.finditer(head):
        name, args = m.group(1), m.group(2) or ""
        attrs.append(re.sub(r"\s+", "", name + args))     # the spec's form: no whitespace
        if name == "reqd_work_group_size":
            nums = [int(x) for x in re.findall(r"\d+", args)]
            if len(nums) != 3:
                raise CompileError("cannot read the arguments of reqd_work_group_size", fn)
            reqd = tuple(nums)
    return attrs, reqd


def is_attributed_statement(c):
    """Whether an UNEXPOSED_STMT is an attributed statement (the only statement clang 18
    leaves unexposed in C): exactly one child, a statement."""
    kids = list(c.get_children())
    return len(kids) == 1 and (kids[0].kind.is_statement() or kids[0].kind.is_expression())


def statement_hints(text):
    """Loop hints of each attributed statement of a function definition, in the order of a
    pre-order walk of its body, from `text`, clang's printing of the whole function
    (capi.pretty_printed; libclang cannot print a statement alone): there, each attributed
    statement starts a line with its attributes (``#pragma unroll (4)``,
    ``__attribute__((opencl_unroll_hint(2)))``).
    Each entry is a dict: 'unroll' in ('enable', 'full', 'disable') and/or 'count' (int)."""
    start = text.find("{")
    groups = []
    for m in re.finditer(r"\n[ \t]*(?=#pragma |__attribute__\(\(|\[\[)", text[start:]):
        pos, hints, seen = start + m.end(), {}, False
        if groups and groups[-1][0] == pos:
            continue
        while True:
            a = _STMT_ATTR.match(text, pos)
            if a is None:
                break
            seen = True
            pos = a.end()
            _hint(a.group(1), hints)
        if seen and _starts_statement(text, pos):
            groups.append((pos, hints))
    return [h for _, h in groups]


def _starts_statement(text, pos):
    """After the attributes: a statement, not a declaration with leading attributes."""
    m = re.match(r"\s*(\w+|[;{(*+\-!~]|\Z)", text[pos:pos + 64])
    return m is not None and m.group(1) in ("for", "while", "do", "if", "switch", "return", ";", "{",
                                            "break", "continue", "goto", "")


def _hint(spec, hints):
    """Fold one printed attribute into hints (clang's spellings: ``#pragma unroll (N)``,
    ``#pragma unroll (enable)``, ``#pragma nounroll``, ``#pragma clang loop unroll(full)``,
    ``#pragma clang loop unroll_count(N)``, ``opencl_unroll_hint(N)``, 0 meaning no count)."""
    s = spec.strip()
    m = re.match(r"#pragma\s+(unroll|nounroll|clang\s+loop\s+unroll|clang\s+loop\s+unroll_count)\b\s*"
                 r"(?:\(\s*(\w+)\s*\))?", s)
    if m:
        kind, arg = m.group(1), m.group(2)
        if kind == "nounroll" or arg == "disable":
            hints["unroll"] = "disable"
        elif arg in ("full", "enable"):
            hints["unroll"] = arg
        elif arg is None:
            hints["unroll"] = "enable"
        elif arg.isdigit():
            _count(int(arg), hints)
        return
    m = re.match(r"__attribute__\(\(opencl_unroll_hint(?:\((\d+)\))?\)\)", s)
    if m:
        n = int(m.group(1) or 0)
        if n == 0:
            hints["unroll"] = "enable"
        else:
            _count(n, hints)
    # other statement attributes and loop pragmas (vectorize, interleave, fallthrough, ...) are
    # hints without effect on the result: accepted, not acted upon


def _count(n, hints):
    if n == 1:
        hints["unroll"] = "disable"
    else:
        hints["count"] = n


def describe(c):
    """A construct for an error message: its cursor kind and, when clang does not expose
    the kind, the start of clang's rendering of it."""
    name = c.kind.name.lower()
    if name.startswith("unexposed"):
        try:
            text = " ".join(capi.pretty_printed(c).split())
        except Exception:   # no rendering: the kind alone
            text = ""
        if text:
            name += " '%s'" % (text if len(text) <= 40 else text[:37] + "...")
    return name
