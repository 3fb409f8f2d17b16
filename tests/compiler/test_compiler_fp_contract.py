"""`#pragma OPENCL FP_CONTRACT` is honoured with C99's scope rules.

Contraction (a*b + c computed with one rounding) is allowed by default in OpenCL C and PyPlat
does it (llvm.fmuladd); under FP_CONTRACT OFF it must not. The inputs below tell the two
apart: x*y = 1 + 2^-22 + 2^-46 rounds to 1 + 2^-22 = -z, so x*y + z is 0 when rounded twice
and 2^-46 fused. Where the pragma allows contraction PyPlat fuses, so each test also shows
that the state came back ON where the scope ends.
"""
import os
import tempfile

import numpy as np

import pyplat.compiler as C
from support.compiled import run

FUSED = np.float32(2.0 ** -46)
X, Y, Z = np.float32(1 + 2.0 ** -23), np.float32(1 + 2.0 ** -23), np.float32(-(1 + 2.0 ** -22))

KERNEL = """
__kernel void k(__global const float *in, __global float *out) {
    float x = in[0], y = in[1], z = in[2];
BODY
}
"""


def results(result, n):
    assert result.ok, result.log
    inp = np.array([X, Y, Z], np.float32)
    out = np.full(n, 7.0, np.float32)
    run(result.kernels["k"], [inp, out], (1,), (1,))
    return list(out)


def build(body, before="", options=""):
    return C.build(before + KERNEL.replace("BODY", body), options, use_cache=False)


def test_default_is_contracted_and_file_scope_off_is_not():
    body = "    out[0] = x * y + z; out[1] = z + x * y; out[2] = fma(x, y, z);"
    assert results(build(body), 3) == [FUSED, FUSED, FUSED]
    off = "#pragma OPENCL FP_CONTRACT OFF\n"
    assert results(build(body, off), 3) == [0, 0, FUSED]
    # DEFAULT (and ON) after OFF: contraction allowed again from there on
    for state in ("ON", "DEFAULT"):
        src = off + "float g(float a, float b, float c) { return a * b + c; }\n" + \
            "#pragma OPENCL FP_CONTRACT %s\n" % state + \
            "float h(float a, float b, float c) { return a * b + c; }\n"
        assert results(build("    out[0] = g(x, y, z); out[1] = h(x, y, z);", src), 2) == [0, FUSED]


def test_block_scope_ends_with_its_compound_statement():
    body = """
    {
        #pragma OPENCL FP_CONTRACT OFF
        out[0] = x * y + z;
        {
            #pragma OPENCL FP_CONTRACT ON
            out[1] = x * y + z;
        }
        out[2] = x * y + z;
    }
    out[3] = x * y + z;
    if (x > 0) {
        #pragma OPENCL FP_CONTRACT OFF
        out[4] = x * y + z;
    } else {
        out[4] = 1.0f;
    }
    out[5] = x * y - (-z);"""
    assert results(build(body), 6) == [0, FUSED, 0, FUSED, 0, FUSED]


def test_skipped_lines_and_headers():
    off = "#pragma OPENCL FP_CONTRACT OFF\n"
    body = "    out[0] = x * y + z;"
    # under #if 0 the pragma is no pragma; under -D it is
    cond = "#ifdef EXACT\n" + off + "#endif\n"
    assert results(build(body, cond), 1) == [FUSED]
    assert results(build(body, cond, "-D EXACT"), 1) == [0]
    # in a header from -I: holds from the #include on
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "exact.h"), "w") as f:
            f.write(off + "float g(float a, float b, float c) { return a * b + c; }\n")
        src = "float before(float a, float b, float c) { return a * b + c; }\n#include \"exact.h\"\n"
        got = results(build("    out[0] = before(x, y, z); out[1] = g(x, y, z); out[2] = x * y + z;",
                            src, "-I " + d), 3)
        assert got == [FUSED, 0, 0]


def test_clcompileprogram_header_and_link():
    src = "#include \"exact.h\"\n" + KERNEL.replace("BODY", "    out[0] = x * y + z;")
    obj = C.compile_object(src, "", headers=[("exact.h", "#pragma OPENCL FP_CONTRACT OFF\n")])
    assert obj.ok, obj.log
    linked = C.link([obj.data], use_cache=False)
    assert results(linked, 1) == [0]
