"""tests/reference/gen_cli_gpt_ddp.py — `ember train --model gpt` under data parallelism, in PyTorch.

nanoGPT's train.py under DistributedDataParallel with W = 2 ranks (gloo, CPU, one thread each),
for the "small" and "cosine_warmup_clip" configurations of gen_cli_gpt.py, on the same fixture.
Writes cli_gpt_ddp.json, read by tests/apps/test_cli_gpt_distributed.cpp, which runs
`ember-run --nproc-per-node 2 -- ember train` with each case's flags and compares rank 0's log:
the per-step losses (the mean over ranks), learning rates and evaluations (relative error
below 1e-4).

The loop, in rank r (the rest as gen_cli_gpt.py):
  manual_seed(seed + r); text -> ids -> train/val; model = GPT(...) (drawn from rank r's
  generator); ddp = DistributedDataParallel(model) (broadcasts rank 0's parameters)
  optimizer = model.optimizer(...), the scheduler of gen_cli_gpt.make_scheduler
  per step: x, y = get_batch(train) (rank r's generator); loss = ddp(x, y); backward (gradients
            averaged over ranks); [clip_grad_norm_]; step; scheduler.step(); zero_grad;
            logged loss = all_reduce(loss, sum) / W
  after every --eval-every steps and after the last, rank 0 only: estimate_loss on the raw
  model with rank 0's generator (the other ranks go on)
Run: /work/venv/bin/python tests/reference/gen_cli_gpt_ddp.py
"""
import json
import os
import socket
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from gen_cli_gpt import CONFIGS, flags, read_fixture, train_loop
from gpt_model import GPT
from reflib import write

WORLD_SIZE = 2
CASES = [c for c in CONFIGS if c["name"] in ("small", "cosine_warmup_clip")]


def worker(rank, world_size, port, c, out_path):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(c["seed"] + rank)
    chars, _, train, val = read_fixture()
    model = GPT(len(chars), c["block_size"], c["n_layer"], c["n_head"], c["n_embd"], c["dropout"], True)
    ddp = torch.nn.parallel.DistributedDataParallel(model)

    def mean_over_ranks(loss):
        total = torch.tensor([loss.item()], dtype=torch.float64)
        dist.all_reduce(total)
        return total.item() / world_size

    steps, evals = train_loop(c, model, ddp, train, val, mean_over_ranks, evaluates=rank == 0)
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump({"name": c["name"], "flags": flags(c), "vocab_size": len(chars), "steps": steps, "evals": evals}, f)
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(c, world_size=WORLD_SIZE):
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "rank0.json")
        mp.spawn(worker, args=(world_size, free_port(), c, out_path), nprocs=world_size)  # raises if a rank fails
        with open(out_path) as f:
            return json.load(f)


if __name__ == "__main__":
    write("cli_gpt_ddp.json", {"world_size": WORLD_SIZE, "cases": [run(c) for c in CASES]})
