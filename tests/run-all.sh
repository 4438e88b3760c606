#!/bin/sh
# Runs every test moeflow has, from a fresh Debian 12 machine as root:
# installs the build and Slurm packages, builds in _build, runs the unit
# and integration tests (which start their own local Slurm clusters), and
# ends with the line "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

"$top/build-aux/install-deps.sh" || { echo "0 passed, 1 failed"; exit 1; }
build_failed=0
{
    autoreconf -fi &&
    mkdir -p _build && cd _build &&
    { [ -f Makefile ] || ../configure --enable-werror; } &&
    make -j2
} > "$top/build.log" 2>&1 || build_failed=1
if [ $build_failed = 1 ]; then
    tail -40 "$top/build.log"
    echo "the build failed; see $top/build.log"
    echo "0 passed, 1 failed"
    exit 1
fi
cd "$top/_build" || exit 1
find . -name '*.trs' -delete
make -j2 check
sh "$top/tests/summary.sh" .
