"""tests/reference/gen_reduce.py — PyTorch reference values for the reductions.

Run with PyTorch 2.x (pip's torch; generated with 2.15):  python3 tests/reference/gen_reduce.py
Writes reduce.json, read by tests/core/test_reduce.cpp.

Each case: op, input (a tensor, optionally with "layout": "t" = use its transpose), the
arguments (dims, keepdim, dtype) and PyTorch's result(s).
"""
import torch

from reflib import tensor_json, write

torch.manual_seed(1)
cases = []


def inp(x, layout=None):
    j = tensor_json(x)  # the op sees x.t() when layout == "t"
    if layout:
        j["layout"] = layout
    return j


def add(op, x, result, layout=None, **args):
    results = result if isinstance(result, tuple) else (result,)
    cases.append({"op": op, "input": inp(x, layout), "args": args, "results": [tensor_json(r) for r in results]})


x234 = torch.randn(2, 3, 4)
x34 = torch.randn(3, 4)
i234 = torch.randint(-5, 6, (2, 3, 4))
b23 = torch.tensor([[True, False, True], [True, True, False]])
ties = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, -1.0, 2.0], [0.0, 0.0, 0.0, 0.0]])
with_nan = torch.tensor([[1.0, float("nan"), 3.0], [float("nan"), 5.0, float("nan")], [-1.0, 0.0, 2.0]])
empty03 = torch.zeros(0, 3)
zero_d = torch.tensor(2.5)

def reference(name, x, dims, keepdim=False, dtype=None):
    """torch.<name> over a list of dims (empty = all); prod takes one dim at a time."""
    fn = getattr(torch, name)
    kwargs = {"dtype": dtype} if dtype is not None else {}
    if x.dim() == 0:
        return fn(x, **kwargs) if name not in ("amax", "amin") else fn(x, dim=[])
    dims = list(range(x.dim())) if not dims else [d % x.dim() for d in dims]
    if name != "prod":
        return fn(x, dim=dims, keepdim=keepdim, **kwargs)
    result = x
    for d in sorted(dims, reverse=True):
        result = torch.prod(result, dim=d, keepdim=True, **kwargs)
    return result if keepdim else result.reshape([s for i, s in enumerate(x.shape) if i not in dims])


dim_lists = [[], [0], [1], [2], [-1], [0, 2], [0, 1], [1, 2], [0, 1, 2]]
for name in ["sum", "mean", "prod", "amax", "amin"]:
    for dims in dim_lists:
        for keepdim in [False, True]:
            add(name, x234, reference(name, x234, dims, keepdim), dims=dims, keepdim=keepdim)
    add(name, x34, reference(name, x34.t(), [0]), "t", dims=[0], keepdim=False)
    add(name, x34, reference(name, x34.t(), [0, 1], True), "t", dims=[0, 1], keepdim=True)
    add(name, zero_d, reference(name, zero_d, [0]), dims=[0], keepdim=False)
    add(name, zero_d, reference(name, zero_d, []), dims=[], keepdim=False)
    add(name, with_nan, reference(name, with_nan, [1]), dims=[1], keepdim=False)
    if name != "mean":
        add(name, i234, reference(name, i234, [1]), dims=[1], keepdim=False)
        add(name, i234, reference(name, i234, [0, 2]), dims=[0, 2], keepdim=False)
        add(name, b23, reference(name, b23, [0]), dims=[0], keepdim=False)
        add(name, b23, reference(name, b23, []), dims=[], keepdim=False)
    if name in ("sum", "prod", "mean"):
        add(name, empty03, reference(name, empty03, [0]), dims=[0], keepdim=False)
        add(name, empty03, reference(name, empty03, []), dims=[], keepdim=False)
    if name in ("amax", "amin"):
        add(name, empty03, reference(name, empty03, [1]), dims=[1], keepdim=False)
add("sum", i234, torch.sum(i234, dim=[0, 2], dtype=torch.float64), dims=[0, 2], keepdim=False, dtype="float64")
add("sum", x234, torch.sum(x234, dim=[1], keepdim=True, dtype=torch.float64), dims=[1], keepdim=True,
    dtype="float64")
add("mean", i234, torch.mean(i234, dim=[2], dtype=torch.float32), dims=[2], keepdim=False, dtype="float32")
add("prod", i234, torch.prod(i234, dim=2, dtype=torch.int32), dims=[2], keepdim=False, dtype="int32")
u8 = torch.tensor([[200, 100], [7, 255]], dtype=torch.uint8)
i32 = torch.tensor([[2147483647, 1], [-5, 9]], dtype=torch.int32)
add("sum", u8, torch.sum(u8, dim=0), dims=[0], keepdim=False)       # int64: no uint8 overflow
add("sum", i32, torch.sum(i32, dim=1), dims=[1], keepdim=False)     # int64: no int32 overflow
add("prod", u8, reference("prod", u8, []), dims=[], keepdim=False)
add("amax", u8, torch.amax(u8, dim=[1], keepdim=True), dims=[1], keepdim=True)

for name in ["max", "min"]:
    fn = getattr(torch, name)
    for source, layout in [(x234, None), (ties, None), (with_nan, None), (x34, "t"), (i234, None)]:
        x = source.t() if layout else source
        for dim in range(-1, x.dim()):
            for keepdim in [False, True]:
                r = fn(x, dim=dim, keepdim=keepdim)
                add(name, source, (r.values, r.indices), layout, dim=dim, keepdim=keepdim)
    r = fn(zero_d, dim=0)
    add(name, zero_d, (r.values, r.indices), dim=0, keepdim=False)
    r = fn(empty03, dim=1)
    add(name, empty03, (r.values, r.indices), dim=1, keepdim=False)

for name in ["argmax", "argmin"]:
    fn = getattr(torch, name)
    for source, layout in [(x234, None), (ties, None), (with_nan, None), (x34, "t"), (i234, None)]:
        x = source.t() if layout else source
        add(name, source, fn(x), layout, dim=None, keepdim=False)
        add(name, source, fn(x, keepdim=True), layout, dim=None, keepdim=True)
        for dim in range(x.dim()):
            add(name, source, fn(x, dim=dim), layout, dim=dim, keepdim=False)
            add(name, source, fn(x, dim=dim, keepdim=True), layout, dim=dim, keepdim=True)
    add(name, zero_d, fn(zero_d), dim=None, keepdim=False)

big = torch.randn(3, 5, 7) * 10
big[0, 0, 0] = 1000.0  # a large logit: the stable form must not overflow
for name in ["softmax", "log_softmax"]:
    fn = getattr(torch, name)
    for dim in [0, 1, 2, -1]:
        add(name, big, fn(big, dim=dim), dim=dim)
        add(name, big.double(), fn(big.double(), dim=dim), dim=dim)
    add(name, x34, fn(x34.t(), dim=1), "t", dim=1)
    add(name, zero_d, fn(zero_d, dim=0), dim=0)
    add(name, empty03, fn(empty03, dim=1), dim=1)

# A long float32 sum: values k/64 are exact in float32, so the exact sum is known; PyTorch's
# result tells how close a float32 reduction must get.
n = 1_000_000
long_values = ((torch.arange(n, dtype=torch.int64) * 37) % 101).to(torch.float32) / 64
long_sum = {"n": n, "sum": long_values.sum().item(), "mean": long_values.mean().item(),
            "exact_sum": float(((torch.arange(n, dtype=torch.int64) * 37) % 101).sum().item()) / 64}

close = []
a = torch.tensor([1.0, 2.0, float("inf"), float("nan")])
for b, rtol, atol, equal_nan in [
    (torch.tensor([1.0, 2.0, float("inf"), float("nan")]), 1e-5, 1e-8, False),
    (torch.tensor([1.0, 2.0, float("inf"), float("nan")]), 1e-5, 1e-8, True),
    (torch.tensor([1.0 + 1e-6, 2.0, float("inf"), float("nan")]), 1e-5, 1e-8, True),
    (torch.tensor([1.001, 2.0, float("inf"), float("nan")]), 1e-5, 1e-8, True),
    (torch.tensor([1.001, 2.0, float("inf"), float("nan")]), 1e-2, 0.0, True),
    (torch.tensor([1.0, 2.0, -float("inf"), float("nan")]), 1e-5, 1e-8, True),
    (torch.tensor([1.05, 2.0, float("inf"), float("nan")]), 0.0, 0.1, True),
]:
    close.append({"a": tensor_json(a), "b": tensor_json(b), "rtol": rtol, "atol": atol, "equal_nan": equal_nan,
                  "result": torch.allclose(a, b, rtol, atol, equal_nan)})
row = torch.tensor([1.0, 2.0, 3.0])
grid = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0 + 1e-7]])
close.append({"a": tensor_json(grid), "b": tensor_json(row), "rtol": 1e-5, "atol": 1e-8, "equal_nan": False,
              "result": torch.allclose(grid, row)})
close.append({"a": tensor_json(torch.tensor([0.0])), "b": tensor_json(torch.tensor([1e-9])), "rtol": 1e-5,
              "atol": 1e-8, "equal_nan": False, "result": torch.allclose(torch.tensor([0.0]), torch.tensor([1e-9]))})
close.append({"a": tensor_json(torch.tensor([1e-9])), "b": tensor_json(torch.tensor([0.0])), "rtol": 0.5,
              "atol": 0.0, "equal_nan": False, "result": torch.allclose(torch.tensor([1e-9]), torch.tensor([0.0]), 0.5, 0.0)})

equal = []
for x, y in [(row, row.clone()), (row, torch.tensor([1.0, 2.0, 3.5])), (row, row.reshape(1, 3)),
             (row, row.double()), (torch.tensor([1, 2, 3]), row), (torch.tensor([float("nan")]), torch.tensor([float("nan")])),
             (torch.zeros(0, 2), torch.zeros(0, 2)), (torch.tensor(1.0), torch.tensor(1.0))]:
    equal.append({"a": tensor_json(x), "b": tensor_json(y), "result": torch.equal(x, y)})

write("reduce.json", {"cases": cases, "long_sum": long_sum, "allclose": close, "equal": equal})
