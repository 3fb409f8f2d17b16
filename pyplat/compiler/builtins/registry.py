"""The builtin registry: OpenCL C builtin name -> the function that lowers a call of it.

Chapter modules register their lowerings next to the code with `@builtin("mix", "step")` (exact
names) or `@family(r"convert_\\w+")` (a name pattern, for families such as convert_<type>[_sat]
[_rtX] or vloadN). A lowering is called as `fn(g, n, name)`: g the function generator, n the
call node (n.kids the arguments, n.type the result type), name the builtin's name without its
native_/half_ prefix. This module imports none of the chapter modules.
"""
import re

from ..tree import CompileError

# native_sin and half_sin lower like sin (the spec lets them be as precise as the full function)
PRECISION_PREFIXES = ("native_", "half_")


class Registration:
    """One registered name or pattern, with where it is defined (a module or a .cl file)."""
    __slots__ = ("name", "pattern", "lower", "origin")

    def __init__(self, name, pattern, lower, origin):
        self.name, self.pattern, self.lower, self.origin = name, pattern, lower, origin

    def __repr__(self):
        return "Registration(%s, %s)" % (self.name or self.pattern.pattern, self.origin)


class DuplicateBuiltin(Exception):
    pass


class Registry:
    def __init__(self):
        self.by_name = {}          # name -> Registration
        self.families = []         # [Registration] with a pattern, tried in registration order

    def add(self, name, lower, origin):
        old = self.by_name.get(name)
        if old is not None:
            raise DuplicateBuiltin("builtin '%s' registered twice (%s and %s)" % (name, old.origin, origin))
        self.by_name[name] = Registration(name, None, lower, origin)

    def add_family(self, pattern, lower, origin):
        rx = re.compile(pattern)
        if any(f.pattern.pattern == pattern for f in self.families):
            raise DuplicateBuiltin("builtin family '%s' registered twice" % pattern)
        self.families.append(Registration(None, rx, lower, origin))

    def find(self, name):
        """The Registration lowering `name` (prefix already removed), or None."""
        r = self.by_name.get(name)
        if r is not None:
            return r
        for f in self.families:
            if f.pattern.fullmatch(name):
                return f
        return None


REGISTRY = Registry()


def builtin(*names):
    """Decorator: register the decorated lowering for each of `names`."""
    def register(fn):
        for name in names:
            REGISTRY.add(name, fn, fn.__module__)
        return fn
    return register


def family(pattern):
    """Decorator: register the decorated lowering for every name matching the regular
    expression `pattern` (whole name)."""
    def register(fn):
        REGISTRY.add_family(pattern, fn, fn.__module__)
        return fn
    return register


def canonical(name):
    for pre in PRECISION_PREFIXES:
        if name.startswith(pre):
            name = name[len(pre):]
    return name


def lower(g, n):
    """Lower the builtin call n (op "builtin", n.val its name): the LLVM value, or None for
    builtins returning void."""
    name = canonical(n.val)
    r = REGISTRY.find(name)
    if r is None:
        raise CompileError("builtin function '%s' is not supported yet" % n.val, n.cur)
    return r.lower(g, n, name)
