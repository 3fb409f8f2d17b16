"""Our typed tree: what the front end builds from libclang, once.

Expressions and statements are `Node`s: `op` names the construct, `type` is
one of pyplat.compiler.types (already resolved: every implicit conversion of
the source is an explicit node here), `kids` are sub-nodes, `lv` says whether
the node denotes an lvalue, `val` carries op-specific data and `cur` keeps the
libclang cursor for error locations only.

Expression ops: const var load decay conv astype swz member index vindex deref
addr bin assign cassign unary incdec land lor cond call builtin veclit initlist
comma zero void func.
Statement ops: block decl expr if for while do break continue return nop.
"""


class Node:
    __slots__ = ("op", "type", "kids", "lv", "cur", "val")

    def __init__(self, op, type=None, kids=(), lv=False, cur=None, val=None):
        self.op, self.type, self.kids, self.lv, self.cur, self.val = op, type, list(kids), lv, cur, val

    def __repr__(self):
        return "Node(%s, %s, %r)" % (self.op, self.type, self.val)


class Var:
    """A variable: private local, parameter, kernel-scope __local, program-scope __constant."""
    __slots__ = ("name", "type", "storage", "init", "index", "restrict", "const", "volatile", "cur")

    def __init__(self, name, type, storage="private", cur=None):
        self.name, self.type, self.storage, self.cur = name, type, storage, cur
        self.init = None
        self.index = None
        self.restrict = self.const = self.volatile = False


class Func:
    __slots__ = ("name", "ret", "params", "body", "is_kernel", "cur", "attributes", "reqd",
                 "local_vars", "param_info")

    def __init__(self, name, ret, params, body, is_kernel, cur):
        self.name, self.ret, self.params, self.body, self.is_kernel, self.cur = \
            name, ret, params, body, is_kernel, cur
        self.attributes = ""
        self.reqd = (0, 0, 0)
        self.local_vars = []        # kernel-scope __local variables
        self.param_info = []        # per param: dict(type_name, addrspace, const, restrict, volatile)


def source_position(cur):
    """(file, line, column) of a libclang cursor's place in the source; ("<source>", 0, 0) where
    it has none (check findings and line tables name positions this way)."""
    try:
        loc = cur.location
        return (loc.file.name if loc.file else "<source>"), loc.line, loc.column
    except Exception:
        return "<source>", 0, 0


class CompileError(Exception):
    """A lowering error at a source location (cursor or (file, line, col))."""

    def __init__(self, msg, cur=None):
        super().__init__(msg)
        self.msg, self.cur = msg, cur
