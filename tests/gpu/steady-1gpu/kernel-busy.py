#!/usr/bin/env python3
"""GPU busy time per profiled step of a PyTorch profiler trace, and the
kernels with the most time: how profile-s12-s13.txt was made.

Usage: kernel-busy.py results/profile/torch_profile/rank-0.json.gz
"""
import gzip, json, sys

trace = json.load(gzip.open(sys.argv[1], "rt"))
events = trace.get("traceEvents", [])
kernels = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events
                 if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e.get("ph") == "X")
steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("ph") == "X"]
print(len(events), "events", len(kernels), "kernels",
      [(s["name"], round(s["dur"] / 1e3, 1)) for s in steps])
for s in steps:
    start, stop = s["ts"], s["ts"] + s["dur"]
    busy, end, by_name = 0, start, {}
    for k0, k1, name in kernels:
        if k1 <= start or k0 >= stop:
            continue
        k0, k1 = max(k0, start), min(k1, stop)
        by_name[name[:70]] = by_name.get(name[:70], 0) + k1 - k0
        if k1 > end:  # the union of the intervals, not their sum
            busy += k1 - max(k0, end)
            end = k1
    print(s["name"], "step %.1f ms GPU busy %.1f ms" % ((stop - start) / 1e3, busy / 1e3))
    for name, t in sorted(by_name.items(), key=lambda x: -x[1])[:14]:
        print("  %8.1f %s" % (t / 1e3, name))
