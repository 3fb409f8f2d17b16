#!/usr/bin/env bash
# The main job: install PyPlat, then show it serving real OpenCL programs through the system's
# ICD loader - clinfo, a pyopencl program and a plain C host program.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=examples bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
echo "== pyplat run -- clinfo -l"
pyplat run -- clinfo -l
echo "== pyplat run -- clinfo (PyPlat's part)"
pyplat run -- clinfo | awk '/Platform Name/ && /PyPlat/ {p=1} p' | head -40
echo "== pyplat run -- python examples/vecadd.py"
pyplat run -- python examples/vecadd.py
echo "== pyplat run -- pyplat-vecadd  (examples/vecadd.c, built by meson)"
pyplat run -- pyplat-vecadd
