#!/bin/bash
# Faults in the admin's node description on a real local Slurm cluster:
# the NVLink-domain map is missing, corrupt, or names nodes the job does not
# have; the hwloc XML is unreadable or corrupt.  The plugin warns and leaves
# ranks or binding as Slurm made them, or, under --moe-placement=nvlink-strict,
# fails the step; the message names the file and the cause; nodes stay IDLE.
# slurmstepd reads plugstack.conf per step, so each case rewrites it.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
# Nodes pass through COMPLETING for a moment after a step: wait up to 10 s.
idle_soon() {
    local i
    for i in $(seq 50); do nodes_all_idle > /dev/null 2>&1 && return 0; sleep 0.2; done
    nodes_all_idle
}
tap_plan 20

D=$MOEFLOW_SRCDIR/tests/data
F=$(mktemp -d /tmp/mfftopo.XXXXXX)
chmod 0755 "$F"
cluster_up topo --plugstack-args "topology=$D/domains/two-racks.yaml"
trap 'cluster_down; rm -rf "$F"' EXIT
U=slurmtest
id $U >/dev/null 2>&1 || useradd -m $U
as_user() { runuser -u $U -- env SLURM_CONF="$SLURM_CONF" "$@"; }
cd "$WORK" || exit 1
cat > show.sh <<'EOS'
#!/bin/sh
echo "node=$SLURMD_NODENAME task=$SLURM_LOCALID rank=$RANK dom=$MOEFLOW_NVLINK_DOMAIN skip=$MOEFLOW_AFFINITY_SKIPPED"
EOS
chmod +x show.sh
STEP="srun -N4 --ntasks-per-node=8 --gres=gpu:8"
conf() { echo "required $MOEFLOW_PLUGIN $*" > "$LC_PREFIX/etc/plugstack.conf"; }

printf 'domains:\n  - name: rack-a\n    nodes: "n[1,3]\n' > "$F/corrupt.yaml"
printf 'domains:\n  - name: rack-a\n    nodes: n[1,3\n' > "$F/typo.yaml"
printf 'domains:\n  - name: rack-x\n    nodes: gb[001-004]\n' > "$F/foreign.yaml"

# --- the map is missing -------------------------------------------------
conf "topology=$F/missing.yaml"
timeout 60 $STEP --moe-layout=tp=2,ep=16,etp=1 ./show.sh > m.out 2> m.err
tap_ok $? "missing map: the step still runs (placement is an optimisation)"
ok "every task ran, in Slurm's own rank order" test "$(grep -c '^node=' m.out)" = 32
timeout 60 $STEP --moe-layout=tp=2,ep=16,etp=1 --moe-placement=nvlink-strict ./show.sh \
    > ms.out 2> ms.err
[ $? -ne 0 ]; tap_ok $? "missing map under nvlink-strict: the step fails"
ok "the message names the file and says it does not exist" \
    has ms.err "moeflow: nvlink-strict: .*$F/missing.yaml.*No such file"
ok "the node is IDLE" idle_soon

# --- the map is corrupt ---------------------------------------------------
conf "topology=$F/corrupt.yaml"
timeout 60 $STEP --moe-layout=tp=2,ep=16,etp=1 --moe-placement=nvlink-strict ./show.sh \
    > c.out 2> c.err
[ $? -ne 0 ]; tap_ok $? "corrupt map under nvlink-strict: the step fails"
ok "the message gives the file, line and column" has c.err "moeflow: nvlink-strict: $F/corrupt.yaml:[0-9]+:[0-9]+"
timeout 60 $STEP --moe-layout=tp=2,ep=16,etp=1 ./show.sh > c2.out 2> c2.err
tap_ok $? "corrupt map, default mode: the step runs"

# --- the map names none of the job's nodes ---------------------------------
conf "topology=$F/foreign.yaml"
timeout 60 $STEP --moe-layout=tp=2,ep=16,etp=1 --moe-placement=nvlink-strict ./show.sh \
    > f.out 2> f.err
[ $? -ne 0 ]; tap_ok $? "a map of other nodes under nvlink-strict: the step fails"
ok "the message says the map names none of the step's nodes" \
    has f.err "moeflow: nvlink-strict: .*$F/foreign.yaml names none of this step's nodes"
conf "topology=$F/typo.yaml"
timeout 60 $STEP --moe-layout=tp=2,ep=16,etp=1 --moe-placement=nvlink-strict ./show.sh \
    > t.out 2> t.err
[ $? -ne 0 ]; tap_ok $? "a hostlist typo in the map (n[1,3) under nvlink-strict: the step fails"
ok "the message names the typo: its brackets do not pair up" \
    has t.err "moeflow: nvlink-strict: $F/typo.yaml:2:5: domain 'rack-a': 'n\\[1,3' is not a Slurm hostlist: its brackets do not pair up"
timeout 60 $STEP --moe-layout=tp=2,ep=16,etp=1 ./show.sh > t2.out 2> t2.err
tap_ok $? "the same map, default mode: the step runs (placement skipped)"
ok "the node is IDLE" idle_soon

# --- the hwloc XML is unreadable, or not XML ------------------------------
cp "$D/topology/mpibind-g4dnmetal.xml" "$F/node.xml"
chmod 0600 "$F/node.xml"
conf "hwloc_xml=$F/node.xml"
as_user timeout 60 srun -N1 --ntasks-per-node=2 --gres=gpu:8 --moe-affinity=closest ./show.sh \
    > x.out 2> x.err
tap_ok $? "unreadable hwloc XML: the step runs with Slurm's binding"
ok "each task is told why its binding was left alone" \
    test "$(grep -c "skip=.*$F/node.xml.*Permission denied (plugstack hwloc_xml= must be readable" x.out)" = 2
cat x.out x.err | diag
printf '<?xml version="1.0"?>\n<topology><object type=' > "$F/node.xml"
chmod 0644 "$F/node.xml"
timeout 60 srun -N1 --ntasks-per-node=2 --gres=gpu:8 --moe-affinity=closest ./show.sh \
    > x2.out 2> x2.err
tap_ok $? "corrupt hwloc XML: the step runs with Slurm's binding"
ok "each task is told the XML could not be read" test "$(grep -c "skip=.*$F/node.xml" x2.out)" = 2
ok "every node is IDLE (none drained)" idle_soon
ok "teardown leaves no cluster process behind" teardown_leaves_nothing
tap_done
