#!/bin/bash
# validation.checkpoint (issue 24): the GPU lane's one-GPU study
# (tests/gpu/checkpoint.sh study), in core-0.19 and bridge-pin, generates a
# validate stage with the checkpoint candidate; its script is valid bash,
# both runs' arguments parse against the dialect's argparse dump, the
# checkpoint folder lies inside the study directory, and the resumed run
# is a second srun step that loads step N and saves nothing.  Then the
# generated script itself runs through tests/gpu/standin with
# tests/doubles/fake-megatron as the trainer (it honours --save, --load and
# --ckpt-step; its loss depends on the step alone), and moeflow report
# gives the verdict: pass, then missing evidence and fail when the
# evidence is taken away or broken.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
command -v python3 > /dev/null || skip_all "python3 not installed (build-aux/install-deps.sh)"
command -v flock > /dev/null || skip_all "flock not installed (util-linux)"
M=$MOEFLOW_BIN
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates
T=$(mktemp -d /tmp/mfck.XXXXXX) && trap 'rm -rf "$T"' EXIT
tap_plan 56

declare -A DUMP=([core-0.19]=argparse-core_v0.19.0.txt [bridge-pin]=argparse-bridge-pin-2a75ac12.txt)

# field DIR KEY: a value of the checkpoint candidate in manifest.json
cand() {
    python3 - "$1" "$2" <<'PY'
import json, sys
st = [s for s in json.load(open(sys.argv[1] + "/manifest.json"))["stages"] if s["stage"] == "validate"][0]
c = [c for c in st["candidates"] if c["variable"] == "checkpoint"][0]
v = c[sys.argv[2]]
print(" ".join(v) if isinstance(v, list) else v)
PY
}

for d in core-0.19 bridge-pin; do
    S=$T/$d
    FAKE=$(printf '%q %q' "$MOEFLOW_SRCDIR/tests/doubles/fake-megatron" \
        "$MOEFLOW_SRCDIR/tests/data/megatron/${DUMP[$d]}")
    bash "$MOEFLOW_SRCDIR/tests/gpu/checkpoint.sh" study "$d" |
        sed "s|command: python pretrain_gpt.py|command: ${FAKE//\\/\\\\}|" > "$T/$d.yaml"
    "$M" gen "$T/$d.yaml" -o "$S" --stage validate > "$T/$d.gen" 2>&1
    tap_ok $? "$d: gen of a study with validation.checkpoint: true"
    ok "... validate has the baseline and the checkpoint candidate" \
        test "$(cut -f4 "$S/candidates.tsv" | tail -n +2 | tr '\n' ' ')" = "baseline checkpoint "
    ok "... validate.sbatch is valid bash" bash -n "$S/validate.sbatch"
    argv=$(cand "$S" argv)
    ok "... the uninterrupted run saves at step 45 in the distributed format, every step logged" \
        grep -Eq -- '--log-interval 1 .*--save results/validate/checkpoint/[0-9a-f]{64} --save-interval 45 --ckpt-format torch_dist --deterministic-mode' <<< "$argv"
    ok "... with Megatron's mixed-precision optimizer (workload.distributed_optimizer: false)" \
        eval '! grep -q -- "--use-distributed-optimizer" <<< "$argv"'
    ok "... with deterministic mode's environment" \
        grep -q 'CUBLAS_WORKSPACE_CONFIG.*NCCL_ALGO.*Ring' <<< "$(cand "$S" env)"
    resume=$(grep -m1 '^    resume=(' "$S/validate.sbatch")
    # (by its absolute path: the study's files are named under "$study")
    ok "... the resumed run loads that folder at step 45 and saves nothing" \
        grep -Eq -- '--load "\$study"/results/validate/checkpoint/[0-9a-f]{64} --ckpt-step 45 --ckpt-format torch_dist' <<< "$resume"
    ok "... no --save in it" eval '! grep -q -- "--save" <<< "$resume"'
    ok "... as a second srun step, only after the first exited 0" \
        grep -A1 'if \[ "$rc" -eq 0 \]; then' "$S/validate.sbatch"
    # The contract rule of the validate stage accepts it: same declared
    # configuration as the baseline.
    "$M" contract diff "$S/contracts/baseline.json" "$S/contracts/$(cand "$S" id).json" \
        --stage validate > "$T/$d.diff" 2>&1
    tap_ok $? "... the validate stage's contract rule accepts the checkpoint candidate"

    # The script as generated, through the stand-ins, fake-megatron
    # parsing every argument against the dialect's dump.
    ( cd "$S" && PATH=$MOEFLOW_SRCDIR/tests/gpu/standin:$PATH MOEFLOW_STANDIN_GPUS=1 \
          MOEFLOW_STANDIN_STATE=$S/.standin sbatch validate.sbatch ) > "$T/$d.sbatch" 2>&1
    id=$(cand "$S" id)
    ok "... both candidates exited 0" test "$(cat "$S"/results/validate/*.rc | tr '\n' ' ')" = "0 0 "
    ok "... the resumed run parsed and loaded step 45" \
        has "$S/results/validate/$id.resumed.log" "loaded checkpoint from $S/results/validate/checkpoint/[0-9a-f]{64} at iteration 45"
    folder=$S/results/validate/checkpoint/$(cand "$S" value)
    ok "... the checkpoint folder is inside the study directory, with step 45" \
        test -f "$folder/iter_0000045/fake.distcp"
    ok "... the job recorded its size" test -s "$S/results/validate/$id.checkpoint-bytes"

    "$M" report "$S" --stage validate --json > "$T/$d.json" 2> "$T/$d.json.err"
    tap_ok $? "... moeflow report --stage validate --json"
    python3 - "$T/$d.json" > "$T/$d.verdict" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["checkpoint"]
print(c["verdict"], c["resumed_first_iteration"], c["save_step"], c["last_step"], len(c["steps"]),
      c["max_abs_loss_diff"], c["skipped_iterations"], c["nan_iterations"],
      c["checkpoint_bytes"] > 0, c["checkpoint_bytes_from"])
PY
    ok "... verdict pass: first step 46, steps 46..50 equal, no skipped or NaN, the folder measured" \
        test "$(cat "$T/$d.verdict")" = "pass 46 45 50 5 0.0 0 0 True the folder"
done

S=$T/core-0.19
id=$(cand "$S" id)
"$M" report "$S" --stage validate > "$T/text" 2>&1
ok "the text report shows the verdict" has "$T/text" '^checkpoint/resume \([0-9a-f]{64}\): pass$'
ok "... and the folder's size, measured" has "$T/text" 'checkpoint folder: [1-9][0-9]* bytes \(measured\)'
ok "... and no timing row for the checkpoint candidate" hasnt "$T/text" '^checkpoint='
"$M" report "$S" --stage validate -o "$S/results/validate/report" > /dev/null 2>&1
ok "report -o keeps the verdict in report.json (where moeflow run saves it)" \
    has "$S/results/validate/report/report.json" '"verdict": "pass"'
"$M" report "$S" --pack --pack-dir "$T/pack" > "$T/pack.out" 2>&1
python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["checkpoint"]
print(c["status"], c["value"]["verdict"])' "$T/pack/pack.json" > "$T/pack.verdict" 2>&1
ok "... and the evidence pack carries it" test "$(cat "$T/pack.verdict")" = "reported pass"

# Evidence taken away: the folder (the job's record stands in), then the
# resumed log.
rm -rf "$S/results/validate/checkpoint"
"$M" report "$S" --stage validate --json > "$T/gone.json" 2>&1
ok "a removed folder: its size as the job recorded it" \
    has "$T/gone.json" '"checkpoint_bytes_from": "the job.s record"'
mv "$S/results/validate/$id.resumed.log" "$T/resumed.log"
"$M" report "$S" --stage validate --json > "$T/missing.json" 2>&1
ok "no resumed log: missing evidence" has "$T/missing.json" '"verdict": "missing evidence"'
# A resume that trained from scratch: its first iteration is 1.
grep -v ' iteration ' "$T/resumed.log" > "$S/results/validate/$id.resumed.log"
grep ' iteration ' "$S/results/validate/$id.log" >> "$S/results/validate/$id.resumed.log"
"$M" report "$S" --stage validate > "$T/scratch.txt" 2>&1
ok "a resume from scratch fails: the iteration counter" \
    has "$T/scratch.txt" 'fail: the resumed run starts at iteration 1, not 46'
# A resumed loss that differs at step 48.
sed 's/\(iteration \+48\/.*lm loss: \)[0-9.E+-]*/\19.990000E+00/' "$T/resumed.log" \
    > "$S/results/validate/$id.resumed.log"
"$M" report "$S" --stage validate > "$T/loss.txt" 2>&1
ok "a different loss fails, naming the step" has "$T/loss.txt" 'fail: step 48: loss 9.990000e\+00 resumed'
# Issue 37: the job killed before the resumed run's first iteration (its
# log holds no iteration line, and the job wrote no exit status).
ok "the job wrote its exit status" test -f "$S/results/validate/$id.rc"
mv "$S/results/validate/$id.rc" "$T/rc"
grep -v ' iteration ' "$T/resumed.log" > "$S/results/validate/$id.resumed.log"
"$M" report "$S" --stage validate > "$T/cut.txt" 2>&1
ok "a resumed run killed before its first step: missing evidence, not a failure" \
    has "$T/cut.txt" 'missing evidence: the resumed run logged no iteration: it was cut short'
sed 's/\(iteration \+48\/.*lm loss: \)[0-9.E+-]*/\19.990000E+00/' "$T/resumed.log" \
    > "$S/results/validate/$id.resumed.log"
"$M" report "$S" --stage validate > "$T/running.txt" 2>&1
ok "... and what a job without its exit status shows so far is missing evidence" \
    has "$T/running.txt" 'missing evidence: the job has no exit status yet .*so far: step 48: loss'
mv "$T/rc" "$S/results/validate/$id.rc"
# An earlier attempt's exit status, older than the log a later attempt is
# writing (issue 42): that attempt has none yet.
touch -d '1 hour ago' "$S/results/validate/$id.rc"
"$M" report "$S" --stage validate > "$T/stale.txt" 2>&1
ok "an exit status older than the log is an earlier attempt's: missing evidence, not a failure" \
    has "$T/stale.txt" "missing evidence: the job has no exit status yet \\(results/validate/$id.rc is older than its log: an earlier attempt's\\)"
touch "$S/results/validate/$id.rc"

# A manifest edited to save elsewhere: report reads no folder it names.
python3 - "$S/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for st in m["stages"]:
    for c in st["candidates"]:
        if c["variable"] == "checkpoint":
            c["argv"][c["argv"].index("--save") + 1] = "/etc"
json.dump(m, open(sys.argv[1], "w"))
PY
"$M" report "$S" --stage validate > "$T/elsewhere.txt" 2>&1
ok "a --save moeflow gen did not write: no folder read, missing evidence" \
    has "$T/elsewhere.txt" 'missing evidence: the checkpoint candidate is not one moeflow gen writes'

# The key is a boolean, and an error names file, line and field.
sed 's/^  checkpoint: true/  checkpoint: maybe/' "$T/core-0.19.yaml" > "$T/bad.yaml"
"$M" gen "$T/bad.yaml" -o "$T/bad" > "$T/bad.out" 2>&1
ok "validation.checkpoint: maybe is refused" test $? -ne 0
ok "... naming file, line and field" has "$T/bad.out" 'bad\.yaml:[0-9]+:[0-9]+: validation\.checkpoint'
# The distributed optimizer without Transformer Engine or Apex is torch's
# Adam, which Megatron cannot resume (the GPU lane, 2026-12-01): gen lists
# the checkpoint as skipped, naming both rules, and runs none.
sed '/^  distributed_optimizer: false/d' "$T/core-0.19.yaml" > "$T/dist.yaml"
"$M" gen "$T/dist.yaml" -o "$T/dist" --stage validate > "$T/dist.out" 2>&1
ok "the distributed optimizer on torch's Adam: validate is the baseline alone" \
    test "$(cut -f4 "$T/dist/candidates.tsv" | tail -n +2)" = baseline
ok "... gen lists the checkpoint as skipped, naming both Megatron rules and the remedy" \
    has "$T/dist.out" 'skipped checkpoint.*checkpoint_torch_adam_torch_dist \(megatron/core/optimizer/distrib_optimizer\.py:839 in core-0\.19\).*checkpoint_torch_adam_torch_format \(megatron/core/optimizer/distrib_optimizer\.py:1223 in core-0\.19\).*workload\.distributed_optimizer: false'
# With Transformer Engine (its FusedAdam resumes): the distributed optimizer and format.
sed -e '/^  distributed_optimizer: false/d' \
    -e 's/^  transformer_engine: .*/  transformer_engine: "2.8"/' "$T/core-0.19.yaml" > "$T/te.yaml"
"$M" gen "$T/te.yaml" -o "$T/te" --stage validate > /dev/null 2>&1
ok "with Transformer Engine: the checkpoint run, distributed optimizer, torch_dist format" \
    grep -q -- '--use-distributed-optimizer.*--ckpt-format torch_dist --deterministic-mode' <<< "$(cand "$T/te" argv)"
# Off (the default): no checkpoint candidate.
sed '/^validation:/,$d' "$T/core-0.19.yaml" > "$T/off.yaml"
"$M" gen "$T/off.yaml" -o "$T/off" --stage validate > /dev/null 2>&1
ok "off by default: validate is the baseline alone" \
    test "$(cut -f4 "$T/off/candidates.tsv" | tail -n +2)" = baseline

# The GPU lane's evidence (tests/gpu/checkpoint.sh collect), once committed:
# the verdict under the real Megatron of each dialect, and the jobs it ran
# are the ones today's gen writes (argv and environment of each candidate).
E=$MOEFLOW_SRCDIR/tests/gpu/checkpoint.tsv
A=$MOEFLOW_SRCDIR/tests/data/gpu/checkpoint.tar.xz
for d in core-0.19 bridge-pin; do
    if [ -f "$E" ] && [ -f "$A" ]; then
        ok "GPU lane, $d: the checkpoint verdict under real Megatron is pass" \
            test "$(awk -F'\t' -v d="$d" '$1 == d { print $2 }' "$E")" = pass
        mkdir -p "$T/lane" && tar -xJf "$A" -C "$T/lane" "./$d/manifest.json"
        bash "$MOEFLOW_SRCDIR/tests/gpu/checkpoint.sh" study "$d" > "$T/lane-$d.yaml"
        "$M" gen "$T/lane-$d.yaml" -o "$T/today-$d" --stage validate > /dev/null 2>&1
        python3 - "$T/lane/$d/manifest.json" "$T/today-$d/manifest.json" > "$T/lane-$d.diff" <<'PY'
import json, sys
def jobs(path):
    st = [s for s in json.load(open(path))["stages"] if s["stage"] == "validate"][0]
    return [(c["variable"], c["argv"], c["env"]) for c in st["candidates"]]
a, b = jobs(sys.argv[1]), jobs(sys.argv[2])
print("same" if a == b else "stale: %s" % [x for x in a if x not in b])
PY
        ok "GPU lane, $d: it ran the jobs today's gen writes" has "$T/lane-$d.diff" '^same$'
    else
        tap_skip "GPU lane, $d: the checkpoint verdict under real Megatron" \
            "tests/gpu/checkpoint.sh has not been run and collected yet"
        tap_skip "GPU lane, $d: it ran the jobs today's gen writes" \
            "tests/gpu/checkpoint.sh has not been run and collected yet"
    fi
done
