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
# CLBlast's test binaries: a real OpenCL library the tests run on PyPlat and PoCL (tests/apps/test_clblast.py).
# clFFT's client and gpyfft's tests (Debian's python3 and pyopencl) likewise (tests/apps/test_real_apps.py).
case ",$EXTRAS," in *,test,*) packages="$packages clblast-tests clfft-client python3-gpyfft" ;; esac
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] && ! dpkg -s $packages >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
fi

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q ".[$EXTRAS]"
# reikna (a PyPI library of OpenCL algorithms) and its own test suite, which only its sdist carries:
# tests/apps/test_real_apps.py and tools/real_apps.py run it from <venv>/real-apps/.
case ",$EXTRAS," in *,test,*)
    .venv/bin/python -m pip install -q reikna==0.9.0 scipy
    [ -f .venv/real-apps/reikna-0.9.0.tar.gz ] ||
        .venv/bin/python -m pip download -q --no-deps --no-binary :all: -d .venv/real-apps reikna==0.9.0 ;;
esac
