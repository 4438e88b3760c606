#!/bin/bash
# Issue 24, item 6: moeflow report STUDY_DIR --pack writes the evidence
# pack (README.md and pack.json) of a study whose stages ran: the tiny
# study, its screening and validate logs from tests/doubles/fake-megatron
# (invented step times: EP overlap 10% faster, FP8 12% faster, and the two
# together their own figure), two recorded winners and the validate stage
# gen --winners rebuilt from them (each alone, then the combination).
# README.md has every section; pack.json every key; the combination's gain
# is its own measurement; a missing stage says so; an unreadable input
# leaves no pack; --pack-dir and the usage errors.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
. "$MOEFLOW_SRCDIR/tests/cli/study-fixture.sh"
command -v python3 > /dev/null || skip_all "python3 not installed (build-aux/install-deps.sh --test)"
M=$MOEFLOW_BIN
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates
T=$(mktemp -d /tmp/mfpk.XXXXXX) && trap 'rm -rf "$T"' EXIT
chmod 0755 "$T"
tap_plan 26
S=$T/tiny
"$M" gen "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" -o "$S" > /dev/null 2>&1
fixture_logs "$S" scale,retune 0 1
cp -a "$S" "$T/early"        # a study whose validate stage has not run
fixture_winner "$S" ep_overlap true
fixture_winner "$S" precision fp8-delayed
chmod -R go-w "$S"
"$M" gen "$S/study.yaml" --stage validate --winners "$S" > "$T/gen.out" 2>&1
ok "gen --winners rebuilds validate: baseline, two winners alone, the combination" \
    has "$T/gen.out" 'combination = \["ep_overlap=true","precision=fp8-delayed"\]'
fixture_logs "$S" validate 0 1

"$M" report "$S" --pack > "$T/pack.out" 2>&1
tap_ok $? "report STUDY_DIR --pack succeeds"
ok "... naming the folder" has "$T/pack.out" "^evidence pack: $S/evidence-pack \\(README.md, pack.json\\)$"
P=$S/evidence-pack
ok "... which holds README.md, pack.json, index.html and the plots, nothing else" \
    test "$(ls "$P" | grep -v '^[a-z0-9-]*\.svg$' | tr '\n' ' ')" = "README.md index.html pack.json "
R=$P/README.md
missing=0
for h in '^# Evidence pack: tiny-moe-2gpu$' '^## Label: routing and data semantics$' \
    '^## Environment: commit, container, hardware, topology$' '^### Commands and config diffs$' \
    '^### What ran ' '^### Step time and throughput \(measured, unprofiled window 41-50\)$' \
    '^### Loss, skipped and NaN iterations, peak memory \(measured\)$' \
    '^## Checkpoint verdict$' '^## Matched A/B profiles$'; do
    has "$R" "$h" || { echo "README.md lacks $h" | diag; missing=$((missing + 1)); }
done
ok "README.md has every section" test $missing = 0
# mock data, and the training settings its study could not state (issue 41)
ok "the label says benchmark-only and why" has "$R" '^\*\*benchmark-only: mock data, no LR schedule stated \(1e-4, linear decay over the run.s own steps\), no aux-loss coefficient stated \(Megatron.s 0: no load-balancing loss\), null tokenizer\*\*: these results are benchmark-only'
ok "each winner's command is shell-quoted, with its environment" \
    has "$R" '^    CUDA_DEVICE_MAX_CONNECTIONS=8 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python pretrain_gpt.py .*--overlap-moe-expert-parallel-comm'
ok "... and its config diff against the baseline" has "$R" '^\| tuning\.precision \| bf16 \| fp8-delayed \|$'
ok "the combination differs in both" \
    test "$(grep -c '^| tuning\.ep\\_overlap | false | true |$' "$R")" = 2
ok "what ran: every run as requested" test "$(grep -c '| ran as requested |' "$R")" = 4
ok "the contract stage that did not run says so" has "$R" '^\*\*not run\*\*: no contract/measured\.json'
ok "checkpoint: not requested" has "$R" '^\*\*not requested\*\*: the study does not set validation\.checkpoint: true'
ok "... profiles: validate's twins have no trace here" has "$R" '^\*\*no evidence\*\*: '"$S"'/results/validate/report/report.json has no "profile_pairs"|^\*\*no evidence\*\*: no results/validate/report'


J=$P/pack.json
key() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec("print(" + sys.argv[2] + ")")' "$J" "$1"; }
ok "pack.json has every key" test "$(key 'sorted(d)')" = \
    "['checkpoint', 'environment', 'format', 'gains', 'moeflow_version', 'plots', 'profile_pairs', 'semantics', 'study', 'study_hash', 'validate']"
ok "... each run: role, command, config diff, proof, measured, versus the baseline" test \
    "$(key 'sorted(d["validate"]["runs"][3])')" = \
    "['command', 'config_diff', 'id', 'measured', 'name', 'proof', 'role', 'versus_baseline']"
ok "... the roles in order" test "$(key '[r["role"] for r in d["validate"]["runs"]]')" = \
    "['baseline', 'winner', 'winner', 'combination']"
ok "... every number measured, over the unprofiled window" test \
    "$(key 'sorted({(r["measured"]["status"], r["measured"]["profiled"], str(r["measured"]["window"])) for r in d["validate"]["runs"]})')" = \
    "[('measured', False, '[41, 50]')]"
ok "... label and reasons" test "$(key 'd["semantics"]["label"], d["semantics"]["reasons"]')" = \
    "benchmark-only ['mock data', \"no LR schedule stated (1e-4, linear decay over the run's own steps)\", \"no aux-loss coefficient stated (Megatron's 0: no load-balancing loss)\", 'null tokenizer']"
# The combination's gain is its own run's, not the winners' gains added up.
gains=$(key '" ".join("%.2f" % r["versus_baseline"]["step_ms_delta_pct"] for r in d["validate"]["runs"][1:])')
ok "the combination's gain is measured, not the sum of the separate ones ($gains)" \
    python3 -c 'import sys; a, b, c = map(float, sys.argv[1:]); sys.exit(not (c < 0 and abs(c - (a + b)) > 0.5))' $gains
ok "... and the pack says so" has "$R" 'gains of separate A/Bs are never added up'

"$M" report "$T/early" --pack --pack-dir "$T/early-pack" > /dev/null 2>&1
tap_ok $? "--pack-dir, on a study whose validate stage has not run"
ok "... the validate section says so" has "$T/early-pack/README.md" '^\*\*not run\*\*: no log of the validate baseline yet'

mkdir -p "$T/early/contract"
printf '{"host": 1, "host": 2}\n' > "$T/early/contract/measured.json"
"$M" report "$T/early" --pack > "$T/bad.out" 2>&1
tap_ok $(( $? == 0 )) "an unreadable input stops the pack"
ok "... naming the file" has "$T/bad.out" 'contract/measured\.json'
ok "... and leaves no folder behind" test -z "$(ls -d "$T/early/evidence-pack"* 2> /dev/null)"
"$M" report --pack "$MOEFLOW_SRCDIR/tests/data/logs/h200x2-moe-ep2-alltoall-60it.log" > "$T/use.out" 2>&1
tap_ok $(( $? != 1 )) "--pack without a study directory is a usage error"
tap_done
