"""A large `switch` that is a table: every case sets one integer variable to a constant and
breaks (`case 17: r = 0x5a; break;`, S-boxes, opcode tables). It becomes two constant arrays
over the cases' value range (the values and which slots are cases) and one load, with the
default's statements (if any) after the table's miss (issue 31 part 4).

Why: LLVM would build the same lookup table itself, but only in its last SimplifyCFG run;
until then each of its runs walks a block per case into one phi of as many entries (quadratic:
a 10,000-case table took 8 s to build against PoCL's 3.5 s even as switch_tree's chunks).
Only switches of more than switch_tree.LARGE cases take this path, so LLVM sees every usual
switch as before."""
from llvmlite import ir

from . import switch_tree
from .irbuild import I8

# The arrays cover max - min + 1 slots: a range more than this many times the number of cases
# is left to the switch (sparse keys would make the arrays mostly holes).
MAX_SPREAD = 4


def try_emit(g, n, v, end_bb):
    """Lower switch node n (condition already evaluated to v) as a table when it has that form;
    returns False (nothing emitted) when it has not."""
    if not g.mg.SWITCH_TABLES or g.mg.instr.active or g.mg.line_tables is not None:
        return False            # (an instrumentation's hooks and -g's positions: the plain form)
    form = _table_form(n)
    if form is None:
        return False
    target, entries, default_stmts = form
    var = target.val
    ct = n.kids[0].type
    keys = {}
    for labels, value in entries:
        for k in labels:       # keys in the condition's own domain (signed or not), so that the
            k &= (1 << ct.bits) - 1             # range min..max is the one its values cover
            if ct.signed and k >> (ct.bits - 1):
                k -= 1 << ct.bits
            keys.setdefault(k, value & ((1 << var.type.bits) - 1))
    if len(keys) <= switch_tree.LARGE:
        return False
    lo, hi = min(keys), max(keys)
    span = hi - lo + 1
    if span > MAX_SPREAD * len(keys):
        return False
    b = g.b
    vt = var.type.llvm()
    values = [keys.get(lo + i, 0) for i in range(span)]
    present = [1 if (lo + i) in keys else 0 for i in range(span)]
    tv = _constant_array(g.mg, ir.ArrayType(vt, span), values, "values")
    tp = _constant_array(g.mg, ir.ArrayType(I8, span), present, "present")
    idx = b.sub(v, ir.Constant(v.type, lo & ((1 << ct.bits) - 1)))    # (wraps: then one
    # unsigned compare tests lo <= v <= hi in either domain)
    in_range, check, hit = (b.append_basic_block(s) for s in ("sw.range", "sw.check", "sw.hit"))
    miss = b.append_basic_block("sw.default") if default_stmts is not None else end_bb
    b.cbranch(b.icmp_unsigned("<", idx, ir.Constant(v.type, span)), in_range, miss)
    b.position_at_end(in_range)
    i64 = b.zext(idx, ir.IntType(64)) if v.type.width < 64 else idx
    ok = b.load(b.gep(tp, [ir.Constant(ir.IntType(64), 0), i64], inbounds=True), typ=I8)
    b.cbranch(b.icmp_unsigned("!=", ok, ir.Constant(I8, 0)), check, miss)
    b.position_at_end(check)
    val = b.load(b.gep(tv, [ir.Constant(ir.IntType(64), 0), i64], inbounds=True), typ=vt)
    b.branch(hit)
    b.position_at_end(hit)
    g.store_lv(g.lvalue(target), val)
    b.branch(end_bb)
    if default_stmts is not None:
        b.position_at_end(miss)
        g.loops.append((end_bb, None, "switch"))     # a break in the default leaves the switch
        for s in default_stmts:
            g.stmt(s)
        g.loops.pop()
        if not b.block.is_terminated:
            b.branch(end_bb)
    b.position_at_end(end_bb)
    return True


def _constant_array(mg, ty, values, what):
    gv = ir.GlobalVariable(mg.module, ty, name="__switch_%s.%d" % (what, len(mg.globals)))
    mg.globals[("switch", what, id(gv))] = gv
    gv.initializer = ir.Constant(ty, values)
    gv.global_constant = True
    gv.linkage = "internal"
    return gv


def _table_form(n):
    """(the variable's node, [(case values, constant)], statements after `default:` or None) when switch n's
    body is a flat list of `case ...: var = CONST; break;` with one private integer variable
    throughout and at most a trailing `default:` section; else None."""
    body = n.kids[1]
    if body is None or body.op != "block":
        return None
    stmts, var, target, entries, i = body.kids, None, None, [], 0
    while i < len(stmts):
        s = stmts[i]
        if s is None:
            return None
        if s.op == "default":
            rest = [s.kids[0]] + list(stmts[i + 1:])
            if var is None or any(_has_label(x) for x in rest):
                return None         # (a case after the default: the plain form)
            return target, entries, rest
        labels = []
        while s is not None and s.op == "case":
            labels.append(s.val)
            s = s.kids[0]
        if not labels or s is None or s.op != "expr" or i + 1 >= len(stmts) \
                or stmts[i + 1] is None or stmts[i + 1].op != "break":
            return None
        lhs, value = _constant_assignment(s.kids[0])
        if lhs is None or (var is not None and lhs.val is not var):
            return None
        var, target = lhs.val, lhs
        entries.append((labels, value))
        i += 2
    return (target, entries, None) if var is not None else None


def _constant_assignment(e):
    """(variable's node, integer value) of `var = CONST` with var a private integer scalar (not bool) and
    CONST an integer literal, or its negation, through integer conversions only; else (None, None).
    (The negation is in the literal's type, the conversions wrap: masking the value to the
    variable's width later gives what they compute, since each integer conversion that only
    narrows or widens keeps the low bits.)"""
    if e is None or e.op != "assign" or len(e.kids) != 2:
        return None, None
    lhs, rhs = e.kids
    if lhs.op != "var" or lhs.val is None or getattr(lhs.val, "storage", None) != "private":
        return None, None
    t = lhs.val.type
    if not (t.is_scalar and t.is_int and not t.is_bool) or lhs.val.volatile:
        return None, None
    while rhs is not None and rhs.op == "conv" and rhs.kids:
        if not (rhs.type.is_scalar and rhs.type.is_int and not rhs.type.is_bool):
            return None, None
        rhs = rhs.kids[0]
    sign = 1
    if rhs is not None and rhs.op == "unary" and rhs.val == "-" and rhs.kids:    # -5: minus 5
        if not (rhs.type.is_scalar and rhs.type.is_int and not rhs.type.is_bool):
            return None, None
        sign, rhs = -1, rhs.kids[0]
    if rhs is None or rhs.op != "const" or not isinstance(rhs.val, int) or isinstance(rhs.val, bool) \
            or not (rhs.type.is_scalar and rhs.type.is_int and not rhs.type.is_bool):
        return None, None
    return lhs, sign * rhs.val


def _has_label(n):
    """Whether statement n holds a case or default label of the switch around it."""
    stack = [n]
    while stack:
        x = stack.pop()
        if x is None or not hasattr(x, "op") or x.op == "switch":
            continue
        if x.op in ("case", "default"):
            return True
        stack.extend(x.kids)
    return False
