#!/bin/bash
# The GPU lane: every job moeflow writes for the tiny study, in its form
# without Transformer Engine, trained under the real Megatron-LM of each
# dialect that can train MoE without TE, by running the generated sbatch
# scripts themselves through the stand-ins in standin/; and Megatron's own
# parse_args + validate_args on every candidate of every example study in
# every dialect.  See README.md beside this file.
#
#   lane.sh study DIALECT       print the lane's study for DIALECT (the tiny
#                               study without TE; tests/cli/gpu-lane.sh
#                               regenerates it to check the evidence is today's)
#   lane.sh prepare BUILD_DIR   here: generate the studies into _work/
#   lane.sh run OUT_DIR         on the GPU machine: train, validate, archive
#   lane.sh collect ARCHIVE BUILD_DIR   here: results.tsv, validate.tsv, data
#   lane.sh validate OUT_DIR    on a machine with torch: validate_args alone
#                               (no training), OUT_DIR/validate.tar.gz;
#   lane.sh validate-collect ARCHIVE    here: validate.tsv from it
#                               (a gen change that moves only the candidate
#                               set, not the lane's jobs, owes no GPU time)
#   lane.sh all BUILD_DIR       the three in a row, on a GPU machine with a build
#   lane.sh steady-prepare BUILD_DIR / steady OUT_DIR / steady-collect ARCHIVE
#                               the scale stage alone with a long warm-up, one
#                               dialect after the other, for step times
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=$here/_work
LANE_DIALECTS=${LANE_DIALECTS:-"core-0.19 bridge-pin"}
ALL_DIALECTS="core-0.16 core-0.19 bridge-pin"
declare -A FIRST_ID=([core-0.16]=3000 [core-0.19]=1000 [bridge-pin]=2000)
declare -A TARBALL=([core-0.16]=megatron-lm-core_v0.16.0 [core-0.19]=megatron-lm-core_v0.19.0
                    [bridge-pin]=megatron-lm-2a75ac12)
die() { echo "lane: $*" >&2; exit 1; }
# shellcheck source=tests/gpu/gpu-lock.sh
. "$here/gpu-lock.sh"

# The tiny study as a container without TE or Apex runs it: the PyTorch
# profiler (no Nsight Systems there) and every layout of 2 GPUs in scale.
lane_study() {
    local dialect=$1
    sed -e "s/^  megatron: .*/  megatron: $dialect/" \
        -e 's/^  transformer_engine: .*/  transformer_engine: none/' \
        -e 's/^  profile_steps: \(.*\)/  profile_steps: \1\n  profiler: pytorch/' \
        "$top/etc/studies/tiny-moe-2gpu.yaml"
    printf 'scale:\n  top_k: 16\n'
}

prepare() {
    local build=$1 moeflow study d
    moeflow=$build/gen/moeflow
    [ -x "$moeflow" ] || die "no $moeflow: build first"
    rm -rf "$work"
    mkdir -p "$work/megatron" "$work/lane" "$work/validate"
    for d in $ALL_DIALECTS; do
        cp "$top/../shared/megatron/${TARBALL[$d]}.tar.xz" "$work/megatron/" ||
            die "no ../shared/megatron/${TARBALL[$d]}.tar.xz"
    done
    for d in $LANE_DIALECTS; do
        lane_study "$d" > "$work/lane/tiny-$d.yaml"
        "$moeflow" gen --templates "$top/templates" "$work/lane/tiny-$d.yaml" -o "$work/lane/$d"
    done
    # the example studies, and one that sets every cluster key (issue 40):
    # its extra Megatron arguments and environment reach validate_args too
    # and the graphed 1-GPU study (issue 41): its full-iteration graph's
    # flags in each dialect that trains MoE without TE
    for study in "$top"/etc/studies/*.yaml "$top/tests/data/studies/every-cluster-key.yaml" \
                 "$here/cuda-graphs/graphs-full-1gpu.yaml"; do
        for d in $ALL_DIALECTS; do
            local name
            name=$(basename "$study" .yaml)-$d
            sed "s/^  megatron: .*/  megatron: $d/" "$study" > "$work/validate/$name.yaml"
            if ! "$moeflow" gen --templates "$top/templates" "$work/validate/$name.yaml" \
                    -o "$work/validate/$name" > "$work/validate/$name.gen" 2>&1; then
                echo "lane: $name: refused by moeflow gen: $(tail -n 1 "$work/validate/$name.gen")"
            fi
        done
    done
}

# Step times for the step-time model (issue 12): the screening window of
# the lane (steps 3..8) is still warming up -- the tiny model's steps fall
# from about 350 to 250 ms until step 20 or so -- so the scale stage is run
# again with 20 warm-up steps and a 12-step window, the dialects one after
# the other so that they do not share the GPUs.
steady_prepare() {
    local build=$1 d
    rm -rf "$work/steady"
    mkdir -p "$work/steady" "$work/megatron"
    for d in $LANE_DIALECTS; do
        [ -f "$work/megatron/${TARBALL[$d]}.tar.xz" ] ||
            cp "$top/../shared/megatron/${TARBALL[$d]}.tar.xz" "$work/megatron/" ||
            die "no ../shared/megatron/${TARBALL[$d]}.tar.xz"
        lane_study "$d" | sed -e 's/^  warmup: .*/  warmup: 20/' \
            -e 's/^  screen_steps: .*/  screen_steps: 12/' \
            -e 's/^  profile_steps: .*/  profile_steps: [23, 24]/' > "$work/steady/tiny-$d.yaml"
        "$build/gen/moeflow" gen --templates "$top/templates" --stage scale \
            "$work/steady/tiny-$d.yaml" -o "$work/steady/$d"
    done
}

steady() {
    local out=$1 d dir
    gpu_timed_lock "lane.sh steady"
    machine_setup "$out"
    export PATH=$here/standin:$PATH PYTHONUNBUFFERED=1
    for d in $LANE_DIALECTS; do
        dir=$work/steady/$d
        ln -sf "/tmp/mlm/${TARBALL[$d]}/pretrain_gpt.py" "$dir/pretrain_gpt.py"
        ( cd "$dir" && PYTHONPATH=/tmp/mlm/${TARBALL[$d]} MOEFLOW_STANDIN_STATE=$dir/.standin \
              MOEFLOW_STANDIN_FIRST_ID=${FIRST_ID[$d]} sbatch scale.sbatch ) \
            > "$work/steady/$d.submit.log" 2>&1 || echo "lane: steady $d exited $?" >&2
    done
    tar -C "$work" --exclude=pretrain_gpt.py --exclude=.standin -czf "$out/steady.tar.gz" steady
}

# Median step time of the steady window of every scale candidate, from the
# logs Megatron wrote ("elapsed time per iteration (ms): X" per step).
steady_collect() {
    local archive=$1 tmp d
    tmp=$(mktemp -d)
    tar -xzf "$archive" -C "$tmp"
    tar -C "$tmp" -cJf "$top/tests/data/gpu/steady-scale.tar.xz" steady
    python3 "$here/collect.py" --steady "$tmp/steady" > "$here/steady.tsv"
    rm -rf "$tmp"
}

# On the GPU machine: the output folder, Megatron unpacked, and "python"
# for the jobs (a bare machine may only have python3).
machine_setup() {
    mkdir -p "$1" "$work/bin"
    unpack_megatron
    command -v python > /dev/null || ln -sf "$(command -v python3)" "$work/bin/python"
    export PATH=$work/bin:$PATH
}

unpack_megatron() {
    local d
    mkdir -p /tmp/mlm
    for d in $ALL_DIALECTS; do
        [ -d "/tmp/mlm/${TARBALL[$d]}" ] || tar -xJf "$work/megatron/${TARBALL[$d]}.tar.xz" -C /tmp/mlm
    done
}

# One dialect's study: the stages in workflow order through the stand-ins.
train_dialect() {
    local d=$1 dir=$work/lane/$1 stage
    ln -sf "/tmp/mlm/${TARBALL[$d]}/pretrain_gpt.py" "$dir/pretrain_gpt.py"
    rm -rf "$dir/.standin" "$dir/logs" "$dir/results" "$dir/contract"
    (
        cd "$dir"
        export PATH=$here/standin:$PATH PYTHONPATH=/tmp/mlm/${TARBALL[$d]}
        export MOEFLOW_STANDIN_STATE=$dir/.standin PYTHONUNBUFFERED=1
        export MOEFLOW_STANDIN_FIRST_ID=${FIRST_ID[$d]}
        if [ "${LANE_CHAIN:-submit}" = submit ]; then
            ./submit.sh
        else
            for stage in contract fit scale profile retune validate; do
                sbatch "$stage.sbatch" || true
            done
        fi
    ) > "$work/lane/$d.submit.log" 2>&1 || echo "lane: $d: submit.sh exited $?" >&2
}

run() {
    local out=$1 d vpid left deadline
    # The lane's screening windows are step times (results.tsv): two
    # dialects side by side would each time the other's kernels too.
    [ "${LANE_PARALLEL:-0}" = 0 ] ||
        die "LANE_PARALLEL=$LANE_PARALLEL: the dialects' step times would share the GPUs; refused (issue 42: they train one after the other)"
    gpu_timed_lock "lane.sh run"
    deadline=$(( SECONDS + ${LANE_TRAIN_BUDGET_S:-100000} ))
    machine_setup "$out"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$work/lane/gpus.csv" || true
    python3 -c 'import pydantic' 2>/dev/null || export LANE_PYDANTIC_STANDIN=$here/pydantic-standin
    # validate_args needs no GPU time: it runs beside the training.
    timeout -k 5 "${LANE_VALIDATE_BUDGET_S:-600}" \
        python3 "$here/validate_args.py" "$work/validate" /tmp/mlm > "$work/validate.tsv" \
        2> "$work/validate.err" &
    vpid=$!
    # One dialect after the other: the GPUs are this run's alone.
    for d in $LANE_DIALECTS; do
        left=$(( deadline - SECONDS ))
        [ "$left" -gt 30 ] || { echo "lane: no time left for $d" >&2; continue; }
        timeout -k 5 "$left" bash "$0" train "$d" ||
            echo "lane: $d: stopped after $(( SECONDS ))s (exit $?)" >&2
    done
    wait "$vpid" || echo "lane: validate_args.py exited $?" >&2
    tar -C "$work" --exclude=pretrain_gpt.py -czf "$out/lane.tar.gz" lane validate.tsv validate.err
}

# validate_args on every candidate of every example study, nothing else.
validate_only() {
    local out=$1
    machine_setup "$out"
    python3 -c 'import pydantic' 2>/dev/null || export LANE_PYDANTIC_STANDIN=$here/pydantic-standin
    timeout -k 5 "${LANE_VALIDATE_BUDGET_S:-580}" \
        python3 "$here/validate_args.py" "$work/validate" /tmp/mlm > "$work/validate.tsv" \
        2> "$work/validate.err" || echo "lane: validate_args.py exited $?" >&2
    tar -C "$work" -czf "$out/validate.tar.gz" validate.tsv validate.err
}

validate_collect() {
    local tmp
    tmp=$(mktemp -d)
    tar -xzf "$1" -C "$tmp"
    cp "$tmp/validate.tsv" "$here/validate.tsv"
    rm -rf "$tmp"
}

# The device's archive into tests/data/gpu (one tar.xz per dialect, the
# traces beside them) and the two tables into tests/gpu.
collect() {
    local archive=$1 build=$2 data=$top/tests/data/gpu tmp d
    tmp=$(mktemp -d)
    tar -xzf "$archive" -C "$tmp"
    mkdir -p "$data/traces"
    for d in $LANE_DIALECTS; do
        [ -d "$tmp/lane/$d" ] || die "the archive has no lane/$d"
        rm -rf "$data/traces/$d"
        mkdir -p "$data/traces/$d"
        cp "$tmp/lane/$d"/results/profile/torch_profile/*.json.gz "$data/traces/$d/"
        mv "$tmp/lane/$d" "$tmp/lane-$d"
        tar -C "$tmp" --exclude=results/profile/torch_profile \
            --exclude=results/profile/tensorboard --exclude=pretrain_gpt.py \
            -cJf "$data/lane-$d.tar.xz" "lane-$d"
    done
    cp "$tmp/validate.tsv" "$here/validate.tsv"
    python3 "$here/collect.py" "$data" "$build/gen/moeflow" > "$here/results.tsv"
    rm -rf "$tmp"
}

case "${1:-}" in
    study) lane_study "${2:?dialect}" ;;
    prepare) prepare "${2:?build dir}" ;;
    run) run "${2:?out dir}" ;;
    train) gpu_timed_lock "lane.sh train ${2:-}"; train_dialect "${2:?dialect}" ;;
    collect) collect "${2:?archive}" "${3:?build dir}" ;;
    validate) validate_only "${2:?out dir}" ;;
    validate-collect) validate_collect "${2:?archive}" ;;
    steady-prepare) steady_prepare "${2:?build dir}" ;;
    steady) steady "${2:?out dir}" ;;
    steady-collect) steady_collect "${2:?archive}" ;;
    all) prepare "${2:?build dir}"; run "$work/out"; collect "$work/out/lane.tar.gz" "$2" ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
esac
