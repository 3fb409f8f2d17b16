"""OpenCL build options -> our settings and libclang arguments."""
import shlex


class InvalidOption(Exception):
    pass


# Every build option of the OpenCL 3.0 API spec (5.8.6 "Compiler Options") that takes no argument.
# -D/-I and -cl-std= are parsed below; anything else is CL_INVALID_BUILD_OPTIONS.
_FLAGS = {
    # math intrinsics
    "-cl-single-precision-constant", "-cl-denorms-are-zero", "-cl-fp32-correctly-rounded-divide-sqrt",
    # optimisation
    "-cl-opt-disable", "-cl-strict-aliasing", "-cl-uniform-work-group-size", "-cl-no-subgroup-ifp",
    "-cl-mad-enable", "-cl-no-signed-zeros", "-cl-unsafe-math-optimizations", "-cl-finite-math-only",
    "-cl-fast-relaxed-math",
    # warnings, kernel argument information, debugging
    "-w", "-Werror", "-cl-kernel-arg-info", "-g",
}
# the ones clang's driver knows, passed on: some change how clang reads the program (-w, -Werror,
# -cl-single-precision-constant, and the macros clang predefines: __FAST_RELAXED_MATH__,
# __FINITE_MATH_ONLY__); not -cl-denorms-are-zero, which clang would report as an unused
# argument for this target (an error under -Werror). Code generation is ours (ModuleGen reads
# the flags): / and sqrt are IEEE, correctly rounded, unless fast math is asked for, so
# -cl-fp32-correctly-rounded-divide-sqrt (the device advertises CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT)
# needs nothing more; denormals are kept even with -cl-denorms-are-zero (the spec allows it);
# work-groups may be non-uniform whatever -cl-uniform-work-group-size says; -g and
# -cl-no-subgroup-ifp (no subgroups) change nothing.
_CLANG_FLAGS = {
    "-w", "-Werror", "-cl-opt-disable", "-cl-fast-relaxed-math", "-cl-mad-enable",
    "-cl-finite-math-only", "-cl-no-signed-zeros", "-cl-kernel-arg-info",
    "-cl-single-precision-constant", "-cl-unsafe-math-optimizations",
}
# -cl-std values; CL1.0 is not in 3.0's list but clang and older programs know it
_STDS = {"CL1.0": "CL1.0", "CL1.1": "CL1.1", "CL1.2": "CL1.2", "CL2.0": "CL2.0", "CL3.0": "CL3.0"}

# What OpenCL C programs get, whatever the version: the extensions and the OpenCL C 3.0 optional
# features the device reports (core/device.py: CL_DEVICE_EXTENSIONS, CL_DEVICE_OPENCL_C_FEATURES;
# tests check that they agree). clang would otherwise define the macro of every extension and
# feature it knows (images, pipes, generic address space, ...).
EXTENSIONS = ("cl_khr_fp64", "cl_khr_byte_addressable_store",
              "cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
              "cl_khr_local_int32_base_atomics", "cl_khr_local_int32_extended_atomics",
              "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics")
OPENCL_C_FEATURES = ("__opencl_c_fp64", "__opencl_c_int64")


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
        exts = ["-all"] + ["+" + e for e in EXTENSIONS + OPENCL_C_FEATURES]
        args = ["-cl-std=" + self.std, "-Xclang", "-cl-ext=" + ",".join(exts)]
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
