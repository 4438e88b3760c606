#!/bin/bash
# Errors that say what to do (issue 23): a missing -o or STUDY is named
# first, an empty -o is refused before anything is written, a build that
# cannot find its templates names --templates and MOEFLOW_TEMPLATE_DIR, a
# refused argument is not answered with "did you mean" the same option,
# and topo's --help describes --mode.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN S=$MOEFLOW_SRCDIR
study=$S/etc/studies/tiny-moe-2gpu.yaml
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
tap_plan 8

"$M" gen "$study" > "$T/o.out" 2> "$T/o.err"
ok "gen without -o exits 1 and says -o DIR is missing, first" \
    sh -c "test $? = 1 && head -1 '$T/o.err' | grep -q '^moeflow gen: missing -o DIR, the study directory to create'"
"$M" gen -o "$T/x" > /dev/null 2> "$T/s.err"
ok "gen without a STUDY says so" has "$T/s.err" '^moeflow gen: missing STUDY'
(cd "$T" && "$M" gen "$study" -o '') > /dev/null 2> "$T/e.err"
ok "gen -o '' is refused by name, and nothing is left beside it" \
    sh -c "grep -q \"^moeflow gen: -o '': the directory to create needs a name\" '$T/e.err' &&
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
