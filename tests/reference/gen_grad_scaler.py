"""tests/reference/gen_grad_scaler.py — torch.amp.GradScaler on the CPU with float16 autocast
(issue 22): a small regression trained with a scale so large that the float16 gradients
overflow, so steps are skipped and the scale backs off, then grows again.

Run with PyTorch:  python3 tests/reference/gen_grad_scaler.py
Writes grad_scaler.json, read by tests/nn/test_grad_scaler.cpp.
"""
import torch
import torch.nn.functional as F

from reflib import tensor_json, write

g = torch.Generator().manual_seed(7)
x = torch.randn(16, 6, generator=g)
y = torch.randn(16, 3, generator=g)
w = (torch.randn(3, 6, generator=g) * 0.5).requires_grad_(True)
b = torch.zeros(3).requires_grad_(True)
initial = [tensor_json(w), tensor_json(b)]
optimizer = torch.optim.SGD([w, b], lr=0.05)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24, growth_interval=3)
steps = []
for step in range(14):
    with torch.autocast("cpu", dtype=torch.float16):
        loss = F.mse_loss(F.linear(x, w, b), y)
    optimizer.zero_grad()
    scale_before = scaler.get_scale()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    grad_w = w.grad.clone()
    stepped = scaler.step(optimizer) is not None or True
    scaler.update()
    steps.append({"loss": loss.item(), "scale_before": scale_before, "scale_after": scaler.get_scale(),
                  "grad_w": tensor_json(grad_w), "growth_tracker": scaler.state_dict()["_growth_tracker"]})
write("grad_scaler.json", {"x": tensor_json(x), "y": tensor_json(y), "initial": initial, "steps": steps,
                           "final": [tensor_json(w), tensor_json(b)]})
