"""tests/reference/gen_sampling.py — PyTorch's exponential_, multinomial and topk on the CPU.

Run: /work/venv/bin/python tests/reference/gen_sampling.py   (writes sampling.json)
The ops text generation samples with (issue 21). tests/core/test_sampling.cpp replays every
case with ember and compares bit for bit (values) or exactly (indices);
tests/autograd/test_topk.cpp checks topk's gradient and node. Facts the cases pin down:
  * exponential_ draws one double per element (53 random bits), -1/lambda * log1p(-u),
    rounded to the tensor's dtype, in the tensor's memory order;
  * multinomial without replacement, or with one sample, is argmax/topk of p / q with
    q = empty_like(p).exponential_(1); with replacement and several samples it is a binary
    search of a uniform double in the row's normalised running sum;
  * topk's order among equal values (and NaNs, which count as the largest) is the one its
    CPU selection (partial sort for k * 64 <= n, else nth_element + sort) leaves.
"""
import torch

from reflib import tensor_json, write

DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64,
          "int32": torch.int32, "uint8": torch.uint8}


inputs = []  # every distinct input tensor once; cases name theirs by position


def input_id(t):
    for i, (stored, _) in enumerate(inputs):
        if stored.dtype == t.dtype and stored.shape == t.shape and torch.equal(stored, t.contiguous()):
            return i
    inputs.append((t.detach().contiguous().clone(), tensor_json(t)))
    return len(inputs) - 1


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the message is what we record
        return str(e).split("\n")[0]
    raise AssertionError("expected an error")


# ---------------------------------------------------------------- exponential_
exponential = []
for seed in [0, 42]:
    for size in [1, 7, 100]:
        for dname in ["float32", "float64"]:
            for lam in [1.0, 2.5, 0.3]:
                torch.manual_seed(seed)
                t = torch.empty(size, dtype=DTYPES[dname]).exponential_(lam)
                after = torch.rand(3, dtype=torch.float64)  # the stream continues where it should
                exponential.append({"seed": seed, "sizes": [size], "dtype": dname, "lambda": lam,
                                    "layout": "contiguous", "result": tensor_json(t), "after": tensor_json(after)})
# A transposed tensor is filled in memory order; lambda = inf gives zeros.
for dname in ["float32", "float64"]:
    torch.manual_seed(5)
    t = torch.empty(5, 3, dtype=DTYPES[dname]).t().exponential_(1.5)
    after = torch.rand(3, dtype=torch.float64)
    exponential.append({"seed": 5, "sizes": [3, 5], "dtype": dname, "lambda": 1.5, "layout": "transposed",
                        "result": tensor_json(t), "after": tensor_json(after)})
    torch.manual_seed(6)
    t = torch.empty(10, dtype=DTYPES[dname])[::2].exponential_(0.7)  # every other element
    after = torch.rand(3, dtype=torch.float64)
    exponential.append({"seed": 6, "sizes": [5], "dtype": dname, "lambda": 0.7, "layout": "step2",
                        "result": tensor_json(t), "after": tensor_json(after)})
    # 2-d views that are not dense: every other row of a [6, 8] tensor, transposed ([8, 3],
    # strides (1, 16): filled column by column), and every other column from column 1 ([4, 3],
    # strides (6, 2), storage offset 1).
    torch.manual_seed(8)
    t = torch.empty(6, 8, dtype=DTYPES[dname])[::2].t().exponential_(1.0)
    after = torch.rand(3, dtype=torch.float64)
    exponential.append({"seed": 8, "sizes": [8, 3], "dtype": dname, "lambda": 1.0, "layout": "rows step2 transposed",
                        "result": tensor_json(t), "after": tensor_json(after)})
    torch.manual_seed(10)
    t = torch.empty(4, 6, dtype=DTYPES[dname])[:, 1::2].exponential_(3.0)
    after = torch.rand(3, dtype=torch.float64)
    exponential.append({"seed": 10, "sizes": [4, 3], "dtype": dname, "lambda": 3.0, "layout": "columns step2",
                        "result": tensor_json(t), "after": tensor_json(after)})
torch.manual_seed(9)
t = torch.empty(4, dtype=torch.float64).exponential_(float("inf"))
exponential.append({"seed": 9, "sizes": [4], "dtype": "float64", "lambda": "inf", "layout": "contiguous",
                    "result": tensor_json(t), "after": tensor_json(torch.rand(3, dtype=torch.float64))})
exponential_errors = [
    {"lambda": 0.0, "dtype": "float32", "message": error_of(lambda: torch.empty(2).exponential_(0.0))},
    {"lambda": -1.5, "dtype": "float32", "message": error_of(lambda: torch.empty(2).exponential_(-1.5))},
    {"lambda": "nan", "dtype": "float64",
     "message": error_of(lambda: torch.empty(2, dtype=torch.float64).exponential_(float("nan")))},
    {"lambda": 1.0, "dtype": "int64",
     "message": error_of(lambda: torch.empty(2, dtype=torch.int64).exponential_(1.0))},
]

# ---------------------------------------------------------------- multinomial
multinomial = []


def add_multinomial(name, probs, num_samples, replacement, seed, layout="contiguous"):
    torch.manual_seed(seed)
    result = torch.multinomial(probs, num_samples, replacement)
    after = torch.rand(3, dtype=torch.float64)
    multinomial.append({"name": name, "probs": input_id(probs), "layout": layout, "num_samples": num_samples,
                        "replacement": replacement, "seed": seed, "result": tensor_json(result),
                        "after": tensor_json(after)})


g = torch.Generator().manual_seed(2024)
for dname in ["float32", "float64"]:
    dtype = DTYPES[dname]
    for shape in [(7,), (3, 5), (4, 130), (2, 1000)]:
        probs = torch.rand(shape, generator=g, dtype=dtype)
        probs[..., 1] = 0  # a category that must never be drawn
        for num_samples, replacement in [(1, False), (1, True), (3, False), (5, True), (2, False)]:
            for seed in [0, 7]:
                add_multinomial(f"{dname}{list(shape)}", probs, num_samples, replacement, seed)
    # Rows with fewer non-zero categories than samples: the zeros tie (topk's order).
    probs = torch.zeros(3, 6, dtype=dtype)
    probs[0, 2] = 1
    probs[1, 4] = 0.5
    probs[1, 0] = 0.25
    probs[2] = 1
    for seed in [1, 3]:
        add_multinomial(f"{dname} sparse rows", probs, 4, False, seed)
        add_multinomial(f"{dname} sparse rows", probs, 6, True, seed)
    # Unnormalised weights, the whole row drawn without replacement.
    probs = torch.tensor([[3.0, 1.0, 0.0, 6.0], [0.5, 0.5, 0.5, 0.5]], dtype=dtype)
    add_multinomial(f"{dname} weights", probs, 4, False, 11)
    add_multinomial(f"{dname} weights", probs, 8, True, 11)
    # A transposed probs tensor: q follows its strides (empty_like keeps them).
    base = torch.rand(6, 4, generator=g, dtype=dtype)
    add_multinomial(f"{dname} transposed", base.t(), 1, False, 4, layout="transposed")
    add_multinomial(f"{dname} transposed", base.t(), 3, False, 4, layout="transposed")
    add_multinomial(f"{dname} transposed", base.t(), 3, True, 4, layout="transposed")
    # Views that are not dense: empty_like gives q dense strides in the same order of dims
    # (infer_dense_strides), so for every other row of a [10, 4] tensor, transposed ([4, 5],
    # strides (1, 8)), q is filled column by column; a 1-d view with step 2 gets a contiguous q.
    wide = torch.rand(10, 4, generator=g, dtype=dtype)
    for num_samples, replacement in [(1, False), (3, False), (4, True)]:
        add_multinomial(f"{dname} rows step2 transposed", wide[::2].t(), num_samples, replacement, 12,
                        layout="rows step2 transposed")
    line = torch.rand(14, generator=g, dtype=dtype)
    for num_samples, replacement in [(1, False), (4, False), (5, True)]:
        add_multinomial(f"{dname} step2", line[::2], num_samples, replacement, 13, layout="step2")

# ---------------------------------------------------------------- 16-bit dtypes (issue 22)
# exponential_ rounds each double through float32; multinomial's ratios p / q are 16-bit (q
# drawn in the dtype, so ties are common and topk's order matters), and its replacement path
# sums in float32: the "many categories" cases draw differently with float64 sums.
DTYPES.update({"bfloat16": torch.bfloat16, "float16": torch.float16})
g16 = torch.Generator().manual_seed(2025)
for dname in ["bfloat16", "float16"]:
    dtype = DTYPES[dname]
    for seed in [0, 42]:
        for size in [7, 100]:
            torch.manual_seed(seed)
            t = torch.empty(size, dtype=dtype).exponential_(2.5)
            after = torch.rand(3, dtype=torch.float64)
            exponential.append({"seed": seed, "sizes": [size], "dtype": dname, "lambda": 2.5,
                                "layout": "contiguous", "result": tensor_json(t), "after": tensor_json(after)})
    torch.manual_seed(5)
    t = torch.empty(5, 3, dtype=dtype).t().exponential_(1.5)
    after = torch.rand(3, dtype=torch.float64)
    exponential.append({"seed": 5, "sizes": [3, 5], "dtype": dname, "lambda": 1.5, "layout": "transposed",
                        "result": tensor_json(t), "after": tensor_json(after)})
    for shape in [(7,), (3, 5), (2, 1000)]:
        probs = torch.rand(shape, generator=g16).to(dtype)
        probs[..., 1] = 0
        for num_samples, replacement in [(1, False), (1, True), (3, False), (5, True)]:
            for seed in [0, 7]:
                add_multinomial(f"{dname}{list(shape)}", probs, num_samples, replacement, seed)
    base = torch.rand(6, 4, generator=g16).to(dtype)
    add_multinomial(f"{dname} transposed", base.t(), 3, False, 4, layout="transposed")
    many = (torch.rand(1, 4096, generator=g16) + 0.01).to(dtype)
    add_multinomial(f"{dname} many categories", many, 3000, True, 3)

p = torch.tensor([0.2, 0.3, 0.5])
multinomial_errors = [
    ("negative", [0.2, -0.1], 1, False, lambda: torch.multinomial(torch.tensor([0.2, -0.1]), 1)),
    ("negative", [0.2, -0.1], 3, True, lambda: torch.multinomial(torch.tensor([0.2, -0.1]), 3, True)),
    ("inf", [0.2, "inf"], 1, False, lambda: torch.multinomial(torch.tensor([0.2, float("inf")]), 1)),
    ("inf", [0.2, "inf"], 3, True, lambda: torch.multinomial(torch.tensor([0.2, float("inf")]), 3, True)),
    ("nan", [0.2, "nan"], 2, False, lambda: torch.multinomial(torch.tensor([0.2, float("nan")]), 2)),
    ("nan", [0.2, "nan"], 3, True, lambda: torch.multinomial(torch.tensor([0.2, float("nan")]), 3, True)),
    ("zeros", [0.0, 0.0], 1, False, lambda: torch.multinomial(torch.tensor([0.0, 0.0]), 1)),
    ("zeros", [0.0, 0.0], 3, True, lambda: torch.multinomial(torch.tensor([0.0, 0.0]), 3, True)),
    ("too many", [0.2, 0.3, 0.5], 4, False, lambda: torch.multinomial(p, 4)),
    ("no samples", [0.2, 0.3, 0.5], 0, False, lambda: torch.multinomial(p, 0)),
    ("negative samples", [0.2, 0.3, 0.5], -1, True, lambda: torch.multinomial(p, -1, True)),
]
multinomial_errors = [{"name": n, "probs": v, "num_samples": k, "replacement": r, "message": error_of(f)}
                      for n, v, k, r, f in multinomial_errors]
multinomial_errors.append({"name": "zero row", "probs": [[1.0, 0.0], [0.0, 0.0]], "num_samples": 1,
                           "replacement": False,
                           "message": error_of(lambda: torch.multinomial(torch.tensor([[1.0, 0.0], [0.0, 0.0]]), 1))})
# PyTorch checks every element (max < inf, min >= 0) before any row's sum.
multinomial_errors.append({"name": "zero row before nan", "probs": [[0.0, 0.0], [1.0, "nan"]], "num_samples": 1,
                           "replacement": False,
                           "message": error_of(lambda: torch.multinomial(
                               torch.tensor([[0.0, 0.0], [1.0, float("nan")]]), 1))})
multinomial_messages = {
    "3-d": error_of(lambda: torch.multinomial(torch.rand(2, 2, 2), 1)),
    "0-d": error_of(lambda: torch.multinomial(torch.tensor(0.5), 1)),
    "int64": error_of(lambda: torch.multinomial(torch.tensor([1, 2]), 1)),
    "empty categories": error_of(lambda: torch.multinomial(torch.empty(2, 0), 1)),
    "empty categories, replacement": error_of(lambda: torch.multinomial(torch.empty(2, 0), 1, True)),
    "empty 1-d, replacement": error_of(lambda: torch.multinomial(torch.empty(0), 2, True)),
}
empty_rows = torch.multinomial(torch.empty(0, 3), 2)

# ---------------------------------------------------------------- topk
topk = []
gen = torch.Generator().manual_seed(77)


def add_topk(name, x, k, dim=-1, largest=True, sorted=True, layout="contiguous"):
    values, indices = torch.topk(x, k, dim, largest, sorted)
    topk.append({"name": name, "input": input_id(x), "layout": layout, "k": k, "dim": dim, "largest": largest,
                 "sorted": sorted, "values": tensor_json(values), "indices": tensor_json(indices)})


for size in [5, 20, 130, 300]:
    ties = torch.randint(0, 4, (size,), generator=gen).to(torch.float32)  # many equal values
    distinct = torch.randn(size, generator=gen, dtype=torch.float64)
    for k in sorted({1, 2, 3, min(size, 5), size // 2, size}):
        for largest in [True, False]:
            for sort in [True, False]:
                add_topk(f"ties {size}", ties, k, -1, largest, sort)
                add_topk(f"distinct {size}", distinct, k, -1, largest, sort)
zeros = torch.zeros(20)
add_topk("all equal", zeros, 5)
add_topk("all equal", torch.zeros(200), 3)
add_topk("all equal", torch.ones(5), 2, largest=False)
with_nan = torch.tensor([1.0, float("nan"), 3.0, float("nan"), -2.0, 3.0])
for k in [1, 3, 6]:
    for largest in [True, False]:
        add_topk("nan", with_nan, k, -1, largest)
matrix = torch.randint(0, 5, (6, 140), generator=gen).to(torch.float64)
for dim in [0, 1, -1]:
    for k in [1, 2, 4]:
        add_topk(f"matrix dim {dim}", matrix, k, dim)
        add_topk(f"matrix dim {dim}", matrix, k, dim, largest=False, sorted=False)
cube = torch.randn(3, 4, 5, generator=gen)
for dim in [0, 1, 2]:
    add_topk("cube", cube, 2, dim)
add_topk("transposed", torch.randint(0, 3, (9, 4), generator=gen).to(torch.float32).t(), 3, 1, layout="transposed")
for dname in ["int64", "int32", "uint8"]:
    add_topk(dname, torch.randint(0, 9, (3, 12), generator=gen).to(DTYPES[dname]), 4, 1)
    add_topk(dname, torch.randint(0, 9, (3, 12), generator=gen).to(DTYPES[dname]), 3, 1, largest=False)
add_topk("0-d", torch.tensor(2.5), 1)
add_topk("0-d k=0", torch.tensor(2.5), 0)
add_topk("k=0", torch.randn(3, 4, generator=gen), 0)
add_topk("empty rows", torch.empty(0, 4), 2)
topk_messages = {
    "k too large": error_of(lambda: torch.topk(torch.zeros(3), 4)),
    "k negative": error_of(lambda: torch.topk(torch.zeros(3), -1)),
    "0-d k=2": error_of(lambda: torch.topk(torch.tensor(1.0), 2)),
    "dim": error_of(lambda: torch.topk(torch.zeros(3), 1, dim=1)),
    "bool": error_of(lambda: torch.topk(torch.tensor([True, False]), 1)),
}

# Gradient: d/dx of sum(values * w) scatters w to the chosen indices.
topk_grads = []
for shape, k, dim, largest in [((7,), 3, -1, True), ((4, 6), 2, 1, False), ((5, 3), 2, 0, True),
                               ((2, 3, 4), 1, 1, True)]:
    x = torch.randn(shape, generator=gen, dtype=torch.float64, requires_grad=True)
    values, indices = torch.topk(x, k, dim, largest)
    weight = torch.randn(values.shape, generator=gen, dtype=torch.float64)
    (values * weight).sum().backward()
    topk_grads.append({"input": tensor_json(x), "k": k, "dim": dim, "largest": largest,
                       "weight": tensor_json(weight), "grad": tensor_json(x.grad),
                       "node": values.grad_fn.name()})

write("sampling.json", {
    "inputs": [json for _, json in inputs],
    "exponential": exponential, "exponential_errors": exponential_errors,
    "multinomial": multinomial, "multinomial_errors": multinomial_errors,
    "multinomial_messages": multinomial_messages, "multinomial_empty_rows": tensor_json(empty_rows),
    "topk": topk, "topk_messages": topk_messages, "topk_grads": topk_grads,
})
