#!/bin/bash
# Issue 24: in study mode, report holds each candidate's argument dump
# against what the candidate asked for, without --expect: a log whose
# ep_overlap was edited to False (a silent fallback) is a MISMATCH, and
# --record-winners refuses that win before it looks for a run record.
# CUDA graphs count by the lines real Megatron writes: a completed capture
# (it logs no replay: lib/analysis/graph_evidence.c); a log without one is
# a MISMATCH.  The logs are fake-megatron's (rank 0 of 1, so the argument
# dump is in them), which prints Megatron's own capture lines.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
. "$MOEFLOW_SRCDIR/tests/cli/study-fixture.sh"
command -v python3 > /dev/null || skip_all "python3 not installed (build-aux/install-deps.sh --test)"
M=$MOEFLOW_BIN
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates
T=$(mktemp -d /tmp/mfrp.XXXXXX) && trap 'rm -rf "$T"' EXIT
tap_plan 11
S=$T/tiny
# warm-up past Megatron's CUDA-graph capture in step 4, so that the graph
# candidates run (rule cuda_graph_capture_in_window, issue 41)
sed 's/^  warmup: 2/  warmup: 4/; s/^  profile_steps: \[4, 5\]/  profile_steps: [5, 6]/' \
    "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" > "$T/tiny-moe-2gpu.yaml"
"$M" gen "$T/tiny-moe-2gpu.yaml" -o "$S" > /dev/null 2>&1
fixture_logs "$S" scale,retune 0 1
id_of() { awk -F'\t' -v v="$1" -v x="$2" '$1 == "retune" && $4 == v && $5 == x { print $3 }' "$S/candidates.tsv"; }
overlap=$(id_of ep_overlap true)

"$M" report "$S" --stage retune > "$T/honest.out" 2>&1
tap_ok $? "report of honest logs"
ok "... no mismatch: every candidate ran what it asked for" hasnt "$T/honest.out" MISMATCH
"$M" report "$S" --stage retune --json > "$T/honest.json" 2>&1
ok "... report.json shows what ran (EP overlap True)" has "$T/honest.json" '"overlap_moe_expert_parallel_comm": "True"'
"$M" report "$S" --stage retune --record-winners > "$T/honest-w.out" 2>&1
ok "... ep_overlap's win goes on to be recorded (no run record here)" \
    has "$T/honest-w.out" 'winner ep_overlap=true not recorded: no run record'

# The silent fallback: the dump says the overlap was off.
sed -i 's/^\(  overlap_moe_expert_parallel_comm \.*\) True$/\1 False/' "$S/results/retune/$overlap.log"
ok "(the log now says False)" has "$S/results/retune/$overlap.log" 'overlap_moe_expert_parallel_comm \.+ False'
"$M" report "$S" --stage retune > "$T/fallback.out" 2>&1
ok "report flags it without --expect" \
    has "$T/fallback.out" '^  MISMATCH: requested overlap_moe_expert_parallel_comm=True, ran with overlap_moe_expert_parallel_comm=False$'
"$M" report "$S" --stage retune --record-winners > "$T/fallback-w.out" 2>&1
ok "--record-winners refuses that win" \
    has "$T/fallback-w.out" '^win ep_overlap=true: not recorded: what ran is not what it asked for \(requested overlap_moe_expert_parallel_comm=True, ran with overlap_moe_expert_parallel_comm=False\)$'

# CUDA graphs: the TE capture lines Megatron writes (cuda_graphs.py:2668,
# :2692 in core 0.19) and no replay line, which Megatron never writes.
g=$(id_of cuda_graph_modules '["moe_router"]')
ok "(the graph candidate's log has TE's capture lines)" \
    has "$S/results/retune/$g.log" '^INFO:megatron.core.transformer.cuda_graphs:Time spent in CUDA Graphs capture on rank 0: '
ok "(... and no replay line: Megatron writes none)" hasnt "$S/results/retune/$g.log" '[Rr]eplay'
"$M" report "$S" --stage retune --json > "$T/graph.json" 2>&1
ok "a completed capture without a trace is 'captured', no mismatch" \
    has "$T/graph.json" '"graph_evidence": "captured"'
sed -i '/CUDA Graphs capture/d' "$S/results/retune/$g.log"
"$M" report "$S" --stage retune > "$T/graph.out" 2>&1
ok "graphs requested and no capture line is a MISMATCH" \
    has "$T/graph.out" 'MISMATCH: CUDA graphs requested, but the log has no capture line'
tap_done
