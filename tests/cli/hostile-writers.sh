#!/bin/bash
# Issue 21: output files never follow symlinks.  Each file a command writes
# where the user asked (report -o, place --hostfile) is built beside its
# name and renamed over it: a symlink planted there is replaced, its target
# untouched.  `ln -s ../victim.txt out/report.json; moeflow report -o out
# base.log` overwrote victim.txt.  (gen --winners: tests/cli/winners-seal.sh;
# the contract store: tests/cli/contract-store.sh.)
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
tap_plan 9
tmp=$(mktemp -d /tmp/mfhw.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
log=$MOEFLOW_SRCDIR/tests/data/hardening/base.log

mkdir "$tmp/out"
for f in report.json report.md step-time.svg; do
    echo "victim $f" > "$tmp/victim-$f"
    ln -s "../victim-$f" "$tmp/out/$f"
done
"$M" report -o "$tmp/out" "$log" > "$tmp/stdout" 2>&1
tap_ok $? "report -o into a folder of planted symlinks succeeds"
for f in report.json report.md step-time.svg; do
    [ "$(cat "$tmp/victim-$f")" = "victim $f" ] && [ -f "$tmp/out/$f" ] && [ ! -L "$tmp/out/$f" ]
    tap_ok $? "... $f replaced the link; its target is untouched"
done
grep -q "\"step_ms_median\": 100.0" "$tmp/out/report.json" && grep -q '<svg' "$tmp/out/step-time.svg"
tap_ok $? "... and the new files hold the report"
[ -z "$(find "$tmp/out" -name '.*' -type f)" ]; tap_ok $? "... no temporary file is left behind"

echo victim > "$tmp/victim-hosts"
ln -s victim-hosts "$tmp/hosts"
"$M" place --nodelist 'n[1-2]' --gpus-per-node 2 --layout tp=2 --hostfile "$tmp/hosts" > "$tmp/stdout" 2>&1
tap_ok $? "place --hostfile onto a planted symlink succeeds"
[ "$(cat "$tmp/victim-hosts")" = victim ] && [ ! -L "$tmp/hosts" ] && [ "$(wc -l < "$tmp/hosts")" -eq 4 ]
tap_ok $? "... the link is replaced by the 4-line hostfile; its target is untouched"
mkdir "$tmp/hostdir"
"$M" place --nodelist 'n[1-2]' --gpus-per-node 2 --layout tp=2 --hostfile "$tmp/hostdir" > "$tmp/stdout" 2>&1
[ $? -ne 0 ] && [ -d "$tmp/hostdir" ]; tap_ok $? "a directory in the hostfile's place is an error, left as it is"
tap_done
