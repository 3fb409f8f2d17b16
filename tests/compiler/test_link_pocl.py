"""Linking, differentially: the same units compiled and linked through pyopencl on PyPlat and on
PoCL (skipped where PoCL is absent) give the same kernels and the same results; where a link
must fail (a symbol defined twice) both fail."""
import numpy as np
import pytest

import pyplat

pyplat.enable()     # before pyopencl initialises its loader

cl = pytest.importorskip("pyopencl")
from support.platforms import pyopencl_context  # noqa: E402
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

PROGRAMS = {
    "kernel calls kernel": (
        ["extern __kernel void fill(__global int *o, int v);\n"
         "__kernel void twice(__global int *o) { fill(o, 3); o[get_global_id(0)] *= 2; }",
         "__kernel void fill(__global int *o, int v) { o[get_global_id(0)] = v + (int)get_global_id(0); }"],
        "twice"),
    "extern constant tables": (
        ["constant int tab[] = {5, 7, 11, 13};\nconstant float4 w = (float4)((float2)(1, 2), 3, 4) * 2.0f;",
         "extern constant int tab[];\nextern constant float4 w;\n"
         "__kernel void use(__global int *o) { int i = get_global_id(0); o[i] = tab[i & 3] * (int)w.w; }"],
        "use"),
    "function and kernel through a chain": (
        ["int sq(int x);\nextern __kernel void base(__global int *o);\n"
         "__kernel void top(__global int *o) { base(o); o[get_global_id(0)] += sq(3); }",
         "int sq(int x) { return x * x; }\n"
         "constant int start[2] = {[1] = 40};\n"
         "__kernel void base(__global int *o) { o[get_global_id(0)] = start[1] + (int)get_global_id(0); }"],
        "top"),
}
FAILING = {
    "variable twice": ["constant int x = 1;\n__kernel void a(__global int *o) { o[0] = x; }",
                       "constant int x = 2;\n__kernel void b(__global int *o) { o[0] = x; }"],
    "kernel twice": ["__kernel void a(__global int *o) { o[0] = 1; }",
                     "__kernel void a(__global int *o) { o[0] = 2; }"],
}


@pytest.fixture(scope="module")
def contexts():
    mine, pocl = pyopencl_context("PyPlat"), pyopencl_context("Portable Computing Language")
    if mine is None:
        pytest.fail("pyopencl does not see PyPlat")
    if pocl is None:
        pytest.skip("PoCL is not installed")
    return [mine, pocl]


def _link(ctx, sources):
    objs = []
    for s in sources:
        p = cl.Program(ctx, s)
        p.compile("")
        objs.append(p)
    return cl.link_program(ctx, objs)


def _run(ctx, sources, kernel, n=8):
    q = cl.CommandQueue(ctx)
    exe = _link(ctx, sources)
    out = np.zeros(n, np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=out)
    getattr(exe, kernel)(q, (n,), None, buf)
    cl.enqueue_copy(q, out, buf)
    return sorted(exe.kernel_names.split(";")), out


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_link_same_as_pocl(contexts, name):
    sources, kernel = PROGRAMS[name]
    mine, pocl = (_run(ctx, sources, kernel) for ctx in contexts)
    assert mine[0] == pocl[0]
    np.testing.assert_array_equal(mine[1], pocl[1])


@pytest.mark.parametrize("name", sorted(FAILING))
def test_link_fails_as_on_pocl(contexts, name):
    for ctx in contexts:
        with pytest.raises(cl.RuntimeError):
            _link(ctx, FAILING[name])
