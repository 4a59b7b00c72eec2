"""tests/reference/gen_cli_gpt.py — `ember train --model gpt` in PyTorch (issue 21).

The same loop as apps/cli/gpt_training.cpp, for the configurations below, on the committed
fixture tests/apps/fixtures/words-sample.txt. Writes cli_gpt.json, read by
tests/apps/test_cli_gpt.cpp, which runs `ember train` with each config's flags and compares
the per-step losses, learning rates and evaluations (relative error below 1e-4), and then
`ember sample` on the trained checkpoint against the text PyTorch generates.

The loop (docs/cli.md, "Training a GPT"):
  manual_seed(seed); text -> sorted characters -> ids; first int(0.9 n) train, the rest val
  model = GPT(V, T, L, Hd, C, dropout)                           (gpt_model.py)
  AdamW(groups: dim >= 2 decay --weight-decay, others 0; lr, betas (0.9, 0.95))
  [--warmup-steps N] LinearLR(1/N, 1, N-1), then (cosine) SequentialLR at milestone N into
  CosineAnnealingLR(T_max = steps - N, eta_min = --lr-min), stepped after every optimizer step
  per step: x, y = get_batch(train); loss = model(x, y); backward; [clip_grad_norm_];
            step; scheduler.step(); zero_grad
  after every --eval-every steps and after the last: model.eval(); no_grad; the mean loss
  of --eval-batches batches of train, then of val (nanoGPT's estimate_loss); model.train()
Run: /work/venv/bin/python tests/reference/gen_cli_gpt.py
"""
import os

import torch
import torch.optim.lr_scheduler as S

from gpt_model import GPT, get_batch
from reflib import HERE, write

FIXTURE = os.path.join(HERE, "..", "apps", "fixtures", "words-sample.txt")

CONFIGS = [
    dict(name="small", seed=0, block_size=16, n_layer=2, n_head=2, n_embd=32, batch_size=8, max_steps=12, lr=1e-3,
         weight_decay=0.1, lr_schedule="constant", warmup_steps=0, lr_min=0.0, clip_grad_norm=0.0, dropout=0.0,
         eval_every=5, eval_batches=3),
    dict(name="cosine_warmup_clip", seed=3, block_size=12, n_layer=1, n_head=4, n_embd=16, batch_size=4, max_steps=10,
         lr=3e-3, weight_decay=0.1, lr_schedule="cosine", warmup_steps=3, lr_min=1e-4, clip_grad_norm=0.5,
         dropout=0.0, eval_every=4, eval_batches=2),
    dict(name="dropout_no_decay", seed=7, block_size=8, n_layer=2, n_head=1, n_embd=8, batch_size=5, max_steps=6,
         lr=2e-3, weight_decay=0.0, lr_schedule="cosine", warmup_steps=0, lr_min=0.0, clip_grad_norm=1.0,
         dropout=0.1, eval_every=0, eval_batches=2),
]


def flags(c):
    """The ember command line of a configuration (without --data and --log)."""
    out = ["--model", "gpt", "--seed", str(c["seed"]), "--block-size", str(c["block_size"]), "--n-layer",
           str(c["n_layer"]), "--n-head", str(c["n_head"]), "--n-embd", str(c["n_embd"]), "--batch-size",
           str(c["batch_size"]), "--max-steps", str(c["max_steps"]), "--lr", repr(c["lr"]), "--weight-decay",
           repr(c["weight_decay"]), "--lr-schedule", c["lr_schedule"], "--eval-every", str(c["eval_every"]),
           "--eval-batches", str(c["eval_batches"]), "--dropout", repr(c["dropout"])]
    if c["warmup_steps"]:
        out += ["--warmup-steps", str(c["warmup_steps"])]
    if c["lr_min"]:
        out += ["--lr-min", repr(c["lr_min"])]
    if c["clip_grad_norm"]:
        out += ["--clip-grad-norm", repr(c["clip_grad_norm"])]
    return out


def make_scheduler(c, optimizer):
    n, steps = c["warmup_steps"], c["max_steps"]
    warmup = S.LinearLR(optimizer, start_factor=1.0 / n, end_factor=1.0, total_iters=n - 1) if n > 0 else None
    if c["lr_schedule"] == "constant":
        return warmup
    cosine = S.CosineAnnealingLR(optimizer, T_max=steps - n, eta_min=c["lr_min"])
    return S.SequentialLR(optimizer, [warmup, cosine], milestones=[n]) if warmup else cosine


def estimate_loss(model, splits, c):
    model.eval()
    out = {}
    with torch.no_grad():
        for name, data in splits:
            losses = [model(*get_batch(data, c["block_size"], c["batch_size"]))[1].item()
                      for _ in range(c["eval_batches"])]
            out[name] = sum(losses) / len(losses)
    model.train()
    return out


def read_fixture():
    """The fixture's characters, their ids, and the train / val split of the encoded text."""
    with open(FIXTURE, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    index = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([index[ch] for ch in text], dtype=torch.long)
    n_train = int(len(data) * 0.9)
    return chars, index, data[:n_train], data[n_train:]


def train_loop(c, model, forward, train, val, logged_loss=lambda loss: loss.item(), evaluates=True):
    """The training loop of the module docstring; `forward` is the model or its DDP wrapper,
    `logged_loss` turns a step's loss into the logged number, `evaluates` whether this
    process runs the evaluations. Returns the step and evaluation records."""
    optimizer = model.optimizer(c["weight_decay"], c["lr"], (0.9, 0.95))
    scheduler = make_scheduler(c, optimizer)
    steps, evals = [], []
    for step in range(1, c["max_steps"] + 1):
        x, y = get_batch(train, c["block_size"], c["batch_size"])
        _, loss = forward(x, y)
        loss.backward()
        if c["clip_grad_norm"] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), c["clip_grad_norm"])
        lr = optimizer.param_groups[0]["lr"]
        optimizer.step()
        if scheduler:
            scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        steps.append({"step": step, "loss": logged_loss(loss), "lr": lr})
        if evaluates and ((c["eval_every"] and step % c["eval_every"] == 0) or step == c["max_steps"]):
            losses = estimate_loss(model, [("train", train), ("val", val)], c)
            evals.append({"step": step, "train_loss": losses["train"], "val_loss": losses["val"]})
    return steps, evals


def run(c):
    torch.manual_seed(c["seed"])
    chars, index, train, val = read_fixture()
    model = GPT(len(chars), c["block_size"], c["n_layer"], c["n_head"], c["n_embd"], c["dropout"], True)
    steps, evals = train_loop(c, model, model, train, val)
    # `ember sample --checkpoint C [--prompt P] --tokens N --temperature X --top-k K --seed S
    # --num-samples M` from the trained model: nanoGPT's sample.py (manual_seed, then generate
    # per sample), decoded; the samples joined as ember prints them.
    model.eval()
    samples = []
    for prompt, tokens, temperature, top_k, seed, count in [("\n", 40, 0.8, 200, 1337, 1), ("ab", 30, 1.0, 5, 3, 2)]:
        torch.manual_seed(seed)
        start = torch.tensor([[index[ch] for ch in prompt]], dtype=torch.long)
        texts = ["".join(chars[i] for i in model.generate(start, tokens, temperature, top_k)[0].tolist())
                 for _ in range(count)]
        samples.append({"prompt": prompt, "tokens": tokens, "temperature": temperature, "top_k": top_k, "seed": seed,
                        "num_samples": count, "output": "\n---------------\n".join(texts) + "\n"})
    return {"name": c["name"], "flags": flags(c), "vocab_size": len(chars), "steps": steps, "evals": evals,
            "samples": samples}


if __name__ == "__main__":
    write("cli_gpt.json", {"configs": [run(c) for c in CONFIGS]})
