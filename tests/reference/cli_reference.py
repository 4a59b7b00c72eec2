"""tests/reference/cli_reference.py — the PyTorch program `ember train` follows, step for step.

`ember train` promises that, for the same flags, its per-batch losses match this program's
(run with PyTorch 2.x: python3; generated with 2.15). The training loop is the seed tutorial's §7
loop, generalised to the CLI's flags:

    torch.manual_seed(seed)
    model = Sequential(Linear(in, h1), ReLU(), [Dropout(p)], ..., Linear(hk, out))
      (--model cnn: Sequential(Conv2d(C, c1, 3, padding=1), ReLU(), MaxPool2d(2), ..., Flatten(),
       Linear(..., h1), ..., Linear(hk, out)) on examples viewed as C x H x W)
    loader = DataLoader(train_ds, batch_size=bs, shuffle=True, drop_last=drop_last, num_workers=workers)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=..., weight_decay=..., nesterov=...)
    for epoch in range(epochs):
        for x, y in loader: loss = F.cross_entropy(model(x), y); opt.zero_grad(); loss.backward(); opt.step()

With --precision bf16 or fp16 the forward pass and the loss run under torch.autocast("cpu", dtype)
(the test accuracy's forward too), and fp16 scales the loss with torch.amp.GradScaler("cpu")
(scaler.scale(loss).backward(); scaler.step(opt); scaler.update()).

Features are multiplied by the input scale (--input-scale; default 1/255 for IDX images,
1 for CSV and toy data); a scale 1/D with a whole D divides by D (x / 255), as ember does. Dropout
masks are drawn from the default generator during the forward pass, so --dropout runs are
compared too; --workers only changes who loads the batches (PyTorch's worker processes,
ember's threads), never which examples they hold. A CSV file's first line is a header when
it has a cell that is not a number (ember's default). A
validation split (--val-split f) takes the first floor(f * n) indices of
randperm(n, generator=Generator().manual_seed(seed)) as the validation set and the rest, in
that permuted order, as the training set; its own generator leaves the default one untouched.

Usage:
    python3 tests/reference/cli_reference.py --data toy --hidden 30,20 --epochs 3 \
        --batch-size 2 --lr 0.5 --seed 123 --drop-last      # prints one loss per batch
    python3 tests/reference/cli_reference.py --generate   # writes cli_reference.json
    python3 tests/reference/cli_reference.py --generate-missing    # adds new CONFIGS only
"""
import argparse
import gzip
import json
import math
import os
import shlex
import struct

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

import reflib

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "apps", "fixtures", "cli")


def toy_data():
    """The tutorial's §6 data set: 5 training and 2 test examples with 2 features."""
    x_train = torch.tensor([[-1.2, 3.1], [-0.9, 2.9], [-0.5, 2.6], [2.3, -1.1], [2.7, -1.5]])
    y_train = torch.tensor([0, 0, 0, 1, 1])
    x_test = torch.tensor([[-0.8, 2.8], [2.6, -1.6]])
    y_test = torch.tensor([0, 1])
    return (x_train, y_train), (x_test, y_test)


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    data = torch.frombuffer(bytearray(raw[4 + 4 * ndim:]), dtype=torch.uint8)
    return data.reshape(dims)


def idx_split(directory, prefix):
    names = os.listdir(directory)
    images = next(n for n in names if n.startswith(prefix) and "images" in n)
    labels = next(n for n in names if n.startswith(prefix) and "labels" in n)
    x = read_idx(os.path.join(directory, images))
    y = read_idx(os.path.join(directory, labels))
    return x.reshape(x.shape[0], -1).to(torch.float32), y.to(torch.int64)


def is_number(cell):
    try:
        float(cell)
        return True
    except ValueError:
        return False


def csv_data(path):
    """Label in column 0, pixel values 0..255 (the fixtures' layout); a first line with a
    cell that is not a number is a header."""
    with open(path) as f:
        rows = [line.strip().split(",") for line in f if line.strip()]
    if not all(is_number(cell) for cell in rows[0]):
        rows = rows[1:]
    y = torch.tensor([int(r[0]) for r in rows])
    x = torch.tensor([[float(v) for v in r[1:]] for r in rows], dtype=torch.float32)
    return (x, y), (x, y)


def apply_input_scale(x, scale):
    """ember's apply_input_scale (apps/cli/datasets.cpp)."""
    if scale == 1.0:
        return x
    divisor = round(1.0 / scale)
    if divisor > 1 and 1.0 / divisor == scale:
        return x / float(divisor)
    return x * scale


def load_data(spec):
    if spec == "toy":
        return toy_data()
    if spec.startswith("idx:"):
        directory = spec[4:]
        return idx_split(directory, "train"), idx_split(directory, "t10k")
    if spec.startswith("csv:"):
        return csv_data(spec[4:])
    if spec == "fashion-mnist":
        return load_data("idx:/usr/share/datasets/fashion-mnist")
    raise ValueError(spec)


def parse(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="fashion-mnist")
    p.add_argument("--model", default="mlp")
    p.add_argument("--hidden", default=None)
    p.add_argument("--channels", default="32,64")
    p.add_argument("--input-shape", default=None)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--nesterov", action="store_true")
    p.add_argument("--optimizer", default="sgd")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--drop-last", action="store_true")
    p.add_argument("--val-split", type=float, default=0.0)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--input-scale", type=float, default=None)
    p.add_argument("--precision", default="fp32")
    p.add_argument("--generate", action="store_true")
    p.add_argument("--generate-missing", action="store_true")
    return p.parse_args(argv)


def train(args):
    """Runs the reference loop; returns (losses per batch, final state_dict, test accuracy)."""
    (x_train, y_train), (x_test, y_test) = load_data(args.data)
    scale = args.input_scale
    if scale is None:
        scale = 1.0 / 255.0 if args.data.startswith("idx:") or args.data == "fashion-mnist" else 1.0
    x_train, x_test = apply_input_scale(x_train, scale), apply_input_scale(x_test, scale)
    if args.val_split > 0:
        n = x_train.shape[0]
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(args.seed))
        k = int(math.floor(args.val_split * n))
        x_train, y_train = x_train[perm[k:]], y_train[perm[k:]]
    hidden = args.hidden if args.hidden is not None else ("128" if args.model == "cnn" else "256,128")
    hidden = [int(h) for h in hidden.split(",") if h]
    num_classes = int(y_train.max()) + 1

    torch.manual_seed(args.seed)
    layers = []
    image_shape = None
    if args.model == "cnn":
        # ember's --model cnn (apps/cli/model.h): per channel width Conv2d(3, padding=1), ReLU,
        # MaxPool2d(2); Flatten; then the MLP head. Examples are viewed as C x H x W.
        if args.input_shape:
            image_shape = [int(v) for v in args.input_shape.split(",")]
        else:
            side = int(round(math.sqrt(x_train.shape[1])))
            image_shape = [1, side, side]  # IDX images here are square
        channels, height, width = image_shape
        for c in [int(v) for v in args.channels.split(",")]:
            layers += [torch.nn.Conv2d(channels, c, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2)]
            channels, height, width = c, height // 2, width // 2
        layers.append(torch.nn.Flatten())
        sizes = [channels * height * width] + hidden + [num_classes]
    else:
        sizes = [x_train.shape[1]] + hidden + [num_classes]
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
            if args.dropout > 0:
                layers.append(torch.nn.Dropout(args.dropout))
    network = torch.nn.Sequential(*layers)

    def model(x):
        return network(x if image_shape is None else x.reshape(x.shape[0], *image_shape))

    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size, shuffle=True,
                        drop_last=args.drop_last, num_workers=args.workers)
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(network.parameters(), lr=args.lr, momentum=args.momentum,
                              weight_decay=args.weight_decay, nesterov=args.nesterov)
    elif args.optimizer == "adam":
        opt = torch.optim.Adam(network.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    else:
        opt = torch.optim.AdamW(network.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    # --precision bf16: the forward pass and the loss under autocast (the evaluation too).
    low = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.precision)

    def autocast():
        return torch.autocast("cpu", dtype=low or torch.bfloat16, enabled=low is not None)

    # --precision fp16: dynamic loss scaling, PyTorch's defaults (a no-op when disabled).
    scaler = torch.amp.GradScaler("cpu", enabled=low == torch.float16)

    losses = []
    for _ in range(args.epochs):
        network.train()
        for x, y in loader:
            with autocast():
                loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            losses.append(loss.item())
    network.eval()
    with torch.no_grad(), autocast():
        test_acc = (model(x_test).argmax(1) == y_test).float().mean().item()
    return losses, network.state_dict(), test_acc


# Configurations the C++ tests run through `ember train` and compare with (tests/apps/test_cli_parity.cpp).
FIX = "tests/apps/fixtures/cli"
CONFIGS = [
    "--data toy --hidden 30,20 --epochs 3 --batch-size 2 --lr 0.5 --seed 123 --drop-last",
    "--data toy --hidden 30,20 --epochs 4 --batch-size 2 --lr 0.5 --seed 123",
    "--data toy --hidden 7 --epochs 5 --batch-size 3 --lr 0.2 --seed 7",
    "--data toy --hidden 16,8,4 --epochs 3 --batch-size 1 --lr 0.1 --seed 42 --momentum 0.9",
    "--data toy --hidden 10 --epochs 3 --batch-size 2 --lr 0.3 --seed 5 --momentum 0.8 --nesterov --weight-decay 0.01",
    "--data toy --hidden 12,6 --epochs 3 --batch-size 2 --lr 0.01 --seed 9 --optimizer adam",
    "--data toy --hidden 12 --epochs 3 --batch-size 2 --lr 0.01 --seed 11 --optimizer adamw --weight-decay 0.1",
    f"--data idx:{FIX}/idx --hidden 8 --epochs 2 --batch-size 4 --lr 0.5 --seed 3",
    f"--data idx:{FIX}/idx --hidden 8 --epochs 2 --batch-size 4 --lr 0.5 --seed 3 --val-split 0.25",
    f"--data csv:{FIX}/tiny.csv --hidden 5 --epochs 2 --batch-size 3 --lr 0.5 --seed 1 --input-scale 0.00392156862745098",
    # CSV features as they are (--input-scale defaults to 1 for CSV).
    f"--data csv:{FIX}/tiny.csv --hidden 5 --epochs 2 --batch-size 3 --lr 0.01 --seed 1",
    # Dropout: its masks come from the default generator, between the shuffles.
    "--data toy --hidden 16,8 --epochs 4 --batch-size 2 --lr 0.1 --seed 5 --dropout 0.2",
    f"--data idx:{FIX}/idx --hidden 12,6 --epochs 3 --batch-size 5 --lr 0.3 --seed 8 --dropout 0.3 --momentum 0.9",
    f"--data idx:{FIX}/idx --hidden 10 --epochs 2 --batch-size 4 --lr 0.01 --seed 2 --dropout 0.5 --optimizer adam",
    # --drop-last on IDX data: 24 examples in batches of 5 leave 4 behind each epoch.
    f"--data idx:{FIX}/idx --hidden 8 --epochs 3 --batch-size 5 --lr 0.5 --seed 6 --drop-last",
    f"--data idx:{FIX}/idx --hidden 8 --epochs 2 --batch-size 7 --lr 0.5 --seed 6 --drop-last --val-split 0.25",
    # --workers: the same batches whoever loads them.
    f"--data idx:{FIX}/idx --hidden 8 --epochs 2 --batch-size 4 --lr 0.5 --seed 3 --workers 2",
    f"--data idx:{FIX}/idx --hidden 8,8 --epochs 2 --batch-size 3 --lr 0.2 --seed 4 --workers 3 --dropout 0.1",
    # A headerless CSV keeps its first example.
    f"--data csv:{FIX}/tiny_noheader.csv --hidden 5 --epochs 2 --batch-size 3 --lr 0.5 --seed 1 --input-scale 0.00392156862745098",
    # --model cnn (4x4 images: two stages leave 1x1): init order, conv, pooling and the head.
    f"--data idx:{FIX}/idx --model cnn --channels 4,6 --hidden 8 --epochs 2 --batch-size 4 --lr 0.1 --seed 3",
    f"--data idx:{FIX}/idx --model cnn --channels 3 --epochs 2 --batch-size 5 --lr 0.05 --seed 8 --momentum 0.9",
    f"--data idx:{FIX}/idx --model cnn --channels 5,4 --hidden 6,5 --epochs 2 --batch-size 4 --lr 0.01 --seed 2 --optimizer adam",
    f"--data csv:{FIX}/tiny.csv --model cnn --input-shape 1,4,4 --channels 2,3 --hidden 4 --epochs 2 --batch-size 3 --lr 0.1 --seed 1 --input-scale 0.00392156862745098",
    # --precision bf16: autocast around the forward pass and the loss (compared within bfloat16's
    # precision: test_cli_parity.cpp).
    "--data toy --hidden 30,20 --epochs 3 --batch-size 2 --lr 0.5 --seed 123 --precision bf16",
    f"--data idx:{FIX}/idx --hidden 12,6 --epochs 3 --batch-size 5 --lr 0.3 --seed 8 --momentum 0.9 --precision bf16",
    f"--data idx:{FIX}/idx --model cnn --channels 4,6 --hidden 8 --epochs 2 --batch-size 4 --lr 0.1 --seed 3 --precision bf16",
    # --precision fp16: autocast to float16 and PyTorch's GradScaler (its default scale, 2^16).
    "--data toy --hidden 30,20 --epochs 3 --batch-size 2 --lr 0.5 --seed 123 --precision fp16",
    f"--data idx:{FIX}/idx --model cnn --channels 4,6 --hidden 8 --epochs 2 --batch-size 4 --lr 0.1 --seed 3 --precision fp16",
]


def main():
    args = parse(None)
    if not args.generate and not args.generate_missing:
        losses, _, _ = train(args)
        for loss in losses:
            print(f"{loss:.2f}")
        return
    root = os.path.join(HERE, "..", "..")
    os.chdir(root)
    # --generate-missing keeps the configurations already in the file (computed by the
    # PyTorch named there) and adds the new ones, computed by this PyTorch (noted per entry).
    kept = {}
    if args.generate_missing:
        with open(os.path.join(HERE, "cli_reference.json")) as f:
            previous = json.load(f)
        kept = {c["flags"]: c for c in previous["configs"]}
    results = []
    for flags in CONFIGS:
        if flags in kept:
            results.append(kept[flags])
            continue
        losses, state, test_acc = train(parse(shlex.split(flags)))
        results.append({
            **({"torch_version": torch.__version__} if args.generate_missing else {}),
            "flags": flags,
            "losses": losses,
            "test_acc": test_acc,
            "parameters": {name: reflib.tensor_json(t) for name, t in state.items()},
        })
    torch_version = previous["torch_version"] if args.generate_missing else torch.__version__
    reflib.write("cli_reference.json", {"torch_version": torch_version, "configs": results})


if __name__ == "__main__":
    main()
