#!/bin/bash
# The prediction register (issue 42): tests/calibration/register.tsv says,
# for every row the step-time and memory models are checked against, which
# commit pre-registered its prediction and with what value, which commit
# measured it, how it ran (GPU alone or shared, dialect, call) and which
# fit has used it since.  Every accuracy figure the project prints (man
# ACCURACY, NEWS, every README.md under tests/gpu/, `moeflow fit`'s
# confidence line) is rendered from it and the committed GPU data by
# tests/calibration/figures.py (claims.tsv); a figure typed by hand that is
# neither a claim nor on figures-allowed.tsv fails.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
tap_plan 4
cal=$MOEFLOW_SRCDIR/tests/calibration
python3 "$cal/check-register.py" rows "$MOEFLOW_SRCDIR" 2>&1 | sed 's/^/# /'
tap_ok "${PIPESTATUS[0]}" "every row of the calibration table is in the register, its class the table's use, a fitted row calibration, no shared-GPU step time fitted"
# Without git history (a release tarball) the commits cannot be checked.
if git -C "$MOEFLOW_SRCDIR" rev-parse --git-dir > /dev/null 2>&1 &&
        ! git -C "$MOEFLOW_SRCDIR" rev-parse --is-shallow-repository 2>/dev/null | grep -q true; then
    python3 "$cal/check-register.py" history "$MOEFLOW_SRCDIR" 2>&1 | sed 's/^/# /'
    tap_ok "${PIPESTATUS[0]}" "each pre-registered prediction is in its commit's message, and that commit precedes its measurement"
else
    tap_skip "each pre-registered prediction precedes its measurement in git history" "no git history"
fi
fit_out="${TMPDIR:-/tmp}/accuracy-register.$$"
"$MOEFLOW_BIN" fit --preset qwen3-30b-a3b --gpus 16 --seq 4096 --mbs 1 --gbs 256 --ep 8 > "$fit_out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
tap_ok $? "moeflow fit prints (exit $rc)"
python3 "$cal/check-register.py" claims "$MOEFLOW_SRCDIR" "$fit_out" 2>&1 | sed 's/^/# /'
tap_ok "${PIPESTATUS[0]}" "every accuracy figure in man ACCURACY, NEWS, every README under tests/gpu/ and fit's confidence line is derived from the register"
rm -f "$fit_out"
