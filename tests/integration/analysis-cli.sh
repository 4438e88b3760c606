#!/bin/sh
# moeflow overlap / report / diagnose end to end: golden outputs (values
# worked out by hand, see tests/unit/analysis/test_overlap.c and test_report.c),
# exit codes, and the files report -o writes.  No cluster needed.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"

M=$MOEFLOW_BIN
T=$MOEFLOW_SRCDIR/tests/data/traces
L=$MOEFLOW_SRCDIR/tests/data/logs
TMP=$(mktemp -d /tmp/moeflow-analysis-cli.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

tap_plan 13

"$M" overlap "$T/synthetic-2gpu.json" > "$TMP/ov.txt"
cmp -s "$TMP/ov.txt" "$T/synthetic-2gpu.overlap.txt"
rc=$?
tap_ok $rc "overlap table matches the hand-checked golden file"
[ $rc -eq 0 ] || diff "$T/synthetic-2gpu.overlap.txt" "$TMP/ov.txt" | diag

"$M" overlap --json --window steps=2 "$T/synthetic-2gpu.json" > "$TMP/ov.json"
grep -q '"hidden_ns": 2000,' "$TMP/ov.json" && grep -q '"exposed_ns": 10000,' "$TMP/ov.json"
tap_ok $? "overlap --json over ProfilerStep#2: 2 us hidden, 10 us exposed on GPU 0"

"$M" overlap --window steps=41-50 "$T/synthetic-2gpu.json" > /dev/null 2> "$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -q 'only has steps 1-2' "$TMP/err"
tap_ok $? "a step window the trace lacks exits 2 and names the steps it has"

"$M" overlap --window 41-5x "$T/synthetic-2gpu.json" > /dev/null 2>&1
[ $? -eq 1 ]
tap_ok $? "a malformed --window is a usage error (exit 1)"

"$M" overlap --no-default-comm --comm 'ncclDevKernel_SendRecv*' --json "$T/synthetic-2gpu.json" > "$TMP/ov2.json"
grep -q '"comm_ns": 10000,' "$TMP/ov2.json"
tap_ok $? "--no-default-comm --comm GLOB replaces the communication patterns"

"$M" report "$L/h200x2-moe-ep2-alltoall-60it.log" > "$TMP/rep.txt"
cmp -s "$TMP/rep.txt" "$L/h200x2.report.txt"
rc=$?
tap_ok $rc "report of the 2xH200 run over 41-50 matches the golden summary"
[ $rc -eq 0 ] || diff "$L/h200x2.report.txt" "$TMP/rep.txt" | diag

"$M" report "$L/mixtral8x7b-16xH100-issue756.log" > /dev/null 2> "$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -q 'only reached iteration 45' "$TMP/err"
tap_ok $? "a window the run never reached exits 2, never a silent partial"

"$M" report --window 44-45 "$L/mixtral8x7b-16xH100-issue756.log" > "$TMP/mix.txt"
grep -q ' 5626.2 ' "$TMP/mix.txt"
tap_ok $? "report --window 44-45 on the 2024 log: median (5533.8 + 5718.6) / 2"

mkdir -p "$TMP/run"
cp "$L/h200x2-moe-ep2-alltoall-60it.log" "$TMP/run/rank0.log"
cp "$T/synthetic-2gpu.json" "$TMP/run/profile.json"
"$M" report -o "$TMP/out" --expect dispatcher=deepep "$L/h200x2-moe-ep2-alltoall-60it.log" "$TMP/run" > "$TMP/ab.txt"
[ -s "$TMP/out/report.json" ] && [ -s "$TMP/out/report.md" ] && head -c 4 "$TMP/out/step-time.svg" | grep -q '<svg'
tap_ok $? "report -o writes report.json, report.md and step-time.svg"

grep -q 'MISMATCH: requested dispatcher=deepep, ran with dispatcher=alltoall' "$TMP/ab.txt" &&
    grep -q 'no DeepEP\|no FP8\|"profile"' "$TMP/out/report.json"
tap_ok $? "requested-vs-ran mismatches are flagged; a run directory's profile is read"

# Both runs ran fp8=None and dispatcher=alltoall: only the run named "run"
# is flagged.  A RUN that names no run of the report is refused (it was
# ignored, and checked nothing).
"$M" report --expect run:fp8=e4m3 --expect h200x2-moe-ep2-alltoall-60it.log:dispatcher=alltoall \
    "$L/h200x2-moe-ep2-alltoall-60it.log" "$TMP/run" > "$TMP/ab2.txt"
[ "$(grep -c MISMATCH "$TMP/ab2.txt")" -eq 1 ] && grep -q 'requested fp8=e4m3, ran with fp8=None' "$TMP/ab2.txt" &&
    ! "$M" report --expect other:dispatcher=deepep "$L/h200x2-moe-ep2-alltoall-60it.log" \
        > /dev/null 2> "$TMP/err" && grep -q "no run is named 'other'" "$TMP/err"
tap_ok $? "--expect RUN:KEY=VALUE applies to the named run only, and RUN must name one"

"$M" overlap --json "$T/synthetic-2gpu.json" > "$TMP/ov-all.json"
"$M" diagnose "$TMP/out" "$TMP/ov-all.json" > "$TMP/diag.txt"
grep -q 'communication bottleneck: exposed communication is 31.2% of GPU time' "$TMP/diag.txt" &&
    grep -q '^  - dispatcher: flex dispatcher with DeepEP or HybridEP' "$TMP/diag.txt"
tap_ok $? "diagnose: 25 us exposed of 80 us GPU time is a communication bottleneck"

fails=0
for c in overlap report diagnose; do
    "$M" "$c" --help | grep -q 'example:' || fails=1
done
tap_ok $fails "overlap, report and diagnose --help show an example"

[ "$TAP_FAILED" -eq 0 ]
