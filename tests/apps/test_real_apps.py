"""Real OpenCL applications' own correctness checks on PyPlat (docs/real-apps.md): a CI-sized subset.

  clFFT 2.12 (Debian `clfft-client`): clFFT generates its FFT kernels at plan time (radix 2, 3, 5, 7
      passes, real/complex, planar/interleaved, single/double); its client checks each result itself.
  gpyfft 0.7.1 (Debian `python3-gpyfft`): its unittest suite compares clFFT's transforms with
      numpy.fft; it runs in the system python3 (Debian's pyopencl), where PyPlat is loaded by the ICD.
  reikna 0.9.0 (PyPI, its tests from the sdist): Mako-templated kernels for FFT, reductions, scans,
      counter-based random numbers, matrix multiplication and transposition, checked against numpy.

Every case here passes on PoCL too (tools/real_apps.py runs the whole sets on both side by side).
Each group is skipped when its application is absent (`scripts/setup.sh` installs them with the
test extras).
"""
import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

from support import REPO

_spec = importlib.util.spec_from_file_location("real_apps", REPO / "tools" / "real_apps.py")
real_apps = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(real_apps)

GPYFFT_TESTS = Path("/usr/lib/python3/dist-packages/gpyfft/test")

# A subset of tools/real_apps.py's sweep: each kind of kernel clFFT generates once.
CLFFT_CI = ["1D 1024 c2c", "1D 1024 c2c double", "1D 1024 planar", "1D 243 (radix 3)", "1D 1024 r2c",
            "2D 64x64 c2c"]


@pytest.fixture(scope="module")
def pyplat_index(run_with_pyplat):
    r = run_with_pyplat(["clinfo", "-l"])
    assert r.returncode == 0, r.stderr
    import re
    return {m.group(2).strip(): int(m.group(1)) for m in re.finditer(r"Platform #(\d+): (.*)", r.stdout)}["PyPlat"]


@pytest.mark.skipif(shutil.which("clFFT-client") is None, reason="clFFT's client is not installed (apt-get install clfft-client)")
@pytest.mark.parametrize("case", CLFFT_CI)
def test_clfft_client_transform_passes_its_check(run_with_pyplat, pyplat_index, case):
    args = dict(real_apps.CLFFT_CASES)[case]
    status, _ = real_apps.run_clfft_client(args, pyplat_index, runner=run_with_pyplat, timeout=300)
    assert status == "PASS", (case, args, status)


@pytest.mark.skipif(not GPYFFT_TESTS.is_dir(), reason="gpyfft is not installed (apt-get install python3-gpyfft)")
def test_gpyfft_suite_passes(run_with_pyplat):
    counts, failing, _, output = real_apps.run_gpyfft("PyPlat", runner=run_with_pyplat, timeout=300)
    assert counts is not None, output[-3000:]
    assert counts["failed"] == 0 and counts["passed"] >= 13, (counts, failing, output[-3000:])


# reikna's own tests, by file and name: reductions and scans with custom predicates and struct
# types, counter-based RNG bijections, FFT sequences, matrix products in every dtype.
REIKNA_CI = ["test_algorithms/test_reduce.py", "test_algorithms/test_scan.py", "test_cbrng/test_cbrng.py",
             "test_fft/test_fft.py", "test_linalg/test_matrixmul.py",
             "test_cluda/test_functions.py",
             "-k", "nondefault_function or nonsequential_axes or structure_type or scan_multiple_axes"
                   " or custom_predicate or kernel_bijection or kernel_sampler_int or test_sequence"
                   " or test_dtypes or test_exp or test_polar or test_pow"]


@pytest.fixture(scope="module")
def reikna_tests(tmp_path_factory):
    pytest.importorskip("reikna")
    pytest.importorskip("scipy")
    testdir = real_apps.reikna_tests(str(tmp_path_factory.mktemp("reikna")))
    if testdir is None:
        pytest.skip("reikna's test suite is absent (scripts/setup.sh downloads its sdist into <venv>/real-apps)")
    return testdir


def test_reikna_suite_subset_passes(run_with_pyplat, reikna_tests):
    counts, failing, _ = real_apps.run_reikna(reikna_tests, "PyPlat", REIKNA_CI, runner=run_with_pyplat,
                                              timeout=600)
    assert counts is not None, "reikna's pytest wrote no report"
    assert counts["failed"] == 0 and counts["passed"] >= 20, (counts, failing)
