"""tests/reference/gen_reduced_float_updates.py — parameter updates on bfloat16 and float16:
add/sub with an alpha, and torch.optim.SGD.

Run with PyTorch 2.x (pip's torch; generated with 2.15): python3 tests/reference/gen_reduced_float_updates.py
(writes reduced_float_updates.json). add(a, b, alpha) with alpha other than ±1 computes
a + alpha·b in float over whole blocks of 32 elements (PyTorch's vector loop) and in 16-bit
arithmetic (alpha·b rounded, then the sum) over the numel % 32 left (its scalar loop); the
sizes below put elements on both sides. PyTorch's CPU SGD runs its single-tensor loop: one 16-bit op
after another (grad.add(param, alpha=wd), buf.mul_(momentum).add_(grad, alpha=1 - dampening),
grad.add(buf, alpha=momentum), param.add_(grad, alpha=-lr)), each rounding to the dtype.
tests/nn/test_reduced_float_training.cpp replays every configuration with optim::SGD and
compares the parameters and momentum buffers after every step, bit for bit (and
tests/core/test_reduced_float.cpp the adds).
"""
import torch

from reflib import tensor_json, write

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}
CONFIGS = [
    {"lr": 0.1},
    {"lr": 0.05, "momentum": 0.9},
    {"lr": 0.03, "momentum": 0.8, "dampening": 0.1, "weight_decay": 0.01},
    {"lr": 0.07, "momentum": 0.9, "nesterov": True, "weight_decay": 0.001},
    {"lr": 0.2, "momentum": 0.5, "maximize": True},
]
STEPS = 4

g = torch.Generator().manual_seed(2217)
cases = []
for name, dtype in DTYPES.items():
    start = (torch.randn(37, generator=g) * 2).to(dtype)
    grads = [(torch.randn(37, generator=g) * 0.5).to(dtype) for _ in range(STEPS)]
    for config in CONFIGS:
        param = start.clone().requires_grad_()
        optimizer = torch.optim.SGD([param], **config)
        params, buffers = [], []
        for grad in grads:
            param.grad = grad.clone()
            optimizer.step()
            params.append(tensor_json(param.detach()))
            buffer = optimizer.state[param].get("momentum_buffer")
            buffers.append(tensor_json(buffer) if buffer is not None else None)
        cases.append({"dtype": name, "options": config, "start": tensor_json(start),
                      "grads": [tensor_json(t) for t in grads], "params": params, "momentum_buffers": buffers})

g = torch.Generator().manual_seed(2218)
adds = []
for name, dtype in DTYPES.items():
    for n in (37, 64, 100, 1000):
        a = torch.randn(n, generator=g).to(dtype)
        b = (torch.randn(n, generator=g) * 5).to(dtype)
        for alpha in (0.01, -0.3, 2.5):
            in_place = a.clone()
            in_place.add_(b, alpha=alpha)
            adds.append({"a": tensor_json(a), "b": tensor_json(b), "alpha": alpha,
                         "add": tensor_json(torch.add(a, b, alpha=alpha)), "sub": tensor_json(torch.sub(a, b, alpha=alpha)),
                         "add_": tensor_json(in_place)})

write("reduced_float_updates.json", {"sgd": cases, "adds": adds})
