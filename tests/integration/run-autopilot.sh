#!/bin/bash
# moeflow run on a real local Slurm cluster, with the test double as the
# trainer: a fresh study is driven stage by stage; one scale candidate is
# made to fail (the wrapper trainer exits 3 for it while a flag file names
# it), so run stops there naming the job and its log; the next run, the
# cause removed, submits only that candidate again and is interrupted
# (SIGINT) while retune runs; the run after it waits for the retune jobs
# it finds in run-state.json instead of resubmitting them, records the
# winners, rebuilds validate from them and runs it.  A last run submits
# nothing.  MOEFLOW_TRANSCRIPT=FILE keeps the runs' output there.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
[ -x "$MOEFLOW_BIN" ] || skip_all "moeflow not built"

tap_plan 46
cluster_up autopilot --nodes 1
U=slurmtest
id $U > /dev/null 2>&1 || useradd -m $U
as_user() { runuser -u $U -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" \
    MOEFLOW_TEMPLATE_DIR="$MOEFLOW_SRCDIR/templates" "$@"; }
export PATH="$MOEFLOW_SRCDIR/tests/doubles/bin:$PATH"

# The trainer: the test double, except for the candidate named in $WORK/break.
cat > "$WORK/trainer" <<TRAINER
#!/bin/bash
if [ -r "$WORK/break" ] && [ "\${MOEFLOW_CANDIDATE:-}" = "\$(cat "$WORK/break")" ]; then
    echo "trainer: made to fail for candidate \$MOEFLOW_CANDIDATE" >&2
    exit 3
fi
exec "$MOEFLOW_SRCDIR/tests/doubles/fake-megatron" "$MOEFLOW_SRCDIR/tests/data/megatron/argparse-core_v0.19.0.txt" "\$@"
TRAINER
chmod 0755 "$WORK/trainer"
sed "s|command: python pretrain_gpt.py|command: $WORK/trainer|" \
    "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" > "$WORK/tiny.yaml"
S=$WORK/tiny
as_user "$MOEFLOW_BIN" gen "$WORK/tiny.yaml" -o "$S" --max-array-size 4 > "$WORK/gen.out" 2>&1
tap_ok $? "moeflow gen writes the study"
T=$WORK/transcript
{ echo "# moeflow gen tiny.yaml -o tiny --max-array-size 4"; cat "$WORK/gen.out"; } > "$T"

# --dry-run: what would be submitted, nothing changed
as_user "$MOEFLOW_BIN" run --dry-run "$S" > "$WORK/dry.out" 2>&1
tap_ok $? "run --dry-run"
ok "... prints each stage's sbatch command line" has "$WORK/dry.out" \
    '^retune: would submit in .*: sbatch --parsable --array=0-3%1 --export=ALL,MOEFLOW_INDEX_OFFSET=4 retune.sbatch$'
ok "... submits nothing and writes no state" test ! -e "$S/run-state.json" -a -z "$(squeue -h)"

# Break one scale layout (not the baseline) and run.
broken=$(awk -F'\t' '$1 == "scale" && $4 == "layout" { print $3; exit }' "$S/candidates.tsv")
echo "$broken" > "$WORK/break"
chmod 0644 "$WORK/break"
as_user "$MOEFLOW_BIN" run --poll 1 "$S" > "$WORK/run1.out" 2>&1
tap_ok $(( $? != 5 )) "a failing stage: run exits 5"
{ echo "# moeflow run tiny    (one scale candidate made to fail)"; cat "$WORK/run1.out"; } >> "$T"
diag < "$WORK/run1.out"
ok "... after contract and fit were done" has "$WORK/run1.out" '^\[.*\] fit: done, all 5 candidates exited 0$'
ok "... it reported fit" has "$WORK/run1.out" '^--- moeflow report .* --stage fit$'
ok "... stops at scale, naming the failed count" has "$WORK/run1.out" '^scale: FAILED: 1 of 5 candidates did not exit 0$'
ok "... the failed candidate's job and exit status" has "$WORK/run1.out" '^  layout=.* \(index [0-9], job [0-9]+_[0-9]\): exited 3$'
ok "... and its logs" has "$WORK/run1.out" "^    run: $S/results/scale/$broken.log$"
log=$(sed -n 's/^    log: //p' "$WORK/run1.out" | head -1)
ok "... the Slurm log it names exists and shows the failure" has "$log" 'made to fail'
ok "... nothing after scale was submitted" test ! -e "$S/results/profile"
ok "... the state says scale failed" has "$S/run-state.json" '"state": "failed"'

# Resume: the cause removed; interrupted while retune runs.
rm -f "$WORK/break"
as_user sh -c 'echo $$ > "$1"; exec "$2" run --poll 1 "$3"' sh "$WORK/run2.pid" "$MOEFLOW_BIN" "$S" \
    > "$WORK/run2.out" 2>&1 &
bg=$!
for i in $(seq 3000); do
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["stages"].get("retune",{}); sys.exit(s.get("state")!="submitted")' \
        "$S/run-state.json" 2> /dev/null && break
    sleep 0.1
done
sleep 1
kill -INT "$(cat "$WORK/run2.pid")"
wait $bg
tap_ok $(( $? != 6 )) "an interrupted run exits 6"
{ echo "# moeflow run tiny    (the cause removed; interrupted with SIGINT during retune)"; cat "$WORK/run2.out"; } >> "$T"
diag < "$WORK/run2.out"
ok "... it submitted only the failed scale candidate again" \
    has "$WORK/run2.out" '^scale: submitted job [0-9]+: sbatch --parsable --array=[0-9]%1( --export=ALL,MOEFLOW_INDEX_OFFSET=4)? scale.sbatch$'
ok "... did not submit contract or fit again" \
    test "$(grep -cE '^(contract|fit): done in an earlier run' "$WORK/run2.out")" = 2
ok "... says the retune jobs stay in Slurm" has "$WORK/run2.out" '^moeflow run: retune: interrupted; its jobs stay in Slurm'
retune_jobs=$(python3 -c 'import json,sys; print(" ".join(j["job"] for j in json.load(open(sys.argv[1]))["stages"]["retune"]["jobs"]))' "$S/run-state.json")
ok "... and the state holds all 3 retune submissions ($retune_jobs)" test "$(echo $retune_jobs | wc -w)" = 3

# Resume again: waits for those jobs, then winners, validate.
as_user "$MOEFLOW_BIN" run --poll 1 "$S" > "$WORK/run3.out" 2>&1
tap_ok $? "the next run finishes the study"
{ echo "# moeflow run tiny    (resumed)"; cat "$WORK/run3.out"; } >> "$T"
diag < "$WORK/run3.out"
ok "... waits for the retune jobs an earlier run submitted" has "$WORK/run3.out" '^retune: resuming: waiting for the jobs an earlier run submitted$'
ok "... never submits retune again" hasnt "$WORK/run3.out" '^retune: submitted job'
after=$(python3 -c 'import json,sys; print(" ".join(j["job"] for j in json.load(open(sys.argv[1]))["stages"]["retune"]["jobs"]))' "$S/run-state.json")
ok "... the retune jobs are the same ($after)" test "$after" = "$retune_jobs"
ok "... every retune candidate exited 0" test "$(cat "$S"/results/retune/*.rc | grep -c '^0$')" = 10
ok "... records the winners by the statistical rule" \
    test "$(grep -c '^winner \(ep_overlap=true\|precision=fp8-delayed\): recorded ' "$WORK/run3.out")" = 2
ok "... rebuilds validate from them: 4 runs and their 4 profiling twins" has "$WORK/run3.out" '^validate: 8 runs in '
ok "... submits validate as the arrays gen wrote, cut at the study's --max-array-size 4" \
    sh -c "grep -qE '^validate: submitted job [0-9]+: sbatch --parsable --array=0-3%[0-9]+ validate.sbatch$' '$WORK/run3.out' &&
           grep -qE '^validate: submitted job [0-9]+: sbatch --parsable --array=0-3%[0-9]+ --export=ALL,MOEFLOW_INDEX_OFFSET=4 validate.sbatch$' '$WORK/run3.out'"
ok "... every validate run exited 0" test "$(cat "$S"/results/validate/*.rc | grep -c '^0$')" = 8
ok "... reports validate: the combination wins" \
    has "$WORK/run3.out" '^combination=\[.*\] +10 .* win$'
ok "... prints no diagnosis that would ignore the profile (none after retune or validate)" \
    hasnt "$WORK/run3.out" '^baseline: [a-z]+ bottleneck: '
ok "... prints progress with the time so far" has "$WORK/run3.out" '^\[[0-9hms]+\] validate: 8/8 done, 0 running, 0 pending, 0 failed \(stage [0-9hms]+\)$'
ok "... and ends with every stage done" has "$WORK/run3.out" '^\[.*\] study .*: every stage done$'
ok "... having sealed a decision after fit, scale and retune" \
    test "$(ls "$S"/decisions/*.json | sed 's|.*/[0-9]*-||' | tr '\n' ' ')" = "fit.json scale.json retune.json "
ok "report STUDY_DIR saved under results/validate/report" test -s "$S/results/validate/report/report.json"

# The evidence pack of the finished study, as the reviewer gets it.
as_user "$MOEFLOW_BIN" report "$S" --pack > "$WORK/pack.out" 2>&1
tap_ok $? "report --pack writes the study's evidence pack"
{ echo "# moeflow report tiny --pack"; cat "$WORK/pack.out"; echo "# head -n 40 tiny/evidence-pack/README.md";
  head -n 40 "$S/evidence-pack/README.md"; } >> "$T"
ok "... README.md and pack.json, with the validated combination" \
    sh -c "grep -q '^#' '$S/evidence-pack/README.md' && grep -q combination '$S/evidence-pack/pack.json'"

# A finished study: nothing is submitted.
n_before=$(ls "$S"/logs | wc -l)
as_user "$MOEFLOW_BIN" run --poll 1 "$S" > "$WORK/run4.out" 2>&1
tap_ok $? "a run of a finished study succeeds"
{ echo "# moeflow run tiny    (again: nothing left to do)"; cat "$WORK/run4.out"; } >> "$T"
ok "... submitting nothing" hasnt "$WORK/run4.out" 'submitted job'
ok "... and no job ran" test "$(ls "$S"/logs | wc -l)" = "$n_before"

as_user "$MOEFLOW_BIN" diagnose "$S" > "$WORK/diag.out" 2>&1
ok "moeflow diagnose STUDY_DIR works on the study itself" has "$WORK/diag.out" '^baseline: [a-z]+ bottleneck: '
# A silent fallback on the real run: the EP-overlap run's log edited to say
# the overlap was off; recorded again, that win is refused.
overlap=$(awk -F'\t' '$1 == "retune" && $4 == "ep_overlap" { print $3 }' "$S/candidates.tsv")
sed -i 's/^\(  overlap_moe_expert_parallel_comm \.*\) True$/\1 False/' "$S/results/retune/$overlap.log"
rm -rf "$S/winners"
as_user "$MOEFLOW_BIN" report "$S" --stage retune --record-winners > "$WORK/fallback.out" 2>&1
diag < "$WORK/fallback.out"
ok "a silent fallback (ep_overlap False in the dump) is not recorded as a winner" \
    has "$WORK/fallback.out" '^win ep_overlap=true: not recorded: what ran is not what it asked for'
ok "... while FP8's win still is" has "$WORK/fallback.out" '^winner precision=fp8-delayed: recorded '
# A retune without a win (manual GC alone: the double gives it no effect):
# validate runs the baseline as gen wrote it instead of stopping.
sed '/^retune:/,$d' "$WORK/tiny.yaml" > "$WORK/nowin.yaml"
printf 'retune:\n  axes: [manual_gc]\n' >> "$WORK/nowin.yaml"
N=$WORK/nowin
as_user "$MOEFLOW_BIN" gen "$WORK/nowin.yaml" -o "$N" > /dev/null 2>&1 &&
    as_user "$MOEFLOW_BIN" run --poll 1 "$N" > "$WORK/nowin.out" 2>&1
tap_ok $? "a study whose retune has no win runs to the end"
diag < "$WORK/nowin.out"
ok "... says so and validates the baseline" \
    has "$WORK/nowin.out" '^retune: no winner; validate runs the baseline as moeflow gen wrote it$'
ok "... records no winner" test -z "$(ls "$N/winners" 2> /dev/null)"
ok "... runs validate's one baseline run, which exits 0" \
    test "$(cat "$N"/results/validate/*.rc | grep -c '^0$')" = 1
ok "... and remembers it: the state says winners none" has "$N/run-state.json" '"winners": "none"'
[ -n "${MOEFLOW_TRANSCRIPT:-}" ] && sed "s|$WORK|/tmp/autopilot|g" "$T" > "$MOEFLOW_TRANSCRIPT"
tap_done
