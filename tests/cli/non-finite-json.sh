#!/bin/bash
# Issue 39: a number a Megatron log prints as inf, -inf or nan never drops
# a key, a run or a whole finding from report.json or pack.json.  Each such
# value is written as null and named under the holding object's
# "non_finite" (core/json_build.h), and every other key is still there: the
# files of the non-finite run have exactly the keys of the finite run's.
#
# report.json: tests/data/logs/h200x2-moe-ep2-alltoall-60it.log (a real
# 2xH200 run, PROVENANCE.md), derived here and never stored: inside the
# report window 41-50, every number field of iteration 44's record becomes
# inf, of 45's -inf, of 46's nan (step time, throughput, learning rate, lm
# loss, load-balancing loss, loss scale, grad norm, the sample, batch and
# skipped/nan counts), iteration 50's lm loss inf, the theoretical-memory
# lines' total nan and rank 0's second memory line inf.
# pack.json: the tiny study of report-pack.sh, its validate logs from
# tests/doubles/fake-megatron with the same edits to iterations 44-46 of
# every run.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
. "$MOEFLOW_SRCDIR/tests/cli/study-fixture.sh"
command -v python3 > /dev/null || skip_all "python3 not installed (build-aux/install-deps.sh)"
M=$MOEFLOW_BIN
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates
T=$(mktemp -d /tmp/mfnf.XXXXXX) && trap 'rm -rf "$T"' EXIT
chmod 0755 "$T"
tap_plan 16

# Every "key: number |" field of iteration $1's record becomes $2.
poison() {
    sed -E "/iteration +$1\\/ /s/: +[-+0-9.eE]+ \\|/: $2 |/g"
}
src=$MOEFLOW_SRCDIR/tests/data/logs/h200x2-moe-ep2-alltoall-60it.log
cp "$src" "$T/finite.log"
poison 44 inf < "$src" | poison 45 -inf | poison 46 nan |
    sed -E '/iteration +50\/ /s/lm loss: [-+0-9.eE]+ \|/lm loss: inf |/' |
    sed -E '/^Theoretical memory footprints/s/total=[0-9.]+ MB/total=nan MB/' |
    sed -E '/\(after 2 iterations\) memory/s/max allocated: [0-9.]+/max allocated: inf/' \
        > "$T/nonfinite.log"
ok "the derived log holds inf, -inf and nan in iterations 44-46 (the edit took)" test \
    "$(grep -cE 'iteration +4[4-6]/.*elapsed time per iteration \(ms\): (inf|-inf|nan) \|.*lm loss: (inf|-inf|nan) \|.*grad norm: (inf|-inf|nan) \|' "$T/nonfinite.log")" = 3

"$M" report --window 41-50 -o "$T/finite" "$T/finite.log" > "$T/finite.out" 2>&1
tap_ok $? "report of the finite log"
"$M" report --window 41-50 -o "$T/nonfinite" "$T/nonfinite.log" > "$T/nonfinite.out" 2>&1
rc=$?
tap_ok $rc "report of the log with inf, -inf and nan succeeds"
[ $rc = 0 ] || diag < "$T/nonfinite.out"
ok "... and warns of each infinity it cannot use, naming file and line" \
    has "$T/nonfinite.out" "nonfinite.log:[0-9]*: iteration 45: 'elapsed time per iteration \\(ms\\): -inf' is impossible"

# keys.py A B [PATH]: the key paths of B's JSON (array elements as [], the
# non_finite records left out) against A's; prints what is missing or
# extra, exits 1 when they differ or either is not JSON.
cat > "$T/keys.py" <<'PY'
import json, sys
def paths(v, p, out):
    if isinstance(v, dict):
        for k, x in v.items():
            if k != "non_finite":
                out.add(p + "." + k)
                paths(x, p + "." + k, out)
    elif isinstance(v, list):
        for x in v:
            paths(x, p + "[]", out)
    return out
a, b = (paths(json.load(open(f)), "", set()) for f in sys.argv[1:3])
for k in sorted(a - b):
    print("missing:", k)
for k in sorted(b - a):
    print("extra:", k)
sys.exit(a != b)
PY
python3 "$T/keys.py" "$T/finite/report.json" "$T/nonfinite/report.json" > "$T/keys.out" 2>&1
tap_ok $? "report.json is JSON with every key of the finite run's report.json"
[ -s "$T/keys.out" ] && diag < "$T/keys.out"

# check.py FILE: what report.json says of the non-finite values, one
# "name: value" line each, for the checks below.
python3 - "$T/nonfinite/report.json" > "$T/report.facts" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
nf = r.get("non_finite", {})
for i, (it, ms) in enumerate(r["step_ms_series"]):
    if it in (44, 45, 46, 47):
        print("series %d: %s %s" % (it, json.dumps(ms), nf.get("step_ms_series[%d][1]" % i)))
print("loss_last: %s %s" % (json.dumps(r["loss_last"]), nf.get("loss_last")))
print("theoretical_total_mb: %s %s" % (json.dumps(r["theoretical_total_mb"]),
                                       nf.get("theoretical_total_mb")))
print("loss_finite: %s" % json.dumps(r["loss_finite"]))
print("median: %s" % ("number" if isinstance(r["step_ms_median"], float) else "not"))
print("peak: %s" % json.dumps(r["peak_max_allocated_mib"]))
print("records: %d" % len(nf))
PY
ok "iterations 44, 45, 46: step time null, listed as inf, -inf, nan; 47 untouched" test \
    "$(grep '^series' "$T/report.facts" | tr '\n' ';')" = \
    "series 44: null inf;series 45: null -inf;series 46: null nan;series 47: 313.2 None;"
[ -s "$T/report.facts" ] && diag < "$T/report.facts"
ok "loss_last null, listed as inf" has "$T/report.facts" "^loss_last: null inf$"
ok "theoretical_total_mb null, listed as nan" has "$T/report.facts" "^theoretical_total_mb: null nan$"
ok "... and nothing else listed; the loss is not finite, the median and the peak of the usable figures stand" \
    test "$(grep -E '^(records|loss_finite|median|peak)' "$T/report.facts" | tr '\n' ';')" = \
    "loss_finite: false;median: number;peak: 1592.68;records: 5;"

# A run is named by its file; a name that is not UTF-8 is shown as log
# text is ('?' for each byte it cannot show), never the run dropped.
cp "$src" "$T/"$'bad\xff.log'
runs_of() {
    python3 -c 'import json, sys; d = json.load(sys.stdin)
print(" ".join([r["name"] for r in d["runs"]] + [d["baseline"], d["runs"][1]["ab"]["baseline"]]))'
}
"$M" report --json "$T/"$'bad\xff.log' "$T/finite.log" > "$T/badname.json" 2> "$T/badname.err"
rc=$?
ok "report --json of a run whose file name is not UTF-8 succeeds" test $rc = 0
[ $rc = 0 ] || diag < "$T/badname.err"
ok "... and keeps it, its name printable, as the baseline too" test \
    "$(runs_of < "$T/badname.json" 2>&1)" = "bad?.log finite.log bad?.log bad?.log"

# The evidence pack of a study whose validate logs hold the same values.
S=$T/tiny
"$M" gen "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" -o "$S" > /dev/null 2>&1
fixture_logs "$S" scale,retune 0 1
fixture_winner "$S" ep_overlap true
fixture_winner "$S" precision fp8-delayed
chmod -R go-w "$S"
"$M" gen "$S/study.yaml" --stage validate --winners "$S" > "$T/gen.out" 2>&1 || diag < "$T/gen.out"
fixture_logs "$S" validate 0 1
cp -a "$S" "$T/finite-study"
chmod u+w "$S/results/validate"
for f in "$S"/results/validate/*.log; do
    poison 44 inf < "$f" | poison 45 -inf | poison 46 nan > "$f.new" && mv "$f.new" "$f"
done
ok "the validate logs hold inf, -inf and nan (the edit took)" test \
    "$(cat "$S"/results/validate/*.log | grep -cE 'iteration +4[4-6]/.*\(ms\): (inf|-inf|nan) \|')" = \
    "$(( 3 * $(ls "$S"/results/validate/*.log | wc -l) ))"
"$M" report "$T/finite-study" --pack > "$T/fpack.out" 2>&1
tap_ok $? "the pack of the finite study"
"$M" report "$S" --pack > "$T/pack.out" 2>&1
rc=$?
tap_ok $rc "the pack of the study with inf, -inf and nan is written"
[ $rc = 0 ] || diag < "$T/pack.out"
python3 "$T/keys.py" "$T/finite-study/evidence-pack/pack.json" "$S/evidence-pack/pack.json" \
    > "$T/keys.out" 2>&1
tap_ok $? "pack.json is JSON with every key of the finite study's pack.json"
[ -s "$T/keys.out" ] && diag < "$T/keys.out"
python3 - "$S/evidence-pack/pack.json" > "$T/pack.facts" 2>&1 <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["validate"]["runs"]
for r in runs:
    m = r["measured"]
    nf = m.get("non_finite", {})
    got = [(it, ms, nf.get("steps[%d][1]" % i)) for i, (it, ms) in enumerate(m["steps"])
           if it in (44, 45, 46)]
    print("%s: %s" % (r["role"], "ok" if got == [(44, None, "inf"), (45, None, "-inf"),
                                                 (46, None, "nan")] and len(nf) == 3 else got))
PY
ok "every validate run's steps 44-46 are null, listed under measured.non_finite" test \
    "$(sort -u "$T/pack.facts" | tr '\n' ' ')" = "baseline: ok combination: ok winner: ok "
[ -s "$T/pack.facts" ] && diag < "$T/pack.facts"
tap_done
