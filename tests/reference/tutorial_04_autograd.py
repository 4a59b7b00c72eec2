"""tests/reference/tutorial_04_autograd.py — tutorial §4 (automatic differentiation made easy)
run in PyTorch. Its standard output is the transcript tests/apps/expected/tutorial_04_autograd.txt
that apps/tutorial/tutorial_04_autograd.cpp must reproduce character for character.
Run with PyTorch 2.x: python3 tests/reference/tutorial_04_autograd.py > tests/apps/expected/tutorial_04_autograd.txt
"""
import torch
import torch.nn.functional as F
from torch.autograd import grad

y = torch.tensor([1.0])
x1 = torch.tensor([1.1])
w1 = torch.tensor([2.2], requires_grad=True)
b = torch.tensor([0.0], requires_grad=True)

z = x1 * w1 + b
a = torch.sigmoid(z)

loss = F.binary_cross_entropy(a, y)

grad_L_w1 = grad(loss, w1, retain_graph=True)
grad_L_b = grad(loss, b, retain_graph=True)

print(grad_L_w1)
print(grad_L_b)

loss.backward()

print(w1.grad)
print(b.grad)

# A second backward through the freed graph is refused.
try:
    loss.backward()
except RuntimeError as error:
    print(str(error).split(" (or")[0])

# Inference without recording.
with torch.no_grad():
    z = x1 * w1 + b
print(z.requires_grad)
