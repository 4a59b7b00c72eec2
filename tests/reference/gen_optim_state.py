"""tests/reference/gen_optim_state.py — reference values for optimizer defaults and state_dicts.

Run with PyTorch 2.x (pip's torch; generated with 2.15): python3 tests/reference/gen_optim_state.py  (writes optim_state.json).
Covers: AdamW's default weight_decay (1e-2) and trajectories with it; the param_groups
PyTorch saves for SGD / Adam / AdamW (ember saves the same names, minus the entries that
pick a PyTorch implementation: foreach, capturable, differentiable, fused) and the state
names per parameter; resuming from a state_dict into an optimizer built with other
hyper-parameters (PyTorch restores the saved ones); the dtype loaded state takes; and
PyTorch's messages for a mismatched parameter group.
"""
import torch

from reflib import tensor_json, write

out = {}
IMPLEMENTATION_KEYS = {"foreach", "capturable", "differentiable", "fused", "params"}

start = [torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]), torch.tensor([0.1, -0.2, 0.3])]
grads = [[torch.tensor([[0.1, -0.2, 0.3], [0.05, 0.4, -0.1]]), torch.tensor([0.2, 0.0, -0.3])],
         [torch.tensor([[-0.3, 0.1, 0.2], [0.0, -0.5, 0.25]]), torch.tensor([-0.1, 0.4, 0.05])],
         [torch.tensor([[0.2, 0.2, -0.1], [0.3, 0.1, 0.0]]), torch.tensor([0.3, -0.2, 0.1])]]
out["start"] = [tensor_json(t) for t in start]
out["grads"] = [[tensor_json(g) for g in step] for step in grads]


def params(dtype=torch.float32):
    return [torch.nn.Parameter(t.clone().to(dtype)) for t in start]


def run(optimizer, ps, steps):
    trajectory = []
    for k in steps:
        for p, g in zip(ps, grads[k]):
            p.grad = g.clone().to(p.dtype)
        optimizer.step()
        trajectory.append([tensor_json(p) for p in ps])
    return trajectory


def group_of(optimizer):
    group = optimizer.state_dict()["param_groups"][0]
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in group.items() if k not in IMPLEMENTATION_KEYS}


# ---------------------------------------------------------------- AdamW's default decay
ps = params()
adamw = torch.optim.AdamW(ps, lr=0.05, betas=(0.8, 0.9))
out["adamw_default_weight_decay"] = adamw.defaults["weight_decay"]
out["adamw_default_trajectory"] = run(adamw, ps, [0, 1, 2])
out["adam_default_weight_decay"] = torch.optim.Adam(params()).defaults["weight_decay"]

# ---------------------------------------------------------------- param_groups and state names
configs = {
    "sgd": (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
    "adam": (torch.optim.Adam, {"lr": 0.02, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1, "amsgrad": True}),
    "adamw": (torch.optim.AdamW, {"lr": 0.02}),
}
layout = {}
for name, (cls, kwargs) in configs.items():
    ps = params()
    optimizer = cls(ps, **kwargs)
    run(optimizer, ps, [0])
    state = optimizer.state_dict()
    layout[name] = {"param_groups": group_of(optimizer),
                    "group_names": list(group_of(optimizer).keys()),  # JSON readers may sort the dict
                    "params": state["param_groups"][0]["params"],
                    "state_names": list(state["state"][0].keys()),
                    "step_dtype": str(state["state"][0]["step"].dtype).replace("torch.", "")
                    if "step" in state["state"][0] else None}
out["layout"] = layout

# ---------------------------------------------------------------- resuming restores hyper-parameters
# One step with the "saved" optimizer, then an optimizer built with different options
# loads its state_dict and runs two more steps: PyTorch continues the saved run.
resume = {}
for name, (cls, kwargs, other) in {
    "sgd": (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.05}, {"lr": 0.5}),
    "adam": (torch.optim.Adam, {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1, "amsgrad": True},
             {"lr": 0.001}),
    "adamw": (torch.optim.AdamW, {"lr": 0.05, "weight_decay": 0.3, "maximize": True}, {"lr": 0.001}),
}.items():
    ps = params()
    saved = cls(ps, **kwargs)
    run(saved, ps, [0])
    state = saved.state_dict()
    qs = [torch.nn.Parameter(p.detach().clone()) for p in ps]
    resumed = cls(qs, **other)
    resumed.load_state_dict(state)
    resume[name] = {"after_load": group_of(resumed), "trajectory": run(resumed, qs, [1, 2])}
out["resume"] = resume

# ---------------------------------------------------------------- loaded state takes the parameter's dtype
ps = params(torch.float32)
adam32 = torch.optim.Adam(ps, lr=0.01)
run(adam32, ps, [0])
qs = params(torch.float64)
adam64 = torch.optim.Adam(qs, lr=0.01)
adam64.load_state_dict(adam32.state_dict())
st = adam64.state[qs[0]]
out["cast"] = {name: str(value.dtype).replace("torch.", "") for name, value in st.items()}
out["cast_trajectory"] = run(adam64, qs, [1])

# ---------------------------------------------------------------- PyTorch's group errors
errors = {}
one = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1)
two_params = torch.optim.SGD(params(), lr=0.1).state_dict()
try:
    one.load_state_dict(two_params)
except ValueError as e:
    errors["group_size"] = str(e)
extra_group = torch.optim.SGD(params(), lr=0.1).state_dict()
extra_group["param_groups"].append(dict(extra_group["param_groups"][0]))
try:
    torch.optim.SGD(params(), lr=0.1).load_state_dict(extra_group)
except ValueError as e:
    errors["group_count"] = str(e)
out["errors"] = errors

write("optim_state.json", out)
