#!/bin/bash
# Rule 4 of lib/README.md: every reader is bounded in time as well as
# memory, linear in its input.  For each reader (Megatron log, Kineto JSON,
# gzip, nsys SQLite) inputs of the hostile shapes of issue 38 are generated
# at growing sizes, and the time is checked against the reader's own time
# on a benign input, not against the clock: the machine is shared and the
# sanitizer build is ten times slower.
#   - growth: 4 times the input costs at most 8 times the time (linear is
#     4; the quadratic paths of issue 38 gave 16);
#   - amplification: a hostile input costs at most 20 times a benign one of
#     the same size (a 1.6 MB nsys export whose kernels all name one 1 MiB
#     string cost 2,000 times its size in work).
# Each case also runs under a 60 s timeout: a hang is a failure, not a
# stall of the suite.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
tap_plan 14
tmp=$(mktemp -d /tmp/mfrb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# secs SUBCOMMAND FILE: the wall time of moeflow SUBCOMMAND FILE in seconds
# (its output discarded); 99 when it ran past the timeout.
secs() {
    local t0 t1
    t0=$(date +%s.%N)
    timeout 60 "$M" "$@" > /dev/null 2>&1
    [ $? = 124 ] && { echo 99; return; }
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}
# within A B FACTOR: A <= FACTOR * B + 0.5 s (the slack covers start-up).
within() { [ "$(echo "$1 <= $3 * $2 + 0.5" | bc -l)" = 1 ]; }
# growth NAME GEN SUBCOMMAND: GEN SIZE writes in.SIZE; times the reader on
# 256 KiB and 1 MiB.
growth() {
    local name=$1 gen=$2 cmd=$3 a b
    $gen 262144 && $gen 1048576 || return 1
    a=$(secs $cmd in.262144)
    b=$(secs $cmd in.1048576)
    echo "$name: 256 KiB ${a}s, 1 MiB ${b}s" | diag
    within "$b" "$a" 8
}
# amplified NAME HOSTILE BENIGN SUBCOMMAND: both files, about the same size.
amplified() {
    local name=$1 h b
    h=$(secs $4 "$2")
    b=$(secs $4 "$3")
    echo "$name: hostile ${h}s, benign ${b}s ($(stat -c %s "$2") and $(stat -c %s "$3") bytes)" | diag
    within "$h" "$b" 20
}

REC=' iteration        1/      60 | elapsed time per iteration (ms): 1000.0 | lm loss: 7.0E+00 | number of skipped iterations:   0 | number of nan iterations:   0 |'
# Issue 38 D05: records glued on one line (each field searched to the
# line's end was quadratic).
glued() { python3 -c "import sys; r='iteration 1/1 '; n=int(sys.argv[1]); open('in.%d' % n, 'w').write((r * (n // len(r)))[:n - 1] + '\n')" "$1"; }
mem_glued() { python3 -c "import sys; r='[Rank 0] (after 1 '; n=int(sys.argv[1]); open('in.%d' % n, 'w').write((r * (n // len(r)))[:n - 1] + '\n')" "$1"; }
# D14: every iteration many times (a log appended to by requeued jobs).
repeats() { python3 -c "import sys; n=int(sys.argv[1]); r=sys.argv[2] + '\n'; open('in.%d' % n, 'w').write((r * (n // len(r) + 1))[:n])" "$1" "$REC"; }
ok "log: glued iteration records grow linearly" growth glued-records glued report
ok "log: glued memory records grow linearly" growth glued-memory mem_glued report
ok "log: one iteration logged many times grows linearly" growth repeats repeats report
python3 -c "
import sys
r = sys.argv[1] + '\n'
open('benign.log', 'w').write(''.join(r.replace('1/', '%d/' % i, 1) for i in range(1, 1048576 // len(r))))" "$REC"
glued 1048576
ok "log: a 1 MiB line of glued records costs about what 1 MiB of real lines does" \
    amplified glued-records in.1048576 benign.log report

# Kineto: '{},' events (3 bytes each) plain, and gzipped.
EV='{"ph":"X","cat":"kernel","name":"gemm","ts":10,"dur":10,"args":{"device":0}}'
empties() { python3 -c "import sys; n=int(sys.argv[1]); open('in.%d' % n, 'w').write('{\"traceEvents\":[' + sys.argv[2] + ',' + '{},' * (n // 3 - 30) + sys.argv[2] + ']}')" "$1" "$EV"; }
ok "kineto: tiny events grow linearly" growth kineto-empties empties overlap
python3 -c "
import sys
ev = sys.argv[1]
open('benign.json', 'w').write('{\"traceEvents\":[' + ','.join([ev] * (1048576 // len(ev))) + ']}')" "$EV"
ok "kineto: 1 MiB of tiny events costs about what 1 MiB of kernels does" \
    amplified kineto-empties in.1048576 benign.json overlap
# D07: the gzip of N bytes unpacking 1000:1; refused at the ratio.
bomb() { python3 -c "import sys, gzip; n=int(sys.argv[1]); open('in.%d' % n, 'wb').write(gzip.compress(b'{\"traceEvents\":[' + b'{},' * (n * 1000 // 3) + b'{}]}', 9))" "$(( $1 / 64 ))" && mv "in.$(( $1 / 64 ))" "in.$1"; }
bomb 1048576
ok "gzip: a bomb is refused" sh -c "! '$M' overlap in.1048576 2> err && grep -q 'unpacks to more than 32 times its size' err"
ok "gzip: bombs grow linearly" growth gzip-bomb bomb overlap
gzip -9 -c benign.json > benign.json.gz
ok "gzip: a bomb costs about what a real trace of its size does" amplified gzip-bomb in.1048576 benign.json.gz overlap
# D13: what follows the trace is refused, with the byte offset.
{ cat benign.json; cat benign.json; } > two.json
"$M" overlap two.json > /dev/null 2> err
ok "kineto: a second trace after the first is refused, naming the offset" \
    has err "two.json: byte [0-9]+: more follows the end of the trace"

# nsys: kernels naming StringIds ids holding ~1 MiB (D06), at sparse ids
# and dense ones, and NVTX markers naming one through textId.
nsys() {
    python3 - "$@" <<'PY'
import sqlite3, sys
name, kernels, big, sid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
db = sqlite3.connect(name)
db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, shortName INTEGER, demangledName INTEGER)")
db.execute("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, text TEXT, textId INTEGER)")
db.execute("INSERT INTO StringIds VALUES (?,?)", (sid, 'ncclDevKernel_' + 'A' * big))
db.execute("INSERT INTO StringIds VALUES (1,'gemm')")
db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?)",
               [(1000 + i * 10, 1005 + i * 10, 0, sid if i % 2 else 1, sid if i % 2 else 1) for i in range(kernels)])
db.executemany("INSERT INTO NVTX_EVENTS VALUES (?,?,NULL,?)", [(1000 + i * 10, 1005 + i * 10, sid) for i in range(kernels)])
db.commit()
PY
}
nsys big-sparse.sqlite 5000 1000000 1099511627776
nsys big-dense.sqlite 5000 1000000 7
nsys benign.sqlite 20000 20 1099511627776
ok "nsys: kernels and markers naming a 1 MiB string at a sparse id cost about what a benign export does" \
    amplified nsys-sparse big-sparse.sqlite benign.sqlite overlap
ok "nsys: ... at a dense id too" amplified nsys-dense big-dense.sqlite benign.sqlite overlap
# D24: rowids at INT64_MAX and spanning INT64_MIN..0 (signed overflow).
python3 - <<'PY'
import sqlite3
for name, rows in (('max.sqlite', (9223372036854775807, 1)), ('span.sqlite', (-9223372036854775808, 0))):
    db = sqlite3.connect(name)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, shortName INTEGER, demangledName INTEGER)")
    db.execute("INSERT INTO StringIds VALUES (1,'gemm'),(2,'ncclKernel')")
    for r, s, e, n in ((rows[0], 1000, 6000, 1), (rows[1], 2000, 4000, 2)):
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(rowid,start,end,deviceId,shortName,demangledName) VALUES (?,?,?,0,?,?)", (r, s, e, n, n))
    db.commit()
PY
"$M" overlap --json max.sqlite > max.out 2>&1
ok "nsys: rowids reaching INT64_MAX are read (no overflow)" has max.out '"comm_ns": *2000[,}]'
"$M" overlap --json span.sqlite > span.out 2>&1
ok "nsys: rowids spanning INT64_MIN..0 are read (no overflow)" has span.out '"comm_ns": *2000[,}]'
tap_done
