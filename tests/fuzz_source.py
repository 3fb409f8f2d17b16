"""Kernel-source mutations: random programs the compiler must answer cleanly.

Each program is a valid one from the differential generator (tests/difftest), mutated at one
to three token ranges: removed, replaced by a token of a small OpenCL C vocabulary (operators,
types, qualifiers, swizzles, huge sizes, builtins), duplicated, or replaced by another range of
the program. Most results are invalid; the compiler must build each one or fail it with a build
log, never crash and never report an internal compiler error. Programs that build are not run
(a mutated kernel may loop or write out of bounds).

Run in a child process (a crash shows as a failed batch): `python tests/fuzz_source.py --seed S
--programs N` prints one JSON line of counts; tools/fuzz_source.py is the long mode.
"""
import json
import os
import random
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

_TOKEN = re.compile(r"[A-Za-z_]\w*|0x[0-9a-fA-F]+[uUlL]*|\d+\.?\d*(?:[eE][+-]?\d+)?[fFuUlL]*"
                    r"|\.\d+[fF]?|->|\+\+|--|<<=|>>=|<<|>>|&&|\|\||[<>=!&|^+\-*/%]=|\S", re.S)

VOCABULARY = [
    "+", "-", "*", "/", "%", "(", ")", "{", "}", "[", "]", ";", ",", ".", "->", "=", "==", "?",
    ":", "<<", "~", "!", "int", "float4", "uchar16", "double", "half", "bool", "void", "__global",
    "__local", "__constant", "__private", "const", "volatile", "restrict", "barrier(CLK_LOCAL_MEM_FENCE)",
    "0", "1", "-1", "0x7fffffff", "4294967295u", "1e38f", "0.0f", "NAN", ".xyzw", ".s0123", ".lo",
    ".odd", ".sF", "x", "in", "out", "gid", "return", "if", "else", "for", "while", "do", "break",
    "continue", "goto", "switch", "case", "default", "sizeof", "vec_step", "struct", "union",
    "typedef", "#", "\\", "__attribute__((reqd_work_group_size(8,1,1)))", "get_global_id(0)",
    "vload4(0, in)", "as_float4", "convert_int_sat", "int a[100000000];", "__constant int c[1u << 31];",
    "((", "))", "__kernel", "printf(\"%d\\n\", 1)", "#pragma OPENCL FP_CONTRACT OFF\n",
    "#pragma unroll 4\n", "_Generic", "__builtin_expect", "async_work_group_copy",
]


def mutate(source, rng):
    out = source
    for _ in range(rng.randint(1, 3)):
        toks = [(m.start(), m.end()) for m in _TOKEN.finditer(out)]
        if not toks:
            break
        i = rng.randrange(len(toks))
        j = min(len(toks) - 1, i + rng.randint(0, 4))
        a, b = toks[i][0], toks[j][1]
        k = rng.random()
        if k < 0.3:
            out = out[:a] + out[b:]
        elif k < 0.6:
            out = out[:a] + rng.choice(VOCABULARY) + out[b:]
        elif k < 0.75:
            out = out[:a] + out[a:b] + " " + out[a:b] + out[b:]
        elif k < 0.85:
            out = out[:a] + " " + rng.choice(VOCABULARY) + " " + out[a:]
        else:
            c = toks[rng.randrange(len(toks))]
            out = out[:a] + out[c[0]:c[1]] + out[b:]
    return out


def run(seed, programs, keep=None):
    """Build `programs` mutated programs; counts, and the internal errors' sources."""
    os.environ.setdefault("PYPLAT_CACHE_DIR", "off")
    from pyplat.compiler import build
    from difftest import generator, runner
    rng = random.Random(seed)
    counts = {"programs": 0, "built": 0, "failed": 0, "internal_errors": 0}
    bad = []
    with tempfile.TemporaryDirectory(prefix="fuzzsrc") as inc:
        for _ in range(programs):
            prog = generator.generate(rng.randrange(1 << 30), "p_")
            src, hdr = runner.batch_source([prog])
            with open(os.path.join(inc, runner.HEADER), "w") as f:
                f.write(hdr if isinstance(hdr, str) else "\n".join(hdr))
            mutated = mutate(src, rng)
            r = build(mutated, "-cl-fp32-correctly-rounded-divide-sqrt -I " + inc)
            counts["programs"] += 1
            if r.ok:
                counts["built"] += 1
            elif "internal compiler error" in r.log or not r.log.strip():
                counts["internal_errors"] += 1
                bad.append({"log": r.log[-400:], "source": mutated})
            else:
                counts["failed"] += 1
    if keep:
        for n, b in enumerate(bad):
            with open(os.path.join(keep, "internal_error_%d_%d.cl" % (seed, n)), "w") as f:
                f.write("/* %s */\n%s" % (b["log"].replace("*/", "* /"), b["source"]))
    return counts, bad


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--programs", type=int, default=200)
    ap.add_argument("--keep", help="directory to save programs that gave an internal error")
    a = ap.parse_args(argv)
    t0 = time.time()
    counts, _ = run(a.seed, a.programs, a.keep)
    counts["seconds"] = round(time.time() - t0, 1)
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
