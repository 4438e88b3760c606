#!/bin/bash
# moeflow run against sbatch and squeue that fail, hang and lie (stub
# programs on PATH, no cluster), in both builds: the sanitizer build makes
# any read of freed memory or leak (ASan, LSan) a non-zero exit.  Issue 38's
# D08 (a hung squeue or sbatch outlives --timeout and SIGINT), D09 (a
# manifest whose chunks disagree with its candidates), D16 (escapes from a
# .rc file or the study's path reach the terminal), D19 (sbatch's word not
# shown), D25 (resuming a failed stage reads freed memory) and D26 (a leak
# on every submission).
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
[ -x "$MOEFLOW_BIN" ] || skip_all "moeflow not built"
W=$(mktemp -d /tmp/mfrunstub.XXXXXX)
trap 'pkill -f "$W/bin/" 2> /dev/null; rm -rf "$W"' EXIT
chmod 0755 "$W"
S=$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml
export MOEFLOW_TEMPLATE_DIR=${MOEFLOW_TEMPLATE_DIR:-$MOEFLOW_SRCDIR/templates} LC_ALL=C
# moeflow run refuses root (contracts are the job user's): an ordinary user
U=()
[ "$(id -u)" = 0 ] && U=(runuser -u nobody --)
mkdir -p "$W/bin"

# sbatch: writes each submitted candidate's .rc (STUB_RC, only for stage
# STUB_FAIL_STAGE when set) and prints STUB_OUT (default a job id), or
# hangs (STUB_SBATCH=hang); squeue: says the jobs are gone, or hangs.
cat > "$W/bin/sbatch" <<'S'
#!/usr/bin/python3
import json, os, sys, time
if os.environ.get('STUB_SBATCH') == 'hang':
    time.sleep(100000)
args = sys.argv[1:]; stage = args[-1].split('.')[0]
arr = next((a[8:] for a in args if a.startswith('--array=')), None)
off = next((int(a.rsplit('=', 1)[1]) for a in args if 'MOEFLOW_INDEX_OFFSET=' in a), 0)
m = json.load(open('manifest.json'))
cands = next(s['candidates'] for s in m['stages'] if s['stage'] == stage)
idx = []
for part in (arr.split('%')[0].split(',') if arr else ['0']):
    a, _, b = part.partition('-'); idx += list(range(int(a), int(b or a) + 1))
rc = os.environ.get('STUB_RC', '0')
if os.environ.get('STUB_FAIL_STAGE') not in (None, stage): rc = '0'
os.makedirs('results/' + stage, exist_ok=True)
if os.environ.get('STUB_NO_RC') != stage:
    for i in idx:
        cid = cands[off + i]['id']
        if os.environ.get('STUB_OOM') == stage and off + i == 0:
            # the first candidate dies as CUDA ends a run that does not fit
            open('results/%s/%s.log' % (stage, cid), 'w').write(
                '[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n')
            open('results/%s/%s.rc' % (stage, cid), 'w').write('1\n')
            continue
        open('results/%s/%s.rc' % (stage, cid), 'w').write(rc + '\n')
print(os.environ.get('STUB_OUT', '42'))
S
cat > "$W/bin/squeue" <<'S'
#!/bin/sh
[ "$STUB_SQUEUE" = hang ] && exec sleep 100000
exit 0
S
chmod 0755 "$W/bin" "$W/bin"/*

# fresh NAME: a newly generated study $W/NAME owned by the run's user
fresh() {
    rm -rf "${W:?}/$1"
    "$MOEFLOW_BIN" gen "$S" -o "$W/$1" > /dev/null || return 1
    [ ${#U[@]} = 0 ] || chown -R nobody "$W/$1"
}
# run ENV... -- ARGS...: moeflow run as the user, stubs first on PATH; the
# exit status in $rc, output in $W/out, seconds taken in $secs
run() {
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    local t0=$SECONDS
    (cd "$W" && "${U[@]}" env PATH="$W/bin:/usr/bin:/bin" "${envs[@]}" \
        timeout -k 5 60 "$MOEFLOW_BIN" run --poll 1 "$@") > "$W/out" 2>&1
    rc=$? secs=$((SECONDS - t0))
}
clean() { ! grep -qaP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$W/out" &&
          ! grep -qa 'Sanitizer' "$W/out"; }

tap_plan 27

fresh st
run -- --until contract st
tap_ok $(( rc != 0 )) "a stage submitted and done: exit 0, nothing leaked (D26)"
ok "... the job id recorded" has "$W/st/run-state.json" '"job": "42"'

fresh hang
run STUB_SQUEUE=hang -- --timeout 3 --until contract hang
[ $rc = 6 ] && [ $secs -le 12 ]
tap_ok $? "squeue hangs: --timeout 3 stops the run with exit 6 in ${secs}s (D08)"
ok "... saying it timed out and that the jobs stay" has "$W/out" 'contract: timed out; its jobs stay in Slurm'

fresh hang
(cd "$W" && "${U[@]}" env PATH="$W/bin:/usr/bin:/bin" STUB_SQUEUE=hang \
    "$MOEFLOW_BIN" run --poll 1 --until contract hang > "$W/out" 2>&1) &
bg=$!
for _ in $(seq 100); do grep -q 'submitted job 42' "$W/out" 2> /dev/null && break; sleep 0.1; done
sleep 1
t0=$SECONDS
pkill -INT -f "$MOEFLOW_BIN run --poll 1 --until contract hang"
wait $bg
rc=$? secs=$((SECONDS - t0))
[ $rc = 6 ] && [ $secs -le 5 ]
tap_ok $? "squeue hangs: SIGINT stops the run with exit 6 in ${secs}s (D08)"
ok "... no squeue is left behind" test -z "$(pgrep -f "sleep 100000")"

fresh hang
run STUB_SBATCH=hang -- --timeout 1 --until contract hang
[ $rc = 6 ] && [ $secs -le 20 ]
tap_ok $? "sbatch hangs: stopped after its grace, exit 6 in ${secs}s (D08)"
ok "... saying how to look for a job it may have submitted" has "$W/out" 'sbatch did not finish within --timeout'

fresh st
run STUB_FAIL_STAGE=fit STUB_RC=1 -- --until fit st
tap_ok $(( rc != 5 )) "a failed fit stage: exit 5"
run STUB_FAIL_STAGE=fit STUB_RC=1 -- --until fit st
[ $rc = 5 ] && clean && grep -q '^fit: 5 candidates; again, the failed ones$' "$W/out"
tap_ok $? "resuming the failed stage submits the failed ones again, reads no freed memory (D25)"

python3 - "$W/st/manifest.json" <<'P'
import json, sys
m = json.load(open(sys.argv[1]))
for s in m['stages']:
    if s['stage'] == 'fit': s['chunks'][0]['count'] = 100000
json.dump(m, open(sys.argv[1], 'w'))
P
run -- --until fit st
[ $rc = 2 ] && clean && grep -q 'stage fit: chunk 0 (offset 0, count 100000.*the manifest disagrees with itself' "$W/out"
tap_ok $? "a chunk past the candidates: exit 2 naming the manifest and the chunk, no crash (D09)"
python3 - "$W/st/manifest.json" <<'P'
import json, sys
m = json.load(open(sys.argv[1]))
for s in m['stages']:
    if s['stage'] == 'fit': s['chunks'][0].update(count=5, offset=-5000000)
json.dump(m, open(sys.argv[1], 'w'))
P
run -- --until fit st
[ $rc = 2 ] && clean && grep -q 'offset -5000000' "$W/out"
tap_ok $? "a negative chunk offset: exit 2, no crash (D09)"

fresh st
run STUB_RC=$'1\e]0;pwned\a' -- --until contract st
[ $rc = 5 ] && clean && grep -qF 'exited 1\x1b]0;pwned\x07' "$W/out"
tap_ok $? "a .rc holding an OSC escape is shown as \\xHH (D16)"

fresh st
mv "$W/st" "$W/st"$'\e[31m'red
run STUB_RC=1 -- --until contract "st"$'\e[31m'red
[ $rc = 5 ] && clean && grep -qF 'st\x1b[31mred/results/contract/' "$W/out"
tap_ok $? "a study path holding an escape is shown as \\xHH (D16)"

fresh st
run STUB_OUT='Submitted batch job 12' -- --until contract st
[ $rc = 4 ] && clean && grep -q "sbatch exited 0 but printed no job id" "$W/out" &&
    grep -q "('Submitted batch job 12' is not one" "$W/out"
tap_ok $? "sbatch printing no job id: exit 4, its output shown (D19)"

fresh st
run STUB_NO_RC=contract -- --until contract st
[ $rc = 5 ] && clean && grep -q 'no exit status (the job ended before its candidate did)' "$W/out"
tap_ok $? "sbatch that lies (a job that leaves no exit status): the stage fails, naming it"

# run_with_sbatch STATUS STDERR: moeflow run up to the contract stage on a
# fresh study, with an sbatch that prints STDERR and exits STATUS.
run_with_sbatch() {
    fresh st
    printf '#!/bin/bash\nprintf %%s %q >&2\nexit %d\n' "$2" "$1" > "$W/bin/sbatch-stub"
    chmod 0755 "$W/bin/sbatch-stub"
    mv "$W/bin/sbatch" "$W/bin/sbatch-ok" && ln -s sbatch-stub "$W/bin/sbatch"
    run -- --until contract st
    rm "$W/bin/sbatch" && mv "$W/bin/sbatch-ok" "$W/bin/sbatch"
}

run_with_sbatch 1 $'sbatch: error: Batch job submission failed: Invalid account\n'
[ $rc = 4 ] && clean && grep -q 'sbatch failed (exit 1).*' "$W/out" && grep -q 'Invalid account' "$W/out"
tap_ok $? "sbatch that fails: exit 4 with its error"

# Issue 40: a cluster without the moeflow plugin refuses the scripts'
# --moe-* options; run says so, and shows sbatch's lines as lines.
run_with_sbatch 255 "sbatch: unrecognized option '--moe-stage=contract'"$'\n''Try "sbatch --help" for more information'$'\n'
[ $rc = 4 ] && clean && grep -q "^  sbatch: unrecognized option '--moe-stage=contract'$" "$W/out" &&
    grep -q '^  Try "sbatch --help" for more information$' "$W/out" && ! grep -qF 'x0a' "$W/out" &&
    grep -q 'this cluster does not load the moeflow SPANK plugin.*set cluster.plugin: none' "$W/out"
tap_ok $? "sbatch without the plugin: its lines as lines, and the cause with both remedies"

# Issue 37: a baseline that fits under no recompute or offload (the tiny
# study at sequence 32768 on GPUs of 1 GiB) is refused by gen, naming the
# smallest GPU count with a layout that fits, and fit prints no step time
# for it; a study folder whose study.yaml says so (written by an older gen)
# is refused by run before it submits anything.
sed -e 's/^  nodes: 1$/  nodes: 1\n  gpu_memory_gib: 1/' -e 's/seq_len: 1024/seq_len: 32768/' "$S" > "$W/unfit.yaml"
"$MOEFLOW_BIN" gen "$W/unfit.yaml" -o "$W/unfit" > "$W/out" 2>&1
rc=$?
[ $rc = 3 ] && [ ! -e "$W/unfit" ]
tap_ok $? "gen refuses a baseline that cannot fit: exit 3, nothing written"
ok "... naming the file, the field and where it would fit" has "$W/out" \
    "unfit.yaml: baseline: does not fit in memory under any recompute or offload .*6.4 GiB > 0.9 GiB usable.*the smallest GPU count tried .* is 8 \(4 nodes\): Attention: TP4"
"$MOEFLOW_BIN" fit "$W/unfit.yaml" > "$W/out" 2>&1
[ $? = 3 ] && ! grep -q 'TFLOP/s' "$W/out" && grep -q '^predicted step: none: a configuration that does not fit has no step time$' "$W/out"
tap_ok $? "fit prints no step time for it, and says so"
"$MOEFLOW_BIN" fit --json "$W/unfit.yaml" > "$W/out" 2>&1
python3 -c 'import json, sys; o = json.load(open(sys.argv[1]))
sys.exit(not (o["step_ms"] is None and o["no_step_because"] == "does not fit" and "is 8:" in o["fits_instead"]))' "$W/out"
tap_ok $? "fit --json: step_ms null, why, and where it fits"
fresh st
cp "$W/unfit.yaml" "$W/st/study.yaml"
run -- st
[ $rc = 3 ] && [ ! -e "$W/st/results/contract" ] && grep -q 'baseline: does not fit' "$W/out"
tap_ok $? "run refuses a study folder whose baseline cannot fit, before submitting anything"
fresh st
run -- --dry-run st
tap_ok $(( rc != 0 )) "... and runs one that fits"

# Issue 37: a fit rung that runs out of memory has given its answer; the
# stage is done and run goes on.  Any other failure still stops it.
fresh st
run STUB_OOM=fit -- --until fit st
[ $rc = 0 ] && grep -q '^\[.*\] fit: done, 4 candidates exited 0 and 1 ran out of memory: the answer' "$W/out"
tap_ok $? "a fit rung that runs out of memory is an answer: the stage is done"
python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["stages"]["fit"]
sys.exit(not (s["state"] == "done" and len(s["out_of_memory"]) == 1))' "$W/st/run-state.json"
tap_ok $? "... recorded in run-state.json as out_of_memory"
fresh st
run STUB_OOM=contract -- --until contract st
tap_ok $(( rc != 5 )) "... while out of memory outside the fit stage is a failure"
tap_done
