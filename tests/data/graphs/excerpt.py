#!/usr/bin/env python3
"""Cuts the committed excerpts in this folder out of the H200 recordings of
issue 41 (tests/data/gpu/cuda-graphs-DIALECT.tar.xz, recipe
tests/gpu/cuda-graphs.sh): real lines and real trace events, fewer of them.

usage: excerpt.py   (from the source tree's top; writes tests/data/graphs/)

Logs: from each variant's train.log, the lines named in LOGS below, whole and
in their order: the argument dump's first and last lines and the dumped
arguments report reads (the graph implementation, the dispatcher), then the
stretch from the first step's output through iteration 8 (local graphs are
captured inside step 1, full-iteration graphs before step 4).  The failed
dropless run keeps its capture-error lines instead of iterations (it has
none).  Traces: from each profiled variant's torch_profile/rank-0.json.gz,
the ProfilerStep markers, every cudaGraphLaunch runtime event, the kernels
launched by the first GRAPH_KERNELS_OF launches (same correlation id), and
the first PLAIN_KERNELS other kernels; the other members and events are
dropped.
"""
import gzip
import json
import os
import tarfile

ARGS = ["cuda_graph_impl", "cuda_graph_modules", "cuda_graph_warmup_steps",
        "enable_cuda_graph", "external_cuda_graph", "moe_token_dispatcher_type"]
# output name: (dialect, variant, (first, last) line of the steps' stretch)
LOGS = {
    "core-0.19-droppad-local-layer.log": ("core-0.19", "droppad-local-layer", (1013, 1057)),
    "core-0.19-droppad-full.log": ("core-0.19", "droppad-full", (1013, 1057)),
    "core-0.19-nograph.log": ("core-0.19", "nograph", (1013, 1059)),
    "core-0.19-local-layer-failed.log": ("core-0.19", "local-layer", (1014, 1020)),
    "bridge-pin-droppad-local-layer.log": ("bridge-pin", "droppad-local-layer", (1017, 1061)),
    "bridge-pin-droppad-full.log": ("bridge-pin", "droppad-full", (1018, 1059)),
}
FAILED_EXTRA = [(1056, 1057), (1101, 1102)]  # the two CUDA capture errors of local-layer
TRACES = {
    "core-0.19-droppad-local-layer-prof.json.gz": ("core-0.19", "droppad-local-layer-prof"),
    "core-0.19-droppad-full-prof.json.gz": ("core-0.19", "droppad-full-prof"),
    "core-0.19-nograph-prof.json.gz": ("core-0.19", "nograph-prof"),
}
GRAPH_KERNELS_OF = 2
GRAPH_KERNELS = 40
PLAIN_KERNELS = 20
HERE = "tests/data/graphs"


def member(dialect, path):
    tar = tarfile.open(f"tests/data/gpu/cuda-graphs-{dialect}.tar.xz")
    return tar.extractfile("./" + path).read()


def log_excerpt(dialect, variant, stretch):
    lines = member(dialect, f"{variant}/train.log").decode("utf-8").split("\n")
    keep = set(range(stretch[0], stretch[1] + 1))
    for n, line in enumerate(lines, 1):
        if "-- arguments --" in line or "end of arguments" in line or \
                any(line.startswith(f"  {a} ") for a in ARGS):
            keep.add(n)
    if variant == "local-layer":
        for a, b in FAILED_EXTRA:
            keep.update(range(a, b + 1))
    return "".join(lines[n - 1] + "\n" for n in sorted(keep))


def trace_excerpt(dialect, variant):
    events = json.loads(gzip.decompress(member(dialect, f"{variant}/torch_profile/rank-0.json.gz")))["traceEvents"]
    launches = [e for e in events if e.get("cat") == "cuda_runtime" and e.get("name") == "cudaGraphLaunch"]
    graph_corr = {e["args"]["correlation"] for e in launches[:GRAPH_KERNELS_OF]}
    kernels = [e for e in events if e.get("cat") == "kernel"]
    graphed = [e for e in kernels if e["args"].get("correlation") in graph_corr][:GRAPH_KERNELS]
    plain = [e for e in kernels if e not in graphed][:PLAIN_KERNELS]
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    keep = steps + launches + graphed + plain
    keep.sort(key=lambda e: e["ts"])
    text = json.dumps({"schemaVersion": 1, "traceEvents": keep}, separators=(",", ":"))
    return gzip.compress(text.encode(), mtime=0)


def main():
    for name, (d, v, stretch) in LOGS.items():
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
            f.write(log_excerpt(d, v, stretch))
    for name, (d, v) in TRACES.items():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(trace_excerpt(d, v))


if __name__ == "__main__":
    main()
