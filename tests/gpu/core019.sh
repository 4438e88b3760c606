# shellcheck shell=bash disable=SC2154  # work and NAME are the sourcing script's
# Sourced by the GPU-machine scripts that run core 0.19 studies
# (steady-1gpu.sh, multi-gpu.sh) after they set NAME and work: the
# Megatron-LM tarball travels in _work/megatron (prepare, here) and is
# unpacked once under /tmp/mlm with a python on the path (run, there).
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
TARBALL=megatron-lm-core_v0.19.0
die() { echo "$NAME: $*" >&2; exit 1; }
# shellcheck source=tests/gpu/gpu-lock.sh
. "$here/gpu-lock.sh"

# prepare_work BUILD_DIR: a fresh _work folder with the tarball beside it;
# prints the build's moeflow.
prepare_work() {
    local moeflow=$1/gen/moeflow
    [ -x "$moeflow" ] || die "no $moeflow: build first"
    rm -rf "$work" && mkdir -p "$work" "$here/_work/megatron"
    [ -f "$here/_work/megatron/$TARBALL.tar.xz" ] ||
        cp "$top/../shared/megatron/$TARBALL.tar.xz" "$here/_work/megatron/" ||
        die "no ../shared/megatron/$TARBALL.tar.xz"
    echo "$moeflow"
}

# unpack_megatron OUT_DIR: Megatron under /tmp/mlm, python on the path,
# the GPUs named in $work/gpus.csv.
unpack_megatron() {
    mkdir -p "$1" /tmp/mlm "$here/_work/bin"
    [ -d "/tmp/mlm/$TARBALL" ] || tar -xJf "$here/_work/megatron/$TARBALL.tar.xz" -C /tmp/mlm
    command -v python > /dev/null || ln -sf "$(command -v python3)" "$here/_work/bin/python"
    export PATH=$here/_work/bin:$PATH
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$work/gpus.csv" || true
}
