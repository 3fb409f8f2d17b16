"""Small analyses over the typed tree: which pointer arguments a kernel may write,
and an estimate of private memory."""
from .tree import CompileError


def _root_param(n):
    """The parameter Var a pointer-valued/lvalue expression is based on, or None."""
    while n is not None:
        op = n.op
        if op == "var":
            return n.val if n.val.storage == "param" else None
        if op in ("load", "conv", "decay", "swz", "vindex", "deref", "addr"):
            n = n.kids[0]
        elif op == "index":
            n = n.kids[0]
        elif op == "member":
            n = n.kids[0]
        elif op == "bin" and n.type is not None and n.type.is_pointer:
            n = n.kids[0] if n.kids[0].type.is_pointer else n.kids[1]
        else:
            return None
    return None


# Builtins that only read through their pointer arguments; every other builtin may write through
# its pointer arguments (vstore*, atomics, the out parameters of fract/modf/sincos/frexp/
# lgamma_r/remquo, the destination of async_work_group_copy), so the argument counts as written.
_READERS = ("vload", "prefetch", "printf")
_ASYNC_COPIES = ("async_work_group_copy", "async_work_group_strided_copy")


def written_params(kernel):
    written = set()
    visited = set()

    def visit(n, addr_ctx=False):
        if n is None:
            return
        op = n.op
        if op == "load" and n.kids[0].op == "var":
            v = n.kids[0].val
            if v.storage == "param" and v.type.is_pointer and not addr_ctx:
                written.add(v)        # pointer escapes (copied, passed on): be conservative
            return
        if op in ("assign", "cassign", "incdec"):
            r = _root_param(n.kids[0])
            if r is not None:
                written.add(r)
        if op == "index":
            visit(n.kids[0], True)
            visit(n.kids[1])
            return
        if op == "deref":
            visit(n.kids[0], True)
            return
        if op == "member" and n.val[1]:
            visit(n.kids[0], True)
            return
        if op == "bin" and (n.kids[0].type.is_pointer or n.kids[1].type.is_pointer):
            cmp = n.val in ("<", ">", "<=", ">=", "==", "!=")
            for k in n.kids:
                visit(k, addr_ctx or cmp)
            return
        if op == "conv":
            visit(n.kids[0], addr_ctx)
            return
        if op == "builtin":
            name = n.val
            for i, k in enumerate(n.kids):
                if k.type.is_pointer:
                    if not (name.startswith(_READERS) or (name in _ASYNC_COPIES and i == 1)):
                        r = _root_param(k)
                        if r is not None:
                            written.add(r)
                    visit(k, True)
                else:
                    visit(k)
            return
        if op == "call" and n.val not in visited:
            visited.add(n.val)
        for k in n.kids:
            if k is not None and hasattr(k, "op"):
                visit(k)

    visit(kernel.body)
    return written


def private_size(func, seen=None):
    seen = seen or set()
    seen.add(func)
    total = sum(p.type.size for p in func.params if not p.type.is_pointer) + \
        sum(8 for p in func.params if p.type.is_pointer)
    stack = [func.body]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        if n.op == "decl":
            total += n.val.type.size
        if n.op == "call" and n.val not in seen:
            total += private_size(n.val, seen)
        stack.extend(k for k in n.kids if k is not None)
    return total


def check_private(kernel, limit):
    """A kernel whose private memory (private_size: its variables and parameters and those of
    every function it calls) exceeds `limit` bytes is a build error naming its largest variable
    (limits.py: private variables live on a worker thread's stack)."""
    size = private_size(kernel)
    if size <= limit:
        return
    largest, seen, funcs = None, {kernel}, [kernel]
    while funcs:
        stack = [funcs.pop().body]
        while stack:
            n = stack.pop()
            if n is None:
                continue
            if n.op == "decl" and (largest is None or n.val.type.size > largest.type.size):
                largest = n.val
            if n.op == "call" and n.val not in seen:
                seen.add(n.val)
                funcs.append(n.val)
            stack.extend(k for k in n.kids if k is not None)
    what = " (variable '%s': %d bytes)" % (largest.name, largest.type.size) if largest is not None else ""
    raise CompileError("kernel '%s' needs %d bytes of private memory per work-item%s, more than this "
                       "device's limit of %d bytes" % (kernel.name, size, what, limit),
                       largest.cur if largest is not None and largest.cur is not None else kernel.cur)


def prints(func, seen=None):
    """Whether the function may call printf (directly or through the functions it calls; a
    function defined in another compilation unit is assumed to)."""
    seen = seen if seen is not None else set()
    seen.add(func)
    if func.body is None:
        return True
    stack = [func.body]
    while stack:
        n = stack.pop()
        if n is None or not hasattr(n, "op"):
            continue
        if n.op == "builtin" and n.val == "printf":
            return True
        if n.op == "call" and n.val not in seen and prints(n.val, seen):
            return True
        stack.extend(k for k in n.kids if k is not None)
    return False
