#!/bin/bash
# The autopilot on one GPU: `moeflow run` drives the 1-GPU tiny study of
# autopilot/tiny-1gpu.yaml from contract to validate under the real
# Megatron-LM of core 0.19 or of bridge-pin, through the Slurm stand-ins in
# standin/ (sbatch, srun, squeue; srun runs the real spank_moeflow.so), with
# the checkpoint/resume validation and the profiling twins of the validate
# stage, and then writes the evidence pack with `moeflow report --pack`.
# One dialect per device call (autopilot/README.md says what ran so far).
#
#   autopilot.sh prepare BUILD_DIR         here: both studies, moeflow, the
#                                          plugin and their libraries into
#                                          _work/autopilot
#   autopilot.sh run OUT_DIR DIALECT       on the GPU machine: OUT_DIR/ap-DIALECT.tar.gz
#                                          (RESUME_ARCHIVE=an earlier one: resume it)
#   autopilot.sh collect ARCHIVE           here: tests/data/gpu/autopilot-DIALECT.tar.xz,
#                                          the transcript, pack and candidates table
#                                          under autopilot/
# AUTOPILOT_STUDY=poor-1gpu.yaml (in autopilot/) drives the closed loop's
# study instead (issue 37): its files are named poor-1gpu-DIALECT where the
# default's are DIALECT, and moeflow run takes AUTOPILOT_RUN_ARGS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=$here/_work/autopilot
RUN_DIR=/tmp/autopilot
DIALECTS="core-0.19 bridge-pin"
STUDY=${AUTOPILOT_STUDY:-tiny-1gpu.yaml}
# the study's folder per dialect: DIALECT for the default study
prefix() { [ "$STUDY" = tiny-1gpu.yaml ] && echo "$1" || echo "${STUDY%.yaml}-$1"; }
# job ids (and so MASTER_PORTs) apart from checkpoint.sh, which may run beside it
declare -A FIRST_ID=([core-0.19]=7000 [bridge-pin]=8000)
declare -A TARBALL=([core-0.19]=megatron-lm-core_v0.19.0 [bridge-pin]=megatron-lm-2a75ac12)
die() { echo "autopilot: $*" >&2; exit 1; }
# shellcheck source=tests/gpu/gpu-lock.sh
. "$here/gpu-lock.sh"

# moeflow travels with the shared libraries it was linked with (the GPU
# machine has none of them; each needs no glibc newer than 2.34), and so
# do spank_moeflow.so and the test host that plays slurmstepd's SPANK calls
# for it (standin/srun runs it when MOEFLOW_STANDIN_PLUGIN names them).
carry_binaries() {
    local build=$1 lib exe
    mkdir -p "$work/bin/lib"
    cp "$build/gen/moeflow" "$work/bin/moeflow.bin"
    cp "$build/tests/integration/plugin-host" "$work/bin/plugin-host.bin"
    cp "$build/spank/.libs/spank_moeflow.so" "$work/bin/lib/"
    ldd "$build/gen/moeflow" "$build/spank/.libs/spank_moeflow.so" |
        awk '$3 ~ /^\// {print $3}' | sort -u | while read -r lib; do
        case $(basename "$lib") in libc.so*|libm.so*|libresolv.so*|ld-linux*) continue ;; esac
        cp -L "$lib" "$work/bin/lib/"
    done
    for exe in moeflow plugin-host; do
        cat > "$work/bin/$exe" <<WRAP
#!/bin/sh
dir=\$(cd "\$(dirname "\$0")" && pwd)
LD_LIBRARY_PATH=\$dir/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} exec "\$dir/$exe.bin" "\$@"
WRAP
        chmod +x "$work/bin/$exe"
    done
}

prepare() {
    local build=$1 d
    [ -x "$build/gen/moeflow" ] || die "no $build/gen/moeflow: build first"
    rm -rf "$work" && mkdir -p "$work" "$here/_work/megatron"
    [ -x "$build/tests/integration/plugin-host" ] || make -C "$build" tests/integration/plugin-host
    carry_binaries "$build"
    for d in $DIALECTS; do
        [ -f "$here/_work/megatron/${TARBALL[$d]}.tar.xz" ] ||
            cp "$top/../shared/megatron/${TARBALL[$d]}.tar.xz" "$here/_work/megatron/" ||
            die "no ../shared/megatron/${TARBALL[$d]}.tar.xz"
        local p
        p=$(prefix "$d")
        sed "s/^  megatron: .*/  megatron: $d/" "$here/autopilot/$STUDY" > "$work/study-$p.yaml"
        # at the path the GPU machine runs it from: the plugin finds the
        # study by the scripts' #SBATCH --moe-study, an absolute path
        rm -rf "${RUN_DIR:?}/$p"
        "$build/gen/moeflow" gen --templates "$top/templates" "$work/study-$p.yaml" -o "$RUN_DIR/$p" \
            > "$work/$p.gen.txt"
        mv "$RUN_DIR/$p" "$work/$p"
    done
}

# One dialect, as the job user in the run's folder $1: run (within
# AUTOPILOT_RUN_S), then validate's report, saved as moeflow run saves it
# (its matched A/B profiles are read here, where the traces are: they are
# too large to come back), then the evidence pack; the transcript beside
# the study, appended to (a second call resumes the first's study).
drive() {
    local w=$1 d=$2 p dir
    p=$(prefix "$d") dir=$1/$(prefix "$2")
    ln -sf "/tmp/mlm/${TARBALL[$d]}/pretrain_gpt.py" "$dir/pretrain_gpt.py"
    (
        export PYTHONPATH=/tmp/mlm/${TARBALL[$d]} MOEFLOW_STANDIN_STATE=$dir/.standin
        export MOEFLOW_STANDIN_FIRST_ID=${FIRST_ID[$d]} PYTHONUNBUFFERED=1
        echo "# moeflow run --poll 1 ${AUTOPILOT_RUN_ARGS:-}$p    ($(date -u +%FT%TZ))"
        # shellcheck disable=SC2086 # options, split on purpose
        timeout -k 5 "${AUTOPILOT_RUN_S:-480}" moeflow run --poll 1 ${AUTOPILOT_RUN_ARGS:-} "$dir" 2>&1 ||
            echo "# moeflow run exited $?"
        echo "# moeflow report $p --stage validate -o $p/results/validate/report"
        moeflow report "$dir" --stage validate -o "$dir/results/validate/report" 2>&1 ||
            echo "# moeflow report exited $?"
        echo "# moeflow report $p --pack"
        moeflow report "$dir" --pack 2>&1 || echo "# moeflow report --pack exited $?"
    ) >> "$w/$p.run.txt"
}

# moeflow run refuses root (the jobs freeze contracts as the job user) and
# the device runs commands as root in a tree under /root: the run happens
# in /tmp/autopilot as a user of its own, with the stand-ins and templates
# copied beside it.  One dialect per call: a whole study takes about 7
# minutes on one H200 and a call at most 10; two dialects side by side
# share the GPU, and their retune screening then measures each other
# (2026-12-01: manual GC "won" by 31% that way, and was no change in
# validate).  With RESUME_ARCHIVE, the study comes from an earlier call's
# archive (resumed where it stopped) instead of from prepare.
run() {
    local out=$1 d=$2 w=$RUN_DIR as=() p
    p=$(prefix "$d")
    [ -n "${TARBALL[$d]+x}" ] || die "dialect '$d': one of $DIALECTS"
    gpu_timed_lock "autopilot.sh run $d"
    mkdir -p "$out" /tmp/mlm
    [ -d "/tmp/mlm/${TARBALL[$d]}" ] || tar -xJf "$here/_work/megatron/${TARBALL[$d]}.tar.xz" -C /tmp/mlm
    # Megatron builds its dataset helpers in its own tree on first use
    make -s -C "/tmp/mlm/${TARBALL[$d]}/megatron/core/datasets" > /dev/null || true
    rm -rf "$w" && mkdir -p "$w" && cp -a "$work/bin" "$here/standin" "$top/templates" "$0" "$w/"
    if [ -n "${RESUME_ARCHIVE:-}" ]; then
        tar -xzf "$RESUME_ARCHIVE" -C "$w"
        rm -f "$w/$p/run.lock"
    else
        cp -a "$work/$p" "$work/$p.gen.txt" "$w/"
    fi
    mkdir -p "$w/pybin"
    command -v python > /dev/null || ln -sf "$(command -v python3)" "$w/pybin/python"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$w/gpus.csv" || true
    if [ "$(id -u)" = 0 ]; then
        id moeflowlane > /dev/null 2>&1 || useradd -m moeflowlane
        chown -R moeflowlane "$w" /tmp/mlm
        as=(runuser -u moeflowlane --)
    fi
    "${as[@]}" env PATH="$w/bin:$w/standin:$w/pybin:$PATH" HOME="$w" \
        MOEFLOW_TEMPLATE_DIR="$w/templates" \
        MOEFLOW_STANDIN_PLUGIN="$w/bin/plugin-host $w/bin/lib/spank_moeflow.so" \
        MOEFLOW_STANDIN_TIME_LIMIT="${MOEFLOW_STANDIN_TIME_LIMIT:-150}" \
        MOEFLOW_STANDIN_FIT_SLOTS=3 AUTOPILOT_STUDY="$STUDY" \
        AUTOPILOT_RUN_ARGS="${AUTOPILOT_RUN_ARGS:-}" \
        bash "$w/autopilot.sh" drive "$w" "$d" || true
    # moeflow run's timeout kills moeflow, not the stand-in sbatch it
    # started: what is left would run on into the next call's jobs
    [ "${#as[@]}" = 0 ] || pkill -KILL -u moeflowlane || true
    "$w/bin/moeflow" --version > "$w/moeflow-version.txt" 2>&1 || true
    # without the traces and the checkpoints (too large to come back; the
    # report read the traces and the job recorded the checkpoints' size)
    tar -C "$w" --exclude=pretrain_gpt.py --exclude=torch_profile --exclude=tensorboard \
        --exclude="$p/results/validate/checkpoint" --exclude=.standin-cache \
        -czf "$out/ap-$p.tar.gz" "$p" "$p.run.txt" "$p.gen.txt" gpus.csv moeflow-version.txt
}

# A call's archive into tests/data/gpu/autopilot-DIALECT.tar.xz, its
# transcript and pack beside this script, and one line per candidate.
collect() {
    local archive=$1 tmp d
    tmp=$(mktemp -d)
    tar -xzf "$archive" -C "$tmp"
    for d in $DIALECTS; do
        d=$(prefix "$d")
        [ -d "$tmp/$d" ] || continue
        rm -rf "$here/autopilot/pack-$d"
        [ -d "$tmp/$d/evidence-pack" ] && cp -r "$tmp/$d/evidence-pack" "$here/autopilot/pack-$d"
        cp "$tmp/$d.run.txt" "$here/autopilot/run-$d.txt"
        cp "$tmp/gpus.csv" "$here/autopilot/gpus.csv"
        tar -C "$tmp" --sort=name --owner=0 --group=0 -cJf "$top/tests/data/gpu/autopilot-$d.tar.xz" "$d"
        python3 - "$tmp" "$d" > "$here/autopilot/candidates-$d.tsv" <<'PY'
import json, os, sys
root, d = sys.argv[1], sys.argv[2]
sdir = os.path.join(root, d)
m = json.load(open(os.path.join(sdir, "manifest.json")))
print("stage\tindex\tvariable\tvalue\ttwin_of\trc")
for st in m["stages"]:
    for i, c in enumerate(st["candidates"]):
        rcf = os.path.join(sdir, "results", st["stage"], c["id"] + ".rc")
        rc = open(rcf).read().strip() if os.path.exists(rcf) else "-"
        v = c["value"] if isinstance(c["value"], str) else json.dumps(c["value"])
        print("\t".join([st["stage"], str(i), c["variable"], v, (c.get("twin_of") or "-")[:12], rc]))
PY
        echo "autopilot: collected $d"
    done
    rm -rf "$tmp"
}

case "${1:-}" in
    prepare) prepare "${2:?build dir}" ;;
    run) run "${2:?out dir}" "${3:?dialect}" ;;
    drive) drive "${2:?run folder}" "${3:?dialect}" ;;
    collect) collect "${2:?archive}" ;;
    *) sed -n '2,17p' "$0"; exit 2 ;;
esac
