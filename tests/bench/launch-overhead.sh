#!/bin/bash
# make bench: wall time of `srun -N4 -n32 --gpus-per-node=8 true` with the
# plugin active against the same cluster with an empty plugstack.conf, in two
# set-ups: the node topology from the admin's hwloc_xml=, and without it
# (the plugin's per-boot topology cache, which the first step fills).
# slurmstepd and srun read plugstack.conf at every launch, so the three
# configurations alternate on one cluster, and each rep's ratio is taken
# against the empty run of the same rep.  Target: median ratio <= 1.05.
#
# MOEFLOW_BENCH_REPS (default 21) sets the reps.  MOEFLOW_BENCH_CACHE_DIR
# sets the cache_dir= of the automatic case (default: a private directory of
# the cluster); set it empty to leave the key out, e.g. to measure a plugin
# from before the cache.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
# exit 77: make bench lists it as skipped (it needs a cluster)
[ "$(id -u)" = 0 ] || { echo "launch-overhead: SKIP (needs root to start the test cluster)"; exit 77; }
D=$MOEFLOW_SRCDIR/tests/data
# plugstack.conf splits at blanks: the admin's files from a blank-free copy
admin_files "$D/domains/two-racks.yaml" "$D/topology/mpibind-g4dnmetal.xml" || exit 1
DOMAINS="topology=$ADMIN/two-racks.yaml"
if [ "${MOEFLOW_BENCH_CACHE_DIR-unset}" = "" ]; then
    cluster_up bench --plugstack-args "$DOMAINS" --host-cache > /dev/null
elif [ -n "${MOEFLOW_BENCH_CACHE_DIR:-}" ]; then
    cluster_up bench --plugstack-args "$DOMAINS cache_dir=$MOEFLOW_BENCH_CACHE_DIR" > /dev/null
else
    cluster_up bench --plugstack-args "$DOMAINS" > /dev/null   # cache_dir=PREFIX/topo-cache
fi
REPS=${MOEFLOW_BENCH_REPS:-21}
plugin_line=$(cat "$LC_PREFIX/etc/plugstack.conf")
xml_line="$plugin_line hwloc_xml=$ADMIN/mpibind-g4dnmetal.xml"
auto_line=$plugin_line
cache_dir=$(sed -n 's/.* cache_dir=\([^ ]*\).*/\1/p' <<< "$plugin_line")
LAYOUT=--moe-layout=tp=2,ep=16,etp=1

one() {  # one PLUGSTACK_LINE [srun options]: prints the wall time in ms
    local t0 t1
    echo "$1" > "$LC_PREFIX/etc/plugstack.conf"; shift
    t0=$(date +%s%N)
    srun -N4 -n32 --gpus-per-node=8 "$@" true > /dev/null 2>&1 || echo "srun failed" >&2
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000000 ))
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# Warm up every path once; the automatic case fills its cache here.
one "" > /dev/null
one "$xml_line" "$LAYOUT" > /dev/null
one "$auto_line" "$LAYOUT" > /dev/null
: > "$WORK/off"; : > "$WORK/xml"; : > "$WORK/auto"; : > "$WORK/rx"; : > "$WORK/ra"
for _ in $(seq "$REPS"); do
    x=$(one "$xml_line" "$LAYOUT")
    o=$(one "")
    a=$(one "$auto_line" "$LAYOUT")
    echo "$x" >> "$WORK/xml"; echo "$o" >> "$WORK/off"; echo "$a" >> "$WORK/auto"
    awk -v a="$x" -v b="$o" 'BEGIN { printf "%.4f\n", a / b }' >> "$WORK/rx"
    awk -v a="$a" -v b="$o" 'BEGIN { printf "%.4f\n", a / b }' >> "$WORK/ra"
done
stats() { echo "median $(median < "$1") ms (min $(sort -n "$1" | head -1))"; }
echo "launch overhead: srun -N4 -n32 --gpus-per-node=8 true, $REPS runs each, alternating"
echo "  plugin disabled:            $(stats "$WORK/off")"
echo "  plugin, hwloc_xml=:         $(stats "$WORK/xml")"
echo "  plugin, no hwloc_xml:       $(stats "$WORK/auto")${cache_dir:+ (cache_dir=$cache_dir)}"
if [ -n "$cache_dir" ]; then
    echo "  cache: $(ls -l "$cache_dir" 2>&1 | tail -n +2 | tr -s ' ' | cut -d' ' -f1,3,5,9 | tr '\n' ' ')"
fi
echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (4 slurmd share them)"
verdict() { awk -v r="$1" 'BEGIN { print (r <= 1.05) ? "ok" : "MISSED" }'; }
rx=$(median < "$WORK/rx") ra=$(median < "$WORK/ra")
echo "  ratio, hwloc_xml=:   median $rx (target <= 1.05)  $(verdict "$rx")"
echo "  ratio, no hwloc_xml: median $ra (target <= 1.05)  $(verdict "$ra")"
[ "$(verdict "$rx")" = ok ] && [ "$(verdict "$ra")" = ok ]
