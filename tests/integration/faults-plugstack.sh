#!/bin/bash
# Bad plugstack arguments that reach slurmd and slurmstepd (the admin's
# plugstack.conf is wrong on the nodes; the submitting host's is fine).  The
# plugin must not take the node down: slurmd and the batch step only log,
# each srun task fails with a message that quotes the bad argument and
# says where to fix it, and the node stays IDLE.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
# Nodes pass through COMPLETING for a moment after a step: wait up to 10 s.
idle_soon() {
    local i
    for i in $(seq 50); do nodes_all_idle > /dev/null 2>&1 && return 0; sleep 0.2; done
    nodes_all_idle
}

tap_plan 12
cluster_up pstack --plugstack-args "affinity=closest enforce=sometimes"

# The submitting host reads a correct plugstack.conf.
sed "s|^PlugStackConfig=.*|PlugStackConfig=$WORK/good-plugstack.conf|" "$SLURM_CONF" > "$WORK/good-slurm.conf"
echo "required $CLUSTER_PLUGIN affinity=closest" > "$WORK/good-plugstack.conf"
cat > "$WORK/job.sh" <<'EOF2'
#!/bin/bash
#SBATCH -N 1 -n 1
echo "batch ran"
# CLIENT_CONF: the srun client reads a correct plugstack.conf, so that only
# slurmstepd meets the bad one; unset, srun reads the node's.
SLURM_CONF=${CLIENT_CONF:-$SLURM_CONF} /usr/bin/srun -n 1 /bin/echo "step ran"
EOF2
chmod 0755 "$WORK/job.sh"
cd "$WORK" || exit 1
touch "$WORK/study.yaml"   # strict mode: a stage needs --moe-study

job=$(SLURM_CONF=$WORK/good-slurm.conf sbatch --parsable -o "$WORK/%j.out" \
      --export=ALL,CLIENT_CONF="$WORK/good-slurm.conf" --moe-stage=fit --moe-study="$WORK/study.yaml" job.sh)
tap_ok $? "the submission passes (the submitting host's plugstack.conf is fine)"
wait_job "$job"
ok "the batch step still runs: failing it would drain the node" has "$WORK/$job.out" '^batch ran$'
ok "slurmstepd fails the srun task instead of running it misconfigured" \
    hasnt "$WORK/$job.out" '^step ran$'
ok "the message quotes the bad argument and the valid values" \
    has "$WORK/$job.out" "slurmstepd.*moeflow: plugstack.conf: enforce=sometimes: bad value for plugstack key 'enforce': valid values are strict, warn"
ok "srun reports the task's failure" has "$WORK/$job.out" 'srun: error: .*task 0: Exited with exit code 1'
ok "the node is IDLE, not drained" idle_soon

# srun on the node reads the same bad plugstack.conf: it refuses to start.
job=$(SLURM_CONF=$WORK/good-slurm.conf sbatch --parsable -o "$WORK/%j.out" --moe-stage=fit --moe-study="$WORK/study.yaml" job.sh)
wait_job "$job"
ok "srun reading the bad plugstack.conf refuses to launch" hasnt "$WORK/$job.out" '^step ran$'
ok "and says which argument is wrong" \
    has "$WORK/$job.out" "srun: error: moeflow: plugstack.conf: enforce=sometimes: bad value"

# A job that uses no moeflow option meets the same bad configuration.
job=$(SLURM_CONF=$WORK/good-slurm.conf sbatch --parsable -o "$WORK/%j.out" \
      --export=ALL,CLIENT_CONF="$WORK/good-slurm.conf" job.sh)
wait_job "$job"
ok "a job without --moe options: the batch step runs" has "$WORK/$job.out" '^batch ran$'
ok "and its task is told about the bad plugstack.conf too" \
    has "$WORK/$job.out" "moeflow: plugstack.conf: enforce=sometimes"
ok "every node is IDLE (none drained)" idle_soon
ok "teardown leaves no cluster process behind" teardown_leaves_nothing
tap_done
