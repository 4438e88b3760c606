#!/bin/bash
# Errors that say what to do (issue 23): a missing -o or STUDY is named
# first, an empty -o is refused before anything is written, a build that
# cannot find its templates names --templates and MOEFLOW_TEMPLATE_DIR, a
# refused argument is not answered with "did you mean" the same option,
# topo's --help describes --mode, and a report of one run calls it neither
# a baseline nor a window inside a window.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN S=$MOEFLOW_SRCDIR
study=$S/etc/studies/tiny-moe-2gpu.yaml
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
tap_plan 10

"$M" gen "$study" > "$T/o.out" 2> "$T/o.err"
ok "gen without -o exits 1 and says -o DIR is missing, first" \
    sh -c "test $? = 1 && head -1 '$T/o.err' | grep -q '^moeflow gen: missing -o DIR, the study directory to create'"
"$M" gen -o "$T/x" > /dev/null 2> "$T/s.err"
ok "gen without a STUDY says so" has "$T/s.err" '^moeflow gen: missing STUDY'
(cd "$T" && "$M" gen "$study" -o '') > /dev/null 2> "$T/e.err"
ok "gen -o '' is refused by name, and nothing is left beside it" \
    sh -c "grep -q '^moeflow: -o: an empty path names no folder' '$T/e.err' &&
           test -z \"\$(ls -A '$T' | grep tmp)\""
cp "$M" "$T/moeflow-moved"
env -u MOEFLOW_TEMPLATE_DIR "$T/moeflow-moved" gen "$study" -o "$T/moved" > /dev/null 2> "$T/t.err"
ok "a moved build without templates names --templates and MOEFLOW_TEMPLATE_DIR" \
    sh -c "grep -q -- '--templates DIR' '$T/t.err' && grep -q MOEFLOW_TEMPLATE_DIR '$T/t.err' &&
           test ! -e '$T/moved'"
MOEFLOW_TEMPLATE_DIR=$S/templates "$T/moeflow-moved" gen "$study" -o "$T/moved2" > /dev/null 2>&1
ok "... and runs with MOEFLOW_TEMPLATE_DIR" test -f "$T/moved2/submit.sh"
"$M" fit --pipeline-layout=STR > /dev/null 2> "$T/f.err"
ok "fit --pipeline-layout=STR: getopt's reason, no 'did you mean --pipeline-layout?'" \
    sh -c "grep -q \"doesn't allow an argument\" '$T/f.err' && ! grep -q 'did you mean' '$T/f.err'"
"$M" fit --jsn > /dev/null 2> "$T/j.err"
ok "... while a misspelt option still gets its suggestion" has "$T/j.err" 'did you mean --json\?'
"$M" topo --help > "$T/topo.help"
ok "topo --help describes --mode" has "$T/topo.help" '^  --mode MODE +how tasks share the cores'
"$M" report "$S/tests/data/logs/h200x2-moe-ep2-alltoall-60it.log" > "$T/one.out" 2>&1
ok "report of one run that is no baseline does not label it baseline" \
    sh -c "grep -q ' - (one run)$' '$T/one.out' && ! grep -q ' baseline$' '$T/one.out'"
S2=$T/study && "$M" gen "$study" -o "$S2" > /dev/null 2>&1 && mkdir -p "$S2/results/validate"
printf ' iteration       %d/      50 | elapsed time per iteration (ms): 1000.0 | lm loss: 1.0E+00 |\n' \
    $(seq 1 50) > "$S2/results/validate/$(awk -F'\t' '$1 == "validate" {print $3}' "$S2/candidates.tsv").log"
"$M" report "$S2" > "$T/study.out" 2>&1
ok "a study's report header names its window once, without nested brackets" \
    has "$T/study.out" "^study tiny-moe-2gpu, stage validate: 0 candidates; window 41-50 \\(the study's report_window\\); "
