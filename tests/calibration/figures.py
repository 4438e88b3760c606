#!/usr/bin/env python3
"""Every accuracy figure moeflow prints, derived from the data (issue 42).

Usage: figures.py SRCDIR [TABLE]  ->  one "key<TAB>value" line per figure.

Sources: tests/calibration/register.tsv (what was predicted when, what
was measured, which rows a fit has used), TABLE (default: the committed
tests/calibration/steptime-table.tsv: today's predictions), and the fit
matrix (tests/gpu/fit-matrix.tsv: today's memory model against each fit
run; tests/data/gpu/fit-matrix.tar.xz: the manifests gen wrote when the
runs were made, whose predicted_mib is the model as it stood then), and
for the GPU READMEs: tests/gpu/steady-1gpu.tsv and steady-1gpu-repeat.tsv
(the runs made twice), tests/gpu/results.tsv (the 2xH200 lane's memory),
tests/gpu/autopilot/run-*.txt (the closed loop's transcripts) and
tests/data/gpu/cuda-graphs-*.tar.xz (the CUDA-graph pool).
tests/cli/accuracy-register.sh renders tests/calibration/claims.tsv with
these and fails when a document says anything else, so no range in a man
page, NEWS, a README or `moeflow fit` is typed by hand.
"""
import csv, glob, io, json, os, re, sys, tarfile

SRC = sys.argv[1]
TABLE = sys.argv[2] if len(sys.argv) > 2 else os.path.join(SRC, "tests/calibration/steptime-table.tsv")
LIMIT = 25.0
out = {}


def tsv(path):
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def pct(x):
    """Signed, one decimal, as the table prints errors."""
    return "%+.1f%%" % x


def span(errs):
    return "%s to %s" % (pct(min(errs)), pct(max(errs)))


def err(pred, meas):
    return 100.0 * (pred - meas) / meas


reg = tsv(os.path.join(SRC, "tests/calibration/register.tsv"))
table = {r["id"]: r for r in tsv(TABLE)}

# --- the step-time table, by the register's classes --------------------
groups = {}
for r in reg:
    if r["quantity"] == "peak_gib" or r["id"] not in table:
        continue
    groups.setdefault(r["class"], []).append(float(table[r["id"]]["err%"]))
for cls, errs in sorted(groups.items()):
    k = "steptime." + cls
    out[k + ".rows"] = str(len(errs))
    out[k + ".within"] = str(sum(abs(e) <= LIMIT for e in errs))
    out[k + ".range"] = span(errs)
# The published rows held out, by release (the note's first word): the
# 26.02 rows are dropless, the 25.09 B200/GB200 ones drop tokens, which
# the model times differently; one range over both would hide either.
byrel = {}
for r in reg:
    t = table.get(r["id"])
    if r["class"] == "published-held-out" and t is not None:
        byrel.setdefault(t["note"].split()[0], []).append(float(t["err%"]))
for rel, errs in sorted(byrel.items()):
    k = "steptime.published-held-out." + rel
    out[k + ".rows"] = str(len(errs))
    out[k + ".within"] = str(sum(abs(e) <= LIMIT for e in errs))
    out[k + ".range"] = span(errs)

# Each row's error today, and where it was pre-registered, then.
for r in reg:
    k = "%s.%s" % (r["id"], r["quantity"])
    if r["quantity"] == "peak_gib":
        t = table.get(r["id"])
        if t and t["measured_peak_gib"] != "-":
            out[k + ".err"] = pct(err(float(t["model_peak_gib"]), float(t["measured_peak_gib"])))
    elif r["id"] in table:
        out[k + ".err"] = table[r["id"]]["err%"] + "%"
    if r["measured"] != "-":
        out[k + ".measured"] = r["measured"]
    if r["predicted"] != "-":
        out[k + ".prereg_err"] = pct(err(float(r["predicted"]), float(r["measured"])))
# The same errors unsigned, as prose says them ("the model 56% short"):
# ".abs" one decimal, ".abs0" whole percent.
for k in [k for k in out if k.endswith((".err", ".prereg_err"))]:
    x = abs(float(out[k].rstrip("%")))
    out[k + ".abs"] = "%.1f%%" % x
    out[k + ".abs0"] = "%.0f%%" % x

# Pre-registered rows: how they did when they were predicted.
pre = [r for r in reg if r["predicted"] != "-" and r["measured"] != "-"]
for q in ("step_ms", "peak_gib"):
    e = [err(float(r["predicted"]), float(r["measured"])) for r in pre if r["quantity"] == q]
    if e:
        out["prereg.%s.rows" % q] = str(len(e))
        out["prereg.%s.range" % q] = span(e)
        out["prereg.%s.within" % q] = str(sum(abs(x) <= LIMIT for x in e))
        out["prereg.%s.maxabs" % q] = "%.1f%%" % max(abs(x) for x in e)
# ... and by the commit that pre-registered them, one set of predictions.
for c in sorted({r["prereg_commit"] for r in pre}):
    e = [err(float(r["predicted"]), float(r["measured"])) for r in pre
         if r["prereg_commit"] == c and r["quantity"] == "step_ms"]
    if e:
        out["prereg.commit.%s.step_ms.rows" % c] = str(len(e))
        out["prereg.commit.%s.step_ms.within" % c] = str(sum(abs(x) <= LIMIT for x in e))
held = [r for r in pre if r["class"] == "held-out" and r["quantity"] == "step_ms"]
out["heldout.step_ms.ids"] = ", ".join(r["id"].split("-")[0] for r in held)
e = [float(table[r["id"]]["err%"]) for r in held]
out["heldout.step_ms.range"] = span(e)
out["heldout.step_ms.rows"] = str(len(e))

# Published rows by release (column note starts with it).
for rel in ("26.02", "25.11", "25.09"):
    e = [float(t["err%"]) for t in table.values() if t["unit"] == "TFLOP/s" and t["note"].startswith(rel)]
    if e:
        out["published.%s.rows" % rel] = str(len(e))
        out["published.%s.within" % rel] = str(sum(abs(x) <= LIMIT for x in e))
        out["published.%s.range" % rel] = span(e)
miss = [(i, t) for i, t in table.items() if t["use"] == "calibrate" and t["within25"] == "no"]
out["steptime.calibrate.misses"] = "; ".join("%s %s%%" % (i, t["err%"]) for i, t in miss)
# One H200 and 2xH200: the calibration rows, and those within the band.
h = [float(table[r["id"]]["err%"]) for r in reg if r["class"] == "calibration"
     and r["quantity"] == "step_ms" and r["id"] in table and table[r["id"]]["gpu"] == "h200"]
out["steptime.h200.calibration.rows"] = str(len(h))
out["steptime.h200.calibration.within"] = str(sum(abs(x) <= LIMIT for x in h))
out["steptime.h200.calibration.inband.range"] = span([x for x in h if abs(x) <= LIMIT])
e = [err(float(t["model_peak_gib"]), float(t["measured_peak_gib"])) for t in table.values()
     if t["measured_peak_gib"] != "-"]
out["memory.steady.maxabs"] = "%.1f%%" % max(abs(x) for x in e)

# s7-s10 (the MoE module recomputed): the memory model against each one's
# max allocated.
e = [err(float(table[i]["model_peak_gib"]), float(table[i]["measured_peak_gib"])) for i in table
     if i.split("-")[0] in ("s7", "s8", "s9", "s10")]
out["memory.moe-recompute.maxabs"] = "%.1f%%" % max(abs(x) for x in e)
# s14-s17 (the host cost per expert, fitted on them): today's range.
out["steptime.s14-s17.range"] = span([float(table[i]["err%"]) for i in table
                                      if i.split("-")[0] in ("s14", "s15", "s16", "s17")])

# --- the steady runs that ran twice (tests/gpu/steady-1gpu-repeat.tsv) ---
first = {r["study"]: r for r in tsv(os.path.join(SRC, "tests/gpu/steady-1gpu.tsv"))}
for r in tsv(os.path.join(SRC, "tests/gpu/steady-1gpu-repeat.tsv")):
    i, t = r["study"], table[r["study"]]
    a, b = float(first[i]["median_ms"]), float(r["median_ms"])
    k = "repeat." + i
    out[k + ".first"] = first[i]["median_ms"]
    out[k + ".repeat"] = r["median_ms"]
    out[k + ".change"] = pct(err(b, a))  # one measured run against the other
    out[k + ".predicted"] = t["predicted"]
    if t["repeat"] != r["median_ms"]:
        sys.exit("figures.py: %s: repeat %s in the table, %s measured" % (i, t["repeat"], r["median_ms"]))
    # the table's errors (its predictions unrounded), as the table prints them
    out[k + ".err"] = t["err%"] + "%"
    out[k + ".repeat_err"] = t["repeat_err%"] + "%"
    lo, hi = sorted(abs(float(x)) for x in (t["err%"], t["repeat_err%"]))
    out[k + ".abs0.span"] = "%.0f-%.0f%%" % (lo, hi)

# --- the 2xH200 lane's committed runs (tests/gpu/results.tsv) -----------
# The memory model as the lane's manifests had it, against Megatron's max
# allocated; ".bound": the whole percent above the largest error.
e = [err(float(r["predicted_mib"]), float(r["peak_mib"])) for r in tsv(os.path.join(SRC, "tests/gpu/results.tsv"))
     if r["peak_mib"] != "-" and r["predicted_mib"] != "-"]
out["lane.memory.rows"] = str(len(e))
out["lane.memory.bound"] = "%d%%" % (int(max(abs(x) for x in e)) + 1)

# --- the closed loop's transcripts (tests/gpu/autopilot/run-*.txt) -------
# moeflow report's fit table (measured_MiB, predicted_MiB) and the scale
# stage's step-model correction, as the loop printed them.
for path in sorted(glob.glob(os.path.join(SRC, "tests/gpu/autopilot/run-*.txt"))):
    name = os.path.basename(path)[4:-4]
    text = open(path).read()
    fit = re.search(r"--stage fit\n.*?\ncandidate .*?\n(.*?)\nmeasured:", text, re.S)
    if fit:
        e = []
        for line in fit.group(1).splitlines():
            f = line.split()
            e.append(err(float(f[10]), float(f[9])))
        out["autopilot.%s.fit.maxabs" % name] = "%.1f%%" % max(abs(x) for x in e)
    m = re.search(r"worst error (\d+%) -> (\d+%)", text)
    if m:
        out["autopilot.%s.scale.worst.before" % name] = m.group(1)
        out["autopilot.%s.scale.worst.after" % name] = m.group(2)

# --- the CUDA-graph lane (tests/data/gpu/cuda-graphs-*.tar.xz) -----------
# The graph pool that the lane study's fit.json (moeflow fit --json, as gen
# wrote it) models, against what the allocator reserved across the capture:
# max_reserved at the end of the log less after step 3 (memwrap.py's
# MOEFLOW_STEPMEM lines), as tests/cli/graph-memory.sh reads them.
def reserve(text):
    a = b = None
    for line in text.splitlines():
        if line.startswith("MOEFLOW_STEPMEM"):
            f = line.split()
            m = dict(x.split("=", 1) for x in f[1:] if "=" in x)
            if f[1] == "it=3":
                a = float(m["max_reserved"])
            b = float(m["max_reserved"])
    return (b - a) / 2 ** 20


with tarfile.open(os.path.join(SRC, "tests/data/gpu/cuda-graphs-lane.tar.xz")) as tar:
    model = json.load(tar.extractfile("study/fit.json"))["memory"]["ours_gib"]["graphs"] * 1024
    got = {"lane": reserve(tar.extractfile("run/train.log").read().decode())}
for d in ("core-0.19", "bridge-pin"):
    with tarfile.open(os.path.join(SRC, "tests/data/gpu/cuda-graphs-%s.tar.xz" % d)) as tar:
        got[d] = reserve(tar.extractfile("./droppad-full/train.log").read().decode())
out["graphs.modeled_mib"] = "%.1f" % model
for d, v in got.items():
    out["graphs.%s.measured_mib" % d] = "%.0f" % v
    out["graphs.%s.err" % d] = pct(err(model, v))

# --- the fit matrix ------------------------------------------------------
fm = tsv(os.path.join(SRC, "tests/gpu/fit-matrix.tsv"))
filled = [r for r in fm if r["peak_mib_filled"] != "-"]
now = [err(float(r["predicted_mib"]), float(r["peak_mib_filled"])) for r in filled]
out["fitmatrix.runs"] = str(len(filled))
out["fitmatrix.models"] = str(len({r["study"] for r in fm}))
out["fitmatrix.insample.range"] = span(now)
unf = [r for r in fm if r["peak_mib_unfilled"] != "-"]
out["fitmatrix.unfilled.runs"] = str(len(unf))
out["fitmatrix.unfilled.range"] = span([err(float(r["predicted_mib"]), float(r["peak_mib_unfilled"]))
                                        for r in unf])
out["fitmatrix.unfilled.ratio.max"] = "%.2f" % max(float(r["peak_mib_unfilled"]) / float(r["peak_mib_filled"])
                                                   for r in unf if r["peak_mib_filled"] != "-")
# The two dialects ran the same candidates: how far apart their peaks are.
by = {}
for r in filled:
    by.setdefault((r["study"], r["candidate"]), {})[r["dialect"]] = float(r["peak_mib_filled"])
pairs = [abs(v["core-0.19"] - v["bridge-pin"]) for v in by.values() if len(v) == 2]
out["fitmatrix.dialect.pairs"] = str(len(pairs))
out["fitmatrix.dialect.differ"] = str(sum(d > 0.1 + 1e-6 for d in pairs))  # beyond the 0.1 MiB Megatron prints
out["fitmatrix.dialect.maxdiff"] = "%.2f" % max(pairs)

# The model as it stood when the runs were made: each manifest's
# predicted_mib (gen wrote it before the run).  Fix 49a8036 was fitted on
# these runs, so today's range above is in sample.
asrun = {}
with tarfile.open(os.path.join(SRC, "tests/data/gpu/fit-matrix.tar.xz")) as tar:
    for m in tar.getmembers():
        parts = m.name.lstrip("./").split("/")
        if len(parts) != 3 or parts[2] != "manifest.json":
            continue
        man = json.load(tar.extractfile(m))
        for st in man["stages"]:
            for c in st.get("candidates", []):
                if c.get("stage") != "fit" or "predicted_mib" not in c:
                    continue
                v = c["value"]
                if isinstance(v, list):
                    v = json.dumps(v, separators=(",", ":"))
                asrun[(parts[0], parts[1], "%s=%s@rank%d" % (c["variable"], v, c["rank"]))] = \
                    float(c["predicted_mib"])
then, unmoved, moved = [], [], 0
for r in filled:
    k = (r["dialect"], r["study"], r["candidate"])
    if k not in asrun:
        sys.exit("figures.py: no manifest prediction for %s" % (k,))
    e0 = err(asrun[k], float(r["peak_mib_filled"]))
    then.append(e0)
    if abs(asrun[k] - float(r["predicted_mib"])) < 0.05:
        unmoved.append(e0)
    else:
        moved += 1
out["fitmatrix.asrun.range"] = span(then)
out["fitmatrix.asrun.outside10"] = str(sum(abs(x) > 10 for x in then))
out["fitmatrix.asrun.moved"] = str(moved)
out["fitmatrix.unmoved.runs"] = str(len(unmoved))
out["fitmatrix.unmoved.range"] = span(unmoved)

# The 2xH200 shape study (tests/gpu/multi-gpu.tsv, today's model).
mg = tsv(os.path.join(SRC, "tests/gpu/multi-gpu.tsv"))
out["multigpu.memory.range"] = span([float(r["mem_err%"]) for r in mg])
scale = [r for r in mg if r["step_err%"] != "-"]
out["multigpu.step.predicted"] = " / ".join("%.0f" % float(r["predicted_ms"]) for r in scale)
out["multigpu.step.measured"] = " / ".join("%.0f" % float(r["median_ms"]) for r in scale)
out["multigpu.step.range"] = span([float(r["step_err%"]) for r in scale])

for k in sorted(out):
    print("%s\t%s" % (k, out[k]))
