"""tests/reference/gen_autocast.py — PyTorch's torch.autocast on the CPU (issue 22): which
dtype each op computes in, and an MLP's forward, loss and gradients under bfloat16 and
float16 autocast.

Run with PyTorch:  python3 tests/reference/gen_autocast.py
Writes autocast.json, read by tests/nn/test_autocast.cpp.
"""
import torch
import torch.nn.functional as F

from reflib import tensor_json, write

g = torch.Generator().manual_seed(22)
x = torch.randn(8, 20, generator=g)
target = torch.randint(0, 5, (8,), generator=g)
w1 = torch.randn(16, 20, generator=g) * 0.3
b1 = torch.randn(16, generator=g) * 0.1
w2 = torch.randn(5, 16, generator=g) * 0.3
b2 = torch.randn(5, generator=g) * 0.1

runs = []
for name, dtype in (("bfloat16", torch.bfloat16), ("float16", torch.float16), ("float32", None)):
    params = [p.clone().requires_grad_(True) for p in (w1, b1, w2, b2)]
    with torch.autocast("cpu", dtype=dtype or torch.bfloat16, enabled=dtype is not None):
        hidden = F.relu(F.linear(x, params[0], params[1]))
        logits = F.linear(hidden, params[2], params[3])
        loss = F.cross_entropy(logits, target)
    loss.backward()
    runs.append({"autocast": name, "hidden": tensor_json(hidden), "logits": tensor_json(logits),
                 "loss": tensor_json(loss), "loss_grad_fn": type(loss.grad_fn).__name__,
                 "logits_grad_fn": type(logits.grad_fn).__name__,
                 "grads": [tensor_json(p.grad) for p in params]})

# The dtype each op gives under bfloat16 autocast.
a = torch.randn(4, 5, generator=g)
b = torch.randn(5, 5, generator=g)
with torch.autocast("cpu", dtype=torch.bfloat16):
    low = a @ b
    op_dtypes = {
        "mm": torch.mm(a, b).dtype, "matmul": (a @ b).dtype, "bmm": torch.bmm(a[None], b[None]).dtype,
        "addmm": torch.addmm(torch.zeros(5), a, b).dtype, "linear": F.linear(a, b).dtype,
        "matmul_float64": (a.double() @ b.double()).dtype, "mv": torch.mv(a, b[0]).dtype,
        "relu_of_low": torch.relu(low).dtype, "softmax_of_low": torch.softmax(low, 1).dtype,
        "sum_of_low": low.sum().dtype, "add_low_and_float32": (low + a).dtype,
        "cross_entropy_of_low": F.cross_entropy(low, torch.tensor([0, 1, 2, 3])).dtype,
        "mse_loss_of_low": F.mse_loss(low, low).dtype, "prod_of_low": low.prod().dtype,
        "nll_loss_of_low": F.nll_loss(low, torch.tensor([0, 1, 2, 3])).dtype,
    }
write("autocast.json", {"x": tensor_json(x), "target": tensor_json(target),
                        "params": [tensor_json(p) for p in (w1, b1, w2, b2)], "runs": runs,
                        "op_dtypes": {k: str(v).replace("torch.", "") for k, v in op_dtypes.items()}})
