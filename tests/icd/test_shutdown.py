"""A Python host whose OpenCL objects outlive PyPlat's modules: pyopencl objects held in closures
are released by the interpreter's final garbage collection, after our modules were torn down.
The ICD loader still reads their handles (their memory must still be there) and the shim must
not run Python code any more. This used to end in SIGSEGV inside the loader at exit."""
import sys
import textwrap

import pytest

pytest.importorskip("pyopencl")

CHILD = textwrap.dedent("""
    import numpy as np
    import pyopencl as cl
    import pyopencl.array as cla
    from pyopencl.elementwise import ElementwiseKernel

    plat = [p for p in cl.get_platforms() if "PyPlat" in p.name][0]
    ctx = cl.Context(plat.get_devices()[:1])
    q = cl.CommandQueue(ctx)

    def make():
        k = ElementwiseKernel(ctx, "float a, float *x, float *z", "z[i] = a * x[i]", "scale")
        x = cla.to_device(q, np.arange(4096, dtype=np.float32))
        z = cla.empty_like(x)
        def call():
            k(np.float32(2), x, z)
            return z
        return call

    call = make()
    assert (call().get() == 2 * np.arange(4096, dtype=np.float32)).all()
    q.finish()
    print("ok")
""")


def test_objects_released_at_interpreter_exit(run_with_pyplat):
    r = run_with_pyplat([sys.executable, "-c", CHILD], env={"PYOPENCL_NO_CACHE": "1"})
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout[-1000:], r.stderr[-3000:])
