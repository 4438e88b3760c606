#!/bin/bash
# Issue 21: contract diff never calls two contracts equal when their
# digests differ.  contract-a.json {"seq_len.x":5} and contract-b.json
# {"seq_len":{"x":5}} (tests/data/hardening, from the reproducers) were
# "no differences"; keys are now flattened without ambiguity (a '.' in a
# key is escaped), sections must be objects, and when only the annotations
# (sources, run) differ the diff says so instead of "no differences".
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
tap_plan 9
tmp=$(mktemp -d /tmp/mfcd.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
H=$MOEFLOW_SRCDIR/tests/data/hardening

"$M" contract diff "$H/contract-a.json" "$H/contract-b.json" > "$tmp/out" 2>&1
tap_ok $? "diff of the reproducer's contracts succeeds"
ok "... it is not 'no differences'" hasnt "$tmp/out" "no differences"
ok "... it shows b's nested leaf" has "$tmp/out" '^workload\.seq_len\.x: \(absent\) → 5$'
ok "... and a's dotted key, its dot escaped" has "$tmp/out" '^workload\.seq_len\\\.x: 5 → \(absent\)$'
"$M" contract diff --json "$H/contract-a.json" "$H/contract-b.json" > "$tmp/out" 2>&1
[ "$(grep -c '"path"' "$tmp/out")" -eq 2 ]; tap_ok $? "--json lists the same two changes"
"$M" contract diff "$H/contract-a.json" "$H/contract-a.json" > "$tmp/out" 2>&1
ok "a contract against itself: no differences" has "$tmp/out" "^no differences$"

sed 's/^{/{"run":{"stage":"contract","candidate":"baseline"},/' "$H/contract-a.json" > "$tmp/run.json"
"$M" contract diff "$H/contract-a.json" "$tmp/run.json" > "$tmp/out" 2>&1
ok "only the run annotation differs: the diff says so" \
    has "$tmp/out" "the compared sections are equal; the digests differ in the annotations"
ok "... and lists it" has "$tmp/out" '^run\.stage: \(absent\) → "contract"$'

sed 's/^{/{"profiling":5,/' "$H/contract-a.json" > "$tmp/bad.json"
"$M" contract diff "$H/contract-a.json" "$tmp/bad.json" > "$tmp/out" 2>&1
[ $? -eq 2 ] && has "$tmp/out" "bad.json: contract section 'profiling' is not an object"
tap_ok $? "a section that is not an object is refused, naming file and section"
tap_done
