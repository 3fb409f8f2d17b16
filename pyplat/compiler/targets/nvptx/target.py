"""The NVPTX target: OpenCL C programs compiled to PTX for NVIDIA GPUs (docs/compiler.md,
"NVPTX target"), offline: nothing here needs a GPU or a CUDA library.

    t = nvptx_target("sm_90")
    r = build(source, options, target=t)     # pyplat.compiler.build
    r.ptx                                    # PTX text, one .entry per kernel, named as the kernel
    r.printf_formats                         # {format id: (C format, kinds)} of its printf records
    r.kernels["k"].symbol                    # that entry's name; .address is None

Front end, typing and target-neutral lowering are the CPU's; the module generator (module.py),
the kernel entry (entry.py), printf's records (printf.py) and the back end (codegen.py) are
NVPTX's own; what the code and the CUDA device class agree on (the launch and printf ABI) is
abi.py. Results are cached like the CPU's, under a key that names the target.
"""
import re

from ...metadata import kernel_infos
from ...objects import pack_package
from ...results import BuildResult
from . import codegen
from .module import TRIPLE, NvptxModuleGen

_ARCH = re.compile(r"sm_([1-9][0-9]{1,2})[af]?$")
OLDEST_ARCH = 70        # Volta: the memory model the lowering's fences and atomics are written for
_known = {}             # arch -> whether LLVM knows it


class NvptxTarget:
    """Code generation for one GPU architecture (`sm_XX`): the interface of targets/host.py's
    HostTarget, for a device that runs code of its own (devices/cuda launches it)."""

    runs_own_code = True            # its devices launch its result (Program.device_result)
    supports_checks = False         # PYPLAT_CHECK instruments host code only

    def __init__(self, arch):
        self.arch = arch
        self.triple = TRIPLE
        self.name = self.label = "%s:%s" % (TRIPLE, arch)
        self.recorded_name = self.name               # in its packages and objects
        self.key_suffix = "\n--target=" + self.name   # its cache entries are not the host's

    def __repr__(self):
        return "nvptx_target(%r)" % self.arch

    def __eq__(self, other):
        return isinstance(other, NvptxTarget) and other.arch == self.arch

    def __hash__(self):
        return hash(self.name)

    def module_gen(self, opts, checks, source_name):
        """The lowering's module generator for this target (no checks and no line tables:
        those are the host's)."""
        return NvptxModuleGen(opts, self.arch)

    def codegen(self, ir_text, opt_level, regions, kernels, notes):
        """PTX bytes of a program's complete, unoptimised module (one .entry per kernel)."""
        entries = [kd["symbol"] for kd in kernels]
        return codegen.ptx(ir_text, self.arch, opt_level, entries).encode()

    def tagged(self, meta):
        """meta naming this target, as its packages and objects record it."""
        return dict(meta, target=self.name)

    def from_package_parts(self, meta, payload, package=None):
        """The BuildResult of a package's parts (a cache entry); payload: the PTX bytes."""
        if meta.get("target") != self.name:
            raise ValueError("a package for %r, not %s" % (meta.get("target"), self.name))
        r = BuildResult(True, meta.get("log", ""), kernels=kernel_infos(meta["kernels"], None))
        r.ptx = payload.decode()
        r.printf_formats = {int(i): (f, kinds) for i, (f, kinds) in meta.get("printf_formats", {}).items()}
        r.target = self
        r.package = bytes(package) if package is not None else pack_package(meta, payload)
        return r


def nvptx_target(arch="sm_90"):
    """The NVPTX target for GPU architecture `arch` (`sm_70` ... `sm_90`, `sm_90a`, `sm_120`...:
    sm_70 or newer, and known to LLVM); ValueError otherwise."""
    m = _ARCH.match(arch) if isinstance(arch, str) else None
    if m is None or int(m.group(1)) < OLDEST_ARCH:
        raise ValueError("not a supported GPU architecture: %r (expected sm_XX with XX >= %d, e.g. "
                         "sm_90)" % (arch, OLDEST_ARCH))
    if arch not in _known:
        _known[arch] = codegen.ptx_version(arch) >= (6, 0)    # sm_70 needs PTX 6.0
    if not _known[arch]:
        raise ValueError("LLVM %s does not know GPU architecture %r" % (codegen.llvm_version(), arch))
    return NvptxTarget(arch)
