"""Front end: libclang cursors -> our typed tree, in a single walk.

Typing happens here: clang has already type-checked the program; we read each
expression's type once, and turn libclang's UNEXPOSED_EXPR (implicit casts,
swizzles) into explicit nodes whose meaning follows from source and target types.
"""
import re
import clang.cindex as ci
from clang.cindex import CursorKind as CK, TypeKind as TK

from . import types as T
from . import clangapi as capi
from . import params as PA
from .clangapi import ADDRSPACE
from . import swizzle as SW
from . import attributes as AT
from . import printed as PR
from . import progvars as PV
from .tree import Node, Var, Func, CompileError
from .swizzle import SWIZZLE_TYPE_PREFIX

_SCALARS = {
    TK.BOOL: T.BOOL, TK.CHAR_S: T.CHAR, TK.SCHAR: T.CHAR, TK.CHAR_U: T.UCHAR, TK.UCHAR: T.UCHAR,
    TK.SHORT: T.SHORT, TK.USHORT: T.USHORT, TK.INT: T.INT, TK.UINT: T.UINT, TK.LONG: T.LONG,
    TK.ULONG: T.ULONG, TK.LONGLONG: T.LONG, TK.ULONGLONG: T.ULONG, TK.HALF: T.HALF,
    TK.FLOAT: T.FLOAT, TK.DOUBLE: T.DOUBLE, TK.VOID: T.VOID,
}
EVENT_T = T.Scalar("event_t", 64, False)
_SCALARS[TK.OCLEVENT] = EVENT_T
_SCALARS[TK.OCLSAMPLER] = T.SAMPLER
if hasattr(TK, 'FLOAT16'):
    _SCALARS[TK.FLOAT16] = T.HALF
_LITERALS = (CK.INTEGER_LITERAL, CK.FLOATING_LITERAL, CK.CHARACTER_LITERAL, CK.CXX_UNARY_EXPR,
             CK.CXX_BOOL_LITERAL_EXPR)
BARRIERS = ("barrier", "work_group_barrier", "wait_group_events")   # the last: async copies done


def _strip_quals(s):
    s = re.sub(r"\b(const|volatile|restrict|__restrict|__global|global|__constant|constant|__local|local|"
               r"__private|private|__generic|generic|__read_only|__write_only|__read_write)\b", " ", s)
    s = re.sub(r"\s+", " ", s).strip()
    s = s.replace(" *", "*")
    for long_, short in (("unsigned char", "uchar"), ("unsigned short", "ushort"), ("unsigned int", "uint"),
                         ("unsigned long", "ulong"), ("signed char", "char")):
        s = re.sub(r"\b%s\b" % long_, short, s)
    return s


class Frontend:
    def __init__(self, tu):
        self.tu = tu
        self.tcache = {}
        self.rcache = {}
        self.vars = {}                  # decl hash -> Var
        self.funcs = {}                 # decl hash -> Func
        self.func_order = []
        self.globals = []               # program-scope variables in use
        self.accessors = []             # member/swizzle nodes of the function being built, post-order
        self.maybe_loads = set()        # ids of those that may be a load instead (swizzle.pair)
        self.cur_func = None
        self.cur_decl = None            # its cursor, its printing (made on demand), its for headers
        self.cur_printed = None
        self.for_headers = None
        self.attributed = []            # the statements under attributes, pre-order
        self.externs = {}               # name -> Func declared but not defined here (link time)
        self.header = None              # our header: its declarations are builtins
        self.main_file = "<source>"

    # ------------------------------------------------------------------ types
    def ty(self, ct):
        sp = ct.spelling
        t = self.tcache.get(sp)
        if t is None:
            t = self._conv(ct.get_canonical(), ct)
            self.tcache[sp] = t
        return t

    def _conv(self, ct, orig):
        k = ct.kind
        s = _SCALARS.get(k)
        if s is not None:
            return s
        if k in (TK.EXTVECTOR, TK.VECTOR):
            return T.vector(self._conv(ct.element_type.get_canonical(), None), ct.element_count)
        if k == TK.POINTER:
            pt = ct.get_pointee()
            if pt.kind in (TK.FUNCTIONPROTO, TK.FUNCTIONNOPROTO):
                return None
            return T.Pointer(self.ty(pt), ADDRSPACE.get(pt.get_address_space(), "private"),
                             pt.is_const_qualified())
        if k == TK.CONSTANTARRAY:
            return T.Array(self.ty(ct.element_type), ct.element_count)
        if k == TK.INCOMPLETEARRAY:
            return T.Array(self.ty(ct.element_type), 0)
        if k == TK.RECORD:
            key = _strip_quals(ct.spelling)
            r = self.rcache.get(key)
            if r is not None:
                return r
            decl = ct.get_declaration()
            r = T.Struct(key, ct.get_size(), ct.get_align(), {}, decl.kind == CK.UNION_DECL)
            self.rcache[key] = r
            self._fields(r, ct, decl)
            return r
        if k == TK.ENUM:
            return self._conv(ct.get_declaration().enum_type.get_canonical(), None)
        if k in (TK.FUNCTIONPROTO, TK.FUNCTIONNOPROTO):
            return None
        raise CompileError("unsupported type '%s'" % (orig or ct).spelling)

    def _fields(self, r, ct, decl):
        for f in decl.get_children():
            if f.kind == CK.FIELD_DECL:
                if f.is_bitfield():
                    raise CompileError("bit-fields are not supported yet", f)
                if f.spelling:
                    r.fields[f.spelling] = (ct.get_offset(f.spelling) // 8, self.ty(f.type))
            elif f.kind in (CK.STRUCT_DECL, CK.UNION_DECL) and f.is_anonymous():
                self._fields(r, ct, f)      # members of anonymous structs/unions: offsets in ct

    # ------------------------------------------------------------------ program
    def run(self):
        kernels = []
        for c in self.tu.cursor.get_children():
            if c.kind == CK.FUNCTION_DECL and c.is_definition():
                if self.is_kernel(c):
                    kernels.append(self.function(c, True))
        return kernels

    def is_kernel(self, c):
        return capi.calling_conv(c.type) == 200 or any(
            a.kind == CK.UNEXPOSED_ATTR and self._attr_tokens(a)[:1] in (["__kernel"], ["kernel"])
            for a in c.get_children() if a.kind.is_attribute())

    def _attr_tokens(self, a):
        return [t.spelling for t in a.get_tokens()]

    def function(self, c, is_kernel=False):
        h = c.hash
        f = self.funcs.get(h)
        if f is not None:
            if f.body is None:
                raise CompileError("recursion is not supported", c)
            return f
        ftype = c.type
        ret = self.ty(ftype.get_result())
        params = []
        f = Func(c.spelling, ret, params, None, is_kernel, c)
        self.funcs[h] = f
        body = None
        for ch in c.get_children():
            k = ch.kind
            if k == CK.PARM_DECL:
                pt = ch.type
                t = PA.param_type(self.ty, pt)
                if t is None:
                    raise CompileError("function pointer parameters are not supported", ch)
                v = Var(ch.spelling, t, "param", ch)
                v.index = len(params)
                self.vars[ch.hash] = v
                params.append(v)
                if is_kernel:
                    info = {"type_name": _strip_quals(pt.spelling), "addrspace": "private",
                            "const": False, "restrict": PA.restrict_param(ch, pt), "volatile": False}
                    if pt.kind == TK.POINTER or t.is_pointer:
                        # `global float a[]` is the pointer `global float *a`: its element's qualifiers
                        pe = pt.element_type if pt.kind in PA.ARRAY_KINDS else pt.get_pointee()
                        info["addrspace"] = ADDRSPACE.get(pe.get_address_space(), "private")
                        info["const"] = pe.is_const_qualified()
                        info["volatile"] = pe.is_volatile_qualified()
                        info["type_name"] = _strip_quals(pe.spelling) + "*"
                    v.restrict = info["restrict"]
                    f.param_info.append(info)
            elif k == CK.COMPOUND_STMT:
                body = ch
        if is_kernel:
            attrs, reqd = AT.kernel_attributes(c)
            f.attributes = " ".join(attrs)
            if reqd is not None:
                f.reqd = reqd
        prev = (self.cur_func, self.attributed, self.accessors, self.cur_decl, self.cur_printed,
                self.for_headers, self.maybe_loads)
        self.cur_func, self.attributed, self.accessors = f, [], []
        self.cur_decl, self.cur_printed, self.for_headers = c, None, None
        self.maybe_loads = set()
        try:
            f.body = self.stmt(body) if body is not None else Node("block")
            swizzles = any(n.op == "swz" for n in self.accessors)
            # clang's printing of the function, once: accessors and loop hints are read from it
            printed = self.printed() if swizzles or self.attributed else ""
            if swizzles:
                self.resolve_accessors(c, printed, self.accessors)
            if self.attributed:
                hints = AT.statement_hints(printed)
                if len(hints) == len(self.attributed):     # else: hints only, results unchanged
                    for n, h in zip(self.attributed, hints):
                        if h and n.op in ("for", "while", "do"):
                            n.val = h
        finally:
            (self.cur_func, self.attributed, self.accessors, self.cur_decl, self.cur_printed,
             self.for_headers, self.maybe_loads) = prev
        self.func_order.append(f)
        return f

    # ------------------------------------------------------------------ statements
    def stmt(self, c):
        k = c.kind
        if k == CK.COMPOUND_STMT:
            return Node("block", kids=[self.stmt(x) for x in c.get_children()], cur=c)
        if k == CK.DECL_STMT:
            return Node("block", kids=[self.decl(x) for x in c.get_children()], cur=c, val="decls")
        if k == CK.RETURN_STMT:
            kids = list(c.get_children())
            return Node("return", kids=[self.rvalue(self.expr(kids[0]))] if kids else [], cur=c)
        if k == CK.IF_STMT:
            kids = list(c.get_children())
            return Node("if", kids=[self.rvalue(self.expr(kids[0])), self.stmt(kids[1]),
                                    self.stmt(kids[2]) if len(kids) > 2 else None], cur=c)
        if k == CK.WHILE_STMT:
            cond, body = list(c.get_children())
            return Node("while", kids=[self.rvalue(self.expr(cond)), self.stmt(body)], cur=c)
        if k == CK.DO_STMT:
            body, cond = list(c.get_children())
            return Node("do", kids=[self.stmt(body), self.rvalue(self.expr(cond))], cur=c)
        if k == CK.FOR_STMT:
            return self.for_stmt(c)
        if k == CK.BREAK_STMT:
            return Node("break", cur=c)
        if k == CK.CONTINUE_STMT:
            return Node("continue", cur=c)
        if k == CK.NULL_STMT:
            return Node("nop")
        if k.is_expression():
            e = self.expr(c)
            if e.op == "barrier":
                return Node("barrier", cur=c)
            return Node("expr", kids=[e], cur=c)
        if k == CK.SWITCH_STMT:
            return self.s_switch(c)
        if k == CK.CASE_STMT:
            kids = list(c.get_children())
            v = capi.evaluate(kids[0])
            if v is None:
                raise CompileError("case label is not an integer constant", c)
            return Node("case", kids=[self.stmt(kids[-1])], val=int(v), cur=c)
        if k == CK.DEFAULT_STMT:
            return Node("default", kids=[self.stmt(list(c.get_children())[-1])], cur=c)
        if k == CK.LABEL_STMT:
            kids = list(c.get_children())
            return Node("label", kids=[self.stmt(kids[-1]) if kids else Node("nop")], val=c.spelling, cur=c)
        if k == CK.GOTO_STMT:
            refs = [x.spelling for x in c.get_children() if x.kind == CK.LABEL_REF]
            if not refs:
                raise CompileError("computed goto is not supported", c)
            return Node("goto", val=refs[0], cur=c)
        if k == CK.UNEXPOSED_STMT and AT.is_attributed_statement(c):
            # statement attributes (loop hints, fallthrough): hints attached in function()
            slot = len(self.attributed)
            self.attributed.append(None)
            self.attributed[slot] = n = self.stmt(next(c.get_children()))
            return n
        raise CompileError("unsupported statement (%s)" % AT.describe(c), c)

    def for_stmt(self, c):
        kids = list(c.get_children())
        body = kids[-1]
        parts = kids[:-1]
        init = cond = inc = None
        if len(parts) == 3:
            init, cond, inc = parts
        elif parts:
            slots = self._for_slots(c, parts)
            for p, s in zip(parts, slots):
                if s == 0:
                    init = p
                elif s == 1:
                    cond = p
                else:
                    inc = p
        n_init = self.stmt(init) if init is not None else None
        n_cond = self.rvalue(self.expr(cond)) if cond is not None else None
        n_inc = self.expr(inc) if inc is not None else None
        return Node("for", kids=[n_init, n_cond, n_inc, self.stmt(body)], cur=c)

    def _for_slots(self, c, parts):
        """Which of init/cond/inc each present part of a for header is (libclang leaves out the
        missing ones), from clang's printing of the function, which shows the empty slots."""
        if self.for_headers is None:
            fors = [x.hash for x in self.cur_decl.walk_preorder() if x.kind == CK.FOR_STMT]
            heads = PR.for_headers(self.printed())
            self.for_headers = dict(zip(fors, heads)) if len(heads) == len(fors) else {}
        present = self.for_headers.get(c.hash)
        if present is not None and sum(present) == len(parts):
            return [i for i in range(3) if present[i]]
        raise CompileError("cannot tell the parts of this for statement's header apart", c)

    def printed(self):
        """clang's printing of the function being built, made once."""
        if self.cur_printed is None:
            self.cur_printed = capi.pretty_printed(self.cur_decl)
        return self.cur_printed

    def decl(self, c):
        k = c.kind
        if k != CK.VAR_DECL:
            if k in (CK.STRUCT_DECL, CK.UNION_DECL, CK.TYPEDEF_DECL, CK.ENUM_DECL):
                return Node("nop")
            raise CompileError("unsupported declaration (%s)" % k.name.lower(), c)
        ct = c.type
        t = self.ty(ct)
        if c.storage_class == ci.StorageClass.STATIC:
            raise CompileError("static local variables are not supported yet", c)
        asp = ADDRSPACE.get(ct.get_address_space(), "private")
        v = Var(c.spelling, t, "private", c)
        self.vars[c.hash] = v
        kids = [x for x in c.get_children() if x.kind.is_expression()]
        init = None
        if kids:
            if t.is_array:
                if kids[-1].kind in (CK.INIT_LIST_EXPR, CK.STRING_LITERAL):
                    init = kids[-1]
            else:
                init = kids[-1]
        if asp == "local":
            if init is not None:
                raise CompileError("__local variables cannot have an initializer", c)
            v.storage = "local"
            f = self.cur_func
            if f is None or not f.is_kernel:
                raise CompileError("__local variables are only supported at kernel scope", c)
            f.local_vars.append(v)
            return Node("nop")
        if asp == "constant":
            v.storage = "constant"
            PV.check_size(v, c)
            v.init = self.const_init(init, t) if init is not None else None
            self.globals.append(v)
            return Node("nop")
        n_init = self.rvalue(self.expr(init)) if init is not None else None
        return Node("decl", kids=[n_init] if n_init is not None else [], val=v, cur=c)

    def const_init(self, c, t):
        """Constant initializer as nested python values (progvars.py)."""
        return PV.const_init(self, c, t)

    # ------------------------------------------------------------------ expressions
    def rvalue(self, n):
        if n.lv:
            if n.type.is_array:
                return Node("decay", T.Pointer(n.type.elem), [n], cur=n.cur)
            return Node("load", n.type, [n], cur=n.cur)
        return n

    def conv(self, n, t, cur=None):
        n = self.rvalue(n)
        if n.type == t:
            return n
        return Node("conv", t, [n], cur=cur)

    def expr(self, c):
        h = _EXPR.get(c.kind)
        if h is None:
            raise CompileError("unsupported expression (%s)" % c.kind.name.lower(), c)
        return h(self, c)

    def e_literal(self, c):
        v = capi.evaluate(c)
        if v is None:
            raise CompileError("cannot evaluate constant expression", c)
        t = self.ty(c.type)
        return Node("const", t, val=v, cur=c)

    def e_trait(self, c):
        n = self.e_literal(c)
        # sizeof / vec_step / alignof of an expression: never evaluated, but its member and
        # swizzle accessors are in clang's printing of the function: build the operand (and
        # drop it) so that resolve_accessors pairs the function's accessors one to one
        for k in c.get_children():
            if k.kind.is_expression():
                try:
                    self.expr(k)
                except CompileError:
                    pass
        return n

    def e_generic(self, c):
        """C11 _Generic: the association clang selected. Its value when clang evaluates it to a
        constant, else the one association whose type is the selection's (clang gives the
        selection the selected expression's type). Every operand is built, in order, so that
        accessor pairing sees each of them (see e_trait)."""
        kids = [k for k in c.get_children() if k.kind.is_expression()]
        built = []
        for k in kids:
            try:
                built.append(self.expr(k))
            except CompileError:
                built.append(None)
        v = capi.evaluate(c)
        t = self.ty(c.type)
        if v is not None and t.is_scalar:
            return Node("const", t, val=v, cur=c)
        want = c.type.get_canonical()
        hits = [i for i, k in enumerate(kids) if i > 0 and k.type.get_canonical() == want]
        if len(hits) != 1:
            raise CompileError("_Generic: the selected association is not a constant and its type "
                               "is not unique among the associations", c)
        if built[hits[0]] is None:
            return self.expr(kids[hits[0]])
        return built[hits[0]]

    def e_paren(self, c):
        return self.expr(next(c.get_children()))

    def e_declref(self, c):
        ref = c.referenced
        rk = ref.kind
        if rk in (CK.VAR_DECL, CK.PARM_DECL):
            v = self.vars.get(ref.hash)
            if v is None:
                v = self.global_var(ref, c)
            return Node("var", v.type, lv=True, val=v, cur=c)
        if rk == CK.ENUM_CONSTANT_DECL:
            return Node("const", self.ty(c.type), val=ref.enum_value, cur=c)
        if rk == CK.FUNCTION_DECL:
            return Node("func", None, val=ref, cur=c)
        raise CompileError("unsupported reference to '%s'" % c.spelling, c)

    def global_var(self, ref, c):
        asp = ADDRSPACE.get(ref.type.get_address_space(), "private")
        if asp != "constant":
            raise CompileError("program-scope variable '%s' must be in the __constant address space"
                               % ref.spelling, c)
        return PV.program_var(self, ref)

    def e_unexposed(self, c):
        kids = list(c.get_children())
        t = self.ty(c.type) if c.type.kind != TK.INVALID else None
        if not kids:
            if t is None:
                raise CompileError("unsupported expression", c)
            return Node("zero", t, cur=c)
        if len(kids) != 1:
            v = capi.evaluate(c)        # __builtin_offsetof(type, member) and other constants
            if v is not None and t is not None and t.is_scalar:
                return Node("const", t, val=v, cur=c)
            raise CompileError("unsupported expression (builtin with %d operands)" % len(kids), c)
        ch = kids[0]
        sub = self.expr(ch)
        if sub.op == "func" or t is None:
            return sub
        s = sub.type
        if t.is_array and s.is_pointer:
            # libclang shows clang's decayed type (an array parameter's and a conversion to it,
            # params.py) as the array written: the value is the pointer it decays to
            return self.conv(sub, PA.decayed(self.ty, c.type), c)
        if s.is_vector and ((t.is_scalar and t == s.elem) or (t.is_vector and t.elem == s.elem)):
            kind = "swz" if t.is_scalar or t.count != s.count else _full_width_kind(c, ch, sub)
            if kind:
                return self.swizzle(c, sub, t, maybe=kind == "maybe")
        if sub.lv:
            n = self.rvalue(sub)
            return n if n.type == t else self.conv(n, t, c)
        return self.conv(sub, t, c)

    def swizzle(self, c, base, t, maybe=False):
        n = Node("swz", t, [base], lv=base.lv, cur=c)
        self.accessors.append(n)     # its components: resolve_accessors, from clang's AST
        if maybe:
            self.maybe_loads.add(id(n))
        return n

    def resolve_accessors(self, decl, printed, nodes):
        """Give the swizzle nodes built for function `decl` (with its member nodes, in the order
        built: post-order) their components, from `printed`, clang's printing of its AST."""
        names = SW.printed_accessors(printed)
        index = {id(n): i for i, n in enumerate(nodes)}
        maybe, self.maybe_loads = self.maybe_loads, set()

        def base_lvalue(n):     # clang's view: True, False, or the swizzle item it depends on
            b = n.kids[0]
            if b.lv or _vector_literal_under(n.cur):
                return True
            return index[id(b)] if b.op == "swz" and id(b) in index else False

        items = []
        for n in nodes:
            if n.op == "member":
                items.append(("member", n.val[2]))
                continue
            it = ("swz", n.kids[0].type.count, n.type.count if n.type.is_vector else 1, base_lvalue(n))
            if id(n) in maybe:
                it = ("maybe",) + it[1:] + (index[id(n.kids[0])],)
            items.append(it)
        try:
            got = SW.pair(items, names)
        except SW.AmbiguousAccessors:
            got, why = None, "several readings of clang's AST fit"
        else:
            why = "clang's AST of '%s' has %d accessors, the front end %d" % (
                decl.spelling, len(names), len(nodes))
        if got is None:
            bad = next(n for n in nodes if n.op == "swz")
            raise CompileError("cannot determine the vector component accessor of this expression "
                               "(%s)" % why, bad.cur)
        for n, name in zip(nodes, got):
            if n.op == "swz":
                # a possible load that took no name is the load: an identity
                n.val = SW.parse_accessor(name, n.kids[0].type.count) if name else list(range(n.type.count))

    def e_member(self, c):
        base = self.expr(next(c.get_children()))
        name = c.spelling
        bt = base.type
        arrow = bt.is_pointer
        st = bt.pointee if arrow else bt
        if arrow:
            base = self.rvalue(base)
        if not st.is_struct or name not in st.fields:
            raise CompileError("unsupported member access '%s'" % name, c)
        off, ft = st.fields[name]
        n = Node("member", ft, [base], lv=True, val=(off, arrow, name), cur=c)
        self.accessors.append(n)
        return n

    def e_subscript(self, c):
        a, b = (self.expr(x) for x in c.get_children())
        t = self.ty(c.type)
        if a.type.is_vector and a.lv:
            return Node("vindex", t, [a, self.rvalue(b)], lv=True, cur=c)
        a, b = self.rvalue(a), self.rvalue(b)
        if b.type.is_pointer:
            a, b = b, a
        return Node("index", t, [a, b], lv=True, cur=c)

    def e_unary(self, c):
        op = capi.UNOPS.get(capi.unop_kind(c))
        sub = self.expr(next(c.get_children()))
        t = self.ty(c.type)
        if op == "&":
            if t.pointee.is_array and sub.type.is_pointer:      # &v of a parameter `float v[3]`
                t = T.Pointer(sub.type, t.addrspace, t.const)
            return Node("addr", t, [sub], cur=c)
        if op == "*":
            return Node("deref", t, [self.rvalue(sub)], lv=True, cur=c)
        if op in ("pre++", "pre--", "post++", "post--"):
            return Node("incdec", PA.adjusted(t, sub), [sub], val=(1 if op[-1] == "+" else -1, op.startswith("post")), cur=c)
        if op in ("+", "__extension__"):
            return self.conv(sub, t, c)
        if op in ("-", "~", "!"):
            return Node("unary", t, [self.rvalue(sub)], val=op, cur=c)
        raise CompileError("unsupported unary operator", c)

    def e_binary(self, c):
        op = capi.BINOPS.get(capi.binop_kind(c))
        ca, cb = c.get_children()
        a, b = self.expr(ca), self.expr(cb)
        t = self.ty(c.type)
        if op == "=":
            return Node("assign", PA.adjusted(t, a), [a, self.rvalue(b)], cur=c)
        if op in ("&&", "||"):
            return Node("land" if op == "&&" else "lor", t, [self.rvalue(a), self.rvalue(b)], cur=c)
        if op == ",":
            return Node("comma", PA.adjusted(t, b), [a, self.rvalue(b)], cur=c)
        if op is None:
            raise CompileError("unsupported binary operator", c)
        a, b = self.rvalue(a), self.rvalue(b)
        # `v + n`, `n + v`, `v - n` have the pointer operand's type, a parameter's decayed one
        return Node("bin", PA.adjusted(t, a if a.type.is_pointer else b), [a, b], val=op, cur=c)

    def e_cassign(self, c):
        op = capi.BINOPS.get(capi.binop_kind(c))
        ca, cb = c.get_children()
        a, b = self.expr(ca), self.expr(cb)
        return Node("cassign", PA.adjusted(self.ty(c.type), a), [a, self.rvalue(b)], val=op[:-1], cur=c)

    def e_cond(self, c):
        k = [self.rvalue(self.expr(x)) for x in c.get_children()]
        return Node("cond", PA.adjusted(self.ty(c.type), k[1]), k, cur=c)

    def e_cast(self, c):
        kids = [x for x in c.get_children() if x.kind.is_expression()]
        sub = self.expr(kids[-1])
        t = self.ty(c.type)
        if t.is_void:
            return Node("void", T.VOID, [sub], cur=c)
        sub = self.rvalue(sub)
        if sub.type == t:
            return sub
        return Node("conv", t, [sub], cur=c)

    def e_compound_lit(self, c):
        kids = [x for x in c.get_children() if x.kind.is_expression()]
        return self.expr(kids[-1]) if kids[-1].kind == CK.INIT_LIST_EXPR else \
            self.conv(self.expr(kids[-1]), self.ty(c.type), c)

    def e_initlist(self, c):
        t = self.ty(c.type)
        kids = [self.rvalue(self.expr(x)) for x in c.get_children()]
        if t.is_vector:
            if len(kids) == 1 and kids[0].type.is_scalar:
                return self.conv(kids[0], t, c)
            return Node("veclit", t, kids, cur=c)
        if t.is_scalar:
            return self.conv(kids[0], t, c)
        return Node("initlist", t, kids, cur=c)

    def e_call(self, c):
        kids = list(c.get_children())
        name = c.spelling
        t = self.ty(c.type)
        ref = c.referenced
        if name == "__pyplat_astype":
            inner = list(kids[1].get_children())
            src = self.rvalue(self.expr(inner[0]))
            return Node("astype", t, [src], cur=c)
        if name in BARRIERS:
            return Node("barrier", T.VOID, cur=c)
        args = [self.rvalue(self.expr(x)) for x in kids[1:]]
        if ref is None:
            raise CompileError("call through a function pointer is not supported", c)
        d = ref.get_definition()
        if d is not None and d.kind == CK.FUNCTION_DECL:
            f = self.function(d, self.is_kernel(d))     # a kernel called: still a kernel
            return Node("call", t, args, val=f, cur=c)
        if self._user_declared(ref, c):
            return Node("call", t, args, val=self.extern_function(ref), cur=c)
        return Node("builtin", t, args, val=name, cur=c)

    def _user_declared(self, ref, call):
        """A function the program declares without defining it (defined in another compilation
        unit, resolved at link time). clang's builtins are implicit declarations located at the
        call itself; the ones of our header are builtins too."""
        loc = ref.location
        if loc.file is None or ref.kind != CK.FUNCTION_DECL:
            return False
        # clang declares __builtin_* implicitly at their first call only: later calls refer to it
        if ref.spelling.startswith("__builtin_") or loc.file.name == self.header:
            return False
        cl = call.location
        return not (cl.file is not None and cl.file.name == loc.file.name and cl.offset == loc.offset)

    def extern_function(self, ref):
        """A Func without a body for a function defined elsewhere (declared only)."""
        f = self.externs.get(ref.spelling)
        if f is None:
            ret = self.ty(ref.type.get_result())
            params = []
            for i, ch in enumerate(x for x in ref.get_children() if x.kind == CK.PARM_DECL):
                t = PA.param_type(self.ty, ch.type)
                if t is None:
                    raise CompileError("function pointer parameters are not supported", ch)
                v = Var(ch.spelling, t, "param", ch)
                v.index = i
                params.append(v)
            if not params and ref.type.kind == TK.FUNCTIONPROTO:
                for i, at in enumerate(ref.type.argument_types()):
                    v = Var("p%d" % i, PA.param_type(self.ty, at), "param", ref)
                    v.index = i
                    params.append(v)
            is_kernel = capi.calling_conv(ref.type) == 200
            f = Func(ref.spelling, ret, params, None, is_kernel, ref)
            self.externs[ref.spelling] = f
        return f

    def exported_functions(self):
        """Compile-only mode: every function of the main source file with external linkage
        (callable from other compilation units), in source order; (cursor, is_kernel)."""
        out = []
        for c in self.tu.cursor.get_children():
            if c.kind == CK.FUNCTION_DECL and c.is_definition() and c.location.file is not None \
                    and c.location.file.name == self.main_file \
                    and c.storage_class != ci.StorageClass.STATIC:
                out.append(c)
        return out

    def string_data(self, c):
        return _decode_c_string(c.spelling)

    def e_string(self, c):
        data = _decode_c_string(c.spelling)
        t = self.ty(c.type)
        if not t.is_array:
            t = T.Array(T.CHAR, len(data) + 1)
        return Node("str", t, lv=True, val=data + b"\0" * max(1, t.count - len(data)), cur=c)

    def s_switch(self, c):
        kids = list(c.get_children())
        cond, body = kids[-2], kids[-1]
        return Node("switch", kids=[self.rvalue(self.expr(cond)), self.stmt(body)], cur=c)


_EXPR = {
    CK.INTEGER_LITERAL: Frontend.e_literal, CK.FLOATING_LITERAL: Frontend.e_literal,
    CK.CHARACTER_LITERAL: Frontend.e_literal, CK.CXX_UNARY_EXPR: Frontend.e_trait,
    CK.CXX_BOOL_LITERAL_EXPR: Frontend.e_literal,
    CK.PAREN_EXPR: Frontend.e_paren, CK.DECL_REF_EXPR: Frontend.e_declref,
    CK.UNEXPOSED_EXPR: Frontend.e_unexposed, CK.MEMBER_REF_EXPR: Frontend.e_member,
    CK.ARRAY_SUBSCRIPT_EXPR: Frontend.e_subscript, CK.UNARY_OPERATOR: Frontend.e_unary,
    CK.BINARY_OPERATOR: Frontend.e_binary, CK.COMPOUND_ASSIGNMENT_OPERATOR: Frontend.e_cassign,
    CK.CONDITIONAL_OPERATOR: Frontend.e_cond, CK.CSTYLE_CAST_EXPR: Frontend.e_cast,
    CK.COMPOUND_LITERAL_EXPR: Frontend.e_compound_lit, CK.INIT_LIST_EXPR: Frontend.e_initlist,
    CK.CALL_EXPR: Frontend.e_call, CK.STRING_LITERAL: Frontend.e_string,
    CK.GENERIC_SELECTION_EXPR: Frontend.e_generic,
}


def _full_width_kind(c, ch, sub):
    """UNEXPOSED_EXPR c over ch (built as sub), both of one vector type: "swz" for a swizzle,
    "maybe" where only the accessors can tell, None for an implicit conversion. (No conversion
    changes a vector's length or makes it a scalar: those are always swizzles.)"""
    if sub.lv:      # the lvalue-to-rvalue load drops the address space; a swizzle keeps it
        return "swz" if c.type.get_address_space() == ch.type.get_address_space() else None
    # clang types a swizzle's result with the first typedef of its vector type, our header's
    # __pyplat_swizzle_ twin; an implicit conversion of an rvalue keeps its operand's type
    if not _is_swizzle_result(c.type):
        return None
    # A swizzle of a vector literal (an lvalue for clang, a value for us) without repeated
    # components is an lvalue: its load keeps the twin's name, and in a macro body has the
    # extent a swizzle of it would have. Its accessors decide (swizzle.pair).
    if sub.op == "swz" and c.extent.end.offset == ch.extent.end.offset and (
            capi.spelling_loc(c.extent.end) == capi.spelling_loc(ch.extent.end)):
        return "maybe"
    return "swz"


def _vector_literal_under(c):
    """Whether the operand of expression cursor c is a vector literal (in parentheses or not)."""
    k = next(c.get_children())
    while k.kind == CK.PAREN_EXPR:
        k = next(k.get_children())
    return k.kind == CK.COMPOUND_LITERAL_EXPR


def _is_swizzle_result(ct):
    """Whether clang typed an expression as a swizzle's result (kernels/pyplat_opencl.h)."""
    return ct.get_declaration().spelling.startswith(SWIZZLE_TYPE_PREFIX)


_ESC = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63, "e": 27}


def _decode_c_string(spelling):
    """Bytes of a C string literal's spelling (adjacent literals already joined by clang)."""
    out = bytearray()
    i, n = 0, len(spelling)
    inside = False
    while i < n:
        ch = spelling[i]
        if not inside:
            if ch == '"':
                inside = True
            i += 1
            continue
        if ch == '"':
            inside = False
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            e = spelling[i + 1]
            if e in "01234567":
                j = i + 1
                while j < n and j < i + 4 and spelling[j] in "01234567":
                    j += 1
                out.append(int(spelling[i + 1:j], 8) & 255)
                i = j
                continue
            if e == "x":
                j = i + 2
                while j < n and spelling[j] in "0123456789abcdefABCDEF":
                    j += 1
                out.append(int(spelling[i + 2:j] or "0", 16) & 255)
                i = j
                continue
            out.append(_ESC.get(e, ord(e) & 255))
            i += 2
            continue
        out += ch.encode("utf-8")
        i += 1
    return bytes(out)
