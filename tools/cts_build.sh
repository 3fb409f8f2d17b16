#!/bin/sh
# Build a chosen set of Khronos OpenCL CTS binaries against the system ICD loader (ocl-icd).
#
# usage: tools/cts_build.sh CTS HEADERS [BUILD_DIR [TARGET...]]
#   CTS, HEADERS  a bare/normal git dir of KhronosGroup/OpenCL-CTS and KhronosGroup/OpenCL-Headers
#                 (the pinned tags are archived out of it), or an already unpacked source tree.
#   BUILD_DIR     default /tmp/cts-build; sources are unpacked into BUILD_DIR/src.
#   TARGET...     default: the binaries tools/cts.py runs (see docs/conformance.md).
# env: CTS_REF (default v2023-12-12-00), HEADERS_REF (default v2023.12.14), JOBS (default 2),
#      NICE (default 5), CMAKE_ARGS (more configure arguments, e.g. newer CTS tags need
#      -DSPIRV_INCLUDE_DIR=<a KhronosGroup/SPIRV-Headers tree>).
# Needs cmake, a C/C++ compiler and ocl-icd-opencl-dev (libOpenCL.so in /usr/lib/<triplet>).
set -eu

if [ $# -lt 2 ]; then
    sed -n '2,12p' "$0" >&2
    exit 2
fi
CTS=$1
HEADERS=$2
BUILD=${3:-/tmp/cts-build}
shift 2
[ $# -gt 0 ] && shift
CTS_REF=${CTS_REF:-v2023-12-12-00}
HEADERS_REF=${HEADERS_REF:-v2023.12.14}
JOBS=${JOBS:-2}
NICE=${NICE:-5}
DEFAULT_TARGETS="test_basic test_api test_compiler test_buffers test_events test_computeinfo
 test_commonfns test_geometrics test_relationals test_integer_ops test_atomics test_printf
 test_profiling test_vectors test_multiples test_mem_host_flags test_select test_allocations
 test_thread_dimensions test_half test_conversions test_bruteforce"
TARGETS=${*:-$DEFAULT_TARGETS}

# unpack SRC (git dir or source tree) at REF into DEST; echo the source dir to use
unpack() {
    src=$1 ref=$2 dest=$3
    if git --git-dir="$src" rev-parse --verify -q "$ref^{commit}" >/dev/null 2>&1; then
        rm -rf "$dest" && mkdir -p "$dest"
        # a partial snapshot may lack some large blobs (OpenCL-CTS: test_conformance/spir/*.zip,
        # used by test_spir only): leave those paths out instead of failing
        missing=$(git --git-dir="$src" ls-tree -r --format='%(objectname) %(path)' "$ref" |
            git --git-dir="$src" cat-file --batch-check='%(objectname) %(objecttype) %(rest)' |
            awk '$2 == "missing" {print $1}')
        excludes=""
        for h in $missing; do
            p=$(git --git-dir="$src" ls-tree -r --format='%(objectname) %(path)' "$ref" |
                awk -v h="$h" '$1 == h {print $2}')
            echo "warning: $p is absent from $src; left out" >&2
            excludes="$excludes :(exclude)$p"
        done
        # shellcheck disable=SC2086
        git --git-dir="$src" archive "$ref" -- . $excludes | tar -x -C "$dest"
        echo "unpacked $src at $ref ($(git --git-dir="$src" rev-parse "$ref^{commit}"))" >&2
        echo "$dest"
    elif [ -d "$src/.git" ] && git -C "$src" rev-parse --verify -q "$ref^{commit}" >/dev/null 2>&1; then
        rm -rf "$dest" && mkdir -p "$dest"
        git -C "$src" archive "$ref" | tar -x -C "$dest"
        echo "unpacked $src at $ref" >&2
        echo "$dest"
    elif [ -f "$src/CMakeLists.txt" ]; then
        echo "using source tree $src as is (ref $ref not checked)" >&2
        echo "$src"
    else
        echo "cts_build.sh: $src is neither a git dir with $ref nor a source tree" >&2
        exit 1
    fi
}

mkdir -p "$BUILD"
CTS_SRC=$(unpack "$CTS" "$CTS_REF" "$BUILD/src/OpenCL-CTS")
HDR_SRC=$(unpack "$HEADERS" "$HEADERS_REF" "$BUILD/src/OpenCL-Headers")

LIBDIR=$(dirname "$(ls /usr/lib/*/libOpenCL.so /usr/lib/libOpenCL.so 2>/dev/null | head -n1)")
if [ ! -e "$LIBDIR/libOpenCL.so" ]; then
    echo "cts_build.sh: no libOpenCL.so (install ocl-icd-opencl-dev)" >&2
    exit 1
fi

# shellcheck disable=SC2086
cmake -S "$CTS_SRC" -B "$BUILD/build" \
    -DCL_INCLUDE_DIR="$HDR_SRC" -DCL_LIB_DIR="$LIBDIR" -DOPENCL_LIBRARIES=OpenCL \
    -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
for t in $TARGETS; do
    nice -n "$NICE" cmake --build "$BUILD/build" --target "$t" -j "$JOBS"
done
# every binary lands in its own test_conformance/<dir>/; gather links in BUILD/bin
mkdir -p "$BUILD/bin"
for t in $TARGETS; do
    f=$(find "$BUILD/build/test_conformance" -type f -name "$t" -perm -u+x | head -n1)
    if [ -n "$f" ]; then ln -sf "$f" "$BUILD/bin/$t"; else echo "missing: $t" >&2; fi
done
echo "CTS binaries in $BUILD/bin"
