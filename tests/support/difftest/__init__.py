"""Differential testing: random, valid, deterministic OpenCL C programs run on PyPlat and PoCL.

  generator  Program / generate(seed, prefix, ...) -> one program (kernel + helpers + macros)
  runner     Batch: many programs in one cl_program, built and run on two platforms, compared
  reduce     drop statements from a mismatching program while it still mismatches

See docs/differential.md.
"""
