"""tests/reference/gen_autograd_engine.py — reference values for the engine's behaviour
(tests/autograd/test_engine.cpp): accumulation, retain_grad, hooks, second derivatives,
in-place history. Run with PyTorch 2.x: python3 tests/reference/gen_autograd_engine.py
"""
import torch

from reflib import tensor_json, write

out = {}

# y = x*x + 3x summed: backward twice accumulates.
x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
y = (x * x + x * 3).sum()
y.backward(retain_graph=True)
out["accumulate_once"] = tensor_json(x.grad)
y.backward()
out["accumulate_twice"] = tensor_json(x.grad)

# explicit gradient for a non-scalar output
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
(x * x).backward(torch.tensor([[1.0, 0.5], [-1.0, 2.0]]))
out["explicit_gradient"] = tensor_json(x.grad)

# a tensor used twice: gradients add
x = torch.tensor([0.3, 1.2], requires_grad=True)
z = x.exp()
(z * z + z).sum().backward()
out["used_twice"] = tensor_json(x.grad)

# retain_grad on a non-leaf
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x * 2
h.retain_grad()
(h * h).sum().backward()
out["retain_grad_h"] = tensor_json(h.grad)
out["retain_grad_x"] = tensor_json(x.grad)

# second derivative with create_graph: d/dx of d/dx sum(x^3) = 6x
x = torch.tensor([1.0, 2.0, -0.5], requires_grad=True)
(g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
out["first_derivative"] = tensor_json(g)
(gg,) = torch.autograd.grad(g.sum(), x)
out["second_derivative"] = tensor_json(gg)

# second derivative of sigmoid (through a saved output)
x = torch.tensor([0.2, -1.0], requires_grad=True)
(g,) = torch.autograd.grad(torch.sigmoid(x).sum(), x, create_graph=True)
(gg,) = torch.autograd.grad(g.sum(), x)
out["sigmoid_second_derivative"] = tensor_json(gg)

# backward(create_graph=True) then differentiate x.grad
x = torch.tensor([1.5, -0.5], requires_grad=True)
(x ** 3).sum().backward(create_graph=True)
(gg,) = torch.autograd.grad(x.grad.sum(), x)
out["grad_of_grad"] = tensor_json(gg)

# a hook that doubles the gradient of a non-leaf, and one on a leaf
x = torch.tensor([1.0, -1.0, 2.0], requires_grad=True)
h = x * x
h.register_hook(lambda g: g * 2)
h.sum().backward()
out["hook_non_leaf"] = tensor_json(x.grad)
x = torch.tensor([1.0, -1.0, 2.0], requires_grad=True)
x.register_hook(lambda g: g + 1)
(x * 3).sum().backward()
out["hook_leaf"] = tensor_json(x.grad)

# in-place op on a non-leaf is recorded
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x * 2
h.mul_(3.0)
h.add_(x)
h.sum().backward()
out["inplace_history"] = tensor_json(x.grad)
out["inplace_grad_fn"] = h.grad_fn.name()

# copy_ into a non-leaf slice of zeros that requires grad through source
x = torch.tensor([1.0, 2.0], requires_grad=True)
buf = torch.zeros(2) * 1.0
buf.copy_(x * 3)
buf.sum().backward()
out["copy_grad"] = tensor_json(x.grad)

# detach stops the gradient
x = torch.tensor([2.0, 3.0], requires_grad=True)
(x * x.detach()).sum().backward()
out["detach_grad"] = tensor_json(x.grad)

# a 2-layer expression checked against autograd.grad of multiple inputs
w = torch.tensor([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], requires_grad=True)
b = torch.tensor([0.05, -0.05], requires_grad=True)
xin = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
loss = torch.nn.functional.cross_entropy(torch.relu(xin @ w + b) * 2, torch.tensor([1, 0]))
gw, gb = torch.autograd.grad(loss, [w, b])
out["mlp_loss"] = tensor_json(loss)
out["mlp_grad_w"] = tensor_json(gw)
out["mlp_grad_b"] = tensor_json(gb)

write("autograd_engine.json", out)
