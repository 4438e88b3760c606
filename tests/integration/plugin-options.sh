#!/bin/bash
# The plugin's options on a real local Slurm cluster: sbatch/srun accept and
# reject them, the values reach the batch step and every srun step on two
# nodes (also with --export=NONE and for a non-root user), and no node drains.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root

tap_plan 35
cluster_up opts

# A job script that prints, per step, what the plugin exported.  The batch
# step sets MOEFLOW_STAGE=inherited before srun: only the plugin's own
# task_init can turn it back into the submitted value in the srun tasks.
cat > "$WORK/job.sh" <<'EOF'
#!/bin/bash
#SBATCH -N 2 --gpus-per-node=8
echo "batch node=$SLURMD_NODENAME stage=${MOEFLOW_STAGE:-unset} study=${MOEFLOW_STUDY:-unset} cand=${MOEFLOW_CANDIDATE:-unset}"
export MOEFLOW_STAGE=inherited
/usr/bin/srun -N 2 --ntasks-per-node=1 /bin/sh -c \
  'echo "step node=$SLURMD_NODENAME stage=${MOEFLOW_STAGE:-unset} cand=${MOEFLOW_CANDIDATE:-unset}"'
EOF
cp "$WORK/job.sh" "$WORK/job-export-none.sh"
sed "s|^#SBATCH -N 2 --gpus-per-node=8\$|#SBATCH -N 2 --gpus-per-node=8 --moe-stage=validate --moe-study=$WORK/study.yaml --moe-candidate=c07|" \
    "$WORK/job.sh" > "$WORK/job-directive.sh"
chmod 0755 "$WORK"/*.sh
# A study file, not a generated study directory: no contract to enforce here
# (tests/integration/plugin-contract.sh covers that).
touch "$WORK/study.yaml"
cd "$WORK" || exit 1

# --- help ---------------------------------------------------------------
sbatch --help > help.out 2>&1
ok "sbatch --help lists --moe-stage" has help.out '--moe-stage=STAGE'
ok "sbatch --help lists --moe-study" has help.out '--moe-study=PATH'
ok "sbatch --help lists --moe-candidate" has help.out '--moe-candidate=ID'
ok "... and says where ids come from, with no made-up example id" \
    has help.out "candidates\\.tsv" && hasnt help.out 'c03'

# --- command-line options reach batch step and srun tasks on two nodes ----
job=$(run_batch -o "$WORK/cli-%j.out" --moe-stage=retune --moe-study="$WORK/study.yaml" \
      --moe-candidate=c03 job.sh)
tap_ok $? "sbatch --moe-stage=retune job.sh runs to completion"
out=$WORK/cli-$job.out
ok "batch step sees the plugin's MOEFLOW_STAGE/STUDY/CANDIDATE" \
    has "$out" "^batch node=n1 stage=retune study=$WORK/study.yaml cand=c03\$"
ok "srun step on n1 sees stage=retune from the plugin" has "$out" '^step node=n1 stage=retune cand=c03$'
ok "srun step on n2 sees stage=retune from the plugin" has "$out" '^step node=n2 stage=retune cand=c03$'
ok "the job COMPLETED with exit code 0:0" job_completed "$job"

# --- #SBATCH directive ---------------------------------------------------
job=$(run_batch -o "$WORK/dir-%j.out" job-directive.sh)
tap_ok $? "#SBATCH --moe-stage=validate job runs"
ok "directive value reaches the batch step" has "$WORK/dir-$job.out" '^batch node=n1 stage=validate .* cand=c07$'
ok "directive value reaches both srun tasks" \
    test "$(grep -c '^step node=n[12] stage=validate cand=c07$' "$WORK/dir-$job.out")" = 2

# --- --export=NONE: only Slurm's SPANK copy of the options survives --------
job=$(run_batch -o "$WORK/none-%j.out" --export=NONE --moe-stage=profile --moe-candidate=p1 \
      --moe-study="$WORK/study.yaml" \
      job-export-none.sh)
tap_ok $? "sbatch --export=NONE --moe-stage=profile runs"
ok "--export=NONE: batch step sees stage=profile" has "$WORK/none-$job.out" '^batch node=n1 stage=profile '
ok "--export=NONE: both srun tasks see stage=profile" \
    test "$(grep -c '^step node=n[12] stage=profile cand=p1$' "$WORK/none-$job.out")" = 2

# --- a forwarded value sbatch never checked: the message names its variable --
fwd=SLURM_SPANK__SLURM_SPANK_OPTION_moeflow_moe_stage
job=$(run_batch -o "$WORK/fwd-%j.out" --export=ALL,$fwd=tune job.sh)
ok "a bad forwarded --moe-stage fails the srun tasks, and the message names $fwd" \
    has "$WORK/fwd-$job.out" "moeflow: $fwd: invalid --moe-stage 'tune'" &&
    hasnt "$WORK/fwd-$job.out" '^step node='

# --- bad values are refused at submission; no job is created ----------------
before=$(squeue -h -o %i | wc -l)
sbatch --moe-stage=tune job.sh > bad-stage.out 2>&1
tap_ok $(( $? == 0 )) "sbatch refuses --moe-stage=tune"
ok "the message names the value and lists every stage" \
    has bad-stage.out "moeflow: invalid --moe-stage 'tune': valid stages are contract\|fit\|scale\|profile\|retune\|validate"
srun -N1 --moe-stage=Retune /bin/true > bad-srun.out 2>&1
tap_ok $(( $? == 0 )) "srun refuses --moe-stage=Retune"
ok "srun's message comes from moeflow" has bad-srun.out "moeflow: invalid --moe-stage 'Retune'"
sbatch --moe-stage=fit --moe-study="$WORK/no-such-study" job.sh > bad-study.out 2>&1
tap_ok $(( $? == 0 )) "sbatch refuses a --moe-study path that does not exist"
ok "the message names the missing study" has bad-study.out "moeflow: --moe-study '$WORK/no-such-study': No such file or directory"
sbatch --moe-stage=fit --moe-candidate='../c1' job.sh > bad-cand.out 2>&1
tap_ok $(( $? == 0 )) "sbatch refuses a malformed --moe-candidate"
# Strict mode (the default): a stage after the contract needs a study to
# be checked against; the contract stage itself and jobs without a stage
# do not.
sbatch --moe-stage=retune --moe-candidate=c03 job.sh > nostudy.out 2>&1
tap_ok $(( $? == 0 )) "strict: sbatch refuses --moe-stage=retune without --moe-study"
ok "... saying what is missing" has nostudy.out "moeflow: --moe-stage=retune needs --moe-study=DIR"
srun -N1 --moe-stage=fit /bin/true > nostudy-srun.out 2>&1
tap_ok $(( $? == 0 )) "strict: srun outside a job refuses --moe-stage=fit without --moe-study"
ok "no job was created by the refused submissions" test "$(squeue -h -o %i | wc -l)" = "$before"

# --- strict plugstack arguments: a client reading a bad plugstack.conf ------
sed "s|^PlugStackConfig=.*|PlugStackConfig=$WORK/bad-plugstack.conf|" "$SLURM_CONF" > "$WORK/bad-slurm.conf"
echo "required $CLUSTER_PLUGIN affinity=closest afinity_override=deny" > "$WORK/bad-plugstack.conf"
SLURM_CONF=$WORK/bad-slurm.conf sbatch --moe-stage=fit job.sh > bad-conf.out 2>&1
tap_ok $(( $? == 0 )) "sbatch refuses to run with an unknown plugstack key"
ok "the message names the key and shows the argument" \
    has bad-conf.out "moeflow: plugstack.conf: afinity_override=deny: unknown plugstack key 'afinity_override'"
ok "still no job was created" test "$(squeue -h -o %i | wc -l)" = "$before"

# --- a non-root user ------------------------------------------------------
id slurmtest >/dev/null 2>&1 || useradd -m slurmtest
job=$(runuser -u slurmtest -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -D "$WORK" \
      -o "$WORK/user-%j.out" --moe-stage=scale --moe-study="$WORK/study.yaml" --moe-candidate=s2 job.sh)
wait_job "$job"
ok "the non-root user's job COMPLETED with exit code 0:0" job_completed "$job"
ok "a non-root user's job sees the plugin's values in batch and srun steps" \
    test "$(grep -c 'stage=scale .*cand=s2$\|^step node=n[12] stage=scale cand=s2$' "$WORK/user-$job.out")" = 3
ok "the non-root job ran as that user" \
    test "$(stat -c %U "$WORK/user-$job.out")" = slurmtest

# --- the cluster is unharmed ----------------------------------------------
ok "every node is IDLE (none drained)" nodes_all_idle
ok "teardown leaves no cluster process behind" teardown_leaves_nothing
tap_done
