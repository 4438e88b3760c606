#!/bin/sh
# Runs one libFuzzer target from a build configured with
#   ../configure CC=clang --enable-fuzzing
# over a scratch copy of its committed corpus, and appends libFuzzer's final
# statistics to fuzz-NAME.log.  New crash inputs land in
# fuzz-NAME-artifacts/; minimise one with -minimize_crash=1, then commit it
# under tests/fuzz/regressions/NAME/ together with the fix.
#
#   tests/fuzz/run.sh NAME [SECONDS]      (run from the build directory)
set -u
name=${1:?usage: run.sh NAME [SECONDS]}
secs=${2:-600}
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=tests/fuzz/fuzz_$name
[ -x "$bin" ] || { echo "run.sh: $bin not built (configure CC=clang --enable-fuzzing; make $bin)" >&2; exit 1; }
work=fuzz-$name-corpus
mkdir -p "$work" "fuzz-$name-artifacts"
cp -n "$src/tests/fuzz/corpus/$name"/* "$work"/ 2>/dev/null
[ -d "$src/tests/fuzz/regressions/$name" ] && cp -n "$src/tests/fuzz/regressions/$name"/* "$work"/ 2>/dev/null
# Rule 4 of lib/README.md: a reader is linear in its input.  An input of at
# most 16 kB that keeps one unit busy for $slow seconds (FUZZ_SLOW_UNIT,
# default 5: a linear reader takes milliseconds) is a finding, written to the
# artifacts as timeout-*, like a crash: quadratic paths are found this way.
slow=${FUZZ_SLOW_UNIT:-5}
# Scratch files of the harnesses go to a private directory.
TMPDIR=$(mktemp -d) && export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
nice -n 19 "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=16384 -timeout="$slow" \
    -report_slow_units="$slow" \
    -print_final_stats=1 -artifact_prefix="fuzz-$name-artifacts/" "$work" > "fuzz-$name.log" 2>&1
