#!/bin/bash
# Step times are never measured on a shared GPU (issue 42): the GPU scripts
# that time runs take tests/gpu/gpu-lock.sh's lock on every GPU they see
# and refuse to start while another timed job holds one.  The real scripts
# run here, with a lock held by another process; no GPU is needed (the lock
# covers GPU 0 when there is no nvidia-smi, CUDA_VISIBLE_DEVICES here).
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
tap_plan 6
gpu=$MOEFLOW_SRCDIR/tests/gpu
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-timed-lock.XXXXXX")
export MOEFLOW_GPU_LOCK_DIR=$tmp/locks CUDA_VISIBLE_DEVICES=0
unset MOEFLOW_GPU_LOCKED_BY
mkdir -p "$MOEFLOW_GPU_LOCK_DIR"
# Another timed job: a process holding GPU 0's lock until told to stop.
echo "another job pid 1" > "$MOEFLOW_GPU_LOCK_DIR/gpu-0.lock"
flock "$MOEFLOW_GPU_LOCK_DIR/gpu-0.lock" sh -c "touch '$tmp/held'; while [ ! -e '$tmp/stop' ]; do sleep 0.1; done" &
holder=$!
for _ in $(seq 100); do [ -e "$tmp/held" ] && break; sleep 0.1; done

# refuses SCRIPT ARGS...: exits 75 before anything is written to OUT, and
# says which GPU, which lock file and who holds it.
refuses() {
    local name=$1 rc
    shift
    bash "$@" > "$tmp/$name.out" 2>&1
    rc=$?
    sed 's/^/# /' "$tmp/$name.out"
    [ "$rc" -eq 75 ] &&
        grep -q "GPU 0 is held by another timed job ($MOEFLOW_GPU_LOCK_DIR/gpu-0.lock: another job pid 1)" "$tmp/$name.out" &&
        grep -q "step times are never measured on a shared GPU; refused" "$tmp/$name.out" &&
        [ ! -e "$tmp/out-$name" ]
}
refuses lane "$gpu/lane.sh" run "$tmp/out-lane"
tap_ok $? "lane.sh run refuses to train while another timed job holds the GPU"
refuses steady "$gpu/lane.sh" steady "$tmp/out-steady"
tap_ok $? "lane.sh steady refuses likewise"
refuses checkpoint "$gpu/checkpoint.sh" run "$tmp/out-checkpoint"
tap_ok $? "checkpoint.sh run refuses likewise"
refuses steady1 "$gpu/steady-1gpu.sh" run "$tmp/out-steady1"
tap_ok $? "steady-1gpu.sh run refuses likewise"

# The side-by-side mode of the lane is gone: asked for, it refuses.
touch "$tmp/stop"
wait "$holder"
LANE_PARALLEL=1 bash "$gpu/lane.sh" run "$tmp/out-parallel" > "$tmp/parallel.out" 2>&1
rc=$?
sed 's/^/# /' "$tmp/parallel.out"
[ "$rc" -ne 0 ] && grep -q "LANE_PARALLEL=1: the dialects' step times would share the GPUs; refused" "$tmp/parallel.out" &&
    [ ! -e "$tmp/out-parallel" ]
tap_ok $? "LANE_PARALLEL=1 is refused: two dialects are never timed side by side"

# With the GPU free, the lock is taken, its holder recorded, and a child
# of the holder (lane.sh run's own train) is the same job, not a second.
(
    . "$gpu/gpu-lock.sh"
    gpu_timed_lock "the test" &&
        grep -q "^the test pid $$ since " "$MOEFLOW_GPU_LOCK_DIR/gpu-0.lock" &&
        bash -c ". '$gpu/gpu-lock.sh'; gpu_timed_lock child" &&
        ! flock -n "$MOEFLOW_GPU_LOCK_DIR/gpu-0.lock" true
)
tap_ok $? "a free GPU is locked for the job and its children, and no one else"
rm -rf "$tmp"
