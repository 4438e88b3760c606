#!/bin/bash
# tests/summary.sh names every failure, with the diagnostics its test
# printed, right above the closing "N passed, N failed": CI shows only the
# end of the run, and a failure hidden in the middle once cost a whole
# submission to find.  The results are written by automake's own TAP driver
# (build-aux/tap-driver.sh), as make check writes them.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
tap_plan 7

mkdir -p "$out/_build/tests/cli"
touch "$out/_build/config.status"
cat > "$out/failing.sh" <<'T'
echo 1..3
echo "ok 1 - the first point holds"
echo "# the second point read 41 where 42 was expected"
echo "not ok 2 - the answer is 42"
echo "# and its log lies in /tmp/x"
echo "ok 3 - the third point holds"
exit 1
T
cat > "$out/passing.sh" <<'T'
echo 1..1
echo "ok 1 - all good"
T
for t in failing passing; do
    sh "$MOEFLOW_SRCDIR/build-aux/tap-driver.sh" --test-name "tests/cli/$t.sh" \
        --log-file "$out/_build/tests/cli/$t.log" --trs-file "$out/_build/tests/cli/$t.trs" \
        --color-tests no --enable-hard-errors yes --expect-failure no -- \
        sh "$out/$t.sh" > /dev/null 2>&1
done

sh "$MOEFLOW_SRCDIR/tests/summary.sh" "$out" > "$out/summary" 2>&1
rc=$?
diag < "$out/summary"
tap_ok "$([ $rc = 1 ]; echo $?)" "a failure makes the summary exit 1 (got $rc)"
ok "the last line counts the failing point and the script's status" \
    test "$(tail -n 1 "$out/summary")" = "3 passed, 2 failed"
ok "the failing point is named with its build folder" \
    has "$out/summary" '^failed in _build: FAIL: tests/cli/failing.sh 2 - the answer is 42$'
ok "... with the diagnostic printed before it" \
    has "$out/summary" '^    # the second point read 41 where 42 was expected$'
ok "... and the one printed after it" has "$out/summary" '^    # and its log lies in /tmp/x$'
ok "the script's exit status is named too" \
    has "$out/summary" '^failed in _build: ERROR: tests/cli/failing.sh - exited with status 1$'
ok "a passing test is not named" hasnt "$out/summary" 'passing\.sh'
