#!/bin/sh
# make bench: what the per-boot topology cache saves each job step on this
# machine, against live hwloc discovery (tests/bench/topo_cache_bench.c).
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
"$MOEFLOW_BUILDDIR/tests/bench/topo_cache_bench" "$d/cache" "${MOEFLOW_BENCH_REPS:-21}"
