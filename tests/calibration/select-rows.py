#!/usr/bin/env python3
"""PROVENANCE's selection rule applied to the cited document (issue 42):
every MoE row on DGX-H100, B200, GB200 and GB300 whose model moeflow has a
preset for (Qwen3-30B-A3B, Qwen3-235B-A22B, DeepSeek-V3).  Prints each row
the rule names that bridge-performance-summary.tsv lacks (system, release,
model, GPUs, published TFLOP/s; the main number, not the parenthesised
variant) and exits 1 if there is one, or if a row it names is missing
from tests/calibration/steptime-table.tsv (the table built from it).

Usage: select-rows.py SRCDIR
"""
import csv, os, sys

SRC = sys.argv[1]
CAL = os.path.join(SRC, "tests/data/calibration")
PRESET = {"DeepSeekV3": "deepseek-v3", "Qwen3_30B_a3B": "qwen3-30b-a3b",
          "Qwen3_235B_a22B": "qwen3-235b-a22b"}
SYSTEMS = {"H100", "B200", "GB200", "GB300"}  # B300: no b300 GPU type


def rows(name, where=CAL):
    with open(os.path.join(where, name)) as f:
        return list(csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t"))


table = {r["id"] for r in rows("steptime-table.tsv", os.path.join(SRC, "tests/calibration"))}
have = {(r["system"], r["note"].split()[0], r["model"], r["gpus"], r["published_tflops"]): r["id"]
        for r in rows("bridge-performance-summary.tsv")}
named = missing = 0
for r in rows("performance-summary-df0289c.tsv"):
    preset = PRESET.get(r["model"].split(" (")[0])
    if r["system"] not in SYSTEMS or preset is None:
        continue
    named += 1
    key = (r["system"].lower(), r["release"], preset, r["gpus"], r["tflops"].split(" (")[0])
    if key not in have:
        missing += 1
        print("missing\t" + "\t".join(key) + "\t" + r["model"])
    elif have[key] not in table:
        missing += 1
        print("not in steptime-table.tsv\t" + have[key])
print("named\t%d\tmissing\t%d" % (named, missing))
sys.exit(1 if missing else 0)
