"""Real values for the collectives of torch's fake process group.

Megatron's --fake-process-group (megatron/training/initialize.py:
backend='fake', FakeStore) lets one GPU build one rank's shard of a large
layout.  torch's fake backend returns every collective at once.  Up to at
least torch 2.11 it copies the local input into all-gather outputs but leaves
the output of every other collective as torch.empty left it: all-to-all,
reduce-scatter, point-to-point receives.  Megatron allocates those outputs
with torch.empty (tensor_parallel/mappings.py), so an MoE layer with EP > 1
dispatches uninitialised memory; the router then ties or sees NaN, routes
every token to experts 0..k-1 on EP rank 0, and the run measures up to EP
times the real activation memory.

This module wraps the torch.distributed functions Megatron calls (it looks
them up as attributes, or captures them when megatron is imported, which is
after this module runs from sitecustomize) and fills what the backend left,
with the semantics of PyTorch's newer fake backend
(torch/csrc/distributed/c10d/FakeProcessGroup.hpp on main), so that results
agree across torch versions:

  all-gather (tensor and list)   the local input replicated
  all-to-all (single and list)   the local input tiled to the output size
  reduce-scatter (tensor, list)  this rank's slice of the input
  all-reduce, broadcast          the tensor left as it is (in place)
  recv / irecv / batched irecv   floats: deterministic standard normal
                                 values; integers: the last tensor of that
                                 shape this rank sent (pipeline shapes)

Which collectives the installed torch already fills is probed once, right
after init_process_group, on the real fake group; a version number is not
trusted.  Each run prints one evidence line at exit:

  moeflow-fake-collectives: torch=V mode=fill native=... filled=kind:N,...
    dispatch_calls=N rows_min=A rows_mean=B rows_max=C rows_balanced=D
    nonfinite=N

rows_*: rows an MoE token dispatch received (Megatron's token_dispatch),
against the rows this rank sent (what balanced routing returns to it).
"""
import atexit
import sys

_MODE = "fill"
_active = False       # the default group is fake
_torch = None
_dist = None
_orig = {}
_native = set()       # collectives the backend already fills
_filled = {}          # kind -> calls this module filled
_fake_groups = {}     # id(group) -> is the group fake
_dispatch = {"calls": 0, "min": None, "max": 0, "sum": 0, "balanced": 0, "nonfinite": 0}
_recv_gen = None
_sent = {}            # (shape, dtype) -> last integer tensor sent


# ---- filling ----

def _tile_into(out, src):
    """out := src flattened and repeated to out's size, without a temporary
    of out's size (a fit run must not allocate more than the real one)."""
    torch = _torch
    with torch.no_grad():
        n, m = out.numel(), src.numel()
        if n == 0:
            return
        if m == 0:
            out.zero_()
            return
        flat = src.reshape(-1)
        if flat.dtype != out.dtype:
            flat = flat.to(out.dtype)
        if out.is_contiguous():
            dst = out.view(-1)
            for start in range(0, n, m):
                k = min(m, n - start)
                dst[start:start + k].copy_(flat[:k])
        else:
            reps = -(-n // m)
            out.copy_(flat.repeat(reps)[:n].view(out.shape))


def _slice_into(out, src, rank):
    """out := this rank's chunk of src (reduce-scatter's local slice)."""
    with _torch.no_grad():
        n = out.numel()
        flat = src.reshape(-1)
        if flat.numel() >= (rank + 1) * n:
            out.view(-1).copy_(flat[rank * n:(rank + 1) * n]) if out.is_contiguous() \
                else out.copy_(flat[rank * n:(rank + 1) * n].view(out.shape))
        else:
            _tile_into(out, src)


def _fill_received(t):
    torch = _torch
    global _recv_gen
    with torch.no_grad():
        if t.is_floating_point():
            if _recv_gen is None or _recv_gen.device != t.device:
                _recv_gen = torch.Generator(device=t.device)
                _recv_gen.manual_seed(20261201)
            t.normal_(0.0, 1.0, generator=_recv_gen)
        else:
            last = _sent.get((tuple(t.shape), t.dtype))
            if last is not None:
                t.copy_(last)
            else:
                t.zero_()


def _remember_sent(t):
    if t is not None and not t.is_floating_point() and t.numel() <= 64:
        _sent[(tuple(t.shape), t.dtype)] = t.detach().clone()


# ---- bookkeeping ----

def _is_fake(group):
    key = id(group)
    hit = _fake_groups.get(key)
    if hit is None:
        try:
            hit = _dist.get_backend(group) == "fake"
        except Exception:
            hit = False
        _fake_groups[key] = hit
    return hit


def _count(kind):
    _filled[kind] = _filled.get(kind, 0) + 1


def _in_token_dispatch():
    f = sys._getframe(2)
    for _ in range(12):
        if f is None:
            return False
        if f.f_code.co_name == "token_dispatch":
            return True
        f = f.f_back
    return False


def _record_dispatch(out, sent_rows):
    """One MoE token dispatch (the tokens' all-to-all, not the probs'):
    rows received against rows sent."""
    if out.dim() < 2 or not out.is_floating_point() or not _in_token_dispatch():
        return
    rows = out.shape[0]
    d = _dispatch
    d["calls"] += 1
    d["sum"] += rows
    d["balanced"] += sent_rows
    d["max"] = max(d["max"], rows)
    d["min"] = rows if d["min"] is None else min(d["min"], rows)
    if out.numel() and not bool(_torch.isfinite(out).all()):
        d["nonfinite"] += 1


def _should_fill(kind, group):
    return _MODE == "fill" and kind not in _native and _is_fake(group)


def _group_rank(group):
    try:
        return _dist.get_rank(group)
    except Exception:
        return 0


# ---- wrappers (same signatures as torch.distributed's) ----

def _gather_into_tensor(name):
    """all_gather_into_tensor and its older name, _all_gather_base."""
    def wrapper(output_tensor, input_tensor, group=None, async_op=False):
        work = _orig[name](output_tensor, input_tensor, group=group, async_op=async_op)
        if _should_fill("all_gather_into_tensor", group):
            _tile_into(output_tensor, input_tensor)
            _count("all_gather_into_tensor")
        return work
    return wrapper


def _all_gather(tensor_list, tensor, group=None, async_op=False):
    work = _orig["all_gather"](tensor_list, tensor, group=group, async_op=async_op)
    if _should_fill("all_gather", group):
        for out in tensor_list:
            _tile_into(out, tensor)
        _count("all_gather")
    return work


def _all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                       group=None, async_op=False):
    work = _orig["all_to_all_single"](output, input, output_split_sizes, input_split_sizes,
                                      group=group, async_op=async_op)
    fake = _is_fake(group)
    if _should_fill("all_to_all_single", group):
        _tile_into(output, input)
        _count("all_to_all_single")
    if fake:
        _record_dispatch(output, input.shape[0] if input.dim() else 0)
    return work


def _all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    work = _orig["all_to_all"](output_tensor_list, input_tensor_list, group=group,
                               async_op=async_op)
    if _should_fill("all_to_all", group):
        for i, out in enumerate(output_tensor_list):
            _tile_into(out, input_tensor_list[i % len(input_tensor_list)])
        _count("all_to_all")
    return work


def _reduce_scatter_into_tensor(name):
    """reduce_scatter_tensor and its older name, _reduce_scatter_base."""
    def wrapper(output, input, op=None, group=None, async_op=False):
        kwargs = {"group": group, "async_op": async_op}
        if op is not None:
            kwargs["op"] = op
        work = _orig[name](output, input, **kwargs)
        if _should_fill("reduce_scatter_tensor", group):
            _slice_into(output, input, _group_rank(group))
            _count("reduce_scatter_tensor")
        return work
    return wrapper


def _reduce_scatter(output, input_list, op=None, group=None, async_op=False):
    kwargs = {"group": group, "async_op": async_op}
    if op is not None:
        kwargs["op"] = op
    work = _orig["reduce_scatter"](output, input_list, **kwargs)
    if _should_fill("reduce_scatter", group):
        rank = _group_rank(group)
        _tile_into(output, input_list[rank % len(input_list)])
        _count("reduce_scatter")
    return work


def _send(tensor, *args, **kwargs):
    _remember_sent(tensor)
    return _orig["send"](tensor, *args, **kwargs)


def _isend(tensor, *args, **kwargs):
    _remember_sent(tensor)
    return _orig["isend"](tensor, *args, **kwargs)


def _p2p_group(args, kwargs):
    return kwargs.get("group", args[1] if len(args) > 1 else None)


def _recv(tensor, *args, **kwargs):
    result = _orig["recv"](tensor, *args, **kwargs)
    if _should_fill("recv", _p2p_group(args, kwargs)):
        _fill_received(tensor)
        _count("recv")
    return result


def _irecv(tensor, *args, **kwargs):
    work = _orig["irecv"](tensor, *args, **kwargs)
    if _should_fill("recv", _p2p_group(args, kwargs)):
        _fill_received(tensor)
        _count("recv")
    return work


def _p2p_op_class():
    """P2POp checks that its op *is* torch's isend or irecv: hand it the
    originals when Megatron passes the wrappers."""
    base = _orig["P2POp"]
    wrapped = {_isend: _orig["isend"], _irecv: _orig["irecv"]}

    class P2POp(base):
        def __new__(cls, op, *args, **kwargs):
            return base.__new__(cls, wrapped.get(op, op), *args, **kwargs)

        def __init__(self, op, *args, **kwargs):
            base.__init__(self, wrapped.get(op, op), *args, **kwargs)

    P2POp.__name__ = P2POp.__qualname__ = "P2POp"
    return P2POp


def _batch_isend_irecv(p2p_op_list):
    for p in p2p_op_list:
        if p.op is _orig["isend"]:
            _remember_sent(p.tensor)
    works = _orig["batch_isend_irecv"](p2p_op_list)
    for p in p2p_op_list:
        if p.op is _orig["irecv"] and _should_fill("recv", p.group):
            _fill_received(p.tensor)
            _count("recv")
    return works


def _init_process_group(*args, **kwargs):
    global _active
    result = _orig["init_process_group"](*args, **kwargs)
    if _is_fake(None):
        _active = True
        _probe()
        sys.stderr.write("moeflow-fake-collectives: active, mode %s; torch %s fills %s itself; "
                         "moeflow fills the rest\n"
                         % (_MODE, _torch.__version__, ",".join(sorted(_native)) or "nothing"))
    return result


# ---- the probe: what does this torch's fake backend fill? ----

def _probe():
    torch, dist = _torch, _dist
    world = dist.get_world_size()
    rank = dist.get_rank()
    device = torch.device("cuda", torch.cuda.current_device()) \
        if torch.cuda.is_available() else torch.device("cpu")
    nan = float("nan")
    src = torch.arange(1, 4 * world + 1, dtype=torch.float32, device=device)
    chunk = src[:4].clone()

    def check(kind, run, out, want):
        try:
            run()
            if torch.equal(out, want):
                _native.add(kind)
        except Exception:
            pass  # unsupported here: fill it ourselves

    out = torch.full((4 * world,), nan, device=device)
    check("all_gather_into_tensor",
          lambda: _orig["all_gather_into_tensor"](out, chunk), out, chunk.repeat(world))
    outs = [torch.full((4,), nan, device=device) for _ in range(world)]
    stacked = torch.stack
    try:
        _orig["all_gather"](outs, chunk)
        if torch.equal(stacked(outs), chunk.repeat(world, 1)):
            _native.add("all_gather")
    except Exception:
        pass
    out = torch.full((4 * world,), nan, device=device)
    check("all_to_all_single", lambda: _orig["all_to_all_single"](out, src), out, src)
    outs = [torch.full((4,), nan, device=device) for _ in range(world)]
    ins = list(src.split(4))
    try:
        _orig["all_to_all"](outs, ins)
        if torch.equal(stacked(outs), stacked(ins)):
            _native.add("all_to_all")
    except Exception:
        pass
    out = torch.full((4,), nan, device=device)
    check("reduce_scatter_tensor", lambda: _orig["reduce_scatter_tensor"](out, src), out,
          src[4 * rank:4 * rank + 4])
    out = torch.full((4,), nan, device=device)
    check("reduce_scatter", lambda: _orig["reduce_scatter"](out, ins), out, ins[rank])
    # receives are never filled by a fake backend: nothing sends.


def _evidence():
    if not _active:
        return
    d = _dispatch
    filled = ",".join("%s:%d" % kv for kv in sorted(_filled.items())) or "none"
    mean = d["sum"] / d["calls"] if d["calls"] else 0.0
    balanced = d["balanced"] / d["calls"] if d["calls"] else 0.0
    sys.stderr.write(
        "moeflow-fake-collectives: torch=%s mode=%s native=%s filled=%s dispatch_calls=%d "
        "rows_min=%d rows_mean=%.1f rows_max=%d rows_balanced=%.1f nonfinite=%d\n"
        % (_torch.__version__, _MODE, ",".join(sorted(_native)) or "none", filled, d["calls"],
           d["min"] or 0, mean, d["max"], balanced, d["nonfinite"]))
    sys.stderr.flush()


_WRAPPERS = {
    "all_gather_into_tensor": _gather_into_tensor("all_gather_into_tensor"),
    "_all_gather_base": _gather_into_tensor("_all_gather_base"),
    "all_gather": _all_gather,
    "all_to_all_single": _all_to_all_single,
    "all_to_all": _all_to_all,
    "reduce_scatter_tensor": _reduce_scatter_into_tensor("reduce_scatter_tensor"),
    "_reduce_scatter_base": _reduce_scatter_into_tensor("_reduce_scatter_base"),
    "reduce_scatter": _reduce_scatter,
    "send": _send,
    "isend": _isend,
    "recv": _recv,
    "irecv": _irecv,
    "batch_isend_irecv": _batch_isend_irecv,
    "init_process_group": _init_process_group,
}


def install(mode="fill"):
    """Wrap torch.distributed's collectives; mode "observe" records the
    evidence without filling (to measure what the bare backend does)."""
    global _torch, _dist, _MODE
    if mode not in ("fill", "observe"):
        raise ValueError("MOEFLOW_FAKE_COLLECTIVES must be fill, observe or off, not %r" % mode)
    import torch
    import torch.distributed as dist

    _torch, _dist, _MODE = torch, dist, mode
    for name, wrapper in _WRAPPERS.items():
        if hasattr(dist, name):
            _orig[name] = getattr(dist, name)
            setattr(dist, name, wrapper)
    _orig["P2POp"] = dist.P2POp
    dist.P2POp = _p2p_op_class()
    atexit.register(_evidence)
