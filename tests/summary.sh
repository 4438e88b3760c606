#!/bin/sh
# Counts every TAP test point that automake's driver recorded under DIR
# and prints the closing line "N passed, N failed".  Exits 1 on any failure.
# A test script that errors (crash, bad plan) counts as failed.
#
#   tests/summary.sh [--ci] DIR [EXTRA_FAILED]
#
# Every skip is listed by name, build folder (the first folder under DIR)
# and reason, and matched against tests/skips.tsv: a skip it marks
# "expected" says why that is fine; with --ci (tests/run-all.sh, which is
# what CI runs) a skip it marks "must-run" counts as a failure.  Every
# expected failure (XFAIL, a "not ok ... # TODO" point) is listed by name too.
ci=0
[ "${1:-}" = --ci ] && { ci=1; shift; }
builddir=${1:-.}
extra_failed=${2:-0}
here=$(cd "$(dirname "$0")" && pwd)
skips=$here/skips.tsv

# The build folder a .trs file is in: the first folder under DIR when DIR
# is the source tree (its _build, _build-san), else DIR itself.
build_of() (
    rel=${1#"$builddir"/}
    build=${rel%%/*}
    [ -f "$builddir/$build/config.status" ] || build=$(basename "$(cd "$builddir" && pwd)")
    echo "$build"
)

# The lines of one kind (SKIP, XFAIL) in the logs beside the .trs files, as
# "build<TAB>test<TAB>details" (details: "N - description # SKIP reason",
# or "- reason" for a script that skipped as a whole).
result_lines() {
    find "$builddir" -name '*.trs' 2>/dev/null | sort | while read -r trs; do
        log=${trs%.trs}.log
        [ -f "$log" ] || continue
        found=$(grep -E "^$1: " "$log") || continue
        build=$(build_of "$trs")
        printf '%s\n' "$found" | sed -e "s/^$1: //" | while read -r test details; do
            printf '%s\t%s\t%s\n' "$build" "$test" "$details"
        done
    done
}

result_lines SKIP | awk -F'\t' -v ci="$ci" -v policy="$skips" '
    BEGIN {
        while ((getline line < policy) > 0) {
            if (line ~ /^#/ || line ~ /^[ \t]*$/)
                continue
            split(line, f, "\t")
            n++
            verdict[n] = f[1]; build[n] = f[2]; test[n] = f[3]; point[n] = f[4]; why[n] = f[5]
        }
    }
    function matches(k, b, t, d) {
        if (build[k] != "*" && build[k] != b) return 0
        if (test[k] != t) return 0
        return point[k] == "*" || index(d, point[k]) > 0
    }
    {
        b = $1; t = $2; d = $3; label = "not in tests/skips.tsv"
        for (k = 1; k <= n; k++)
            if (matches(k, b, t, d)) {
                label = verdict[k] == "expected" ? "expected: " why[k] : "MUST RUN in CI: " why[k]
                if (verdict[k] == "must-run" && ci) bad++
                break
            }
        printf "skipped in %s: %s %s\n    (%s)\n", b, t, d, label
    }
    END { exit bad ? 1 : 0 }'
must_run_skipped=$?

# Every expected failure (a TAP "not ok ... # TODO", automake's XFAIL) by
# name: a check known to fail, whose reason is on record (e.g. the GPU
# lane's stale evidence, tests/gpu/stale-expected.txt).  It does not fail
# the run; it is listed so that the obligation stays in view.
result_lines XFAIL | while IFS="$(printf '\t')" read -r build test details; do
    printf 'expected failure in %s: %s %s\n' "$build" "$test" "$details"
done

# Where the time went: the slowest tests, each from its log's birth (the
# driver creates it when the test starts) to its .trs (written when it
# ends), in wall seconds, as make check -jN ran them side by side.  Left
# out where the file system does not record a birth time.
find "$builddir" -name '*.trs' 2>/dev/null | while read -r trs; do
    log=${trs%.trs}.log
    born=$(stat -c %W "$log" 2>/dev/null) || continue
    ended=$(stat -c %Y "$trs" 2>/dev/null) || continue
    [ "${born:-0}" -gt 0 ] || continue
    rel=${trs#"$builddir"/}
    printf '%d\t%s\n' $(( ended - born )) "${rel%.trs}"
done | sort -rn | head -n "${MOEFLOW_SLOWEST:-12}" | awk -F'\t' '
    NR == 1 { print "slowest tests (wall seconds, start to end):" }
    { printf "  %5d  %s\n", $1, $2 }'

# Every failure by name, with the diagnostics its test printed around it,
# last before the count: CI shows the end of this output, and a failure
# named there needs no second run to be found.  At most 8 diagnostic lines
# each, and 20 failures.
find "$builddir" -name '*.trs' 2>/dev/null | sort | while read -r trs; do
    log=${trs%.trs}.log
    grep -qE '^:test-result: (FAIL|XPASS|ERROR)' "$trs" 2>/dev/null || continue
    build=$(build_of "$trs") rel=${trs#"$builddir"/}
    [ -f "$log" ] || { printf 'failed in %s: %s (no log)\n' "$build" "${rel%.trs}"; continue; }
    awk -v build="$build" '
        /^#/ {
            if (after) { if (shown++ < 8) print "    " $0 }
            else { before[nd % 8] = $0; nd++ }
            next
        }
        /^(FAIL|XPASS|ERROR): / {
            printf "failed in %s: %s\n", build, $0
            for (i = (nd > 8 ? nd - 8 : 0); i < nd; i++) print "    " before[i % 8]
            nd = 0; shown = 0; after = 1; next
        }
        /^not ok/ { next }
        { nd = 0; after = 0 }' "$log"
done | awk '/^failed in / && ++n > 20 { exit } { print }'

find "$builddir" -name '*.trs' -exec cat {} + 2>/dev/null |
awk -v extra="$extra_failed" -v must="$must_run_skipped" '
    /^:test-result: (PASS|XFAIL)/ { passed++ }
    /^:test-result: (FAIL|XPASS|ERROR)/ { failed++ }
    /^:test-result: SKIP/ { skipped++ }
    /^:test-result: XFAIL/ { xfailed++ }
    END {
        failed += extra
        if (must) {
            print "a test that CI must run was skipped (tests/skips.tsv)"
            failed++
        }
        if (skipped) printf "(%d skipped)\n", skipped
        if (xfailed) printf "(%d expected failures, listed above, counted as passed)\n", xfailed
        printf "%d passed, %d failed\n", passed, failed
        exit failed ? 1 : 0
    }'
