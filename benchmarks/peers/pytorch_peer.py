#!/usr/bin/env python3
"""benchmarks/peers/pytorch_peer.py -- the PyTorch peer of ember-bench (issue 9).

ember-bench writes the workloads it measured to a JSON spec and runs
    python3 pytorch_peer.py --spec SPEC.json
This script runs the same workloads with PyTorch under the same timing policy (warm-up,
calibrated calls per sample, repetitions, time budget; CUDA events on a GPU) and prints one
JSON object on stdout: the torch and Python versions and, per (workload, device), every
sample in seconds per call (and, where the script tried more than one implementation,
the "setting" it kept, with every alternative's median in "setting_medians"). It never
needs anything beyond torch itself. ember-bench runs it once per environment setting
(pytorch_peer.h) and keeps each figure's fastest.

Convolutional figures (conv2d, max_pool2d, batch_norm, the CNN's training) run in both
memory formats, contiguous NCHW and channels_last (model, weights, inputs and output
gradients), and keep the faster: on a CPU oneDNN's channels_last kernels are often the
faster. On a GPU cuDNN picks its algorithms (torch.backends.cudnn.benchmark = True) and
computes in fp32 as ember does (TF32 off: torch.backends.cudnn.allow_tf32 = False).
"""
import argparse
import json
import math
import platform
import sys
import time

import torch
import torch.nn.functional as F


class CpuTimer:
    def start(self):
        self.begin = time.perf_counter()

    def stop(self):
        return time.perf_counter() - self.begin


class CudaTimer:
    def __init__(self, device):
        self.begin = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def start(self):
        self.begin.record()

    def stop(self):
        self.end.record()
        self.end.synchronize()
        return self.begin.elapsed_time(self.end) / 1000.0


def time_calls(body, calls, timer):
    timer.start()
    for _ in range(calls):
        body()
    return timer.stop()


def measure(body, policy, timer):
    """The same algorithm as benchmarks/ember_bench/harness.cpp."""
    first = time_calls(body, 1, timer)
    if first >= policy["max_seconds"]:
        return {"samples": [first], "calls_per_sample": 1, "cold_single_sample": True}
    for _ in range(1, policy["warmup"]):
        time_calls(body, 1, timer)
    warmed = 0.0
    while warmed < policy.get("min_warmup_seconds", 0.0):
        warmed += time_calls(body, 1, timer)
    per_call = max(first, 1e-9)
    if policy["warmup"] > 1:
        per_call = max(time_calls(body, 1, timer), 1e-9)
    calls = int(min(max(math.ceil(policy["min_sample_seconds"] / per_call), 1), 1e6))
    samples, elapsed = [], 0.0
    for _ in range(policy["reps"]):
        seconds = time_calls(body, calls, timer)
        samples.append(seconds / calls)
        elapsed += seconds
        if elapsed > policy["max_seconds"] and len(samples) >= 3:
            break
    return {"samples": samples, "calls_per_sample": calls, "cold_single_sample": False}


def uniform(sizes, device):
    return torch.rand(sizes, device=device) - 0.5


def make_mlp(layers):
    modules = []
    for i in range(len(layers) - 1):
        if i > 0:
            modules.append(torch.nn.ReLU())
        modules.append(torch.nn.Linear(layers[i], layers[i + 1]))
    return torch.nn.Sequential(*modules)


def run_op(w, device, policy, timer):
    group, op, dims = w["group"], w["op"], w["dims"]
    with torch.no_grad():
        if group == "gemm":
            a, b = uniform((dims[0], dims[1]), device), uniform((dims[1], dims[2]), device)
            return measure(lambda: a.matmul(b), policy, timer)
        if group == "gemm_bf16":
            a = uniform((dims[0], dims[1]), device).to(torch.bfloat16)
            b = uniform((dims[1], dims[2]), device).to(torch.bfloat16)
            return measure(lambda: a.matmul(b), policy, timer)
        if group in ("elementwise", "reduction", "copy"):
            dtype = torch.bfloat16 if w.get("precision") == "bf16" else torch.float32
            x = uniform((dims[0],), device).to(dtype)
            if op in ("add", "mul"):
                y = uniform((dims[0],), device).to(dtype)
                return measure((lambda: x + y) if op == "add" else (lambda: x * y), policy, timer)
            body = {"relu": lambda: x.relu(), "sum": lambda: x.sum(), "clone": lambda: x.clone()}[op]
            return measure(body, policy, timer)
        if group == "h2d":
            host = uniform((dims[0],), "cpu")
            return measure(lambda: host.to(device), policy, timer)
        if group == "d2h":
            on_device = uniform((dims[0],), device)
            return measure(lambda: on_device.to("cpu"), policy, timer)
        if group == "softmax":
            x = uniform((dims[0], dims[1]), device)
            return measure(lambda: x.softmax(1), policy, timer)
    raise ValueError("no PyTorch runner for " + w["id"])


def run_cross_entropy(w, device, policy, timer):
    rows, classes = w["dims"]
    logits = uniform((rows, classes), device).requires_grad_(True)
    target = torch.randint(0, classes, (rows,), device=device)

    def body():
        logits.grad = None
        F.cross_entropy(logits, target).backward()

    return measure(body, policy, timer)


def run_sgd(w, device, policy, timer):
    """Both of PyTorch's SGD implementations (the per-parameter loop, its CPU default, and
    foreach); the faster is kept and named, so the peer is measured at its best."""
    model = make_mlp(w["layers"]).to(device)
    parameters = list(model.parameters())
    for p in parameters:
        p.grad = torch.randn_like(p)
    best = None
    for foreach in (False, True):
        optimizer = torch.optim.SGD(parameters, lr=1e-3, foreach=foreach)
        result = measure(optimizer.step, policy, timer)
        result["setting"] = "foreach=%s" % foreach
        if best is None or median(result["samples"]) < median(best["samples"]):
            best = result
    return best


def median(samples):
    ordered = sorted(samples)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def run_training(w, device, policy, timer, memory_format=None):
    torch.manual_seed(123)
    layers = w["layers"]
    cnn = w["model"] == "cnn"
    model = (make_cnn(w) if cnn else make_mlp(layers)).to(device)
    if memory_format is not None:
        model = model.to(memory_format=memory_format)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    example = tuple(w["dims"][:3]) if cnn else (layers[0],)

    def to_device(features):
        if memory_format is None:
            return features.to(device)
        return features.to(device=device, memory_format=memory_format)

    autocast = w.get("precision") == "bf16"

    def step(features, labels):
        optimizer.zero_grad()
        with torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16, enabled=autocast):
            loss = F.cross_entropy(model(features), labels)
        loss.backward()
        optimizer.step()

    if w["group"] == "train_step":
        features = to_device(torch.randn((w["batch"],) + example))
        labels = torch.randint(0, layers[-1], (w["batch"],), device=device)
        return measure(lambda: step(features, labels), policy, timer)
    dataset = torch.utils.data.TensorDataset(torch.randn((w["examples"],) + example),
                                             torch.randint(0, layers[-1], (w["examples"],)))
    loader = torch.utils.data.DataLoader(dataset, batch_size=w["batch"], shuffle=True)

    def epoch():
        for features, labels in loader:
            step(to_device(features), labels.to(device))

    return measure(epoch, policy, timer)


MEMORY_FORMATS = (("contiguous", torch.contiguous_format), ("channels_last", torch.channels_last))


def best_memory_format(run_one):
    """Runs run_one(memory_format) in each format; keeps the faster, naming it and giving
    every format's median, so the peer is measured at its best."""
    best, medians = None, {}
    for name, memory_format in MEMORY_FORMATS:
        result = run_one(memory_format)
        result["setting"] = name
        medians[name] = median(result["samples"])
        if best is None or medians[name] < median(best["samples"]):
            best = result
    best["setting_medians"] = medians
    return best


def run_conv_layer(w, device, policy, timer, memory_format):
    """conv2d, max_pool2d, batch_norm: the forward alone (no_grad) or forward + backward from a
    fixed output gradient, as benchmarks/ember_bench/ember_runner.cpp."""
    group, dims = w["group"], w["dims"]
    backward = w["op"] == "forward_backward"
    dtype = torch.bfloat16 if w.get("precision") == "bf16" else torch.float32
    image = lambda sizes: uniform(sizes, device).to(dtype).contiguous(memory_format=memory_format)
    x = image(dims[:4])
    if group == "conv2d":
        n, c_in, h, width, c_out, kh, kw, stride, padding, dilation, groups = dims
        weight, bias = image((c_out, c_in // groups, kh, kw)), uniform((c_out,), device).to(dtype)

        def forward():
            return F.conv2d(x, weight, bias, stride, padding, dilation, groups)

        leaves = [x, weight, bias]
    elif group == "max_pool2d":
        def forward():
            return F.max_pool2d(x, dims[4], dims[5])

        leaves = [x]
    elif group == "batch_norm":
        norm = torch.nn.BatchNorm2d(dims[1]).to(device).train()

        def forward():
            return norm(x)

        leaves = [x] + list(norm.parameters())
    else:
        raise ValueError("no PyTorch runner for " + w["id"])
    if not backward:
        with torch.no_grad():
            return measure(forward, policy, timer)
    for leaf in leaves:
        leaf.requires_grad_(True)
    grad_output = forward().detach()
    grad_output = (torch.rand_like(grad_output) - 0.5).contiguous(memory_format=memory_format)

    def body():
        for leaf in leaves:
            leaf.grad = None
        forward().backward(grad_output)

    return measure(body, policy, timer)


def run_attention(w, device, policy, timer):
    """attention: F.scaled_dot_product_attention on [B, H, T, D] q, k, v, causal, with PyTorch's
    default kernel choice (its flash kernel on the CPU) for ember's fused figures and its math
    path (sdpa_kernel(SDPBackend.MATH)) for the composite ones; the forward alone (no_grad) or
    forward + backward from a fixed output gradient, as benchmarks/ember_bench/ember_runner.cpp."""
    from contextlib import nullcontext
    from torch.nn.attention import SDPBackend, sdpa_kernel

    batch, heads, time_, head_dim, causal, fused = w["dims"]
    q, k, v = (uniform((batch, heads, time_, head_dim), device) for _ in range(3))
    backend = nullcontext() if fused else sdpa_kernel(SDPBackend.MATH)

    def forward():
        return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))

    with backend:
        if w["op"] != "forward_backward":
            with torch.no_grad():
                return measure(forward, policy, timer)
        for t in (q, k, v):
            t.requires_grad_(True)
        grad_output = uniform((batch, heads, time_, head_dim), device)

        def body():
            for t in (q, k, v):
                t.grad = None
            forward().backward(grad_output)

        return measure(body, policy, timer)


def run_gpt_layer(w, device, policy, timer):
    """layer_norm: F.layer_norm over the last dim of [rows, C] with weight and bias; embedding:
    F.embedding of `tokens` random ids in a [V, C] table; the forward alone (no_grad) or forward +
    backward from a fixed output gradient, as benchmarks/ember_bench/ember_runner.cpp."""
    d = w["dims"]
    if w["group"] == "layer_norm":
        inputs = [uniform((d[0], d[1]), device), uniform((d[1],), device), uniform((d[1],), device)]

        def forward():
            return F.layer_norm(inputs[0], (d[1],), inputs[1], inputs[2])
        trained = inputs
    else:
        ids = torch.randint(0, d[0], (d[2],), device=device)
        table = uniform((d[0], d[1]), device)

        def forward():
            return F.embedding(ids, table)
        trained = [table]
    if w["op"] != "forward_backward":
        with torch.no_grad():
            return measure(forward, policy, timer)
    for t in trained:
        t.requires_grad_(True)
    with torch.no_grad():
        grad_output = uniform(tuple(forward().shape), device)

    def body():
        for t in trained:
            t.grad = None
        forward().backward(grad_output)

    return measure(body, policy, timer)


def run_gpt_training(w, device, policy, timer):
    """train_step/gpt: the GPT of tests/reference/gpt_model.py (nanoGPT's structure; its
    attention is F.scaled_dot_product_attention, PyTorch's CPU flash kernel) and its step:
    forward, cross-entropy, backward, AdamW with the two groups (PyTorch's default foreach
    implementation), on a fixed batch of random ids."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "reference"))
    from gpt_model import GPT

    vocabulary, time_, layers, heads, width = w["dims"]
    torch.manual_seed(123)
    model = GPT(vocabulary, time_, layers, heads, width).to(device)
    optimizer = model.optimizer(0.1, 1e-3, (0.9, 0.95))
    x = torch.randint(0, vocabulary, (w["batch"], time_), device=device)
    y = torch.randint(0, vocabulary, (w["batch"], time_), device=device)

    autocast = w.get("precision") == "bf16"

    def step():
        with torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16, enabled=autocast):
            _, loss = model(x, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return measure(step, policy, timer)


def make_cnn(w):
    """`ember train --model cnn`'s network: dims C, H, W, C1, C2; layers its Linear head."""
    channels, _, _, c1, c2 = w["dims"]
    modules = []
    for in_channels, out_channels in ((channels, c1), (c1, c2)):
        modules += [torch.nn.Conv2d(in_channels, out_channels, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2)]
    return torch.nn.Sequential(*modules, torch.nn.Flatten(), *make_mlp(w["layers"]))


def run_dataloader(w, policy, timer):
    layers = w["layers"]
    dataset = torch.utils.data.TensorDataset(torch.randn(w["examples"], layers[0]),
                                             torch.randint(0, layers[-1], (w["examples"],)))
    loader = torch.utils.data.DataLoader(dataset, batch_size=w["batch"], shuffle=True, num_workers=w["workers"])

    def one_pass():
        for features, _ in loader:
            pass

    return measure(one_pass, policy, timer)


def run(w, device, policy):
    if device.startswith("cuda"):
        torch.cuda.set_device(torch.device(device))
        timer = CudaTimer(device)
    else:
        timer = CpuTimer()
    group = w["group"]
    if group == "cross_entropy":
        return run_cross_entropy(w, device, policy, timer)
    if group == "sgd":
        return run_sgd(w, device, policy, timer)
    if group == "train_step" and w["model"] == "gpt":
        return run_gpt_training(w, device, policy, timer)
    if group in ("train_step", "train_epoch"):
        if w["model"] == "cnn":
            return best_memory_format(lambda memory_format: run_training(w, device, policy, timer, memory_format))
        return run_training(w, device, policy, timer)
    if group in ("conv2d", "max_pool2d", "batch_norm"):
        return best_memory_format(lambda memory_format: run_conv_layer(w, device, policy, timer, memory_format))
    if group == "attention":
        return run_attention(w, device, policy, timer)
    if group in ("layer_norm", "embedding"):
        return run_gpt_layer(w, device, policy, timer)
    if group == "dataloader":
        return run_dataloader(w, policy, timer)
    return run_op(w, device, policy, timer)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", required=True, help="the JSON spec ember-bench wrote")
    args = parser.parse_args()
    with open(args.spec) as handle:
        spec = json.load(handle)
    if spec.get("threads", 0) > 0:
        torch.set_num_threads(spec["threads"])
    # cuDNN at its best for these shapes, in fp32 as ember computes (no TF32 on the GPU).
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    results = []
    for job in spec["jobs"]:
        w, device = job["workload"], job["device"]
        entry = {"id": w["id"], "device": device}
        if device.startswith("cuda") and not torch.cuda.is_available():
            entry["skipped"] = "this PyTorch has no CUDA device"
        else:
            try:
                entry.update(run(w, device, spec["policy"]))
            except Exception as error:  # reported per figure; the other figures still run
                entry["skipped"] = "PyTorch failed: %s" % error
        results.append(entry)
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
    json.dump({"torch_version": torch.__version__, "python_version": platform.python_version(),
               "torch_threads": torch.get_num_threads(), "results": results}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
