#!/bin/bash
# Issue 24, item 4: matched A/B profiles.  `gen --winners` adds to the
# validate stage a profiling twin of the baseline and of each winner: the
# same job (argv apart from the profiling switches, env) under the study's
# profiler over its profile_steps, marked twin_of in the manifest.  The
# validate rule accepts a declared twin whose contract is a validate run's
# apart from its profiling block, and still refuses an undeclared profiled
# run.  `report --stage validate` never times a twin and sets the twins'
# profiles side by side ("profile_pairs").
#
# The study is the GPU lane's (tests/gpu/lane.sh study DIALECT: the PyTorch
# profiler, which the H200 lane has, no Nsight Systems), in both dialects.
# The twins' traces and the validate logs here are stand-ins from the lane's
# real runs (tests/data/gpu): the baseline twin gets the core-0.19 profile
# of the baseline (steps 4..5, what a baseline twin records), the winner's
# twin the bridge-pin one; both validate logs are the lane's real 50-step
# baseline log.  The lane itself replaces them with the twins' own.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
M=$MOEFLOW_BIN
U=nobody
tap_plan 54
tmp=$(mktemp -d /tmp/mfvt.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"
as_user() { runuser -u "$U" -- "$@"; }
gen() { "$M" gen --templates "$MOEFLOW_SRCDIR/templates" "$@"; }
# field FILE EXPR: a Python expression over the JSON document d
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# study NAME DIALECT [YAML]: the lane's study (YAML appended), generated
# as $tmp/NAME, with the ep_overlap retune run sealed and recorded as the
# one winner; prints the study directory.
study() {
    local S=$tmp/$1 R d
    bash "$MOEFLOW_SRCDIR/tests/gpu/lane.sh" study "$2" > "$tmp/$1.yaml"
    [ -z "${3:-}" ] || printf '%s\n' "$3" >> "$tmp/$1.yaml"
    [ -z "${4:-}" ] || sed -i "$4" "$tmp/$1.yaml"
    gen "$tmp/$1.yaml" -o "$S" > "$tmp/gen.out" 2>&1 || { diag < "$tmp/gen.out"; return 1; }
    R=$(awk -F'\t' '$1 == "retune" && $4 == "ep_overlap" { print $3; exit }' "$S/candidates.tsv")
    d=$S/runs/7_0
    mkdir -p "$d"
    sed "s/,\"semantics\":/,\"run\":{\"candidate\":\"$R\",\"id\":\"7_0\",\"stage\":\"retune\"},\"semantics\":/" \
        "$S/contracts/$R.json" | tr -d '\n' > "$d/contract.json"
    (cd "$d" && sha256sum contract.json > contract.json.sha256)
    chown -R "$U" "$S"
    chmod -R go-w "$S"
    # the baseline first: a winner is a run contract verify accepts against it
    as_user "$M" contract freeze "$S" --from "$S/contracts/baseline.json" > /dev/null 2>&1
    as_user "$M" contract winner "$S" "$d" > "$tmp/winner.out" 2>&1 || { diag < "$tmp/winner.out"; return 1; }
    echo "$S"
}

for dialect in core-0.19 bridge-pin; do
    S=$(study "$dialect" "$dialect") || { echo "Bail out! $dialect: no study with a winner"; exit 1; }
    as_user "$M" gen --templates "$MOEFLOW_SRCDIR/templates" "$S/study.yaml" \
        --stage validate --winners "$S" > "$tmp/out" 2>&1
    tap_ok $? "$dialect: gen --winners"
    ok "... 4 validate runs: baseline, winner, then a twin of each" has "$tmp/out" "^validate: 4 runs"
    ok "... listed as such" has "$tmp/out" '^  3: ep_overlap = true \(profiling twin of 1, never timed\)$'
    # twin i+2 of run i: twin_of, argv = the run's + the profiling switches,
    # env the run's, nodes and tasks the run's
    for i in 0 1; do
        t=$((i + 2))
        ok "... $t is the twin of $i, with its argv plus the PyTorch profiler's switches, its env" \
            field "$S/manifest.json" "(lambda c: c[$t]['twin_of'] == c[$i]['id'] and
                c[$t]['argv'] == c[$i]['argv'] + ['--profile', '--profile-step-start', '4',
                '--profile-step-end', '6', '--use-pytorch-profiler', '--tensorboard-dir',
                'results/validate/profile-' + c[$i]['id'] + '/tensorboard'] and
                c[$t]['env'] == c[$i]['env'] and
                all(c[$t][k] == c[$i][k] for k in ('nodes', 'tasks_per_node', 'variable', 'value'))
                and 'twin_of' not in c[$i] or sys.exit(1))(
                [s for s in d['stages'] if s['stage'] == 'validate'][0]['candidates'])"
        id=$(field "$S/manifest.json" "[s for s in d['stages'] if s['stage'] == 'validate'][0]['candidates'][$i]['id']")
        tid=$(field "$S/manifest.json" "[s for s in d['stages'] if s['stage'] == 'validate'][0]['candidates'][$t]['id']")
        "$M" contract diff "$S/contracts/$id.json" "$S/contracts/$tid.json" > "$tmp/diff" 2>&1
        ok "... its contract differs only in the profiling block and the declaration" \
            test "$(cut -d: -f1 "$tmp/diff" | tr '\n' ' ')" = "profiling.profiler profiling.steps validation.profiling_twin "
        "$M" contract diff "$S" "$S/contracts/$tid.json" --stage validate > "$tmp/rule" 2>&1
        tap_ok $? "... the validate rule accepts twin $t"
        ok "... as a declared profiling twin" has "$tmp/rule" \
            "^allowed by rule validate-profiling-twin: a declared profiling twin; apart from profiling: equals (the frozen baseline|recorded winner 0)$"
    done
    # the same profiled run, undeclared, is refused
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); del d['validation']; json.dump(d, open(sys.argv[2], 'w'))" \
        "$S/contracts/$tid.json" "$tmp/undeclared.json"
    "$M" contract diff "$S" "$tmp/undeclared.json" --stage validate > "$tmp/rule" 2>&1
    tap_ok $(( $? == 3 ? 0 : 1 )) "... an undeclared profiled run is refused (exit 3)"
    ok "... by the validate rule" has "$tmp/rule" "^refused by rule validate-equal: .*profiling.profiler changed"
    ok "... validate.sbatch passes bash -n" bash -n "$S/validate.sbatch"
    if command -v shellcheck > /dev/null; then
        ok "... and shellcheck" shellcheck "$S/validate.sbatch"
    else
        tap_skip "... and shellcheck" "no shellcheck here"
    fi
    ok "... a twin never writes a timing window" has "$S/validate.sbatch" \
        'if \[ -n "\$twin_of" \]; then$'
done

# report: timing reads the two timed runs only; the twins' profiles pair.
S=$tmp/bridge-pin
tar -xJf "$MOEFLOW_SRCDIR/tests/data/gpu/lane-core-0.19.tar.xz" -C "$tmp" \
    --wildcards 'lane-core-0.19/results/validate/*.log'
log=$(ls "$tmp"/lane-core-0.19/results/validate/[0-9a-f]*.log)
ids=$(field "$S/manifest.json" "' '.join(c['id'] for c in [s for s in d['stages'] if s['stage'] == 'validate'][0]['candidates'][:2])")
set -- $ids
mkdir -p "$S/results/validate"
cp "$log" "$S/results/validate/$1.log"
cp "$log" "$S/results/validate/$2.log"
"$M" report "$S" --stage validate --json > "$tmp/report.json" 2> "$tmp/report.err"
tap_ok $? "report --stage validate with no twin's trace yet"
diag < "$tmp/report.err"
ok "... times the baseline and the winner only" field "$tmp/report.json" \
    "len(d['runs']) == 2 or sys.exit(1)"
ok "... one profile pair, waiting for its traces" field "$tmp/report.json" \
    "(len(d['profile_pairs']) == 1 and d['profile_pairs'][0]['status'].startswith('no trace yet')) or sys.exit(1)"
mkdir -p "$S/results/validate/profile-$1/torch_profile" "$S/results/validate/profile-$2/torch_profile"
cp "$MOEFLOW_SRCDIR"/tests/data/gpu/traces/core-0.19/*.json.gz "$S/results/validate/profile-$1/torch_profile/"
"$M" report "$S" --stage validate --json > "$tmp/report.json" 2> "$tmp/report.err"
ok "... the baseline twin's trace alone: still waiting" field "$tmp/report.json" \
    "d['profile_pairs'][0]['status'].startswith('no trace yet under ') or sys.exit(1)"
cp "$MOEFLOW_SRCDIR"/tests/data/gpu/traces/bridge-pin/*.json.gz "$S/results/validate/profile-$2/torch_profile/"
"$M" report "$S" --stage validate --json > "$tmp/report.json" 2> "$tmp/report.err"
tap_ok $? "report --stage validate --json with both twins' traces"
diag < "$tmp/report.err"
# The lane's figures (tests/data/gpu/expected/overlap-*.txt): nothing
# hidden on either side; 581.007 ms and 587.255 ms of exposed
# communication over 2 GPUs and 2 steps.
ok "... paired, measured, steps 4..5, 2 GPUs a side" field "$tmp/report.json" \
    "(lambda p: p['status'] == 'paired' and p['source'] == 'measured' and p['steps'] == [4, 5]
      and p['baseline']['gpus'] == 2 and p['winner']['gpus'] == 2)(d['profile_pairs'][0]) or sys.exit(1)"
ok "... the exposed communication per GPU and step is overlap's, on each side" \
    field "$tmp/report.json" "(lambda p: abs(p['baseline']['exposed_comm_ms_per_gpu_step'] - 581.007 / 4) < 1e-3
      and abs(p['winner']['exposed_comm_ms_per_gpu_step'] - $(awk '$1 == "total" { print $7 }' \
        "$MOEFLOW_SRCDIR/tests/data/gpu/expected/overlap-bridge-pin.txt") / 4) < 1e-3
      and p['baseline']['hidden_comm_pct'] == 0)(d['profile_pairs'][0]) or sys.exit(1)"
ok "... names the winner and both twins" field "$tmp/report.json" \
    "(lambda p: p['label'] == 'ep_overlap=true' and p['winner_id'] == '$2'
      and p['baseline_twin'] != p['twin'])(d['profile_pairs'][0]) or sys.exit(1)"
# Reconciled with the timed runs (both logs here are the same run): each
# side's GPU busy time as a share of its timed median step, and no share
# of a step change that is zero.
ok "... reconciled with the timed runs' median steps, the busy share measured" \
    field "$tmp/report.json" "(lambda p, r: r['baseline_step_ms'] == [x for x in d['runs'] if x['name'] == 'baseline'][0]['step_ms_median']
      and r['winner_step_ms'] == r['baseline_step_ms'] and r['timed_steps'] == [41, 50]
      and abs(r['baseline_gpu_busy_pct'] - 100 * (p['baseline']['compute_busy_ms_per_gpu_step']
          + p['baseline']['exposed_comm_ms_per_gpu_step']) / r['baseline_step_ms']) < 1e-9
      and r['step_change_ms'] == 0 and r['busy_share_of_step_change_pct'] is None
      and r['source'].startswith('measured'))(d['profile_pairs'][0], d['profile_pairs'][0]['reconciled']) or sys.exit(1)"
"$M" report "$S" --stage validate -o "$tmp/report-out" > /dev/null 2>&1
ok "... and report -o keeps them in its report.json" field "$tmp/report-out/report.json" \
    "d['profile_pairs'][0]['status'] == 'paired' or sys.exit(1)"
"$M" report "$S" --stage validate > "$tmp/report.txt" 2>&1
tap_ok $? "report --stage validate (text)"
ok "... sets the two profiles side by side" has "$tmp/report.txt" \
    "^ep_overlap=true against the baseline, profiling twins over steps 4..5 \(measured, per GPU and step\):$"
ok "... with hidden communication" has "$tmp/report.txt" \
    "^  hidden communication, % of comm +0\.000 +0\.000 +\+0\.000$"
ok "... and the contention, none here: no compute ran beside communication" has "$tmp/report.txt" \
    "^  contention: compute beside comm, % slower +- +- +-$"
ok "... and reconciles them with the timed runs" has "$tmp/report.txt" \
    "^  reconciled with the timed runs' medians over steps 41\.\.50 \(measured\):$"
ok "... nor any extra time to count" has "$tmp/report.txt" \
    "^  contention: its extra compute time, ms +- +- +-$"
# validation.checkpoint's run comes after the twins, has no twin of its
# own, and gen's list names every run validate.sbatch holds.  Without the
# distributed optimizer: without TE it could not resume (checkpoint-validate.sh).
C=$(study ck core-0.19 $'validation:\n  checkpoint: true' \
    's/^  gbs: \(.*\)/  gbs: \1\n  distributed_optimizer: false/') || { echo "Bail out! no checkpoint study"; exit 1; }
as_user "$M" gen --templates "$MOEFLOW_SRCDIR/templates" "$C/study.yaml" --stage validate \
    --winners "$C" > "$tmp/ck.out" 2>&1
tap_ok $? "with validation.checkpoint: gen --winners"
ok "... lists 5 runs, the checkpoint run last" has "$tmp/ck.out" "^  4: checkpoint = "
ok "... which no twin profiles" field "$C/manifest.json" "(lambda c: c[4]['variable'] == 'checkpoint'
    and 'twin_of' not in c[4] and all(x.get('twin_of') != c[4]['id'] for x in c)
    and [x.get('twin_of') for x in c[2:4]] == [c[0]['id'], c[1]['id']] or sys.exit(1))(
    [s for s in d['stages'] if s['stage'] == 'validate'][0]['candidates'])"
ok "... and checkpoints the one winner, the configuration that would train" \
    field "$C/manifest.json" "(lambda c: c[4]['value'] == c[1]['id']
    and c[4]['note'].startswith('checkpoint/resume of ep_overlap=true:') or sys.exit(1))(
    [s for s in d['stages'] if s['stage'] == 'validate'][0]['candidates'])"

# A manifest is data: a twin_of that is no candidate id never becomes a path.
chmod u+w "$S/manifest.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
[s for s in d['stages'] if s['stage'] == 'validate'][0]['candidates'][3]['twin_of'] = '../../../etc'
json.dump(d, open(sys.argv[1], 'w'))" "$S/manifest.json"
"$M" report "$S" --stage validate --json > "$tmp/report.json" 2> "$tmp/report.err"
tap_ok $(( $? == 2 ? 0 : 1 )) "a twin_of that is no candidate id is refused (exit 2)"
ok "... naming the field" has "$tmp/report.err" "manifest.json: validate candidate [0-9a-f]{64}: twin_of: not a candidate id"
tap_done
