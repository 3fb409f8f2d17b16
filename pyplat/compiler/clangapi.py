"""libclang access: the python bindings plus the C entry points they lack.

We load our own ctypes handle on the same libclang so that setting argtypes
and restypes here never disturbs clang.cindex's declarations.
"""
import ctypes
import os

import clang.cindex as ci

# libclang parses on a thread of its own with an 8 MiB stack, which deeply nested code (a
# 30,000-term sum) overflows, killing the process; without threads it parses on the caller's:
# a build thread with limits.COMPILE_STACK_SIZE.
os.environ.setdefault("LIBCLANG_NOTHREADS", "1")

ci.conf.lib  # force loading / configuration
_lib = ctypes.CDLL(ci.conf.lib._name)


def _fn(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


binop_kind = _fn("clang_getCursorBinaryOperatorKind", ctypes.c_int, ci.Cursor)
unop_kind = _fn("clang_getCursorUnaryOperatorKind", ctypes.c_int, ci.Cursor)
calling_conv = _fn("clang_getFunctionTypeCallingConv", ctypes.c_int, ci.Type)
_eval = _fn("clang_Cursor_Evaluate", ctypes.c_void_p, ci.Cursor)
_eval_kind = _fn("clang_EvalResult_getKind", ctypes.c_int, ctypes.c_void_p)
_eval_isuns = _fn("clang_EvalResult_isUnsignedInt", ctypes.c_uint, ctypes.c_void_p)
_eval_uns = _fn("clang_EvalResult_getAsUnsigned", ctypes.c_ulonglong, ctypes.c_void_p)
_eval_ll = _fn("clang_EvalResult_getAsLongLong", ctypes.c_longlong, ctypes.c_void_p)
_eval_dbl = _fn("clang_EvalResult_getAsDouble", ctypes.c_double, ctypes.c_void_p)
_eval_dispose = _fn("clang_EvalResult_dispose", None, ctypes.c_void_p)
_spelling_loc = _fn("clang_getSpellingLocation", None, ci.SourceLocation, ctypes.POINTER(ctypes.c_void_p),
                    ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint))
_expansion_loc = _fn("clang_getExpansionLocation", None, ci.SourceLocation, ctypes.POINTER(ctypes.c_void_p),
                     ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint))
_file_name = _fn("clang_getFileName", ci._CXString, ctypes.c_void_p)
_cstr = _fn("clang_getCString", ctypes.c_char_p, ci._CXString)
_dispose_str = _fn("clang_disposeString", None, ci._CXString)

# clang's numbers of the OpenCL address spaces (Type.get_address_space())
ADDRSPACE = {0: "private", 1: "global", 2: "local", 3: "constant", 4: "private", 5: "generic"}
BINOPS = {3: "*", 4: "/", 5: "%", 6: "+", 7: "-", 8: "<<", 9: ">>", 11: "<", 12: ">", 13: "<=",
          14: ">=", 15: "==", 16: "!=", 17: "&", 18: "^", 19: "|", 20: "&&", 21: "||", 22: "=",
          23: "*=", 24: "/=", 25: "%=", 26: "+=", 27: "-=", 28: "<<=", 29: ">>=", 30: "&=",
          31: "^=", 32: "|=", 33: ","}
UNOPS = {1: "post++", 2: "post--", 3: "pre++", 4: "pre--", 5: "&", 6: "*", 7: "+", 8: "-",
         9: "~", 10: "!", 13: "__extension__"}

_fname_cache = {}


def _fname(fptr):
    if not fptr:
        return None
    n = _fname_cache.get(fptr)
    if n is None:
        s = _file_name(fptr)
        n = (_cstr(s) or b"").decode()
        _dispose_str(s)
        _fname_cache[fptr] = n
    return n


def _loc(fn, loc):
    f = ctypes.c_void_p()
    line, col, off = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
    fn(loc, ctypes.byref(f), ctypes.byref(line), ctypes.byref(col), ctypes.byref(off))
    return _fname(f.value), line.value, col.value, off.value


def spelling_loc(loc):
    """(file, line, col, offset) where the token at loc is spelled."""
    return _loc(_spelling_loc, loc)


def expansion_loc(loc):
    """(file, line, col, offset) of the outermost macro expansion containing loc."""
    return _loc(_expansion_loc, loc)


def evaluate(cursor):
    """Constant value of an expression cursor (int or float), or None."""
    r = _eval(cursor)
    if not r:
        return None
    try:
        k = _eval_kind(r)
        if k == 1:
            return int(_eval_uns(r)) if _eval_isuns(r) else int(_eval_ll(r))
        if k == 2:
            return float(_eval_dbl(r))
        return None
    finally:
        _eval_dispose(r)


_pretty = _fn("clang_getCursorPrettyPrinted", ci._CXString, ci.Cursor, ctypes.c_void_p)
_policy = _fn("clang_getCursorPrintingPolicy", ctypes.c_void_p, ci.Cursor)
_policy_set = _fn("clang_PrintingPolicy_setProperty", None, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint)
_policy_dispose = _fn("clang_PrintingPolicy_dispose", None, ctypes.c_void_p)
_TERSE_OUTPUT = 8       # CXPrintingPolicy_TerseOutput: declarations without their bodies


def pretty_printed(decl, terse=False):
    """clang's own printing of a declaration's AST (a function definition: its whole body;
    terse: its declaration only), after preprocessing: every macro expanded as the preprocessor
    chose it, attribute arguments as clang computed them, every member and vector component
    accessor spelled as clang resolved it."""
    pol = _policy(decl)
    try:
        if terse and pol:
            _policy_set(pol, _TERSE_OUTPUT, 1)
        s = _pretty(decl, pol)          # a _CXString: disposed by its own __del__
        return (_cstr(s) or b"").decode("utf-8", "replace")
    finally:
        if pol:
            _policy_dispose(pol)
