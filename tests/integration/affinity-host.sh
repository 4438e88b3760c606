#!/bin/bash
# Affinity on this machine's real topology (no hwloc_xml=), with the admin
# pinning the mode (affinity=closest affinity_override=deny).  This host has
# no GPU, so the real binding path cannot run here: the checks are that a
# step without a GPU, or with fake GPUs hwloc cannot find, keeps Slurm's
# binding (its real CPU mask is untouched) and says why.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
tap_plan 7

cluster_up host --plugstack-args "affinity=closest affinity_override=deny"
cd "$WORK" || exit 1
cat > show.sh <<'EOS'
#!/bin/sh
mask=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
echo "task=$SLURM_LOCALID local=$LOCAL_RANK cpus=$MOEFLOW_CPUSET mask=$mask skip=$MOEFLOW_AFFINITY_SKIPPED"
EOS
chmod +x show.sh
# task/none: Slurm binds nothing, so a task's mask is the whole machine's.
host_mask=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)

sbatch --wrap true --moe-affinity=exclusive > deny.out 2>&1
[ $? -ne 0 ] && has deny.out 'administrator fixed the mode to closest \(affinity_override=deny\)'
tap_ok $? "with affinity_override=deny, sbatch refuses another mode"
job=$(run_batch --wrap true --moe-affinity=closest,verbose)
tap_ok $? "the admin's own mode with ,verbose is accepted (job $job)"

timeout 60 srun -N1 -n1 --moe-affinity=verbose ./show.sh > nogpu.out 2> nogpu.err
tap_ok $? "a step without GPUs runs"
has nogpu.out "skip=the step has no GPU" && has nogpu.out "mask=$host_mask " &&
    has nogpu.err "task 0: Slurm's binding stays: the step has no GPU"
tap_ok $? "without a GPU the mask stays $host_mask and verbose says why"

# The fake GPUs are in SLURM_STEP_GPUS, but hwloc finds no such PCI device;
# the fake node's cores (CPUs=8) may not exist here either.  Either way the
# plugin must keep Slurm's binding and give the reason.
timeout 60 srun -N1 -n2 --gres=gpu:2 ./show.sh > fake.out 2>&1
tap_ok $? "a step with GPUs hwloc cannot see runs"
[ "$(grep -cE "mask=$host_mask skip=(local task 0: GPU 0 does not exist \(node has 0\)|core [0-9]+ of '[0-9,-]+' is not on this node \(2 cores\))" fake.out)" = 2 ] &&
    [ "$(grep -c 'local=[01] cpus= ' fake.out)" = 2 ]
rc=$?
[ $rc = 0 ] || diag < fake.out
tap_ok $rc "unknown GPUs leave every task's mask alone and LOCAL_RANK is set"
ok "teardown leaves nothing behind" teardown_leaves_nothing
tap_done
