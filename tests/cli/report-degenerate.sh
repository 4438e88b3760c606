#!/bin/bash
# moeflow report on logs whose numbers are degenerate: step times of 0 and
# of 5e-324 ms (a denormal).  Before the fix the SVG axis stepped a double
# by ymax/5, which underflows to 0, and wrote ticks for ever (100 MB in 5 s,
# until the disk was full); now both are outside a step's physical range
# (megatron_log.c, STEP_MS) and never reach the axis.  Numbers are read strictly: corrupt or
# impossible ones and truncated lines are warnings with file and line.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
tap_plan 11
tmp=$(mktemp -d /tmp/mfrd.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

timeout 30 "$M" report --window 2-3 -o "$tmp/tiny" \
    "$MOEFLOW_SRCDIR/tests/data/hardening/denormal-step-time.log" > "$tmp/out" 2>&1
tap_ok $(( $? != 2 )) "a 5e-324 ms step time is below a step's physical range: refused (exit 2), in time"
ok "... with the range it is outside of" \
    has "$tmp/out" "denormal-step-time.log:2: iteration 2: .* is impossible \\(a step takes from 1e-3 ms"
sed 's/5e-324/0.0/' "$MOEFLOW_SRCDIR/tests/data/hardening/denormal-step-time.log" > "$tmp/zero.log"
timeout 30 "$M" report --window 2-3 -o "$tmp/zero" "$tmp/zero.log" > "$tmp/out" 2>&1
tap_ok $(( $? != 2 )) "a 0 ms step time is impossible: report refuses the run (exit 2), in time"
ok "... with a warning naming file, line and field" \
    has "$tmp/out" "zero.log:2: iteration 2: 'elapsed time per iteration \\(ms\\): 0' is impossible"
ok "... and says why the window is empty" \
    has "$tmp/out" "window 2-3: 2 iterations logged inside it, none with a usable step time"

# The corrupt numbers of issue 13, one per line of a real log excerpt.
src=$MOEFLOW_SRCDIR/tests/data/logs/mixtral8x7b-16xH100-issue756.log
grep 'iteration ' "$src" > "$tmp/good.log"
sed -n 1p "$tmp/good.log" > "$tmp/bad.log"
sed -n 2p "$tmp/good.log" | sed 's/(ms): [0-9.]*/(ms): 1e/' >> "$tmp/bad.log"
sed -n 3p "$tmp/good.log" | sed 's/(ms): [0-9.]*/(ms): abc/' >> "$tmp/bad.log"
"$M" report --window 44-45 "$tmp/bad.log" > "$tmp/out" 2>&1
tap_ok $(( $? != 2 )) "'(ms): 1e' and '(ms): abc' are not read as numbers: the window is empty"
ok "... 1e is named with its line" has "$tmp/out" "bad.log:2: iteration 44: 'elapsed time per iteration \\(ms\\): 1e' is not a number"
ok "... abc too" has "$tmp/out" "bad.log:3: iteration 45: 'elapsed time per iteration \\(ms\\): abc' is not a number"
sed -n 3p "$tmp/good.log" | cut -c1-150 > "$tmp/cut.log"
sed -n 1,2p "$tmp/good.log" | cat - "$tmp/cut.log" > "$tmp/trunc.log"
"$M" report --window 44-45 "$tmp/trunc.log" > "$tmp/out" 2>&1
tap_ok $? "a truncated last line: the report still runs"
ok "... and warns with the line number" has "$tmp/out" "trunc.log:3: iteration 45: the line ends early"
"$M" report --window 44-45 "$tmp/good.log" > "$tmp/out" 2>&1
ok "the intact lines give no warning" hasnt "$tmp/out" "warning"
tap_done
