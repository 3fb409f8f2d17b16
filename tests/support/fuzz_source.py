"""Kernel-source mutations: random programs the compiler must answer cleanly.

Each program is a valid one from the differential generator (tests/support/difftest), mutated at one
to three token ranges: removed, replaced by a token of a small OpenCL C vocabulary (operators,
types, qualifiers, swizzles, huge sizes, builtins), duplicated, or replaced by another range of
the program. Most results are invalid; the compiler must build each one or fail it with a build
log, never crash and never report an internal compiler error; the log's first error must name a
line of the source ("unlocated" counts those at :0:0 or without a location), and no build may
take more than 30 s ("slow"). Programs that build are not run (a mutated kernel may loop or
write out of bounds).

Run in a child process (a crash shows as a failed batch): `python tests/support/fuzz_source.py --seed S
--programs N` prints one JSON line of counts; tools/fuzz_source.py is the long mode.
"""
import json
import os
import random
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # tests/: support

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
    # types clang accepts and the compiler does not (their errors were once at <source>:0:0)
    "sampler_t", "event_t", "__int128", "long double", "_Complex float",
]


# Wrappers the nesting mutation puts around a statement or an expression, many levels deep: deep
# nesting is where compile time and recursion go wrong (clang stops brackets at 256 levels; loops
# and ifs without braces, unary operators and casts have no such limit).
STATEMENT_NESTINGS = [("{", "}"), ("if (gid) ", ""), ("if (gid) {", "}"), ("while (gid) ", ""),
                      ("for (int q = 0; q < 2; q++) ", ""), ("for (int q = 0; q < 2; q++) {", "}"),
                      ("do {", "} while (0);"), ("if (gid) {} else ", ""), ("switch (gid) { default: ", "}")]
EXPRESSION_NESTINGS = [("(", ")"), ("-", ""), ("!", ""), ("~", ""), ("(int)", ""), ("+", ""),
                       ("gid ? 0 : ", ""), ("abs(", ")"), ("1 + ", ""), ("(1, ", ")")]
_STATEMENT = re.compile(r"^([ \t]+)([^\n]*;)[ \t]*$", re.M)
_ASSIGNED = re.compile(r"(?<=[^=!<>]=)([^;=]+)(?=;)")


def nest(source, rng):
    """`source` with one statement or assigned expression wrapped in 2..~700 levels of a
    nesting (a heavy-tailed depth), the rest left valid: the deep nesting reaches every stage
    of the compiler. None when the source has no such place."""
    depth = int(2 + rng.paretovariate(1.0) * 8) % 700
    if rng.random() < 0.5:
        places, (left, right) = list(_STATEMENT.finditer(source)), rng.choice(STATEMENT_NESTINGS)
        group = 2
    else:
        places, (left, right) = list(_ASSIGNED.finditer(source)), rng.choice(EXPRESSION_NESTINGS)
        group = 1
    if not places:
        return None
    m = rng.choice(places)
    a, b = m.span(group)
    return source[:a] + left * depth + source[a:b] + right * depth + source[b:]


def mutate(source, rng):
    if rng.random() < 0.15:           # deep nesting alone (with others the program rarely parses)
        nested = nest(source, rng)
        if nested is not None:
            return nested
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


# A build over this many seconds counts as slow (PoCL answers each of these programs in < 1 s).
SLOW_SECONDS = 30.0
# A located diagnostic: "<file>:<line>:<col>: [fatal ]error:" with a real line (>= 1).
_LOCATED = re.compile(r"^[^\n]*?:([0-9]+):([0-9]+): (?:fatal )?error:")


def located(log):
    """Whether the log's first error names a place in the source (line >= 1): an error at
    :0:0, or with no location at all, leaves the programmer to search the whole program."""
    for line in log.splitlines():
        if "error:" in line:
            m = _LOCATED.match(line)
            return bool(m) and int(m.group(1)) >= 1
    return False


def classify(result, seconds):
    """The fuzzer's classes of one build: a failed build may also be unlocated, any build slow.
    -> (class, [extra classes])"""
    extra = ["slow"] if seconds > SLOW_SECONDS else []
    if result.ok:
        return "built", extra
    if "internal compiler error" in result.log or not result.log.strip():
        return "internal_errors", extra
    if not located(result.log):
        extra.append("unlocated")
    return "failed", extra


def run(seed, programs, keep=None):
    """Build `programs` mutated programs; counts, and the sources of the bad ones (internal
    errors, unlocated logs, slow builds)."""
    os.environ.setdefault("PYPLAT_CACHE_DIR", "off")
    from pyplat.compiler import build
    from support.difftest import generator, runner
    rng = random.Random(seed)
    counts = {"programs": 0, "built": 0, "failed": 0, "internal_errors": 0, "unlocated": 0, "slow": 0,
              "max_seconds": 0.0}
    bad = []
    with tempfile.TemporaryDirectory(prefix="fuzzsrc") as inc:
        for _ in range(programs):
            prog = generator.generate(rng.randrange(1 << 30), "p_")
            src, hdr = runner.batch_source([prog])
            with open(os.path.join(inc, runner.HEADER), "w") as f:
                f.write(hdr if isinstance(hdr, str) else "\n".join(hdr))
            mutated = mutate(src, rng)
            t = time.perf_counter()
            r = build(mutated, "-cl-fp32-correctly-rounded-divide-sqrt -I " + inc)
            seconds = time.perf_counter() - t
            counts["programs"] += 1
            counts["max_seconds"] = round(max(counts["max_seconds"], seconds), 1)
            cls, extra = classify(r, seconds)
            counts[cls] += 1
            for e in extra:
                counts[e] += 1
            for kind in [cls] * (cls == "internal_errors") + extra:
                bad.append({"kind": kind, "log": r.log[-400:], "source": mutated, "seconds": seconds})
    if keep:
        for n, b in enumerate(bad):
            with open(os.path.join(keep, "%s_%d_%d.cl" % (b["kind"], seed, n)), "w") as f:
                f.write("/* %.1f s: %s */\n%s" % (b["seconds"], b["log"].replace("*/", "* /"), b["source"]))
    return counts, bad


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--programs", type=int, default=200)
    ap.add_argument("--keep", help="directory to save the programs that gave an internal error, "
                    "an unlocated log or a slow build (one file each, named by its class)")
    a = ap.parse_args(argv)
    t0 = time.time()
    counts, _ = run(a.seed, a.programs, a.keep)
    counts["seconds"] = round(time.time() - t0, 1)
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
