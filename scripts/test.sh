#!/usr/bin/env bash
# Install PyPlat with its test dependencies and run the test suite against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=test bash scripts/setup.sh
# pytest from the venv's bin (not `python -m pytest`) so the source tree's pyplat/ does not
# shadow the installed package.
exec .venv/bin/pytest -q tests "$@"
