#!/bin/bash
# The GPU lane's autopilot evidence (tests/gpu/autopilot.sh, one H200,
# 2026-12-01), replayed without a GPU: moeflow run drove the 1-GPU study
# through contract, fit, scale, profile and retune under the real
# Megatron-LM, the real spank_moeflow.so (through the plugin test host in
# the srun stand-in) froze the contract and sealed every run record, the
# winners were recorded from those records by the statistical rule, and
# validate was rebuilt from them with its profiling twins and the
# checkpoint/resume run (tests/gpu/autopilot/README.md says what each
# device call did).
#   core-0.19 (14:53-15:17, retune screening mbs alone): validate whole in
#     one call, the matched A/B profile of the winner computed there, and
#     the checkpoint run failed in Megatron itself in both formats: the
#     evidence of the rules that now make gen skip it for this study.
#   bridge-pin (12:11-12:32, mbs and manual GC, beside core-0.19 on the one
#     GPU): validate cut before the checkpoint's resumed run.
# Each point runs moeflow's readers over the archive.  Points that only
# re-read the committed data (exit statuses counted from candidates-*.tsv
# and the .rc files, winners counted and checked by sha256sum, the pack's
# README and report.json, Megatron's tracebacks grepped from the logs)
# could not fail on any change to the code and were removed (issue 39);
# what they stated is in tests/gpu/autopilot/README.md and the archives.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN S=$MOEFLOW_SRCDIR
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
export MOEFLOW_TEMPLATE_DIR=$S/templates
tap_plan 11

for d in core-0.19 bridge-pin; do
    tar -xJf "$S/tests/data/gpu/autopilot-$d.tar.xz" -C "$T"
    D=$T/$d
    "$M" contract verify "$D" > "$T/verify-$d" 2>&1
    tap_ok $? "$d: the contract the real plugin froze is intact"
    bad=0
    for r in "$D"/runs/*/; do "$M" contract verify "$r" > /dev/null 2>&1 || bad=$((bad + 1)); done
    ok "... and every run record it sealed ($(ls "$D/runs" | wc -l) of them)" test "$bad" = 0
    "$M" report "$D" --stage retune > "$T/retune-$d" 2>&1
    diag < "$T/retune-$d"
    # the screening window's reference spreads 68-69% (its first steps
    # after warm-up): no verdict rests on it (issue 37), whatever p says
    ok "... retune: mbs=4 is inconclusive against a reference that spreads (measured)" \
        has "$T/retune-$d" '^mbs=4 .* inconclusive$'
    # Today's gen of this study: the distributed optimizer on torch's Adam
    # (no Transformer Engine on the GPU machine) cannot resume, so the
    # checkpoint run is skipped with both rules named.
    sed "s/^  megatron: .*/  megatron: $d/" "$S/tests/gpu/autopilot/tiny-1gpu.yaml" > "$T/today-$d.yaml"
    "$M" gen "$T/today-$d.yaml" -o "$T/today-$d" --stage validate > "$T/today-$d.out" 2>&1
    ok "... today's gen of the study skips its checkpoint run, naming the Megatron rules" \
        has "$T/today-$d.out" "skipped checkpoint.*checkpoint_torch_adam_torch_dist .*distrib_optimizer\.py:839 in $d.*checkpoint_torch_adam_torch_format .*distrib_optimizer\.py:1223 in $d"
done

D=$T/core-0.19
"$M" report "$D" --stage validate > "$T/validate" 2>&1
diag < "$T/validate"
ok "core-0.19: validate's mbs=4 wins over steps 41-50 (measured)" has "$T/validate" '^mbs=4 .* win$'
ok "... and the verdict says the resume failed, not that evidence is missing" \
    has "$T/validate" "^checkpoint/resume \([0-9a-f]{64}\): fail: the resumed run stopped before its first iteration: KeyError: 'step'"

D=$T/bridge-pin
"$M" report "$D" --stage validate > "$T/validate-b" 2>&1
diag < "$T/validate-b"
ok "bridge-pin: validate's combination is measured, not summed, and wins" \
    has "$T/validate-b" '^combination=\["mbs=4","manual_gc=true"\] .* win$'
tap_done
