# shellcheck shell=sh
# TAP for the checks of the source (tests/lint/*.sh), which need no build
# and no cluster: tests/integration/lib.sh is the integration tests' fuller
# harness.  tap_ok RC DESCRIPTION counts a point; the script ends with
# [ "$TAP_FAILED" -eq 0 ].
TAP_N=0
TAP_FAILED=0
tap_ok() {
    TAP_N=$((TAP_N + 1))
    if [ "$1" -eq 0 ]; then echo "ok $TAP_N - $2"; else
        echo "not ok $TAP_N - $2"; TAP_FAILED=$((TAP_FAILED + 1)); fi
}
diag() { sed 's/^/# /'; }
