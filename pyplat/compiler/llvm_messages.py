"""LLVM's own diagnostics ("loop not unrolled: ..."), taken off the host's stderr into the
build log (issue 31 part 4).

LLVM reports a missed transformation a kernel asked for (`#pragma unroll` on a loop it cannot
unroll) through its context's diagnostic handler; llvmlite installs none and exports no way to,
so LLVM's default one writes `warning: <unknown>:0:0: ...` straight to file descriptor 2, in
the middle of the host program's output. While the optimiser and code generator run (under
jit's lock) fd 2 is pointed at a temporary file; LLVM's lines become build-log lines, and
anything else that reached fd 2 meanwhile (another thread of the host) is written back to the
real stderr when the run ends (late). Only modules that carry loop hints are run so: LLVM warns
only of a transformation a loop's `llvm.loop.*` hint asked for, and every other build leaves the
host's stderr alone (a report written there by a crashing thread is never held back)."""
import contextlib
import os
import re
import tempfile

# LLVM's default handler: "<severity>: <location>: <message>" (DiagnosticPrinterRawOStream)
_LLVM_LINE = re.compile(r"^(warning|remark|note|error): (.*)$")
_NO_PLACE = "<unknown>:0:0: "       # what LLVM prints where the IR has no source position


# the loop hints our lowering writes (lowering/statements.py): the only source of these warnings
_HINTS = "llvm.loop.unroll"


@contextlib.contextmanager
def captured(notes, ir_text):
    """Run the block with fd 2 captured where ir_text carries loop hints; append LLVM's diagnostic
    lines (newline-terminated, build-log form) to the list `notes`. Where fd 2 cannot be
    redirected the block runs as is."""
    if _HINTS not in ir_text:
        yield
        return
    try:
        saved = os.dup(2)
        tmp = tempfile.TemporaryFile()
        os.dup2(tmp.fileno(), 2)
    except OSError:
        yield
        return
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode("utf-8", "replace")
        tmp.close()
        other = []
        for line in text.splitlines(keepends=True):
            m = _LLVM_LINE.match(line.rstrip("\n"))
            if m:
                msg = m.group(2)
                if msg.startswith(_NO_PLACE):
                    msg = msg[len(_NO_PLACE):]
                notes.append("%s: %s\n" % (m.group(1), msg))
            else:
                other.append(line)
        if other:
            with contextlib.suppress(OSError):
                os.write(2, "".join(other).encode("utf-8", "replace"))
