"""C host programs of the tests, built here against the system's ICD loader and run with PyPlat
installed (conftest's run_with_pyplat): NAMED_PLATFORM_C, a C function finding the platform
named on the command line, to put before a program's own code."""
import shutil
import subprocess

import pytest


# C: the platform whose name contains argv[1] (the loader may list PoCL first), for the C host
# programs of the tests; put before a program that calls it (it includes what it needs).
NAMED_PLATFORM_C = r"""
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>
static cl_platform_id named_platform(int argc, char **argv) {
    cl_platform_id ps[16], p = 0; cl_uint np = 0; char name[256];
    clGetPlatformIDs(16, ps, &np);
    for (cl_uint i = 0; i < np && !p; i++) {
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (argc > 1 && strstr(name, argv[1])) p = ps[i];
    }
    if (!p) printf("FAIL no platform %s\n", argc > 1 ? argv[1] : "named");
    return p;
}
"""


def build_c_program(tmp_path, name, source):
    """A threaded C host program built against the system loader (skips without cc or loader)."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    src, exe = tmp_path / f"{name}.c", tmp_path / name
    src.write_text(source)
    built = subprocess.run(["cc", "-O1", "-o", str(exe), str(src), "-lOpenCL", "-lpthread"],
                           capture_output=True, text=True)
    if built.returncode:
        pytest.skip(f"cannot build against the system loader: {built.stderr[-300:]}")
    return exe


def run_c_program_ok(run_with_pyplat, tmp_path, name, source, envs=(None,)):
    """Build `source` (build_c_program), run it with PyPlat's platform named (once per
    environment in `envs`), and expect it to exit 0 having printed `ok`."""
    exe = build_c_program(tmp_path, name, source)
    for env in envs:
        done = run_with_pyplat([exe, "PyPlat"], env=env)
        assert done.returncode == 0 and "ok" in done.stdout, (env, done.stdout + done.stderr[-2000:])
