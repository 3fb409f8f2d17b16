"""Shared fixtures for tests that go through a real ICD loader (every folder of tests/; the
helpers tests share are the package tests/support/, docs/testing.md).

  icd_env          os.environ copy in which loaders see the *installed* PyPlat next to the
                   installed platforms (OCL_ICD_VENDORS = pyplat.discovery's merged directory)
  run_with_pyplat  run_with_pyplat(cmd, **subprocess_kwargs) -> CompletedProcess (text, captured,
                   timeout 300 s, cwd a temporary directory so that Python children import the
                   installed pyplat, not this source tree; a child still running at its timeout
                   fails the test with its threads' stacks, from gdb)
  installed_shim   path of the installed libpyplat-icd.so (the test is skipped without one)
  pyplat_command   argv prefix of the installed `pyplat` command
  ctx, queue       a pyopencl context on PyPlat's devices and a queue on it, per module (for
                   modules that call pyplat.enable() before pyopencl looks for platforms)

These never import the platform itself into the test process: the shim loads it in the child.
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

_FIND_SHIM = "import pyplat.discovery as d; print(d.shim_path())"


@pytest.fixture(scope="session")
def installed_shim():
    override = os.environ.get("PYPLAT_ICD_LIBRARY")
    if override:
        return Path(override)
    # Ask a child started outside the source tree: it sees what is installed.
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([sys.executable, "-c", _FIND_SHIM], cwd=tmp, capture_output=True,
                           text=True)
    if r.returncode != 0:
        why = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
        pytest.skip(f"PyPlat is not installed in this Python environment (pip install .): {why}")
    return Path(r.stdout.strip())


@pytest.fixture(scope="session")
def icd_env(installed_shim):
    from pyplat import discovery
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # children must import the installed package
    return discovery.environment(env, library=installed_shim)


def thread_stacks(pid):
    """Every thread's native stack of a running process (gdb, if installed): what a hung child
    was waiting for, for the failure report, since a killed child prints nothing more."""
    try:
        r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"(no stacks: {e})"
    return "\n".join(line for line in r.stdout.splitlines() if line.startswith(("#", "Thread")))


@pytest.fixture(scope="session")
def run_with_pyplat(icd_env, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("run_with_pyplat")

    def run(cmd, env=None, **kwargs):
        full_env = dict(icd_env)
        if env:
            full_env.update(env)
        kwargs.setdefault("cwd", workdir)
        timeout = kwargs.pop("timeout", 300)
        given = kwargs.pop("input", None)
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        if not kwargs.pop("capture_output"):
            return subprocess.run([str(c) for c in cmd], env=full_env, timeout=timeout, input=given,
                                  **kwargs)
        with subprocess.Popen([str(c) for c in cmd], env=full_env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE,
                              stdin=subprocess.PIPE if given is not None else None, **kwargs) as proc:
            try:
                out, err = proc.communicate(given, timeout=timeout)
            except subprocess.TimeoutExpired:
                stacks = thread_stacks(proc.pid)
                proc.kill()
                out, err = proc.communicate()
                pytest.fail(f"{cmd[0]} did not end within {timeout} s; its threads' stacks "
                            f"when stopped:\n{stacks}\nstdout:\n{out}\nstderr:\n{err}")
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    return run


@pytest.fixture(scope="session")
def pyplat_command(installed_shim):
    script = Path(sys.executable).parent / "pyplat"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "pyplat.cli"]


@pytest.fixture(scope="module")
def ctx():
    cl = pytest.importorskip("pyopencl")
    platforms = [p for p in cl.get_platforms() if p.name == "PyPlat"]
    assert platforms, "pyopencl does not see PyPlat"
    return cl.Context(platforms[0].get_devices())


@pytest.fixture(scope="module")
def queue(ctx):
    import pyopencl as cl
    return cl.CommandQueue(ctx)
