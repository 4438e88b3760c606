"""What torch's fake process group leaves in each collective's output, with
and without moeflow's fit-python/ (the fit stage's sitecustomize).

Run on a machine with torch (the GPU machine), twice:
    python3 fakepg_check.py --fake-process-group            # bare torch
    PYTHONPATH=templates/fit-python python3 fakepg_check.py --fake-process-group
(--fake-process-group is what makes fit-python/ install itself, as in a fit
job.)  Prints one TSV row per collective: whether its output holds the value
upstream's newer fake backend gives (FakeProcessGroup.hpp on PyTorch main),
or what torch.empty left ("unfilled").  World size 8, rank 3 of it, as a fit
run stands in for one rank of a large job.
"""
import os
import sys

import torch
import torch.distributed as dist
from torch.testing._internal.distributed.fake_pg import FakeStore

WORLD, RANK = 8, 3


def main():
    dist.init_process_group(backend="fake", store=FakeStore(), world_size=WORLD, rank=RANK)
    dev = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    sub = dist.new_group(list(range(4)))  # an EP-like subgroup of 4
    loaded = "moeflow_fake_collectives" in sys.modules
    nan = float("nan")
    rows = []

    def row(name, out, want):
        ok = out.shape == want.shape and bool(torch.equal(out, want))
        rows.append((name, "filled" if ok else "unfilled"))

    x = torch.arange(1.0, 5.0, device=dev)
    big = torch.arange(1.0, 4 * WORLD + 1, device=dev)

    out = torch.full((4 * WORLD,), nan, device=dev)
    dist.all_gather_into_tensor(out, x)
    row("all_gather_into_tensor", out, x.repeat(WORLD))

    outs = [torch.full((4,), nan, device=dev) for _ in range(WORLD)]
    dist.all_gather(outs, x)
    row("all_gather", torch.stack(outs), x.repeat(WORLD, 1))

    # list all-gather in a subgroup, as gather_from_sequence_parallel_region
    # with output_split_sizes does (the sizes come from an all-gather of
    # this rank's counts, so under a fake group they all equal the input's)
    outs = [torch.full((4,), nan, device=dev) for _ in range(4)]
    dist.all_gather(outs, x, group=sub)
    row("all_gather_subgroup", torch.cat(outs), x.repeat(4))

    out = torch.full((4 * WORLD,), nan, device=dev)
    dist.all_to_all_single(out, big)
    row("all_to_all_single", out, big)

    # MoE dispatch with uneven splits: 10 rows out, 7 rows in, hidden 3
    inp = torch.arange(1.0, 22.0, device=dev).view(7, 3)
    out = torch.full((10, 3), nan, device=dev)
    dist.all_to_all_single(out, inp, [3, 3, 2, 2], [2, 2, 2, 1], group=sub)
    row("all_to_all_single_uneven", out, torch.cat([inp, inp[:3]]))

    outs = [torch.full((4,), nan, device=dev) for _ in range(WORLD)]
    ins = list(big.split(4))
    dist.all_to_all(outs, ins)
    row("all_to_all", torch.stack(outs), torch.stack(ins))

    out = torch.full((4,), nan, device=dev)
    dist.reduce_scatter_tensor(out, big)
    row("reduce_scatter_tensor", out, big[4 * RANK:4 * RANK + 4])

    out = torch.full((4,), nan, device=dev)
    dist.reduce_scatter(out, ins)
    row("reduce_scatter", out, ins[RANK])

    t = x.clone()
    dist.all_reduce(t)
    row("all_reduce (in place, left)", t, x)
    t = x.clone()
    dist.broadcast(t, src=0)
    row("broadcast (in place, left)", t, x)

    # pipeline receives: finite values instead of torch.empty's
    def received(t):
        return torch.tensor(1.0 if bool(torch.isfinite(t).all()) else 0.0)
    t = torch.full((4, 2, 8), nan, device=dev)
    dist.irecv(t, src=2).wait()
    row("irecv", received(t), torch.tensor(1.0))
    t = torch.full((4, 2, 8), nan, device=dev)
    ops = [dist.P2POp(dist.isend, x.clone(), 4), dist.P2POp(dist.irecv, t, 2)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    row("batch_isend_irecv", received(t), torch.tensor(1.0))

    # distributed optimizer: reduce-scatter inside a coalescing manager
    out = torch.full((4,), nan, device=dev)
    with dist._coalescing_manager(async_ops=True) as cm:
        dist.reduce_scatter_tensor(out, big)
    cm.wait()
    row("reduce_scatter_tensor_coalesced", out, big[4 * RANK:4 * RANK + 4])

    print("torch\t%s\tmoeflow_fit_python\t%s" % (torch.__version__, "loaded" if loaded else "absent"))
    for name, verdict in rows:
        print("%s\t%s" % (name, verdict))
    sys.stdout.flush()
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("MOEFLOW_FAKE_COLLECTIVES", "fill")
    main()
