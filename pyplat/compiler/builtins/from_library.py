"""Builtins written in OpenCL C (kernels/builtins/*.cl; pyplat/compiler/library.py): each name
the library defines is registered here, origin its .cl file, and lowered to a call of the
definition for the result type (scalar arguments splatted first); library.link puts the
definitions into the program's module before optimisation."""
from .. import library
from ..types import PTR_LL
from .helpers import shaped
from .registry import REGISTRY


def call_definition(g, n, name):
    t = n.type
    args = shaped(g, n)
    fn = g.mg.intrinsic(library.symbol(name, t, g.mg.fast), t.llvm(), [PTR_LL] + [a.type for a in args])
    return g.b.call(fn, [g.wi] + args)   # the hidden work-item parameter every function takes


for _name, _file in sorted(library.builtin_names().items()):
    REGISTRY.add(_name, call_definition, "kernels/builtins/" + _file)
