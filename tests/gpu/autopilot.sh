#!/bin/bash
# The autopilot on one GPU: `moeflow run` drives the 1-GPU tiny study of
# autopilot/tiny-1gpu.yaml from contract to validate under the real
# Megatron-LM of core 0.19 and of bridge-pin, through the Slurm stand-ins
# in standin/ (sbatch, srun, squeue), with the checkpoint/resume validation
# and the profiling twins of the validate stage, and then writes the
# evidence pack with `moeflow report --pack`.  The two dialects run side by
# side on the one GPU (their step times share it: this run proves what runs
# and what the evidence says, not speed).
#
#   autopilot.sh prepare BUILD_DIR          here: studies, moeflow and its
#                                           libraries into _work/autopilot
#   autopilot.sh run OUT_DIR                on the GPU machine
#   autopilot.sh collect ARCHIVE BUILD_DIR  here: tests/data/gpu/autopilot-*.tar.xz,
#                                           the transcripts, packs and autopilot.tsv
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=$here/_work/autopilot
RUN_DIR=/tmp/autopilot
DIALECTS="core-0.19 bridge-pin"
# job ids (and so MASTER_PORTs) apart from checkpoint.sh, which may run beside it
declare -A FIRST_ID=([core-0.19]=7000 [bridge-pin]=8000)
declare -A TARBALL=([core-0.19]=megatron-lm-core_v0.19.0 [bridge-pin]=megatron-lm-2a75ac12)
die() { echo "autopilot: $*" >&2; exit 1; }

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
        sed "s/^  megatron: .*/  megatron: $d/" "$here/autopilot/tiny-1gpu.yaml" > "$work/tiny-$d.yaml"
        # at the path the GPU machine runs it from: the plugin finds the
        # study by the scripts' #SBATCH --moe-study, an absolute path
        rm -rf "${RUN_DIR:?}/$d"
        "$build/gen/moeflow" gen --templates "$top/templates" "$work/tiny-$d.yaml" -o "$RUN_DIR/$d" \
            > "$work/$d.gen.txt"
        mv "$RUN_DIR/$d" "$work/$d"
    done
}

# One dialect, as the job user in the run's folder $1: run, then the
# evidence pack; the transcript beside the study.
drive() {
    local w=$1 d=$2 dir=$1/$2
    ln -sf "/tmp/mlm/${TARBALL[$d]}/pretrain_gpt.py" "$dir/pretrain_gpt.py"
    (
        export PYTHONPATH=/tmp/mlm/${TARBALL[$d]} MOEFLOW_STANDIN_STATE=$dir/.standin
        export MOEFLOW_STANDIN_FIRST_ID=${FIRST_ID[$d]} PYTHONUNBUFFERED=1
        echo "# moeflow run --poll 1 $d"
        timeout -k 5 "${AUTOPILOT_RUN_S:-480}" moeflow run --poll 1 "$dir" 2>&1 ||
            echo "# moeflow run exited $?"
        echo "# moeflow report $d --pack"
        moeflow report "$dir" --pack 2>&1 || echo "# moeflow report --pack exited $?"
    ) > "$w/$d.run.txt"
}

# moeflow run refuses root (the jobs freeze contracts as the job user) and
# the device runs commands as root in a tree under /root: the run happens
# in /tmp/autopilot as a user of its own, with the stand-ins and templates
# copied beside it.
run() {
    local out=$1 w=$RUN_DIR d pids=() as=()
    mkdir -p "$out" /tmp/mlm
    for d in $DIALECTS; do
        [ -d "/tmp/mlm/${TARBALL[$d]}" ] || tar -xJf "$here/_work/megatron/${TARBALL[$d]}.tar.xz" -C /tmp/mlm
    done
    # Megatron builds its dataset helpers in its own tree on first use: once
    # here, before jobs of two users (this one's, checkpoint.sh's) race to
    for d in $DIALECTS; do
        make -s -C "/tmp/mlm/${TARBALL[$d]}/megatron/core/datasets" > /dev/null || true
    done
    rm -rf "$w" && cp -a "$work" "$w" && cp -a "$here/standin" "$top/templates" "$0" "$w/"
    mkdir -p "$w/pybin"
    command -v python > /dev/null || ln -sf "$(command -v python3)" "$w/pybin/python"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$w/gpus.csv" || true
    if [ "$(id -u)" = 0 ]; then
        id moeflowlane > /dev/null 2>&1 || useradd -m moeflowlane
        chown -R moeflowlane "$w" /tmp/mlm
        as=(runuser -u moeflowlane --)
    fi
    for d in $DIALECTS; do
        "${as[@]}" env PATH="$w/bin:$w/standin:$w/pybin:$PATH" HOME="$w" \
            MOEFLOW_TEMPLATE_DIR="$w/templates" \
            MOEFLOW_STANDIN_PLUGIN="$w/bin/plugin-host $w/bin/lib/spank_moeflow.so" \
            MOEFLOW_STANDIN_TIME_LIMIT="${MOEFLOW_STANDIN_TIME_LIMIT:-150}" \
            MOEFLOW_STANDIN_FIT_SLOTS=3 \
            bash "$w/autopilot.sh" drive "$w" "$d" &
        pids+=($!)
    done
    wait "${pids[@]}" || true
    "$w/bin/moeflow" --version > "$w/moeflow-version.txt" 2>&1 || true
    tar -C "$w" --exclude=pretrain_gpt.py --exclude=./bin --exclude=./standin --exclude=./templates \
        --exclude=./pybin --exclude=./autopilot.sh --exclude=./.cache -czf "$out/autopilot.tar.gz" .
}

# The archive into tests/data/gpu (one tar.xz per dialect), each
# transcript and pack beside this script, and one line per candidate.
collect() {
    local archive=$1 build=$2 tmp d
    tmp=$(mktemp -d)
    tar -xzf "$archive" -C "$tmp"
    for d in $DIALECTS; do
        [ -d "$tmp/$d" ] || die "the archive has no $d"
        rm -rf "$here/autopilot/pack-$d"
        [ -d "$tmp/$d/evidence-pack" ] && cp -r "$tmp/$d/evidence-pack" "$here/autopilot/pack-$d"
        cp "$tmp/$d.run.txt" "$here/autopilot/run-$d.txt"
        mv "$tmp/$d" "$tmp/autopilot-$d"
        tar -C "$tmp" --sort=name -cJf "$top/tests/data/gpu/autopilot-$d.tar.xz" "autopilot-$d"
    done
    cp "$tmp/gpus.csv" "$here/autopilot/gpus.csv"
    # shellcheck disable=SC2086 # one argument per dialect
    python3 - "$tmp" $DIALECTS > "$here/autopilot.tsv" <<'PY'
import json, os, sys
root, dialects = sys.argv[1], sys.argv[2:]
print("dialect\tstage\tindex\tvariable\tvalue\trc")
for d in dialects:
    sdir = os.path.join(root, "autopilot-" + d)
    m = json.load(open(os.path.join(sdir, "manifest.json")))
    for st in m["stages"]:
        for i, c in enumerate(st["candidates"]):
            rcf = os.path.join(sdir, "results", st["stage"], c["id"] + ".rc")
            rc = open(rcf).read().strip() if os.path.exists(rcf) else "-"
            print("\t".join([d, st["stage"], str(i), c["variable"],
                             json.dumps(c["value"]) if not isinstance(c["value"], str) else c["value"], rc]))
PY
    rm -rf "$tmp"
    echo "autopilot: collected; check $here/autopilot.tsv and the transcripts"
}

case "${1:-}" in
    prepare) prepare "${2:?build dir}" ;;
    run) run "${2:?out dir}" ;;
    drive) drive "${2:?run folder}" "${3:?dialect}" ;;
    collect) collect "${2:?archive}" "${3:?build dir}" ;;
    *) sed -n '2,15p' "$0"; exit 2 ;;
esac
