#!/bin/bash
# moeflow report on logs whose numbers are legal but degenerate: step times
# of 0 and of 5e-324 ms (a denormal).  Before the fix the SVG axis stepped a
# double by ymax/5, which underflows to 0, and wrote ticks for ever (100 MB
# in 5 s, until the disk was full).
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
tap_plan 4
tmp=$(mktemp -d /tmp/mfrd.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

timeout 30 $M report --window 2-3 -o "$tmp/tiny" \
    "$MOEFLOW_SRCDIR/tests/data/hardening/denormal-step-time.log" > "$tmp/out" 2>&1
tap_ok $? "a 5e-324 ms step time: report finishes"
size=$(stat -c %s "$tmp/tiny/step-time.svg" 2>/dev/null || echo 0)
[ "$size" -gt 0 ] && [ "$size" -lt 65536 ]; tap_ok $? "its SVG is small ($size bytes)"
sed 's/5e-324/0.0/' "$MOEFLOW_SRCDIR/tests/data/hardening/denormal-step-time.log" > "$tmp/zero.log"
timeout 30 $M report --window 2-3 -o "$tmp/zero" "$tmp/zero.log" > "$tmp/out" 2>&1
tap_ok $? "a 0 ms step time: report finishes"
size=$(stat -c %s "$tmp/zero/step-time.svg" 2>/dev/null || echo 0)
[ "$size" -gt 0 ] && [ "$size" -lt 65536 ]; tap_ok $? "its SVG is small ($size bytes)"
tap_done
