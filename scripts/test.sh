#!/usr/bin/env bash
# Install PyPlat with its test dependencies and run the test suite against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=test bash scripts/setup.sh
# The conformance-style subset in its quick mode, every category PyPlat implements
# (the full mode is `pyplat conformance`; docs/conformance.md).
.venv/bin/pyplat conformance --quick
# pytest from the venv's bin (not `python -m pytest`) so the source tree's pyplat/ does not
# shadow the installed package. tests/: folders mirroring the source (docs/testing.md).
exec .venv/bin/pytest -q tests "$@"
