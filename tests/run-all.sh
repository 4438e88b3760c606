#!/bin/sh
# Runs every test moeflow has, from a fresh Debian 12 machine as root:
# installs the build and test packages (build-aux/install-deps.sh --test),
# builds in _build and runs the unit,
# CLI and integration tests (the latter start their own local Slurm
# clusters), and meanwhile builds with ASan+UBSan in _build-san, whose unit
# and CLI tests run after.  Ends with every skip, by name (tests/summary.sh
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

# The sanitizer build, and its test programs, compile while _build's tests
# run: those mostly wait on their Slurm clusters, and at nice 19 the
# compiler takes only the CPU they leave (both builds only read the source
# folder, which autoreconf has just made current).  The sanitizer build's
# own tests run afterwards, not beside them: some CLI tests time what they
# check.
# shellcheck disable=SC2016
nice -n 19 sh -c 'mkdir -p "$1/_build-san" && cd "$1/_build-san" &&
    { [ -f Makefile ] || ../configure --enable-werror --enable-sanitizers; } &&
    make -j2 && make -j2 check TESTS=' sh "$top" > "$top/build-san.log" 2>&1 &
san=$!
(cd "$top/_build" && make -j2 check-all)

wait "$san"
san_rc=$?
cat "$top/build-san.log" >> "$top/build.log"
rm -f "$top/build-san.log"
[ "$san_rc" = 0 ] || build_failed
(cd "$top/_build-san" && make -j2 check TESTS='$(UNIT_TESTS) $(CLI_TESTS)')

rm -rf "$views"-*
sh "$top/tests/summary.sh" --ci "$top"
