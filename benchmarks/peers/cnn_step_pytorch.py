"""benchmarks/peers/cnn_step_pytorch.py — PyTorch's side of benchmarks/cnn_step_profile.cpp.

The same loop as ember's cnn_step_profile (issue 19's CNN: Conv2d(1,32,3,p=1), ReLU,
MaxPool2d(2), Conv2d(32,64,3,p=1), ReLU, MaxPool2d(2), Flatten, Linear(3136,128), ReLU,
Linear(128,10); zero_grad, forward, cross-entropy, backward, SGD), timed the same way: 5
warm-up steps, then the median of N timed steps. Run the two alternately to compare them on a
shared machine (docs/performance.md, "The CNN"):

  for i in 1 2 3 4 5; do python benchmarks/peers/cnn_step_pytorch.py 30 32 --channels-last
                         build/bin/cnn_step_profile 30 32 5; done

Usage: cnn_step_pytorch.py [steps=30] [batch=32] [--channels-last] [--threads N (default 2)]
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("steps", type=int, nargs="?", default=30)
parser.add_argument("batch", type=int, nargs="?", default=32)
parser.add_argument("--channels-last", action="store_true")
parser.add_argument("--threads", type=int, default=2)
args = parser.parse_args()

torch.set_num_threads(args.threads)
torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                      nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))
images = torch.rand(args.batch, 1, 28, 28)
if args.channels_last:
    model = model.to(memory_format=torch.channels_last)
    images = images.contiguous(memory_format=torch.channels_last)
labels = torch.randint(0, 10, (args.batch,))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def step():
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(images), labels).backward()
    optimizer.step()


for _ in range(5):
    step()
seconds = []
for _ in range(args.steps):
    start = time.perf_counter()
    step()
    seconds.append(time.perf_counter() - start)
median = statistics.median(seconds)
layout = "channels_last" if args.channels_last else "contiguous"
print(f"PyTorch {torch.__version__} CNN step, batch {args.batch}, {args.threads} threads, {layout}: "
      f"median {median * 1e3:.3f} ms ({args.batch / median:.0f} examples/s)")
