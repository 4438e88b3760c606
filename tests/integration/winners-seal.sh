#!/bin/bash
# Issue 21, the plugin's side of sealed winners: at validate it loaded any
# canonical *.json in winners/ as a recorded winner.  Now a winner counts
# only when it is winners/<sha256>.json, matches its seal and is the
# contract of a sealed retune run record: a forged winner (sealed, named by
# its digest, but no retune run ever had it), a winner under another name
# and an empty file named after a digest are not winners, and sbatch says
# why.  A winner recorded from the real run is accepted.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
tap_plan 11
cluster_up winseal

U=slurmtest
id $U >/dev/null 2>&1 || useradd -m $U
as_user() { runuser -u $U -- env SLURM_CONF="$SLURM_CONF" "$@"; }

# Declared contracts as 'moeflow gen' lays them out: r1 changes the
# dispatcher, r2 adds EP overlap to r1 (a combination no retune ran).
S=$WORK/study
mkdir -p "$S/contracts" "$S/logs"
cat > "$S/contracts/baseline.json" <<'JSON'
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
    "$S/contracts/baseline.json" > "$S/contracts/r1.json"
sed 's/"ep_overlap": false/"ep_overlap": true/' "$S/contracts/r1.json" > "$S/contracts/r2.json"
chown -R $U "$S"
chmod -R go-w "$S"
cat > "$WORK/step.sh" <<'EOF'
#!/bin/bash
#SBATCH -N 1 -n 1
/usr/bin/srun -n 1 /bin/echo "step ran stage=$MOEFLOW_STAGE"
EOF
chmod 0755 "$WORK/step.sh"
cd "$WORK" || exit 1

job=$(as_user sbatch --parsable -o "$S/logs/%j.out" --moe-study="$S" --moe-stage=contract step.sh)
wait_job "$job"
ok "the contract stage freezes the baseline" job_completed "$job"
r1=$(as_user sbatch --parsable -o "$S/logs/%j.out" --moe-study="$S" --moe-stage=retune \
     --moe-candidate=r1 step.sh)
wait_job "$r1"
ok "the r1 retune runs and is recorded" test -f "$S/runs/$r1/contract.json.sha256"

# validate SBATCH_OUT CANDIDATE: a validate submission of the candidate.
validate() {
    as_user sbatch --moe-study="$S" --moe-stage=validate --moe-candidate="$2" step.sh > "$1" 2>&1
}

# A forged winner for r2: r1's sealed run record without "run", with EP
# overlap on; canonical, named by its digest and sealed like a real one.
sed 's/,"run":{[^}]*}//; s/"ep_overlap":false/"ep_overlap":true/' "$S/runs/$r1/contract.json" \
    > "$WORK/forged.json"
d=$(sha256sum < "$WORK/forged.json" | cut -c1-64)
as_user mkdir -m 0755 "$S/winners"
as_user cp "$WORK/forged.json" "$S/winners/$d.json"
(cd "$S/winners" && as_user sh -c "sha256sum $d.json > $d.json.sha256")
validate forged.out r2
tap_ok $(( $? == 0 )) "validate of r2 with a forged, sealed winner in winners/ is refused"
ok "... the winner is not traced to a sealed retune run" \
    has forged.out "winners/$d\.json: no sealed retune run record under runs/ that contract verify accepts has this contract"
rm -f "$S/winners/$d.json" "$S/winners/$d.json.sha256"

as_user cp "$WORK/forged.json" "$S/winners/notes.json"
validate renamed.out r2
tap_ok $(( $? == 0 )) "the same contract under another name is no winner: validate of r2 refused"
ok "... by the validate rule" has renamed.out "refused by rule validate-equal"
rm -f "$S/winners/notes.json"

as_user "$MOEFLOW_BIN" contract winner "$S" "$S/runs/$r1" > winner.out 2>&1
ok "contract winner records the real r1 run, sealed" has winner.out "^recorded winner "
job=$(as_user sbatch --parsable -o "$S/logs/%j.out" --moe-study="$S" --moe-stage=validate \
      --moe-candidate=r1 step.sh)
tap_ok $? "validate of the recorded r1 winner is accepted"
wait_job "$job"
ok "... and runs to completion" job_completed "$job"

as_user touch "$S/winners/$d.json"
validate empty.out r1
tap_ok $(( $? == 0 )) "an empty file named after a digest in winners/: validate is refused"
ok "... naming the file" has empty.out "$d\.json(:[0-9]+)*: not valid JSON"
tap_done
