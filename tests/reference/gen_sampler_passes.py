"""tests/reference/gen_sampler_passes.py — DataLoader passes that stop early (break) or run to
the end, with and without an explicit generator, and what the next pass then shuffles.

Run with PyTorch 2.x (pip's torch; generated with 2.15): python3 tests/reference/gen_sampler_passes.py  (writes sampler_passes.json).
PyTorch's RandomSampler is a lazy generator: with an explicit generator its trailing
`randperm(n)[:num_samples % n]` is drawn only when the batch sampler asks for an index past
the last one, so a pass left with `break` draws one permutation less than a complete pass,
and the next pass's order shows it. Each scenario lists, per pass, after which batch the
loop breaks (-1: it runs to the end), the batches it saw, and a draw from the generator at
the end (which tells how far the stream advanced). num_workers=0 throughout.
"""
import torch
from torch.utils.data import DataLoader, Dataset

from reflib import tensor_json, write


class IndexDataset(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


scenarios = []
for name, n, batch_size, drop_last, explicit, plan in [
    ("brief_n7_b2_break_first", 7, 2, False, True, [0, -1, -1]),
    ("n7_b2_break_at_short_last", 7, 2, False, True, [3, -1]),   # the short batch already drew it
    ("n7_b2_break_before_short_last", 7, 2, False, True, [2, -1]),
    ("n6_b2_break_at_last", 6, 2, False, True, [2, -1]),         # a full last batch: not yet drawn
    ("n7_b2_drop_last_break_at_last", 7, 2, True, True, [2, -1, 0, -1]),
    ("n5_b8_drop_last_no_batches", 5, 8, True, True, [-1, -1]),
    ("n7_b3_full_passes", 7, 3, False, True, [-1, -1, -1]),
    ("default_generator_break_first", 7, 2, False, False, [0, -1, 1, -1]),
]:
    g = torch.Generator()
    g.manual_seed(42)
    torch.manual_seed(42)
    loader = DataLoader(IndexDataset(n), batch_size=batch_size, shuffle=True, drop_last=drop_last,
                        generator=g if explicit else None)
    passes = []
    for break_after in plan:
        seen = []
        for k, batch in enumerate(loader):
            seen.append(batch.tolist())
            if k == break_after:
                break
        passes.append(seen)
    after = torch.rand(3, generator=g) if explicit else torch.rand(3)
    scenarios.append({"name": name, "n": n, "batch_size": batch_size, "drop_last": drop_last,
                      "explicit_generator": explicit, "break_after": plan, "passes": passes,
                      "rand_after": tensor_json(after)})

write("sampler_passes.json", {"scenarios": scenarios})
