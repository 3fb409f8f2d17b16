"""Vector component accessors (swizzles).

libclang shows ``v.xyz`` only as an UNEXPOSED_EXPR; the accessor text is not
exposed.  We recover it in two ways:

1. fast path: the spelling location of the end of the expression's extent; the
   source text just before it must read ``.accessor`` (plain code and swizzles
   written in macro arguments);
2. macro bodies: the expression's start expands from a macro invocation in the
   file.  We re-expand that invocation with a small preprocessor over the
   program's own ``#define`` lines and list its ``.name`` / ``->name`` accessors
   in text order; they correspond one to one, in order, to the member and
   swizzle expressions of that invocation taken in post-order (which is text
   order of the accessors).
"""
import re

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


_TAIL = re.compile(r"(?:\.|->)\s*([A-Za-z_]\w*)$")


def accessor_before(text, offset):
    """The accessor name if text[:offset] ends with `.name` or `->name`."""
    m = _TAIL.search(text, max(0, offset - 80), offset)
    return m.group(1) if m else None


# ---------------------------------------------------------------- mini preprocessor
_TOK = re.compile(r"""\s*(?:
    (?P<id>[A-Za-z_]\w*)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<op>->|\+\+|--|\#\#|<<=|>>=|<<|>>|&&|\|\||[<>=!&|^+\-*/%]=|\S)
)""", re.X | re.S)


def tokenize(text, pos=0, end=None):
    end = len(text) if end is None else end
    out = []
    while pos < end:
        m = _TOK.match(text, pos)
        if not m or m.end() == pos or m.lastgroup is None:
            break
        out.append((m.group(m.lastgroup), m.start(m.lastgroup)))
        pos = m.end()
    return out


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)]*\))?(.*)$", re.M)


def collect_defines(text):
    text = text.replace("\\\n", " ")
    macros = {}
    for m in _DEFINE.finditer(text):
        params = None
        if m.group(2) is not None:
            params = [p.strip() for p in m.group(2)[1:-1].split(",") if p.strip()]
        body = [t for t, _ in tokenize(re.sub(r"/\*.*?\*/|//.*", " ", m.group(3)))]
        macros[m.group(1)] = (params, body)
    return macros


def _collect_args(toks, i):
    """toks[i] == '('; return (list of arg token lists, index after ')')."""
    depth, args, cur = 0, [], []
    j = i
    while j < len(toks):
        t = toks[j]
        if t in ("(", "[", "{"):
            depth += 1
            if depth == 1:
                j += 1
                continue
        elif t in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                args.append(cur)
                return args, j + 1
        elif t == "," and depth == 1:
            args.append(cur)
            cur = []
            j += 1
            continue
        cur.append(t)
        j += 1
    return args, j


def expand(toks, macros, hide=frozenset()):
    out, i = [], 0
    while i < len(toks):
        t = toks[i]
        m = macros.get(t)
        if m is not None and t not in hide:
            params, body = m
            if params is None:
                out += expand(body, macros, hide | {t})
                i += 1
                continue
            if i + 1 < len(toks) and toks[i + 1] == "(":
                args, j = _collect_args(toks, i + 1)
                if params == [] and args == [[]]:
                    args = []
                amap = dict(zip(params, args))
                sub, k = [], 0
                while k < len(body):
                    b = body[k]
                    if b == "#" and k + 1 < len(body) and body[k + 1] in amap:
                        sub.append('"%s"' % " ".join(amap[body[k + 1]]))
                        k += 2
                        continue
                    if b == "##" and sub and k + 1 < len(body):
                        nxt = body[k + 1]
                        nxt_toks = amap.get(nxt, [nxt])
                        sub[-1] = sub[-1] + (nxt_toks[0] if nxt_toks else "")
                        sub += nxt_toks[1:]
                        k += 2
                        continue
                    if b in amap:
                        sub += expand(amap[b], macros, hide)
                    else:
                        sub.append(b)
                    k += 1
                out += expand(sub, macros, hide | {t})
                i = j
                continue
        out.append(t)
        i += 1
    return out


def invocation_accessors(text, offset, macros):
    """Expand the macro invocation starting at text[offset]; return (accessor names, end offset)."""
    toks = tokenize(text, offset, min(len(text), offset + 20000))
    if not toks or toks[0][0] not in macros:
        return None, offset
    name = toks[0][0]
    params, _ = macros[name]
    n = 1
    if params is not None:
        if len(toks) < 2 or toks[1][0] != "(":
            return None, offset
        depth = 0
        for n in range(1, len(toks)):
            if toks[n][0] == "(":
                depth += 1
            elif toks[n][0] == ")":
                depth -= 1
                if depth == 0:
                    break
        n += 1
    inv = [t for t, _ in toks[:n]]
    end = toks[n - 1][1] + len(toks[n - 1][0])
    ex = expand(inv, macros)
    acc = [ex[k + 1] for k in range(len(ex) - 1)
           if ex[k] in (".", "->") and re.match(r"[A-Za-z_]", ex[k + 1])]
    return acc, end
