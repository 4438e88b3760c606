#!/bin/bash
# The closed loop's GPU evidence (tests/gpu/autopilot/README.md, "The
# closed loop"), replayed without a GPU: `moeflow run` drove
# tests/gpu/autopilot/poor-1gpu.yaml -- the tiny MoE on one H200, written
# with full recompute -- under the real Megatron-LM of core 0.19 and the
# real spank_moeflow.so.  Each decision of its trail is checked against
# what ran: it is sealed, the logs and run records it names exist with the
# digests it names, the baseline it adopts is the contract of the run it
# names, and the validated answer beats the written baseline.
# poor-1gpu-warm.yaml, the same with 20 warm-up steps, is checked the same
# way, and there the loop's answer includes a retune winner.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN S=$MOEFLOW_SRCDIR
command -v python3 > /dev/null || skip_all "python3 not installed (build-aux/install-deps.sh)"
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
tap_plan 14
tar -xJf "$S/tests/data/gpu/autopilot-poor-1gpu-core-0.19.tar.xz" -C "$T"
D=$T/poor-1gpu-core-0.19

ok "four decisions, each sealed (sha256sum -c)" \
    sh -c "cd '$D/decisions' && test \$(ls *.json | wc -l) = 4 && for f in *.json; do sha256sum -c --quiet \$f.sha256 || exit 1; done"
"$M" report "$D" --stage validate --json > "$T/validate.json" 2> "$T/validate.err"
tap_ok $? "moeflow report reads the trail as sealed"
diag < "$T/validate.err"
json() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
ok "... fit, scale, profile, retune, in order" \
    test "$(json "$T/validate.json" '" ".join(x["stage"] for x in d["decisions"])')" = "fit scale profile retune"
ok "fit chose no recompute where the study wrote full" \
    test "$(json "$D/decisions/01-fit.json" 'd["chose"]["recompute"] + " " + d["baseline"]["tuning"]["recompute"]["granularity"]')" = "none none"
ok "profile named the host bottleneck from the real trace (GPU busy under 20%)" \
    test "$(json "$D/decisions/03-profile.json" 'd["chose"]["bottleneck"] + " " + str(d["measured"]["gpu_busy_fraction"] < 0.2)')" = "host True"
# Every decision names its runs: the logs' and records' digests are those
# of the files in the study, and an adopted baseline is its run's contract.
reconcile() {  # reconcile STUDY_DIR: every decision against what ran
python3 - "$1" > "$T/reconcile.txt" 2>&1 <<'PY'
import glob, hashlib, json, os, sys
d = sys.argv[1]
bad = 0
for f in sorted(glob.glob(d + "/decisions/*.json")):
    dec = json.load(open(f))
    for e in dec.get("evidence", []):
        if e.get("log"):
            h = hashlib.sha256(open(os.path.join(d, e["log"]), "rb").read()).hexdigest()
            bad += h != e["log_sha256"]
        if e.get("run"):
            rec = open(os.path.join(d, e["run"], "contract.json"), "rb").read()
            bad += hashlib.sha256(rec).hexdigest() != e["record_sha256"]
            seal = open(os.path.join(d, e["run"], "contract.json.sha256")).read().split()[0]
            bad += seal != e["record_sha256"]
    if "baseline" in dec:
        chose = dec["chose"].get("candidate")
        runs = [e for e in dec["evidence"] if e["candidate"] == chose] if chose else []
        if not runs and dec["stage"] == "fit":
            want = dec["chose"]["recompute"]
            runs = [e for e in dec["evidence"]
                    if json.load(open(os.path.join(d, e["run"], "contract.json")))["tuning"]["recompute"]["granularity"] == want]
        rec = json.load(open(os.path.join(d, runs[0]["run"], "contract.json")))
        rec.pop("run")
        bad += rec != dec["baseline"]
    print(os.path.basename(f), "evidence", len(dec.get("evidence", [])), "bad so far", bad)
sys.exit(1 if bad else 0)
PY
}
reconcile "$D"
tap_ok $? "each decision's logs and run records are those of the study, and an adopted baseline is its run's contract"
diag < "$T/reconcile.txt"
written=$(json "$T/validate.json" '[(r["ab"]["verdict"], r["ab"]["delta_pct"]) for r in d["runs"] if r["name"].startswith("written_baseline")][0]')
ok "validate: the written baseline loses to the loop's answer by more than 10% ($written)" \
    test "$(json "$T/validate.json" '[r["ab"]["verdict"] == "loss" and r["ab"]["delta_pct"] > 10 for r in d["runs"] if r["name"].startswith("written_baseline")][0]')" = True
# The host-targeted retune measured a larger micro-batch 62% faster
# (p = 0.002), yet no winner is recorded on a reference whose screening
# steps spread 73%: a decision never rests on a noisy reference.
retune=$D/results/retune/report/report.json
ok "retune: mbs=4 far faster but refused on its noisy reference, and no winner recorded" \
    test "$(json "$retune" '[(r["ab"]["verdict"], r["ab"]["delta_pct"] < -50, r["ab"]["p_value"] < 0.05, r["ab"]["baseline_cv"] > 0.15) for r in d["runs"] if r["name"] == "mbs=4"][0]')/$(json "$D/decisions/04-retune.json" 'len(d["chose"])')" = "('inconclusive', True, True, True)/0"
ok "the plugin accepted every run: every candidate exited 0" \
    test "$(awk -F'\t' 'NR > 1 && $6 != "0"' "$S/tests/gpu/autopilot/candidates-poor-1gpu-core-0.19.tsv" | wc -l)" = 0
ok "the committed evidence pack charts the scale decision" test -s "$S/tests/gpu/autopilot/pack-poor-1gpu-core-0.19/scale-decision-1.svg"
tap_done

# poor-1gpu-warm: past the warm-up the reference is steady, so retune's
# larger micro-batch is a recorded winner and validate confirms it.
tar -xJf "$S/tests/data/gpu/autopilot-poor-1gpu-warm-core-0.19.tar.xz" -C "$T"
W=$T/poor-1gpu-warm-core-0.19
reconcile "$W"
tap_ok $? "warm: each decision's logs and run records are those of the study"
diag < "$T/reconcile.txt"
ok "warm: retune recorded exactly one winner, the run of mbs=4" \
    test "$(json "$W/decisions/04-retune.json" '[c["run"]["candidate"] for c in d["chose"]]')" = \
         "$(json "$W/manifest.json" '[c["id"] for s in d["stages"] if s["stage"] == "retune" for c in s["candidates"] if c["variable"] == "mbs"]')"
"$M" report "$W" --stage validate --json > "$T/warm.json" 2> "$T/warm.err" || diag < "$T/warm.err"
ok "warm: validate: mbs=4 wins against the adopted baseline, the written baseline loses" \
    test "$(json "$T/warm.json" '[(r["name"].split("=")[0], r["ab"]["verdict"]) for r in d["runs"] if r.get("ab")]')" = \
         "[('mbs', 'win'), ('written_baseline', 'loss')]"
ok "warm: the loop's answer takes under half the written baseline's step" \
    test "$(json "$T/warm.json" '[r["step_ms_median"] for r in d["runs"] if r["name"] == "mbs=4"][0] < 0.5 * [r["step_ms_median"] for r in d["runs"] if r["name"].startswith("written_baseline")][0]')" = True
