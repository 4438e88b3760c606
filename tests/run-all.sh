#!/bin/sh
# Runs every test moeflow has, from a fresh Debian 12 machine as root:
# installs the build and test packages (build-aux/install-deps.sh --test),
# builds in _build and runs the unit,
# CLI and integration tests (the latter start their own local Slurm
# clusters), then rebuilds with ASan+UBSan in _build-san and runs the unit
# and CLI tests again.  Ends with every skip, by name (tests/summary.sh
# --ci: a skip that tests/skips.tsv says CI must not have fails the run),
# and the line "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

build() {  # build DIR CONFIGURE-ARGS...
    dir=$1; shift
    mkdir -p "$top/$dir" && cd "$top/$dir" &&
    { [ -f Makefile ] || ../configure "$@"; } &&
    make -j2
}

build_failed() {
    tail -40 "$top/build.log"
    echo "the build failed; see $top/build.log"
    echo "0 passed, 1 failed"
    exit 1
}

# this tree's copies for the job user (tests/integration/lib.sh)
views=/tmp/moeflow-view-$(pwd -P | sha256sum | cut -c1-8)
rm -rf "$views"-*
"$top/build-aux/install-deps.sh" --test || { echo "0 passed, 1 failed"; exit 1; }
{ autoreconf -fi && build _build --enable-werror; } > "$top/build.log" 2>&1 || build_failed
find "$top/_build" "$top/_build-san" -name '*.trs' -delete 2>/dev/null
(cd "$top/_build" && make -j2 check)

build _build-san --enable-werror --enable-sanitizers >> "$top/build.log" 2>&1 || build_failed
(cd "$top/_build-san" && make -j2 check TESTS='$(UNIT_TESTS) $(CLI_TESTS)')

rm -rf "$views"-*
sh "$top/tests/summary.sh" --ci "$top"
