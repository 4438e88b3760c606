#!/usr/bin/env python3
"""The step-time model against real numbers, as one table (issue 25).

Rows: Megatron-Bridge's published TFLOP/s per GPU
(tests/data/calibration/bridge-performance-summary.tsv), the 2xH200 step
times (h200x2-steps.tsv) and the steady 1-GPU runs (h200x1-steady.tsv).
Columns: the published/measured value, the prediction of the model before
issue 25 (steptime-before.tsv, frozen: the landed model at 1c57971) and
now, the error, the rank of the published grid among `moeflow layouts`
for that model, GPU count and precision, and whether the row was fitted
on (calibrate) or is out of sample (check: the 26.02 B200/GB200/GB300
rows and the 25.09 B200/GB200 token-drop rows; report: token-dropping
H100 rows and warming-up 2xH200 windows);
then the memory model's peak for the row's grid, beside the measured one
where a run logged it (Megatron's largest "max allocated" of the steady
1-GPU runs, tests/gpu/steady-1gpu.tsv) and, for a published grid (which
ran), the GPU's whole memory it must fit in; last, for a steady 1-GPU run
that ran twice, the second run's median and the model's error against it
(tests/gpu/steady-1gpu-repeat.tsv).

Usage: steptime-table.py MOEFLOW SRCDIR > table.tsv   (tests/cli/steptime-calibration.sh
compares it with the committed tests/calibration/steptime-table.tsv).
Not needed at run time: moeflow's defaults live in lib/fit/gpu_perf.c.
"""
import csv, json, os, subprocess, sys

M, SRC = sys.argv[1], sys.argv[2]
CAL = os.path.join(SRC, "tests/data/calibration")
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
          "--gpu", r["system"], "--pipeline-layout"]
    a += ["--precision", r.get("precision", "bf16")]
    if r.get("impl"):
        a += ["--transformer-impl", r["impl"]]
    if r.get("mtp", "0") != "0":
        a += ["--mtp-layers", r["mtp"]]
    if r.get("routing"):
        a += ["--routing", r["routing"]]
    return a + recipe(r)


def recipe(r):
    """The published recipe's own settings (columns recompute, ep_overlap,
    grads of bridge-performance-summary.tsv; PROVENANCE cites them).  Its
    grid ran, so it is ranked at the GPU's whole memory: moeflow's 10%
    planning headroom is the user's margin, not the recipe's."""
    if not r.get("published_tflops"):
        return []
    a = ["--recompute", r["recompute"], "--fixed-recompute", "--headroom", "0"]
    if r["grads"] == "bf16":
        a += ["--grad-reduce-in-bf16"]
    if r["ep_overlap"] == "1":
        a += ["--ep-overlap"]
    return a


def rank(r):
    if r.get("study"):
        return "-"
    d = run(["layouts"] + common(r) + ["--top", "0", "--json"])
    key = tuple(int(r[k]) for k in ("tp", "cp", "pp", "ep", "etp"))
    for i, e in enumerate(d["layouts"]):
        if (e["tp"], e["cp"], e["pp"], e["ep"], e["etp"]) == key:
            return "%d/%d" % (i + 1, len(d["layouts"]))
    return "-/%d" % len(d["layouts"])


def predict(r):
    if r.get("study"):
        d = run(["fit", os.path.join(SRC, r["study"]), "--json"])
    else:
        layout = sum((["--" + k, r[k]] for k in ("tp", "cp", "pp", "vpp", "ep", "etp")), [])
        d = run(["fit"] + common(r) + layout + ["--json"])
    mem = d["memory"]["ours_gib"]["total"], d["memory"]["usable_gib"]
    if r.get("step_ms"):
        return float(r["step_ms"]), d["step_ms"], "ms", mem
    return float(r["published_tflops"]), d["tflops_per_gpu"], "TFLOP/s", mem


before = {}
with open(os.path.join(SRC, "tests/calibration/steptime-before.tsv")) as f:
    for b in csv.DictReader(f, delimiter="\t"):
        before[b["id"]] = b
for name in ("h200x1-steady.tsv",):
    with open(os.path.join(CAL, name)) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            before[r["id"]] = {"before": r["before_ms"], "before_rank": "-"}

def steady_column(name, column):
    """One column of a steady-1gpu.sh table, by study; "-" rows left out."""
    with open(os.path.join(SRC, "tests/gpu", name)) as f:
        return {r["study"]: float(r[column]) for r in csv.DictReader(f, delimiter="\t")
                if r[column] != "-"}


measured_peak = {k: v / 1024 for k, v in steady_column("steady-1gpu.tsv", "max_alloc_mib").items()}
# The same jobs run again on another day (steady-1gpu.sh repeat): how far
# a host-bound run's median moves from run to run, next to the model's error.
repeat = steady_column("steady-1gpu-repeat.tsv", "median_ms")

cols = ["id", "gpu", "use", "measured", "unit", "before", "before_err%", "before_rank",
        "predicted", "err%", "rank", "within25", "model_peak_gib", "measured_peak_gib",
        "gpu_gib", "note", "repeat", "repeat_err%"]
print("\t".join(cols))
for name in ("h200x1-steady.tsv", "h200x2-steps.tsv", "bridge-performance-summary.tsv"):
    with open(os.path.join(CAL, name)) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            ref, pred, unit, (peak, usable) = predict(r)
            err = 100.0 * (pred - ref) / ref
            b = before.get(r["id"], {"before": "", "before_rank": "-"})
            berr = "%+.1f" % (100.0 * (float(b["before"]) - ref) / ref) if b["before"] else "-"
            rk = rank(r)
            again = repeat.get(r["id"])
            use = {"check": "out-of-sample"}.get(r["use"], r["use"])
            print("\t".join([r["id"], r["system"], use, "%.1f" % ref, unit, b["before"] or "-", berr,
                             b["before_rank"], "%.1f" % pred, "%+.1f" % err, rk.split("/")[0] if rk != "-" else "-",
                             "yes" if abs(err) <= LIMIT else "no", "%.1f" % peak,
                             "%.2f" % measured_peak[r["id"]] if r["id"] in measured_peak else "-",
                             "%.1f" % usable if r.get("published_tflops") else "-", r["note"],
                             "%.1f" % again if again is not None else "-",
                             "%+.1f" % (100.0 * (pred - again) / again) if again is not None else "-"]))
