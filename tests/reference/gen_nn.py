"""tests/reference/gen_nn.py — reference values for the nn layer and the data samplers.

Run with PyTorch 2.x (pip's torch; generated with 2.15): python3 tests/reference/gen_nn.py  (writes nn.json).
Covers: Linear's seeded init and forward/backward, nn.init's functions, module reprs,
load_state_dict's error messages, Dropout's mask, SGD/Adam/AdamW trajectories (gradients
set by hand so only the optimizer's formulas are tested), and DataLoader shuffle orders.
"""
import math

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from reflib import tensor_json, write

out = {}

# ---------------------------------------------------------------- Linear
torch.manual_seed(123)
lin = torch.nn.Linear(5, 3)
lin_nobias = torch.nn.Linear(3, 2, bias=False)
out["linear_init"] = {"weight": tensor_json(lin.weight), "bias": tensor_json(lin.bias),
                      "nobias_weight": tensor_json(lin_nobias.weight)}
x = torch.arange(10, dtype=torch.float32).reshape(2, 5) / 10 - 0.3
x_nc = (torch.arange(10, dtype=torch.float32).reshape(5, 2) / 7 - 0.5)
y = lin(x)
y.sum().backward()
out["linear_forward"] = {"x": tensor_json(x), "y": tensor_json(y), "weight_grad": tensor_json(lin.weight.grad),
                         "bias_grad": tensor_json(lin.bias.grad), "grad_fn": type(y.grad_fn).__name__}
out["linear_noncontiguous"] = {"x": tensor_json(x_nc), "y": tensor_json(lin(x_nc.t()))}
x3 = torch.arange(30, dtype=torch.float32).reshape(2, 3, 5) / 30
out["linear_3d"] = {"x": tensor_json(x3), "y": tensor_json(lin(x3))}
out["linear_1d"] = {"y": tensor_json(lin(x[0]))}
out["linear_empty"] = {"y": tensor_json(lin(torch.zeros(0, 5)))}
try:
    lin(torch.zeros(2, 4))
except RuntimeError as e:
    out["linear_shape_error"] = str(e)

# ---------------------------------------------------------------- nn.init
init = {}
shape2, shape3 = (4, 5), (3, 4, 2)
def run(name, fn, shape):
    torch.manual_seed(7)
    t = torch.empty(shape)
    fn(t)
    init[name] = tensor_json(t)
run("uniform", lambda t: torch.nn.init.uniform_(t, -1.0, 2.0), shape2)
run("normal", lambda t: torch.nn.init.normal_(t, 1.0, 0.5), shape2)
run("kaiming_uniform", lambda t: torch.nn.init.kaiming_uniform_(t), shape2)
run("kaiming_uniform_sqrt5", lambda t: torch.nn.init.kaiming_uniform_(t, a=math.sqrt(5)), shape2)
run("kaiming_uniform_fan_out_relu", lambda t: torch.nn.init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"), shape3)
run("kaiming_normal", lambda t: torch.nn.init.kaiming_normal_(t), shape2)
run("kaiming_normal_small", lambda t: torch.nn.init.kaiming_normal_(t, nonlinearity="relu"), (3, 4))
run("xavier_uniform", lambda t: torch.nn.init.xavier_uniform_(t, gain=2.0), shape3)
run("xavier_normal", lambda t: torch.nn.init.xavier_normal_(t), shape2)
init["gains"] = {n: torch.nn.init.calculate_gain(n) for n in ["linear", "sigmoid", "tanh", "relu", "leaky_relu", "selu", "conv2d"]}
init["gain_leaky_0.2"] = torch.nn.init.calculate_gain("leaky_relu", 0.2)
init["fans_3d"] = list(torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape3)))
for name, fn in [("fan_error", lambda: torch.nn.init.xavier_uniform_(torch.empty(3))),
                 ("gain_error", lambda: torch.nn.init.calculate_gain("foo")),
                 ("mode_error", lambda: torch.nn.init.kaiming_uniform_(torch.empty(2, 2), mode="fan_x"))]:
    try:
        fn()
    except ValueError as e:
        init[name] = str(e)
out["init"] = init

# ---------------------------------------------------------------- reprs
model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 3, bias=False), torch.nn.Sigmoid(),
                            torch.nn.Dropout(0.25), torch.nn.Tanh(), torch.nn.Identity(),
                            torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU()))
out["repr"] = repr(model)
out["named_parameters"] = [n for n, _ in model.named_parameters()]
out["state_dict_keys"] = list(model.state_dict().keys())

# ---------------------------------------------------------------- load_state_dict errors
small = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
sd = small.state_dict()
bad = dict(sd)
del bad["2.bias"]
bad["extra"] = torch.zeros(1)
bad["0.weight"] = torch.zeros(4, 2)
try:
    small.load_state_dict(bad)
except RuntimeError as e:
    out["load_error_strict"] = str(e)
bad2 = dict(sd)
del bad2["2.bias"]
bad2["extra"] = torch.zeros(1)
out["load_nonstrict_repr"] = repr(small.load_state_dict(bad2, strict=False))
out["load_ok_repr"] = repr(small.load_state_dict(sd))

# ---------------------------------------------------------------- Dropout
torch.manual_seed(0)
drop = torch.nn.Dropout(0.5)
out["dropout_small"] = tensor_json(drop(torch.ones(10)))
out["dropout_large"] = tensor_json(drop(torch.ones(4, 8)))
drop = torch.nn.Dropout(0.2)
out["dropout_p02"] = tensor_json(drop(torch.ones(20)))

# ---------------------------------------------------------------- optimizers
p0 = torch.tensor([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]])
grads = [torch.tensor([[0.1, -0.2], [0.3, 0.05], [-0.4, 0.6]]),
         torch.tensor([[-0.3, 0.1], [0.2, -0.5], [0.7, 0.0]]),
         torch.tensor([[0.05, 0.4], [-0.1, 0.2], [0.3, -0.6]])]
out["optim_start"] = tensor_json(p0)
out["optim_grads"] = [tensor_json(g) for g in grads]
configs = [
    ("sgd", torch.optim.SGD, {"lr": 0.1}),
    ("sgd_momentum", torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
    ("sgd_dampening", torch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "dampening": 0.5}),
    ("sgd_nesterov", torch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("sgd_weight_decay", torch.optim.SGD, {"lr": 0.1, "momentum": 0.5, "weight_decay": 0.1}),
    ("sgd_maximize", torch.optim.SGD, {"lr": 0.1, "maximize": True}),
    ("adam", torch.optim.Adam, {"lr": 0.01}),
    ("adam_weight_decay", torch.optim.Adam, {"lr": 0.01, "weight_decay": 0.1, "betas": (0.8, 0.99), "eps": 1e-6}),
    ("adam_amsgrad", torch.optim.Adam, {"lr": 0.01, "amsgrad": True}),
    ("adamw", torch.optim.AdamW, {"lr": 0.01}),
    ("adamw_weight_decay", torch.optim.AdamW, {"lr": 0.1, "weight_decay": 0.5}),
]
optim = {}
for name, cls, kwargs in configs:
    p = p0.clone().requires_grad_(True)
    opt = cls([p], **kwargs)
    steps = []
    for g in grads:
        p.grad = g.clone()
        opt.step()
        steps.append(tensor_json(p))
    optim[name] = steps
out["optim"] = optim
errors = {}
for name, fn in [("sgd_lr", lambda: torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=-1.0)),
                 ("sgd_momentum", lambda: torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=-0.5)),
                 ("sgd_nesterov", lambda: torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, nesterov=True)),
                 ("adam_beta", lambda: torch.optim.Adam([torch.zeros(1, requires_grad=True)], betas=(1.0, 0.999))),
                 ("adam_eps", lambda: torch.optim.Adam([torch.zeros(1, requires_grad=True)], eps=-1.0)),
                 ("empty", lambda: torch.optim.SGD([], lr=0.1))]:
    try:
        fn()
    except ValueError as e:
        errors[name] = str(e)
out["optim_errors"] = errors

# ---------------------------------------------------------------- DataLoader orders
class IndexDataset(Dataset):
    def __init__(self, n):
        self.n = n
    def __getitem__(self, i):
        return torch.tensor([float(i)]), torch.tensor(i)
    def __len__(self):
        return self.n

def orders(loader, passes):
    return [[int(v) for _, y in loader for v in y] for _ in range(passes)]

torch.manual_seed(123)
out["loader_shuffle_5"] = orders(DataLoader(IndexDataset(5), batch_size=2, shuffle=True), 3)
torch.manual_seed(0)
out["loader_shuffle_10_drop_last"] = orders(DataLoader(IndexDataset(10), batch_size=3, shuffle=True, drop_last=True), 2)
torch.manual_seed(5)
out["loader_sequential_advances"] = {"order": orders(DataLoader(IndexDataset(4), batch_size=3), 1),
                                     "rand_after": tensor_json(torch.rand(3))}
g = torch.Generator()
g.manual_seed(42)
torch.manual_seed(1)
out["loader_generator"] = {"orders": orders(DataLoader(IndexDataset(7), batch_size=2, shuffle=True, generator=g), 2),
                           "rand_after": tensor_json(torch.rand(2))}

# ---------------------------------------------------------------- nn.functional
func = {}
logits = torch.tensor([[1.0, -0.5, 2.0], [0.1, 0.2, -1.0], [3.0, 0.0, 0.5], [-1.0, 2.5, 0.0]])
target = torch.tensor([2, 0, 1, 1])
ignored = torch.tensor([2, -100, 1, 1])
func["logits"] = tensor_json(logits)
func["target"] = tensor_json(target)
func["ce_mean"] = tensor_json(F.cross_entropy(logits, target))
func["ce_sum"] = tensor_json(F.cross_entropy(logits, target, reduction="sum"))
func["ce_none"] = tensor_json(F.cross_entropy(logits, target, reduction="none"))
func["ce_ignore"] = tensor_json(F.cross_entropy(logits, ignored))
func["ce_smooth"] = tensor_json(F.cross_entropy(logits, target, label_smoothing=0.1))
func["ce_noncontig"] = tensor_json(F.cross_entropy(logits.t().contiguous().t(), target))
lp = F.log_softmax(logits, dim=1)
func["log_softmax"] = tensor_json(lp)
func["softmax"] = tensor_json(F.softmax(logits, dim=1))
func["nll_mean"] = tensor_json(F.nll_loss(lp, target))
probs = torch.tensor([0.9, 0.2, 0.6, 0.01])
labels01 = torch.tensor([1.0, 0.0, 1.0, 0.0])
func["probs"] = tensor_json(probs)
func["labels01"] = tensor_json(labels01)
func["bce"] = tensor_json(F.binary_cross_entropy(probs, labels01))
z = torch.tensor([2.0, -1.0, 0.5, 30.0])
func["z"] = tensor_json(z)
func["bce_logits"] = tensor_json(F.binary_cross_entropy_with_logits(z, labels01))
func["mse"] = tensor_json(F.mse_loss(z, labels01))
func["mse_sum"] = tensor_json(F.mse_loss(z, labels01, reduction="sum"))
try:
    F.cross_entropy(logits, torch.tensor([2, 0, 3, 1]))
except (IndexError, RuntimeError) as e:
    func["ce_out_of_bounds"] = str(e)
out["functional"] = func
write("nn.json", out)
