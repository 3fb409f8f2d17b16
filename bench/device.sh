#!/usr/bin/env bash
# Sets up PyPlat and PoCL on the device machine (no network, no apt; root) from a carried folder
# and runs bench/run.py there. Used for the "16-core device machine" figures in
# docs/history/performance-log.md.
#
#   bash bench/device.sh check                  # environment report, install, clinfo -l, tiny bench
#   bash bench/device.sh bench [run.py args]    # install (if needed), then python bench/run.py ARGS
#   REPEAT=3 RUN_TIMEOUT=200 bash bench/device.sh bench ...   # run.py REPEAT times, each time-limited
#   REPS=5 SCALE=10 WORKERS="1 2 4 8 16" bash bench/device.sh raw  # sched_bench runs kept one by one
#   bash bench/device.sh py bench/probe_pool.py ARGS  # a bench/ script under `pyplat run`
#   bash bench/device.sh api [--reps 5 --threads 1,8,16]  # API call costs: python bench/run.py api
#   bash bench/device.sh barrier [--workers 1,16 --repeat 9]  # bench/barrier_kernels.py, both platforms
#   bash bench/device.sh cts --platform both ...  # Khronos CTS binaries carried in cts-build.tar.xz
#   bash bench/device.sh prepare                # HERE (Debian bookworm, apt + pip reachable): fill $CARRY
#
# The carried folder ($CARRY, default .devbench; ignored through .git/info/exclude, never
# committed) is prepared on a machine with Debian bookworm's apt and pip:
#   whl/              cp312 manylinux x86_64 wheels: meson-python, pyproject-metadata, libclang,
#                     pyopencl, pytools, platformdirs, siphash24, mako (libclang's wheel recompressed
#                     with ZIP_LZMA to fit the 64 MiB carry limit; pip installs it unchanged)
#   ocl-root.tar.xz   the files of the bookworm packages opencl-c-headers ocl-icd-libopencl1
#                     ocl-icd-opencl-dev clinfo pocl-opencl-icd libpocl2 libpocl2-common libllvm15
#                     libclang-cpp15 libhwloc15 clang-15 (apt-get download + dpkg -x into a staging
#                     root; docs, man pages, cmake files and PoCL kernel libraries other than avx512
#                     and avx2 dropped), unpacked over / (existing directories untouched)
#   deps/*.deb        their library dependencies (libz3-4, libedit2, libffi8, libxml2, libtinfo6,
#                     libbsd0, libmd0, libudev1; libicu72 too where the machine lacks libxml2, which
#                     needs it): each unpacked only where the machine has no library of that soname
#   src.tar.gz        optional: `git archive HEAD` of the commit to measure; built and run instead
#                     of the working tree that travels (which may hold others' uncommitted edits)
# Environment: PYTHON (default /opt/torch/.venv/bin/python3; needs a shared libpython),
# VENV (default /tmp/pyplat-venv), OUT (where logs go; the device tool sets it).
set -uo pipefail
cd "$(dirname "$0")/.."
CARRY=$(realpath "${CARRY:-.devbench}")
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
VENV=${VENV:-/tmp/pyplat-venv}
OCL_ROOT=/tmp/pyplat-ocl-root
REPEAT=${REPEAT:-1}
OUT=${OUT:-/tmp/pyplat-out}
mkdir -p "$OUT"
mode=${1:-check}; shift || true
export PYTHONUNBUFFERED=1

if [ "$mode" = prepare ]; then
    set -e
    mkdir -p "$CARRY"/whl "$CARRY"/deps "$CARRY"/extra "$CARRY"/deb
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$CARRY/whl" \
        meson-python pyproject-metadata libclang==18.1.1 pyopencl==2026.1.4 platformdirs pytools siphash24 mako
    # libclang's wheel recompressed (ZIP_LZMA; same files and RECORD) to fit the carry limit.
    python3 -c '
import os, sys, zipfile
src = sys.argv[1]
with zipfile.ZipFile(src) as zi:
    if all(i.compress_type == zipfile.ZIP_LZMA for i in zi.infolist()):
        sys.exit(0)
    with zipfile.ZipFile(src + ".part", "w", zipfile.ZIP_LZMA) as zo:
        for info in zi.infolist():
            out = zipfile.ZipInfo(info.filename, info.date_time)
            out.external_attr = info.external_attr
            zo.writestr(out, zi.read(info), compress_type=zipfile.ZIP_LZMA)
os.replace(src + ".part", src)
' "$CARRY"/whl/libclang-*.whl
    apt-get update -qq
    (cd "$CARRY/deb" && apt-get download opencl-c-headers ocl-icd-libopencl1 ocl-icd-opencl-dev clinfo \
        pocl-opencl-icd libpocl2 libpocl2-common libllvm15 libclang-cpp15 libhwloc15 clang-15)
    (cd "$CARRY/deps" && apt-get download libz3-4 libedit2 libffi8 libxml2 libtinfo6 libbsd0 libmd0 libudev1)
    (cd "$CARRY/extra" && apt-get download libicu72)
    stage=$(mktemp -d)
    for deb in "$CARRY"/deb/*.deb; do dpkg -x "$deb" "$stage"; done
    rm -rf "$stage"/usr/share/doc "$stage"/usr/share/man "$stage"/usr/share/lintian \
        "$stage"/usr/lib/cmake "$stage"/usr/lib/llvm-15/lib/cmake
    find "$stage"/usr/share/pocl -name 'kernel-*.bc' ! -name '*-avx512.bc' ! -name '*-avx2.bc' -delete
    tar -C "$stage" -cf - . | xz "${XZ_LEVEL:--9}" -T2 > "$CARRY/ocl-root.tar.xz"
    rm -rf "$stage"
    git archive --format=tar.gz -o "$CARRY/src.tar.gz" HEAD
    git log -1 --format="%H %s" > "$CARRY/src.commit"
    du -cb "$CARRY"/ocl-root.tar.xz "$CARRY"/whl "$CARRY"/deps "$CARRY"/src.tar.gz | tail -1
    exit 0
fi
if [ -f "$CARRY/src.tar.gz" ]; then
    rm -rf /tmp/pyplat-src && mkdir -p /tmp/pyplat-src && tar -xzf "$CARRY/src.tar.gz" -C /tmp/pyplat-src
    cd /tmp/pyplat-src || exit 1
    echo "== source: $CARRY/src.tar.gz, commit $(cat "$CARRY/src.commit" 2>/dev/null)"
else
    echo "== source: the working tree"
fi

say() { echo "== $*"; }

report() {
    say "machine"
    nproc; uname -r; grep -m1 "model name" /proc/cpuinfo
    grep -o -m1 -w avx512f /proc/cpuinfo || echo "no avx512f"
    grep PRETTY_NAME /etc/os-release
    which cc gcc ld pkg-config dpkg-deb 2>&1
    say "python"
    "$PY" - <<'EOF'
import sys, sysconfig, os
v = sysconfig.get_config_var
print(sys.version.replace("\n", " "), sys.executable, "base_prefix", sys.base_prefix)
lib = os.path.join(v("LIBDIR") or "", v("INSTSONAME") or "")
print("Py_ENABLE_SHARED", v("Py_ENABLE_SHARED"), "LDLIBRARY", v("LDLIBRARY"), "libpython", lib,
      "exists" if os.path.exists(lib) else "MISSING")
from importlib.metadata import version
for name in ["cython", "meson", "ninja", "llvmlite", "numpy", "packaging", "typing_extensions",
             "markupsafe", "meson-python", "pyopencl", "libclang"]:
    try:
        print(f"  {name} {version(name)}")
    except Exception:
        print(f"  {name} -")
EOF
}

install_system() {
    [ -e /tmp/.pyplat-system-done ] && return 0
    say "OpenCL already on the machine (before unpacking)"
    ls -l /etc/OpenCL/vendors 2>&1; grep -H . /etc/OpenCL/vendors/*.icd 2>&1
    dpkg -l 2>/dev/null | grep -iE "pocl|opencl|ocl-icd|clinfo|libllvm|libclang" | awk '{print "  " $2, $3}'
    ls -l /usr/lib/x86_64-linux-gnu/libpocl* /usr/lib/x86_64-linux-gnu/libOpenCL* 2>&1
    env | grep -E "^(CPATH|C_INCLUDE_PATH|LIBRARY_PATH|LD_LIBRARY_PATH)=" || true
    find / -xdev -name cl_icd.h -not -path "/proc/*" 2>/dev/null
    say "system packages (bookworm) from $CARRY"
    local -A soname=([libz3-4]=libz3.so.4 [libedit2]=libedit.so.2 [libffi8]=libffi.so.8
                     [libxml2]=libxml2.so.2 [libicu72]=libicuuc.so.72 [libtinfo6]=libtinfo.so.6
                     [libbsd0]=libbsd.so.0 [libmd0]=libmd.so.0 [libudev1]=libudev.so.1)
    for deb in "$CARRY"/deps/*.deb; do
        [ -e "$deb" ] || continue            # (none carried: the machine's own libraries)
        local pkg; pkg=$(basename "$deb"); pkg=${pkg%%_*}
        if ldconfig -p | grep -q "${soname[$pkg]} "; then
            echo "  $pkg: ${soname[$pkg]} already there"
        else
            echo "  $pkg: unpacking"
            dpkg-deb --fsys-tarfile "$deb" | tar --no-overwrite-dir --keep-directory-symlink -x -C / || return 1
        fi
    done
    # (--keep-directory-symlink: on merged-/usr systems /lib is a symlink, which tar would
    # otherwise replace by a directory, losing the system's libraries; libudev1 has files there.)
    # Staged first: its headers are also the ones PyPlat is built against (OCL_ROOT/usr/include).
    rm -rf "$OCL_ROOT" && mkdir -p "$OCL_ROOT" && tar -xJf "$CARRY/ocl-root.tar.xz" -C "$OCL_ROOT" || return 1
    tar -C "$OCL_ROOT" -cf - . | tar --no-overwrite-dir --keep-directory-symlink -xf - -C / || return 1
    ldconfig
    # Another PoCL of soname libpocl.so.2 may be there already: name bookworm's 3.1 by its file.
    local pocl=/usr/lib/x86_64-linux-gnu/libpocl.so.2.10.0
    ln -sf libpocl.so.2.10.0 /usr/lib/x86_64-linux-gnu/libpocl.so.2
    mkdir -p /etc/OpenCL/vendors && echo "$pocl" > /etc/OpenCL/vendors/pocl.icd
    grep -H . /etc/OpenCL/vendors/*.icd
    for f in "$pocl" /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1 /usr/lib/llvm-15/bin/clang /usr/bin/clinfo; do
        ldd "$f" | grep "not found" && echo "  missing libraries for $f"
    done
    touch /tmp/.pyplat-system-done
}

install_pyplat() {
    # checked from /, where no source tree shadows the installed package
    [ -x "$VENV/bin/python" ] && (cd / && "$VENV/bin/python" -c "import pyplat.runtime._sched") 2>/dev/null \
        && return 0
    say "venv $VENV (--system-site-packages) + wheels + PyPlat"
    "$PY" -m venv --system-site-packages "$VENV" || return 1
    # A venv made from a venv sees the base interpreter's site-packages, not the first venv's:
    # a .pth adds the first venv's (numpy, llvmlite, cython, meson, ninja there).
    local torch_site sp
    torch_site=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    sp=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    [ "$torch_site" = "$sp" ] || echo "$torch_site" > "$sp/zz-base-venv.pth"
    "$VENV/bin/python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        "$CARRY"/whl/*.whl || return 1
    export PATH="$VENV/bin:$(dirname "$PY"):$PATH"
    "$VENV/bin/python" -m pip install --no-index --no-build-isolation --no-deps \
        --config-settings=setup-args=-Dopencl_include_dir="$OCL_ROOT/usr/include" . > "$OUT/build.log" 2>&1 \
        || { tail -40 "$OUT/build.log"; return 1; }
    "$VENV/bin/pyplat" icd --info
}

install_all() {
    install_system || { echo "system install failed"; return 1; }
    install_pyplat || { echo "PyPlat install failed"; return 1; }
}

use_env() {
    export PATH="$VENV/bin:$(dirname "$PY"):$PATH"
    # C programs embed the base interpreter (PYTHONHOME=/usr), whose dist-packages would come
    # before the .pth-added site-packages of $PY: name the latter first for every interpreter.
    PYTHONPATH=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    export PYTHONPATH
    # The image sets OCL_ICD_FILENAMES (PoCL and NVIDIA's library), which makes loaders ignore
    # OCL_ICD_VENDORS, and its ld.so.cache puts CUDA's libOpenCL.so.1 before ocl-icd's.
    unset OCL_ICD_FILENAMES
    export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

diag() {
    say "diagnostics"
    env | grep -iE "ocl|opencl" || true
    ldconfig -p | grep -i libOpenCL
    ldd "$(command -v clinfo)" | grep -i opencl
    local d; d=$(pyplat icd --merged); echo "merged: $d"; grep -H . "$d"/*.icd
    PYPLAT_ICD_DEBUG=1 pyplat run -- clinfo -l 2>&1 | tail -30
    "$VENV/bin/python" -c "import llvmlite, numpy, clang.cindex, pyplat; print(llvmlite.__version__, llvmlite.__file__, numpy.__version__, numpy.__file__)"
}

case "$mode" in
check)
    report 2>&1 | tee "$OUT/env.txt"
    install_all 2>&1 | tee "$OUT/install.txt"
    use_env
    diag 2>&1 | tee "$OUT/diag.txt"
    say "pyplat run -- clinfo -l"
    pyplat run -- clinfo -l 2>&1 | tee "$OUT/clinfo.txt"
    say "tiny bench: sched_bench on each platform, 1 worker"
    cc -O2 -o /tmp/sb bench/sched_bench.c -lOpenCL || exit 1
    ( cd /tmp && time PYPLAT_WORKERS=1 pyplat run /tmp/sb PyPlat ) 2>&1 | tee "$OUT/tiny.txt"
    ( cd /tmp && time POCL_CPU_MAX_CU_COUNT=1 POCL_MAX_PTHREAD_COUNT=1 /tmp/sb Portable ) 2>&1 \
        | tee -a "$OUT/tiny.txt"
    ;;
bench)
    install_all > "$OUT/install.txt" 2>&1 || { cat "$OUT/install.txt"; exit 1; }
    grep -E "^==|^  lib|missing|pocl|libpocl" "$OUT/install.txt"
    use_env
    [ -n "${DIAG:-}" ] && diag 2>&1 | tee "$OUT/diag.txt"
    pyplat run -- clinfo -l
    pyplat run -- clinfo -l | grep -q PyPlat || { echo "PyPlat is not listed"; exit 1; }
    for i in $(seq "$REPEAT"); do
        say "python bench/run.py $* (run $i of $REPEAT)"
        ( time timeout "${RUN_TIMEOUT:-200}" python bench/run.py "$@" ) 2>&1 | tee -a "$OUT/bench.txt"
    done
    ;;
raw)
    # sched_bench alone, REPS times per worker count and platform, every run's rows kept
    # ($OUT/raw.tsv: rep workers platform benchmark param us) and every failure's stderr
    # ($OUT/failures.txt; PYTHONFAULTHANDLER=1 dumps PyPlat's Python threads on a crash).
    install_all > "$OUT/install.txt" 2>&1 || { cat "$OUT/install.txt"; exit 1; }
    use_env
    cc -O2 -o /tmp/sb bench/sched_bench.c -lOpenCL || exit 1
    : > "$OUT/raw.tsv"; : > "$OUT/failures.txt"
    for rep in $(seq "${REPS:-3}"); do
        for w in ${WORKERS:-1 2 4 8 16}; do
            for plat in PyPlat Portable; do
                cmd=(/tmp/sb "$plat" "${SCALE:-1}")
                [ "$plat" = PyPlat ] && cmd=(pyplat run -- "${cmd[@]}")
                ( cd /tmp && PYPLAT_WORKERS=$w POCL_CPU_MAX_CU_COUNT=$w POCL_MAX_PTHREAD_COUNT=$w \
                  PYTHONFAULTHANDLER=1 timeout "${RUN_TIMEOUT:-60}" stdbuf -oL "${cmd[@]}" \
                  > /tmp/sb.out 2> /tmp/sb.err )
                rc=$?
                awk -v r="$rep" -v w="$w" -v p="$plat" '{print r "\t" w "\t" p "\t" $0}' /tmp/sb.out >> "$OUT/raw.tsv"
                echo "rep $rep workers $w $plat: rc $rc, $(wc -l < /tmp/sb.out) rows"
                if [ "$rc" != 0 ]; then
                    { echo "=== rep $rep workers $w $plat: rc $rc after $(tail -n1 /tmp/sb.out | cut -f1,2)"
                      tail -c 6000 /tmp/sb.err; } >> "$OUT/failures.txt"
                fi
            done
        done
    done
    python3 bench/rawsum.py "$OUT/raw.tsv" | tee "$OUT/summary.txt"
    # What the hardware allows without a runtime (the in-order parallelisation's work).
    cc -O2 -march=native -o /tmp/threads_bound bench/threads_bound.c -lpthread &&
        /tmp/threads_bound ${WORKERS:-1 2 4 8 16} | tee -a "$OUT/summary.txt"
    ;;
py)
    # any bench/ script under pyplat run: bash bench/device.sh py bench/probe_pool.py ARGS
    install_all > "$OUT/install.txt" 2>&1 || { cat "$OUT/install.txt"; exit 1; }
    use_env
    ( cd /tmp && pyplat run -- python "/tmp/pyplat-src/$1" "${@:2}" ) 2>&1 | tee "$OUT/py.txt"
    ;;
api)
    # API call costs from C (bench/api_bench.c), PyPlat and PoCL alternating, medians and ratios,
    # the table also as markdown ($OUT/api.txt): bash bench/device.sh api [run.py api args]
    install_all > "$OUT/install.txt" 2>&1 || { cat "$OUT/install.txt"; exit 1; }
    use_env
    pyplat run -- clinfo -l | grep -q PyPlat || { echo "PyPlat is not listed"; exit 1; }
    ( time timeout "${RUN_TIMEOUT:-500}" python bench/run.py api --markdown "$@" ) 2>&1 | tee "$OUT/api.txt"
    ;;
barrier)
    # barrier/local-memory kernels + vector add, PyPlat and PoCL side by side (bench/barrier_kernels.py)
    install_all > "$OUT/install.txt" 2>&1 || { cat "$OUT/install.txt"; exit 1; }
    use_env
    [ $# -gt 0 ] || set -- --workers 1,16 --repeat 9
    ( cd /tmp && python "$OLDPWD/bench/barrier_kernels.py" --json "$OUT/barrier.json" "$@" ) 2>&1 \
        | tee "$OUT/barrier.txt"
    ;;
cts)
    # the Khronos CTS binaries built here (tools/cts_build.sh), carried as $CARRY/cts-build.tar.xz
    # (BUILD_DIR's test_conformance tree: binaries, stripped, and their data files), run by
    # tools/cts.py: bash bench/device.sh cts --platform both --jobs 8 --binaries A,B --timeout S
    install_all > "$OUT/install.txt" 2>&1 || { cat "$OUT/install.txt"; exit 1; }
    use_env
    rm -rf /tmp/cts-build && mkdir -p /tmp/cts-build && tar -xJf "$CARRY/cts-build.tar.xz" -C /tmp/cts-build
    ( cd /tmp && python "/tmp/pyplat-src/tools/cts.py" --cts-dir /tmp/cts-build --out "$OUT/cts" "$@" ) \
        2>&1 | tee "$OUT/cts.txt"
    ;;
*)
    echo "usage: bash bench/device.sh check|bench|raw|py|api|barrier|cts [args]" >&2; exit 2 ;;
esac
