"""Records the real GPU trace that tests/data/traces/ ships: on 2 GPUs, an
asynchronous NCCL all-to-all overlapped with bf16 GEMMs, then a blocking
all-to-all with nothing to hide behind, captured with the PyTorch profiler
(Kineto JSON, one file per rank).

It also writes the overlap figures computed independently here, in Python
(interval unions over the kernel events of the profiled steps), so the C
implementation in lib/ is checked against a second implementation.

Run, one process per GPU:
  for r in 0 1; do RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29511 \
      OUT=/tmp/out python3 record_a2a_gemm.py & done; wait
"""
import gzip
import json
import os
import shutil

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, schedule

GEMM_N = 4096
GEMMS_PER_STEP = 8
A2A_ELEMS = 64 * 1024 * 1024  # bf16: 128 MiB per all-to-all


def step(a, b, send, recv):
    work = dist.all_to_all_single(recv, send, async_op=True)  # hidden behind GEMMs
    for _ in range(GEMMS_PER_STEP):
        torch.mm(a, b)
    work.wait()
    dist.all_to_all_single(recv, send)  # exposed: nothing runs beside it


def union(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def intersect_len(u, v):
    i = j = total = 0
    while i < len(u) and j < len(v):
        lo, hi = max(u[i][0], v[j][0]), min(u[i][1], v[j][1])
        if hi > lo:
            total += hi - lo
        if u[i][1] < v[j][1]:
            i += 1
        else:
            j += 1
    return total


def overlap_figures(trace_path):
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    comm = union([(e["ts"], e["ts"] + e["dur"]) for e in kernels if e["name"].startswith("nccl")])
    comp = union([(e["ts"], e["ts"] + e["dur"]) for e in kernels if not e["name"].startswith("nccl")])
    busy = union(comm + comp)
    comm_us = sum(e - s for s, e in comm)
    hidden = intersect_len(comm, comp)
    return {
        "kernels": len(kernels),
        "comm_us": comm_us,
        "compute_us": sum(e - s for s, e in comp),
        "hidden_us": hidden,
        "exposed_us": comm_us - hidden,
        "busy_us": sum(e - s for s, e in busy),
        "hidden_pct": 100.0 * hidden / comm_us if comm_us else 0.0,
    }


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    out = os.environ.get("OUT", ".")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    a = torch.randn(GEMM_N, GEMM_N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(GEMM_N, GEMM_N, device="cuda", dtype=torch.bfloat16)
    send = torch.randn(A2A_ELEMS, device="cuda", dtype=torch.bfloat16)
    recv = torch.empty_like(send)
    for _ in range(3):
        step(a, b, send, recv)
    torch.cuda.synchronize()
    dist.barrier()

    path = os.path.join(out, f"a2a-gemm-2xh200-rank{rank}.json")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=3),
                 on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(4):
            step(a, b, send, recv)
            prof.step()
    torch.cuda.synchronize()
    dist.barrier()

    figures = overlap_figures(path)
    figures["device"] = torch.cuda.get_device_name(rank)
    figures["torch"] = torch.__version__
    figures["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    with open(path.replace(".json", ".expected.json"), "w") as f:
        json.dump(figures, f, indent=1, sort_keys=True)
    with open(path, "rb") as src, gzip.open(path + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(path)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
