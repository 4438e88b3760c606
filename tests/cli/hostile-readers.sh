#!/bin/bash
# Issue 21, hostile input given to the commands that read files: a FIFO or
# a device in place of a log, trace, hwloc XML or NVLink map is refused at
# once (report and topo --xml hung on a FIFO and grew to the memory limit on
# /dev/zero), a gzip bomb and a deeply nested YAML are refused in seconds
# (4.2 GB and 2 minutes; 27 s).  The readers' own bounds are unit-tested in
# tests/unit/analysis/test_hostile_readers.c.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
tap_plan 24
tmp=$(mktemp -d /tmp/mfhr.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/f.log" "$tmp/f.xml" "$tmp/f.yaml" "$tmp/f.json"

# Address space capped at 2 GB, where the build allows it (a sanitizer
# build reserves terabytes of shadow memory and cannot start under a cap).
cap=2000000
(ulimit -v $cap && "$M" --version) > /dev/null 2>&1 || cap=unlimited

# refused CMD...: the command fails within 10 s (and not by the timeout),
# its message in $tmp/out.
refused() {
    (ulimit -v $cap; timeout 10 "$@") > "$tmp/out" 2>&1
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ]
}

ok "report FIFO: refused at once" refused "$M" report "$tmp/f.log"
ok "... it is not a regular file" has "$tmp/out" "f.log: log: not a regular file \(a FIFO\)"
ok "report /dev/zero: refused at once" refused "$M" report /dev/zero
ok "... as a device (not for want of memory)" has "$tmp/out" "/dev/zero: log: not a regular file \(a device\)"
mkdir "$tmp/run"
mkfifo "$tmp/run/rank0.log"
ok "report RUN_DIR with a FIFO as a rank's log: refused at once" refused "$M" report "$tmp/run"
ok "... naming it" has "$tmp/out" "run/rank0.log: log: not a regular file"
ok "overlap FIFO: refused at once" refused "$M" overlap "$tmp/f.json"
ok "... it is not a regular file" has "$tmp/out" "f.json: trace: not a regular file \(a FIFO\)"
ok "overlap /dev/zero: refused at once" refused "$M" overlap /dev/zero
ok "... as a device" has "$tmp/out" "/dev/zero: trace: not a regular file \(a device\)"
ok "topo --xml FIFO: refused at once" refused "$M" topo --xml "$tmp/f.xml"
ok "... it is not a regular file" has "$tmp/out" "f.xml: hwloc XML: not a regular file \(a FIFO\)"
ok "topo --xml /dev/zero: refused at once" refused "$M" topo --xml /dev/zero
ok "... as a device" has "$tmp/out" "/dev/zero: hwloc XML: not a regular file \(a device\)"
ok "place --topology FIFO: refused at once" \
    refused "$M" place --nodelist 'n[1-2]' --gpus-per-node 1 --layout tp=1 --topology "$tmp/f.yaml"
ok "... it is not a regular file" has "$tmp/out" "f.yaml: NVLink-domain map: not a regular file"

# A 3 MB gzip of one 3 GB JSON string: gzip members back to back unpack to
# their sum, so 3072 copies of a 1 MiB member make it without 3 GB of work.
head -c 1048576 /dev/zero | tr '\0' A | gzip -9 > "$tmp/m.gz"
for _ in $(seq 12); do cat "$tmp/m.gz" "$tmp/m.gz" > "$tmp/m2.gz" && mv "$tmp/m2.gz" "$tmp/m.gz"; done
{
    printf '{"traceEvents":[{"ph":"X","name":"' | gzip
    head -c $(( $(stat -c %s "$tmp/m.gz") * 3 / 4 )) "$tmp/m.gz"
    printf '"}]}' | gzip
} > "$tmp/bomb.json.gz"
size=$(stat -c %s "$tmp/bomb.json.gz")
[ "$size" -lt 4000000 ]; tap_ok $? "the gzip of a 3 GB string is small ($size bytes)"
ok "overlap on it: refused in seconds, under 2 GB" refused "$M" overlap "$tmp/bomb.json.gz"
ok "... as a gzip bomb, by its unpacking ratio" has "$tmp/out" "bomb.json.gz: byte [0-9]+: the gzip unpacks to more than 32 times its size"

# 100,000 nested '[': a 200 kB study, and the same as an NVLink map.
{ printf 'name: x\nmodel: '; head -c 100000 /dev/zero | tr '\0' '['; echo; } > "$tmp/deep.yaml"
ok "gen on a study nested 100,000 deep: refused in seconds" refused "$M" gen "$tmp/deep.yaml" -o "$tmp/o"
ok "... naming file:line:column and the bound" has "$tmp/out" "deep.yaml:2:71: YAML: nested deeper than 64 levels"
{ printf 'domains: '; head -c 100000 /dev/zero | tr '\0' '['; echo; } > "$tmp/deep-map.yaml"
ok "place on an NVLink map nested 100,000 deep: refused in seconds" \
    refused "$M" place --nodelist 'n[1-2]' --gpus-per-node 1 --layout tp=1 --topology "$tmp/deep-map.yaml"
ok "... naming file:line:column" has "$tmp/out" "deep-map.yaml:1:73: YAML: nested deeper than 64 levels"

# A Megatron log whose argument dump never ends: the iterations after it
# are still read.
{
    echo '------------------------ arguments ------------------------'
    seq 1 20000 | sed 's/.*/  arg& ........................................ &/'
    grep 'iteration ' "$MOEFLOW_SRCDIR/tests/data/logs/mixtral8x7b-16xH100-issue756.log"
} > "$tmp/dump.log"
"$M" report --window 44-45 "$tmp/dump.log" > "$tmp/out" 2>&1
has "$tmp/out" "dump.log:8194: the argument dump has no 'end of arguments' line within 8192 lines" &&
    grep -qE '^dump.log +2 ' "$tmp/out"
tap_ok $? "an argument dump without its end: a warning, and the iterations after it are reported"
tap_done
