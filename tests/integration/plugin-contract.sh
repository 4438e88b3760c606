#!/bin/bash
# The measurement contract on a real local cluster, as a non-root user:
# the contract stage freezes the baseline; a retune changing one variable
# runs; two variables or an invariant are refused at sbatch with the diff
# and no job; a runtime mismatch fails the step and the node stays IDLE;
# 64 array tasks racing to freeze leave exactly one intact baseline.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
tap_plan 44
cluster_up contract

U=slurmtest
id $U >/dev/null 2>&1 || useradd -m $U
as_user() { runuser -u $U -- env SLURM_CONF="$SLURM_CONF" "$@"; }

# A study directory as 'moeflow gen' lays it out: declared contracts per candidate.
make_study() {
    local s=$WORK/$1
    mkdir -p "$s/contracts" "$s/logs"
    cat > "$s/contracts/baseline.json" <<'JSON'
{"environment": {"megatron": "core_v0.16.0", "transformer_engine": "2.8"},
 "hardware": {"gpu_model": "H100", "gpus": 16, "gpus_per_node": 8, "nvlink_domain": 8},
 "workload": {"model": "qwen3-30b-a3b", "seq_len": 4096, "mbs": 1, "gbs": 512, "data": "mock"},
 "semantics": {"routing": "dropless", "class": "training-equivalent"},
 "parallel": {"tp": 1, "cp": 1, "pp": 1, "vpp": 1, "ep": 16, "etp": 1, "dp": 16, "edp": 1},
 "tuning": {"dispatcher": "alltoall", "dispatcher_backend": "none", "ep_overlap": false,
            "manual_gc": false, "recompute_modules": []},
 "timing": {"warmup": 10, "screen_steps": 12, "window": [41, 50]}}
JSON
    sed 's/"alltoall", "dispatcher_backend": "none"/"flex", "dispatcher_backend": "hybridep"/' \
        "$s/contracts/baseline.json" > "$s/contracts/r1.json"
    sed 's/"ep_overlap": false/"ep_overlap": true/' "$s/contracts/r1.json" > "$s/contracts/r2.json"
    sed 's/"window": \[41, 50\]/"window": [31, 40]/; s/"alltoall"/"flex"/' \
        "$s/contracts/baseline.json" > "$s/contracts/inv.json"
    chown -R $U "$s"
    chmod -R go-w "$s"
    echo "$s"
}
cat > "$WORK/step.sh" <<'EOF'
#!/bin/bash
#SBATCH -N 1 -n 1
/usr/bin/srun -n 1 /bin/echo "step ran stage=$MOEFLOW_STAGE"
EOF
chmod 0755 "$WORK/step.sh"
cd "$WORK" || exit 1
S=$(make_study study)
export NCCL_VERSION=2.21.5   # what the "container" advertises

as_user sbatch -o "$S/logs/%j.out" --moe-study="$S" --moe-stage=retune --moe-candidate=r1 \
    step.sh > early.out 2>&1
tap_ok $(( $? == 0 )) "a retune before the contract stage is refused"
ok "it says to run the contract stage first" has early.out "nothing is frozen yet: run the contract stage first"

job=$(as_user sbatch --parsable -o "$S/logs/%j.out" --moe-study="$S" --moe-stage=contract step.sh)
wait_job "$job"
ok "the contract stage job completes" job_completed "$job"
ok "it froze the baseline, owned by the user, mode 0444" \
    test "$(stat -c '%a %U' "$S/contract/frozen.json" 2>&1)" = "444 $U"
ok "the seal checks with sha256sum -c" sh -c "cd '$S/contract' && sha256sum -c frozen.json.sha256 >/dev/null"
ok "the frozen contract carries the container's NCCL version from the node" \
    has "$S/contract/frozen.json" '"container":\{"NCCL_VERSION":"2.21.5"\}'
ok "the frozen contract says where that came from" \
    has "$S/contract/frozen.json" '"environment.container":"environment"'
ok "the frozen contract carries the node's topology digest from hwloc" \
    has "$S/contract/frozen.json" '"node_topology_digest":"[0-9a-f]{64}".*"hardware.node_topology_digest":"hwloc"'
ok "the run recorded its own contract" test -f "$S/runs/$job/contract.json"
ok "the run record is the user's, mode 0444" test "$(stat -c '%a %U' "$S/runs/$job/contract.json")" = "444 $U"

job=$(as_user sbatch --parsable -o "$S/logs/%j.out" --moe-study="$S" --moe-stage=retune \
      --moe-candidate=r1 step.sh)
tap_ok $? "a retune changing one variable (dispatcher + backend) is accepted"
wait_job "$job"
ok "and runs to completion" job_completed "$job"
ok "its step ran" has "$S/logs/$job.out" '^step ran stage=retune$'
ok "the retune run is recorded" has "$S/runs/$job/contract.json" '"dispatcher":"flex"'

# Without --moe-layout, placement takes the candidate's layout (EP16) from
# its declared contract: one block of 16 ranks over the two 8-GPU nodes.
cat > "$WORK/place.sh" <<'EOF'
#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=8 --gpus-per-node=8
/usr/bin/srun /bin/sh -c '[ "$SLURM_PROCID" = 0 ] && echo "placement: $MOEFLOW_PLACEMENT"; true'
EOF
chmod 0755 "$WORK/place.sh"
place=$(as_user sbatch --parsable -o "$S/logs/%j.out" --moe-study="$S" --moe-stage=retune \
        --moe-candidate=r1 place.sh)
wait_job "$place"
ok "placement uses the candidate's EP16 layout from its declared contract" \
    has "$S/logs/$place.out" '^placement: [0-9]+/1 blocks of 16 ranks'

"$MOEFLOW_BIN" contract verify "$S/runs/$job" > verify.out 2>&1
ok "moeflow contract verify re-checks the run with its stage's rule" \
    has verify.out "allowed by rule retune-one-variable: changes one tuning variable: dispatcher"
ok "the run record is sealed (sha256sum -c accepts it)" \
    sh -c "cd '$S/runs/$job' && sha256sum -c contract.json.sha256 > /dev/null"
# An edit that keeps the canonical form must still be caught, on a copy so
# the winner below comes from the real record.
mkdir -p "$S/runs/edited" && cp "$S/runs/$job"/contract.json* "$S/runs/edited/"
sed -i 's/"ep_overlap":false/"ep_overlap":true/' "$S/runs/edited/contract.json"
# the study owner's, as the plugin writes it (a record of anyone else's is
# refused for that before its digest is read: rule 3)
chown -R --reference="$S/runs/$job" "$S/runs/edited"
"$MOEFLOW_BIN" contract verify "$S/runs/edited" > verify-edited.out 2>&1
tap_ok $(( $? == 0 )) "verify refuses a run record edited after the run"
ok "... and says so" has verify-edited.out "does not match its .sha256: it was edited after the run"
rm -rf "$S/runs/edited"
as_user "$MOEFLOW_BIN" contract winner "$S" "$S/runs/$job" > winner.out 2>&1
ok "the winning retune run is recorded as a winner by its user" has winner.out "^recorded winner "
job=$(as_user sbatch --parsable -o "$S/logs/%j.out" --moe-study="$S" --moe-stage=validate \
      --moe-candidate=r1 step.sh)
tap_ok $? "validate of the recorded winner is accepted"
wait_job "$job"
ok "and runs to completion" job_completed "$job"
as_user sbatch --moe-study="$S" --moe-stage=validate --moe-candidate=r2 step.sh > val2.out 2>&1
ok "validate of an unrecorded change is refused" has val2.out "refused by rule validate-equal"

before=$(squeue -h -o %i | wc -l)
as_user sbatch --moe-study="$S" --moe-stage=retune --moe-candidate=r2 step.sh > two.out 2>&1
tap_ok $(( $? == 0 )) "a retune changing two variables is refused at sbatch"
ok "the refusal names the rule" has two.out "refused by rule retune-one-variable"
ok "and prints the diff as path: frozen → requested" has two.out 'tuning\.ep_overlap: false → true'
ok "and the dispatcher change" has two.out 'tuning\.dispatcher: "alltoall" → "flex"'
as_user sbatch --moe-study="$S" --moe-stage=retune --moe-candidate=inv step.sh > inv.out 2>&1
tap_ok $(( $? == 0 )) "a changed invariant is refused at sbatch"
ok "by the invariant rule, naming the field" has inv.out 'rule invariant: timing.window is an invariant'
ok "no job was created by either refusal" test "$(squeue -h -o %i | wc -l)" = "$before"

# The node reports another NCCL than the frozen baseline: the step fails.
job=$(as_user sbatch --parsable -o "$S/logs/%j.out" --export=ALL,NCCL_VERSION=2.27.3 \
      --moe-study="$S" --moe-stage=retune --moe-candidate=r1 step.sh)
wait_job "$job"
ok "a runtime mismatch fails the job's step" hasnt "$S/logs/$job.out" '^step ran'
ok "the job says what changed on the node" \
    has "$S/logs/$job.out" 'environment\.container\.NCCL_VERSION: "2\.21\.5" → "2\.27\.3"'
ok "the batch step ran its script; only the srun step was failed" \
    has "$S/logs/$job.out" 'srun: error: .*task 0: Exited with exit code 1'

ok "steps of ordinary jobs are recorded under the plain job id, never as an array task" \
    test -z "$(ls "$S/runs" | grep _)"

# Contracts are written as the job user only: root's profile run of the
# same study passes the check, is not recorded, and the job says which study.
job=$(sbatch --parsable -o "$WORK/root-%j.out" --moe-study="$S" --moe-stage=profile step.sh)
wait_job "$job"
ok "a root job's run is not recorded, and the message names the study" \
    has "$WORK/root-$job.out" "moeflow: contract record at job start: $S: refusing to write contracts as root" &&
    test ! -e "$S/runs/$job"

# A job array is checked against every candidate the manifest lists: an
# unreadable manifest is named with its line and column, and no job exists.
M=$(make_study manifest)
printf '{"stages": [' > "$M/manifest.json"
as_user sbatch --array=0-3 --moe-study="$M" --moe-stage=retune step.sh > manifest.out 2>&1
tap_ok $(( $? == 0 )) "sbatch --array refuses a study whose manifest is not JSON"
ok "the message names the manifest, line and column" \
    has manifest.out "moeflow: contract check at submission: $M/manifest\.json:1:[0-9]+: "

# 64 array tasks all try to freeze a fresh study.
R=$(make_study race)
job=$(as_user sbatch --parsable -o "$R/logs/%A_%a.out" --array=0-63 --moe-study="$R" \
      --moe-stage=contract step.sh)
wait_job "$job" 120
ok "exactly one frozen baseline after 64 racing tasks" \
    test "$(ls "$R/contract" | tr '\n' ' ')" = "frozen.json frozen.json.sha256 "
ok "every one of the 64 tasks ran its step" \
    test "$(cat "$R"/logs/*.out | grep -c '^step ran stage=contract$')" = 64
ok "every task recorded a run contract" test "$(ls "$R/runs" | wc -l)" = 64

# The node's side of the check (user_init) logs to slurmd's log: an
# admin's hwloc_xml= and NVLink-domain map that cannot be read are named.
echo "required $CLUSTER_PLUGIN hwloc_xml=$WORK/missing.xml topology=$WORK/missing.yaml" \
    > "$LC_PREFIX/etc/plugstack.conf"
job=$(as_user sbatch --parsable -o "$S/logs/%j.out" --moe-study="$S" --moe-stage=retune \
      --moe-candidate=r1 step.sh)
wait_job "$job"
cat "$LC_PREFIX"/log/slurmd-n*.log > slurmd.log
ok "slurmd's log names the hwloc_xml= that the contract's node facts could not read" \
    has slurmd.log "moeflow: node topology for the contract: $WORK/missing\.xml: "
ok "... and the NVLink-domain map" \
    has slurmd.log "moeflow: node facts for the contract: $WORK/missing\.yaml: "

ok "every node is IDLE (none drained)" nodes_all_idle
ok "teardown leaves no cluster process behind" teardown_leaves_nothing
tap_done
