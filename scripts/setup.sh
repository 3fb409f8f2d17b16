#!/usr/bin/env bash
# Installs what PyPlat needs on Debian (as root) and PyPlat itself into ./.venv.
#   PYTHON=python3.11 bash scripts/setup.sh     # choose the interpreter (default: python3)
#   EXTRAS=test                                  # pip extras to install (default: test)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
EXTRAS=${EXTRAS:-test}

# python3-venv / python3-dev: Debian's interpreter needs them for venvs and for libpython.
packages="opencl-headers ocl-icd-opencl-dev clinfo pocl-opencl-icd gcc pkg-config python3-venv python3-dev"
# CLBlast's test binaries: a real OpenCL library the tests run on PyPlat and PoCL (tests/test_clblast.py).
case ",$EXTRAS," in *,test,*) packages="$packages clblast-tests" ;; esac
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] && ! dpkg -s $packages >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
fi

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q ".[$EXTRAS]"
