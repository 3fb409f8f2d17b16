"""PYPLAT_CHECK's checker (docs/tools.md, "PYPLAT_CHECK"; docs/compiler.md, "Checks compiled
into kernels"): the checks compiled into host kernels, an instrumentation of lowering.

Lowering (pyplat/compiler/lowering) calls its hooks at defined points (lowering/instrumentation.py)
and imports nothing of this package; the driver installs the checker (instrument.Checker) on a
checked build's ModuleGen. The checker builds IR with lowering's helpers (irbuild, workgroup,
barrier_tree, statements). Its run-time half is in the core (pyplat/core/checks.py,
check_shadows.py), which reads only layout.py here.

* ``instrument``  Checker: the hooks, each handing its point to the modules below;
* ``table``       CheckTable: sites, kernel objects, the check frame, provenance, guarded
  accesses (bounds), the cold scan and the report, divisions by zero;
* ``layout``      the check record, frame and shadows' layout (shared with the core);
* ``definedness`` uninit: which values are defined (the checker's ValueHooks);
* ``local_shadow`` uninit's and races' shadow memory of ``__local`` memory;
* ``global_races`` races on ``__global`` memory (per-buffer shadows, launch serials);
* ``versions``, ``private_proofs``, ``private_launch``, ``windows``  races: the fast and full
  versions of a kernel, and the proofs that leave an argument's race checks out;
* ``barrier_regions``, ``local_footprints``, ``intervals``, ``local_written``  analyses on the
  typed tree that leave ``__local`` checks out (regions between barriers, footprints, accesses
  that cannot race, reads surely written).

This file imports nothing: the core imports ``layout`` without the checker's IR code.
"""
