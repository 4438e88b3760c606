#!/bin/bash
# SECURITY.md claims that need slurmstepd: the plugin reads and writes the
# study with the job user's rights, not root's, and a FIFO planted in the
# study cannot hang sbatch or slurmstepd.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
# Nodes pass through COMPLETING for a moment after a step: wait up to 10 s.
idle_soon() {
    local i
    for i in $(seq 50); do nodes_all_idle > /dev/null 2>&1 && return 0; sleep 0.2; done
    nodes_all_idle
}

tap_plan 9
cluster_up sec

U=slurmtest
id $U >/dev/null 2>&1 || useradd -m $U
as_user() { runuser -u $U -- env SLURM_CONF="$SLURM_CONF" "$@"; }
make_study() {  # make_study DIR: a study as 'moeflow gen' lays it out
    mkdir -p "$1/contracts"
    cat > "$1/contracts/baseline.json" <<'JSON'
{"environment": {"megatron": "core_v0.16.0"}, "hardware": {"gpu_model": "H100", "gpus": 16},
 "workload": {"model": "qwen3-30b-a3b", "mbs": 1}, "semantics": {"routing": "dropless"},
 "parallel": {"tp": 1, "ep": 16}, "tuning": {"dispatcher": "alltoall", "ep_overlap": false},
 "timing": {"window": [41, 50]}}
JSON
    chown -R $U "$1"
    chmod -R go-w "$1"
}
cat > "$WORK/step.sh" <<'EOF2'
#!/bin/bash
#SBATCH -N 1 -n 1
/usr/bin/srun -n 1 /bin/echo "step ran stage=$MOEFLOW_STAGE"
EOF2
chmod 0755 "$WORK/step.sh"
cd "$WORK" || exit 1

# 1. The task-start check runs as the user: a study the user cannot reach
#    (its parent became root-only after submission) fails the step; running
#    as root, the plugin would have read and written it.
mkdir -p "$WORK/gate"
chmod 0755 "$WORK/gate"
S=$WORK/gate/study
make_study "$S"
job=$(as_user sbatch --parsable --hold -o "$WORK/gate-%j.out" --moe-study="$S" \
      --moe-stage=contract step.sh)
tap_ok $? "a contract-stage job is accepted while the study is reachable"
chmod 0700 "$WORK/gate"
scontrol release "$job"
wait_job "$job"
chmod 0755 "$WORK/gate"
ok "once the study is root-only, the step is failed" hasnt "$WORK/gate-$job.out" '^step ran'
ok "with the user's 'Permission denied', i.e. the plugin did not use root's rights" \
    has "$WORK/gate-$job.out" 'moeflow: .*Permission denied'
ok "nothing was frozen on the user's behalf by root" test ! -e "$S/contract/frozen.json"

# 2. The same job, study reachable: the files are the user's, mode 0444.
job=$(as_user sbatch --parsable -o "$WORK/ok-%j.out" --moe-study="$S" --moe-stage=contract step.sh)
wait_job "$job"
ok "frozen.json is created by the job user, mode 0444" \
    test "$(stat -c '%a %U' "$S/contract/frozen.json" 2>&1)" = "444 $U"

# 3. A FIFO in place of the declared contract: sbatch answers at once.
F=$WORK/fifo
make_study "$F"
rm "$F/contracts/baseline.json"
mkfifo "$F/contracts/baseline.json"
chown $U "$F/contracts/baseline.json"
timeout 30 runuser -u $U -- env SLURM_CONF="$SLURM_CONF" sbatch --moe-study="$F" \
    --moe-stage=contract step.sh > fifo.out 2>&1
rc=$?
[ $rc -ne 124 ] && [ $rc -ne 0 ]; tap_ok $? "a FIFO as the declared contract: sbatch refuses at once (rc $rc)"
ok "and says it is not a regular file" has fifo.out "not a regular file"

ok "every node is IDLE (none drained)" idle_soon
ok "teardown leaves no cluster process behind" teardown_leaves_nothing
tap_done
