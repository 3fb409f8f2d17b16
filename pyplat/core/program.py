"""Programs: source, build options, build status and logs, the compiled kernels."""
import json
import threading

from pyplat import cl
from pyplat.core.object import RefCounted
from pyplat.runtime.faults import CodeLines, keep_fault_guard_first

# An executable's binary: BINARY_MAGIC + JSON header + "\n" + source + the compiler's package
# (object code and metadata; may be empty) + sha256 of all of it. Compiled objects and libraries
# are the compiler's IR objects as they are (PYPLAT-IR-2, with their own checksum).
BINARY_MAGIC = b"PYPLAT-PROGRAM-3\n"
# A GPU's binary of a compiled object or library: the host's object and its target's.
BUNDLE_MAGIC = b"PYPLAT-OBJECTS-1\n"
# Earlier PyPlat versions' binaries (no checksum; -2 also carried object code). Programs keep
# such binaries (pyopencl's on-disk cache does), so their source is taken and compiled again;
# their object code is never loaded.
LEGACY_MAGICS = (b"PYPLAT-PROGRAM-1\n", b"PYPLAT-PROGRAM-2\n")


class Program(RefCounted):
    """A program of one context. All devices of a context share one CPU code generation, so a
    build produces one result that serves every device it was built for."""

    def __init__(self, context, source=None, binary_options=None, devices=None, package=None,
                 ir_object=None, binary_type=None, device_objects=None):
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
        self.device_results = {}       # compiler target -> its BuildResult (devices with their own code)
        self.package = package         # from a binary: loaded by build() without compiling
        self.ir_object = ir_object     # compiled object / library (compiler.compile_object, link)
        # compiler target -> its compiled object / library (devices with their own code); each
        # device's program binary (CL_PROGRAM_BINARIES) is its target's
        self.device_objects = dict(device_objects or {})
        if binary_type is not None:
            self.binary_type = binary_type
        self.linked = False            # made by clLinkProgram (cannot be compiled or built)
        self.no_source = False         # an executable without source to fall back on
        self.kernel_count = 0          # kernels alive: a program with kernels cannot be rebuilt
        # Per kernel name: what that kernel's objects share for launches (core/kernel.LaunchShape).
        self.launch_shapes = {}
        self._lock = threading.Lock()

    @property
    def built(self):
        return self.result is not None

    def built_for(self, device):
        """An executable for `device` (clBuildProgram/clLinkProgram may name only some devices)."""
        return self.result is not None and self.status.get(device) == cl.CL_BUILD_SUCCESS

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
                elif self.no_source:
                    result = compiler.BuildResult(False, "error: the program binary was made for "
                                                  "another machine or compiler version\n")
            if result is None and self.from_binary and self.ir_object is not None:
                result = compiler.link([self.ir_object], "")   # an object or library alone
                options = self.options
            if result is None:
                result = compiler.build(self.source, options)
            self._finish(devices, options, result)
            if result.ok:
                result = self._build_device_code(devices, options, result)
            if result.ok:
                self.ir_object = None if not self.from_binary else self.ir_object
            # libclang's crash recovery installs signal handlers with its first index: the
            # kernel fault handler goes back in front (docs/runtime.md, "Faults in kernels").
            keep_fault_guard_first()
            return result

    def _build_device_code(self, devices, options, host_result):
        """The program for devices that run code of their own (a GPU's): built from the source
        for each one's compiler target; a device whose build fails gets its log and fails the
        build. The host's result keeps the kernels' metadata for every device."""
        from pyplat import compiler
        self.device_results = {}
        # a binary's object code is the host's: without source there is nothing to compile
        host_code_only = self.from_binary and (self.ir_object is not None or self.no_source)

        def make(target):
            if host_code_only:
                return compiler.BuildResult(False, "error: the program binary holds host code only; "
                                            f"build the program from source for {target.name}\n")
            self.device_results[target] = r = compiler.build(self.source, options, target=target)
            return r
        return self._per_target(devices, make, host_result)

    def device_result(self, device):
        """The build result whose code `device` runs (its target's, or the host's)."""
        target = device.compiler_target
        return self.device_results.get(target) if target.runs_own_code else self.result

    def _finish(self, devices, options, result):
        for d in devices:
            self.status[d] = cl.CL_BUILD_SUCCESS if result.ok else cl.CL_BUILD_ERROR
            self.log[d] = result.log
        self.options = options
        if result.ok:
            self.result = result
            _register_lines(result)
            self.launch_shapes = {}
            self.binary_type = cl.CL_PROGRAM_BINARY_TYPE_EXECUTABLE

    def compile(self, devices, options, headers):
        """clCompileProgram: the source (+ input headers [(name, text)]) into a compiled object."""
        from pyplat import compiler
        with self._lock:
            for d in devices:
                self.status[d] = cl.CL_BUILD_IN_PROGRESS
            result = compiler.compile_object(self.source, options, headers)
            keep_fault_guard_first()           # (as in build)
            for d in devices:
                self.status[d] = cl.CL_BUILD_SUCCESS if result.ok else cl.CL_BUILD_ERROR
                self.log[d] = result.log
            self.options = options
            self.result = None
            self.package = None
            self.device_objects = {}
            if result.ok:
                self.ir_object = result.data
                self.binary_type = cl.CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
                result = self._per_target(devices, lambda target: self._compile_for(target, options, headers),
                                          result)
            else:
                self.ir_object = None
                self.binary_type = cl.CL_PROGRAM_BINARY_TYPE_NONE
            return result

    def _compile_for(self, target, options, headers):
        from pyplat import compiler
        r = compiler.compile_object(self.source, options, headers, target=target)
        if r.ok:
            self.device_objects[target] = r.data
        return r

    def _per_target(self, devices, make, host_result):
        """make(target) once per compiler target of `devices` (those that run code of their
        own); each such device gets its target's log, and fails when that fails. Returns the
        first failed result, else host_result (which holds the kernels' metadata)."""
        done, failed = {}, None
        for d in devices:
            target = d.compiler_target
            if not target.runs_own_code:
                continue
            r = done.get(target)
            if r is None:
                r = done[target] = make(target)
            self.log[d] = r.log
            if not r.ok:
                self.status[d] = cl.CL_BUILD_ERROR
                failed = failed or r
        return failed or host_result

    def link(self, devices, options, inputs):
        """clLinkProgram into this (new) program: inputs are programs holding compiled objects
        or libraries. An executable, or a library with -create-library; for the host and for
        each compiler target of `devices`, from the inputs' objects of that target."""
        from pyplat import compiler
        with self._lock:
            self.linked = self.no_source = True
            for d in devices:
                self.status[d] = cl.CL_BUILD_IN_PROGRESS
            result = compiler.link([p.ir_object for p in inputs], options)
            self.device_results, self.device_objects = {}, {}
            if isinstance(result, compiler.ObjectResult):
                for d in devices:
                    self.status[d] = cl.CL_BUILD_SUCCESS if result.ok else cl.CL_BUILD_ERROR
                    self.log[d] = result.log
                self.options = options
                if result.ok:
                    self.ir_object = result.data
                    self.binary_type = cl.CL_PROGRAM_BINARY_TYPE_LIBRARY
            else:
                self._finish(devices, options, result)
            if result.ok:
                result = self._per_target(devices, lambda target: self._link_for(target, options, inputs, devices),
                                          result)
            return result

    def _link_for(self, target, options, inputs, devices):
        """The link of the inputs' objects for `target`: an input without one (compiled for
        other devices only, or made from a program binary) fails it."""
        from pyplat import compiler
        library = "-create-library" in compiler.parse_link_options(options)
        missing = [i for i, p in enumerate(inputs) if target not in p.device_objects]
        if missing:
            names = ", ".join(sorted({d.name for d in devices if d.compiler_target == target}))
            msg = "".join(f"error: input {i} has no compiled object for {names} ({target.name}): it was "
                          "compiled for other devices only or created from a binary; compile it from "
                          "source with clCompileProgram for this device\n" for i in missing)
            return (compiler.ObjectResult if library else compiler.BuildResult)(False, msg)
        r = compiler.link([p.device_objects[target] for p in inputs], options, target=target)
        if r.ok and library:
            self.device_objects[target] = r.data
        elif r.ok:
            self.device_results[target] = r
        return r

    @property
    def kernel_names(self):
        return list(self.result.kernels) if self.result else []

    def binary(self, device=None):
        """The program as CL_PROGRAM_BINARIES returns it for `device`: a compiled object or
        library of its compiler target; for an executable, source and options in a container
        that clCreateProgramWithBinary accepts (building it recompiles the source)."""
        if self.binary_type == cl.CL_PROGRAM_BINARY_TYPE_NONE:
            return b""
        if self.binary_type in (cl.CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, cl.CL_PROGRAM_BINARY_TYPE_LIBRARY):
            if device is None or not device.compiler_target.runs_own_code:
                return self.ir_object or b""
            device_object = self.device_objects.get(device.compiler_target)
            if not device_object or not self.ir_object:
                return b""
            # the host's object comes along: a link needs it for the kernels' metadata
            from pyplat.compiler import seal
            h = {"host_size": len(self.ir_object), "device_size": len(device_object)}
            return seal(BUNDLE_MAGIC + json.dumps(h).encode() + b"\n" + self.ir_object + device_object)
        package = getattr(self.result, "package", None) if self.result is not None else self.package
        from pyplat.compiler import read_package, seal
        parts = read_package(package) if package else None
        source = self.source.encode()
        h = {"options": self.options, "source_size": len(source),
             "origin": parts[0].get("origin") if parts else None}
        if self.no_source:
            h["linked"] = True
        return seal(BINARY_MAGIC + json.dumps(h).encode() + b"\n" + source + (package or b""))

    @staticmethod
    def parse_binary(data):
        """A binary from ``binary()`` as a dict (source, options, package, ir_object,
        binary_type, linked), or None if it is not an intact one (or is an IR object of another
        machine). Every byte is checked (sha256) here, at clCreateProgramWithBinary, before any
        of it is used: "CL_INVALID_BINARY if an invalid program binary was encountered for any
        device" (OpenCL 3.0, clCreateProgramWithBinary). The embedded package must be intact
        and the one the header names (its origin): a package moved into another program's
        binary is refused too. A package made for another machine or compiler is accepted
        here; clBuildProgram then compiles the source (or fails, for a linked program)."""
        out = {"source": "", "options": "", "package": None, "ir_object": None, "linked": False,
               "binary_type": cl.CL_PROGRAM_BINARY_TYPE_EXECUTABLE}
        from pyplat.compiler import HOST, OBJECT_MAGIC, read_package, unpack_object, unseal
        if data.startswith(BUNDLE_MAGIC):
            return Program._parse_bundle(data, out)
        if data.startswith(OBJECT_MAGIC):
            parts = unpack_object(data, HOST)
            if parts is None:
                return None
            out["ir_object"] = bytes(data)
            out["binary_type"] = (cl.CL_PROGRAM_BINARY_TYPE_LIBRARY if parts[0]["kind"] == "library"
                                  else cl.CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT)
            return out
        if data.startswith(LEGACY_MAGICS):
            return Program._parse_legacy(bytes(data), out)
        body = unseal(data) if data.startswith(BINARY_MAGIC) else None
        if body is None:
            return None
        try:
            header, _, rest = bytes(body[len(BINARY_MAGIC):]).partition(b"\n")
            h = json.loads(header)
            n = h["source_size"]
            if not isinstance(n, int) or not 0 <= n <= len(rest) or not isinstance(h["options"], str):
                return None
            package = rest[n:]
            out.update(source=rest[:n].decode(), options=h["options"], package=package or None,
                       linked=h.get("linked") is True)
        except (ValueError, KeyError, UnicodeDecodeError, TypeError):
            return None
        if package:
            parts = read_package(package)
            if parts is None or parts[0].get("origin") != h.get("origin"):
                return None
        elif out["linked"]:
            return None           # an executable with neither object code nor source
        return out

    @staticmethod
    def _parse_bundle(data, out):
        """A device's binary of a compiled object or library: the host's object, then its
        target's (out["device_object"], out["object_target"]: the target's name)."""
        from pyplat.compiler import HOST, unpack_object, unseal
        from pyplat.compiler.objects import ANY_TARGET
        body = unseal(data)
        if body is None:
            return None
        try:
            header, _, rest = bytes(body[len(BUNDLE_MAGIC):]).partition(b"\n")
            h = json.loads(header)
            n, m = h["host_size"], h["device_size"]
            if not (isinstance(n, int) and isinstance(m, int) and n >= 0 and m >= 0 and n + m == len(rest)):
                return None
        except (ValueError, KeyError, TypeError):
            return None
        host, device = rest[:n], rest[n:]
        host_parts, device_parts = unpack_object(host, HOST), unpack_object(device, ANY_TARGET)
        if host_parts is None or device_parts is None or device_parts[0].get("target") == HOST.recorded_name \
                or host_parts[0]["kind"] != device_parts[0]["kind"]:
            return None
        out.update(ir_object=host, device_object=device, object_target=device_parts[0]["target"],
                   binary_type=(cl.CL_PROGRAM_BINARY_TYPE_LIBRARY if host_parts[0]["kind"] == "library"
                                else cl.CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT))
        return out

    @staticmethod
    def _parse_legacy(data, out):
        """An older PyPlat's binary: its source and options only (compiled again at build)."""
        try:
            header, _, rest = data[len(LEGACY_MAGICS[0]):].partition(b"\n")
            h = json.loads(header)
            if not isinstance(h.get("options"), str) or h.get("linked"):
                return None                 # a linked program: no source to compile
            n = h.get("source_size", len(rest))
            if not isinstance(n, int) or not 0 <= n <= len(rest):
                return None
            out.update(source=rest[:n].decode(), options=h["options"])
        except (ValueError, UnicodeDecodeError, TypeError, AttributeError):
            return None
        return out

    def destroy(self):
        self.result = None
        self.context.release()


def _register_lines(result):
    """-g: the code's line table to the runtime, so that a fault report names the source line;
    registered as long as the code is loaded (the registration lives on the code's engine)."""
    table, engine = result.line_table, result.engine
    if table is None or engine is None or engine.lines is not None:
        return
    start, size = table.place(engine.get_function_address(table.anchor))
    engine.lines = CodeLines(start, size, *table.packed())
