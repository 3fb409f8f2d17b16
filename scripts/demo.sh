#!/usr/bin/env bash
# The main job: install PyPlat, then show it serving real OpenCL programs through the system's
# ICD loader - clinfo, a pyopencl program and a plain C host program.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=examples bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
echo "== pyplat run -- clinfo -l"
pyplat run -- clinfo -l
echo "== pyplat run -- clinfo (PyPlat's device; full output in .venv/clinfo.txt)"
pyplat run -- clinfo > .venv/clinfo.txt
# The PyPlat platform's section: from its "Number of devices" line to the next blank line.
awk '/Platform Name/ && /PyPlat/ {p=1} p && /Number of devices/ {d=1} d {print} d && /^$/ {exit}' .venv/clinfo.txt
if grep -A400 "Platform Name *PyPlat" .venv/clinfo.txt | grep -iE "invalid|error [-0-9]" ; then
    echo "clinfo reported errors for PyPlat" >&2; exit 1
fi
echo "== pyplat run -- python examples/vecadd.py"
pyplat run -- python examples/vecadd.py
echo "== pyplat run -- pyplat-vecadd  (examples/vecadd.c, built by meson)"
pyplat run -- pyplat-vecadd
