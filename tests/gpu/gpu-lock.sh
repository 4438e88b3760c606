# shellcheck shell=bash
# Sourced by the tests/gpu/ scripts that time runs (issue 42): a step time
# measured while another timed job shares the GPU measures both jobs, so a
# timed job takes an exclusive lock on every GPU it can see before it starts
# and refuses, naming the holder, when another timed job has one.  The lock
# is flock(1) on one file per GPU, held by an open descriptor for the life
# of the script and its children (a crashed job leaves no stale lock).
#
#   gpu_timed_lock WHO   take every visible GPU's lock or exit 75 (EX_TEMPFAIL)
#
# MOEFLOW_GPU_LOCK_DIR (default /tmp/moeflow-gpu-locks) holds the files; the
# GPUs are CUDA_VISIBLE_DEVICES's, else nvidia-smi's, else GPU 0 (a machine
# without nvidia-smi still refuses two timed jobs).

gpu_lock_ids() {
    if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
        tr ',' '\n' <<< "$CUDA_VISIBLE_DEVICES"
    elif command -v nvidia-smi > /dev/null 2>&1 &&
            nvidia-smi --query-gpu=index --format=csv,noheader 2> /dev/null | grep -q .; then
        nvidia-smi --query-gpu=index --format=csv,noheader
    else
        echo 0
    fi
}

gpu_timed_lock() {
    local who=$1 dir=${MOEFLOW_GPU_LOCK_DIR:-/tmp/moeflow-gpu-locks} id file fd holder
    # A child of a script that holds the locks inherits the descriptors: it
    # is the same timed job, not a second one.
    [ "${MOEFLOW_GPU_LOCKED_BY:-}" = "" ] || return 0
    mkdir -p "$dir" || { echo "$who: cannot create $dir for the GPU locks" >&2; exit 75; }
    for id in $(gpu_lock_ids); do
        file=$dir/gpu-${id//[^0-9A-Za-z-]/_}.lock
        exec {fd}>> "$file" || { echo "$who: cannot open $file" >&2; exit 75; }
        if ! flock -n "$fd"; then
            holder=$(head -n 1 "$file" 2> /dev/null || true)
            echo "$who: GPU $id is held by another timed job ($file: ${holder:-holder unknown}):" \
                 "step times are never measured on a shared GPU; refused, wait for it to end" >&2
            exit 75
        fi
        printf '%s pid %d since %s\n' "$who" "$$" "$(date -u +%FT%TZ)" > "$file"
    done
    export MOEFLOW_GPU_LOCKED_BY="$who pid $$"
}
