#!/bin/bash
# The step-time model against real numbers: Megatron-Bridge's published
# TFLOP/s per GPU (tests/data/calibration/bridge-performance-summary.tsv) and
# step times measured on 2xH200 (h200x2-steps.tsv).  Prints, per row, the
# prediction next to the published/measured value, the error and the rank of
# the published grid in `moeflow layouts`; fails if a row marked "calibrate"
# is off by more than 25%.  Add a case by adding a line to either TSV.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
export MOEFLOW_BIN MOEFLOW_SRCDIR
tap_plan 1
python3 - "$MOEFLOW_SRCDIR/tests/data/calibration" >"${TMPDIR:-/tmp}/calib.$$" <<'PY'
import csv, json, os, subprocess, sys

M = os.environ["MOEFLOW_BIN"]
SRC = os.environ["MOEFLOW_SRCDIR"]
LIMIT = 25.0

def run(args):
    p = subprocess.run([M] + args, capture_output=True, text=True)
    if p.returncode not in (0, 3):
        sys.exit("moeflow %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return json.loads(p.stdout)

def common(r):
    model = r["model"]
    a = ["--model-json", os.path.join(SRC, model)] if model.endswith(".json") else ["--preset", model]
    a += ["--gpus", r["gpus"], "--seq", r["seq"], "--mbs", r["mbs"], "--gbs", r["gbs"],
          "--gpu", r["system"], "--pipeline-layout"]  # the type's memory and NVLink domain
    a += ["--precision", r.get("precision", "bf16")]
    if r.get("impl"):
        a += ["--transformer-impl", r["impl"]]
    if r.get("mtp", "0") != "0":
        a += ["--mtp-layers", r["mtp"]]
    return a

def rank(r):
    d = run(["layouts"] + common(r) + ["--top", "0", "--json"])
    key = tuple(int(r[k]) for k in ("tp", "cp", "pp", "ep", "etp"))
    for i, e in enumerate(d["layouts"]):
        if (e["tp"], e["cp"], e["pp"], e["ep"], e["etp"]) == key:
            return "%d/%d" % (i + 1, len(d["layouts"]))
    return "-/%d" % len(d["layouts"])

def row(r):
    layout = sum((["--" + k, r[k]] for k in ("tp", "cp", "pp", "vpp", "ep", "etp")), [])
    d = run(["fit"] + common(r) + layout + ["--json"])
    if r.get("step_ms"):
        ref, pred, unit = float(r["step_ms"]), d["step_ms"], "ms"
    else:
        ref, pred, unit = float(r["published_tflops"]), d["tflops_per_gpu"], "TFLOP/s"
    err = 100.0 * (pred - ref) / ref
    return ref, pred, unit, err, d["memory"]["fits"]

bad = 0
fmt = "%-28s %-6s %-9s %9s %9s %-8s %7s %-10s %-4s %s"
print(fmt % ("row", "gpu", "use", "measured", "predicted", "unit", "err%", "rank", "fits", "note"))
for name in ("h200x2-steps.tsv", "bridge-performance-summary.tsv"):
    with open(os.path.join(sys.argv[1], name)) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            ref, pred, unit, err, fits = row(r)
            off = r["use"] == "calibrate" and abs(err) > LIMIT
            bad += off
            print(fmt % (r["id"], r["system"], r["use"], "%.1f" % ref, "%.1f" % pred, unit,
                         "%+.1f" % err, rank(r), "yes" if fits else "no",
                         r["note"] + ("  OUTSIDE +-25%" if off else "")))
sys.exit(1 if bad else 0)
PY
rc=$?
sed 's/^/# /' "${TMPDIR:-/tmp}/calib.$$"
rm -f "${TMPDIR:-/tmp}/calib.$$"
tap_ok $rc "every calibration row within +-25% (H100 published, 2xH200 measured)"
