#!/bin/bash
# moeflow topo and moeflow place on saved inputs: the lines an admin reads,
# exit codes, and the hostfile for srun --distribution=arbitrary.
: "${MOEFLOW_SRCDIR:?run through make check}" "${MOEFLOW_BIN:?run through make check}"
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
D=$MOEFLOW_SRCDIR/tests/data
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
tap_plan 14

# g4dn.metal, 8 tasks on 12 cores per package: 3 cores (core i = PUs i, i+48) each.
"$MOEFLOW_BIN" topo --xml "$D/topology/mpibind-g4dnmetal.xml" --tasks 8 --cores 0-11,24-35 > "$T/topo"
tap_ok $? "topo plans g4dn.metal with half the cores"
has "$T/topo" '^task 0: gpu 0 pci 0000:18:00.0 numa 0 cpus 0-2,48-50$' &&
    has "$T/topo" '^task 7: gpu 7 pci 0000:f5:00.0 numa 1 cpus 33-35,81-83$' &&
    has "$T/topo" 'not this machine: plan only'
tap_ok $? "topo prints each task's GPU, PCI id, NUMA node and CPUs"
"$MOEFLOW_BIN" topo --xml "$D/topology/h200x2-vm.xml" --mode closest > "$T/h200"
has "$T/h200" '^task 1: gpu 1 pci 0000:00:07.0 numa 0 cpus 0-31$'
tap_ok $? "topo --mode closest on the H200 VM gives both tasks the one NUMA node"
"$MOEFLOW_BIN" topo --xml /nonexistent.xml > /dev/null 2> "$T/err"
[ $? -eq 2 ] && has "$T/err" '^moeflow: /nonexistent.xml'
tap_ok $? "topo with a missing XML exits 2 and names the file"
"$MOEFLOW_BIN" topo --tasks 0 > /dev/null 2>&1
tap_ok $(( $? != 1 )) "topo --tasks 0 is a usage error"
# This machine, with no cache where it is told to look: live, and it says why.
"$MOEFLOW_BIN" topo --cache-dir "$T/no-cache" > "$T/live" && [ ! -e "$T/no-cache" ] &&
    has "$T/live" "^node: this machine \(discovered live; cache not used: $T/no-cache: no cache yet\): "
tap_ok $? "topo --cache-dir without a cache discovers this machine live, says why, creates nothing"
"$MOEFLOW_BIN" topo --xml "$D/topology/h200x2-vm.xml" --cache-dir "$T" > /dev/null 2> "$T/err"
[ $? -eq 1 ] && has "$T/err" 'exclude each other'
tap_ok $? "topo --xml with --cache-dir is a usage error"

"$MOEFLOW_BIN" place --nodelist 'n[1-4]' --gpus-per-node 8 --topology "$D/domains/two-racks.yaml" \
    --layout tp=2,ep=16,etp=1 --hostfile "$T/hosts" > "$T/place"
tap_ok $? "place plans the interleaved racks"
has "$T/place" '^node n3 domain rack-a ranks 8-15$' &&
    has "$T/place" '^intra-domain blocks: 2 of 2 \(bound 2; Slurm.s node order: 0\)$'
tap_ok $? "place puts n3 after n1 and reports 2 of 2 blocks against Slurm's 0"
[ "$(uniq -c "$T/hosts" | awk '{ printf "%s%s:%s", s, $2, $1; s = " " }')" = "n1:8 n3:8 n2:8 n4:8" ]
tap_ok $? "the hostfile lists one host per rank in the new order"
"$MOEFLOW_BIN" place --nodelist 'n[1-4]' --gpus-per-node 8 --layout ep=16 > "$T/hgx"
has "$T/hgx" 'EP crosses nodes'
tap_ok $? "place says when node-local NVLink makes EP cross nodes"
"$MOEFLOW_BIN" place --nodelist 'n[1-4]' --gpus-per-node 8 --layout ep=12 > /dev/null 2> "$T/err"
[ $? -eq 2 ] && has "$T/err" 'etp\*ep\*pp = 12 does not divide the world size 32'
tap_ok $? "place refuses a layout that does not divide the world size"
# The example map: gb racks have 4 GPUs per node, hgx 8; no --gpus-per-node.
"$MOEFLOW_BIN" place --nodelist 'gb[001-008]' --topology "$MOEFLOW_SRCDIR/etc/moeflow-topology.yaml" \
    --layout tp=4,ep=8,etp=1 > "$T/gb"
has "$T/gb" '^world: 32 ranks on 8 nodes x 4 GPUs'
tap_ok $? "place takes gpus_per_node from the map"
"$MOEFLOW_BIN" place --nodelist 'gb001,hgx01' --topology "$MOEFLOW_SRCDIR/etc/moeflow-topology.yaml" \
    --layout tp=4 > /dev/null 2> "$T/err"
[ $? -eq 2 ] && has "$T/err" 'node hgx01: GPU counts differ; pass --gpus-per-node'
tap_ok $? "place refuses to guess when the map's GPU counts differ"
tap_done
