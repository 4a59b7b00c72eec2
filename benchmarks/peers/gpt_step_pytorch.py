"""benchmarks/peers/gpt_step_pytorch.py — PyTorch's side of benchmarks/gpt_step_profile.cpp.

The same GPT (tests/reference/gpt_model.py: nanoGPT's structure, F.scaled_dot_product_attention
with is_causal, so PyTorch picks its fused CPU flash kernel) and the same step: forward,
cross-entropy, backward, AdamW with two groups, zero_grad, on a fixed batch of random ids,
2 layers, 4 heads, width 128, T = 64, vocabulary 65; 5 warm-up steps, then the median of N
timed steps. AdamW runs PyTorch's default implementation (foreach on the CPU). Run the two
alternately on a shared machine (docs/performance.md, "The GPT"):

  for i in 1 2 3; do python benchmarks/peers/gpt_step_pytorch.py 30 32
                     build/bin/gpt_step_profile 30 32 5 2; done

Usage: gpt_step_pytorch.py [steps=30] [batch=32] [--threads N (default 2)] [--compile]
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "reference"))
from gpt_model import GPT  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("steps", type=int, nargs="?", default=30)
parser.add_argument("batch", type=int, nargs="?", default=32)
parser.add_argument("--threads", type=int, default=2)
parser.add_argument("--compile", action="store_true", help="torch.compile the model (not eager)")
args = parser.parse_args()

torch.set_num_threads(args.threads)
torch.manual_seed(0)
vocab, block = 65, 64
model = GPT(vocab, block, 2, 4, 128)
optimizer = model.optimizer(0.1, 1e-3, (0.9, 0.95))
forward = torch.compile(model) if args.compile else model
x = torch.randint(0, vocab, (args.batch, block))
y = torch.randint(0, vocab, (args.batch, block))
model.train()


def step():
    _, loss = forward(x, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


for _ in range(5):
    step()
seconds, cpu_seconds = [], []
for _ in range(args.steps):
    start, cpu_start = time.perf_counter(), time.process_time()
    step()
    cpu_seconds.append(time.process_time() - cpu_start)
    seconds.append(time.perf_counter() - start)
tokens = args.batch * block
median = statistics.median(seconds)
print(f"PyTorch {torch.__version__} GPT step{' (compiled)' if args.compile else ''}, batch {args.batch}, "
      f"{torch.get_num_threads()} threads: median {median * 1e3:.3f} ms ({tokens / median:.0f} tokens/s), "
      f"fastest {min(seconds) * 1e3:.3f} ms ({tokens / min(seconds):.0f} tokens/s)")
print(f"  CPU time per step: median {statistics.median(cpu_seconds) * 1e3:.3f} ms "
      f"({tokens / statistics.median(cpu_seconds):.0f} tokens per CPU-second)")
