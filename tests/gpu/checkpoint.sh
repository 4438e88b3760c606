#!/bin/bash
# validation.checkpoint on one GPU under real Megatron-LM (issue 24): the
# tiny study, shrunk to one GPU and without Transformer Engine, with
# validation.checkpoint: true, in core-0.19 and bridge-pin; its validate
# stage as generated (the baseline, then the checkpoint candidate: an
# uninterrupted run saving at step 45 and a resumed run from that step, two
# srun steps of one job) run through standin/, one dialect after the other
# with the GPU locked (tests/gpu/gpu-lock.sh): the verdict compares losses,
# but moeflow report reads the logs' step times too.  The checkpoint
# folders stay on the GPU machine: the job records their size.
#
#   checkpoint.sh study DIALECT             print the study (tests/cli reads it)
#   checkpoint.sh prepare BUILD_DIR         here: generate into _work/checkpoint
#   checkpoint.sh run OUT_DIR               on the GPU machine: train, archive
#   checkpoint.sh collect ARCHIVE BUILD_DIR here: the logs into tests/data/gpu,
#                                           checkpoint.tsv beside this script
#
# On this workplace's device: prepare here, then (carry tests/gpu/_work,
# kind nvidia-h200) `bash tests/gpu/checkpoint.sh run $OUT`, then collect.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=$here/_work/checkpoint
DIALECTS="core-0.19 bridge-pin"
declare -A FIRST_ID=([core-0.19]=5000 [bridge-pin]=6000)
declare -A TARBALL=([core-0.19]=megatron-lm-core_v0.19.0 [bridge-pin]=megatron-lm-2a75ac12)
die() { echo "checkpoint: $*" >&2; exit 1; }
# shellcheck source=tests/gpu/gpu-lock.sh
. "$here/gpu-lock.sh"

# The tiny study on one GPU (EP 1), smaller still (2 layers, hidden 256,
# sequence 256, GBS 2) so that both dialects fit in a few minutes; the
# report window 46..50 puts the save at step 45 and compares steps 46..50.
# Without the distributed optimizer: the GPU machine has no Transformer
# Engine, and the distributed optimizer on torch's Adam cannot resume
# (moeflow gen skips the checkpoint run then; autopilot/README.md).
study() {
    local dialect=$1
    [ -n "${TARBALL[$dialect]+x}" ] || die "dialect '$dialect': one of $DIALECTS"
    sed -e "s/^  megatron: .*/  megatron: $dialect/" \
        -e 's/^  transformer_engine: .*/  transformer_engine: none/' \
        -e "s/^name: .*/name: checkpoint-$dialect/" \
        -e 's/^  gpus_per_node: .*/  gpus_per_node: 1/' \
        -e 's/^  num_layers: .*/  num_layers: 2/' \
        -e 's/^  hidden: .*/  hidden: 256/' \
        -e 's/^  ffn_hidden: .*/  ffn_hidden: 1024/' \
        -e 's/^  moe_ffn_hidden: .*/  moe_ffn_hidden: 512/' \
        -e 's/^  vocab: .*/  vocab: 1024/' \
        -e 's/^  seq_len: .*/  seq_len: 256/' \
        -e 's/^  gbs: .*/  gbs: 2\n  distributed_optimizer: false/' \
        -e 's/^  ep: .*/  ep: 1/' \
        -e 's/^  report_window: .*/  report_window: [46, 50]/' \
        -e 's/^  profile_steps: \(.*\)/  profile_steps: \1\n  profiler: pytorch/' \
        "$top/etc/studies/tiny-moe-2gpu.yaml"
    printf 'validation:\n  checkpoint: true\n'
}

prepare() {
    local moeflow=$1/gen/moeflow d
    [ -x "$moeflow" ] || die "no $moeflow: build first"
    rm -rf "$work"
    mkdir -p "$work/megatron"
    for d in $DIALECTS; do
        cp "$top/../shared/megatron/${TARBALL[$d]}.tar.xz" "$work/megatron/" ||
            die "no ../shared/megatron/${TARBALL[$d]}.tar.xz"
        study "$d" > "$work/checkpoint-$d.yaml"
        "$moeflow" gen --templates "$top/templates" --stage validate \
            "$work/checkpoint-$d.yaml" -o "$work/$d" > /dev/null
    done
}

# One dialect's validate stage through the stand-ins.
train() {
    local d=$1 dir=$work/$1
    ln -sf "/tmp/mlm/${TARBALL[$d]}/pretrain_gpt.py" "$dir/pretrain_gpt.py"
    rm -rf "$dir/.standin" "$dir/logs" "$dir/results" "$dir"/.standin-step-*
    ( cd "$dir" && PATH=$here/standin:$PATH PYTHONPATH=/tmp/mlm/${TARBALL[$d]} \
          MOEFLOW_STANDIN_STATE=$dir/.standin MOEFLOW_STANDIN_FIRST_ID=${FIRST_ID[$d]} \
          PYTHONUNBUFFERED=1 sbatch validate.sbatch ) \
        > "$work/$d.submit.log" 2>&1 || echo "checkpoint: $d: sbatch exited $?" >&2
}

run() {
    local out=$1 d
    gpu_timed_lock "checkpoint.sh run"
    mkdir -p "$out" /tmp/mlm "$work/bin"
    for d in $DIALECTS; do
        [ -d "/tmp/mlm/${TARBALL[$d]}" ] ||
            tar -xJf "$work/megatron/${TARBALL[$d]}.tar.xz" -C /tmp/mlm
    done
    command -v python > /dev/null || ln -sf "$(command -v python3)" "$work/bin/python"
    export PATH=$work/bin:$PATH
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$work/gpus.csv" || true
    for d in $DIALECTS; do
        timeout -k 5 "${CHECKPOINT_BUDGET_S:-230}" bash "$0" train "$d" ||
            echo "checkpoint: $d ended $?" >&2
    done
    # the logs, the records and the scripts; not the checkpoints themselves
    tar -C "$work" --exclude=megatron --exclude=bin --exclude=pretrain_gpt.py \
        --exclude=.standin --exclude='results/validate/checkpoint' -czf "$out/checkpoint.tar.gz" .
}

# dialect verdict reason resumed_first save_step last_step max_loss_diff
# max_lr_diff skipped nan checkpoint_bytes, from moeflow report's JSON.
collect() {
    local archive=$1 moeflow=$2/gen/moeflow tmp d
    [ -x "$moeflow" ] || die "no $moeflow: build first"
    tmp=$(mktemp -d)
    tar -xzf "$archive" -C "$tmp"
    tar -C "$tmp" --sort=name -cJf "$top/tests/data/gpu/checkpoint.tar.xz" .
    {
        printf 'dialect\tverdict\treason\tresumed_first\tsave_step\tlast_step\tmax_loss_diff'
        printf '\tmax_lr_diff\tskipped\tnan\tcheckpoint_bytes\n'
        for d in $DIALECTS; do
            "$moeflow" report "$tmp/$d" --stage validate --json 2> "$tmp/$d.report.err" |
                python3 -c '
import json, sys
d = sys.argv[1]
try:
    c = json.load(sys.stdin)["checkpoint"]
except (ValueError, KeyError):
    print("%s\tmissing evidence\tmoeflow report gave no checkpoint verdict" % d + "\t-" * 8)
    sys.exit(0)
f = lambda k: "-" if c.get(k) is None else str(c[k])
print("\t".join([d, c["verdict"], c["reason"] or "-"] + [f(k) for k in (
    "resumed_first_iteration", "save_step", "last_step", "max_abs_loss_diff",
    "max_abs_lr_diff", "skipped_iterations", "nan_iterations", "checkpoint_bytes")]))
' "$d"
        done
    } > "$here/checkpoint.tsv"
    rm -rf "$tmp"
    cat "$here/checkpoint.tsv"
}

case "${1:-}" in
    study) study "${2:?dialect}" ;;
    prepare) prepare "${2:?build dir}" ;;
    train) gpu_timed_lock "checkpoint.sh train ${2:-}"; train "${2:?dialect}" ;;
    run) run "${2:?out dir}" ;;
    collect) collect "${2:?archive}" "${3:?build dir}" ;;
    *) sed -n '2,18p' "$0"; exit 2 ;;
esac
