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
tap_plan 16

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

# Static shapes (issue 41), from the real drop-and-pad runs: m11 pads every
# expert's input to its capacity, and each of its dispatches received 8192
# rows; m01 routes dropless and says nothing of them.
grep -q 'static shapes (measured; a full-iteration CUDA graph needs them): unknown' "$out/m01.txt"
tap_ok $? "m01 (dropless): report --stage fit says nothing of static shapes ('unknown')"
m11=$out/m/core-0.19/m11-e32k2-ep8-droppad
"$M" gen --stage fit "$m11/study.yaml" -o "$out/regen11" > /dev/null
cp "$out/regen11/manifest.json" "$m11/manifest.json"
"$M" report "$m11" --stage fit --json > "$out/m11.json"
ok "m11 (drop-and-pad, EP 8): its three runs received 8192 rows on every dispatch: static" \
    python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert r['static_shapes']['verdict'] == 'static', r['static_shapes']
assert '8192 rows' in r['static_shapes']['why']
assert all(c['routing_class'] == 'drop-and-pad' and c['routing']['rows_min'] == c['routing']['rows_max'] == 8192 for c in r['candidates'])
" "$out/m11.json"
# the same study retuning CUDA graphs (warm-up past the capture step)
sed -e 's/warmup: 2/warmup: 4/' -e 's/axes: \[manual_gc\]/axes: [cuda_graph]/' "$m11/study.yaml" \
    > "$out/graphs.yaml"
sed 's/^  ep: 8$/  ep: 8\n  cuda_graph_modules: [full_iteration]/' "$out/graphs.yaml" > "$out/full.yaml"
full_candidates() {  # full_candidates DIR: the retune stage's full_iteration candidates
    python3 -c "
import json, sys
m = json.load(open(sys.argv[1] + '/manifest.json'))
print(sum(c['value'] == ['full_iteration'] for s in m['stages'] for c in s['candidates']))" "$1"
}
"$M" gen --stage retune --fit-memory-from "$m11" "$out/graphs.yaml" -o "$out/g11" > /dev/null 2>&1
ok "gen --fit-memory-from m11 keeps the full_iteration candidate" test "$(full_candidates "$out/g11")" = 1
# One log edited as a run without padding would print it (7936 of 8192
# rows on some dispatch); its time kept, so the .rc stays its own.
cp -r "$m11" "$out/moved"
log=$(ls "$out/moved/results/fit/"*.log | head -1)
sed -i '/moeflow-fake-collectives: torch=/s/rows_min=8192/rows_min=7936/' "$log"
touch -r "$m11/results/fit/${log##*/}" "$log"
"$M" report "$out/moved" --stage fit > "$out/moved.txt"
ok "... a drop-and-pad run whose dispatches received 7936 to 8192 rows: 'not static', the run named" \
    grep -q "static shapes (measured; a full-iteration CUDA graph needs them): not static: fit candidate .* received 7936 to 8192 rows" "$out/moved.txt"
"$M" gen --stage retune --fit-memory-from "$out/moved" "$out/graphs.yaml" -o "$out/g-moved" \
    > "$out/g-moved.out" 2>&1
ok "... gen --fit-memory-from skips full_iteration, naming the evidence" \
    sh -c "test \"\$(python3 -c \"
import json, sys
m = json.load(open(sys.argv[1]))
print(sum(k['value'] == ['full_iteration'] and 'shapes not static' in k['reason'] and '7936 to 8192' in k['reason'] for s in m['stages'] for k in s['skipped']))\" '$out/g-moved/manifest.json')\" = 1"
"$M" gen --fit-memory-from "$out/moved" "$out/full.yaml" -o "$out/g-full" > "$out/g-full.out" 2>&1
rc=$?
ok "... and refuses a baseline with full_iteration (exit 3, naming the field and the run), writing nothing" \
    sh -c "test $rc = 3 && grep -q 'full.yaml: baseline.cuda_graph_modules: full_iteration needs static shapes, and they are not static: fit candidate' '$out/g-full.out' && test ! -e '$out/g-full'"
"$M" gen --fit-memory-from "$m11" "$out/full.yaml" -o "$out/g-full11" > /dev/null 2>&1
ok "... which the real runs' evidence allows" test -f "$out/g-full11/manifest.json"
tap_done
