#!/bin/bash
# Issue 40: moeflow gen reports every independent error of a study in one
# pass ("N errors in FILE:", then each at its file:line:column, in the
# order of the file), exits non-zero, and writes nothing: no -o folder, no
# half-written one.  A study that leaves software.transformer_engine out
# is told what "none" and a version each mean.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
tap_plan 6

cat > "$T/study.yaml" <<'YAML'
name: newcomer
model:
  preset: qwen3-30b-a3b
  nmu_layers: 48
cluster:
  nodes: two
  gpu: h1000
workload:
  gbs: 512
  precision: fp9
software:
  megatron: core-0.16
baseline:
  ep: 8
  tp_comm_overlap: true
measure:
  screen_steps: 40
YAML
(cd "$T" && "$M" gen -o out study.yaml) > "$T/gen.out" 2> "$T/gen.err"
rc=$?
ok "gen exits non-zero (2, invalid input)" test "$rc" = 2
ok "... and writes nothing: no -o folder, nothing beside it" \
    sh -c "test ! -e '$T/out' && test -z \"\$(ls -A '$T' | grep -v '^study.yaml$\|^gen\.')\" &&
           test ! -s '$T/gen.out'"
ok "... the count first, naming the file" has "$T/gen.err" '^moeflow: 7 errors in study.yaml:$'
cat > "$T/want" <<'WANT'
  study.yaml:4:3: model.nmu_layers: unknown key (did you mean 'num_layers'?)
  study.yaml:6:10: cluster.nodes: expected an integer, not 'two'
  study.yaml:7:8: cluster.gpu: 'h1000' is not valid (did you mean 'h100'?); choose h100|h200|b200|gb200|gb300|a100
  study.yaml:10:14: workload.precision: 'fp9' is not valid; choose bf16|fp8-tensorwise|fp8-delayed|fp8-blockwise|mxfp8|nvfp4
  study.yaml:12:3: software.transformer_engine: is required: say "none" (Megatron's local implementation, --transformer-impl local: BF16 only, no TE CUDA graphs, no MLA, CP or MoE TP, no delayed wgrad or TP comm overlap, no layernorm or moe_act recompute) or the container's Transformer Engine version, e.g. "2.9" (--transformer-impl transformer_engine)
  study.yaml:15:20: baseline.tp_comm_overlap: needs tp > 1
  study.yaml:17:17: measure.screen_steps: 40: screen with 6 to 12 post-warm-up steps
WANT
ok "... then each error on its own line, in the order of the file" \
    sh -c "tail -n +2 '$T/gen.err' | diff '$T/want' -"

# Fixed, the same study generates.
sed -e '/nmu_layers/d' -e 's/nodes: two/nodes: 2/' -e 's/gpu: h1000/gpu: h100/' \
    -e 's/precision: fp9/precision: bf16/' -e 's/megatron: core-0.16/&\n  transformer_engine: "2.9"/' \
    -e '/tp_comm_overlap/d' -e 's/screen_steps: 40/screen_steps: 10/' "$T/study.yaml" > "$T/fixed.yaml"
(cd "$T" && "$M" gen -o fixed fixed.yaml) > /dev/null 2> "$T/fixed.err"
ok "with each fixed the study generates" test -f "$T/fixed/submit.sh"

# A hostile file: hundreds of errors, a bounded report.
{ sed '/^measure:/,$d' "$T/fixed.yaml"; echo "measure:"
  for i in $(seq 1 300); do echo "  k$i: 1"; done; } > "$T/many.yaml"
(cd "$T" && "$M" gen -o many many.yaml) > /dev/null 2> "$T/many.err"
ok "300 errors: the first 50 at most, then '... N more', nothing written" \
    sh -c "head -1 '$T/many.err' | grep -q '^moeflow: 300 errors in many.yaml:$' &&
           test \$(grep -c 'unknown key' '$T/many.err') -le 50 &&
           tail -1 '$T/many.err' | grep -qE '^  \.\.\. [0-9]+ more$' && test ! -e '$T/many'"
