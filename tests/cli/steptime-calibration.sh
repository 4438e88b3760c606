#!/bin/bash
# The step-time model against real numbers (issue 25): regenerates the
# table of tests/calibration/steptime-table.py (Megatron-Bridge's published
# TFLOP/s per GPU, the 2xH200 and steady 1-GPU step times, before and after,
# error, rank of the published grid) from moeflow's output and compares it
# with the committed tests/calibration/steptime-table.tsv; fails when the
# table changes or a row marked calibrate leaves +-25%, except the known
# misses listed below (each one is a row the model does not yet explain,
# said so in the table's within25 column and in issue 25).
# To regenerate after a reviewed model change:
#   tests/calibration/steptime-table.py _build/gen/moeflow . > tests/calibration/steptime-table.tsv
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
tap_plan 7
# Why they miss (issue 25), with what the published rows themselves say:
#  - h100-2511-qwen3-30b (+59%): the 26.02 row (MBS 1, VPP 12: 118 TFLOP/s)
#    and this one (MBS 2, VPP 24: 121) cost the same per token, yet the
#    per-layer sync stall that B200 at MBS 1 and GB200/GB300 at MBS 4 need
#    is halved per token at MBS 2.  On H100 the published rows show no
#    per-microbatch cost; no term of the model is per token on H100 and
#    per microbatch on Blackwell.  (The 25.09 token-drop row of the same
#    grid, no syncs, is +24%; the three rows are three releases apart.)
#  - gb300-2511-qwen3-30b (-30%): the same grid as gb200-2511-qwen3-30b
#    (MBS 4, EP 8), published 22% faster (666 against 547 TFLOP/s), and
#    the model predicts both alike: no published GB300 fact (the same FP8
#    rate, HBM and Grace host as GB200; the doubled softmax exponent rate of
#    NVIDIA's 'Making Softmax More Efficient with NVIDIA Blackwell Ultra'
#    speeds attention's forward, about 2% of this step) separates them.
#    A prediction from 500 to 684 would hold both; the model gives 464.
# The three TE sync and routing constants are the least-squares optimum on
# the calibration rows (lib/fit/gpu_perf.c); the valley is flat (sync
# against routing), and an earlier grid search that stopped at SYNC_US 700
# had left them at 363 KB, 450 us and 375 us (log error 0.586 against
# 0.568 now; held out 7 of 9 then, 9 of 9 now).
# Tried and left out: a stall per pass of the schedule (each model chunk's
# forward or backward: 2 x VPP per microbatch).  Refitted with 1 ms it
# keeps one miss (this H100 row), the log error falls to 0.47, but each
# H100 Qwen3-30B recipe's VPP (12, 24) becomes 9-29% slower than the
# model's best VPP for its grid (now within 9%): it would contradict the
# VPP NVIDIA tuned those grids to.
# Each published row runs with its recipe's own settings (columns recompute,
# ep_overlap and grads of bridge-performance-summary.tsv, from the Bridge
# performance configs PROVENANCE cites) at the GPU's whole memory: the grid
# ran there.  Published grids still outside the top 10 of `moeflow layouts`
# (column rank; issue 25 asks for the top 10), and why:
#  - h100-2602/2511-qwen3-235b (TP2 PP8 VPP4 EP32, rank 12 and 14) and
#    h100-2509-deepseek-v3 (TP2 PP8 VPP4 EP64, rank 20): with the recipes'
#    EP overlap, the EP32 all-to-all over 4 nodes still leaves 29.9 s of
#    the 26.02 row's 77 s step exposed against 12.2 s for the EP16 grid
#    ranked first, which the memory model puts at 78 GiB of 80 (the
#    recipe's grid: 65).
#    DeepSeek-V3's ranks 1-20 lie within 11% of one another; its recipe
#    dispatches with DeepEP, which sends a token once per node over the
#    NICs (the model counts top-k copies) and which the model does not know.
#  - h100-2509-qwen3-235b-drop (report row, rank 38): the same grid,
#    token-dropping; the grids above it lose their sync stall too.
#  - gb300-2511-qwen3-235b-bf16 (TP1 PP4 VPP12 EP16 MBS 2, rank 13): its 8
#    local experts cost 6.3 s of sync stalls against 3.1 s for the first
#    grid's 2 (EP64); the recipe captures the router and the dispatch
#    preprocessing in CUDA graphs, which `fit` reports as not modeled: in
#    core 0.19 they end before the token-count sync (moe_utils.py
#    :1598-1611, moe_layer.py:650-666), so by the source the stall stays.
# Tried and left out (2026-12-02): the TE stall scaled by a factor for
# Grace hosts (GB200, GB300) against x86 (H100, B200).  The published rows
# want it below 1 (0.8: 15 of 16 calibration rows within, log error 0.486
# against 0.568; held out 8 of 9, GB200 DeepSeek-V3 26.02 at +27%), a Grace
# faster than x86 at launching, which is the opposite of what is reported
# for Grace (GH200 stays CPU-bound up to 4x larger batches than x86 hosts:
# arXiv 2504.11750).  A factor below 1 would stand in for whatever the GB
# recipes do differently (CUDA graphs, HybridEP), not for the host.
# s12, s13 and s18 were pre-registered, then used by a fit (issue 42:
# tests/calibration/register.tsv): calibration rows now, shown with their
# error, and known misses until the model explains them (see below).
STEADY_MISSES="s12-wide-top4-mbs2 s13-long-seq8k-mbs1 s18-x2-shape-1gpu"
KNOWN_MISSES="h100-2511-qwen3-30b gb300-2511-qwen3-30b $STEADY_MISSES"
out="${TMPDIR:-/tmp}/steptime-table.$$"
python3 "$MOEFLOW_SRCDIR/tests/calibration/steptime-table.py" "$MOEFLOW_BIN" "$MOEFLOW_SRCDIR" >"$out"
tap_ok $? "the table regenerates from moeflow's output"
diff -u "$MOEFLOW_SRCDIR/tests/calibration/steptime-table.tsv" "$out" | sed 's/^/# /'
tap_ok "${PIPESTATUS[0]}" "the table is the committed tests/calibration/steptime-table.tsv"
column -t -s"$(printf '\t')" "$out" | sed 's/^/# /'
bad=$(awk -F'\t' -v known=" $KNOWN_MISSES " 'NR > 1 && $3 == "calibrate" && $12 == "no" &&
      index(known, " " $1 " ") == 0 { print $1 }' "$out")
[ -z "$bad" ]
tap_ok $? "every calibration row within +-25% but the known misses ($KNOWN_MISSES)${bad:+; outside: $bad}"
# A published grid ran on its GPUs, so the memory model, given the recipe's
# recompute and bf16 grads, must place it within the GPU's memory.
over=$(awk -F'\t' 'NR > 1 && $15 != "-" && $13 + 0 > $15 + 0 { print $1 " " $13 ">" $15 }' "$out")
n=$(awk -F'\t' 'NR > 1 && $15 != "-"' "$out" | wc -l)
[ -z "$over" ] && [ "$n" -ge 27 ]
tap_ok $? "the memory model places each of the $n published grids within its GPU's memory${over:+; over: $over}"
# The steady 1-GPU runs fitted on; the held-out ones (use out-of-sample)
# are printed above, not held to it.  s12 and s13, predicted before they
# ran (commit 8e16260), fell 56% and 57% short.  Their profiles
# (tests/gpu/steady-1gpu/profile-s12-s13.txt) said why: s13's GPU is busy
# 1.9 s per step, mostly the local implementation's unfused attention
# passing its b x heads x s x s scores through elementwise kernels (core
# 0.19 transformer/dot_product_attention.py:194-239), now charged; s12's
# GPU is busy under 0.4 s of a 2 s step: its host's per-expert work (16
# experts).  s14-s17 (4 to 32 experts at one shape) measured that work
# (0.84 ms per expert, MoE layer and microbatch, fitted), and the sync
# stall now follows from the two streams: s12 is 40% short, s13 28%.
# s18 and s19 (commit 766a002), predicted before they ran: 55% and 26%
# short (s18: 2 layers at sequence 8192, 85 ms of host per microbatch
# where its layers account for 37); s20 and s21 (sequence 4096 and 1024),
# -22% and +19%.  Run again on 2026-12-02 (column repeat), the same jobs
# moved 1-16% (s12 -16%, s20 -13%, s4 +13%): s13 and s18 miss on both
# runs, s20 and s21 are within 25% on both.
# Where the same job ran again on another day (column repeat, from
# tests/gpu/steady-1gpu-repeat.tsv), the model must hold that run too: a
# fit that only matches one day's noise fails here.
steady=$(awk -F'\t' -v known=" $STEADY_MISSES " 'NR > 1 && $1 ~ /^s[0-9]+-/ && $3 == "calibrate" &&
      index(known, " " $1 " ") == 0 &&
      ($12 != "yes" || ($18 != "-" && ($18 + 0 > 25 || $18 + 0 < -25))) { print $1 }' "$out")
n=$(awk -F'\t' 'NR > 1 && $1 ~ /^s[0-9]+-/ && $3 == "calibrate"' "$out" | wc -l)
again=$(awk -F'\t' 'NR > 1 && $1 ~ /^s[0-9]+-/ && $3 == "calibrate" && $17 != "-"' "$out" | wc -l)
[ -z "$steady" ] && [ "$n" -ge 14 ] && [ "$again" -ge 5 ]
tap_ok $? "the $n steady 1-GPU runs fitted on (but the known misses $STEADY_MISSES) (three model sizes, the MoE module recomputed or not, 4 to 32 experts) within +-25%, and the $again of them run twice on both runs${steady:+; outside: $steady}"
# Their memory too: the model's peak against the largest max allocated
# Megatron logged (column measured_peak_gib, from tests/gpu/steady-1gpu.tsv).
far=$(awk -F'\t' 'NR > 1 && $14 != "-" { n++; err = $13 / $14 - 1
        if (err > 0.10 || err < -0.10) print $1 " " $13 " GiB against " $14 }
    END { if (n < 10) print "only " n " runs" }' "$out")
[ -z "$far" ]
tap_ok $? "the memory model within 10% of each steady run's max allocated${far:+; $far}"
# fit/gpu.h's count per GPU type (what fit and layouts print) is the table's.
counts=$(awk -F'\t' 'NR > 1 { n[$2]++; if ($12 == "yes") w[$2]++ }
    END { for (g in n) print g, w[g] + 0, n[g] }' "$out" | sort)
printed=$(for g in h100 h200 b200 gb200 gb300 a100; do
    "$MOEFLOW_BIN" fit --preset qwen3-30b-a3b --gpus 16 --seq 4096 --mbs 1 --gbs 256 --gpu "$g" \
        --json | python3 -c 'import json, sys
c = json.load(sys.stdin)["steptime_calibration"]
if c["rows"]: print(c["gpu"], c["within_25pct"], c["rows"])'
done | sort)
[ -n "$counts" ] && [ "$counts" = "$printed" ]
tap_ok $? "fit and layouts count the table's rows within +-25% per GPU type ($(echo $counts | tr '\n' ' '))"
[ "$counts" = "$printed" ] || { echo "table: $counts"; echo "printed: $printed"; } | sed 's/^/# /'
rm -f "$out"
