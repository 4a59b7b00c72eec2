"""benchmarks/peers/mlp_epoch_pytorch.py — PyTorch's best-case epoch for `ember train`'s MLP.

Issue 23 compares `ember train`'s Fashion-MNIST epoch with the fastest plain PyTorch loop over
the same data: the 60000 images preloaded as one float32 tensor (scaled by 1/255, as ember's
--input-scale does), no DataLoader, each epoch a fresh permutation whose batches are gathered by
indexing (x[perm[i:i+B]]); the same 784-256-128-10 MLP, SGD lr 0.1, cross-entropy, and the loss
read back once per step with .item() as a progress bar would (ember train reads it for its
progress and NaN check). The model and the loop are what a PyTorch user would write; nothing in
it pays for a feature ember's epoch does not have.

  python benchmarks/peers/mlp_epoch_pytorch.py [--batch 128] [--epochs 3] [--threads 2]

prints the median samples/s of the epochs after the first (a warm-up), and each epoch's.
"""
import argparse
import gzip
import statistics
import struct
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, default=128)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--threads", type=int, default=2)
parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
args = parser.parse_args()
torch.set_num_threads(args.threads)


def read_idx(path):
    with gzip.open(path, "rb") as file:
        data = file.read()
    dims = data[3]
    sizes = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).reshape(sizes)


images = read_idx(args.data + "/train-images-idx3-ubyte.gz").reshape(-1, 784).float() / 255
labels = read_idx(args.data + "/train-labels-idx1-ubyte.gz").long()
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

rates = []
for epoch in range(args.epochs):
    start = time.perf_counter()
    permutation = torch.randperm(images.shape[0])
    for first in range(0, images.shape[0], args.batch):
        rows = permutation[first:first + args.batch]
        x, y = images[rows], labels[rows]
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss.item()
    rates.append(images.shape[0] / (time.perf_counter() - start))
    print(f"epoch {epoch + 1}: {rates[-1]:.0f} samples/s")
print(f"median after the first: {statistics.median(rates[1:] if len(rates) > 1 else rates):.0f} samples/s "
      f"(PyTorch {torch.__version__}, {args.threads} threads, batch {args.batch})")
