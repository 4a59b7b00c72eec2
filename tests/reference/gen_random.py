"""tests/reference/gen_random.py — reference draws from PyTorch's CPU generator.

Run with PyTorch 2.x: python3 tests/reference/gen_random.py   (writes random.json)
Each case names a recipe that tests/core/test_random.cpp replays with ember's functions;
the values are compared bit for bit.
"""
import torch

from reflib import tensor_json, write

SEEDS = [0, 1, 42, 123, 2024, 67280421310721]
SIZES = [1, 2, 15, 16, 17, 31, 33, 1000]
DTYPES = {"float32": torch.float32, "float64": torch.float64}

cases = []


def add(recipe, seed, result, **params):
    cases.append({"recipe": recipe, "seed": seed, "params": params, "result": tensor_json(result)})


def gen(seed):
    return torch.Generator().manual_seed(seed)


for seed in SEEDS:
    for size in SIZES:
        if size == 1000 and seed not in (0, 1, 123):
            continue  # keep the JSON small: the long runs for three seeds are enough
        for dname, dtype in DTYPES.items():
            add("rand", seed, torch.rand(size, dtype=dtype, generator=gen(seed)), size=size, dtype=dname)
            add("randn", seed, torch.randn(size, dtype=dtype, generator=gen(seed)), size=size, dtype=dname)

# uniform_ / normal_ with bounds, as nn.Linear's init and normal initialisers use them.
for seed in [3, 123]:
    for size in [7, 50, 1000]:
        for dname, dtype in DTYPES.items():
            t = torch.empty(size, dtype=dtype).uniform_(-0.1414, 0.1414, generator=gen(seed))
            add("uniform", seed, t, size=size, dtype=dname, low=-0.1414, high=0.1414)
            t = torch.empty(size, dtype=dtype).uniform_(2.0, 5.5, generator=gen(seed))
            add("uniform", seed, t, size=size, dtype=dname, low=2.0, high=5.5)
            t = torch.empty(size, dtype=dtype).normal_(2.0, 3.0, generator=gen(seed))
            add("normal", seed, t, size=size, dtype=dname, mean=2.0, std=3.0)

# Non-contiguous targets: draws follow memory order; normal_ takes the scalar path.
for seed in [5, 77]:
    for dname, dtype in DTYPES.items():
        t = torch.empty(6, 4, dtype=dtype).t()
        t.uniform_(generator=gen(seed))
        add("uniform_transposed", seed, t, rows=6, cols=4, dtype=dname)
        t = torch.empty(6, 4, dtype=dtype).t()
        t.normal_(generator=gen(seed))
        add("normal_transposed", seed, t, rows=6, cols=4, dtype=dname)

# Consecutive calls: an odd scalar-path randn leaves the second Box-Muller value cached.
for seed in [9, 123]:
    g = gen(seed)
    a = torch.randn(3, generator=g, dtype=torch.float64)
    b = torch.randn(3, generator=g, dtype=torch.float64)
    c = torch.randn(20, generator=g)
    d = torch.randn(1, generator=g)
    add("randn_sequence", seed, torch.cat([a, b, c.double(), d.double()]))

for seed in [0, 123, 999]:
    # From a range of 2^28 on, PyTorch 2.x draws 64 bits (1.13: from 2^32): both sides of it.
    for low, high in [(0, 10), (-5, 5), (0, 2 ** 40), (3, 4), (0, 2 ** 28 - 1), (-7, 2 ** 28 - 7)]:
        add("randint", seed, torch.randint(low, high, (25,), generator=gen(seed)), low=low, high=high)
    for dname, dtype in {"int64": torch.int64, "int32": torch.int32, "uint8": torch.uint8,
                         "float32": torch.float32, "float64": torch.float64, "bool": torch.bool}.items():
        add("random_full", seed, torch.empty(12, dtype=dtype).random_(generator=gen(seed)), dtype=dname)
    for dname, dtype, low in [("int32", torch.int32, 5), ("float32", torch.float32, 100),
                              ("int64", torch.int64, -2 ** 63), ("int64", torch.int64, 7)]:
        add("random_from", seed, torch.empty(10, dtype=dtype).random_(low, None, generator=gen(seed)),
            dtype=dname, low=low)
    add("random_scalar_int64", seed, torch.empty((), dtype=torch.int64).random_(generator=gen(seed)))
    for n in [1, 2, 3, 5, 10, 100]:
        add("randperm", seed, torch.randperm(n, generator=gen(seed)), n=n)
    for p in [0.0, 0.3, 0.5, 1.0]:
        add("bernoulli", seed, torch.empty(40).bernoulli_(p, generator=gen(seed)), p=p)

# The default generator through torch.manual_seed (tutorial §5 relies on it).
torch.manual_seed(123)
add("manual_seed_rand", 123, torch.rand((1, 50)))

# DataLoader(shuffle=True) after torch.manual_seed(123): a base seed for workers is drawn
# first, then RandomSampler seeds its own generator from the default one.
torch.manual_seed(123)
base_seed = torch.empty((), dtype=torch.int64).random_().item()
sampler_seed = int(torch.empty((), dtype=torch.int64).random_().item())
sampler_gen = torch.Generator()
sampler_gen.manual_seed(sampler_seed)
order = torch.randperm(5, generator=sampler_gen)
loader = {"base_seed": base_seed, "sampler_seed": sampler_seed, "order": order.tolist()}

# The same first epoch through the real DataLoader, to make sure the recipe is right.
torch.manual_seed(123)
dataset = torch.utils.data.TensorDataset(torch.arange(5))
seen = [int(x) for (batch,) in torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=True) for x in batch]
assert seen == loader["order"], (seen, loader["order"])

write("random.json", {"cases": cases, "dataloader": loader})
