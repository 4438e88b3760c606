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
#  - h100-2511-qwen3-30b (+51%): the model's per-token terms fit this recipe
#    (its 25.09 token-drop row, no syncs, is +9%), and dropless costs more
#    per microbatch than the model's sync stall at MBS 2 (241 -> 121 TFLOP/s
#    published, 1.4x in the model), yet the 26.02 MBS 1 row is as fast per
#    token as MBS 2, so the dropless overhead on H100 grows with the tokens:
#    not a per-microbatch stall, and no term of the model grows so.  The
#    three rows are three releases apart.
#  - gb300-2511-qwen3-30b (-34%): the per-token terms match (its 26.02 MBS 8
#    row against this MBS 4 one leaves about 1 ms per layer and microbatch
#    fixed), but the stall that B200 at MBS 1 and GB200 at MBS 4 need
#    together (7 ms per layer and microbatch, 16 local experts, the same
#    chip) is 6 times what GB300 shows; no
#    published GB300 fact (same FP8 rate, HBM and Grace host as GB200)
#    accounts for it.
# A search of the three TE sync and routing constants (SYNC_US 0-1200,
# SYNC_EXPERT_US 0-500, ROUTE_KB 150-700) finds no setting with fewer than
# two calibration misses: a constant cannot fix these rows.  Repeated with
# the recipes' settings (ROUTE_KB 200-550, SYNC_US 0-700, SYNC_EXPERT_US
# 150-500): still two misses at best, and the landed constants (363, 450,
# 375) within 0.001 of the smallest log-RMS error (0.191).
# Each published row runs with its recipe's own settings (columns recompute,
# ep_overlap and grads of bridge-performance-summary.tsv, from the Bridge
# performance configs PROVENANCE cites) at the GPU's whole memory: the grid
# ran there.  Published grids still outside the top 10 of `moeflow layouts`
# (column rank; issue 25 asks for the top 10), and why:
#  - h100-2602/2511-qwen3-235b (TP2 PP8 VPP4 EP32, rank 11 and 14) and
#    h100-2509-deepseek-v3 (TP2 PP8 VPP4 EP64, rank 24): with the recipes'
#    EP overlap, the EP32 all-to-all over 4 nodes still leaves 29.9 s of
#    the 75 s step exposed against 13.4 s for the EP16 grids above it, which
#    the memory model puts at 77-80 GiB of 80 (the recipe's grid: 65 GiB).
#    DeepSeek-V3's ranks 1-24 lie within 10% of one another; its recipe
#    dispatches with DeepEP, which sends a token once per node over the
#    NICs (the model counts top-k copies) and which the model does not know.
#  - h100-2509-qwen3-235b-drop (report row, rank 70): the same grid,
#    token-dropping; the grids above it lose their sync stall too.
#  - gb300-2511-qwen3-235b-bf16 (TP1 PP4 VPP12 EP16 MBS 2, rank 16): its 8
#    local experts cost 5.1 s of sync stalls against 1.8 s for the first
#    grid's 2 (EP64); the recipe captures the router and the dispatch
#    preprocessing in CUDA graphs, which the model does not know.
KNOWN_MISSES="h100-2511-qwen3-30b gb300-2511-qwen3-30b"
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
steady=$(awk -F'\t' 'NR > 1 && $1 ~ /^s[0-9]+-/ && $12 != "yes" { print $1 }' "$out")
n=$(awk -F'\t' 'NR > 1 && $1 ~ /^s[0-9]+-/' "$out" | wc -l)
[ -z "$steady" ] && [ "$n" -ge 10 ]
tap_ok $? "the $n steady 1-GPU runs (three model sizes, the MoE module recomputed or not) within +-25%${steady:+; outside: $steady}"
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
