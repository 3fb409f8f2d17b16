"""Code-generation targets as objects: what a program is compiled for. Every device has one
(its `compiler_target`); pyplat.compiler's build, compile_object and link take one (default
HOST). host.py: HOST, native code for this machine. nvptx/: NvptxTarget, PTX for one NVIDIA GPU
architecture, all of NVPTX's code generation in that package.

A target has (the driver, the linker, objects.py and the core ask nothing else of it):

    name, label          its name; how logs and errors name it ("the host", "nvptx64-...:sm_90")
    recorded_name        what its packages and objects record as their "target" (the host: None)
    key_suffix           added to the options in its cache keys (the host: "")
    runs_own_code        True: its devices run its own result with a launch of their own
                         (devices/cuda); False: the host result, through the runtime
    supports_checks      PYPLAT_CHECK's kinds are compiled into its code
    module_gen(opts, checks, source_name)          the lowering's module generator (its hooks)
    codegen(ir_text, opt_level, regions, kernels, notes)   code bytes of a complete module
    tagged(meta)         meta as its packages and objects record it
    from_package_parts(meta, code, package=None)   its BuildResult of a package's parts
"""
