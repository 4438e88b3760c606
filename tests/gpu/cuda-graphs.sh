#!/bin/bash
# CUDA graphs under real Megatron on one GPU, recorded for issue 41: the
# scale baseline moeflow writes for cuda-graphs/graphs-1gpu.yaml, in core
# 0.19 and bridge-pin (core 0.16 trains no MoE without Transformer Engine:
# moeflow's rule moe_router_needs_te refuses it), without graphs and with Megatron's local graphs (attention
# only, whole layer, full iteration; dropless and drop-and-pad), each with a
# per-step memory probe (cuda-graphs/memwrap.py), and two of them under the
# PyTorch profiler.  What real Megatron logs about capture, what its traces
# show of graph launches, and what the graphs keep in memory come from these
# recordings, not from fake-megatron.  One run at a time: step times never
# share the GPU.
#
#   cuda-graphs.sh prepare BUILD_DIR   here: generate the studies into _work/graphs
#   cuda-graphs.sh run OUT_DIR [DIALECT...]  on the GPU machine: OUT_DIR/graphs-DIALECT.tar.gz
#                                      (the variants in $GRAPH_VARIANTS, if set)
#   cuda-graphs.sh collect ARCHIVE...  here, archives in the order they ran: tests/data/gpu/cuda-graphs-DIALECT.tar.xz
#                                      and cuda-graphs.tsv beside this script
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=$here/_work/graphs
DIALECTS="core-0.19 bridge-pin"
declare -A TARBALL=([core-0.19]=megatron-lm-core_v0.19.0 [bridge-pin]=megatron-lm-2a75ac12)
die() { echo "cuda-graphs: $*" >&2; exit 1; }
# shellcheck source=tests/gpu/gpu-lock.sh
. "$here/gpu-lock.sh"

prepare() {
    local moeflow=$1/gen/moeflow d
    [ -x "$moeflow" ] || die "no $moeflow: build first"
    rm -rf "$work" && mkdir -p "$work/megatron"
    for d in $DIALECTS; do
        cp "$top/../shared/megatron/${TARBALL[$d]}.tar.xz" "$work/megatron/" ||
            die "no ../shared/megatron/${TARBALL[$d]}.tar.xz"
        sed "s/^  megatron: .*/  megatron: $d/" "$here/cuda-graphs/graphs-1gpu.yaml" > "$work/graphs-$d.yaml"
        "$moeflow" gen --templates "$top/templates" --stage scale "$work/graphs-$d.yaml" \
            -o "$work/$d" > /dev/null
    done
}

# run_variant DIR NAME ARGS...: one training run, its log and exit status.
run_variant() {
    local dir=$1 name=$2 rc=0
    shift 2
    mkdir -p "$dir/$name"
    ( cd "$dir/$name" && ln -sf "$dir/mlm/pretrain_gpt.py" . &&
      RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29517 \
      PYTHONPATH=$dir/mlm PYTHONUNBUFFERED=1 timeout 170 \
          python3 "$here/cuda-graphs/memwrap.py" "$@" ) > "$dir/$name/train.log" 2>&1 || rc=$?
    echo "$rc" > "$dir/$name/rc"
    echo "cuda-graphs: $(basename "$dir") $name: exit $rc"
}

run() {
    local out=$1 d dir name args
    shift
    gpu_timed_lock "cuda-graphs.sh run"
    # shellcheck disable=SC2086 # a list of words
    [ $# -gt 0 ] || set -- $DIALECTS
    mkdir -p "$out"
    export PATH=/opt/torch/.venv/bin:$PATH
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$work/gpus.csv" || true
    for d in "$@"; do
        dir=$work/$d
        mkdir -p "$dir/mlm"
        tar -xJf "$work/megatron/${TARBALL[$d]}.tar.xz" -C "$dir/mlm" --strip-components=1
        while IFS=$'\t' read -r name args; do
            # shellcheck disable=SC2086 # the arguments are moeflow's, one word each
            run_variant "$dir" "$name" $args
            # after every run, so that a call cut short keeps what finished
            tar -C "$dir" --exclude=mlm --exclude=pretrain_gpt.py -czf "$out/graphs-$d.tar.gz" . \
                -C "$work" gpus.csv
        done < <(python3 "$here/cuda-graphs/variants.py" "$dir/manifest.json")
    done
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# dialect variant rc steps median_ms(11..30) peak alloc/reserved before and
# after capture (MiB, from the probe) and what the log says about graphs.
summarize() {
    local d=$1 dir=$2 v log
    # a failed run has no step lines: an empty grep is an answer here
    local -; set +o pipefail
    for v in "$dir"/*/; do
        v=${v%/}; log=$v/train.log
        [ -f "$log" ] || continue
        local steps ms pre post
        steps=$(grep -c 'elapsed time per iteration' "$log" || true)
        ms=$(grep -o 'iteration *[0-9]*/ *[0-9]* .*elapsed time per iteration (ms): [0-9.]*' "$log" |
             awk '{ split($0, a, "/"); it = a[1]; sub(/.*iteration */, "", it) }
                  it + 0 > 10 { sub(/.*\(ms\): /, ""); print }' | median)
        pre=$(awk '/^MOEFLOW_STEPMEM it=3 / { for (i = 2; i <= NF; i++) { split($i, kv, "="); m[kv[1]] = kv[2] }
                   printf "%.1f/%.1f", m["max_allocated"] / 1048576, m["max_reserved"] / 1048576 }' "$log")
        post=$(grep '^MOEFLOW_STEPMEM' "$log" | tail -n 1 |
               awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); m[kv[1]] = kv[2] }
                      printf "%.1f/%.1f", m["max_allocated"] / 1048576, m["max_reserved"] / 1048576 }')
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$d" "$(basename "$v")" "$(cat "$v/rc")" "$steps" \
            "${ms:--}" "${pre:--}" "${post:--}" \
            "$(grep -cE 'CUDA [Gg]raph|cuda graph|cudagraph' "$log" || true)"
    done
}

collect() {
    local archive d tmp tsv=$here/cuda-graphs.tsv
    printf 'dialect\tvariant\trc\tsteps\tmedian_ms_11_30\tpeak_mib_alloc_reserved_after_step3\tpeak_mib_alloc_reserved_end\tgraph_log_lines\n' > "$tsv"
    tmp=$(mktemp -d)
    # archives of one dialect in the order given: a later run of a variant
    # replaces an earlier one
    for archive in "$@"; do
        d=$(basename "$archive" .tar.gz); d=${d#graphs-}
        mkdir -p "$tmp/$d"
        tar -xzf "$archive" -C "$tmp/$d"
    done
    for d in "$tmp"/*/; do
        d=$(basename "$d")
        tar -C "$tmp/$d" -cJf "$top/tests/data/gpu/cuda-graphs-$d.tar.xz" .
        summarize "$d" "$tmp/$d" >> "$tsv"
    done
    rm -rf "$tmp"
    column -t -s $'\t' "$tsv"
}

# The lane (issue 41's acceptance): the scale baseline that today's moeflow
# gen writes for cuda-graphs/graphs-full-1gpu.yaml (a full-iteration graph,
# drop-and-pad), run as written - argv and env from manifest.json, no
# variant - under the memory probe, so that what the model predicts for the
# graph's pool (moeflow fit) meets what the allocator reserved across the
# capture in step 4.  lane-prepare writes a self-contained folder to carry
# to the GPU machine; lane-run runs there from inside it.
#
#   cuda-graphs.sh lane-prepare BUILD_DIR DIR   here: DIR holds the study, Megatron, this script
#   cuda-graphs.sh lane-run OUT_DIR             on the GPU machine, from DIR: OUT_DIR/graphs-lane.tar.gz
lane_prepare() {
    local moeflow=$1/gen/moeflow dir=$2
    [ -x "$moeflow" ] || die "no $moeflow: build first"
    rm -rf "$dir" && mkdir -p "$dir"
    cp "$top/../shared/megatron/${TARBALL[core-0.19]}.tar.xz" "$dir/" ||
        die "no ../shared/megatron/${TARBALL[core-0.19]}.tar.xz"
    cp "$here/cuda-graphs.sh" "$here/cuda-graphs/memwrap.py" "$dir/"
    "$moeflow" gen --templates "$top/templates" --stage scale \
        "$here/cuda-graphs/graphs-full-1gpu.yaml" -o "$dir/study" > /dev/null
    "$moeflow" fit --json "$here/cuda-graphs/graphs-full-1gpu.yaml" > "$dir/study/fit.json"
}

lane_run() {
    local out=$1 dir rc=0 envs args
    dir=$(cd "$(dirname "$0")" && pwd)
    mkdir -p "$out" "$dir/run/mlm"
    export PATH=/opt/torch/.venv/bin:$PATH
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$dir/run/gpus.csv" || true
    tar -xJf "$dir/${TARBALL[core-0.19]}.tar.xz" -C "$dir/run/mlm" --strip-components=1
    # the baseline's env and argv exactly as manifest.json has them, one a line
    python3 -c 'import json, sys
st = next(s for s in json.load(open(sys.argv[1]))["stages"] if s["stage"] == "scale")
c = st["candidates"][0]
open(sys.argv[2], "w").write("".join(k + "=" + v + "\n" for k, v in sorted(c["env"].items())))
open(sys.argv[3], "w").write("".join(a + "\n" for a in c["argv"]))' \
        "$dir/study/manifest.json" "$dir/run/env" "$dir/run/argv"
    mapfile -t envs < "$dir/run/env"
    mapfile -t args < "$dir/run/argv"
    ( cd "$dir/run/mlm" &&
      env "${envs[@]}" RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29517 \
          PYTHONPATH="$dir/run/mlm" PYTHONUNBUFFERED=1 timeout 400 \
          python3 "$dir/memwrap.py" "${args[@]}" ) > "$dir/run/train.log" 2>&1 || rc=$?
    echo "$rc" > "$dir/run/rc"
    echo "cuda-graphs lane: exit $rc"
    tail -n 5 "$dir/run/train.log"
    tar -C "$dir" -czf "$out/graphs-lane.tar.gz" run/train.log run/rc run/gpus.csv run/env run/argv study
}

case ${1:-} in
    prepare) prepare "${2:?BUILD_DIR}" ;;
    run) shift; run "$@" ;;
    collect) shift; collect "$@" ;;
    lane-prepare) lane_prepare "${2:?BUILD_DIR}" "${3:?DIR}" ;;
    lane-run) lane_run "${2:?OUT_DIR}" ;;
    *) die "usage: cuda-graphs.sh prepare BUILD_DIR | run OUT_DIR [DIALECT...] | collect ARCHIVE..." ;;
esac
