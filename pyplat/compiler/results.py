"""What the compiler hands back: BuildResult (an executable program), ObjectResult (a compiled
object or library), and per kernel KernelInfo with its ArgInfo list."""
from .. import config


class ArgInfo:
    __slots__ = ("name", "type_name", "address_qualifier", "access_qualifier", "type_qualifier",
                 "kind", "size", "written")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __repr__(self):
        return "ArgInfo(%s)" % ", ".join("%s=%r" % (k, getattr(self, k)) for k in self.__slots__)


class KernelInfo:
    __slots__ = ("name", "symbol", "address", "args", "attributes", "reqd_work_group_size", "local_mem_size",
                 "private_mem_size", "prints", "check", "arg_info", "_engine")
    # symbol: the code's entry (work-group function, PTX .entry); prints: may call printf;
    # check: the compiled checks' site table and objects (PYPLAT_CHECK; compiler/checker/) or None;
    # arg_info: compiled with -cl-kernel-arg-info (clGetKernelArgInfo answers only then);
    # _engine keeps the code alive

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __repr__(self):
        return "KernelInfo(%s, args=%r)" % (self.name, self.args)


class BuildResult:
    def __init__(self, ok=False, log="", invalid_options=False, kernels=None, engine=None, timings=None):
        self.ok = ok
        self.log = log
        self.invalid_options = invalid_options
        self.kernels = kernels if kernels is not None else {}
        self.engine = engine          # keeps the JIT code alive
        self.timings = timings or {}
        self.llvm_ir = None
        self.package = None           # object code + metadata (program binaries, the cache)
        self.cache_key = None
        self.line_table = None        # -g: line_table.LineTable of the host code (fault reports)

    def __repr__(self):
        return "BuildResult(ok=%r, kernels=%r)" % (self.ok, list(self.kernels))


class ObjectResult:
    """A compiled object or a library: LLVM IR of one or more units + their kernels' metadata.
    `data` is its byte form (program binaries), None when compilation failed."""

    def __init__(self, ok, log="", data=None, kind="object", invalid_options=False):
        self.ok, self.log, self.data, self.kind, self.invalid_options = ok, log, data, kind, invalid_options

    def __repr__(self):
        return "ObjectResult(ok=%r, kind=%r)" % (self.ok, self.kind)


def debugging():
    """PYPLAT_COMPILER_DEBUG set: internal errors (and broken cache entries) raise with their
    traceback instead of becoming a line of the build log (or a cache miss)."""
    return config.value("PYPLAT_COMPILER_DEBUG")


def describe(e):
    """'ExceptionType: first line of its message', for an internal error's log line."""
    return "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
