"""Shared by the conformance runner's own tests (tests/conformance/): the checkout's
conformance/ package on sys.path (appended, so the installed pyplat still comes first), PoCL as
a real platform to run checks against (`env`, module scope; skipped without PoCL), and `lying`,
which replaces some of its entry points by name to play a broken implementation.

    from support.conformance_env import Lying, env, lying  # noqa: F401 (fixtures)
"""
import sys

import pytest

from support import REPO

sys.path.append(str(REPO))

from conformance import runner  # noqa: E402


class Lying:
    """The loader's entry points, but for the ones replaced by name."""

    def __init__(self, real, **replaced):
        self._real, self._replaced = real, replaced

    def __getattr__(self, name):
        if name in self._replaced:
            return self._replaced[name]
        return getattr(self._real, name)


@pytest.fixture(scope="module")
def env():
    args = runner.parser().parse_args(["--platform", "Portable", "--quick"])
    try:
        e = runner.select_env(args)
    except (SystemExit, OSError) as ex:
        pytest.skip(f"no PoCL platform to run the checks against: {ex}")
    yield e
    e.close()


@pytest.fixture
def lying(env):
    real = env.cl

    def install(**replaced):
        env.cl = Lying(real, **replaced)
        return env

    yield install
    env.cl = real
