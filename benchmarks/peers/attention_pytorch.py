"""benchmarks/peers/attention_pytorch.py — PyTorch's side of benchmarks/attention_profile.cpp.

The same calls as ember's attention_profile: F.scaled_dot_product_attention on [1, 8, T, 64]
causal heads, the forward alone (no_grad) and forward + backward from a fixed output gradient,
with PyTorch's default kernel on the CPU (its flash kernel) or its math path; one warm-up
call, then the median wall time of N calls and the user CPU time per call (less disturbed than
wall time when other processes share the cores). Run the two alternately to compare them on a
shared machine (docs/performance.md, "Fused attention"):

  for T in 256 1024; do python benchmarks/peers/attention_pytorch.py $T 10 1
                        build/bin/attention_profile $T 10 1; done

Usage: attention_pytorch.py [T=1024] [calls=10] [threads=2] [fused|composite] [heads=8]
"""
import contextlib
import resource
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

time_ = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 10
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
path = sys.argv[4] if len(sys.argv) > 4 else "fused"
heads = int(sys.argv[5]) if len(sys.argv) > 5 else 8
torch.set_num_threads(threads)
torch.manual_seed(1)
q, k, v, grad = (torch.rand(1, heads, time_, 64) - 0.5 for _ in range(4))
for t in (q, k, v):
    t.requires_grad_(True)


def user_seconds():
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime


with sdpa_kernel(SDPBackend.MATH) if path == "composite" else contextlib.nullcontext():
    for backward in (False, True):
        walls, start_user = [], user_seconds()
        for i in range(calls + 1):
            for t in (q, k, v):
                t.grad = None
            start = time.perf_counter()
            if backward:
                F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(grad)
            else:
                with torch.no_grad():
                    F.scaled_dot_product_attention(q, k, v, is_causal=True)
            if i > 0:  # call 0: warm-up
                walls.append(time.perf_counter() - start)
        walls.sort()
        print("pytorch   T=%d %s: median %.3f ms, user CPU %.3f ms per call (%d threads)"
              % (time_, "fwd+bwd" if backward else "fwd    ", 1e3 * walls[len(walls) // 2],
                 1e3 * (user_seconds() - start_user) / (calls + 1), torch.get_num_threads()))
