"""Runs Megatron's pretrain_gpt.py with a memory probe: after every
training step the allocator's current and peak bytes, one line each,
"MOEFLOW_STEPMEM it=N allocated=B max_allocated=B reserved=B max_reserved=B",
so that the step that captures the CUDA graphs shows what the graphs keep.
Recording only (tests/gpu/cuda-graphs.sh); moeflow never runs this."""
import runpy
import sys

import torch
import megatron.training.training as training

_step = [0]
_train_step = training.train_step


def _probed_train_step(*args, **kwargs):
    out = _train_step(*args, **kwargs)
    torch.cuda.synchronize()
    _step[0] += 1
    print(f"MOEFLOW_STEPMEM it={_step[0]} allocated={torch.cuda.memory_allocated()} "
          f"max_allocated={torch.cuda.max_memory_allocated()} "
          f"reserved={torch.cuda.memory_reserved()} "
          f"max_reserved={torch.cuda.max_memory_reserved()}", flush=True)
    return out


training.train_step = _probed_train_step
sys.argv = ["pretrain_gpt.py"] + sys.argv[1:]
runpy.run_path("pretrain_gpt.py", run_name="__main__")
