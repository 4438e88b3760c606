#!/bin/bash
# Faults around the study directory on a real local Slurm cluster: an
# unwritable study, a full disk while the contract is frozen, a corrupt and
# a tampered frozen contract, a task SIGKILLed while it writes.  For each:
# the job fails (or is refused) as designed, the message says what happened
# and what to do, the node stays IDLE, and nothing is left half-written.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
# Nodes pass through COMPLETING for a moment after a step: wait up to 10 s.
idle_soon() {
    local i
    for i in $(seq 50); do nodes_all_idle > /dev/null 2>&1 && return 0; sleep 0.2; done
    nodes_all_idle
}
command -v mount >/dev/null || skip_all "needs mount(8) for the tmpfs"

tap_plan 31
cluster_up faults

U=slurmtest
id $U >/dev/null 2>&1 || useradd -m $U
as_user() { runuser -u $U -- env SLURM_CONF="$SLURM_CONF" "$@"; }

# A study directory as 'moeflow gen' lays it out (see plugin-contract.sh).
make_study() {  # make_study DIR
    local s=$1
    mkdir -p "$s/contracts"
    cat > "$s/contracts/baseline.json" <<'JSON'
{"environment": {"megatron": "core_v0.16.0", "transformer_engine": "2.8"},
 "hardware": {"gpu_model": "H100", "gpus": 16, "gpus_per_node": 8, "nvlink_domain": 8},
 "workload": {"model": "qwen3-30b-a3b", "seq_len": 4096, "mbs": 1, "gbs": 512, "data": "mock"},
 "semantics": {"routing": "dropless", "class": "training-equivalent"},
 "parallel": {"tp": 1, "cp": 1, "pp": 1, "vpp": 1, "ep": 16, "etp": 1, "dp": 16, "edp": 1},
 "tuning": {"dispatcher": "alltoall", "dispatcher_backend": "none", "ep_overlap": false,
            "manual_gc": false, "recompute_modules": []},
 "timing": {"warmup": 10, "screen_steps": 12, "window": [41, 50]}}
JSON
    sed 's/"alltoall", "dispatcher_backend": "none"/"flex", "dispatcher_backend": "hybridep"/' \
        "$s/contracts/baseline.json" > "$s/contracts/r1.json"
    chown -R $U "$s"
    chmod -R go-w "$s"
}
# Every file under DIR that is not one of the listed complete files.
half_written() {  # half_written DIR
    find "$1" -newer "$WORK/.t0" -type f ! -name '*.out' ! -path '*/contracts/*' | while read -r f; do
        case "$f" in
            */frozen.json|*/contract.json) python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" \
                2>/dev/null || echo "$f" ;;
            */frozen.json.sha256) grep -qE '^[0-9a-f]{64}  frozen\.json$' "$f" || echo "$f" ;;
            */contract.json.sha256) grep -qE '^[0-9a-f]{64}  contract\.json$' "$f" || echo "$f" ;;
            *) echo "$f" ;;
        esac
    done
}
cat > "$WORK/step.sh" <<'EOF2'
#!/bin/bash
#SBATCH -N 1 -n 1
/usr/bin/srun -n 1 /bin/echo "step ran stage=$MOEFLOW_STAGE"
EOF2
chmod 0755 "$WORK/step.sh"
cd "$WORK" || exit 1
touch "$WORK/.t0"

# --- 1. the study directory is not writable by the job's user --------------
S=$WORK/ro
make_study "$S"
chmod 0555 "$S"
job=$(as_user sbatch --parsable -o "$WORK/ro-%j.out" --moe-study="$S" --moe-stage=contract step.sh)
wait_job "$job"
ok "unwritable study: the srun step is failed, not run" hasnt "$WORK/ro-$job.out" '^step ran'
ok "the message names the study's contract directory and the cause" \
    has "$WORK/ro-$job.out" "moeflow: .*$S.*Permission denied"
ok "and what to do about it" has "$WORK/ro-$job.out" "must be able to write the study directory"
cat "$WORK/ro-$job.out" | diag
ok "nothing was created in the study" test "$(ls -A "$S" | tr '\n' ' ')" = "contracts "
ok "the node is still IDLE" idle_soon

# --- 2. the disk fills while the contract is frozen -----------------------
D=$WORK/full
mkdir -p "$D"
if mount -t tmpfs -o size=64k,mode=0755 moeflow-full "$D"; then
    make_study "$D/study"
    # Leave a few hundred bytes: less than a frozen contract needs.
    dd if=/dev/zero of="$D/filler" bs=1k count=64 2>/dev/null
    dd if=/dev/zero of="$D/filler2" bs=1 count=4096 2>/dev/null
    job=$(as_user sbatch --parsable -o "$WORK/full-%j.out" --moe-study="$D/study" \
          --moe-stage=contract step.sh)
    wait_job "$job"
    ok "disk full: the srun step is failed, not run" hasnt "$WORK/full-$job.out" '^step ran'
    ok "the message says the device is full" has "$WORK/full-$job.out" 'moeflow: .*No space left on device'
    ok "and what to do about it" has "$WORK/full-$job.out" 'free space .* then resubmit; nothing was written'
    diag < "$WORK/full-$job.out"
    ok "no frozen.json, complete or partial, on the full disk" test ! -e "$D/study/contract/frozen.json"
    ok "no temporary file left behind" test -z "$(half_written "$D/study")"
    rm -f "$D/filler" "$D/filler2"
    job=$(as_user sbatch --parsable -o "$WORK/full2-%j.out" --moe-study="$D/study" \
          --moe-stage=contract step.sh)
    wait_job "$job"
    ok "with space again, the same contract stage freezes and runs" \
        has "$WORK/full2-$job.out" '^step ran stage=contract$'
    ok "and the seal checks" sh -c "cd '$D/study/contract' && sha256sum -c frozen.json.sha256 >/dev/null"
    cd / && umount "$D"; tap_ok $? "the test's tmpfs unmounts"; cd "$WORK" || exit 1
else
    for what in "disk full: the srun step is failed, not run" \
        "the message says the device is full" "and what to do about it" \
        "no frozen.json, complete or partial, on the full disk" "no temporary file left behind" \
        "with space again, the same contract stage freezes and runs" "and the seal checks" \
        "the test's tmpfs unmounts"; do
        tap_skip "$what" "cannot mount a tmpfs here"
    done
fi
ok "the node is still IDLE" idle_soon

# --- 3. a frozen contract that is corrupt, or tampered with ---------------
S=$WORK/study
make_study "$S"
job=$(as_user sbatch --parsable -o "$WORK/c-%j.out" --moe-study="$S" --moe-stage=contract step.sh)
wait_job "$job"
ok "the contract stage freezes a baseline" job_completed "$job"
cp "$S/contract/frozen.json" "$WORK/frozen.good"
chmod u+w "$S/contract/frozen.json"
head -c 100 "$WORK/frozen.good" > "$S/contract/frozen.json"
as_user sbatch --moe-study="$S" --moe-stage=retune --moe-candidate=r1 step.sh > corrupt.out 2>&1
tap_ok $(( $? == 0 )) "a truncated frozen.json: the submission is refused"
ok "the message says the frozen contract is not valid JSON, and where" \
    has corrupt.out 'moeflow: .*frozen\.json.*not valid JSON'
sed 's/"tp":1/"tp":2/' "$WORK/frozen.good" > "$S/contract/frozen.json"
as_user sbatch --moe-study="$S" --moe-stage=retune --moe-candidate=r1 step.sh > tamper.out 2>&1
tap_ok $(( $? == 0 )) "a tampered frozen.json (seal mismatch): the submission is refused"
ok "the message says it was tampered with" has tamper.out 'tampered with'
# Tampered between submission and start: the task refuses to start.
cp "$WORK/frozen.good" "$S/contract/frozen.json"
job=$(as_user sbatch --parsable --hold -o "$WORK/t-%j.out" --moe-study="$S" --moe-stage=retune \
      --moe-candidate=r1 step.sh)
sed 's/"ep":16/"ep":8/' "$WORK/frozen.good" > "$S/contract/frozen.json"
scontrol release "$job"
wait_job "$job"
ok "tampered after submission: the step is failed at task start" hasnt "$WORK/t-$job.out" '^step ran'
ok "the job's output says it was tampered with" has "$WORK/t-$job.out" 'moeflow: .*tampered with'
cp "$WORK/frozen.good" "$S/contract/frozen.json"
chmod 0444 "$S/contract/frozen.json"
ok "the node is still IDLE" idle_soon

# --- 4. SIGKILL hits a task while it writes --------------------------------
cat > "$WORK/killed.sh" <<'EOF2'
#!/bin/bash
#SBATCH -N 1 -n 1
/usr/bin/srun -n 1 /bin/bash -c 'while :; do echo data >> "$MOEFLOW_STUDY/../killed.data"; done & sleep 1; kill -9 $$'
EOF2
chmod 0755 "$WORK/killed.sh"
chmod 0777 "$WORK"
job=$(as_user sbatch --parsable -o "$WORK/k-%j.out" --moe-study="$S" --moe-stage=retune \
      --moe-candidate=r1 killed.sh)
wait_job "$job" 60
ok "the killed task's job ends" test -z "$(squeue -h -j "$job" -o %i)"
ok "srun reports the task killed by signal 9" has "$WORK/k-$job.out" 'Killed|signal 9|exit code 137'
"$MOEFLOW_BIN" contract verify "$S/runs/$job" > verify.out 2>&1
tap_ok $? "the run's contract record is complete and verifies"
ok "no stray temporary files in the study" test -z "$(half_written "$S")"
# --- 5. a bad option value reaches slurmstepd through the environment ------
# sbatch never saw it (it validates its own options); the user's environment
# carries Slurm's forwarded copy of the option into the step.
touch "$WORK/plain-study.yaml"   # a study file: no contract, but --moe-study is given
job=$(as_user sbatch --parsable -o "$WORK/env-%j.out" --moe-stage=fit --moe-study="$WORK/plain-study.yaml" \
      --export=ALL,SLURM_SPANK__SLURM_SPANK_OPTION_moeflow_moe_candidate=../../etc step.sh)
wait_job "$job"
ok "a forged option value in the environment: the step is failed" hasnt "$WORK/env-$job.out" '^step ran'
ok "the message names the option and the rule for its values" \
    has "$WORK/env-$job.out" "moeflow: .*--moe-candidate '\\.\\./\\.\\./etc'"
ok "the batch script ran and ended with srun's exit code 1 (a failed batch step would read 0:0)" \
    has <(scontrol show job -o "$job") 'ExitCode=1:0'


ok "every node is IDLE (none drained)" idle_soon
ok "teardown leaves no cluster process behind" teardown_leaves_nothing
tap_done
