#!/bin/bash
# The GPU lane's committed evidence (tests/gpu/, tests/data/gpu/), replayed
# without a GPU: results.tsv is what collect.py derives from the committed
# logs with today's moeflow fit, steady.tsv from the steady-state scale
# runs; every candidate trained; the memory estimate is within 10% of
# Megatron's peak on every row; Megatron's own validate_args passed every
# candidate of every example study; report,
# overlap and diagnose read what the stages wrote; every candidate's
# declared contract passes its stage's rule; and the Slurm stand-ins behave.
# (The rule citations are checked by test_megatron_rules.)
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN S=$MOEFLOW_SRCDIR
data=$S/tests/data/gpu results=$S/tests/gpu/results.tsv validate=$S/tests/gpu/validate.tsv
out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
tap_plan 18

python3 "$S/tests/gpu/collect.py" "$data" "$M" > "$out/results.tsv" 2> "$out/collect.err"
ok "collect.py derives tests/gpu/results.tsv from the committed logs, byte for byte" \
    cmp -s "$out/results.tsv" "$results"
diff "$results" "$out/results.tsv" | diag
mkdir "$out/steady" && tar -xJf "$data/steady-scale.tar.xz" -C "$out/steady"
python3 "$S/tests/gpu/collect.py" --steady "$out/steady/steady" > "$out/steady.tsv"
steady_ok=$(awk -F'\t' 'NR > 1 && $3 == 0 && $6 != "-"' "$S/tests/gpu/steady.tsv" | wc -l)
ok "and steady.tsv (every scale grid exited 0, 12-step window) from the steady-state logs" \
    sh -c "cmp -s '$out/steady.tsv' '$S/tests/gpu/steady.tsv' && test $steady_ok = 8"
ok "every candidate of both dialects ran (30 rows: contract, 3 fit, 4 scale grids, profile, 5 retune, validate each) and exited 0" \
    test "$(awk -F'\t' 'NR > 1 && $5 == 0' "$results" | wc -l)" = 30
ok "every training run logged its steps (8 screening, 4 fit, 50 validate)" \
    test "$(awk -F'\t' 'NR > 1 && $2 != "contract" && ($6 != ($2 == "fit" ? 4 : $2 == "validate" ? 50 : 8))' \
           "$results" | wc -l)" = 0
awk -F'\t' 'NR > 1 && $8 != "-" {e = ($9 - $8) / $8 * 100; if (e < -10 || e > 10)
    printf "%s %s %s: measured %s MiB, predicted %s (%+.1f%%)\n", $1, $2, $3, $8, $9, e}' \
    "$results" > "$out/memory-misses"
ok "the memory estimate is within 10% of the measured peak on every row" test ! -s "$out/memory-misses"
diag < "$out/memory-misses"

ok "validate_args ran all 138 candidates of the 5 example studies in each of 3 dialects" \
    test "$(awk -F'\t' 'NR > 1' "$validate" | wc -l)" = 414
ok "each passed, or failed only on a TE version check its study's declared TE meets" \
    test "$(awk -F'\t' 'NR > 1 && $5 != "pass" && $5 != "te-absent-here"' "$validate" | wc -l)" = 0

for d in core-0.19 bridge-pin; do
    tar -xJf "$data/lane-$d.tar.xz" -C "$out"
done
study=$out/lane-core-0.19
# One entry per (TP, CP, PP, EP, ETP) grid: PP2 runs at its best VPP (2).
ok "the lane ran PP2 with VPP2 and EP1xETP2 layouts in both dialects" \
    test "$(grep -hcE 'layout	tp1\.cp1\.pp2\.vpp2\.|layout	tp1\.cp1\.pp1\.vpp1\.ep1\.etp2' \
           "$out"/lane-*/candidates.tsv | awk '{n += $1} END {print n}')" = 4
"$M" layouts --excluded "$study/study.yaml" > "$out/layouts.txt" 2>&1
ok "no TP2 layout ran: layouts excludes it by Megatron's MoE-TP-needs-SP rule" \
    sh -c "! grep -q 'layout	tp2' '$out'/lane-*/candidates.tsv &&
           grep -qE '^  TP2 .* moe-tp-needs-sp ' '$out/layouts.txt'"

"$M" overlap --window steps=4-5 "$data"/traces/core-0.19/rank-*.json.gz > "$out/overlap.txt" 2>&1
ok "overlap reads the PyTorch-profiler traces the profile stage wrote (golden)" \
    cmp -s "$out/overlap.txt" "$data/expected/overlap-core-0.19.txt"
diff "$data/expected/overlap-core-0.19.txt" "$out/overlap.txt" | diag
"$M" overlap --window steps=4-5 "$data"/traces/bridge-pin/rank-*.json.gz > "$out/overlap-bp.txt" 2>&1
ok "and bridge-pin's (golden)" cmp -s "$out/overlap-bp.txt" "$data/expected/overlap-bridge-pin.txt"
"$M" overlap --json --window steps=4-5 "$data"/traces/core-0.19/rank-*.json.gz > "$out/overlap.json"

validate_log=$(ls "$study"/results/validate/*[0-9a-f].log)
"$M" report -o "$out/report" --window 41-50 "$validate_log" > "$out/report.txt" 2>&1
tap_ok $? "report reads the validate run over the study's report window 41..50"
want=$(awk -F'\t' '$1 == "core-0.19" && $2 == "validate" {print $7}' "$results")
ok "report's median step time equals collect.py's ($want ms)" \
    grep -qE "^baseline +10 +$want " "$out/report.txt"
diag < "$out/report.txt"
"$M" diagnose --capacity-gib 141 "$out/report/report.json" "$out/overlap.json" > "$out/diagnose.txt" 2>&1
ok "diagnose calls the tiny model on 2 GPUs communication-bound (0% hidden)" \
    grep -q 'communication bottleneck: exposed communication is .*0.00% of communication is hidden' \
    "$out/diagnose.txt"

bad=0
while IFS=: read -r stage id; do
    "$M" contract diff "$study/contracts/baseline.json" "$study/contracts/$id.json" \
        --stage "$stage" > /dev/null 2>&1 || { bad=$((bad + 1)); echo "$stage $id" | diag; }
done < <(python3 -c 'import json, sys
for st in json.load(open(sys.argv[1]))["stages"]:
    for c in st["candidates"]:
        print(st["stage"] + ":" + c["id"])' "$study/manifest.json")
ok "every trained candidate's declared contract passes its stage's rule" test "$bad" = 0

# The stand-ins, on a job that needs no GPU.
mkdir -p "$out/job" && cd "$out/job" || exit 1
cat > job.sbatch <<'JOB'
#!/bin/bash
#SBATCH --array=0-3%2
#SBATCH --gpus-per-node=1
#SBATCH --output=logs/j-%A_%a.out
#SBATCH --moe-stage=fit
echo "task $SLURM_ARRAY_TASK_ID job $SLURM_JOB_ID gpus $CUDA_VISIBLE_DEVICES"
srun --moe-candidate=c1 --ntasks=2 bash -c 'echo "rank $SLURM_PROCID/$SLURM_NTASKS $MOEFLOW_STAGE $MOEFLOW_CANDIDATE"; [ "$SLURM_PROCID$SLURM_ARRAY_TASK_ID" != 12 ]'
JOB
export PATH=$S/tests/gpu/standin:$PATH MOEFLOW_STANDIN_STATE=$out/job/state MOEFLOW_STANDIN_GPUS=2
first=$(sbatch --parsable job.sbatch)
ok "the sbatch stand-in gives each array task its own job id and one of the GPUs" \
    test "$(cat logs/j-"$first"_*.out | grep -c '^task ')" = 4 -a \
         "$(grep -h '^task' logs/*.out | awk '{print $4}' | sort -u | wc -l)" = 4 -a \
         "$(grep -h '^task' logs/*.out | awk '{print $6}' | sort -u | tr '\n' ,)" = 0,1,
ok "srun starts every rank with Slurm's variables and the stage and candidate the plugin would set" \
    test "$(grep -h '^rank' logs/*.out | sort -u | tr '\n' ,)" = "rank 0/2 fit c1,rank 1/2 fit c1,"
ok "a failed rank fails the array; a job that depends on it never starts" \
    test "$(cat "state/$first.state")" = FAILED -a \
         "$(sbatch --parsable --dependency=afterok:"$first" job.sbatch 2>/dev/null | xargs -I{} cat state/{}.state)" \
         = DependencyNeverSatisfied
tap_done
