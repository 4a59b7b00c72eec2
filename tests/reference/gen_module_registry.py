"""tests/reference/gen_module_registry.py — what nn.Module's registries report in PyTorch for a
custom module that registers a parameter directly, persistent and non-persistent buffers,
and children; and what Module.to(dtype) does to parameters, buffers and gradients.

Run with PyTorch 2.x (pip's torch; generated with 2.15): python3 tests/reference/gen_module_registry.py  (writes module_registry.json).
"""
import torch

from reflib import tensor_json, write


class Scaler(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_parameter("alpha", torch.nn.Parameter(torch.tensor([0.5, -1.5])))
        self.register_parameter("frozen", torch.nn.Parameter(torch.tensor([2.0]), requires_grad=False))
        self.register_parameter("unused", None)
        self.register_buffer("running", torch.tensor([1.0, 2.0]))
        self.register_buffer("cache", torch.tensor([9.0]), persistent=False)
        self.register_buffer("count", torch.tensor(3))

    def forward(self, x):
        return x * self.alpha * self.frozen + self.running


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = Scaler()
        self.register_buffer("steps", torch.tensor([0.25]), persistent=False)
        self.head = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())

    def forward(self, x):
        return self.head(self.scale(x))


out = {}
torch.manual_seed(0)
model = Model()
out["named_parameters"] = [n for n, _ in model.named_parameters()]
out["named_buffers"] = [n for n, _ in model.named_buffers()]
out["named_buffers_local"] = [n for n, _ in model.named_buffers(recurse=False)]
out["scale_named_buffers_local"] = [n for n, _ in model.scale.named_buffers(recurse=False)]
out["named_children"] = [n for n, _ in model.named_children()]
out["head_named_children"] = [n for n, _ in model.head.named_children()]
out["named_modules"] = [n for n, _ in model.named_modules()]
out["state_dict_keys"] = list(model.state_dict().keys())
out["requires_grad"] = {n: p.requires_grad for n, p in model.named_parameters()}
sd = model.state_dict()
sd["scale.cache"] = torch.tensor([1.0])
out["load_with_non_persistent"] = str(model.load_state_dict(sd, strict=False))

# to(dtype): floating parameters, buffers and grads convert; integer buffers stay.
x = torch.tensor([[1.0, 2.0], [3.0, -1.0]])
model(x).sum().backward()
model.to(torch.float64)
out["to_float64"] = {
    "param_dtypes": {n: str(p.dtype).replace("torch.", "") for n, p in model.named_parameters()},
    "grad_dtypes": {n: str(p.grad.dtype).replace("torch.", "") for n, p in model.named_parameters()
                    if p.grad is not None},
    "buffer_dtypes": {n: str(b.dtype).replace("torch.", "") for n, b in model.named_buffers()},
}
model(x.double()).sum().backward()  # accumulates into the converted grads
out["grad_after_second_backward"] = {n: tensor_json(p.grad) for n, p in model.named_parameters()
                                     if p.grad is not None}
try:
    torch.nn.Linear(2, 2).to(torch.int64)
except TypeError as e:
    out["to_int_error"] = str(e)
write("module_registry.json", out)
