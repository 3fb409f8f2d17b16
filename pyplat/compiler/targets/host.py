"""The host target: OpenCL C compiled to native code for this machine's CPU and loaded into the
process (jit.py). It is every CPU device's target and pyplat.compiler's default; its kernels are
work-group functions that the runtime's workers call (no launch of its own).

Its packages and compiled objects name no target, and its cache keys add nothing for it: both
are as they were before targets were objects, so existing entries and binaries stay valid.
"""
from .. import jit
from ..checker.instrument import Checker
from ..lowering.line_tables import LineTables
from ..lowering.module import ModuleGen
from ..objects import from_package_parts


class HostTarget:
    """The interface every target has (targets/nvptx/target.py is the other one)."""

    name = "host"
    label = "the host"             # in build logs and link errors
    recorded_name = None           # packages' and objects' "target": none, as before targets
    key_suffix = ""                # added to the options in cache keys
    runs_own_code = False          # its devices run the host result through the runtime
    supports_checks = True         # PYPLAT_CHECK's kinds are compiled into host code only

    def __repr__(self):
        return "HOST"

    def module_gen(self, opts, checks, source_name):
        """The lowering's module generator: the host's triple and layout, the checks compiled
        in, and (-g) line tables naming `source_name`."""
        triple, layout = jit.target_info()
        mg = ModuleGen(opts, triple, layout)
        if checks:                 # PYPLAT_CHECK: lowering calls the checker's hooks
            mg.instr = Checker(mg, checks)
        if "-g" in opts.flags:
            mg.line_tables = LineTables(mg.module, source_name)
        return mg

    def codegen(self, ir_text, opt_level, regions, kernels, notes):
        """Object code of a program's complete module; notes gets LLVM's diagnostics."""
        return native_object(ir_text, opt_level, regions, notes)

    def tagged(self, meta):
        """meta as packages and objects of this target record it (unchanged: no target key)."""
        return meta

    def from_package_parts(self, meta, code, package=None):
        """The BuildResult of a package's parts: the code loaded. package: the verified bytes
        they came from (a cache entry), else they are packed."""
        return from_package_parts(meta, code, package)


HOST = HostTarget()


def native_object(ir_text, opt_level, regions, notes=None):
    """Object code of a program's LLVM module. The module is complete here (every unit compiled,
    linked by linker.py when there were several) and not yet optimised: build() and link() both
    come through this function, and nothing else optimises a host program. notes: a list that
    gets LLVM's diagnostics as build-log lines."""
    # many parallel regions (barrier-heavy kernels such as scans): unrolling and vectorising the
    # loops of every region costs far more compile time than it gains (pyopencl's scan: 1.8 s ->
    # 1.1 s to build, runs as fast); with few regions it matters (a 16x16 local-tile matmul runs
    # 3.7x faster with its k loop unrolled: the work-item loop then vectorises)
    few = regions <= 16
    return jit.compile_object(ir_text, opt_level, unroll=few, vectorize=few, notes=notes)
