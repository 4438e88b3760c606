#!/bin/bash
# Issue 21, part A: each reproducer of tests/data/hardening/hostile-input
# (found by trying moeflow as a hostile or careless user would) and each
# item of the issue, through the real moeflow.  Before the fixes: a newline
# in a study reached every script as a command, SIGFPE (exit 136) in gen,
# fit and layouts, an empty error for `nan`, a segfault in diagnose,
# layouts ranked by NaN, a Bridge step time of -0.5 s won by 600%, a
# negative skipped count, a free of an uninitialised pointer, retune.mbs
# [2, 2] failing at write time as a system error.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
H=$MOEFLOW_SRCDIR/tests/data/hardening/hostile-input
S=$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml
T=$MOEFLOW_SRCDIR/templates
tmp=$(mktemp -d /tmp/mfhi.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

tap_plan 38

# run EXPECTED-EXIT DESCRIPTION ARGS...: moeflow ARGS, output in $tmp/out
run() {
    local want=$1 desc=$2; shift 2
    "$M" "$@" > "$tmp/out" 2>&1
    local rc=$?
    [ "$rc" -eq "$want" ] || { echo "exit $rc, wanted $want:"; cat "$tmp/out"; } | diag
    tap_ok $(( rc != want )) "$desc (exit $want)"
}

# refuse EXPECTED-EXIT PATTERN DESCRIPTION ARGS...: the exit and the message
# both, so that a missing file (also exit 2) cannot pass for a refusal.
refuse() {
    local want=$1 pat=$2 desc=$3; shift 3
    "$M" "$@" > "$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" -eq "$want" ] && grep -qE -- "$pat" "$tmp/out"; then
        tap_ok 0 "$desc (exit $want)"
    else
        { echo "exit $rc, wanted $want and /$pat/:"; cat "$tmp/out"; } | diag
        tap_ok 1 "$desc (exit $want)"
    fi
}

# --- item 1: nothing from a study reaches a script as code -----------------
run 2 "s_name_nl.yaml: a newline in name is refused" gen --templates "$T" "$H/s_name_nl.yaml" -o o
ok "... naming the field and the character" \
    has "$tmp/out" "s_name_nl.yaml:31:7: name: holds a newline \(U\+000A\) at byte 2"
[ ! -e o ] && [ ! -e PWNED ]; tap_ok $? "... and nothing is written"
sed 's/^  time_limit: .*/  time_limit: "00:10:00\\n#SBATCH --wrap=id"/' "$S" > tl.yaml
run 2 "a newline in cluster.time_limit is refused" gen --templates "$T" tl.yaml -o o
ok "... naming cluster.time_limit" has "$tmp/out" "cluster.time_limit: holds a newline"
run 1 "a newline in the -o path is refused" gen --templates "$T" "$S" -o "$(printf 'o\ntouch PWNED')"
ok "... naming -o" has "$tmp/out" "^moeflow: -o: holds a newline"
mkdir -p hetjob
run 1 "an -o path holding 'hetjob' (an sbatch separator) is refused" \
    gen --templates "$T" "$S" -o hetjob/o
odd="$tmp/it's a \"dir\" #1 \\ \$(id)"
mkdir -p "$odd"
run 0 "an -o path with quotes, blanks, '#', a backslash and \$( ) is fine" \
    gen --templates "$T" "$S" -o "$odd/o"
ok "... quoted for sbatch (double quotes, \\\" and \\\\ escaped)" has "$odd/o/fit.sbatch" \
    '^#SBATCH "--moe-study=/tmp/mfhi\.[A-Za-z0-9]+/it'"'"'s a \\"dir\\" #1 \\\\ \$\(id\)/o"$'

# --- item 2: arithmetic cannot overflow or divide by zero ----------------------
for c in gen fit layouts; do
    if [ $c = gen ]; then args=(gen --templates "$T" "$H/fpe.yaml" -o fpe); else args=($c "$H/fpe.yaml"); fi
    refuse 2 "workload.gbs: GBS 65536 is not a multiple of MBS 65536 x DP 65536" \
        "fpe.yaml: $c refuses MBS 65536 x DP 65536, the product not wrapped (was SIGFPE)" "${args[@]}"
done
refuse 2 "retune.mbs: 65536: GBS 65536 is not a multiple of MBS 65536 x DP 65536" \
    "s_ovf_retune_mbs.yaml: a retune MBS of 65536 x DP 65536 (was SIGFPE)" \
    gen --templates "$T" "$H/s_ovf_retune_mbs.yaml" -o ovf
run 2 "a product of three sizes in int: EP 65536 x ETP 1024 x PP 1024 (was SIGFPE)" \
    gen --templates "$T" "$MOEFLOW_SRCDIR/tests/data/study/bad/ep-etp-pp-wraps.yaml" -o ep
run 0 "skip5e18.log: report reads it" report "$H/skip5e18.log"
ok "... the 5e18 skipped count is impossible, named with its line" \
    has "$tmp/out" "skip5e18.log:45: iteration 45: 'number of skipped iterations: 5e\+18' is impossible"
ok "... and the column is not negative" has "$tmp/out" "^skip5e18.log +10 .* finite +0 +0 "

# --- item 3: one numeric validation for every entry point ----------------------
run 2 "s_tflops_nan.yaml: nan is refused" gen --templates "$T" "$H/s_tflops_nan.yaml" -o nan
ok "... with a message (it was empty)" \
    has "$tmp/out" "s_tflops_nan.yaml:5:27: cluster.achievable_tflops_bf16: NaN is not a finite number"
for f in topk0:topk h0:hidden; do
    for c in layouts fit; do
        refuse 2 "${f%%:*}.json: model custom: ${f#*:}: 0 is out of range 1\.\." \
            "${f%%:*}.json: $c refuses ${f#*:} 0, naming the key and its range" \
            $c --model-json "$H/${f%%:*}.json" --gpus 8 --seq 4096 --mbs 1 --gbs 64
    done
done
echo '{"num_layers":4,"hidden":512,"moe_ffn_hidden":1024,"num_experts":8,"topk":9,"num_heads":8,"vocab":32000}' > topk9.json
refuse 2 "topk: 9 is more than num_experts 8" "topk > num_experts: layouts refuses it" \
    layouts --model-json topk9.json --gpus 8 --seq 4096 --mbs 1 --gbs 64
refuse 1 "^moeflow: --capacity-gib 'nan': NaN is not a finite number" \
    "diagnose --capacity-gib nan is refused" diagnose --capacity-gib nan report.json
refuse 1 "^moeflow: --gpu-mem-gib 'nan': NaN is not a finite number" \
    "fit --gpu-mem-gib nan is refused" fit --preset qwen3-30b-a3b --gpus 16 --seq 4096 \
    --mbs 1 --gbs 256 --gpu-mem-gib nan
refuse 2 "core list '4294967296': 4294967296 is out of range" \
    "topo --cores 4294967296 is refused (hwloc wrapped it to core 0)" \
    topo --xml "$MOEFLOW_SRCDIR/tests/data/topology/mpibind-g4dnmetal.xml" --cores 4294967296
run 2 "base.log vs bneg.log: a negative Bridge step time is not a win" report "$H/base.log" "$H/bneg.log"
ok "... it is impossible, named with file and line" \
    has "$tmp/out" "bneg.log:2: iteration 1: 'Step Time : -0.5s' is impossible"
hasnt "$tmp/out" " win$"; tap_ok $? "... and no verdict says win"
printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"device":4294967296}}]}\n' > dev.json
refuse 2 "kernel 'k': device 4294967296 is out of range 0\.\.2147483647" \
    "a Kineto kernel on device 2^32 is refused (it was GPU 0)" overlap dev.json
sed 's/^  gpus_per_node: 2$/  gpus_per_node: 2\n  host_expert_us: 0\n  host_etp_us: 0/' "$S" > te0.yaml
run 0 "the documented TE defaults host_expert_us: 0, host_etp_us: 0 can be written" fit te0.yaml

# --- item 4: crashes -----------------------------------------------------------
refuse 2 "runs\[0\] has no name" \
    "diagnose-noname.json: a run without a name is refused, naming it (was a segfault)" \
    diagnose --run x "$H/diagnose-noname.json"
refuse 2 "^moeflow: /nonexistent: study: No such file or directory$" \
    "fit /nonexistent: an error, no free of an uninitialised pointer" fit /nonexistent
sed 's/^  mbs: \[2\]$/  mbs: [2, 2]/' "$S" > mbs22.yaml
run 2 "retune.mbs: [2, 2] is refused at load time (was exit 4 at write time)" \
    gen --templates "$T" mbs22.yaml -o mbs22
ok "... naming the repeated item" has "$tmp/out" "retune.mbs\[1\]: '2' is given twice \(also item 0\)"
refuse 2 "retune.mbs\[1\]: '2' is given twice" "... --dry-run refuses it too (it exited 0)" \
    gen --templates "$T" mbs22.yaml -o mbs22 --dry-run
tap_done
