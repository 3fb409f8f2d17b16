"""Small analyses over the typed tree: an estimate of private memory and whether a kernel may
print (which pointer arguments a kernel may write: pointer_writes.py)."""
from .tree import CompileError


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
