#!/bin/bash
# The published rows the step-time table is checked against are chosen by
# a rule, not by hand (issue 42): PROVENANCE's rule applied to the cited
# Megatron-Bridge summary (performance-summary-df0289c.tsv, stored as
# published) names every row; tests/calibration/select-rows.py fails when
# bridge-performance-summary.tsv or the table built from it lacks one.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
tap_plan 3
sel=$MOEFLOW_SRCDIR/tests/calibration/select-rows.py
out=$(python3 "$sel" "$MOEFLOW_SRCDIR" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
tap_ok $rc "the table holds every row PROVENANCE's rule names"
# The rule names rows beyond the dropless ones: the 25.09 token-drop rows
# of B200 and GB200 are in it (a rule that missed them would pass above).
printf '%s\n' "$out" | grep -qx "named	33	missing	0"
tap_ok $? "it names 33 rows (26.02, 25.11, 25.09 on H100, B200, GB200, GB300), none missing"
# A table without one of them fails, naming it.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/select-rows.XXXXXX")
mkdir -p "$tmp/tests/data/calibration" "$tmp/tests/calibration"
cp "$MOEFLOW_SRCDIR/tests/data/calibration/performance-summary-df0289c.tsv" "$tmp/tests/data/calibration/"
cp "$MOEFLOW_SRCDIR/tests/calibration/steptime-table.tsv" "$tmp/tests/calibration/"
grep -v '^gb200-2509-qwen3-235b-drop	' "$MOEFLOW_SRCDIR/tests/data/calibration/bridge-performance-summary.tsv" \
    > "$tmp/tests/data/calibration/bridge-performance-summary.tsv"
python3 "$sel" "$tmp" > "$tmp/out" 2>&1
rc=$?
sed 's/^/# /' "$tmp/out"
[ "$rc" -eq 1 ] && grep -q "^missing	gb200	25.09	qwen3-235b-a22b	64	659	" "$tmp/out"
tap_ok $? "a row the rule names and the table lacks fails the check, named"
rm -rf "$tmp"
