#!/bin/bash
# The fit-truth matrix (tests/gpu/fit-matrix/README.md), replayed without a
# GPU: the committed logs of every fit-stage run of 13 studies, in core 0.19
# and bridge-pin, with fit-python/ filling the fake process group's
# collectives and, for five studies, without.  Today's moeflow regenerates
# each study (stale evidence fails), reports it (`report --stage fit`) and
# must give tests/gpu/fit-matrix.tsv byte for byte; every filled run is
# within 10% of the memory model, and the unfilled ones are flagged.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN S=$MOEFLOW_SRCDIR
tsv=$S/tests/gpu/fit-matrix.tsv archive=$S/tests/data/gpu/fit-matrix.tar.xz
out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
tap_plan 9

MOEFLOW_BIN=$M bash "$S/tests/gpu/fit-matrix.sh" table unused "$archive" \
    > "$out/table.tsv" 2> "$out/table.err"
rc=$?
ok "today's moeflow writes the same fit jobs for every matrix study (no stale evidence)" \
    test "$rc" = 0
diag < "$out/table.err"
ok "and reports the committed tests/gpu/fit-matrix.tsv from the committed logs, byte for byte" \
    cmp -s "$out/table.tsv" "$tsv"
diff "$tsv" "$out/table.tsv" | diag

studies=$(awk -F'\t' 'NR > 1 {print $2}' "$tsv" | sort -u | wc -l)
ok "the matrix has at least 12 studies ($studies), in both dialects" \
    sh -c "test $studies -ge 12 && test \$(cut -f1 '$tsv' | sort -u | grep -c .) = 3"
ok "every run finished with a measured peak, filled" \
    test "$(awk -F'\t' 'NR > 1 && $10 == "-"' "$tsv" | wc -l)" = 0
awk -F'\t' 'NR > 1 {e = ($11 - $10) / $10 * 100; if (e < -10 || e > 10)
    printf "%s %s %s: measured %s MiB, predicted %s (%+.1f%%)\n", $1, $2, $3, $10, $11, e}' \
    "$tsv" > "$out/misses"
ok "the memory model is within 10% of every filled run's peak" test ! -s "$out/misses"
diag < "$out/misses"
unfilled=$(awk -F'\t' 'NR > 1 && $9 != "-" && $4 > 1 {print $2}' "$tsv" | sort -u | wc -l)
ok "the unfilled peaks are on record for at least 4 studies with EP > 1 ($unfilled)" \
    test "$unfilled" -ge 4

mkdir "$out/m" && tar -xJf "$archive" -C "$out/m"
. "$MOEFLOW_SRCDIR/tests/gpu/pre40-studies.sh"
say_te_none "$out/m"
obs=$out/m/core-0.19/m01-e64k6-ep8.observe
"$M" report "$obs" --stage fit --json > "$out/obs.json"
ok "report --stage fit flags every unfilled run as untrusted, with collapsed routing" \
    python3 -c "
import json, sys
rows = json.load(open(sys.argv[1]))['candidates']
assert rows and all(r['verdict'].startswith('untrusted: collectives left unfilled') for r in rows)
assert all(r['routing']['nonfinite'] > 0 and r['routing']['rows_mean'] > 1.5 * r['routing']['rows_balanced'] for r in rows)
" "$out/obs.json"
study=$out/m/core-0.19/m01-e64k6-ep8
"$M" gen --stage fit "$study/study.yaml" -o "$out/regen" > /dev/null
cp "$out/regen/manifest.json" "$study/manifest.json"
(cd "$out/m/core-0.19" && "$M" report m01-e64k6-ep8 --stage fit) > "$out/m01.txt"
ok "report --stage fit on a matrix study (golden: tests/data/gpu/expected/fit-report-m01.txt)" \
    cmp -s "$out/m01.txt" "$S/tests/data/gpu/expected/fit-report-m01.txt"
diff "$S/tests/data/gpu/expected/fit-report-m01.txt" "$out/m01.txt" | diag
rm -rf "$out/g"
"$M" gen --stage scale --fit-memory-from "$study" "$study/study.yaml" -o "$out/g" 2> "$out/g.err"
ok "gen --fit-memory-from divides the scale stage's usable memory by the fit stage's ratio" \
    sh -c "grep -q 'usable memory divided by 1.0' '$out/g.err' &&
           grep -q 'divided by the fit stage' '$out/g/manifest.json'"
