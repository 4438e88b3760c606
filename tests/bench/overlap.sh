#!/bin/sh
# make bench: moeflow overlap on a synthetic nsys export of
# MOEFLOW_BENCH_KERNELS kernels (default 10 million) on 8 GPUs, against
# (a) a pandas reference (target: moeflow >= 20x faster) and (b) the floor
# of merely reading the same rows with the sqlite3 CLI (target: <= 2x).
# Each timing is the median of MOEFLOW_BENCH_REPS runs (default 3); the
# results of moeflow and pandas must agree to the nanosecond.
set -eu
N=${MOEFLOW_BENCH_KERNELS:-10000000}
REPS=${MOEFLOW_BENCH_REPS:-3}
DIR=${MOEFLOW_BENCH_DIR:-${TMPDIR:-/tmp}}
B=${MOEFLOW_BUILDDIR:-.}
S=${MOEFLOW_SRCDIR:-.}
# Debian's python3-pandas belongs to the system interpreter.
PY=${MOEFLOW_PYTHON:-/usr/bin/python3}
DB="$DIR/moeflow-bench-overlap-$N.sqlite"
OUT="$DIR/moeflow-bench-overlap-$$"
mkdir -p "$OUT"
trap 'rm -rf "$OUT"; [ -n "${MOEFLOW_BENCH_KEEP:-}" ] || rm -f "$DB"' EXIT

# exit 77: make bench lists it as skipped, with the reason
command -v sqlite3 >/dev/null || { echo "overlap bench: SKIP: sqlite3 CLI missing (apt-get install sqlite3)"; exit 77; }
"$PY" -c 'import pandas' 2>/dev/null || { echo "overlap bench: SKIP: python3-pandas missing (apt-get install python3-pandas)"; exit 77; }

now() { date +%s.%N; }
# time_median LABEL CMD...: runs CMD REPS times, stdout to $OUT/LABEL.out; prints the median seconds.
time_median() {
    label=$1; shift
    : > "$OUT/$label.times"
    i=0
    while [ $i -lt "$REPS" ]; do
        t0=$(now); "$@" > "$OUT/$label.out"; t1=$(now)
        echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >> "$OUT/$label.times"
        i=$((i + 1))
    done
    sort -n "$OUT/$label.times" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

if [ ! -s "$DB" ]; then
    echo "generating $N kernels on 8 GPUs into $DB ..."
    t0=$(now); "$B/tests/bench/overlap_gen" "$DB" "$N"; t1=$(now)
    echo "$t0 $t1" | awk '{ printf "  generated in %.1f s\n", $2 - $1 }'
fi

floor=$(time_median sqlite3 sqlite3 -readonly "$DB" \
    "SELECT start, end, deviceId, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL;")
mf=$(time_median moeflow "$B/gen/moeflow" overlap --json "$DB")
pd=$(time_median pandas "$PY" "$S/tests/bench/overlap_ref.py" "$DB")

# Same answers: per GPU comm, compute, hidden, exposed, busy.
"$PY" - "$OUT/moeflow.out" "$OUT/pandas.out" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
keys = ("comm_ns", "compute_ns", "hidden_ns", "exposed_ns", "busy_ns")
for g in m["gpus"]:
    ref = p[str(g["device"])]
    bad = [k for k in keys if g[k] != ref[k]]
    if bad:
        sys.exit("overlap bench: moeflow and pandas disagree on GPU %d: %s" % (g["device"], bad))
t = m["total"]
print("  results agree on all %d GPUs: total comm %.3f s, hidden %.2f%%, exposed %.3f s"
      % (len(m["gpus"]), t["comm_ns"] / 1e9, t["hidden_pct"], t["exposed_ns"] / 1e9))
PY

awk -v n="$N" -v r="$REPS" -v f="$floor" -v m="$mf" -v p="$pd" 'BEGIN {
    printf "overlap, %d kernels on 8 GPUs, median of %d runs:\n", n, r
    printf "  sqlite3 CLI read floor  %8.3f s\n", f
    printf "  moeflow overlap         %8.3f s   %.2fx the floor (target <= 2x)  %s\n", m, m / f, (m / f <= 2) ? "ok" : "MISSED"
    printf "  pandas reference        %8.3f s   moeflow is %.1fx faster (target >= 20x)  %s\n", p, p / m, (p / m >= 20) ? "ok" : "MISSED"
    exit (m / f <= 2 && p / m >= 20) ? 0 : 1
}'
