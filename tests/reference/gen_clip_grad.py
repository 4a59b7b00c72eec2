"""tests/reference/gen_clip_grad.py — torch.nn.utils.clip_grad_norm_ / clip_grad_value_.

Run: /work/venv/bin/python tests/reference/gen_clip_grad.py   (writes clip_grad.json)
Each case: parameters' gradients (null: a parameter without .grad, skipped), the clipping
arguments and dtype, PyTorch's returned total norm and the gradients afterwards. Covered:
norms 2, 1, inf and 3, float32 and float64, a norm below max_norm (coefficient clamped to
1), several parameters on one norm, and nan / inf gradients with error_if_nonfinite=False.
"""
import math

import torch

from reflib import tensor_json, write

torch.manual_seed(0)
A = torch.randn(3, 4)
B = torch.randn(5)
C = torch.randn(2, 2, 3) * 10


def case(name, grads, max_norm=None, norm_type=2.0, dtype=torch.float32, clip_value=None):
    params = []
    for g in grads:
        p = torch.nn.Parameter(torch.zeros(g.shape if g is not None else (2,), dtype=dtype))
        if g is not None:
            p.grad = g.clone().to(dtype)
        params.append(p)
    entry = {"name": name, "dtype": str(dtype).replace("torch.", ""),
             "grads": [tensor_json(g.to(dtype)) if g is not None else None for g in grads]}
    if clip_value is not None:
        torch.nn.utils.clip_grad_value_(params, clip_value)
        entry["clip_value"] = clip_value
    else:
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
        entry.update({"max_norm": max_norm, "norm_type": "inf" if math.isinf(norm_type) else norm_type,
                      "total_norm": tensor_json(norm)})
    entry["clipped"] = [tensor_json(p.grad) if p.grad is not None else None for p in params]
    return entry


nan_grad = torch.tensor([1.0, float("nan"), 2.0])
inf_grad = torch.tensor([1.0, float("inf"), -2.0])
CASES = [
    case("l2 clipped", [A, B, C], max_norm=1.0),
    case("l2 below max_norm", [A * 0.01, B * 0.01], max_norm=5.0),
    case("l2 with a parameter without grad", [A, None, B], max_norm=0.5),
    case("l1", [A, B], max_norm=2.0, norm_type=1.0),
    case("inf norm", [A, C], max_norm=0.3, norm_type=float("inf")),
    case("p=3", [A, B, C], max_norm=1.5, norm_type=3.0),
    case("float64 l2", [A, B, C], max_norm=1.0, dtype=torch.float64),
    case("float64 inf", [A, B], max_norm=0.1, norm_type=float("inf"), dtype=torch.float64),
    case("nan gradient", [nan_grad, B], max_norm=1.0),
    case("inf gradient", [inf_grad, B], max_norm=1.0),
    case("value", [A, None, C], clip_value=0.5),
    case("value float64", [A, B], clip_value=0.25, dtype=torch.float64),
]
write("clip_grad.json", {"cases": CASES})
