#!/usr/bin/env python3
"""Generate PyPlat's entry points from the installed Khronos headers.

Reads CL/cl_icd.h (and the headers it includes) with libclang and writes:
  * a C file with one exported stub per dispatch slot, the dispatch table and
    the "not implemented" fallbacks (icd/ compiles it into libpyplat-icd.so);
  * a Python module listing the slots in dispatch order with their argument
    kinds (pyplat/api/_entry_points.py), from which the API layer builds its
    ctypes callbacks;
  * a Python module with the numeric CL_* constants of the headers (pyplat/cl.py).
Its parser and constants also serve gen_cython_decls.py, which writes the Cython side's
declarations of the same entries and constants.

Usage: gen_entry_points.py INCLUDE_DIR OUT_C OUT_ENTRY_PY OUT_CONST_PY
"""
import os
import re
import subprocess
import sys

import clang.cindex as ci

# Canonical C spelling -> the kind the Python side marshals.
SCALAR_KINDS = {
    "int": "i32", "unsigned int": "u32", "long": "i64", "unsigned long": "u64",
    "long long": "i64", "unsigned long long": "u64", "void": "void",
    "float": "f32", "double": "f64",
}


def compiler_include_dir():
    """Where stddef.h lives: libclang's wheel ships no resource headers."""
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if not cc:
            continue
        try:
            out = subprocess.run([cc, "-print-file-name=include"], capture_output=True,
                                 text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            continue
        if os.path.exists(os.path.join(out, "stddef.h")):
            return out
    return None


def kind_of(ty):
    ty = ty.get_canonical()
    if ty.kind in (ci.TypeKind.POINTER, ci.TypeKind.INCOMPLETEARRAY, ci.TypeKind.CONSTANTARRAY):
        return "ptr"
    spelling = ty.spelling.replace("const ", "").strip()
    if spelling not in SCALAR_KINDS:
        raise ValueError(f"unmarshallable type {ty.spelling!r}")
    return SCALAR_KINDS[spelling]


def param_text(parm, index, declared_name=""):
    """Declaration text of a parameter, keeping typedef names and callback syntax."""
    toks = [t.spelling for t in parm.get_tokens()]
    name = parm.spelling or declared_name or f"a{index}"
    if not parm.spelling:
        spelling = parm.type.spelling
        if "(*)" in spelling:  # unnamed pointer to function: the name goes inside
            return spelling.replace("(*)", f"(*{name})", 1), name
        return f"{spelling} {name}", name
    return " ".join(toks), name


def parse(include_dir):
    args = ["-x", "c", "-std=c11", f"-I{include_dir}", "-DCL_TARGET_OPENCL_VERSION=300",
            "-DCL_USE_DEPRECATED_OPENCL_1_0_APIS", "-DCL_USE_DEPRECATED_OPENCL_1_1_APIS",
            "-DCL_USE_DEPRECATED_OPENCL_1_2_APIS", "-DCL_USE_DEPRECATED_OPENCL_2_0_APIS",
            "-DCL_USE_DEPRECATED_OPENCL_2_1_APIS", "-DCL_USE_DEPRECATED_OPENCL_2_2_APIS",
            # cl_platform.h pulls in SIMD intrinsics headers we neither need nor can parse
            "-U__SSE__", "-U__SSE2__", "-U__AVX__", "-U__MMX__"]
    extra = compiler_include_dir()
    if extra:
        args.append(f"-I{extra}")
    header = os.path.join(include_dir, "CL", "cl_icd.h")
    tu = ci.Index.create().parse(header, args=args)
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        raise SystemExit("\n".join(str(d) for d in errors))
    return tu


def collect(tu):
    typedefs = {}
    dispatch = None
    for cur in tu.cursor.get_children():
        if cur.kind == ci.CursorKind.TYPEDEF_DECL and cur.spelling.startswith("cl_api_"):
            typedefs[cur.spelling] = cur
        elif cur.kind == ci.CursorKind.STRUCT_DECL and cur.spelling == "_cl_icd_dispatch":
            if cur.is_definition():
                dispatch = cur
    # cl_icd.h leaves some parameters unnamed; the declarations in cl.h name them all.
    declared = {cur.spelling: [p.spelling for p in cur.get_arguments()]
                for cur in tu.cursor.get_children() if cur.kind == ci.CursorKind.FUNCTION_DECL}
    slots = []
    for field in dispatch.get_children():
        if field.kind != ci.CursorKind.FIELD_DECL:
            continue
        name = field.spelling
        td = typedefs.get(field.type.spelling)
        proto = field.type.get_canonical().get_pointee()
        if td is None or proto.kind != ci.TypeKind.FUNCTIONPROTO:
            slots.append({"name": name, "typedef": field.type.spelling, "available": False})
            continue
        parms = [c for c in td.get_children() if c.kind == ci.CursorKind.PARM_DECL]
        names = declared.get(name, [])
        params = [param_text(p, i, names[i] if i < len(names) else "") for i, p in enumerate(parms)]
        slots.append({
            "name": name, "typedef": td.spelling, "available": True,
            "ret": proto.get_result().spelling, "ret_kind": kind_of(proto.get_result()),
            "params": params,
            "arg_kinds": [(n, kind_of(p.type)) for (_, n), p in zip(params, parms)],
        })
    return slots


def fail_value(slot):
    """What a stub returns when the slot has no implementation."""
    kind = slot["ret_kind"]
    names = [n for _, n in slot["params"]]
    if kind == "void":
        return None, ""
    if kind == "ptr":
        if "errcode_ret" in names:
            return "errcode_ret", "NULL"
        return None, "NULL"
    return None, "CL_INVALID_OPERATION"


# Implemented in C by shim.c (they must work before Python is loaded); the generator only
# puts them in the dispatch table.
C_IMPLEMENTED = ("clGetExtensionFunctionAddress", "clGetExtensionFunctionAddressForPlatform")

EXTENSION_SUFFIX = re.compile(r"(KHR|EXT|APPLE|INTEL|ARM|IMG|QCOM|AMD|NV|ALTERA|POCL)$")


def is_extension(name):
    """Entry points that clGetExtensionFunctionAddress hands out (the core ones it must not)."""
    return bool(EXTENSION_SUFFIX.search(name))


def write_c(slots, path):
    out = [
        "/* Generated by icd/gen_entry_points.py from the installed Khronos headers. Do not edit. */",
        '#include "shim.h"', "",
        f"#define PYPLAT_N_ENTRIES {len(slots)}",
        "/* [0, N): the entries called with the GIL held; [N, 2N): native entries (see shim.h). */",
        "void *pyplat_entry_table[2 * PYPLAT_N_ENTRIES];",
        "const int pyplat_n_entries = PYPLAT_N_ENTRIES;", "",
    ]
    for i, s in enumerate(slots):
        if not s["available"] or s["name"] in C_IMPLEMENTED:
            continue
        name, ret = s["name"], s["ret"]
        plist = ", ".join(t for t, _ in s["params"]) or "void"
        call_args = ", ".join(n for _, n in s["params"])
        err_arg, value = fail_value(s)
        # Fallback used until Python fills the slot, and for entry points PyPlat lacks.
        out.append(f"static {ret} CL_API_CALL missing_{name}({plist}) {{")
        for _, n in s["params"]:
            out.append(f"    (void){n};")
        out.append(f'    pyplat_report_missing("{name}");')
        if err_arg:
            out.append(f"    if ({err_arg}) *{err_arg} = CL_INVALID_OPERATION;")
        out.append(f"    return {value};" if value else "    return;")
        out.append("}")
        call = f"(({s['typedef']})pyplat_entry_table[{i}])({call_args})"
        out.append(f"PYPLAT_HIDDEN {ret} CL_API_CALL pyplat_{name}({plist}) {{")
        out.append("    PYPLAT_ENSURE_LOADED();")
        if s["ret_kind"] in ("i32", "ptr"):
            # The runtime's native entry, if any, answers first without the GIL (a status, or a
            # handle for the clCreate* entries: pyplat_handle.h's PYPLAT_DEFER(_HANDLE) if not).
            deferred = "PYPLAT_DEFER" if s["ret_kind"] == "i32" else f"({ret})PYPLAT_DEFER_HANDLE"
            out.append(f"    void *native = __atomic_load_n(&pyplat_entry_table[PYPLAT_N_ENTRIES + {i}], "
                       "__ATOMIC_ACQUIRE);")
            out.append("    if (native) {")
            out.append(f"        {ret} answer = (({s['typedef']})native)({call_args});")
            out.append(f"        if (answer != {deferred}) return answer;")
            out.append("    }")
        # Keep a Python exception the calling thread may have pending out of our Python code.
        out.append("    struct pyplat_py_call saved;")
        # Interpreter finalising: releases and waits succeed (the process is ending), anything
        # else fails as if unimplemented.
        if s["ret_kind"] == "void":
            out.append("    if (!pyplat_py_enter(&saved)) return;")
        elif s["ret_kind"] == "i32":
            quiet = name.startswith(("clRelease", "clRetain", "clFinish", "clFlush", "clWaitFor"))
            out.append(f"    if (!pyplat_py_enter(&saved)) return {'CL_SUCCESS' if quiet else value};")
        else:
            out.append("    if (!pyplat_py_enter(&saved)) {")
            if err_arg:
                out.append(f"        if ({err_arg}) *{err_arg} = CL_OUT_OF_HOST_MEMORY;")
            out.append(f"        return {value};")
            out.append("    }")
        if s["ret_kind"] == "void":
            out.append(f"    {call};")
            out.append("    pyplat_py_leave(&saved);")
        else:
            out.append(f"    {ret} result = {call};")
            out.append("    pyplat_py_leave(&saved);")
            out.append("    return result;")
        out.append("}")
        # Exported under the real name for programs that link PyPlat directly; the
        # dispatch table points at the hidden pyplat_ name so that calls never bind
        # to the loader's exported clXxx of the same name.
        out.append(f"PYPLAT_EXPORT_ALIAS({name})")
        out.append("")
    out.append("void pyplat_entry_table_init(void) {")
    out.append("    for (int i = 0; i < PYPLAT_N_ENTRIES; i++)")
    out.append("        __atomic_store_n(&pyplat_entry_table[PYPLAT_N_ENTRIES + i], NULL, __ATOMIC_RELEASE);")
    for i, s in enumerate(slots):
        if s["available"]:
            fn = "pyplat_" if s["name"] in C_IMPLEMENTED else "missing_"
            out.append(f"    pyplat_entry_table[{i}] = (void *){fn}{s['name']};")
    out.append("}")
    out.append("")
    out.append("const struct pyplat_named_entry pyplat_extension_entries[] = {")
    for s in slots:
        if s["available"] and is_extension(s["name"]):
            out.append(f'    {{"{s["name"]}", (void *)pyplat_{s["name"]}}},')
    out.append('    {"clIcdGetPlatformIDsKHR", (void *)pyplat_clIcdGetPlatformIDsKHR},')
    out.append("    {NULL, NULL},")
    out.append("};")
    out.append("")
    out.append("const struct _cl_icd_dispatch pyplat_dispatch = {")
    for s in slots:
        if s["available"]:
            out.append(f"    .{s['name']} = pyplat_{s['name']},")
    out.append("};")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def write_entry_py(slots, path):
    lines = [
        '"""Dispatch slots of the ICD, in the order of struct _cl_icd_dispatch.',
        "",
        "Generated by icd/gen_entry_points.py from the installed Khronos headers. Do not edit.",
        "Each entry: (name, return kind, ((arg name, arg kind), ...)); None for slots that",
        'do not exist on this platform (Windows-only sharing extensions)."""',
        "",
        "ENTRY_POINTS = (",
    ]
    for s in slots:
        if s["available"]:
            lines.append(f"    ({s['name']!r}, {s['ret_kind']!r}, {tuple(s['arg_kinds'])!r}),")
        else:
            lines.append("    None,  # " + s["name"])
    lines.append(")")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


DEFINE = re.compile(r"^\s*#\s*define\s+(CL_[A-Z0-9_]+)\s+(.+?)\s*(?://.*|/\*.*)?$")
CAST = re.compile(r"\(\s*(?:cl_[a-z_0-9]+|unsigned|int|long|unsigned int|unsigned long)\s*\)")
SUFFIX = re.compile(r"\b(0x[0-9A-Fa-f]+|\d+)(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?)\b")


def constants(include_dir):
    """{name: int} of the numeric CL_* macros of the headers (also gen_cython_decls.py's)."""
    values = {}
    for header in ("cl.h", "cl_ext.h", "cl_platform.h", "cl_gl.h", "cl_egl.h", "cl_icd.h"):
        full = os.path.join(include_dir, "CL", header)
        if not os.path.exists(full):
            continue
        for line in open(full):
            m = DEFINE.match(line)
            if not m:
                continue
            name, expr = m.groups()
            expr = SUFFIX.sub(r"\1", CAST.sub("", expr))
            if not re.fullmatch(r"[\w\s()<>|+\-~*x]+", expr):
                continue
            try:
                value = eval(expr, {"__builtins__": {}}, dict(values))
            except Exception:
                continue
            if isinstance(value, int) and name not in values:
                values[name] = value
    return values


def write_constants(include_dir, path):
    values = constants(include_dir)
    with open(path, "w") as f:
        f.write('"""Numeric CL_* constants of the installed Khronos headers.\n\n'
                'Generated by icd/gen_entry_points.py. Do not edit."""\n\n')
        for name, value in values.items():
            f.write(f"{name} = {value}\n")


def main(argv):
    include_dir, out_c, out_entry, out_const = argv[1:5]
    slots = collect(parse(include_dir))
    write_c(slots, out_c)
    write_entry_py(slots, out_entry)
    write_constants(include_dir, out_const)


if __name__ == "__main__":
    main(sys.argv)
