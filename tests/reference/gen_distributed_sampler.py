"""tests/reference/gen_distributed_sampler.py — DistributedSampler index lists from PyTorch.

Run with PyTorch 2.x: python3 tests/reference/gen_distributed_sampler.py  (writes distributed_sampler.json)
num_replicas and rank are passed explicitly, so no process group is needed. Each case
records every rank's indices for epochs 0, 1 and 2 (set_epoch before iterating).
"""
from torch.utils.data.distributed import DistributedSampler

import reflib


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


cases = []
for n, replicas, shuffle, seed, drop_last in [
    (10, 2, False, 0, False),
    (10, 3, False, 0, False),
    (10, 3, False, 0, True),
    (10, 3, True, 0, False),
    (10, 3, True, 0, True),
    (11, 4, True, 7, False),
    (2, 5, True, 0, False),     # padding wraps around the data several times
    (2, 5, False, 0, False),
    (100, 4, True, 123, False),
    (1000, 3, True, 42, True),
    (0, 2, False, 0, False),    # empty dataset
    (7, 1, True, 3, False),
]:
    ranks = []
    for rank in range(replicas):
        sampler = DistributedSampler(Sized(n), num_replicas=replicas, rank=rank, shuffle=shuffle,
                                     seed=seed, drop_last=drop_last)
        epochs = []
        for epoch in range(3):
            sampler.set_epoch(epoch)
            epochs.append(list(iter(sampler)))
        ranks.append({"len": len(sampler), "epochs": epochs})
    cases.append({"n": n, "num_replicas": replicas, "shuffle": shuffle, "seed": seed,
                  "drop_last": drop_last, "ranks": ranks})

reflib.write("distributed_sampler.json", {"cases": cases})
