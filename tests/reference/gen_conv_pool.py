"""tests/reference/gen_conv_pool.py — PyTorch reference values for conv2d and pooling (issue 19).

Writes conv_pool.json: for each case the inputs, the output and the gradients of
(output * grad_output).sum() with respect to every input, in float64 and float32; the
weights nn.Conv2d draws at manual_seed(0); and the error messages PyTorch gives.
Run with: /work/venv/bin/python tests/reference/gen_conv_pool.py
"""
import torch
import torch.nn.functional as F

from reflib import tensor_json, write

torch.manual_seed(1234)

# (name, N, C, H, W, O, kH, kW, stride, padding, dilation, groups, bias)
CONV = [
    ("plain", 2, 3, 5, 5, 4, 3, 3, 1, 0, 1, 1, True),
    ("pad1", 2, 3, 6, 5, 4, 3, 3, 1, 1, 1, 1, True),
    ("stride2", 2, 2, 7, 6, 3, 3, 3, 2, 1, 1, 1, True),
    ("stride_pair", 1, 2, 7, 9, 3, 3, 2, (2, 3), (1, 0), 1, 1, True),
    ("dilation", 2, 2, 9, 8, 3, 3, 3, 1, 2, 2, 1, False),
    ("dilation_pair", 1, 3, 9, 10, 2, 2, 3, (1, 2), (0, 1), (3, 2), 1, True),
    ("groups2", 2, 4, 6, 6, 6, 3, 3, 1, 1, 1, 2, True),
    ("depthwise", 2, 3, 5, 7, 3, 3, 3, 1, 1, 1, 3, True),
    ("pointwise", 2, 5, 4, 3, 4, 1, 1, 1, 0, 1, 1, True),
    ("pointwise_stride", 2, 3, 5, 5, 2, 1, 1, 2, 0, 1, 1, False),
    ("batch1_odd", 1, 3, 7, 5, 5, 5, 3, 1, (2, 1), 1, 1, True),
    ("mnist_layer", 2, 1, 14, 14, 4, 3, 3, 1, 1, 1, 1, True),
    ("empty_batch", 0, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, True),
    ("big_kernel", 2, 2, 5, 5, 3, 5, 5, 1, 0, 1, 1, True),
    # same-width rows (stride 1, out_w == in_w: core/cpu/conv_kernels.cpp's shifted rows) with
    # out_h != in_h and taps that read mostly padding
    ("same_width_rows", 2, 2, 4, 3, 3, 3, 5, 1, (2, 2), 1, 1, True),
    ("same_width_valid_rows", 1, 3, 6, 5, 2, 3, 3, 1, (0, 1), 1, 1, False),
    ("large_channels", 2, 16, 7, 7, 12, 3, 3, 1, 1, 1, 4, True),
]

# (name, kind, shape, args)
POOL = [
    ("max_2", "max", (2, 3, 6, 6), dict(kernel_size=2)),
    ("max_3_s2_p1", "max", (2, 2, 7, 5), dict(kernel_size=3, stride=2, padding=1)),
    ("max_ceil", "max", (1, 2, 7, 7), dict(kernel_size=2, stride=2, ceil_mode=True)),
    ("max_dilation", "max", (2, 2, 9, 8), dict(kernel_size=(2, 3), stride=1, padding=1, dilation=2)),
    ("max_pair", "max", (1, 3, 8, 9), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0))),
    ("max_unbatched", "max", (3, 6, 5), dict(kernel_size=2)),
    ("max_empty_batch", "max", (0, 3, 6, 6), dict(kernel_size=2)),
    ("avg_2", "avg", (2, 3, 6, 6), dict(kernel_size=2)),
    ("avg_pad", "avg", (2, 2, 7, 5), dict(kernel_size=3, stride=2, padding=1)),
    ("avg_pad_exclude", "avg", (2, 2, 7, 5), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ("avg_ceil", "avg", (1, 2, 7, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_ceil_exclude", "avg", (1, 2, 8, 7), dict(kernel_size=2, stride=3, padding=1, ceil_mode=True, count_include_pad=False)),
    ("avg_divisor", "avg", (2, 2, 6, 5), dict(kernel_size=(2, 3), stride=1, padding=1, divisor_override=5)),
    ("adaptive_1", "adaptive", (2, 3, 5, 7), dict(output_size=1)),
    ("adaptive_3x4", "adaptive", (2, 3, 7, 9), dict(output_size=(3, 4))),
    ("adaptive_up", "adaptive", (1, 2, 3, 2), dict(output_size=(5, 4))),
    ("adaptive_unbatched", "adaptive", (3, 6, 5), dict(output_size=(2, 3))),
]


def conv_case(case, dtype):
    name, n, c, h, w, o, kh, kw, stride, padding, dilation, groups, bias = case
    x = torch.randn(n, c, h, w, dtype=dtype, requires_grad=True)
    weight = torch.randn(o, c // groups, kh, kw, dtype=dtype, requires_grad=True)
    b = torch.randn(o, dtype=dtype, requires_grad=True) if bias else None
    out = F.conv2d(x, weight, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    grad_out = torch.randn_like(out)
    inputs = [x, weight] + ([b] if bias else [])
    grads = torch.autograd.grad(out, inputs, grad_out, allow_unused=True)
    pair = lambda v: list(v) if isinstance(v, tuple) else [v]
    entry = {"name": name, "dtype": str(dtype).replace("torch.", ""), "stride": pair(stride), "padding": pair(padding),
             "dilation": pair(dilation), "groups": groups, "input": tensor_json(x), "weight": tensor_json(weight),
             "output": tensor_json(out), "grad_output": tensor_json(grad_out), "grad_input": tensor_json(grads[0]),
             "grad_weight": tensor_json(grads[1])}
    if bias:
        entry["bias"] = tensor_json(b)
        entry["grad_bias"] = tensor_json(grads[2])
    return entry


def pool_case(case, dtype):
    name, kind, shape, args = case
    x = torch.randn(*shape, dtype=dtype)
    if kind == "max" and x.numel() > 0:
        # Ties (first max wins) and a NaN (it wins) in the windows.
        flat = x.view(-1)
        flat[1] = flat[0]
        flat[5] = flat[4] = flat[4].abs() + 3
        flat[-2] = float("nan")
    x.requires_grad_(True)
    if kind == "max":
        out = F.max_pool2d(x, **args)
    elif kind == "avg":
        out = F.avg_pool2d(x, **args)
    else:
        out = F.adaptive_avg_pool2d(x, **args)
    grad_out = torch.randn_like(out)
    (grad,) = torch.autograd.grad(out, x, grad_out) if out.numel() > 0 else (torch.zeros_like(x),)
    enc = {k: (list(v) if isinstance(v, tuple) else v) for k, v in args.items()}
    return {"name": name, "kind": kind, "dtype": str(dtype).replace("torch.", ""), "args": enc,
            "input": tensor_json(x), "output": tensor_json(out), "grad_output": tensor_json(grad_out),
            "grad_input": tensor_json(grad)}


def init_case(args, kwargs):
    torch.manual_seed(0)
    m = torch.nn.Conv2d(*args, **kwargs)
    return {"args": list(args), "repr": repr(m), "weight": tensor_json(m.weight),
            "bias": tensor_json(m.bias) if m.bias is not None else None}


conv = [conv_case(c, d) for d in (torch.float64, torch.float32) for c in CONV]
pool = [pool_case(c, d) for d in (torch.float64, torch.float32) for c in POOL]
init = [init_case((1, 32, 3), dict(padding=1)), init_case((32, 64, 3), dict(padding=1)),
        init_case((4, 8, (3, 5)), dict(stride=2, dilation=(2, 1), groups=2, bias=False))]
write("conv_pool.json", {"conv": conv, "pool": pool, "init": init})
