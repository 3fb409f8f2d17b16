"""Program-scope variables for the front end: one Var per variable (however many times it is
declared), and their constant initialisers folded from clang's AST.

An initialiser becomes nested Python values (lowering/module.py packs them into bytes): a dict
{member index: value} for a brace list of an array or struct (members left out are zero and
never materialised), a list of bytes for a string, a list of numbers for a vector: vector
literals ``(float4)(1, 2, 3, 4)`` (clang: a compound literal of an init list, whose elements may
themselves be vectors, which are flattened in order: ``(float4)((float2)(1, 2), 3, 4)``); vector splats ``(int2)(1)`` (clang: a cast of a scalar
to a vector type); scalars, which clang evaluates (clang_Cursor_Evaluate) and which are converted
to the type they initialise as C converts them.
"""
import math
import struct as _struct

import clang.cindex as ci
from clang.cindex import CursorKind as CK

from . import clangapi as capi
from . import limits
from . import types as T
from .tree import Var, CompileError

_WRAPPERS = (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR, CK.CSTYLE_CAST_EXPR)


def _kids(c):
    return [x for x in c.get_children() if x.kind.is_expression()]


def program_var(fe, ref):
    """The Var of the program-scope variable that `ref` (any of its declarations) declares.
    Its cursor is the definition when this unit has one, else (an `extern` declaration whose
    definition is in another compilation unit) the declaration, and it has no initialiser."""
    canon = ref.canonical
    v = fe.vars.get(canon.hash)
    if v is not None:
        return v
    d = ref.get_definition()
    decl = d if d is not None else ref
    t = fe.ty(decl.type)
    v = Var(decl.spelling, t, "constant", decl)
    check_size(v, decl)
    init = None
    kids = _kids(decl)
    if kids and (not t.is_array or kids[-1].kind in (CK.INIT_LIST_EXPR, CK.STRING_LITERAL)):
        init = kids[-1]
    v.init = const_init(fe, init, t) if init is not None else None
    fe.vars[canon.hash] = v
    fe.vars[ref.hash] = v
    fe.globals.append(v)
    return v


def check_size(v, cur):
    """A __constant variable is a constant buffer of its own (limits.py): none may be larger than
    CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE. Checked before its initialiser is looked at."""
    if v.type.size > limits.MAX_CONSTANT_BUFFER_SIZE:
        raise CompileError("__constant variable '%s' needs %d bytes, more than the device's "
                           "CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE (%d bytes)"
                           % (v.name, v.type.size, limits.MAX_CONSTANT_BUFFER_SIZE), cur)


def is_program_scope(cursor):
    return cursor is not None and cursor.kind == CK.VAR_DECL and \
        cursor.semantic_parent is not None and cursor.semantic_parent.kind == CK.TRANSLATION_UNIT


def is_static(cursor):
    return cursor.storage_class == ci.StorageClass.STATIC


def const_init(fe, c, t):
    """The value of constant initialiser `c` for a variable of type `t` (our type)."""
    if t.is_array or t.is_struct:
        c = _unwrap(c)
        if c.kind == CK.STRING_LITERAL and t.is_array:
            return list(_string_bytes(fe, c, t))
        if c.kind != CK.INIT_LIST_EXPR:
            raise CompileError("initializer of a program-scope variable is not a constant", c)
        return _braced(fe, list(_kids(c)), t)
    if t.is_vector:
        return _vector(fe, c, t)
    return _scalar(c, t)


def _member(t, i):
    """The type of element or field i of an array or struct."""
    return t.elem if t.is_array else list(t.fields.values())[i][1]


def _union(t):
    return t.is_struct and t.union


def _braced(fe, items, t, elided=False):
    """The members of aggregate t from the initialisers `items` (a list, consumed) of its brace
    list, as a dict {member index: value} (a member not in it is not initialised: zero; of a union,
    one member at most), never materialising the members left out (`int a[1 << 20] = {1}` is one
    entry): positional ones in order, designated ones (`.field =`, `[index] =`, chains of them:
    clang gives an expression of type void holding the designators, then the value) where they
    point, the next positional one after them. elided: t is a member written without its own
    braces (C's brace elision): it takes items until it is full or a designator comes (which
    belongs to the enclosing list)."""
    out = {}
    count = t.count if t.is_array else len(t.fields)
    pos = 0
    while items:
        x = items[0]
        full = pos >= count or (_union(t) and pos > 0)
        if elided and (full or _designated(x)):
            break
        items.pop(0)
        if _designated(x):
            parts = list(x.get_children())
            pos = _store(fe, out, t, parts[:-1], parts[-1]) + 1
        elif not full:                 # (excess initialisers: clang has warned)
            out[pos] = _element(fe, x, _member(t, pos), items)
            pos += 1
    return out


def _designated(x):
    return x.kind == CK.UNEXPOSED_EXPR and x.type.kind == ci.TypeKind.VOID


def _element(fe, x, mt, rest):
    """One member's value from initialiser x; an aggregate member whose initialiser is not a
    brace list (nor an expression of its own type) takes its items from x and `rest`."""
    if (mt.is_array or mt.is_struct) and _unwrap(x).kind not in (CK.INIT_LIST_EXPR, CK.STRING_LITERAL) \
            and fe.ty(x.type) != mt:
        rest.insert(0, x)
        return _braced(fe, rest, mt, elided=True)
    return const_init(fe, x, mt)


def _store(fe, out, t, designators, value):
    """Stores `value` at the member the designator chain points to; returns the index of the
    first designator's member in `out`."""
    d = designators[0]
    if d.kind == CK.MEMBER_REF:
        names = list(t.fields)
        i = names.index(d.spelling) if t.is_struct and d.spelling in names else None
    else:
        i = capi.evaluate(d) if t.is_array else None
    if i is None or not 0 <= i < (t.count if t.is_array else len(t.fields)):
        raise CompileError("unsupported designator in the initializer of a program-scope variable", d)
    mt = _member(t, i)
    inner = out.get(i)
    if _union(t):                      # one member holds the value: the others stay out
        out.clear()
    if len(designators) > 1:
        if isinstance(inner, list):    # a string's bytes
            inner = dict(enumerate(inner))
        if not isinstance(inner, dict) or not (mt.is_array or mt.is_struct):
            inner = {}
        out[i] = inner
        _store(fe, out[i], mt, designators[1:], value)
    else:
        out[i] = const_init(fe, value, mt)
    return i


def _unwrap(c):
    while c.kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR) and len(_kids(c)) == 1:
        c = _kids(c)[0]
    if c.kind == CK.COMPOUND_LITERAL_EXPR:
        return _unwrap(_kids(c)[-1])
    return c


def _vector(fe, c, t):
    """Elements of a vector-typed initialiser: a vector literal, a splat or a braced list."""
    while True:
        if c.kind == CK.COMPOUND_LITERAL_EXPR or c.kind == CK.INIT_LIST_EXPR:
            break
        kids = _kids(c)
        if c.kind not in _WRAPPERS or len(kids) != 1:
            return fold(fe, c, t)     # arithmetic on vectors: the typed tree, evaluated
        inner = kids[0]
        it = fe.ty(inner.type)
        if it is not None and it.is_scalar:      # a scalar converted to the vector: a splat
            return [_scalar(inner, t.elem)] * t.count
        c = inner
    if c.kind == CK.COMPOUND_LITERAL_EXPR:
        c = _unwrap(c)
    out = []
    for x in _kids(c):
        xt = fe.ty(x.type)
        if xt is not None and xt.is_vector:
            out += _vector(fe, x, xt)
        else:
            out.append(_scalar(x, t.elem))
    out += [0] * (t.count - len(out))
    return out[:t.count]


def _scalar(c, t):
    v = capi.evaluate(c)
    if v is None and t is T.SAMPLER:
        # clang evaluates no sampler-typed expression: the integer under its conversion to
        # sampler_t (the CLK_* bits) is the value
        v = capi.evaluate(_unwrap(c))
    if v is None:
        raise CompileError("initializer of a program-scope variable is not a constant", c)
    return convert(v, t)


def convert(v, t):
    """A number converted to scalar type t as C converts it (bool: 0/1, float -> integer: towards
    zero; the packer keeps the low bits of integers)."""
    if t is None or not t.is_scalar:
        return v
    if t.is_bool:
        return 1 if v else 0
    if t.is_float:
        return float(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return 0
        return int(v)
    return v


def _string_bytes(fe, c, t):
    """The bytes of a string literal initialising a char array: its characters and the
    terminating zero as far as they fit (the rest of the array is zero: not materialised)."""
    return (fe.string_data(c) + b"\0")[:t.count]


def exported_variables(fe):
    """Compile-only mode: the program-scope __constant variables this unit defines with external
    linkage (not static, not only declared), which other units may declare `extern`."""
    out = []
    for c in fe.tu.cursor.get_children():
        if c.kind == CK.VAR_DECL and c.is_definition() and not is_static(c) \
                and c.location.file is not None and c.location.file.name != fe.header \
                and c.type.get_address_space() == 3:
            out.append(c)
    return out


# ----------------------------------------------------------------------------- folding
_FLOAT_FORMAT = {16: "<e", 32: "<f", 64: "<d"}
_CMP = {"<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
        ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def fold(fe, c, t):
    """A constant expression clang cannot evaluate (vector arithmetic, e.g.
    `(float4)(1, 2, 3, 4) * 2.0f`): its typed tree (the front end's, as for code) evaluated
    here with OpenCL C's rules (each result rounded or wrapped to its type; vector comparisons
    give -1 / 0). A node that is no constant (a variable, a call) is the build error."""
    saved = fe.accessors, fe.attributed, fe.maybe_loads
    fe.accessors, fe.attributed, fe.maybe_loads = [], [], set()
    try:
        n = fe.rvalue(fe.expr(c))
        if any(x.op == "swz" for x in fe.accessors):    # their components: from clang's AST
            fe.resolve_accessors(c, capi.pretty_printed(c), fe.accessors)
        v = _eval(n)
    finally:
        fe.accessors, fe.attributed, fe.maybe_loads = saved
    if t.is_vector:
        return v if isinstance(v, list) else [convert(v, t.elem)] * t.count
    return convert(v, t)


def _elems(v, t):
    return v if isinstance(v, list) else [v] * (t.count if t.is_vector else 1)


def _wrap(x, t):
    """x as a value of scalar type t: floats rounded to t's precision, integers wrapped."""
    if t.is_float:
        try:
            return _struct.unpack(_FLOAT_FORMAT[t.bits], _struct.pack(_FLOAT_FORMAT[t.bits], x))[0]
        except OverflowError:
            return math.copysign(math.inf, x)
    if t.is_bool:
        return 1 if x else 0
    x = int(x) & ((1 << t.bits) - 1)
    return x - (1 << t.bits) if t.signed and x >> (t.bits - 1) else x


def _eval(n):
    op, t = n.op, n.type
    et = t.elem if t is not None and t.is_vector else t
    if op == "const":
        return n.val
    if op == "zero":
        return [0] * t.count if t.is_vector else 0
    if op == "conv":
        v = _eval(n.kids[0])
        if t.is_vector:
            return [_wrap(convert(x, et), et) for x in _elems(v, t)]
        return _wrap(convert(v, t), t)
    if op == "veclit":
        out = []
        for k in n.kids:
            v = _eval(k)
            out += v if isinstance(v, list) else [_wrap(convert(v, et), et)]
        return out
    if op == "load" and n.kids[0].op == "var" and n.kids[0].val.storage == "constant" \
            and n.kids[0].val.init is not None and (t.is_scalar or t.is_vector):
        return n.kids[0].val.init          # another __constant variable's value (clang allows it)
    if op == "swz":
        v = _elems(_eval(n.kids[0]), n.kids[0].type)
        picked = [v[i] for i in n.val]
        return picked if t.is_vector else picked[0]
    if op == "unary":
        v = _eval(n.kids[0])
        f = {"-": lambda x: -x, "~": lambda x: ~int(x), "!": lambda x: int(not x)}[n.val]
        if isinstance(v, list):
            if n.val == "!":
                return [-1 if not x else 0 for x in v]
            return [_wrap(f(x), et) for x in v]
        return _wrap(f(v), t)
    if op == "bin":
        a, b = (_eval(k) for k in n.kids)
        vec = isinstance(a, list) or isinstance(b, list)
        if vec:
            count = t.count
            a = a if isinstance(a, list) else [a] * count
            b = b if isinstance(b, list) else [b] * count
            ot = n.kids[0].type.elem if n.kids[0].type.is_vector else n.kids[0].type
            return [_binop(n, x, y, et, ot, True) for x, y in zip(a, b)]
        return _binop(n, a, b, t, n.kids[0].type, False)
    raise CompileError("initializer of a program-scope variable is not a constant", n.cur)


def _binop(n, a, b, t, operand_type, vector):
    op = n.val
    if op in _CMP:
        r = _CMP[op](a, b)
        return (-1 if r else 0) if vector else int(r)
    if op in ("/", "%") and not operand_type.is_float and b == 0:
        raise CompileError("division by zero in the initializer of a program-scope variable", n.cur)
    if op == "+":
        r = a + b
    elif op == "-":
        r = a - b
    elif op == "*":
        r = a * b
    elif op == "/":
        r = a / b if operand_type.is_float else _idiv(a, b)
    elif op == "%":
        r = math.fmod(a, b) if operand_type.is_float else a - b * _idiv(a, b)
    elif op in ("<<", ">>"):
        s = int(b) & (operand_type.bits - 1)     # the shift count masked, as OpenCL C says
        r = a << s if op == "<<" else a >> s
    elif op in ("&", "|", "^"):
        r = {"&": a & b, "|": a | b, "^": a ^ b}[op]
    else:
        raise CompileError("initializer of a program-scope variable is not a constant", n.cur)
    return _wrap(r, t)


def _idiv(a, b):
    """C's integer division: the quotient truncated towards zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q
