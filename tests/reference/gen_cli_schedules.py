"""tests/reference/gen_cli_schedules.py — `ember train`'s schedules, clipping and
accumulation, in PyTorch (writes cli_schedules.json for tests/apps/test_cli_schedules.cpp).

Run: /work/venv/bin/python tests/reference/gen_cli_schedules.py
The loop is cli_reference.py's (tutorial §7 generalised to the CLI's flags: same data,
split, seed, model and loader) with what issue 20 adds, as PyTorch users write it:

    steps_per_epoch = ceil(len(loader) / N); total = epochs * steps_per_epoch
    scheduler = ...            # --lr-schedule, see make_scheduler (apps/cli/lr_schedule.h)
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            if i % N == 0: opt.zero_grad()
            (loss / N if N > 1 else loss).backward()
            if (i + 1) % N == 0 or i + 1 == len(loader):
                grad_norm = clip_grad_norm_(params, MAX)   # or clip_grad_value_(params, V)
                lr = opt.param_groups[0]["lr"]               # logged with the step
                opt.step(); (per-step schedules) scheduler.step()
        val_loss, val_acc on the validation split (model.eval(), no_grad)
        (per-epoch schedules) scheduler.step()  /  scheduler.step(monitored value)

Recorded per optimizer step: the lr it used (compared exactly), the loss (the mean of its
micro-batch losses), the pre-clip total 2-norm of the gradients; per epoch: val_loss,
val_acc and train_loss; and the final parameters.
"""
import argparse
import math
import os
import shlex

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

import cli_reference
import reflib

HERE = os.path.dirname(os.path.abspath(__file__))


def parse(argv):
    p = argparse.ArgumentParser()
    for flag, kind, default in [("--data", str, "toy"), ("--hidden", str, "8"), ("--epochs", int, 2),
                                ("--batch-size", int, 4), ("--lr", float, 0.1), ("--momentum", float, 0.0),
                                ("--optimizer", str, "sgd"), ("--seed", int, 0), ("--val-split", float, 0.0),
                                ("--input-scale", float, None), ("--lr-schedule", str, "constant"),
                                ("--lr-step-size", int, 0), ("--lr-gamma", float, 0.1),
                                ("--lr-milestones", str, ""), ("--lr-min", float, 0.0), ("--lr-patience", int, 10),
                                ("--warmup-steps", int, 0), ("--clip-grad-norm", float, 0.0),
                                ("--clip-grad-value", float, 0.0), ("--grad-accum", int, 1),
                                ("--monitor", str, None)]:
        p.add_argument(flag, type=kind, default=default)
    return p.parse_args(argv)


def make_scheduler(args, opt, total_steps):
    """(scheduler, per_step, chained) as apps/cli/lr_schedule.cpp builds them: `chained` is a
    warm-up stepped after every optimizer step beside a per-epoch schedule (PyTorch's chaining
    of two schedulers on one optimizer), else None."""
    S = torch.optim.lr_scheduler
    kind = args.lr_schedule
    per_step = kind in ("cosine", "onecycle") or (kind == "constant" and args.warmup_steps > 0)
    n = args.warmup_steps
    warmup = S.LinearLR(opt, start_factor=1.0 / n, end_factor=1.0, total_iters=n - 1) if n > 0 else None
    if kind == "constant":
        return warmup, per_step, None
    if kind == "step":
        main = S.StepLR(opt, step_size=args.lr_step_size, gamma=args.lr_gamma)
    elif kind == "multistep":
        main = S.MultiStepLR(opt, milestones=[int(m) for m in args.lr_milestones.split(",")], gamma=args.lr_gamma)
    elif kind == "exponential":
        main = S.ExponentialLR(opt, gamma=args.lr_gamma)
    elif kind == "cosine":
        main = S.CosineAnnealingLR(opt, T_max=total_steps - n, eta_min=args.lr_min)
    elif kind == "onecycle":
        cycle = args.optimizer != "sgd" or args.momentum > 0
        main = S.OneCycleLR(opt, max_lr=args.lr, total_steps=total_steps, cycle_momentum=cycle)
    else:
        mode = "max" if args.monitor == "val_acc" else "min"
        main = S.ReduceLROnPlateau(opt, mode=mode, factor=args.lr_gamma, patience=args.lr_patience,
                                   min_lr=args.lr_min)
    if warmup is None:
        return main, per_step, None
    if kind == "cosine":
        return S.SequentialLR(opt, [warmup, main], milestones=[n]), per_step, None
    return main, per_step, warmup


def train(flags):
    args = parse(shlex.split(flags))
    if args.monitor is None:
        args.monitor = "val_loss" if args.val_split > 0 else "train_loss"
    (x_train, y_train), _ = cli_reference.load_data(args.data)
    scale = args.input_scale
    if scale is None:
        scale = 1.0 / 255.0 if args.data.startswith("idx:") or args.data == "fashion-mnist" else 1.0
    x_train = cli_reference.apply_input_scale(x_train, scale)
    x_val = y_val = None
    if args.val_split > 0:
        n = x_train.shape[0]
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(args.seed))
        k = int(math.floor(args.val_split * n))
        x_val, y_val = x_train[perm[:k]], y_train[perm[:k]]
        x_train, y_train = x_train[perm[k:]], y_train[perm[k:]]
    hidden = [int(h) for h in args.hidden.split(",") if h]
    num_classes = int(y_train.max()) + 1

    torch.manual_seed(args.seed)
    sizes = [x_train.shape[1]] + hidden + [num_classes]
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size, shuffle=True)
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    accum = args.grad_accum
    steps_per_epoch = (len(loader) + accum - 1) // accum
    scheduler, per_step, chained = make_scheduler(args, opt, args.epochs * steps_per_epoch)

    steps, epochs = [], []
    for _ in range(args.epochs):
        model.train()
        micro, loss_sum, seen = [], 0.0, 0
        for i, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            if i % accum == 0:
                opt.zero_grad()
            (loss / accum if accum > 1 else loss).backward()
            micro.append(loss.item())
            loss_sum += loss.item() * y.shape[0]
            seen += y.shape[0]
            if (i + 1) % accum == 0 or i + 1 == len(loader):
                params = list(model.parameters())
                if args.clip_grad_norm > 0:
                    grad_norm = torch.nn.utils.clip_grad_norm_(params, args.clip_grad_norm).item()
                else:
                    grad_norm = torch.nn.utils.get_total_norm([p.grad for p in params]).item()
                    if args.clip_grad_value > 0:
                        torch.nn.utils.clip_grad_value_(params, args.clip_grad_value)
                lr = opt.param_groups[0]["lr"]
                opt.step()
                if per_step and scheduler is not None:
                    scheduler.step()
                if chained is not None:
                    chained.step()
                steps.append({"lr": lr, "loss": sum(micro) / len(micro), "grad_norm": grad_norm,
                              "momentum": opt.param_groups[0].get("momentum",
                                                                  opt.param_groups[0].get("betas", (0,))[0])})
                micro = []
        epoch = {"train_loss": loss_sum / seen}
        if x_val is not None:
            model.eval()
            with torch.no_grad():
                logits = model(x_val)
                epoch["val_loss"] = F.cross_entropy(logits, y_val, reduction="sum").item() / y_val.shape[0]
                epoch["val_acc"] = (logits.argmax(1) == y_val).float().mean().item()
        epochs.append(epoch)
        if not per_step and scheduler is not None:
            if isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
                scheduler.step(epoch[args.monitor])
            else:
                scheduler.step()
    return {"flags": flags, "steps": steps, "epochs": epochs,
            "parameters": {name: reflib.tensor_json(t) for name, t in model.state_dict().items()}}


FIX = "tests/apps/fixtures/cli"
IDX = f"--data idx:{FIX}/idx --hidden 8 --batch-size 4 --seed 3"
CONFIGS = [
    f"{IDX} --epochs 3 --lr 0.5 --lr-schedule step --lr-step-size 1 --lr-gamma 0.5",
    f"{IDX} --epochs 4 --lr 0.5 --lr-schedule multistep --lr-milestones 1,3 --lr-gamma 0.3",
    f"{IDX} --epochs 3 --lr 0.5 --lr-schedule exponential --lr-gamma 0.7",
    f"{IDX} --epochs 3 --lr 0.5 --lr-schedule cosine --lr-min 0.01",
    f"{IDX} --epochs 3 --lr 0.5 --lr-schedule cosine --warmup-steps 4",
    f"{IDX} --epochs 2 --lr 0.5 --warmup-steps 5",
    f"{IDX} --epochs 3 --lr 0.2 --momentum 0.9 --lr-schedule onecycle",
    f"{IDX} --epochs 2 --lr 0.5 --lr-schedule onecycle",
    f"{IDX} --epochs 2 --lr 0.01 --optimizer adam --lr-schedule onecycle",
    f"{IDX} --epochs 6 --lr 3.0 --val-split 0.25 --lr-schedule plateau --lr-patience 0 --lr-gamma 0.5",
    f"{IDX} --epochs 6 --lr 1.5 --val-split 0.25 --lr-schedule plateau --lr-patience 1 --monitor val_acc",
    f"{IDX} --epochs 6 --lr 2.0 --lr-schedule plateau --lr-patience 0 --lr-gamma 0.5 --lr-min 0.6",
    f"{IDX} --epochs 2 --lr 0.5 --clip-grad-norm 0.3",
    f"{IDX} --epochs 2 --lr 0.5 --clip-grad-value 0.02",
    f"{IDX} --epochs 2 --lr 0.5 --grad-accum 2",
    f"{IDX} --epochs 2 --lr 0.5 --grad-accum 4 --momentum 0.9 --lr-schedule cosine --clip-grad-norm 0.5",
    # A warm-up chained with the per-epoch schedules (longer than an epoch, so both act at once).
    f"{IDX} --epochs 3 --lr 0.5 --lr-schedule step --lr-step-size 1 --lr-gamma 0.5 --warmup-steps 7",
    f"{IDX} --epochs 4 --lr 0.5 --lr-schedule multistep --lr-milestones 1,3 --lr-gamma 0.3 --warmup-steps 3",
    f"{IDX} --epochs 3 --lr 0.5 --lr-schedule exponential --lr-gamma 0.7 --warmup-steps 9",
    f"{IDX} --epochs 6 --lr 3.0 --val-split 0.25 --lr-schedule plateau --lr-patience 0 --lr-gamma 0.5 --warmup-steps 5",
]

if __name__ == "__main__":
    os.chdir(os.path.join(HERE, "..", ".."))
    reflib.write("cli_schedules.json", {"configs": [train(flags) for flags in CONFIGS]})
