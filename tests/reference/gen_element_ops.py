"""tests/reference/gen_element_ops.py — PyTorch's values for the element ops added on the
one-list path (issue 18): gelu (exact and tanh), silu, erf, rsqrt, tanh's backward,
masked_fill and clamp with tensor bounds.

Run with PyTorch:  python3 tests/reference/gen_element_ops.py
Writes element_ops.json, read by tests/autograd/test_element_ops.cpp, which compares the
element functions' values and gradients within 16 machine epsilons (PyTorch's kernels are
built with FMA contraction, use SLEEF from 8 float64 elements on and oneDNN for float32
GELU), and masked_fill / clamp bit for bit.
"""
import math

import torch
import torch.nn.functional as F

from reflib import tensor_json, write

X = [-3.5, -1.0, -0.5, -0.0, 0.0, 0.25, 1.0, 2.0, 3.0, 7.5, math.nan, math.inf]
UPSTREAM = [0.5, -1.25, 2.0, 1.0, -0.75, 3.0, 0.125, -2.0, 1.5, 0.25, 1.0, 1.0]
FUNCTIONS = {
    "gelu": lambda x: F.gelu(x),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
    "erf": torch.erf,
    "rsqrt": torch.rsqrt,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
}

cases = []
for name, fn in FUNCTIONS.items():
    for dtype in (torch.float32, torch.float64):
        x = torch.tensor(X, dtype=dtype, requires_grad=True)
        out = fn(x)
        (grad,) = torch.autograd.grad(out, x, torch.tensor(UPSTREAM, dtype=dtype))
        cases.append({"op": name, "input": tensor_json(x), "upstream": tensor_json(torch.tensor(UPSTREAM, dtype=dtype)),
                      "result": tensor_json(out), "grad": tensor_json(grad), "grad_fn": type(out.grad_fn).__name__})
# Integer inputs of the ToFloat ops compute in float32.
for name in ("erf", "rsqrt"):
    x = torch.tensor([-2, 0, 1, 4, 9], dtype=torch.int64)
    cases.append({"op": name, "input": tensor_json(x), "result": tensor_json(FUNCTIONS[name](x))})

errors = {}
for name in ("gelu", "silu"):
    try:
        FUNCTIONS[name](torch.tensor([1, 2]))
    except RuntimeError as e:
        errors[name] = str(e)
try:
    F.gelu(torch.ones(2), approximate="foo")
except RuntimeError as e:
    errors["gelu_approximate"] = str(e)

# masked_fill: value cast to self's dtype, mask broadcast to self, gradients.
self_values = torch.tensor([[1.5, -2.0, 3.25], [0.5, math.nan, -0.0]], requires_grad=True)
mask = torch.tensor([True, False, True])
value = torch.tensor(2.75, requires_grad=True)
filled = self_values.masked_fill(mask, value)
g_self, g_value = torch.autograd.grad(filled, (self_values, value), torch.arange(6.0).reshape(2, 3))
masked = {"self": tensor_json(self_values), "mask": tensor_json(mask), "value": tensor_json(value),
          "result": tensor_json(filled), "grad_self": tensor_json(g_self), "grad_value": tensor_json(g_value),
          "int_result": tensor_json(torch.tensor([1, 2, 3]).masked_fill(torch.tensor([True, False, True]), 2.7))}
try:
    self_values.detach().masked_fill(torch.tensor([1, 0, 1]), 1.0)
except RuntimeError as e:
    errors["masked_fill_mask"] = str(e)
try:
    self_values.detach().masked_fill(mask, torch.tensor([1.0, 2.0]))
except RuntimeError as e:
    errors["masked_fill_value"] = str(e)

# clamp with tensor bounds: NaN anywhere propagates, min > max gives max, promotion, gradients.
x = torch.tensor([-2.0, 0.5, 3.0, 1.0, math.nan, 0.0, 5.0], requires_grad=True)
low = torch.tensor([0.0, 0.0, 0.0, 1.0, 0.0, math.nan, 4.0], requires_grad=True)
high = torch.tensor([2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 3.0], requires_grad=True)
clamped = torch.clamp(x, low, high)
gx, glow, ghigh = torch.autograd.grad(clamped, (x, low, high), torch.arange(1.0, 8.0))
row_low = torch.tensor([[0.0], [1.0]], requires_grad=True)
x2 = torch.tensor([[-1.0, 0.5, 2.0], [0.0, 1.0, 3.0]], requires_grad=True)
clamped_min = torch.clamp(x2, min=row_low)
gx2, grow = torch.autograd.grad(clamped_min.sum(), (x2, row_low))
clamp = {"x": tensor_json(x), "low": tensor_json(low), "high": tensor_json(high), "result": tensor_json(clamped),
         "grad_x": tensor_json(gx), "grad_low": tensor_json(glow), "grad_high": tensor_json(ghigh),
         "x2": tensor_json(x2), "row_low": tensor_json(row_low), "result_min": tensor_json(clamped_min),
         "grad_x2": tensor_json(gx2), "grad_row_low": tensor_json(grow),
         "int_result": tensor_json(torch.clamp(torch.tensor([1, 5]), torch.tensor([2.5, 0.0])))}
try:
    torch.clamp(torch.ones(2), None, None)
except (RuntimeError, TypeError) as e:
    errors["clamp_none"] = str(e)

write("element_ops.json", {"cases": cases, "errors": errors, "masked_fill": masked, "clamp": clamp,
                           "repr": {"gelu": repr(torch.nn.GELU()), "gelu_tanh": repr(torch.nn.GELU("tanh")),
                                    "silu": repr(torch.nn.SiLU())}})
