"""`for` headers with missing parts (`for (i = 0; ; i++)`, `for (; c; )`, `for (;;)`) wherever
real programs write them: plain code, macro bodies, a header given to clCompileProgram, a macro
chosen under #if. libclang leaves the missing parts out of a for statement's children; which
part is which comes from clang's printing of the function, never from the source text. Results
are checked against values computed here and, where PoCL is installed, against PoCL's."""
import numpy as np

import pyplat.compiler as C
from support.single_item import check, on_pyplat

LOOPS = """
#define UP_TO(i, n) for (i = 0; ; i++) if (i >= n) break; else
#define WHILE_LT(j, n) for (; j < n; )
#define STEP2(j) for (;; j += 2) if (j > 9) break; else
#define FROM1(q) for (q = 1; q < 3;)
"""

BODY = """
__kernel void k(__global const int *in, __global int *out) {
    int i, j = 0, m = 0, q, w = 0;
    out[4] = 0; out[5] = 0;
    UP_TO(i, 4) out[i] = in[i];
    WHILE_LT(j, 4) { out[j] += 100; j++; }
    STEP2(m) { out[4] += m; }
    FROM1(q) { out[5] += q; q++; }
    for (;;) { out[6] = 7; break; }
    for (; ; w++) { if (w == 3) break; }
    out[7] = w;
}"""

WANT = [110, 111, 112, 113, 20, 3, 7, 3]


def test_missing_parts_in_macros():
    check(LOOPS + BODY, WANT)


def test_missing_parts_written_in_plain_code():
    src = """
    __kernel void k(__global const int *in, __global int *out) {
        int i = 0, s = 0;
        for (i = 2; ; i++) { if (i > 5) break; s += in[i]; }     /* 12+13+14+15 */
        out[0] = s;
        for (; i < 8; ) i += 1;
        out[1] = i;
        for (int z = 1; ; ) { out[2] = z; break; }
        int x = 0;
        for (; ; x += 3) if (x > 7) break;
        out[3] = x;
    }"""
    check(src, [54, 8, 1, 9])


def test_macro_chosen_under_if():
    for cond, want in (("1", [0, 0]), ("0", [4, 4])):
        src = """
        #if %s
        #define LOOP(i) for (i = 0; i < 0; )
        #else
        #define LOOP(i) for (; i < 4; i++)
        #endif
        __kernel void k(__global const int *in, __global int *out) {
            int i = 0;
            LOOP(i) { }
            out[0] = i; out[1] = i;
        }""" % cond
        check(src, want)


def test_header_given_to_compile_program():
    obj = C.compile_object('#include "loops.h"\n' + BODY, "", headers=[("loops.h", LOOPS)])
    assert obj.ok, obj.log
    got = on_pyplat(C.link([obj.data], use_cache=False), len(WANT))
    np.testing.assert_array_equal(got, WANT)


def test_header_through_include_dir(tmp_path):
    (tmp_path / "loops.h").write_text(LOOPS)
    check('#include "loops.h"\n' + BODY, WANT, "-I %s" % tmp_path)


def test_for_headers_reads_the_printing():
    from pyplat.compiler import printed as PR
    text = ('void f() {\n    for (int i = 0; ; i++) {\n        for (;;)\n            ;\n    }\n'
            '    printf("for (;;)");\n    for (; (a(1), b); ) ;\n    for (x = f(1, 2); x; x = g(x)) ;\n}\n')
    assert PR.for_headers(text) == [(True, False, True), (False, False, False), (False, True, False),
                                    (True, True, True)]
