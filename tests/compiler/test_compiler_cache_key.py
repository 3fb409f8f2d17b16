"""The cache key is what the compiler sees (compiler/sourcekey.py): edits of comments and
whitespace find the entry without compiling, anything that changes tokens, line structure of
directives or line numbers a program can see does not, and a hit's build log names the lines of
the edited source."""
import uuid

import numpy as np
import pytest

from pyplat.compiler import build, cache, driver, sourcekey
from support.compiled import run


@pytest.fixture
def cachedir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("PYPLAT_CACHE_DIR", str(d))
    return d


@pytest.fixture
def no_compile(monkeypatch):
    """Call it to make any compilation from now on fail the test."""
    def forbid():
        def fail(*a, **k):
            raise AssertionError("compiled on what should be a cache hit")
        monkeypatch.setattr(driver, "_get_index", fail)
        monkeypatch.setattr(driver, "_build", fail)
    return forbid


def _values(r, n=4):
    assert r.ok, r.log
    o = np.zeros(n, np.int32)
    run(r.kernels["k"], [o], (n,))
    return list(o)


def _kernel(body, before=""):
    tag = uuid.uuid4().hex          # a token: each test's program is its own
    return "%s\n#define TAG_%s 1\n__kernel void k(__global int *o) {\n  int i = get_global_id(0);\n  %s\n}\n" % (
        before, tag, body)


def _hit(src, options=""):
    hits = cache.stats()["hits"]
    r = build(src, options)
    return r, bool(r.timings.get("cached")) and cache.stats()["hits"] == hits + 1


def test_comment_edits_hit_without_compiling(cachedir, no_compile):
    src = _kernel("o[i] = i * 3; // times three")
    assert _values(build(src)) == [0, 3, 6, 9]
    no_compile()
    edits = [
        src.replace("// times three", "// multiplied by three, a longer comment"),
        "/* a new header comment\n   over two lines */\n" + src,
        src.replace("o[i] = i * 3;", "o[i] = /* inline */ i * 3;"),
        src.replace("  int i", "  // a comment line\n  int i"),
    ]
    for edit in edits:
        r, hit = _hit(edit)
        assert hit, edit
        assert _values(r) == [0, 3, 6, 9]


def test_whitespace_edits_hit_without_compiling(cachedir, no_compile):
    src = _kernel("o[i] = i + 7;")
    assert _values(build(src)) == [7, 8, 9, 10]
    no_compile()
    edits = [
        src.replace("  ", "\t\t"),                          # indentation
        src.replace("\n", "\n\n\n"),                        # blank lines
        src.replace("\n", "   \r\n"),                       # trailing spaces, CRLF
        src.replace("o[i] = i + 7;", "o[i]  =\ti  +   7;"),  # wider spacing inside a line
        src.replace("get_global_id", "get_glo\\\nbal_id"),  # a line splice inside a name
    ]
    for edit in edits:
        r, hit = _hit(edit)
        assert hit, repr(edit)
        assert _values(r) == [7, 8, 9, 10]


def test_space_between_tokens_is_kept(cachedir):
    # whether tokens are spaced apart can matter (stringizing keeps it, "- -" is not "--"):
    # removing a space is another key, never a wrong program
    src = _kernel("o[i] = S(i + 1)[1] + i - -1;", "#define S(x) #x")
    assert _values(build(src)) == [ord(" ") + j + 1 for j in range(4)]
    r, hit = _hit(src.replace("S(i + 1)", "S(i+1)"))
    assert not hit and _values(r) == [ord("+") + j + 1 for j in range(4)]


def test_string_and_char_literals_are_kept_exactly(cachedir):
    src = _kernel('o[i] = s[i + 4];', '__constant char s[] = "ab  // xy";')
    assert _values(build(src)) == [ord(c) for c in "// x"]
    # text after "//" inside a string is no comment; spaces inside a string are its bytes
    r, hit = _hit(src.replace("// xy", "// zy"))
    assert not hit and _values(r) == [ord(c) for c in "// z"]
    r, hit = _hit(src.replace('"ab  //', '"ab //'))
    assert not hit and _values(r) == [ord(c) for c in "/ xy"]
    csrc = _kernel("o[i] = i ? '/' : ' ';")
    assert _values(build(csrc)) == [32, 47, 47, 47]
    r, hit = _hit(csrc.replace("' '", "'  '"[:2] + "'"))   # "' '" -> "' '" with no change: a hit
    assert hit
    r, hit = _hit(csrc.replace("' '", "'*'"))
    assert not hit and _values(r) == [42, 47, 47, 47]


def test_define_changes_miss_and_directive_lines_are_kept(cachedir):
    src = _kernel("o[i] = V;", "#define V 2 + 3")
    assert _values(build(src)) == [5] * 4
    r, hit = _hit(src.replace("#define V 2 + 3", "#define V 2 + 4"))
    assert not hit and _values(r) == [6] * 4
    r, hit = _hit(src.replace("-D", ""), "-DEXTRA=1")       # options are part of the key
    assert not hit and r.ok
    # a block comment over a line break is one space: the directive goes on after it
    r, hit = _hit(src.replace("#define V 2 + 3", "#define V 2 /*\n*/ + 3"))
    assert hit and _values(r) == [5] * 4
    # a line break ends the directive: the same tokens over two lines are another program
    r, hit = _hit(src.replace("#define V 2 + 3", "#define V 2\n+ 3"))
    assert not hit and not r.ok
    # "F(x)" defines a function-like macro, "F (x)" an object-like one
    fsrc = _kernel("o[i] = F(1);", "#define F(x) (x + 1)")
    assert _values(build(fsrc)) == [2] * 4
    r, hit = _hit(fsrc.replace("F(x) (x", "F (x) (x"))
    assert not hit and not r.ok


def test_line_numbers_a_program_sees_are_never_reused(cachedir, tmp_path):
    src = _kernel("o[i] = __LINE__;")
    line = src.split("\n").index("  o[i] = __LINE__;") + 1
    assert _values(build(src)) == [line] * 4
    r, hit = _hit("// one more line\n" + src)
    assert not hit and _values(r) == [line + 1] * 4
    # through an option
    osrc = _kernel("o[i] = HERE;")
    line = osrc.split("\n").index("  o[i] = HERE;") + 1
    assert _values(build(osrc, "-DHERE=__LINE__")) == [line] * 4
    r, hit = _hit("\n" + osrc, "-DHERE=__LINE__")
    assert not hit and _values(r) == [line + 1] * 4
    # through a macro of an included file: found when the entry is made
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "here.h").write_text("#define HERE __LINE__\n")
    isrc = '#include "here.h"\n' + osrc
    line += 1
    assert _values(build(isrc, "-I %s" % inc)) == [line] * 4
    r, hit = _hit(isrc.replace("__kernel", "/* moved */\n__kernel"), "-I %s" % inc)
    assert not hit and _values(r) == [line + 1] * 4
    # #line is the same
    lsrc = _kernel("o[i] = __LINE__;", "#line 100")
    r, hit = _hit(lsrc.replace("#line 100", "#  line 100 /* c */"))
    assert not hit


def test_hit_after_lines_moved_reports_the_new_lines(cachedir, no_compile):
    src = _kernel("int x = 1.5f;\n  o[i] = x;\n  x == 2;")
    first = build(src)
    assert first.ok and "warning" in first.log
    moved = "/* two\n lines */\n" + src.replace("  int x = 1.5f;", "\n\t  int   x =   1.5f;")
    fresh = build(moved, use_cache=False).log
    assert fresh != first.log and "<source>:" in fresh
    no_compile()
    r, hit = _hit(moved)
    assert hit and r.log == fresh
    assert r.package != first.package        # a program binary made from it names these lines too
    r, hit = _hit(src)                       # and back
    assert hit and r.log == first.log


def test_include_change_still_misses_after_a_comment_edit(cachedir, tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "val.h").write_text("#define VAL 5\n")
    src = '#include "val.h"\n' + _kernel("o[i] = VAL;")
    assert _values(build(src, "-I %s" % inc)) == [5] * 4
    (inc / "val.h").write_text("#define VAL 6\n")
    r, hit = _hit("// edited\n" + src, "-I %s" % inc)
    assert not hit and _values(r) == [6] * 4


# ----------------------------------------------------------------------------- the lexer
def _same(a, b):
    fa, fb = sourcekey.normal_form(a), sourcekey.normal_form(b)
    assert fa is not None and fb is not None
    return fa == fb


def test_normal_form_equal_exactly_for_the_same_tokens():
    assert _same("int a; // x\nint b;", "int a;\n\n/* y */ int   b;  ")
    assert not _same('char *s = "a // b";', 'char *s = "a // c";')
    assert not _same("#include <a//b.h>\n", "#include <a//c.h>\n")
    assert not _same("#define A 1\n#define B 2\n", "#define A 1 #define B 2\n")
    assert not _same("#define F(x) x\n", "#define F (x) x\n")
    assert not _same("a - -b", "a --b")
    # an unterminated quote in skipped text runs to its line's end, as clang lexes it
    assert not _same("#if 0\ndon't /*\n#endif\nint a; /* */", "#if 0\ndon't /*\n#endif\nint b; /* */")
    assert not _same('#if 0\n"say /*\n#endif\nint a; /* */', '#if 0\n"say /*\n#endif\nint b; /* */')
    assert _same("a /* x\n y */ b", "a b")
    assert not _same("int/**/x;", "intx;")          # a comment is a space


def test_sources_the_normal_form_does_not_cover_are_keyed_exactly():
    for src in ("x = __LINE__;", "#line 5\n", "# /* */ line 5\n", "#warning  a  b\n", "a ??/\nb",
                "a\0b", "#define A 1 \\  \nB", "int c = __builtin_COLUMN();"):
        assert sourcekey.normal_form(src) is None, src


def test_log_positions_move_onto_an_edited_source():
    old = "int a;\n  int  b = 1.5f;\n"
    new = "// c\nint a;\n\n int b =\n 1.5f;\n"
    log = "<source>:2:12: warning: w\n<source>:2:17: warning: after\nother.h:2:12: note\n"
    marks = sourcekey.log_marks(log, old)
    assert sourcekey.moved_log(log, marks, new) == \
        "<source>:5:2: warning: w\n<source>:5:7: warning: after\nother.h:2:12: note\n"
    # a position inside a comment cannot be moved: such an entry serves its own source only
    assert sourcekey.log_marks("<source>:1:9: warning: in a comment\n", "int a; /* x */") is None


def test_bytes_and_text_sources_share_entries(cachedir, no_compile):
    src = _kernel("o[i] = 5;")
    assert _values(build(src.encode())) == [5] * 4
    no_compile()
    r, hit = _hit("// text now\n" + src)
    assert hit and _values(r) == [5] * 4


SAMPLE = r'''// a sample with the lexer's hard cases
#include "gentype.h"
#define STR(x) #x
#define F(a, b) ((a) /* first */ + (b))   // a comment after a directive
#define LONG 1 + \
             2
__constant char s[] = "a // not a comment /* nor this */", t[] = "\"quoted\" \\";
__constant char c = '\'', d = '"', e = '/';
#if 0
don't /* stop here
#endif
__kernel void k(__global int *o) {
    int i = get_global_id(0) / 2;   /* halves */
    o[i] = F(i, LONG) - -1 + sizeof(STR(a  +  b));
}
'''


def test_edits_with_the_same_normal_form_give_clang_the_same_tokens():
    """Random edits of a source; whenever the normal form stays the same, clang's own lexer
    must see the same tokens (no edit that changes the program can hit)."""
    import random
    import clang.cindex as ci

    index = ci.Index.create()

    def tokens(src):
        tu = index.parse("t.cl", args=["-x", "cl"], unsaved_files=[("t.cl", src)], options=1)
        f = tu.get_file("t.cl")
        whole = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(tu, f, 0),
                                              ci.SourceLocation.from_offset(tu, f, len(src.encode())))
        return [t.spelling.replace("\\\n", "") for t in tu.get_tokens(extent=whole)
                if t.kind != ci.TokenKind.COMMENT]

    rng = random.Random(15)
    base, want = sourcekey.normal_form(SAMPLE), tokens(SAMPLE)
    pieces = ['"', "'", "/", "*", "\n", "\\", " ", "\t", "#", "<", ">", "/*", "*/", "//", "\\\n", "x"]
    same = 0
    for _ in range(400):
        t = SAMPLE
        for _ in range(rng.randint(1, 2)):
            p = rng.randrange(len(t) + 1)
            t = t[:p] + rng.choice(pieces) + t[p:] if rng.random() < 0.6 else t[:p] + t[p + 1:]
        if t != SAMPLE and sourcekey.normal_form(t) == base:
            same += 1
            assert tokens(t) == want, repr(t)
    assert same > 20          # the edits did reach comments and whitespace
