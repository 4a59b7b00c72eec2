"""tests/reference/gen_param_groups.py — optimizers with several parameter groups (param_groups).

Run: /work/venv/bin/python tests/reference/gen_param_groups.py   (writes param_groups.json)
Read by tests/nn/test_param_groups.cpp. The model is nanoGPT-shaped: two weight matrices
and two bias vectors; the groups are "dim >= 2" (matrices, decayed) and the rest, as
nanoGPT's configure_optimizers builds them, so the parameter numbering across groups is
matrices first. For each case: the groups' own settings and the defaults, three steps of
fixed gradients with the parameters after each, and the final state_dict (state per
parameter index, param_groups without the keys that pick a PyTorch implementation).
Also: a state_dict taken after step 1 and loaded into an optimizer built with other
hyper-parameters continues the run exactly (asserted here), and PyTorch's messages for a
parameter in two groups and mismatched groups on load.
"""
import copy

import torch

from reflib import tensor_json, write

IMPLEMENTATION_KEYS = {"foreach", "capturable", "differentiable", "fused"}

# Model order: w1 [2, 3], b1 [3], w2 [3, 2], b2 [2].
start = [torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]), torch.tensor([0.1, -0.2, 0.3]),
         torch.tensor([[0.3, -0.6], [1.2, 0.4], [-0.9, 0.7]]), torch.tensor([0.05, -0.15])]
grads = [
    [torch.tensor([[0.1, -0.2, 0.3], [0.05, 0.4, -0.1]]), torch.tensor([0.2, 0.0, -0.3]),
     torch.tensor([[0.25, -0.05], [0.1, 0.3], [-0.2, 0.15]]), torch.tensor([0.4, -0.1])],
    [torch.tensor([[-0.3, 0.1, 0.2], [0.0, -0.5, 0.25]]), torch.tensor([-0.1, 0.4, 0.05]),
     torch.tensor([[-0.1, 0.2], [0.05, -0.25], [0.3, 0.1]]), torch.tensor([-0.2, 0.3])],
    [torch.tensor([[0.2, 0.2, -0.1], [0.3, 0.1, 0.0]]), torch.tensor([0.3, -0.2, 0.1]),
     torch.tensor([[0.15, 0.05], [-0.3, 0.2], [0.1, -0.1]]), torch.tensor([0.1, 0.05])],
]
STEPS = len(grads)


def model():
    return [torch.nn.Parameter(t.clone()) for t in start]


def grouped(ps, settings):
    """nanoGPT's split: dim >= 2 first, then the rest; settings[g] is group g's own dict."""
    matrices = [p for p in ps if p.dim() >= 2]
    vectors = [p for p in ps if p.dim() < 2]
    return [{"params": matrices, **settings[0]}, {"params": vectors, **settings[1]}]


def step(optimizer, ps, k):
    for p, g in zip(ps, grads[k]):
        p.grad = g.clone()
    optimizer.step()


def group_json(group):
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in group.items() if k not in IMPLEMENTATION_KEYS}


def state_json(optimizer):
    state = optimizer.state_dict()
    return {"state": {str(i): {name: tensor_json(t) for name, t in s.items()} for i, s in state["state"].items()},
            "param_groups": [group_json(g) for g in state["param_groups"]]}


def json_settings(settings):
    return [{k: (list(v) if isinstance(v, tuple) else v) for k, v in s.items()} for s in settings]


CLASSES = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}
CASES = [
    # nanoGPT: AdamW, decay only the matrices.
    {"name": "adamw_weight_decay", "optimizer": "adamw",
     "groups": [{"weight_decay": 0.1}, {"weight_decay": 0.0}], "defaults": {"lr": 0.05, "betas": (0.9, 0.95)},
     "other": {"lr": 0.001}},
    # Different lr, betas and eps per group; group 0 takes AdamW's default decay (1e-2).
    {"name": "adamw_lr", "optimizer": "adamw",
     "groups": [{}, {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-6, "weight_decay": 0.2}], "defaults": {"lr": 0.05},
     "other": {"lr": 0.3, "weight_decay": 0.0}},
    # Adam: amsgrad in one group only (its parameters alone keep max_exp_avg_sq), L2 in the other.
    {"name": "adam_amsgrad", "optimizer": "adam",
     "groups": [{"amsgrad": True}, {"weight_decay": 0.1, "maximize": True}], "defaults": {"lr": 0.02},
     "other": {"lr": 0.1}},
    # SGD: momentum differs (nesterov in group 0, none in group 1: no momentum_buffer there).
    {"name": "sgd_momentum", "optimizer": "sgd",
     "groups": [{"momentum": 0.9, "nesterov": True, "weight_decay": 0.01}, {"lr": 0.5}],
     "defaults": {"lr": 0.1}, "other": {"lr": 0.2}},
    # SGD: both with momentum, different momentum and dampening.
    {"name": "sgd_dampening", "optimizer": "sgd",
     "groups": [{"momentum": 0.5}, {"momentum": 0.8, "dampening": 0.3, "lr": 0.05}],
     "defaults": {"lr": 0.1, "momentum": 0.9}, "other": {"lr": 0.2, "momentum": 0.1}},
]


def run(case):
    cls = CLASSES[case["optimizer"]]
    ps = model()
    optimizer = cls(grouped(ps, case["groups"]), **case["defaults"])
    trajectory = []
    resumed_state = None
    for k in range(STEPS):
        step(optimizer, ps, k)
        trajectory.append([tensor_json(p) for p in ps])
        if k == 0:
            resumed_state = copy.deepcopy(optimizer.state_dict())
            resumed_params = [torch.nn.Parameter(p.detach().clone()) for p in ps]
    # Resume: other settings everywhere, then the saved state_dict restores the groups'.
    other = cls(grouped(resumed_params, [{}, {}]), **case["other"])
    other.load_state_dict(resumed_state)
    for k in range(1, STEPS):
        step(other, resumed_params, k)
    assert all(torch.equal(a, b) for a, b in zip(resumed_params, ps)), case["name"]
    return {**case, "groups": json_settings(case["groups"]), "defaults": json_settings([case["defaults"]])[0],
            "other": json_settings([case["other"]])[0], "trajectory": trajectory, "final": state_json(optimizer)}


out = {"start": [tensor_json(t) for t in start], "grads": [[tensor_json(g) for g in s] for s in grads],
       "cases": [run(c) for c in CASES]}

# ---------------------------------------------------------------- PyTorch's messages
errors = {}
ps = model()
try:
    torch.optim.AdamW([{"params": ps[:2]}, {"params": ps[1:]}], lr=0.1)
except ValueError as e:
    errors["shared"] = str(e)
two = torch.optim.SGD(grouped(model(), [{}, {}]), lr=0.1)
one = torch.optim.SGD(model(), lr=0.1)
try:
    one.load_state_dict(two.state_dict())
except ValueError as e:
    errors["group_count"] = str(e)
uneven = torch.optim.SGD([{"params": model()[:3]}, {"params": model()[3:]}], lr=0.1)
try:
    uneven.load_state_dict(two.state_dict())
except ValueError as e:
    errors["group_size"] = str(e)
out["errors"] = errors

write("param_groups.json", out)
