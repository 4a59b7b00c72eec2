"""tests/reference/tutorial_12_autocast.py — the chapter beyond the tutorial on mixed
precision (§12), part 2: autocast and loss scaling, run in PyTorch. Its output is
tests/apps/expected/tutorial_12_autocast.txt, which apps/tutorial/tutorial_12_autocast.cpp
must reproduce exactly.
Run: /work/venv/bin/python tests/reference/tutorial_12_autocast.py > tests/apps/expected/tutorial_12_autocast.txt

The numbers are chosen so that every product and sum before a rounding is exact in float32
(small integers and halves): the two engines may add in different orders and still agree to
the last bit, so the transcript shows where the roundings are, not whose adder ran.
"""
import torch
import torch.nn.functional as F

print("== 1. Autocast picks a dtype per op ==")
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
weight = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
bias = torch.tensor([0.1, -0.2], requires_grad=True)
target = torch.tensor([0, 1])
with torch.autocast("cpu", dtype=torch.bfloat16):
    logits = F.linear(x, weight, bias)  # on the lower-precision list: bfloat16
    loss = F.cross_entropy(logits, target)  # on the float32 list
    print("autocast enabled:", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
print("autocast enabled:", torch.is_autocast_enabled("cpu"))
print("logits:", logits)
print("float32 logits:", F.linear(x, weight, bias).detach())
print("loss:", loss.dtype, f"{loss.item():.4f}")

print("== 2. Gradients come back through the casts ==")
loss.backward()
print("weight:", weight.dtype, "grad:", weight.grad.dtype)
print(weight.grad)
print(bias.grad)

print("== 3. float16 overflows where bfloat16 does not ==")
with torch.autocast("cpu", dtype=torch.float16):
    big = F.linear(torch.tensor([[300.0, 300.0]]), torch.tensor([[150.0, 100.0]]))
print("float16 linear:", big)
with torch.autocast("cpu", dtype=torch.bfloat16):
    big = F.linear(torch.tensor([[300.0, 300.0]]), torch.tensor([[150.0, 100.0]]))
print("bfloat16 linear:", big)

print("== 4. Loss scaling: skip the steps that overflow, then back off ==")
model = torch.nn.Linear(2, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[1.0, -1.0]]))
    model.bias.fill_(0.5)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 18, growth_interval=2)
inputs = torch.tensor([[2.0, 1.0], [1.0, 3.0]])
wanted = torch.tensor([[1.0], [-1.0]])
for step in range(1, 11):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        out = model(inputs)
        step_loss = F.mse_loss(out, wanted)
    scale = scaler.get_scale()
    scaler.scale(step_loss).backward()
    before = model.weight.detach().clone()
    scaler.step(optimizer)
    scaler.update()
    stepped = not torch.equal(before, model.weight.detach())
    print(f"step {step}: loss {step_loss.item():.4f}  scale {scale:>9.0f}  "
          f"{'stepped' if stepped else 'skipped (inf in the float16 gradients)'}")
print("final scale:", scaler.get_scale())
print("weight:", model.weight.detach(), "bias:", model.bias.detach())
