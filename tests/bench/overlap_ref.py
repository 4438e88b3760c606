#!/usr/bin/env python3
"""Reference overlap computation with pandas, for the benchmark: reads an
nsys SQLite export, classifies kernels with the same defaults as moeflow
(NCCL, DeepEP, HybridEP, NVSHMEM), and prints per-GPU comm, compute, hidden,
exposed and busy nanoseconds as JSON.  Written the way one would in pandas:
vectorised unions by sort + cummax, intersections by a coverage sweep."""
import json
import sqlite3
import sys

import numpy as np
import pandas as pd

COMM = r"^nccl|ncclDevKernel_|ncclKernel|deep_ep::.*dispatch|deep_ep::.*combine|hybrid_ep.*dispatch|hybrid_ep.*combine|HybridEP|nvshmem|NVSHMEM"


def union(df):
    """Disjoint sorted [start, end) pieces of a frame of intervals."""
    df = df.sort_values("start", kind="mergesort")
    s, e = df["start"].to_numpy(), df["end"].to_numpy()
    if len(s) == 0:
        return s, e
    prev_max = np.maximum.accumulate(e)
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > prev_max[:-1]
    grp = np.cumsum(new) - 1
    starts = s[new]
    ends = pd.Series(e).groupby(grp).max().to_numpy()
    return starts, ends


def covered(us, ue, vs, ve, need):
    """Length covered by at least `need` of the two unions (1: union, 2: intersection)."""
    t = np.concatenate([us, ue, vs, ve])
    d = np.concatenate([np.ones(len(us)), -np.ones(len(ue)), np.ones(len(vs)), -np.ones(len(ve))])
    order = np.lexsort((d, t))  # ends before starts at equal times
    t, d = t[order], d[order]
    c = np.cumsum(d)
    return int(np.sum((t[1:] - t[:-1])[c[:-1] >= need])) if len(t) else 0


def main(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    k = pd.read_sql_query(
        "SELECT start, end, deviceId, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL", con)
    names = pd.read_sql_query("SELECT id, value FROM StringIds", con).set_index("id")["value"]
    is_comm = names.str.contains(COMM, regex=True)
    k["comm"] = k["demangledName"].map(is_comm).fillna(False).astype(bool)
    out = {}
    for dev, g in k.groupby("deviceId"):
        cs, ce = union(g[g["comm"]])
        ps, pe = union(g[~g["comm"]])
        comm = int((ce - cs).sum())
        hidden = covered(cs, ce, ps, pe, 2)
        out[str(dev)] = {
            "comm_ns": comm,
            "compute_ns": int((pe - ps).sum()),
            "hidden_ns": hidden,
            "exposed_ns": comm - hidden,
            "busy_ns": covered(cs, ce, ps, pe, 1),
        }
    json.dump(out, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
