"""tests/reference/gen_optim_state.py — reference values for optimizer defaults and state_dicts.

Run with PyTorch 2.x (pip's torch; generated with 2.15): python3 tests/reference/gen_optim_state.py  (writes optim_state.json).
Covers: AdamW's default weight_decay (1e-2) and trajectories with it; the param_groups
PyTorch saves for SGD / Adam / AdamW (ember saves the same names, minus the entries that
pick a PyTorch implementation: foreach, capturable, differentiable, fused) and the state
names per parameter; resuming from a state_dict into an optimizer built with other
hyper-parameters (PyTorch restores the saved ones); the dtype loaded state takes;
PyTorch's messages for a mismatched parameter group; and Adam/AdamW trajectories for a
bit-for-bit comparison ("exact").
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

# ---------------------------------------------------------------- Adam's bits
# Every option that changes a rounding, at two sizes: 15 elements, which PyTorch's kernels
# run in their scalar loops (sqrt correctly rounded), and 1000, which they run in vector
# loops, whose sqrt (AVX-512) is one unit off in about 0.7 % of elements (measured on 2.15).
# tests/nn/test_optim_state.cpp compares ember's CPU Adam (core/cpu/adam_step.cpp): bit for
# bit at 15, and at 1000 everywhere but where that sqrt differs.
g = torch.Generator().manual_seed(2219)
exact = []
for dtype in (torch.float32, torch.float64):
    for n in (15, 1000):
        start_values = torch.randn(n, generator=g, dtype=dtype)
        step_grads = [torch.randn(n, generator=g, dtype=dtype) * 0.3 for _ in range(4)]
        for cls, kwargs in [(torch.optim.Adam, {"lr": 0.01}),
                            (torch.optim.Adam, {"lr": 0.02, "betas": (0.8, 0.95), "weight_decay": 0.1, "amsgrad": True}),
                            (torch.optim.Adam, {"lr": 0.003, "betas": (0.3, 0.9), "eps": 1e-6, "maximize": True}),
                            (torch.optim.AdamW, {"lr": 0.05, "weight_decay": 0.2})]:
            param = torch.nn.Parameter(start_values.clone())
            optimizer = cls([param], **kwargs)
            trajectory = []
            for grad in step_grads:
                param.grad = grad.clone()
                optimizer.step()
                trajectory.append(tensor_json(param.detach()))
            exact.append({"optimizer": cls.__name__, "options": {k: list(v) if isinstance(v, tuple) else v
                                                                 for k, v in kwargs.items()},
                          "start": tensor_json(start_values), "grads": [tensor_json(t) for t in step_grads],
                          "trajectory": trajectory})
out["exact"] = exact

write("optim_state.json", out)
