"""pyopencl's own kernels (elementwise, clmath, clrandom, complex; reductions, scans and sorts
when Mako is installed) compiled by PyPlat: results match numpy."""
import numpy as np
import pytest

import pyplat

pyplat.enable()     # before pyopencl initialises its loader

cl = pytest.importorskip("pyopencl")
import pyopencl.array as cla      # noqa: E402
import pyopencl.clmath as clmath  # noqa: E402
import pyopencl.clrandom as clrandom  # noqa: E402


@pytest.fixture(scope="module")
def queue():
    plat = [p for p in cl.get_platforms() if p.name == "PyPlat"][0]
    return cl.CommandQueue(cl.Context(plat.get_devices()))


@pytest.fixture(scope="module")
def data(queue):
    a = np.random.default_rng(0).random(5000).astype(np.float32)
    b = np.random.default_rng(1).random(5000).astype(np.float32)
    return a, b, cla.to_device(queue, a), cla.to_device(queue, b)


def test_elementwise_and_clmath(queue, data):
    a, b, da, db = data
    np.testing.assert_allclose((2 * da + db / (da + 1)).get(), 2 * a + b / (a + 1), rtol=1e-6)
    for name, ref in (("sin", np.sin), ("exp", np.exp), ("log1p", np.log1p), ("cbrt", np.cbrt),
                      ("sinh", np.sinh), ("tanh", np.tanh)):
        np.testing.assert_allclose(getattr(clmath, name)(da).get(), ref(a), rtol=2e-6, err_msg=name)
    m, e = clmath.frexp(da)
    mr, er = np.frexp(a)
    np.testing.assert_array_equal(m.get(), mr)
    np.testing.assert_array_equal(clmath.ldexp(da, cla.to_device(queue, np.full(5000, 3, np.float32))).get(),
                                  np.ldexp(a, 3))
    f, i = clmath.modf(da * 10)
    np.testing.assert_allclose(f.get(), np.modf(a * 10)[0], atol=1e-5)


def test_complex_and_random(queue, data):
    a, b, da, db = data
    c = cla.to_device(queue, a.astype(np.complex64)) * 2j
    np.testing.assert_allclose(c.get(), a * 2j, rtol=1e-6)
    u = clrandom.PhiloxGenerator(queue.context).uniform(queue, 20000, np.float32).get()
    assert 0.48 < u.mean() < 0.52 and u.min() >= 0 and u.max() <= 1
    nrm = clrandom.ThreefryGenerator(queue.context).normal(queue, 20000, np.float32).get()
    assert abs(nrm.mean()) < 0.05 and 0.95 < nrm.std() < 1.05


def test_reductions_scans_sorts(queue, data):
    pytest.importorskip("mako")
    a, b, da, db = data
    np.testing.assert_allclose(cla.sum(da).get(), a.sum(), rtol=1e-4)
    np.testing.assert_allclose(cla.dot(da, db).get(), np.dot(a, b), rtol=1e-4)
    assert cla.max(da).get() == a.max() and cla.min(da).get() == a.min()
    ai = cla.to_device(queue, np.arange(3000, dtype=np.int32))
    np.testing.assert_array_equal(cla.cumsum(ai).get(), np.cumsum(np.arange(3000)))
    from pyopencl.bitonic_sort import BitonicSort
    s, _ = BitonicSort(queue.context)(cla.to_device(queue, a[:1024].copy()))
    np.testing.assert_array_equal(s.get(), np.sort(a[:1024]))
