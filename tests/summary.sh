#!/bin/sh
# Counts every TAP test point that automake's driver recorded under BUILDDIR
# and prints the closing line "N passed, N failed".  Exits 1 on any failure.
# A test script that errors (crash, bad plan) counts as failed.
builddir=${1:-.}
extra_failed=${2:-0}
find "$builddir" -name '*.trs' -exec cat {} + 2>/dev/null |
awk -v extra="$extra_failed" '
    /^:test-result: (PASS|XFAIL)/ { passed++ }
    /^:test-result: (FAIL|XPASS|ERROR)/ { failed++ }
    /^:test-result: SKIP/ { skipped++ }
    END {
        failed += extra
        if (skipped) printf "(%d skipped)\n", skipped
        printf "%d passed, %d failed\n", passed, failed
        exit failed ? 1 : 0
    }'
