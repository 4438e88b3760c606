#!/bin/bash
# CUDA-graph evidence on what real Megatron writes (issue 41): the H200
# recordings (tests/data/gpu/cuda-graphs-*.tar.xz) log captures and never a
# replay, so the old rule (a replay line or a MISMATCH) refused every real
# graphed run; report now reads the capture lines and the traces'
# cudaGraphLaunch calls (tests/data/graphs, excerpts of those recordings).
# The Megatron lines the rules cite are compared with ../shared/megatron
# where it exists (not in CI: tests/skips.tsv).
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
command -v python3 > /dev/null || skip_all "python3 not installed (build-aux/install-deps.sh --test)"
S=$MOEFLOW_SRCDIR
M=$MOEFLOW_BIN
G=$S/tests/data/graphs
shared=${MOEFLOW_MEGATRON_DIR:-$S/../shared/megatron}
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
tap_plan 7

# The whole recorded logs, every variant of both dialects: no line passes
# the old rule (a CUDA graph, "replay", not a warning); "replayed" is only in
# the warning that TE is missing, "replay" else only in a dumped argument.
for d in core-0.19 bridge-pin; do
    mkdir -p "$T/$d" && tar -xJf "$S/tests/data/gpu/cuda-graphs-$d.tar.xz" -C "$T/$d" --wildcards '*/train.log'
done
cat "$T"/*/*/train.log | grep -i replay | grep -iE 'cuda ?graph' | grep -vi warning > "$T/replays"
ok "no recorded Megatron log has a replay line (the old rule flagged every graphed run)" \
    test ! -s "$T/replays"
cat "$T"/*/droppad-local-layer*/train.log "$T"/*/droppad-full*/train.log |
    grep -cE '> built [0-9]+ cuda graph\(s\) in |CUDA graph capture done for training!!!' > "$T/built"
ok "... while each graphed run logs its completed capture (7 runs)" test "$(cat "$T/built")" = 7

# The excerpts as report reads them, with the traces beside them.
for v in droppad-local-layer droppad-full nograph; do
    mkdir -p "$T/runs/$v"
    cp "$G/core-0.19-$v.log" "$T/runs/$v/train.log"
    cp "$G/core-0.19-$v-prof.json.gz" "$T/runs/$v/rank-0.json.gz"
done
"$M" report --window 5-8 --json "$T/runs/nograph" "$T/runs/droppad-local-layer" \
    "$T/runs/droppad-full" "$G/bridge-pin-droppad-local-layer.log" \
    "$G/bridge-pin-droppad-full.log" > "$T/report.json" 2> "$T/err"
tap_ok $? "report of the real excerpts"
diag < "$T/err"
python3 - "$T/report.json" > "$T/levels" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["runs"]:
    e = r["in_effect"]
    graphs = [m for m in r["mismatches"] if "graph" in m]
    print(r["name"], e["graph_evidence"], e.get("graph_launches", "-"), len(graphs))
PY
diag < "$T/levels"
cat > "$T/want" <<'W'
nograph none 0 0
droppad-local-layer proven-by-trace 128 0
droppad-full proven-by-trace 2 0
bridge-pin-droppad-local-layer.log captured - 0
bridge-pin-droppad-full.log captured - 0
W
ok "layer graphs: 128 launches, full iteration: 2, no graphs: 0; no graph mismatch" \
    diff "$T/want" "$T/levels"

# The no-graph run as if it had asked for local graphs: nothing proves them.
sed -i 's/^\(  cuda_graph_impl \.*\) none$/\1 local/' "$T/runs/nograph/train.log"
"$M" report --window 5-8 "$T/runs/nograph" > "$T/asked.out" 2>&1
ok "graphs requested, no capture line and no launch: a MISMATCH" \
    has "$T/asked.out" 'MISMATCH: CUDA graphs requested, but the log has no capture line'

# The cited Megatron lines, against the tarballs.
"$MOEFLOW_BUILDDIR/tests/unit/analysis/test_graph_evidence" --citations > "$T/citations"
ok "test_graph_evidence lists its citations (42)" test "$(wc -l < "$T/citations")" = 42
if [ -f "$shared/megatron-lm-core_v0.19.0.tar.xz" ]; then
    python3 "$S/tests/data/megatron/excerpts.py" check "$shared" \
        "$S/tests/data/megatron/graph-excerpts" < "$T/citations" > "$T/check" 2>&1
    tap_ok $? "the graph excerpts match ../shared/megatron line for line"
    diag < "$T/check"
else
    tap_skip "the graph excerpts match ../shared/megatron line for line" \
        "no ../shared/megatron here: the tarballs are not part of the project"
fi
tap_done
