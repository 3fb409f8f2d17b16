"""Parameters declared as arrays, for the front end: C99 6.7.5.3p7 adjusts a parameter declared
as an array of T to a pointer to T (`float v[3]`, `float m[][3]` -> `float (*m)[3]`, `global
float v[]`). clang does so, but libclang shows clang's decayed type as the array written, in the
parameter's declaration and in every expression typed with it, so the front end adjusts each
(docs/compiler.md, "Array parameters and samplers")."""
from clang.cindex import TypeKind as TK

from . import types as T
from .clangapi import ADDRSPACE

ARRAY_KINDS = (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY, TK.VARIABLEARRAY, TK.DEPENDENTSIZEDARRAY)


def param_type(ty, ct):
    """Our type of a parameter of clang type ct (ty: the front end's type conversion)."""
    if ct.kind in ARRAY_KINDS:
        return decayed(ty, ct)
    return ty(ct)


def decayed(ty, ct):
    """The pointer array type ct decays to: its element's type, address space and constness
    (the size, `static` and a `[const N]` qualifier change nothing of the value)."""
    et = ct.element_type
    return T.Pointer(ty(et), ADDRSPACE.get(et.get_address_space(), "private"), et.is_const_qualified())


def adjusted(t, n):
    """The type of an expression whose type is its operand n's (`v = w`, `v += k`, `v++`, `v + k`,
    `(x, v)`, `c ? v : w`): clang's t, except where that is a decayed parameter type shown as its array and
    n the parameter, a pointer. (Not for `*m` of `float m[][3]`: a true array, its operand a
    pointer.)"""
    return n.type if t.is_array and n.type.is_pointer else t


def restrict_param(ch, pt):
    """Whether parameter ch (clang type pt) is a restrict pointer: `float *restrict a`, or
    `float a[restrict]`, whose qualifier libclang drops from the array's type: read from the
    declaration's tokens, the first brackets after its name (a macro there hides it: the
    qualifier only informs kernel metadata and aliasing)."""
    if pt.kind not in ARRAY_KINDS:
        return pt.is_restrict_qualified()
    toks = [t.spelling for t in ch.get_tokens()]
    if ch.spelling not in toks:
        return False
    start = toks.index(ch.spelling)
    if "[" not in toks[start:]:
        return False
    i = toks.index("[", start)
    inside = toks[i + 1:toks.index("]", i)] if "]" in toks[i:] else []
    return "restrict" in inside or "__restrict" in inside
