"""Programs: source, build options, build status and logs, the compiled kernels."""
import json
import threading

from pyplat import cl
from pyplat.core.object import RefCounted

BINARY_MAGIC = b"PYPLAT-PROGRAM-1\n"      # source + options only (older binaries: rebuilt)
BINARY_MAGIC2 = b"PYPLAT-PROGRAM-2\n"     # + the compiler's package: object code and metadata


class Program(RefCounted):
    """A program of one context. All devices of a context share one CPU code generation, so a
    build produces one result that serves every device it was built for."""

    def __init__(self, context, source=None, binary_options=None, devices=None, package=None):
        super().__init__()
        self.context = context.retain()
        self.devices = list(devices or context.devices)
        self.source = source or ""
        self.options = binary_options or ""
        self.status = {d: cl.CL_BUILD_NONE for d in self.devices}
        self.log = {d: "" for d in self.devices}
        self.binary_type = cl.CL_PROGRAM_BINARY_TYPE_NONE
        self.from_binary = binary_options is not None
        if self.from_binary:
            self.binary_type = cl.CL_PROGRAM_BINARY_TYPE_EXECUTABLE
        self.result = None
        self.package = package         # from a binary: loaded by build() without compiling
        self.kernel_count = 0          # kernels alive: a program with kernels cannot be rebuilt
        self._lock = threading.Lock()

    @property
    def built(self):
        return self.result is not None

    def build(self, devices, options):
        """Compile for `devices`. Returns the compiler's result (its .ok, .log, .invalid_options)."""
        from pyplat import compiler
        with self._lock:
            for d in devices:
                self.status[d] = cl.CL_BUILD_IN_PROGRESS
            result = None
            if self.package is not None:
                result = compiler.load_package(self.package)   # None: other machine/compiler
                if result is not None:
                    options = self.options
            if result is None:
                result = compiler.build(self.source, options)
            for d in devices:
                self.status[d] = cl.CL_BUILD_SUCCESS if result.ok else cl.CL_BUILD_ERROR
                self.log[d] = result.log
            self.options = options
            if result.ok:
                self.result = result
                self.binary_type = cl.CL_PROGRAM_BINARY_TYPE_EXECUTABLE
            return result

    @property
    def kernel_names(self):
        return list(self.result.kernels) if self.result else []

    def binary(self):
        """The program as CL_PROGRAM_BINARIES returns it: source and options in a container that
        clCreateProgramWithBinary accepts (building it recompiles the source)."""
        if self.binary_type == cl.CL_PROGRAM_BINARY_TYPE_NONE:
            return b""
        package = getattr(self.result, "package", None) if self.result is not None else self.package
        if package:
            source = self.source.encode()
            header = json.dumps({"options": self.options, "source_size": len(source)}).encode()
            return BINARY_MAGIC2 + header + b"\n" + source + package
        header = json.dumps({"options": self.options}).encode()
        return BINARY_MAGIC + header + b"\n" + self.source.encode()

    @staticmethod
    def parse_binary(data):
        """(source, options) of a binary from ``binary()``, or None if it is not one; binaries
        that carry object code give (source, options, package)."""
        if data.startswith(BINARY_MAGIC2):
            try:
                header, _, rest = data[len(BINARY_MAGIC2):].partition(b"\n")
                h = json.loads(header)
                n = h["source_size"]
                return rest[:n].decode(), h["options"], bytes(rest[n:])
            except (ValueError, KeyError, UnicodeDecodeError, TypeError):
                return None
        if not data.startswith(BINARY_MAGIC):
            return None
        try:
            header, _, source = data[len(BINARY_MAGIC):].partition(b"\n")
            return source.decode(), json.loads(header)["options"]
        except (ValueError, KeyError, UnicodeDecodeError):
            return None

    def destroy(self):
        self.result = None
        self.context.release()
