#!/bin/bash
# Every moeflow command under valgrind on the example studies, the real
# logs and the real traces: no invalid read or write, no use of
# uninitialised memory, no definite leak.  Skipped where valgrind is absent
# or the binary carries ASan (the sanitizer build runs the same commands in
# the other CLI tests).
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
command -v valgrind >/dev/null || skip_all "valgrind is not installed (build-aux/install-deps.sh)"
grep -q __asan_init "$MOEFLOW_BIN" && skip_all "moeflow is built with ASan"
M=$MOEFLOW_BIN
D=$MOEFLOW_SRCDIR/tests/data
tmp=$(mktemp -d /tmp/mfvg.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

tap_plan 14
n=0
vg() {  # vg DESCRIPTION ARGS...: runs moeflow ARGS under memcheck
    local desc=$1; shift
    n=$((n + 1))
    valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        --show-leak-kinds=definite --log-file="$tmp/vg.$n" "$M" "$@" > "$tmp/out.$n" 2>&1
    local rc=$?
    if [ $rc -eq 99 ] || [ -s "$tmp/vg.$n" ]; then
        diag < "$tmp/vg.$n"
        tap_ok 1 "$desc: valgrind reports errors"
    else
        tap_ok 0 "$desc (exit $rc, valgrind clean)"
    fi
}

for s in tiny-moe-2gpu qwen3-30b-a3b-16xh100 deepseek-v3-1024xh100; do
    vg "gen $s" gen "$MOEFLOW_SRCDIR/etc/studies/$s.yaml" -o "$tmp/$s" \
        --templates "$MOEFLOW_SRCDIR/templates"
done
vg "gen on a bad study" gen "$D/study/bad/ep-divides.yaml" -o "$tmp/bad" \
    --templates "$MOEFLOW_SRCDIR/templates"
# Issue 21: load_study freed the uninitialised json pointer of a study
# that could not be read.
vg "fit on a study that does not exist" fit /nonexistent
vg "fit qwen3-30b-a3b" fit --preset qwen3-30b-a3b --gpus 16 --seq 4096 --mbs 1 --gbs 512 --ep 8
vg "layouts qwen3-30b-a3b" layouts --preset qwen3-30b-a3b --gpus 16 --seq 4096 --mbs 1 \
    --gbs 512 --top 5
vg "report on the real H200 log" report -o "$tmp/rep" --window 41-50 \
    "$D/logs/h200x2-moe-ep2-alltoall-60it.log"
vg "report on the 2024 Mixtral log" report --window 43-44 "$D/logs/mixtral8x7b-16xH100-issue756.log"
vg "report on Bridge memory lines" report --json "$D/logs/bridge-memory-lines.log"
vg "overlap on the real Kineto traces" overlap "$D/traces/real-a2a-gemm-2xh200-rank0.json.gz" \
    "$D/traces/real-a2a-gemm-2xh200-rank1.json.gz"
vg "overlap --json to a file" overlap --json "$D/traces/synthetic-2gpu.json"
"$M" overlap --json "$D/traces/real-a2a-gemm-2xh200-rank0.json.gz" > "$tmp/ov.json" 2>/dev/null
vg "diagnose the real report" diagnose "$tmp/rep" "$tmp/ov.json"
vg "contract diff of two real contract files" contract diff \
    "$MOEFLOW_SRCDIR/tests/fuzz/corpus/contract/baseline.json" \
    "$MOEFLOW_SRCDIR/tests/fuzz/corpus/contract/baseline-pretty.json"
tap_done
