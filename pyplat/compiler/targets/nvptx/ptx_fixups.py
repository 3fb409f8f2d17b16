"""Rewrites of the PTX text LLVM emits, for what NVIDIA's PTX compilers get wrong.

Truncating stores. Since LLVM 20 the NVPTX back end keeps floating-point values in untyped
registers (`%rd` for a double) and stores part of a register by naming a narrower type:
`st.shared.b8 [a], %rd5` stores the low byte of %rd5 (the PTX ISA: bit-size types truncate).
The CUDA 13 driver's JIT (580) instead converts the value when %rd5 was written by an f64
instruction: the low byte of the *integer* value is stored. That hits every under-aligned store
of a double or float (packed structs, pyopencl's scan with bank-conflict avoidance): 7.0 read
back as 7.000000000000006. Measured on an H100 with hand-written PTX: a `mov` of the register
into a fresh one first gives the bits, so every truncating store goes through one.
"""
import re

_WIDTH = {"rs": 16, "r": 32, "rd": 64}
_TRUNCATING_STORE = re.compile(
    r"^(?P<indent>\s*)(?P<op>st(?:\.[a-z]+)*\.[bsu](?P<bits>8|16|32))\s+(?P<addr>\[[^\]]*\]),\s*"
    r"(?P<reg>%(?P<kind>rs|rd|r)\d+);\s*$")


def fix_truncating_stores(ptx):
    """`ptx` with every store of part of a wider register made through a copy of it."""
    out = []
    for line in ptx.split("\n"):
        m = _TRUNCATING_STORE.match(line)
        if m and _WIDTH[m["kind"]] > int(m["bits"]):
            width = _WIDTH[m["kind"]]
            line = (f"{m['indent']}{{ .reg .b{width} %pp_bits; mov.b{width} %pp_bits, {m['reg']}; "
                    f"{m['op']} {m['addr']}, %pp_bits; }}")
        out.append(line)
    return "\n".join(out)
