#!/bin/bash
# Multi-GPU truth (issue 26) on a 2-GPU machine: for each study in
# multi-gpu/studies/, the fit stage (one GPU each, Megatron's fake process
# group, fit-python/ filling the collectives) and the scale stage (every
# layout of 2 GPUs, trained for real, 20 warm-up steps and a 12-step
# window), both as today's moeflow generates them, run through standin/ one
# after the other.  See multi-gpu/README.md.
#
#   multi-gpu.sh prepare BUILD_DIR          here: generate into _work/multi
#   multi-gpu.sh run OUT_DIR                on the GPU machine: archive the logs
#   multi-gpu.sh collect ARCHIVE BUILD_DIR  here: the logs into tests/data/gpu,
#                                           multi-gpu.tsv beside this script
set -euo pipefail
# shellcheck disable=SC2034  # core019.sh's die names the script by it
NAME=multi-gpu
work=$(cd "$(dirname "$0")" && pwd)/_work/multi
# shellcheck source=tests/gpu/core019.sh
. "$(dirname "$0")/core019.sh"

prepare() {
    local moeflow study
    moeflow=$(prepare_work "$1")
    for study in "$here"/multi-gpu/studies/*.yaml; do
        "$moeflow" gen --templates "$top/templates" "$study" \
            -o "$work/$(basename "$study" .yaml)" > /dev/null
    done
}

# One stage of one study directory, as the stand-in sbatch runs it.
stage() {
    local dir=$1 st=$2
    ( cd "$dir" && PATH=$here/standin:$PATH PYTHONPATH=/tmp/mlm/$TARBALL \
          MOEFLOW_STANDIN_STATE=$dir/.standin PYTHONUNBUFFERED=1 sbatch "$st.sbatch" ) \
        > "$dir.$st.submit.log" 2>&1 || echo "multi-gpu: $dir: $st: sbatch exited $?" >&2
}

run() {
    local out=$1 dir
    gpu_timed_lock "multi-gpu.sh run"
    unpack_megatron "$out"
    make -s -C "/tmp/mlm/$TARBALL/megatron/core/datasets" > /dev/null
    for dir in "$work"/x*/; do
        dir=${dir%/}
        ln -sf "/tmp/mlm/$TARBALL/pretrain_gpt.py" "$dir/pretrain_gpt.py"
        for st in fit scale; do
            stage "$dir" "$st"
            # after every stage, so that a call cut short keeps what finished
            tar -C "$work" --exclude=pretrain_gpt.py --exclude=.standin -czf "$out/multi.tar.gz" .
        done
    done
}

# The logs into tests/data/gpu/multi-gpu.tar.xz (scripts left out: today's
# gen writes them again), then the table: each run's measured peak and
# median step against moeflow's prediction, through moeflow report.
collect() {
    local archive=$1 moeflow=${MOEFLOW_BIN:-$2/gen/moeflow} tmp
    tmp=$(mktemp -d)
    tar -xzf "$archive" -C "$tmp"
    find "$tmp" \( -name '*.sbatch' -o -name submit.sh -o -name rank-env.sh \
        -o -name '.standin-step-*' \) -delete
    rm -rf "$tmp"/*/fit-python "$tmp"/*/moeflow_capture.py
    tar -C "$tmp" --sort=name -cJf "$top/tests/data/gpu/multi-gpu.tar.xz" .
    table "$moeflow" "$tmp" > "$here/multi-gpu.tsv"
    rm -rf "$tmp"
}

# study stage run measured_mib predicted_mib mem_err% median_ms predicted_ms
# step_err%: fit rows from `report --stage fit` (one GPU, fake process
# group), scale rows from `report --stage scale` (the real 2-GPU runs) next
# to `moeflow fit` of the run's layout (rank 0's memory, the step time).
table() {
    . "$top/tests/gpu/pre40-studies.sh"
    say_te_none "$2"
    python3 - "$@" <<'PY'
import glob, json, os, re, subprocess, sys
moeflow, root = sys.argv[1:3]
def run(*args):
    out = subprocess.run([moeflow, *args], capture_output=True, text=True)
    return json.loads(out.stdout) if out.stdout.strip() else {}
def pct(pred, meas):
    return "%+.1f" % (100.0 * (pred - meas) / meas)
print("study\tstage\trun\tmeasured_mib\tpredicted_mib\tmem_err%\tmedian_ms\tpredicted_ms\tstep_err%")
for d in sorted(glob.glob(os.path.join(root, "x*"))):
    if not os.path.isdir(d):
        continue
    name = os.path.basename(d)
    for c in run("report", d, "--stage", "fit", "--json").get("candidates", []):
        print("\t".join([name, "fit", c["label"], "%.1f" % c["measured_mib"],
                         "%.1f" % c["predicted_mib"], "%+.1f" % c["error_pct"], "-", "-", "-"]))
    for r in run("report", d, "--stage", "scale", "--json").get("runs", []):
        m = re.match(r"layout=tp(\d+)\.cp(\d+)\.pp(\d+)\.vpp(\d+)\.ep(\d+)\.etp(\d+)$", r["name"])
        layout = [] if not m else sum(([f, v] for f, v in zip(
            ["--tp", "--cp", "--pp", "--vpp", "--ep", "--etp"], m.groups())), [])
        f = run("fit", os.path.join(d, "study.yaml"), *layout, "--json")
        mib = f["memory"]["ours_gib"]["total"] * 1024
        print("\t".join([name, "scale", r["name"], "%.1f" % r["peak_max_allocated_mib"],
                         "%.1f" % mib, pct(mib, r["peak_max_allocated_mib"]),
                         "%.1f" % r["step_ms_median"], "%.1f" % f["step_ms"],
                         pct(f["step_ms"], r["step_ms_median"])]))
PY
}

case "${1:-}" in
    prepare) prepare "${2:?build dir}" ;;
    run) run "${2:?out dir}" ;;
    collect) collect "${2:?archive}" "${3:?build dir}" ;;
    table) table "${MOEFLOW_BIN:?}" "${2:?dir}" ;;
    *) sed -n '2,13p' "$0"; exit 2 ;;
esac
