"""Lowering: our typed tree -> LLVM IR (llvmlite.ir).

Modules, from the bottom up (none imports one above it):

* ``irbuild``      LLVM types, the opaque-pointer Builder, lvalues (LV), the work-item state type;
* ``conversions``  value conversions (convert, conv_elem, splat, truth, to_i64);
* ``expressions``  lvalues, loads and the non-operator expressions (x_* methods, calls, builtins);
* ``operators``    arithmetic, comparisons, logical and assignment operators, contraction to FMA;
* ``statements``   statements and the loop skeleton shared with the barrier code;
* ``function``     FuncGen: one OpenCL function (its memory, work-item state, entry block);
* ``workgroup``    the exported work-group function: its prologue and the work-item loop nest;
* ``barrier_tree`` barrier() on the typed tree: where it runs, inlining helpers that use it;
* ``barriers``     work-group functions of kernels with barriers (loop fission);
* ``module``       ModuleGen: globals, strings, intrinsics, functions; generate() drives the rest;
* ``instrumentation``  the hooks a tool implements to add code at defined points (PYPLAT_CHECK's
  checker, pyplat/compiler/checker, which this package never imports: the driver installs it
  as ``ModuleGen.instr``).

The driver uses ``module.ModuleGen`` and ``barrier_tree.func_has_barrier``.
"""
