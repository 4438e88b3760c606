#!/bin/bash
# moeflow report understands a generated study directory: one row per
# candidate labelled by its variable and value (never a hex id), the
# stage's own reference run (scale's baseline for retune, whatever sorts
# first), the study's window (screening steps 3-8 for scale and retune,
# report_window 41-50 for validate) without --window, results/<stage> and
# results/<stage>/<id>.log and runs/<job> (contract.json + launch.log) as
# arguments, and candidates without a log listed, not dropped.  The logs are
# what tests/doubles/fake-megatron prints for each candidate's arguments
# (invented step times: EP overlap 10% faster, recompute 4% slower).
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
. "$MOEFLOW_SRCDIR/tests/cli/study-fixture.sh"
command -v python3 > /dev/null || skip_all "python3 not installed (build-aux/install-deps.sh)"
M=$MOEFLOW_BIN
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates
T=$(mktemp -d /tmp/mfrs.XXXXXX) && trap 'rm -rf "$T"' EXIT
tap_plan 25
S=$T/tiny
# warm-up past Megatron's CUDA-graph capture in step 4, so that the graph
# candidates run (rule cuda_graph_capture_in_window, issue 41)
sed 's/^  warmup: 2/  warmup: 4/; s/^  profile_steps: \[4, 5\]/  profile_steps: [5, 6]/' \
    "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" > "$T/tiny-moe-2gpu.yaml"
"$M" gen "$T/tiny-moe-2gpu.yaml" -o "$S" > /dev/null 2>&1
# Each candidate's launch log, as the stage script writes it (rank 1 of 2 logs).
fixture_logs "$S" scale,retune,validate 1 2
id_of() {  # id_of STAGE VARIABLE VALUE
    awk -F'\t' -v s="$1" -v v="$2" -v x="$3" '$1 == s && $4 == v && $5 == x { print $3 }' "$S/candidates.tsv"
}
scale_base=$(id_of scale baseline baseline)
overlap=$(id_of retune ep_overlap true)

"$M" report "$S" --stage retune > "$T/retune.out" 2> "$T/retune.err"
tap_ok $? "report STUDY --stage retune succeeds"
ok "one row per retune candidate, plus the reference (14 rows)" \
    test "$(sed -n '3,$p' "$T/retune.out" | grep -c '^[a-z_]*[=b]')" = 14
ok "rows are labelled by variable and value" has "$T/retune.out" '^ep_overlap=true +6 '
ok "... arrays too" has "$T/retune.out" '^cuda_graph_modules=\["moe_router","moe_preprocess"\] '
ok "no row is a hex id" hasnt "$T/retune.out" '^[0-9a-f]{12}'
ok "the reference is the scale stage's baseline" \
    has "$T/retune.out" "reference: the scale stage's baseline \($scale_base\)"
ok "the window is the screening steps, without --window" \
    has "$T/retune.out" 'window 5-10 \(the screening steps after 4 warm-up steps\)'
# 10% with the double's deterministic jitter, which follows the arguments
ok "EP overlap (10% faster in the double) is a win" has "$T/retune.out" '^ep_overlap=true .* -(8|9|10|11|12)\.[0-9]+% .* win$'
ok "recompute (4% slower) is a loss" has "$T/retune.out" '^recompute_modules=\["moe_act"\] .* loss$'
ok "manual GC (no effect) is no change" has "$T/retune.out" '^manual_gc=true .* no change$'
ok "no warning about the logs" test ! -s "$T/retune.err"
# tiny-moe-2gpu has no data path: mock data is benchmark-only (issue 24), and
# it states no LR schedule, aux-loss coefficient or tokenizer (issue 41).
unstated="no LR schedule stated \\(1e-4, linear decay over the run's own steps\\), no aux-loss coefficient stated \\(Megatron's 0: no load-balancing loss\\), null tokenizer"
ok "benchmark-only results get their own heading, with the reason" \
    has "$T/retune.out" "^BENCHMARK-ONLY results \\(benchmark-only: mock data, $unstated\\): not training-equivalent"
"$M" report --json "$S" --stage retune > "$T/retune.json" 2>&1
ok "... and report.json says so" has "$T/retune.json" "\"label_text\": \"benchmark-only: mock data, $unstated\""
sed '/^  data:/d; s/^  routing: dropless/  data: \/data\/tiny_text_document\n  lr: 3.0e-4\n  lr_schedule: cosine\n  lr_decay_iters: 100000\n  aux_loss_coeff: 1.0e-3\n  tokenizer: Qwen\/Qwen3-30B-A3B\n  routing: dropless/' \
    "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" > "$T/real-data.yaml"
"$M" gen "$T/real-data.yaml" -o "$T/real" > /dev/null 2>&1
mkdir -p "$T/real/results/scale"
b=$(awk -F'\t' '$1 == "scale" && $4 == "baseline" { print $3 }' "$T/real/candidates.tsv")
cp "$S/results/scale/$scale_base.log" "$T/real/results/scale/$b.log"
"$M" report "$T/real" --stage scale > "$T/real.out" 2>&1
ok "a study with a data path, learned routing and its training settings stated is training-equivalent" \
    has "$T/real.out" '^training-equivalent results \(training-equivalent\)$'

"$M" report "$S/results/retune" > "$T/dir.out" 2>&1
ok "report results/retune is the same report" cmp -s "$T/dir.out" "$T/retune.out"

"$M" report "$S" > "$T/default.out" 2>&1
ok "with no --stage: the last stage with logs (validate), window report_window 41-50" \
    has "$T/default.out" "stage validate: 0 candidates; window 41-50 \\(the study's report_window\\)"

"$M" report "$S/results/retune/$overlap.log" > "$T/one.out" 2>&1
tap_ok $? "one screening log of the study reports without --window"
ok "... over steps 3-8, named by its change" has "$T/one.out" '^ep_overlap=true +6 '

mkdir -p "$S/runs/7_0"
printf '{"run":{"candidate":"%s","id":"7_0","stage":"retune"}}\n' "$overlap" > "$S/runs/7_0/contract.json"
cp "$S/results/retune/$overlap.log" "$S/runs/7_0/launch.log"
"$M" report "$S/results/scale/$scale_base.log" "$S/runs/7_0" > "$T/run.out" 2>&1
tap_ok $? "report runs/<job> works from the run record and its launch log"
ok "... named and windowed from the record" has "$T/run.out" '^ep_overlap=true +6 .* win$'

rm "$S/results/retune/$overlap.log"
"$M" report --json "$S" --stage retune > "$T/missing.json" 2>&1
tap_ok $? "a candidate without a log does not stop the report"
ok "... it is listed with the reason" has "$T/missing.json" '"reason": "no log yet'
"$M" report "$S" --stage retune > "$T/missing.out" 2>&1
ok "... in the table's notes too" has "$T/missing.out" '^  NOT REPORTED: ep_overlap=true: no log yet'

"$M" report --stage retune "$MOEFLOW_SRCDIR/tests/data/logs/h200x2-moe-ep2-alltoall-60it.log" > /dev/null 2>&1
tap_ok $(( $? != 1 )) "--stage without a study directory is a usage error"
"$M" report --stage profile "$S" > /dev/null 2>&1
tap_ok $(( $? != 1 )) "--stage profile is a usage error (no step-time window)"
tap_done
