"""The checker's instrumentation: lowering's hooks (lowering/instrumentation.py) for a module
built with PYPLAT_CHECK's kinds, each handing its point to the CheckTable and the modules of
the checks. The driver makes one per checked host build (driver._compile_unit)."""
from ..lowering import workgroup
from ..lowering.instrumentation import Instrumentation
from . import local_shadow, versions
from .definedness import UNINIT, Definedness
from .table import CheckTable

DIVZERO = "divzero"
_SPACES = ("global", "constant", "local")        # the address spaces whose accesses are guarded


class Checker(Instrumentation):
    active = True

    def __init__(self, mg, kinds):
        self.table = CheckTable(mg, kinds)

    # ------------------------------------------------------------------ module
    def start(self, kernels):
        self.table.note_kernels(kernels)

    def kernel_versions(self, k, name, emit):
        versions.emit(self.table, k, name, emit)

    def plain_versions(self, k, emit_body, emit_loop):
        return versions.plain(self.table, k, emit_body, emit_loop)

    def finish(self):
        """The cold functions' bodies, which scan the module's __constant variables too."""
        t = self.table
        t.finish([(g, v.type.size) for v, g in t.mg.globals.items()
                  if not isinstance(v, tuple) and g.global_constant and not g.name.startswith("__pyplat_check")])

    def metadata(self):
        """{"sites": [...], "objects": {kernel: [...]}, "kinds": [...], "race_written": {kernel: [...]}}"""
        t = self.table
        return {"sites": t.sites, "objects": t.objects, "kinds": sorted(t.kinds),
                "race_written": {k: sorted(v) for k, v in t.race_written.items()}}

    # ------------------------------------------------------------------ work-group function
    def frame(self, k, alloca_b, b, wi, args_p):
        return self.table.setup_frame(k, alloca_b, b, wi, args_p, workgroup.argument)

    def barrier(self, b, frame):
        self.table.barrier(b, frame)

    def group_result(self, b, frame, k, wi):
        return self.table.group_result(b, frame, k, wi)

    # ------------------------------------------------------------------ functions
    def values(self, g):
        return Definedness(g, self.table) if UNINIT in self.table.kinds else None

    # ------------------------------------------------------------------ memory
    def access(self, g, n, pointer):
        """(address space, provenance, node) of an access through a __global, __constant or
        __local pointer (or array), else None: not guarded."""
        table = self.table
        t = pointer.type
        if t is None or not (t.is_pointer or t.is_array):
            return None
        space = t.addrspace if t.is_pointer else None
        hint = table.provenance(g, pointer)
        if space is None and hint is not None:          # an array variable's own space
            space = "constant" if hint[0] == "global" else None
            if hint[0] == "frame":
                space = table.objects_space(g.f, hint[1])
        if space not in _SPACES:
            return None
        return (space, hint, n)

    def load(self, g, lv):
        return self.table.checked_load(g, lv)

    def store(self, g, lv, v):
        self.table.checked_store(g, lv, v)

    def builtin_access(self, g, n, pointer, addr, nbytes, access, do, atomic=False):
        check = self.access(g, n, pointer)
        if check is None:
            return do()
        table = self.table
        space, hint, node = check
        site = table.site(g, node, access, nbytes, space, hint[-1] if hint is not None else None)
        return table.guard(g, addr, nbytes, space, hint, site, do, write=access == "write", atomic=atomic)

    def local_written(self, g, pointer, addr, nbytes):
        """__local bytes a builtin wrote count as written (uninit's flags)."""
        t = pointer.type
        if t is not None and t.is_pointer and t.addrspace == "local":
            local_shadow.mark_written(self.table, g, addr, nbytes)

    def object_of(self, g, pointer):
        return self.table.provenance(g, pointer)

    def object_range(self, g, obj):
        return self.table.object_range(g, obj)

    # ------------------------------------------------------------------ arithmetic
    def division(self, g, n, zero, size):
        if DIVZERO in self.table.kinds:
            self.table.guard_division(g, n, zero, size)
