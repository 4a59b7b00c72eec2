"""tests/reference/gen_lr_scheduler.py — learning-rate sequences of torch.optim.lr_scheduler.

Run: /work/venv/bin/python tests/reference/gen_lr_scheduler.py   (writes lr_scheduler.json)
For each case: the optimizer (SGD with lr and momentum, or Adam with lr), the scheduler and
its arguments, and 40 steps of `optimizer.step(); scheduler.step()` (ReduceLROnPlateau:
step(metric) with the listed metrics). Recorded: the lr after construction and after each
step (get_last_lr()[0], float64, compared exactly by tests/nn/test_lr_scheduler.cpp), the
momentum (SGD's momentum or Adam's betas[0]) alongside, and the same sequence when at step
20 a new optimizer and scheduler are built and given the old ones' state_dicts (PyTorch's
resume: the two must agree, and agree with the uninterrupted run).
Cases with "group_lrs" run on an optimizer of one parameter group per listed lr (each its
own parameter): PyTorch schedules each group from its own initial lr, and every group's lr
after each step is recorded as "group_lr_steps" (the resumed run checked against it too).
"""
import copy

import torch

from reflib import write

STEPS = 40
RESUME_AT = 20


def make_optimizer(kind, lr, momentum, group_lrs=None):
    if group_lrs is None:
        params = [torch.nn.Parameter(torch.zeros(2))]
    else:
        params = [{"params": [torch.nn.Parameter(torch.zeros(2))], "lr": g} for g in group_lrs]
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=momentum)
    return torch.optim.Adam(params, lr=lr)


def make_scheduler(optimizer, name, args):
    S = torch.optim.lr_scheduler
    if name == "SequentialLR":
        parts = [make_scheduler(optimizer, part["name"], part["args"]) for part in args["schedulers"]]
        return S.SequentialLR(optimizer, parts, milestones=args["milestones"])
    return getattr(S, name)(optimizer, **args)


def momentum_of(optimizer):
    group = optimizer.param_groups[0]
    return float(group["betas"][0]) if "betas" in group else float(group["momentum"])


def step(scheduler, name, metrics, k):
    scheduler.optimizer.step()
    if name == "ReduceLROnPlateau":
        scheduler.step(metrics[k])
    else:
        scheduler.step()


def run(case):
    metrics = case.get("metrics")
    group_lrs = case.get("group_lrs")
    optimizer = make_optimizer(case["optimizer"], case["lr"], case.get("momentum", 0.0), group_lrs)
    scheduler = make_scheduler(optimizer, case["name"], case["args"])
    lrs, momenta = [scheduler.get_last_lr()[0]], [momentum_of(optimizer)]
    all_lrs = [list(scheduler.get_last_lr())]
    resumed_lrs, resumed_momenta, resumed_all_lrs = [], [], []
    for k in range(STEPS):
        if k == RESUME_AT:
            optimizer_state = copy.deepcopy(optimizer.state_dict())
            scheduler_state = copy.deepcopy(scheduler.state_dict())
            # The resumed pair is built anew, then given the saved states (PyTorch's recipe).
            optimizer2 = make_optimizer(case["optimizer"], case["lr"], case.get("momentum", 0.0), group_lrs)
            scheduler2 = make_scheduler(optimizer2, case["name"], case["args"])
            optimizer2.load_state_dict(optimizer_state)
            scheduler2.load_state_dict(scheduler_state)
        step(scheduler, case["name"], metrics, k)
        lrs.append(scheduler.get_last_lr()[0])
        momenta.append(momentum_of(optimizer))
        all_lrs.append(list(scheduler.get_last_lr()))
        assert all_lrs[-1] == [g["lr"] for g in optimizer.param_groups], case
        if k >= RESUME_AT:
            step(scheduler2, case["name"], metrics, k)
            resumed_lrs.append(scheduler2.get_last_lr()[0])
            resumed_momenta.append(momentum_of(optimizer2))
            resumed_all_lrs.append(list(scheduler2.get_last_lr()))
    assert resumed_lrs == lrs[RESUME_AT + 1:], case
    assert resumed_all_lrs == all_lrs[RESUME_AT + 1:], case
    result = {**case, "lrs": lrs, "momenta": momenta}
    if group_lrs is not None:
        result["group_lr_steps"] = all_lrs
    return result


PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.8, 0.8, 0.8, 0.8, 0.8, 0.7999, 0.79, 0.85, 0.9, 0.9,
                   0.9, 0.9, 0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.4, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6,
                   0.6, 0.6, 0.6, 0.6, 0.6, 0.6]
ACCURACY = [0.5, 0.6, 0.6, 0.6, 0.61, 0.61, 0.61, 0.61, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.71, 0.71, 0.71, 0.71,
            0.71, 0.72, 0.72, 0.72, 0.72, 0.72, 0.72, 0.72, 0.72, 0.72, 0.72, 0.72, 0.72, 0.72, 0.72, 0.72, 0.72,
            0.72, 0.72, 0.72, 0.72, 0.72]

CASES = [
    {"name": "StepLR", "optimizer": "sgd", "lr": 0.1, "args": {"step_size": 3, "gamma": 0.5}},
    {"name": "StepLR", "optimizer": "adam", "lr": 0.01, "args": {"step_size": 7, "gamma": 0.3}},
    {"name": "MultiStepLR", "optimizer": "sgd", "lr": 0.1, "args": {"milestones": [5, 12, 12, 30], "gamma": 0.1}},
    {"name": "ExponentialLR", "optimizer": "sgd", "lr": 0.3, "args": {"gamma": 0.9}},
    {"name": "LinearLR", "optimizer": "sgd", "lr": 0.1, "args": {"start_factor": 0.1, "end_factor": 1.0,
                                                                 "total_iters": 9}},
    {"name": "LinearLR", "optimizer": "sgd", "lr": 0.05, "args": {"start_factor": 1.0, "end_factor": 0.2,
                                                                  "total_iters": 30}},
    {"name": "CosineAnnealingLR", "optimizer": "sgd", "lr": 0.1, "args": {"T_max": 40}},
    {"name": "CosineAnnealingLR", "optimizer": "sgd", "lr": 0.1, "args": {"T_max": 13, "eta_min": 0.001}},
    {"name": "CosineAnnealingLR", "optimizer": "adam", "lr": 0.003, "args": {"T_max": 7, "eta_min": 1e-5}},
    {"name": "OneCycleLR", "optimizer": "sgd", "lr": 0.1, "momentum": 0.9, "args": {"max_lr": 0.1, "total_steps": 40}},
    {"name": "OneCycleLR", "optimizer": "sgd", "lr": 0.5, "args": {"max_lr": 0.5, "total_steps": 45}},
    {"name": "OneCycleLR", "optimizer": "adam", "lr": 0.01, "args": {"max_lr": 0.01, "total_steps": 40,
                                                                     "three_phase": True,
                                                                     "anneal_strategy": "linear"}},
    {"name": "OneCycleLR", "optimizer": "sgd", "lr": 0.1, "momentum": 0.9,
     "args": {"max_lr": 0.2, "total_steps": 50, "pct_start": 0.25, "div_factor": 10.0, "final_div_factor": 100.0,
              "cycle_momentum": False}},
    {"name": "ReduceLROnPlateau", "optimizer": "sgd", "lr": 0.1, "metrics": PLATEAU_METRICS,
     "args": {"mode": "min", "factor": 0.5, "patience": 2}},
    {"name": "ReduceLROnPlateau", "optimizer": "sgd", "lr": 0.1, "metrics": PLATEAU_METRICS,
     "args": {"mode": "min", "factor": 0.3, "patience": 1, "cooldown": 2, "min_lr": 0.004, "threshold": 0.01,
              "threshold_mode": "abs"}},
    {"name": "ReduceLROnPlateau", "optimizer": "adam", "lr": 0.01, "metrics": ACCURACY,
     "args": {"mode": "max", "factor": 0.1, "patience": 3}},
    # --warmup-steps N: LinearLR(1/N, 1, N - 1) then the schedule from milestone N.
    {"name": "SequentialLR", "optimizer": "sgd", "lr": 0.1,
     "args": {"schedulers": [{"name": "LinearLR", "args": {"start_factor": 0.2, "end_factor": 1.0, "total_iters": 4}},
                             {"name": "CosineAnnealingLR", "args": {"T_max": 35, "eta_min": 0.0}}],
              "milestones": [5]}},
    {"name": "SequentialLR", "optimizer": "sgd", "lr": 0.1,
     "args": {"schedulers": [{"name": "LinearLR", "args": {"start_factor": 0.125, "end_factor": 1.0,
                                                           "total_iters": 7}},
                             {"name": "StepLR", "args": {"step_size": 4, "gamma": 0.5}},
                             {"name": "ExponentialLR", "args": {"gamma": 0.95}}],
              "milestones": [8, 25]}},
    # Parameter groups with different lrs: each scheduled from its own initial lr.
    {"name": "StepLR", "optimizer": "sgd", "lr": 0.1, "group_lrs": [0.1, 0.01], "args": {"step_size": 3, "gamma": 0.5}},
    {"name": "MultiStepLR", "optimizer": "adam", "lr": 0.001, "group_lrs": [0.003, 0.0005],
     "args": {"milestones": [5, 12, 30], "gamma": 0.2}},
    {"name": "CosineAnnealingLR", "optimizer": "adam", "lr": 0.001, "group_lrs": [0.003, 0.01],
     "args": {"T_max": 13, "eta_min": 1e-4}},
    {"name": "OneCycleLR", "optimizer": "sgd", "lr": 0.1, "momentum": 0.9, "group_lrs": [0.1, 0.05],
     "args": {"max_lr": 0.1, "total_steps": 40}},
    {"name": "ReduceLROnPlateau", "optimizer": "sgd", "lr": 0.1, "group_lrs": [0.1, 0.002], "metrics": PLATEAU_METRICS,
     "args": {"mode": "min", "factor": 0.5, "patience": 1, "min_lr": 0.001}},
    {"name": "SequentialLR", "optimizer": "sgd", "lr": 0.1, "group_lrs": [0.1, 0.02],
     "args": {"schedulers": [{"name": "LinearLR", "args": {"start_factor": 0.2, "end_factor": 1.0, "total_iters": 4}},
                             {"name": "CosineAnnealingLR", "args": {"T_max": 35, "eta_min": 0.0}}],
              "milestones": [5]}},
]

write("lr_scheduler.json", {"steps": STEPS, "resume_at": RESUME_AT, "cases": [run(c) for c in CASES]})
