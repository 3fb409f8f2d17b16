"""The compiler's resource limits: what a program may ask for, and how deep the compiler may nest.

A program over a limit is a build failure with a log line naming what is too big and the limit
(`CL_BUILD_PROGRAM_FAILURE`), never an internal error and never a crash at run time.

* __constant variables: one variable is one constant buffer on a device without separate constant
  memory; the OpenCL C 3.0 spec (6.7.3, "__constant") lets implementations treat each program-scope or
  function-scope __constant variable as its own constant argument, so none may be larger than
  `CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE` (core/device.py reports this value; a test checks that
  they agree).
* private memory: a kernel's private variables live on the stack of the worker thread that runs
  its work-groups (8 MiB by default). A kernel whose private variables (its own and those of the
  functions it calls, counted as analysis.private_size does) exceed MAX_PRIVATE_SIZE is refused at
  build time, before it could overflow that stack.
* nesting: the front end and the lowering walk the program recursively (expressions, statements,
  calls of helper functions, which are inlined); builds run on a thread with a stack of
  COMPILE_STACK_SIZE and a Python recursion limit of RECURSION_LIMIT, so that any program clang
  accepts (it caps brackets at 256 levels) and call chains thousands deep build. Deeper ones
  are a build error ("nested too deeply").
"""
import ctypes
import gc
import os
import sys
import threading

from clang.cindex import Cursor

from .tree import CompileError, Func, Node, Var, source_position

KiB, MiB = 1024, 1024 * 1024

MAX_CONSTANT_BUFFER_SIZE = 1 * MiB
MAX_PRIVATE_SIZE = 1 * MiB
COMPILE_STACK_SIZE = 512 * MiB
RECURSION_LIMIT = 200_000

_lock = threading.Lock()
_active = 0                 # builds running on deep threads (the recursion limit is raised meanwhile)
_saved_limit = None
_state = threading.local()  # .deep: this thread is a build thread; .exhausted: what ran out there
_previous_hook = None


def _new_lock_after_fork():
    """A thread that held the lock at fork() does not exist in the child."""
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_after_fork)


def _unraisable(u):
    """Exceptions raised in libclang's visitor callbacks are 'unraisable' (ctypes prints and drops
    them, the walk then sees fewer children): on a build thread a RecursionError or MemoryError
    there is remembered, so that the build fails as out of resources, not with a strange error."""
    if getattr(_state, "deep", False) and _exhaustion(u.exc_value, None) is not None:
        _state.exhausted = _state.exhausted or _exhaustion(u.exc_value, None)()
        _state.exhausted_at = _state.exhausted_at or deepest_construct(u.exc_value)
        return
    _previous_hook(u)


def _exhaustion(e, flagged):
    seen = set()
    x = e
    while x is not None and id(x) not in seen:      # the exception and those it arose from
        seen.add(id(x))
        if isinstance(x, RecursionError) or \
                (isinstance(x, ctypes.ArgumentError) and "RecursionError" in str(x)):
            return RecursionError
        if isinstance(x, MemoryError):
            return MemoryError
        x = x.__cause__ or x.__context__
    return type(flagged) if flagged is not None else None


def deepest_construct(e):
    """The cursor of the innermost construct the compiler was working on when exception e (or
    one it arose from) was raised: the first frame, from the raising one outwards, with a
    libclang cursor or a typed-tree node among its locals. A recursion that ran out is deepest
    there, so that is the place to name; None if no frame holds one."""
    seen = set()
    x = e
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        frames = []
        tb = x.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        for frame in reversed(frames):          # innermost first
            for v in list(frame.f_locals.values()):
                cur = v.cur if isinstance(v, (Node, Var, Func)) else v if isinstance(v, Cursor) else None
                if cur is not None and source_position(cur)[1] >= 1:
                    return cur
        x = x.__cause__ or x.__context__
    return None


def resource_error(e, flagged=None, where=None):
    """The build error for exception e when it means the compiler ran out of stack or memory,
    located at `where` (a cursor) or else at the construct it was deepest in
    (deepest_construct), else None."""
    kind = _exhaustion(e, flagged)
    if kind is None:
        return None
    # a log line without a place leaves the programmer to search the whole program
    where = where if where is not None else deepest_construct(e) if e is not None else None
    if kind is RecursionError:
        return CompileError("program nested too deeply for the compiler (expressions, statements or "
                            "calls of functions nested tens of thousands of levels deep)", where)
    return CompileError("the compiler ran out of memory building this program", where)


def run_deep(fn, *args):
    """fn(*args) on a thread with a stack of COMPILE_STACK_SIZE and the recursion limit raised to
    RECURSION_LIMIT while it runs; its result, or its exception (running out of stack or memory
    becomes a CompileError: resource_error). Called on a build thread, fn just runs."""
    global _active, _saved_limit, _previous_hook
    if getattr(_state, "deep", False):
        return fn(*args)
    box = {}

    def body():
        _state.deep, _state.exhausted, _state.exhausted_at = True, None, None
        try:
            box["r"] = fn(*args)
        except BaseException as e:       # handed to the caller's thread
            box["e"] = e
        box["x"], box["at"] = _state.exhausted, _state.exhausted_at

    with _lock:
        if _active == 0:         # raised (and the hook installed) while any build runs
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
            _pause_gc()
            if sys.unraisablehook is not _unraisable:
                _previous_hook, sys.unraisablehook = sys.unraisablehook, _unraisable
        _active += 1
        old = threading.stack_size()
        try:
            threading.stack_size(COMPILE_STACK_SIZE)
            t = threading.Thread(target=body, name="pyplat-compile", daemon=True)
            t.start()
        except (RuntimeError, MemoryError, ValueError):       # no such thread here: build on this one
            t = None
        finally:
            threading.stack_size(old)
    if t is None:
        _release()
        return fn(*args)
    try:
        t.join()
    finally:
        _release()
    e = box.get("e")
    if e is None and box.get("x") is None:
        return box["r"]
    if e is None:        # it finished although a callback ran out: its result cannot be trusted
        raise resource_error(box["x"], where=box.get("at"))
    err = resource_error(e, box.get("x"), box.get("at"))
    if err is not None:
        raise err from e
    raise e


# Python's cyclic collector paused while any build runs: a build makes hundreds of thousands of
# objects that stay alive until it ends (cursors, typed tree, llvmlite IR), and every full
# collection walked all of them again: a 10,000-case switch's front end and lowering took
# 3.0-3.8 s with the collector, 1.4-2.8 s without (issue 31 part 4; 2-core machine, loaded).
# What a build leaves behind is collected when the last build ends.
_gc_was_enabled = False


def _pause_gc():
    global _gc_was_enabled
    _gc_was_enabled = gc.isenabled()
    gc.disable()


def _resume_gc():
    if _gc_was_enabled:
        gc.enable()


def _release():
    global _active
    with _lock:
        _active -= 1
        if _active == 0:
            sys.setrecursionlimit(_saved_limit)
            _resume_gc()
            if sys.unraisablehook is _unraisable:
                sys.unraisablehook = _previous_hook
