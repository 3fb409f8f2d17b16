"""OpenCL build options -> our settings and libclang arguments."""
import shlex


class InvalidOption(Exception):
    pass


_FLAGS = {
    "-w", "-Werror", "-cl-opt-disable", "-cl-fast-relaxed-math", "-cl-mad-enable",
    "-cl-finite-math-only", "-cl-no-signed-zeros", "-cl-denorms-are-zero", "-cl-kernel-arg-info",
    "-cl-single-precision-constant", "-cl-unsafe-math-optimizations", "-cl-strict-aliasing",
    "-cl-uniform-work-group-size", "-cl-no-subgroup-ifp",
}
# flags clang's driver understands itself
_CLANG_FLAGS = {
    "-w", "-Werror", "-cl-opt-disable", "-cl-fast-relaxed-math", "-cl-mad-enable",
    "-cl-finite-math-only", "-cl-no-signed-zeros", "-cl-denorms-are-zero", "-cl-kernel-arg-info",
    "-cl-single-precision-constant", "-cl-unsafe-math-optimizations",
}
_STDS = {"CL1.0": "CL1.0", "CL1.1": "CL1.1", "CL1.2": "CL1.2", "CL2.0": "CL2.0", "CL3.0": "CL3.0"}


class Options:
    def __init__(self):
        self.defines = []        # "NAME" or "NAME=VALUE"
        self.includes = []
        self.std = "CL1.2"
        self.flags = set()

    @property
    def fast_math(self):
        return bool(self.flags & {"-cl-fast-relaxed-math", "-cl-unsafe-math-optimizations"})

    @property
    def opt_level(self):
        return 0 if "-cl-opt-disable" in self.flags else 3

    def clang_args(self):
        args = ["-cl-std=" + self.std]
        for d in self.defines:
            args.append("-D" + d)
        for i in self.includes:
            args.append("-I" + i)
        args += sorted(self.flags & _CLANG_FLAGS)
        return args

    def key(self):
        return (tuple(self.defines), tuple(self.includes), self.std, tuple(sorted(self.flags)))


def parse(text):
    o = Options()
    try:
        toks = shlex.split(text or "")
    except ValueError as e:
        raise InvalidOption("invalid build option: %s" % e)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t in ("-D", "-I"):
            if i + 1 >= len(toks):
                raise InvalidOption("invalid build option '%s': missing argument" % t)
            (o.defines if t == "-D" else o.includes).append(toks[i + 1])
            i += 2
            continue
        if t.startswith("-D") and len(t) > 2:
            o.defines.append(t[2:])
        elif t.startswith("-I") and len(t) > 2:
            o.includes.append(t[2:])
        elif t.startswith("-cl-std="):
            v = t[len("-cl-std="):]
            if v not in _STDS:
                raise InvalidOption("invalid build option '%s'" % t)
            o.std = _STDS[v]
        elif t in _FLAGS:
            o.flags.add(t)
        else:
            raise InvalidOption("invalid build option '%s'" % t)
        i += 1
    return o
