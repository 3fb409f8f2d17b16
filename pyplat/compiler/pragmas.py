"""`#pragma OPENCL FP_CONTRACT ON|OFF|DEFAULT` (OpenCL C 6.10 / C99 7.12.2).

clang keeps the pragma's state in its AST (per operator), but libclang exposes neither that
nor the pragma, and its printing leaves pragmas out. The pragmas are taken from clang's own
lexer instead: the tokens of each file of the translation unit (clang_tokenize), less the
lines the preprocessor skipped (clang_getSkippedRanges, which needs the detailed
preprocessing record: driver.py asks for it only where a file names FP_CONTRACT at all).

Scope, as C99 says: a pragma outside functions holds until the next one or the end of the
translation unit; one inside a compound statement holds until the next one or the end of
that compound statement. So the state at an expression is set by the last pragma before it,
in translation order, that is either outside functions or inside a compound statement
enclosing it. A pragma produced by `_Pragma` inside a macro is not seen (not supported).
"""
import ctypes

import clang.cindex as ci
from clang.cindex import CursorKind as CK, TokenKind

from . import clangapi as capi

NAME = "FP_CONTRACT"
DETAILED_RECORD = 0x01          # CXTranslationUnit_DetailedPreprocessingRecord


class _RangeList(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(ci.SourceRange))]


_skipped = capi._fn("clang_getSkippedRanges", ctypes.POINTER(_RangeList), ctypes.c_void_p,
                    ctypes.c_void_p)
_dispose_ranges = capi._fn("clang_disposeSourceRangeList", None, ctypes.POINTER(_RangeList))


def mentioned(texts):
    """Whether any of these file texts (str or bytes) names the pragma (a cheap test before
    the real one)."""
    return any(_names_it(t) for t in texts)


def _names_it(text):
    return (NAME.encode() if isinstance(text, bytes) else NAME) in text


def included_mention(tu, texts, skip_files):
    """Whether a file tu includes from disk (not skip_files) names the pragma."""
    for inc in tu.get_includes():
        name = inc.include.name
        if name in texts or name in skip_files:
            continue
        try:
            with open(name, encoding="utf-8", errors="replace") as fh:
                if NAME in fh.read():
                    return True
        except OSError:
            pass
    return False


class FPContract:
    """Where contraction (a*b + c -> one fused operation) is allowed."""

    def __init__(self, events=(), files=None):
        # (translation position, file name, offset, on, (start, end) of the enclosing
        # compound statement or None at file scope), in translation order
        self.events = sorted(events, key=lambda e: e[0])
        self.files = files or {}    # file name -> (includer, offset of its #include) or None

    @classmethod
    def from_tu(cls, tu, texts, skip_files=()):
        """The pragmas of every file of tu but skip_files (our own header). texts: name ->
        text of the files given to clang as unsaved files; the others are read from disk."""
        files = {tu.spelling: None}
        for inc in tu.get_includes():
            name = inc.include.name
            if name not in files and name not in skip_files:
                files[name] = (inc.location.file.name, inc.location.offset)
        events = []
        for name in files:
            text = texts.get(name)
            if text is None:
                try:
                    with open(name, encoding="utf-8", errors="replace") as fh:
                        text = fh.read()
                except OSError:
                    continue
            if not _names_it(text):
                continue
            f = tu.get_file(name)
            size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8"))
            for offset, on in _pragmas_in(tu, f, size):
                events.append((_position(files, name, offset), name, offset, on,
                               _enclosing_block(tu, f, offset)))
        return cls(events, files)

    def allowed(self, cursor):
        """Whether the pragma state at cursor's expression is ON (the default)."""
        if not self.events or cursor is None:
            return True
        loc = cursor.location
        if loc.file is None:
            return True
        name, offset = loc.file.name, loc.offset
        pos = _position(self.files, name, offset)
        on = True
        for epos, fname, _, state, block in self.events:
            if epos >= pos:
                break
            if block is None or (fname == name and block[0] <= offset < block[1]):
                on = state
        return on


def _pragmas_in(tu, f, size):
    """(offset, on) of each FP_CONTRACT pragma on the active lines of file f (size bytes)."""
    ext = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(tu, f, 0),
                                        ci.SourceLocation.from_offset(tu, f, size))
    skipped = _skipped_ranges(tu, f)
    toks = [(t.kind, t.spelling, t.extent.start.offset) for t in tu.get_tokens(extent=ext)]
    out = []
    for i in range(len(toks) - 4):
        words = [t[1] for t in toks[i:i + 5]]
        if words[:4] != ["#", "pragma", "OPENCL", NAME] or toks[i][0] != TokenKind.PUNCTUATION:
            continue
        off = toks[i][2]
        if any(a <= off < b for a, b in skipped):
            continue
        state = words[4].upper()
        if state in ("ON", "OFF", "DEFAULT"):      # clang diagnoses anything else
            out.append((off, state != "OFF"))
    return out


def _skipped_ranges(tu, f):
    lst = _skipped(tu, f)
    if not lst:
        return []
    try:
        r = lst.contents
        return [(r.ranges[i].start.offset, r.ranges[i].end.offset) for i in range(r.count)]
    finally:
        _dispose_ranges(lst)


def _position(files, name, offset):
    """Translation order of (file, offset): the offsets along the chain of #includes."""
    pos = (offset,)
    while files.get(name) is not None:
        name, offset = files[name]
        pos = (offset,) + pos
    return pos


def _enclosing_block(tu, f, offset):
    """(start, end) offsets of the innermost compound statement around offset in file f, or
    None when the offset is outside every function."""
    best = None
    for top in tu.cursor.get_children():
        if top.kind != CK.FUNCTION_DECL or top.location.file is None or \
                top.location.file.name != f.name:
            continue
        e = top.extent
        if not (e.start.offset <= offset < e.end.offset):
            continue
        stack = [top]
        while stack:
            c = stack.pop()
            for k in c.get_children():
                ke = k.extent
                if ke.start.file is None or ke.start.file.name != f.name or \
                        not (ke.start.offset <= offset < ke.end.offset):
                    continue
                if k.kind == CK.COMPOUND_STMT:
                    best = (ke.start.offset, ke.end.offset)
                stack.append(k)
    return best
