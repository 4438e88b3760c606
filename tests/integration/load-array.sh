#!/bin/bash
# Load: a 1000-task job array submitted at once to the local cluster, every
# task checked by the plugin against the frozen contract as its own
# candidate (manifest index = array index).  Zero failures, each task's run
# record names its own candidate, each task saw the plugin's environment,
# the nodes stay IDLE.  Prints the throughput.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
N=1000
tap_plan 9
cluster_up load

U=slurmtest
id $U >/dev/null 2>&1 || useradd -m $U
as_user() { runuser -u $U -- env SLURM_CONF="$SLURM_CONF" "$@"; }

# A study laid out as 'moeflow gen' writes it: the baseline, and N retune
# candidates each changing one tuning variable (probe = its index).
S=$WORK/study
mkdir -p "$S/contracts" "$S/logs"
base='{"environment":{"megatron":"core_v0.16.0"},"hardware":{"gpus":32},"workload":{"model":"tiny","mbs":1},"semantics":{"routing":"dropless"},"parallel":{"tp":1,"ep":8},"tuning":{"dispatcher":"alltoall","probe":-1},"timing":{"window":[41,50]}}'
echo "$base" > "$S/contracts/baseline.json"
{
    printf '{"stages":[{"stage":"contract","candidates":[{"id":"base"}]},{"stage":"retune","candidates":['
    # no process per candidate: 1000 of them cost over a minute forked
    for ((i = 0; i < N; i++)); do
        printf -v id c%04d "$i"
        sep=,
        [ "$i" -gt 0 ] || sep=
        printf '%s{"id":"%s"}' "$sep" "$id"
        echo "${base/\"probe\":-1/\"probe\":$i}" > "$S/contracts/$id.json"
    done
    printf ']}]}\n'
} > "$S/manifest.json"
cp "$S/contracts/baseline.json" "$S/contracts/base.json"
chown -R $U "$S"
chmod -R go-w "$S"
cat > "$WORK/task.sh" <<'EOF'
#!/bin/bash
#SBATCH -n 1
echo "task $SLURM_ARRAY_TASK_ID stage=$MOEFLOW_STAGE"
# the peak memory of this step's slurmstepd, which ran the plugin
echo "hwm $SLURM_ARRAY_TASK_ID $(awk '/^VmHWM:/ {print $2}' /proc/$PPID/status)"
EOF
chmod 0755 "$WORK/task.sh"
cd "$WORK" || exit 1

job=$(as_user sbatch --parsable -o "$S/logs/contract.out" --moe-study="$S" --moe-stage=contract task.sh)
wait_job "$job" 60
ok "the baseline is frozen first" test -f "$S/contract/frozen.json"

start=$(date +%s.%N)
job=$(as_user sbatch --parsable --array=0-$((N - 1)) -o "$S/logs/%A_%a.out" \
      --moe-study="$S" --moe-stage=retune task.sh 2> "$WORK/submit.err")
tap_ok $? "sbatch accepts the $N-task array after checking all $N candidates' contracts"
wait_job "$job" 900
end=$(date +%s.%N)
awk -v n=$N -v a="$start" -v b="$end" 'BEGIN { printf "# %d array tasks in %.1f s: %.1f tasks/s\n", n, b - a, n / (b - a) }'

ok "every one of the $N tasks ran and saw the plugin's stage" \
    test "$(cat "$S"/logs/"$job"_*.out 2>/dev/null | grep -c '^task [0-9]* stage=retune$')" = "$N"
ok "no task failed (scontrol: every task COMPLETED 0:0)" \
    test "$(scontrol show job -o "$job" | grep -c 'JobState=COMPLETED .*ExitCode=0:0')" = "$N"
ok "every task recorded its run contract" test "$(ls "$S/runs" | grep -c "^${job}_")" = "$N"
bad=0
# one awk over every record, not two greps per task
for ((i = 0; i < N; i++)); do printf '%s\t%s/runs/%s_%s/contract.json\n' "$i" "$S" "$job" "$i"; done |
    awk -F'\t' '{ want = sprintf("\"candidate\":\"c%04d\"", $1); probe = "\"probe\":" $1
          doc = ""; while ((getline line < $2) > 0) doc = doc line; close($2)
          if (index(doc, want) == 0 || (index(doc, probe ",") == 0 && index(doc, probe "}") == 0)) bad++ }
         END { print bad + 0 }' > "$WORK/bad"
bad=$(cat "$WORK/bad")
ok "each task was checked as its own candidate (array index -> manifest)" test "$bad" = 0
# Each step is its own slurmstepd, so nothing the plugin keeps can pile up
# across tasks; check it anyway: the last 100 tasks' peak stays within 10% of
# the first 100's.
median_hwm() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
cat "$S"/logs/"$job"_*.out | awk '/^hwm / {print $2, $3}' | sort -n > "$WORK/hwm"
first=$(head -100 "$WORK/hwm" | awk '{print $2}' | median_hwm)
last=$(tail -100 "$WORK/hwm" | awk '{print $2}' | median_hwm)
echo "# slurmstepd peak RSS (median kB): first 100 tasks $first, last 100 tasks $last"
ok "the plugin's memory per step stays flat across the run" \
    test -n "$first" -a -n "$last" -a "$((last * 10))" -le "$((first * 11))"
ok "every node is IDLE (none drained)" nodes_all_idle
ok "teardown leaves no cluster process behind" teardown_leaves_nothing
tap_done
