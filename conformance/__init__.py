"""A conformance-style subset of OpenCL checks (issue 5), run through the system ICD loader
against any installed platform: ``pyplat conformance [--platform SUBSTR] [--quick] [CATEGORY...]``.

Modules: clapi (ctypes binding to libOpenCL.so.1), framework (checks, recorder, environment),
runner (command line, isolation, progress, reports), cat_<category> (the checks). See
docs/conformance.md.
"""
