"""The recorded variants (tests/gpu/cuda-graphs.sh run): the scale baseline
moeflow generates for graphs-1gpu.yaml, taken from manifest.json as
written, plus one change each.  Recording only; moeflow never runs this.

    python3 variants.py MANIFEST   prints NAME<TAB>ARG ARG ... per variant
                                   (those in $GRAPH_VARIANTS, if set)
"""
import json
import os
import sys

manifest = sys.argv[1]
stage = next(s for s in json.load(open(manifest))["stages"] if s["stage"] == "scale")
base = stage["candidates"][0]["argv"]

# Both recorded dialects name the graphed modules --cuda-graph-modules and
# make full_iteration an implementation (core 0.19 arguments.py:1969,
# transformer_config.py:1032; bridge-pin arguments.py:1965,
# transformer_config.py:1039).  core 0.16 put it under --cuda-graph-scope,
# but trains no MoE without TE.
modules = "--cuda-graph-modules"
# "--no-check-for-nan-in-loss-and-grad should be set with
# --cuda-graph-impl=full_iteration for training." (core 0.19
# arguments.py:1197, bridge-pin arguments.py:1186)
full = ["--cuda-graph-impl", "full_iteration", "--no-check-for-nan-in-loss-and-grad"]
droppad = ["--moe-expert-capacity-factor", "1.0", "--moe-pad-expert-input-to-capacity"]
window = ["--train-iters", "30", "--eval-interval", "30"]
profile = ["--profile", "--use-pytorch-profiler", "--profile-step-start", "20",
           "--profile-step-end", "22", "--tensorboard-dir", "tensorboard"]
variants = [
    ("nograph", []),
    ("local-attn", ["--cuda-graph-impl", "local", modules, "attn"]),
    ("local-layer", ["--cuda-graph-impl", "local"]),
    ("droppad", droppad),
    ("droppad-local-layer", droppad + ["--cuda-graph-impl", "local"]),
    ("droppad-full", droppad + full),
    ("nograph-prof", profile),
    ("droppad-local-layer-prof", droppad + ["--cuda-graph-impl", "local"] + profile),
    ("droppad-full-prof", droppad + full + profile),
]
only = os.environ.get("GRAPH_VARIANTS", "").split()
for name, extra in variants:
    if only and name not in only:
        continue
    print(name + "\t" + " ".join(base + window + extra))
