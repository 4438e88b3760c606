#!/bin/bash
# moeflow diagnose STUDY_DIR --stage profile reads the profile stage's own
# traces (issue 37): real PyTorch-profiler traces dropped where Megatron
# writes them (by the test double fake-megatron, as a profile job would),
# and the bottleneck named with its measured numbers.  The figures are
# those of tests/data/traces/README.md ("Diagnose fixtures").
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
S=$MOEFLOW_SRCDIR
export MOEFLOW_TEMPLATE_DIR=$S/templates
out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
tap_plan 23

# A study of the tiny model under the PyTorch profiler over steps $1.
study() {  # study DIR "[FIRST, LAST]"
    sed -e "s/^  profile_steps: .*/  profile_steps: $2\n  profiler: pytorch/" -e 's/^  warmup: .*/  warmup: 1/' \
        "$S/etc/studies/tiny-moe-2gpu.yaml" > "$out/$1.yaml" &&
        "$M" gen "$out/$1.yaml" -o "$out/$1" > /dev/null
}
# Runs the profile stage's baseline as each rank of the job would, from the
# study directory, with the double copying trace $2 (%r: the rank).
profile_run() {  # profile_run DIR TRACE
    local args
    args=$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
st = [s for s in m["stages"] if s["stage"] == "profile"][0]
print("\n".join(st["candidates"][0]["argv"]))' "$out/$1/manifest.json") || return 1
    for r in 0 1; do
        (cd "$out/$1" && mapfile -t argv <<< "$args" &&
            RANK=$r WORLD_SIZE=2 FAKE_MEGATRON_TRACE=$2 "$S/tests/doubles/fake-megatron" \
                "$S/tests/data/megatron/argparse-core_v0.19.0.txt" "${argv[@]}") > /dev/null 2>&1 || return 1
    done
}
json() {  # json FILE PYTHON-EXPRESSION-OF-d
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# The lane's real 2xH200 traces, core 0.19, steps 4-5: the double writes
# them to results/profile/torch_profile/rank-N.json.gz, as Megatron does.
study lane "[4, 5]"
profile_run lane "$S/tests/data/gpu/traces/core-0.19/rank-%r.json.gz"
ok "fake-megatron puts each rank's trace where Megatron core 0.19 writes it" \
    cmp -s "$out/lane/results/profile/torch_profile/rank-1.json.gz" "$S/tests/data/gpu/traces/core-0.19/rank-1.json.gz"
"$M" diagnose "$out/lane" --stage profile > "$out/lane.txt" 2>&1
tap_ok $? "diagnose --stage profile reads them"
diag < "$out/lane.txt"
ok "2 GPUs idle 64.1% against 32.1% exposed communication: host, busy 35.9%" \
    has "$out/lane.txt" 'host bottleneck: GPUs are idle 64.1% of the window .*32.1% of exposed communication.*busy 35.9%'
ok "the numbers say where they come from" \
    has "$out/lane.txt" '^  GPU busy \(measured, trace\): 35.9% of the profiled window \(649.7 of 1811.9 ms'
ok "hidden and exposed communication in ms and %" \
    has "$out/lane.txt" 'hidden 0.0 ms \(0.00% of 581.0 ms\), exposed 581.0 ms \(32.1% of the window\)'
ok "rank 0 is the straggler: rank 1's NCCL kernels wait for it" \
    has "$out/lane.txt" 'straggler \(measured, trace\): rank 0 \(rank-0.json.gz:0\): own work 780.8 ms, 165.4 ms \(26.9%\) over the median 615.5 ms'
ok "without a fit run, the memory headroom is unknown" has "$out/lane.txt" '^  memory headroom: unknown'
ok "the skipped axes are listed with why" \
    has "$out/lane.txt" '^  - ep_overlap: targets communication; exposed communication 32.1% of GPU time is at or over the 10% threshold but less than the 64.1%'
"$M" diagnose --json "$out/lane" --stage profile > "$out/lane.json"
ok "--json: bottleneck, measured figures, sources" test "$(json "$out/lane.json" \
    '(d["bottleneck"], round(d["measured"]["gpu_busy_fraction"], 4), round(d["measured"]["exposed_comm_fraction"], 4),
      d["measured"]["hidden_comm_pct"], round(d["measured"]["idle_fraction"], 4), d["measured"]["straggler_rank"],
      d["sources"], d["profiled_steps"])')" = \
    "('host', 0.3586, 0.3207, 0.0, 0.6414, 0, ['results/profile/torch_profile/rank-0.json.gz', 'results/profile/torch_profile/rank-1.json.gz'], [4, 5])"
ok "no compute kernel of the lane ran beside communication: contention null, not 0" test "$(json "$out/lane.json" \
    '(d["contention"]["slowdown_pct"], d["contention"]["dispatcher_sms"].split(":")[0])')" = "(None, 'unknown')"
ok "--json: every retune axis is a candidate or skipped with a reason" test "$(json "$out/lane.json" \
    '(len(d["retune_candidates"]), len(d["skipped_axes"]), all(s["reason"] and s["variable"] for s in d["skipped_axes"]))')" = \
    "(3, 9, True)"

# The fit stage measured this layout's peak: the headroom is known.
fit=$(awk -F'\t' '$1 == "fit" && $4 == "recompute" && $5 == "none" {print $3; exit}' "$out/lane/candidates.tsv")
mkdir -p "$out/lane/results/fit"
echo '[Rank 0] (after 1 iterations) memory (MB) | allocated: 900.00 | max allocated: 1300.50 | reserved: 1400.00 | max reserved: 1400.00' \
    > "$out/lane/results/fit/$fit.log"
echo 0 > "$out/lane/results/fit/$fit.rc"
"$M" diagnose --json "$out/lane" --stage profile > "$out/fit.json"
ok "memory: measured peak from the fit log, the declared 80 GiB, the headroom" test "$(json "$out/fit.json" \
    '(d["memory"]["status"], d["memory"]["measured_peak_mib"], d["memory"]["capacity_mib"], d["memory"]["headroom_mib"])')" = \
    "('measured', 1300.5, 81920.0, 80619.5)"

# Host-bound: rank 0 alone, GPU busy 17.6%.
study host "[4, 5]"
mkdir -p "$out/host/results/profile/torch_profile"
cp "$S/tests/data/gpu/traces/core-0.19/rank-0.json.gz" "$out/host/results/profile/torch_profile/"
"$M" diagnose "$out/host" --stage profile > "$out/host.txt" 2>&1
ok "one GPU busy 17.6% of its steps is host-bound" \
    has "$out/host.txt" 'host bottleneck: GPUs are idle 82.4% of the window .*busy 17.6%'
ok "one trace names no straggler" has "$out/host.txt" 'straggler \(measured, trace\): none to name'

# Compute-bound: the a2a+GEMM traces over steps 2-3, busy 98.4%.
study gemm "[2, 3]"
mkdir -p "$out/gemm/results/profile/torch_profile"
cp "$S"/tests/data/traces/real-a2a-gemm-2xh200-rank[01].json.gz "$out/gemm/results/profile/torch_profile/"
"$M" diagnose --json "$out/gemm" --stage profile > "$out/gemm.json"
ok "GEMMs hiding most of the all-to-all: compute, exposed 8.4%, busy 98.4%, even ranks" test "$(json "$out/gemm.json" \
    '(d["bottleneck"], round(d["measured"]["exposed_comm_fraction"], 3), round(d["measured"]["gpu_busy_fraction"], 3),
      d["measured"]["straggler"])')" = "('compute', 0.084, 0.984, False)"
# Contention computed apart from moeflow, from the same JSON: per rank the
# NCCL kernels' union within the ProfilerStep#2..#3 GPU markers; a compute
# kernel is concurrent when it overlaps it; over the names run both ways,
# concurrent time against what their alone mean gives.
python3 - "$S"/tests/data/traces/real-a2a-gemm-2xh200-rank[01].json.gz > "$out/contention" <<'PY'
import gzip, json, sys
runs = {}
for path in sys.argv[1:]:
    ev = json.load(gzip.open(path))["traceEvents"]
    marks = [e for e in ev if e.get("cat") == "gpu_user_annotation"
             and e.get("name", "").startswith("ProfilerStep#") and 2 <= int(e["name"][13:]) <= 3]
    lo, hi = min(e["ts"] for e in marks), max(e["ts"] + e["dur"] for e in marks)
    ks = [e for e in ev if e.get("cat") == "kernel" and e["ts"] < hi and e["ts"] + e["dur"] > lo]
    union = []
    for a, b in sorted((max(e["ts"], lo), min(e["ts"] + e["dur"], hi)) for e in ks if "nccl" in e["name"].lower()):
        if union and a <= union[-1][1]:
            union[-1][1] = max(union[-1][1], b)
        else:
            union.append([a, b])
    for e in ks:
        if "nccl" not in e["name"].lower():
            c = any(e["ts"] < y and e["ts"] + e["dur"] > x for x, y in union)
            runs.setdefault((e["name"], c), []).append(e["dur"])
both = [n for n, c in runs if c and (n, False) in runs]
conc = sum(sum(runs[n, True]) for n in both)
alone = sum(sum(runs[n, False]) / len(runs[n, False]) * len(runs[n, True]) for n in both)
print("%.2f" % (100 * (conc / alone - 1)))
PY
ok "contention: the GEMMs ran $(cat "$out/contention")% slower beside the all-to-all, as computed apart from moeflow" \
    test "$(json "$out/gemm.json" '"%.2f" % d["contention"]["slowdown_pct"]')" = "$(cat "$out/contention")"
ok "... over the 5% threshold: retune would screen the dispatcher SM counts" test "$(json "$out/gemm.json" \
    'd["contention"]["dispatcher_sms"]')" = "at or over the threshold: retune screens dispatcher_sms"
"$M" diagnose "$out/gemm" --stage profile > "$out/gemm.txt" 2>&1
ok "... and the text says it, measured" has "$out/gemm.txt" \
    "^  contention \(measured, trace\): compute kernels $(printf '%.1f' "$(cat "$out/contention")")% slower beside communication than alone \(threshold 5%\)"
ok "... and says the communication axes are under the 10% threshold" test "$(json "$out/gemm.json" \
    '[s["reason"] for s in d["skipped_axes"] if s["variable"] == "dispatcher"][0]')" = \
    "targets communication; the profile shows exposed communication 8.4% of GPU time, under the 10% threshold"

# Nsight Systems: a report without its SQLite export is refused with the
# command that makes one; no trace at all is refused too.
"$M" gen "$S/etc/studies/tiny-moe-2gpu.yaml" -o "$out/nsys" > /dev/null
mkdir -p "$out/nsys/results/profile" && : > "$out/nsys/results/profile/profile-7-rank0.nsys-rep"
"$M" diagnose "$out/nsys" --stage profile > /dev/null 2> "$out/nsys.err"
tap_ok $(( $? != 2 )) "a .nsys-rep without its export: exit 2"
ok "... naming the nsys export command" \
    has "$out/nsys.err" "nsys export --type sqlite --output $out/nsys/results/profile/profile-7-rank0.sqlite $out/nsys/results/profile/profile-7-rank0.nsys-rep"
rm "$out/nsys/results/profile/profile-7-rank0.nsys-rep"
"$M" diagnose "$out/nsys" --stage profile > /dev/null 2> "$out/none.err"
ok "no trace: refused, asking whether the profile stage ran" has "$out/none.err" 'has the profile stage run'
"$M" diagnose "$out/lane" --stage profile "$out/lane.json" > /dev/null 2>&1
tap_ok $(( $? != 1 )) "--stage profile with an OVERLAP operand is a usage error"
