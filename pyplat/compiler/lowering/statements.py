"""Statements of the function generator (a mixin of FuncGen): blocks, declarations, if, switch,
loops, break/continue, return, goto/labels. emit_loop is the block skeleton of for/while/do that
the barrier code (barriers.py) reuses for work-group-level loops."""
from llvmlite import ir

from . import switch_table, switch_tree

def loop_parts(n):
    """(init, cond, inc, body) of a for / while / do node (None where the loop has none)."""
    if n.op == "for":
        return tuple(n.kids)
    if n.op == "while":
        cond, body = n.kids
    else:
        body, cond = n.kids
    return None, cond, None, body


_STMT_LIKE = {"block", "if", "for", "while", "do", "case", "default", "switch", "expr", "decl", "return",
              "break", "continue", "nop", "barrier", "label", "goto"}


class Statements:
    def stmt(self, n):
        if n is None:
            return
        if self.mg.line_tables is not None:
            self.mg.line_tables.mark(self.b, n)
        b = self.b
        if b.block.is_terminated:
            b.position_at_end(b.append_basic_block("dead"))
        op = n.op
        if op == "block":
            for k in n.kids:
                self.stmt(k)
        elif op == "nop":
            pass
        elif op == "label":
            bb = self.label_block(n.val)
            if not b.block.is_terminated:
                b.branch(bb)
            b.position_at_end(bb)
            self.stmt(n.kids[0])
        elif op == "goto":
            b.branch(self.label_block(n.val))
        elif op == "barrier":
            self.err("barrier() in a function called from a kernel is not supported yet "
                     "(call it in the kernel itself)", n)
        elif op == "expr":
            e = n.kids[0]
            if e.lv:
                self.lvalue(e)
            else:
                self.rv(e)
        elif op == "decl":
            v = n.val
            slot = self.alloca(v.type, v.name)
            self.vars[v] = slot
            if n.kids:
                self.init_mem(slot, v.type, n.kids[0])
        elif op == "if":
            c, then, els = n.kids
            cv = self.truth(self.rv(c), c.type)
            t_bb = b.append_basic_block("if.then")
            e_bb = b.append_basic_block("if.else") if els is not None else None
            end = b.append_basic_block("if.end")
            control = None if self.values is None else self.values.branch_on(b, cv)     # (uninit)
            b.cbranch(cv, t_bb, e_bb or end)
            b.position_at_end(t_bb)
            self.stmt(then)
            if not b.block.is_terminated:
                b.branch(end)
            if els is not None:
                b.position_at_end(e_bb)
                self.stmt(els)
                if not b.block.is_terminated:
                    b.branch(end)
            b.position_at_end(end)
            if self.values is not None:
                self.values.end_branch(control)
        elif op in ("for", "while", "do"):
            self.loop(n)
        elif op == "switch":
            self.switch(n)
        elif op in ("case", "default"):
            if not getattr(self, "cases", None):
                self.err("case label outside of a switch", n)
            bb = self.cases[-1][id(n)]
            if not b.block.is_terminated:
                b.branch(bb)
            b.position_at_end(bb)
            self.stmt(n.kids[0])
        elif op == "break":
            if not self.loops:
                self.err("break outside of a loop", n)
            b.branch(self.loops[-1][0])
        elif op == "continue":
            tgt = self.continue_target()
            if tgt is None:
                self.err("continue outside of a loop", n)
            b.branch(tgt[1])
        elif op == "return":
            if n.kids:
                k = n.kids[0]
                v = self.rv(k)
                if self.sret is not None:
                    self.memcpy(self.sret, v, self.f.ret.size)
                    b.ret_void()
                else:
                    b.ret(self.convert(v, k.type, self.f.ret, n))
            else:
                b.ret_void()
        else:
            self.err("unsupported statement '%s'" % op, n)

    def label_block(self, name):
        labels = self.__dict__.setdefault("labels", {})
        bb = labels.get(name)
        if bb is None:
            bb = labels[name] = self.b.append_basic_block("label." + name)
        return bb

    def continue_target(self):
        """The innermost loop (not switch) entry of the loop stack, or None."""
        for e in reversed(self.loops):
            if not (isinstance(e, tuple) and len(e) == 3):
                return e
        return None

    def switch(self, n):
        b = self.b
        cond, body = n.kids
        v = self.rv(cond)
        end_bb = b.append_basic_block("sw.end")
        if switch_tree.LARGE < len(n.kids[1].kids if n.kids[1] is not None else ()) and \
                switch_table.try_emit(self, n, v, end_bb):
            return          # a large table written as a switch: two constant arrays
        default = None
        found = []

        def collect(x):
            if x is None or not hasattr(x, "op") or x.op == "switch":
                return
            if x.op in ("case", "default"):
                found.append(x)
            for k in x.kids:
                if k is not None and hasattr(k, "op") and k.op in _STMT_LIKE:
                    collect(k)
        collect(body)
        blocks = {}
        for c in found:
            blocks[id(c)] = b.append_basic_block("sw.case" if c.op == "case" else "sw.default")
            if c.op == "default":
                default = blocks[id(c)]
        cases = {}
        for c in found:
            if c.op == "case":
                cases.setdefault(c.val & ((1 << cond.type.bits) - 1), blocks[id(c)])
        switch_tree.emit(b, v, list(cases.items()), default or end_bb)
        if not hasattr(self, "cases"):
            self.cases = []
        self.cases.append(blocks)
        self.loops.append((end_bb, None, "switch"))
        b.position_at_end(b.append_basic_block("sw.body"))
        self.stmt(body)
        self.loops.pop()
        self.cases.pop()
        if not b.block.is_terminated:
            b.branch(end_bb)
        b.position_at_end(end_bb)

    def loop(self, n):
        def body(stmt, end_bb, inc_bb):
            self.loops.append((end_bb, inc_bb))
            self.stmt(stmt)
            self.loops.pop()

        def inc(expr):
            if expr.lv:
                self.lvalue(expr)
            else:
                self.rv(expr)
        self.emit_loop(n, "loop", self.stmt, lambda c: self.truth(self.rv(c), c.type), body, inc)

    def emit_loop(self, n, prefix, init_fn, cond_fn, body_fn, inc_fn):
        """The block skeleton of for / while / do, shared by plain and barrier-split code:
        init; cond -> body -> inc -> cond; end. body_fn(stmt, end_bb, inc_bb) gets the targets
        of break and continue."""
        b = self.b
        init, cond, inc, body = loop_parts(n)
        if init is not None:
            init_fn(init)
        cond_bb, body_bb, inc_bb, end_bb = (b.append_basic_block(f"{prefix}.{part}")
                                            for part in ("cond", "body", "inc", "end"))
        b.branch(body_bb if n.op == "do" else cond_bb)
        b.position_at_end(cond_bb)
        if cond is not None:
            b.cbranch(cond_fn(cond), body_bb, end_bb)
        else:
            b.branch(body_bb)
        b.position_at_end(body_bb)
        body_fn(body, end_bb, inc_bb)
        if not b.block.is_terminated:
            b.branch(inc_bb)
        b.position_at_end(inc_bb)
        if inc is not None:
            inc_fn(inc)
        latch = b.branch(cond_bb)
        if prefix == "loop" and n.val:
            latch.set_metadata("llvm.loop", self.loop_id(n.val))
        b.position_at_end(end_bb)

    def loop_id(self, hints):
        """A loop's !llvm.loop node (distinct, its first operand itself) carrying the unroll
        hints of #pragma unroll / opencl_unroll_hint."""
        m = self.b.module
        ops = []
        if "count" in hints:
            ops.append(m.add_metadata([ir.MetaDataString(m, "llvm.loop.unroll.count"),
                                       ir.Constant(ir.IntType(32), hints["count"])]))
        if "unroll" in hints:
            ops.append(m.add_metadata([ir.MetaDataString(m, "llvm.loop.unroll." + hints["unroll"])]))
        node = ir.values.MDValue(m, [], name=str(len(m.metadata)))
        node.operands = (node,) + tuple(ops)
        return node
