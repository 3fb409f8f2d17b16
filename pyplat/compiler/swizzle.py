"""Vector component accessors (swizzles), taken from clang's AST.

libclang shows ``v.xyz`` (an ExtVectorElementExpr) only as an UNEXPOSED_EXPR and does not
expose its accessor, and the source text is no substitute: the accessor may be written in a
macro body defined in an included header, chosen under ``#if``/``#else``, pasted with ``##``,
spread over nested macros.  clang's printer does expose it: printing a function definition
(``clang_getCursorPrettyPrinted``) prints its AST after preprocessing, each member and
vector component accessor spelled as clang resolved it.  In that printing the accessors of
member and swizzle expressions appear in the order in which their expressions complete, i.e.
in post-order of the expression tree, which is the order the front end builds its ``member``
and ``swz`` nodes in.  ``printed_accessors`` lists them; the front end pairs them with its
nodes one to one and checks each member name on the way.
"""
import re

# Prefix of the vector typedefs kernels/pyplat_opencl.h declares first, so that clang types a
# swizzle's result with them (it takes the first typedef of the result's vector type)
SWIZZLE_TYPE_PREFIX = "__pyplat_swizzle_"

_XYZW = {"x": 0, "y": 1, "z": 2, "w": 3}
_RGBA = {"r": 0, "g": 1, "b": 2, "a": 3}


def parse_accessor(name, count):
    """Indices selected by accessor `name` on a vector of `count` components, or None."""
    n4 = 4 if count == 3 else count
    if name in ("lo", "hi", "even", "odd"):
        half = n4 // 2
        if name == "lo":
            idx = list(range(half))
        elif name == "hi":
            idx = list(range(half, n4))
        elif name == "even":
            idx = list(range(0, n4, 2))
        else:
            idx = list(range(1, n4, 2))
        return [min(i, count - 1) for i in idx]
    if name[0] in "sS" and len(name) > 1:
        try:
            idx = [int(ch, 16) for ch in name[1:]]
        except ValueError:
            return None
    elif all(ch in _XYZW for ch in name):
        idx = [_XYZW[ch] for ch in name]
    elif all(ch in _RGBA for ch in name):
        idx = [_RGBA[ch] for ch in name]
    else:
        return None
    if any(i >= count for i in idx) or len(idx) not in (1, 2, 3, 4, 8, 16):
        return None
    return idx


# clang's printing is plain C: strings and character literals (escaped), pp-numbers such as
# 1.F, .5, 1.0E+3, 0x1.8p+1, identifiers, punctuators.  No comments, no directives.
_TOK = re.compile(r"""\s*(?:
    (?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<id>[A-Za-z_$]\w*)
  | (?P<op>->|\.\.\.|\S)
)""", re.X | re.S)


def _tokens(text):
    out, pos, n = [], 0, len(text)
    while pos < n:
        m = _TOK.match(text, pos)
        if m is None or m.lastgroup is None:
            break
        out.append((m.lastgroup, m.group(m.lastgroup)))
        pos = m.end()
    return out


def printed_accessors(text):
    """Names after `.` and `->` in clang's printing of a function, in text order; the
    designators of initialiser lists (`{.x = 1, [2].y = 3}`) are not accessors and are left out."""
    toks = _tokens(text)
    out, i, n = [], 0, len(toks)
    while i < n:
        kind, v = toks[i]
        prev = toks[i - 1][1] if i else None
        if kind == "op" and v in (".", "[") and prev in ("{", ","):
            # a designator: no expression starts with '.' or '[' after '{' or ','
            depth = 0
            while i < n and not (depth == 0 and toks[i][1] == "="):
                if toks[i][1] == "[":
                    depth += 1
                elif toks[i][1] == "]":
                    depth -= 1
                i += 1
            continue
        if kind == "op" and v in (".", "->") and i + 1 < n and toks[i + 1][0] == "id":
            out.append(toks[i + 1][1])
            i += 2
            continue
        i += 1
    return out


_SRC_TOK = re.compile(r"""\s*(?:
    (?P<id>[A-Za-z_]\w*)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<op>->|\+\+|--|\#\#|<<=|>>=|<<|>>|&&|\|\||[<>=!&|^+\-*/%]=|\S)
)""", re.X | re.S)


def tokenize(text, pos=0, end=None):
    """(token, offset) pairs of C text (clang's printing of a function: printed.for_headers)."""
    end = len(text) if end is None else end
    out = []
    while pos < end:
        m = _SRC_TOK.match(text, pos)
        if not m or m.end() == pos or m.lastgroup is None:
            break
        out.append((m.group(m.lastgroup), m.start(m.lastgroup)))
        pos = m.end()
    return out


class AmbiguousAccessors(Exception):
    """More than one pairing of accessors with expressions fits."""


def pair(items, names):
    """Pair accessor names (printed_accessors) with the front end's nodes in post-order.
    items:
      ("member", name)
      ("swz", count, width, base): a swizzle of a vector of `count` components giving `width`
          (1: a scalar); base says whether clang sees its base as an lvalue: True, False, or
          the index of the swizzle item it is a swizzle of (an lvalue when that one is);
      ("maybe", count, width, base, inner): a swizzle of item `inner`, or the lvalue-to-rvalue
          load of it, which clang does not tell apart here (a vector literal's swizzle in a
          macro body). A load takes no name, and only loads an lvalue: a swizzle of an
          lvalue without repeated components; a swizzle is never of a load.
    Returns the names, one per item (None for a load), None when no pairing fits, and raises
    AmbiguousAccessors when several do."""
    n, m = len(items), len(names)
    chosen = [None] * n
    found = []

    def fits(item, name):
        if item[0] == "member":
            return item[1] == name
        idx = parse_accessor(name, item[1])
        return idx is not None and len(idx) == item[2]

    def lvalue(k):
        if chosen[k] is None:           # a load: an rvalue
            return False
        base = items[k][3]
        base_lv = lvalue(base) if isinstance(base, int) and not isinstance(base, bool) else base
        # clang: repeated components make an rvalue; .lo/.hi/.even/.odd never count as
        # repeated (.hi of a 3-vector reads its last component twice here)
        if chosen[k] in ("lo", "hi", "even", "odd"):
            return base_lv
        idx = parse_accessor(chosen[k], items[k][1])
        return base_lv and len(set(idx)) == len(idx)

    def walk(i, j):
        if len(found) > 1:
            return
        if i == n:
            if j == m:
                found.append(list(chosen))
            return
        item = items[i]
        base = item[3] if item[0] != "member" else True
        # clang never loads a swizzle's base: a load cannot be one
        of_load = isinstance(base, int) and not isinstance(base, bool) and chosen[base] is None
        if j < m and fits(item, names[j]) and not of_load:
            chosen[i] = names[j]
            walk(i + 1, j + 1)
        if item[0] == "maybe" and lvalue(item[4]):
            chosen[i] = None
            walk(i + 1, j)
        chosen[i] = None

    walk(0, 0)
    if len(found) > 1:
        raise AmbiguousAccessors()
    return found[0] if found else None
