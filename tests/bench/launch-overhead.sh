#!/bin/bash
# make bench: median wall time of `srun -N4 --ntasks-per-node=8` with the
# plugin active (affinity planned from an XML, placement with a layout)
# against the same cluster with an empty plugstack.conf.  slurmstepd and srun
# read plugstack.conf at every launch, so the two runs alternate on one
# cluster.  Target: ratio <= 1.05.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "launch-overhead: SKIP (needs root)"; exit 0; }
D=$MOEFLOW_SRCDIR/tests/data
ARGS="hwloc_xml=$D/topology/mpibind-g4dnmetal.xml topology=$D/domains/two-racks.yaml"
cluster_up bench --plugstack-args "$ARGS" > /dev/null
REPS=${MOEFLOW_BENCH_REPS:-21}
active=$(cat "$LC_PREFIX/etc/plugstack.conf")

one() {  # one PLUGSTACK_LINE [srun options]: prints the wall time in ms
    local t0 t1
    echo "$1" > "$LC_PREFIX/etc/plugstack.conf"; shift
    t0=$(date +%s%N)
    srun -N4 --ntasks-per-node=8 --gres=gpu:8 "$@" true > /dev/null 2>&1 || echo "srun failed" >&2
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000000 ))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

one "" > /dev/null   # warm up both paths once
one "$active" --moe-layout=tp=2,ep=16,etp=1 > /dev/null
: > "$WORK/on"; : > "$WORK/off"
for _ in $(seq "$REPS"); do
    one "$active" --moe-layout=tp=2,ep=16,etp=1 >> "$WORK/on"
    one "" >> "$WORK/off"
done
on=$(median < "$WORK/on"); off=$(median < "$WORK/off")
on_min=$(sort -n "$WORK/on" | head -1); off_min=$(sort -n "$WORK/off" | head -1)
echo "launch overhead: srun -N4 --ntasks-per-node=8, $REPS runs each"
echo "  plugin active:   median $on ms (min $on_min)"
echo "  plugin disabled: median $off ms (min $off_min)"
echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (4 slurmd share them)"
awk -v a="$on" -v b="$off" 'BEGIN { printf "  ratio: %.3f (target <= 1.05)\n", a / b }'
