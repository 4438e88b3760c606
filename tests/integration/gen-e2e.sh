#!/bin/bash
# End to end on a real local Slurm cluster: `moeflow gen` of the tiny study,
# then its submit.sh runs all six stages, chained with afterok, to
# completion.  The trainer is tests/doubles/fake-megatron (a test double
# that checks every flag against Megatron core 0.19's argparse dump) and
# nsys is tests/doubles/bin/nsys.  Also: every script is accepted by
# sbatch --test-only.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
[ -x "$MOEFLOW_BIN" ] || skip_all "moeflow not built"

tap_plan 48
cluster_up gen-e2e --nodes 1
# The contract is frozen as the job user, never as root.
U=slurmtest
id $U > /dev/null 2>&1 || useradd -m $U
as_user() { runuser -u $U -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" "$@"; }

STUDY=$WORK/tiny.yaml
# The launcher command is shell words: the paths are quoted, since the tree
# may lie under a path with a blank (sed's replacement doubles backslashes).
FAKE=$(printf '%q %q' "$MOEFLOW_SRCDIR/tests/doubles/fake-megatron" \
    "$MOEFLOW_SRCDIR/tests/data/megatron/argparse-core_v0.19.0.txt")
sed "s|command: python pretrain_gpt.py|command: ${FAKE//\\/\\\\}|" \
    "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" > "$STUDY"
ok "the study names the test double as its trainer" has "$STUDY" "fake-megatron"

# MaxArraySize from slurmctld through libslurm (the local cluster keeps 1001).
MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates "$MOEFLOW_BIN" gen "$STUDY" -o "$WORK/auto" \
    --max-array-size=auto 2>&1 | diag
ok "--max-array-size=auto reads MaxArraySize from the cluster" \
    has "$WORK/auto/manifest.json" '"max_array_size": 1001'

OUTDIR=$WORK/tiny
# Arrays of at most 4 tasks: retune (10 candidates) runs as 3 chunks with offsets.
MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates "$MOEFLOW_BIN" gen "$STUDY" -o "$OUTDIR" \
    --max-array-size 4 2>&1 | diag
ok "moeflow gen writes the study directory" test -x "$OUTDIR/submit.sh"

chown -R $U "$OUTDIR"
(cd "$OUTDIR" && PATH="$MOEFLOW_SRCDIR/tests/doubles/bin:$PATH" as_user ./submit.sh) \
    > "$WORK/submit.out" 2> "$WORK/submit.err"
tap_ok $? "submit.sh submits every stage"
diag < "$WORK/submit.err"
ok "submit.sh says what each stage does" has "$WORK/submit.out" "^validate: the baseline for 50 steps"

# submit.sh ran the contract stage to the end (the plugin refuses other
# stages until the contract is frozen); the last stage depends on all the
# others through afterok: wait for it.
last=$(grep -Eo 'validate: job [0-9]+' "$WORK/submit.err" | grep -Eo '[0-9]+$')
wait_job "$last" 300
tap_ok $? "the validate job ($last) left the queue"

rc=0
for s in "$OUTDIR"/*.sbatch; do
    (cd "$OUTDIR" && as_user sbatch --test-only "$(basename "$s")") > "$WORK/testonly.log" 2>&1 \
        || { rc=1; diag < "$WORK/testonly.log"; }
done
tap_ok $rc "sbatch --test-only accepts every stage script (contract frozen)"

ok "the contract stage froze the baseline" test -f "$OUTDIR/contract/frozen.json"
ok "contract captured the node" has "$OUTDIR/contract/node.txt" "^host: "
n_fit=$(ls "$OUTDIR"/results/fit/*.rc 2> /dev/null | wc -l)
tap_ok "$([ "$n_fit" -eq 5 ] && echo 0 || echo 1)" "all 5 fit candidates ran (got $n_fit)"
bad=$(cat "$OUTDIR"/results/{fit,scale,retune}/*.rc 2> /dev/null | grep -cv '^0$')
tap_ok "$([ "$bad" -eq 0 ] && echo 0 || echo 1)" "every fit, scale and retune run exited 0"
n_retune=$(ls "$OUTDIR"/results/retune/*.rc 2> /dev/null | wc -l)
tap_ok "$([ "$n_retune" -eq 10 ] && echo 0 || echo 1)" "all 10 retune candidates ran (got $n_retune)"
rc=0
for f in "$OUTDIR"/results/{fit,scale,retune}/*.log; do
    id=$(basename "$f" .log)
    grep -q "moeflow candidate $id\$" "$f" || { rc=1; echo "$f: $(grep 'moeflow candidate' "$f" | head -1)" | diag; }
done
tap_ok $rc "every array task was checked by the plugin as its own candidate"
ok "profile ran under nsys" test -n "$(ls "$OUTDIR"/results/profile/*.nsys-rep 2> /dev/null)"
ok "validate recorded the report window 41..50" has "$OUTDIR/results/validate/window.json" '"first": 41, "last": 50'

# The analysis reads the study directory itself: a row per retune
# candidate, labelled, against the scale baseline, over the screening steps.
"$MOEFLOW_BIN" report "$OUTDIR" --stage retune > "$WORK/report.out" 2> "$WORK/report.err"
tap_ok $? "moeflow report STUDY --stage retune"
diag < "$WORK/report.out"
ok "... a row per candidate (10) and the reference" \
    test "$(grep -cE '^(baseline|[a-z_]+=)' "$WORK/report.out")" = 11
ok "... EP overlap (10% faster in the double) is a win" has "$WORK/report.out" '^ep_overlap=true .* win$'
ok "... recompute (4% slower) is a loss" has "$WORK/report.out" '^recompute_modules=\["moe_act"\] .* loss$'
"$MOEFLOW_BIN" report "$OUTDIR" > "$WORK/validate.out" 2>&1
ok "report STUDY reports validate over report_window 41-50" \
    has "$WORK/validate.out" 'stage validate: 0 candidates; window 41-50'
ok "the validate run's record keeps its launch log" test -s "$OUTDIR/runs/$last/launch.log"
"$MOEFLOW_BIN" report "$OUTDIR/runs/$last" > "$WORK/run.out" 2>&1
ok "report runs/<job> finds it and uses the validate window" has "$WORK/run.out" '^baseline +10 '
# The wins become the study's winners, from their sealed run records, as
# the job user (never as root); validate of a winner is then accepted.
"$MOEFLOW_BIN" report "$OUTDIR" --stage retune --record-winners > "$WORK/root-winners.out" 2>&1
tap_ok $(( $? == 0 )) "report --record-winners as root is refused"
ok "... saying why" has "$WORK/root-winners.out" "refusing to record winners as root"
as_user "$MOEFLOW_BIN" report "$OUTDIR" --stage retune --record-winners > "$WORK/winners.out" 2>&1
tap_ok $? "report --record-winners as the job user"
diag < "$WORK/winners.out"
ok "... records the best win of each variable: EP overlap and FP8 delayed scaling" \
    test "$(grep -c '^winner \(ep_overlap=true\|precision=fp8-delayed\): recorded .*/winners/[0-9a-f]\{64\}\.json (run [0-9]*_[0-9]*)$' "$WORK/winners.out")" = 2
ok "... not the two lesser FP8 wins" \
    test "$(grep -c '^win precision=fp8-\(tensorwise\|blockwise\): not recorded: precision=fp8-delayed wins more$' "$WORK/winners.out")" = 2
ok "... and winners/ holds exactly those 2 contracts" test "$(ls "$OUTDIR"/winners/*.json | wc -l)" = 2
as_user "$MOEFLOW_BIN" report "$OUTDIR" --stage retune --record-winners > "$WORK/winners2.out" 2>&1
ok "recording again is a no-op" test "$(grep -c ': already recorded ' "$WORK/winners2.out")" = 2
overlap_id=$(awk -F'\t' '$1 == "retune" && $4 == "ep_overlap" { print $3 }' "$OUTDIR/candidates.tsv")
printf '#!/bin/bash\n#SBATCH -N 1 -n 1\n/usr/bin/srun -n 1 /bin/true\n' > "$WORK/plain.sh"
chmod 0755 "$WORK/plain.sh"
(cd "$WORK" && as_user sbatch --test-only --moe-study="$OUTDIR" --moe-stage=validate \
    --moe-candidate="$overlap_id" plain.sh) > "$WORK/val-winner.out" 2>&1
tap_ok $? "validate of the recorded EP-overlap winner is accepted at sbatch"
mbs_id=$(awk -F'\t' '$1 == "retune" && $4 == "mbs" { print $3 }' "$OUTDIR/candidates.tsv")
(cd "$WORK" && as_user sbatch --test-only --moe-study="$OUTDIR" --moe-stage=validate \
    --moe-candidate="$mbs_id" plain.sh) > "$WORK/val-loser.out" 2>&1
tap_ok $(( $? == 0 )) "validate of a loss (mbs=2), never recorded, is refused"

# gen --winners rebuilds validate from the winners: baseline, each alone,
# then both together, then a profiling twin of each of those four; the
# array runs and report compares the four timed runs.
as_user "$MOEFLOW_BIN" gen "$OUTDIR/study.yaml" --stage validate --winners "$OUTDIR" \
    > "$WORK/gen-winners.out" 2>&1
tap_ok $? "gen --stage validate --winners STUDY"
diag < "$WORK/gen-winners.out"
ok "... eight validate runs: baseline, two winners alone, their combination, a twin of each" \
    test "$(grep -c '^validate	' "$OUTDIR/candidates.tsv")" = 8
# the winners come in the order of their contract digests: either order
ok "... the last is the combination of the two" \
    has "$OUTDIR/candidates.tsv" '^validate	3	[0-9a-f]{64}	combination	\[("ep_overlap=true","precision=fp8-delayed"|"precision=fp8-delayed","ep_overlap=true")\]'
# cut as the study was generated (--max-array-size 4): two arrays of 4
ok "... validate.sbatch is an array of 4 of the 8, the rest at offset 4" \
    sh -c "grep -q '^#SBATCH --array=0-3%' '$OUTDIR/validate.sbatch' &&
           grep -q 'sbatch --array=0-3%[0-9]* --export=ALL,MOEFLOW_INDEX_OFFSET=4 validate.sbatch' '$OUTDIR/validate.sbatch'"
ok "... the other stages' rows are unchanged" \
    test "$(grep -c '^retune	' "$OUTDIR/candidates.tsv")" = 10
val=$(cd "$OUTDIR" && PATH="$MOEFLOW_SRCDIR/tests/doubles/bin:$PATH" as_user sbatch --parsable validate.sbatch 2> "$WORK/val-submit.err") &&
    val2=$(cd "$OUTDIR" && PATH="$MOEFLOW_SRCDIR/tests/doubles/bin:$PATH" as_user sbatch --parsable --array=0-3 --export=ALL,MOEFLOW_INDEX_OFFSET=4 validate.sbatch 2>> "$WORK/val-submit.err")
tap_ok $? "the validate arrays are accepted at sbatch (every run: baseline, winner, declared combination or declared profiling twin)"
diag < "$WORK/val-submit.err"
wait_job "$val" 300
wait_job "$val2" 300
ok "... and the 4 timed runs recorded their window, the twins none" test "$(ls "$OUTDIR"/results/validate/*.window.json 2> /dev/null | wc -l)" = 4
zeros=$(cat "$OUTDIR"/results/validate/*.rc | grep -c '^0$')
ok "... every run, twins too, exited 0" test "$zeros" = 8
[ "$zeros" = 8 ] ||
    for f in "$OUTDIR"/results/validate/*.rc; do echo "$f: $(cat "$f")"; tail -3 "${f%.rc}.log"; done | diag
"$MOEFLOW_BIN" report "$OUTDIR" --stage validate > "$WORK/validate-report.out" 2>&1
tap_ok $? "report STUDY --stage validate"
diag < "$WORK/validate-report.out"
ok "... the combination is a win over 41-50" \
    has "$WORK/validate-report.out" \
    '^combination=\[("ep_overlap=true","precision=fp8-delayed"|"precision=fp8-delayed","ep_overlap=true")\] +10 .* win$'

# The plugin refuses at sbatch what the submission already shows.
printf '#!/bin/bash\n#SBATCH -N 1 -n 1\n/usr/bin/srun -n 1 /bin/true\n' > "$WORK/plain.sh"
chmod 0755 "$WORK/plain.sh"
overlap=$(awk -F'\t' '$1 == "retune" && $4 == "ep_overlap" { print $3 }' "$OUTDIR/candidates.tsv")
n_jobs=$(squeue -h -o %i | wc -l)
(cd "$WORK" && as_user sbatch --moe-stage=retune --moe-candidate="$overlap" plain.sh) > "$WORK/nostudy.out" 2>&1
tap_ok $(( $? == 0 )) "a retune naming a candidate but no --moe-study is refused at sbatch"
ok "... saying it needs --moe-study" has "$WORK/nostudy.out" 'needs --moe-study=DIR'
(cd "$WORK" && as_user sbatch --moe-study="$OUTDIR" --moe-stage=retune plain.sh) > "$WORK/nocand.out" 2>&1
tap_ok $(( $? == 0 )) "a retune of the study outside an array, without --moe-candidate, is refused at sbatch"
ok "... saying how many candidates and what to do" \
    has "$WORK/nocand.out" 'has 10 candidates: submit the stage.s job array \(sbatch retune.sbatch\) or name one'
ok "no job was created by either" test "$(squeue -h -o %i | wc -l)" = "$n_jobs"
(cd "$WORK" && as_user sbatch --test-only --moe-study="$OUTDIR" --moe-stage=retune --array=0-1 plain.sh) \
    > "$WORK/array.out" 2>&1
tap_ok $? "the same as an array (--array on the command line) is accepted"
(cd "$WORK" && as_user sbatch --test-only --moe-study="$OUTDIR" --moe-stage=retune \
    --moe-candidate="$overlap" plain.sh) > "$WORK/named.out" 2>&1
tap_ok $? "... and so is one named candidate"
if [ "$TAP_FAILED" -ne 0 ]; then
    for f in "$OUTDIR"/logs/*; do echo "== $f"; tail -5 "$f"; done | diag
    sacct > /dev/null 2>&1 || squeue -a 2>&1 | diag
fi
tap_done
