#!/bin/bash
# CPU affinity and NVLink rank placement on a real local Slurm cluster.
# The cluster's fake nodes claim 8 CPUs and 8 GPUs each while this machine
# has 2 cores and no GPU, so the plan is checked through the variables the
# plugin exports (MOEFLOW_CPUSET, RANK, ...) with a g4dn.metal hwloc XML
# given through the plugstack argument hwloc_xml=; with a foreign XML the
# plugin must plan without binding, which the tasks' real masks confirm.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
tap_plan 14

D=$MOEFLOW_SRCDIR/tests/data
admin_files "$D/topology/mpibind-g4dnmetal.xml" "$D/domains/two-racks.yaml" || exit 1
cluster_up affinity --plugstack-args \
    "hwloc_xml=$ADMIN/mpibind-g4dnmetal.xml topology=$ADMIN/two-racks.yaml"
cd "$WORK" || exit 1
cat > show.sh <<'EOS'
#!/bin/sh
mask=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
echo "node=$SLURMD_NODENAME task=$SLURM_LOCALID rank=$RANK local=$LOCAL_RANK ws=$WORLD_SIZE lws=$LOCAL_WORLD_SIZE master=$MASTER_ADDR port=$MASTER_PORT dom=$MOEFLOW_NVLINK_DOMAIN cpus=$MOEFLOW_CPUSET pci=$MOEFLOW_GPU_PCI numa=$MOEFLOW_NUMA mask=$mask skip=$MOEFLOW_AFFINITY_SKIPPED"
EOS
chmod +x show.sh
STEP="srun -N4 --ntasks-per-node=8 --gres=gpu:8"

# n1,n3 are rack-a and n2,n4 rack-b; B = max(2*1, 1*16) = 16 ranks = 2 nodes.
timeout 60 $STEP --moe-layout=tp=2,ep=16,etp=1 ./show.sh > place.out 2> place.err
tap_ok $? "a 4-node step with --moe-layout runs"
ranks_of() {  # "min-max" of the RANKs on node $1
    sed -n "s/^node=$1 .* rank=\([0-9]*\) .*/\1/p" place.out | sort -n | sed -n '1p;$p' | paste -sd-
}
blocks="$(ranks_of n1) $(ranks_of n3) $(ranks_of n2) $(ranks_of n4)"
[ "$blocks" = "0-7 8-15 16-23 24-31" ]
tap_ok $? "RANK blocks are {n1,n3} then {n2,n4} (got: $blocks)"
[ "$(grep -c 'ws=32 lws=8 master=n1 ' place.out)" = 32 ]
tap_ok $? "every task sees WORLD_SIZE=32, LOCAL_WORLD_SIZE=8, MASTER_ADDR=n1"
[ "$(grep -E 'node=n[13] .*dom=rack-a ' place.out | wc -l)" = 16 ] &&
    [ "$(grep -E 'node=n[24] .*dom=rack-b ' place.out | wc -l)" = 16 ]
tap_ok $? "MOEFLOW_NVLINK_DOMAIN names each node's rack"
awk '{ split($2, a, "="); split($4, b, "="); if (a[2] != b[2]) bad = 1 } END { exit bad }' place.out
tap_ok $? "LOCAL_RANK equals the local task id"

# Options given to sbatch reach the job's steps (SLURM_SPANK_ forwarding).
job=$(run_batch -N4 --ntasks-per-node=8 --gres=gpu:8 --moe-layout=tp=2,ep=16,etp=1 \
    -o batch.out --wrap "srun ./show.sh")
cp place.out place.srun
sed -n '/^node=/p' batch.out > place.out
blocks="$(ranks_of n1) $(ranks_of n3) $(ranks_of n2) $(ranks_of n4)"
cp place.srun place.out
[ "$blocks" = "0-7 8-15 16-23 24-31" ]
tap_ok $? "sbatch --moe-layout places the ranks of srun inside the job (job $job: $blocks)"

# The step has cores 0-7 = g4dn package 0: GPUs 0-3 tasks split them 2 cores
# (4 PUs: core i is PUs i, i+48) each; GPUs 4-7 sit on package 1.
[ "$(grep -c 'task=0 .*cpus=0-1,48-49 pci=0000:18:00.0 numa=0 ' place.out)" = 4 ] &&
    [ "$(grep -c 'task=3 .*cpus=6-7,54-55 pci=0000:36:00.0 numa=0 ' place.out)" = 4 ]
tap_ok $? "tasks next to GPUs 0-3 get 2 disjoint cores each from the step's 8"
[ "$(grep -c "task=5 .*skip=none of the step's CPUs is near GPU 5" place.out)" = 4 ]
tap_ok $? "tasks next to GPUs 4-7 keep Slurm's binding and say why"
# With a foreign XML nothing is bound: the masks equal those of --moe-affinity=none.
timeout 60 $STEP --moe-affinity=none ./show.sh > none.out 2>&1
diff <(sed 's/.* mask=\([^ ]*\) .*/\1/' place.out | sort) \
     <(sed 's/.* mask=\([^ ]*\) .*/\1/' none.out | sort) | diag
tap_ok "${PIPESTATUS[0]}" "a plan from a foreign XML leaves the real CPU masks alone"

# Strict mode with a layout no domain can hold (B = 32 > 16 per rack).
timeout 60 $STEP --moe-layout=ep=32,etp=1 --moe-placement=nvlink-strict ./show.sh \
    > strict.out 2> strict.err
rc=$?
[ $rc -ne 0 ] && has strict.err 'nvlink-strict: the EP group of ranks 0-31 spans NVLink domains rack-a \(n1\) and rack-b'
tap_ok $? "nvlink-strict fails the step and names the group and the domains (rc=$rc)"
wait_job "$(squeue -h -o %i | head -1)" 10 2>/dev/null
ok "after the failed step every node is IDLE" nodes_all_idle

# A batch job carries the same options: its batch step must not fail.
job=$(run_batch --wrap "true" -N1 --moe-layout=ep=32 --moe-placement=nvlink-strict)
state=$(scontrol show job "$job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
nodes_all_idle
tap_ok $? "the batch step never fails and leaves the nodes IDLE (job $job: ${state:-gone})"

# Bad values are refused at submission, before a job exists.
sbatch --wrap true --moe-affinity=tight > sub.out 2>&1
[ $? -ne 0 ] && has sub.out "moe-affinity=tight"
tap_ok $? "sbatch refuses --moe-affinity=tight with a message"

ok "teardown leaves nothing behind" teardown_leaves_nothing
tap_done
