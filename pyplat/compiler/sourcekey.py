"""What the compiler sees of a program's source: the cache key part that comments and whitespace
do not change, and the mapping that moves build-log positions onto an edited source.

The normal form follows the C translation phases 1-3 that clang applies before it tokenises:
line endings unified, backslash-newline splices joined, every comment one space. Then each run
of whitespace becomes one character: a newline if the run holds one (directives end at a line's
end, so line structure is kept; blank lines and comment lines are not), else a space (so
``#define F(x)`` and ``#define F (x)`` stay apart). String and character literals and
``#include <...>`` header names are kept byte for byte (``"a // b"`` is no comment). Two sources
with the same normal form give clang the same tokens with the same spacing and line breaks, so
the same program, unless the program can see its own line numbers or columns: ``normal_form``
returns None for those (``__LINE__``, ``#line``, ``__builtin_LINE``/``__builtin_COLUMN``) and for
text whose lexing this module does not mirror exactly (trigraphs, NUL bytes, a backslash that
whitespace separates from its newline, ``#warning`` whose message keeps its spacing); their
cache key is the exact source.

A build log names positions (``<source>:line:col``). ``SourceMap.mark`` turns a position into
the number of significant characters (not whitespace, not comment) before it, which two sources
of one normal form share; ``position_of`` turns it back into a line and column of another
source. Columns are byte columns, as clang counts them.
"""
import bisect
import re

# a literal or header name (kept exactly), or a comment (one space); an unterminated literal
# runs to the end of its line, as clang lexes it where it is no error (#if 0 blocks, #error).
# The first alternatives take the text between them in long runs.
_LEXEMES = re.compile(r"""
    [^"'/]+
  | /(?![/*])
  | "[^"\\\n]*(?:\\[^\n][^"\\\n]*)*"?
  | '[^'\\\n]*(?:\\[^\n][^'\\\n]*)*'?
  | //[^\n]*
  | /\*[^*]*\*+(?:[^/*][^*]*\*+)*/
  | /\*[\s\S]*
""", re.X)
# the same where a header name <...> may appear (its "//" is no comment)
_LEXEMES_INCLUDE = re.compile(_LEXEMES.pattern.replace("[^\"'/]+", r"""
    (?:include(?:_next)?|__has_include(?:_next)?[ \t]*\()[ \t]*<[^>\n]*>
  | [^"'/i_]+ | [i_]""", 1), re.X)
_HEADER_NAME = re.compile(r"include(?:_next)?[ \t]*(?:\([ \t]*)?<")
_BLANK_RUN = re.compile(r"[ \t\f\v]+")
_LINE_DIRECTIVES = ("#line", "# line", "%:line", "%: line", "#warning", "# warning", "%:warning",
                    "%: warning")
_LINE_MACROS = ("__LINE__", "__builtin_LINE", "__builtin_COLUMN")
_SPACED_SPLICE = re.compile(r"\\[ \t\f\v]+(?:\n|\r)")
_GAP = re.compile(r"[ \t\f\v\n]+")
_NOT_CLANG_SPACE = ("\x1c", "\x1d", "\x1e", "\x1f")     # whitespace to str.split(), not to clang
LITERAL_MARK = "\0"


def _phase2(text):
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\\\n" in text:
        text = text.replace("\\\n", "")
    return text


def uses_line_macros(text):
    """True when text uses something that expands to the line or column where it is used."""
    return any(m in text for m in _LINE_MACROS)


def sees_lines(text):
    """True when text can observe its own line numbers or columns (or uses #warning, whose
    message keeps its spacing)."""
    return uses_line_macros(text) or any(d in text for d in _LINE_DIRECTIVES)


def _lexemes(text):
    """(pieces, headers): text in pieces (literals, header names, comments, the text between
    them); headers: whether a piece starting with "i" or "_" and longer than one character is
    a header name."""
    if _HEADER_NAME.search(text):
        return _LEXEMES_INCLUDE.findall(text), True
    return _LEXEMES.findall(text), False


def _kind(piece, headers):
    """'kept' (a literal or header name), 'comment' or 'text'."""
    c = piece[0]
    if c == '"' or c == "'" or (headers and (c == "i" or c == "_") and len(piece) > 1):
        return "kept"
    if c == "/" and len(piece) > 1:
        return "comment"
    return "text"


def normal_form(source):
    """(normalised text, [literals in order]) or None when the source must be keyed exactly."""
    text = _phase2(source)
    if "\0" in text or "??" in text or uses_line_macros(text) or (
            "\\" in source and _SPACED_SPLICE.search(source)):
        return None
    literals, out = [], []
    pieces, headers = _lexemes(text)
    for piece in pieces:
        c = piece[0]
        if c == '"' or c == "'" or (headers and (c == "i" or c == "_") and len(piece) > 1):
            literals.append(piece)          # (_kind, written out: this loop is the lookup's cost)
            out.append(LITERAL_MARK)
        elif c == "/" and len(piece) > 1:
            out.append(" ")
        else:
            out.append(piece)
    text = "".join(out)
    if text.isascii() and not any(c in text for c in _NOT_CLANG_SPACE):
        lines = [" ".join(line.split()) for line in text.split("\n")]
    else:
        lines = [_BLANK_RUN.sub(" ", line).strip(" ") for line in text.split("\n")]
    text = "\n".join([line for line in lines if line])
    if sees_lines(text):       # directives spelled with a comment inside, e.g. "# /**/ line"
        return None
    return text, literals


# ----------------------------------------------------------------------------- positions
class SourceMap:
    """Positions of one source: raw offsets of its significant characters, and its line starts."""

    def __init__(self, source):
        self.source = source
        logical, self._segments = _logical(source)
        sig = []
        pos = 0
        pieces, headers = _lexemes(logical)
        for piece in pieces:
            kind = _kind(piece, headers)
            if kind == "kept":
                sig.extend(range(pos, pos + len(piece)))
            elif kind == "text":
                self._significant(logical, pos, pos + len(piece), sig)
            pos += len(piece)
        self.significant = [self._raw(i) for i in sig] if self._segments else sig
        self.line_starts = [0] + [m.end() for m in re.finditer("\r\n|\r|\n", source)]

    @staticmethod
    def _significant(text, start, end, out):
        pos = start
        for m in _GAP.finditer(text, start, end):
            out.extend(range(pos, m.start()))
            pos = m.end()
        out.extend(range(pos, end))

    def _raw(self, i):
        k = bisect.bisect_right(self._segments, (i, float("inf"))) - 1
        logical_start, raw_start = self._segments[k]
        return raw_start + (i - logical_start)

    def offset(self, line, col):
        """Raw character offset of a 1-based line and byte column, or None."""
        if not 1 <= line <= len(self.line_starts):
            return None
        start = self.line_starts[line - 1]
        end = self.line_starts[line] if line < len(self.line_starts) else len(self.source)
        prefix = self.source[start:end].encode("utf-8", "surrogateescape")[:col - 1]
        if len(prefix) != col - 1:
            return None
        try:
            return start + len(prefix.decode("utf-8", "surrogateescape"))
        except UnicodeDecodeError:
            return None

    def mark(self, line, col):
        """2 * index of the significant character at (line, col), + 1 when the position is
        just after it (clang points past a token's end, e.g. at a missing ';'); None when
        neither holds."""
        off = self.offset(line, col)
        if off is None:
            return None
        i = bisect.bisect_left(self.significant, off)
        if i < len(self.significant) and self.significant[i] == off:
            return 2 * i
        if i > 0 and self.significant[i - 1] == off - 1:
            return 2 * (i - 1) + 1
        return None

    def position_of(self, mark):
        """(line, byte column) of a mark (see mark())."""
        off = self.significant[mark // 2] + mark % 2
        line = bisect.bisect_right(self.line_starts, off)
        start = self.line_starts[line - 1]
        return line, len(self.source[start:off].encode("utf-8", "surrogateescape")) + 1


def _logical(source):
    """(phase-2 text, [(logical offset, raw offset)] of its pieces; [] when they are the same)."""
    if "\r" not in source and "\\\n" not in source:
        return source, []
    pieces, segments, pos, at = [], [], 0, 0
    for m in re.finditer(r"\\(?:\r\n|\r|\n)|\r\n|\r", source):
        pieces.append(source[pos:m.start()])
        segments.append((at, pos))
        at += m.start() - pos
        if m.group()[0] != "\\":         # a line ending becomes one "\n"
            segments.append((at, m.start()))
            pieces.append("\n")
            at += 1
        pos = m.end()
    segments.append((at, pos))
    pieces.append(source[pos:])
    return "".join(pieces), segments


_LOG_POSITION = re.compile(r"^(<source>):(\d+):(\d+):", re.M)


def log_marks(log, source):
    """[mark] (SourceMap.mark) of each <source>:line:col in a build log, or None when one of
    them is at no significant character (it cannot be moved onto another source). Positions
    with line 0 (none) are left as they are."""
    found = [m for m in _LOG_POSITION.finditer(log) if int(m.group(2)) > 0]
    if not found:
        return []
    smap = SourceMap(source)
    marks = []
    for m in found:
        i = smap.mark(int(m.group(2)), int(m.group(3)))
        if i is None:
            return None
        marks.append(i)
    return marks


def moved_log(log, marks, source):
    """The build log with its <source> positions moved onto source (same normal form)."""
    if not marks:
        return log
    smap = SourceMap(source)
    it = iter(marks)

    def move(m):
        if int(m.group(2)) == 0:
            return m.group()
        line, col = smap.position_of(next(it))
        return "%s:%d:%d:" % (m.group(1), line, col)

    return _LOG_POSITION.sub(move, log)
