"""tests/reference/gen_batch_norm.py — PyTorch reference values for batch norm (issue 19).

Writes batch_norm.json, read by tests/nn/test_batch_norm.cpp. Each case builds
torch.nn.BatchNorm1d/2d with random weight and bias, then
  step 1 (train): y1 = m(x1); (y1 * grad).sum().backward()  -> input/weight/bias gradients
  step 2 (train): y2 = m(x2)                                  -> running stats after 2 steps
  eval:           y_eval = m(x3); (y_eval * grad).sum().backward() -> eval gradients
Inputs are stored in their storage layout ("layout" says how the C++ test views them:
contiguous, channels_last = stored [N, H, W, C] viewed as permute(0, 3, 1, 2),
last_to_channels = stored [N, L, C] or [N, C]ᵀ viewed with channels at dim 1).
Run: /work/venv/bin/python tests/reference/gen_batch_norm.py
"""
import torch

from reflib import tensor_json, write


def view_of(stored, layout):
    if layout == "contiguous":
        return stored
    if layout == "channels_last":
        return stored.permute(0, 3, 1, 2)
    if layout == "transposed":  # stored [C, N] -> [N, C]
        return stored.t()
    if layout == "length_major":  # stored [N, L, C] -> [N, C, L]
        return stored.permute(0, 2, 1)
    raise ValueError(layout)


def case(module_name, logical_shape, layout="contiguous", dtype=torch.float32, momentum=0.1, affine=True,
         track=True, bias=True):
    channels = logical_shape[1]
    stored_shape = {
        "contiguous": logical_shape,
        "channels_last": [logical_shape[0], *logical_shape[2:], channels],
        "transposed": [channels, logical_shape[0]],
        "length_major": [logical_shape[0], *logical_shape[2:], channels],
    }[layout]
    module = getattr(torch.nn, module_name)(channels, momentum=momentum, affine=affine,
                                            track_running_stats=track, bias=bias, dtype=dtype)
    weight = torch.randn(channels, dtype=dtype)
    bias_values = torch.randn(channels, dtype=dtype)
    if affine:
        with torch.no_grad():
            module.weight.copy_(weight)
            if bias:
                module.bias.copy_(bias_values)
    xs = [torch.randn(stored_shape, dtype=dtype) * 2 + 0.5 for _ in range(3)]
    grad = torch.randn(logical_shape, dtype=dtype)

    out = {"module": module_name, "num_features": channels, "layout": layout, "momentum": momentum,
           "affine": affine, "track_running_stats": track, "bias": bias, "weight_init": tensor_json(weight),
           "bias_init": tensor_json(bias_values), "x1": tensor_json(xs[0]), "x2": tensor_json(xs[1]),
           "x3": tensor_json(xs[2]), "grad": tensor_json(grad), "repr": repr(module),
           "state_dict_keys": list(module.state_dict().keys())}

    x1 = view_of(xs[0].clone(), layout).requires_grad_()
    y1 = module(x1)
    (y1 * grad).sum().backward()
    out["y1"] = tensor_json(y1)
    out["grad_input"] = tensor_json(x1.grad)
    if affine:
        out["grad_weight"] = tensor_json(module.weight.grad)
        if bias:
            out["grad_bias"] = tensor_json(module.bias.grad)
        module.weight.grad = None
        if bias:
            module.bias.grad = None
    if track:
        out["running_mean_1"] = tensor_json(module.running_mean)
        out["running_var_1"] = tensor_json(module.running_var)
    with torch.no_grad():
        out["y2"] = tensor_json(module(view_of(xs[1], layout)))
    if track:
        out["running_mean"] = tensor_json(module.running_mean)
        out["running_var"] = tensor_json(module.running_var)
        out["num_batches_tracked"] = int(module.num_batches_tracked)
    module.eval()
    x3 = view_of(xs[2].clone(), layout).requires_grad_()
    y_eval = module(x3)
    (y_eval * grad).sum().backward()
    out["y_eval"] = tensor_json(y_eval)
    out["grad_input_eval"] = tensor_json(x3.grad)
    if affine:
        out["grad_weight_eval"] = tensor_json(module.weight.grad)
        if bias:
            out["grad_bias_eval"] = tensor_json(module.bias.grad)
    return out


def main():
    torch.manual_seed(19)
    cases = {
        "bn2d": case("BatchNorm2d", [4, 3, 5, 6]),
        "bn2d_float64": case("BatchNorm2d", [3, 4, 3, 5], dtype=torch.float64),
        "bn2d_channels_last": case("BatchNorm2d", [2, 5, 3, 4], layout="channels_last"),
        "bn2d_batch1": case("BatchNorm2d", [1, 3, 2, 3]),
        "bn2d_odd": case("BatchNorm2d", [3, 7, 5, 7]),
        "bn1d_2d": case("BatchNorm1d", [8, 5]),
        "bn1d_2d_transposed": case("BatchNorm1d", [6, 4], layout="transposed"),
        "bn1d_3d": case("BatchNorm1d", [4, 3, 7]),
        "bn1d_3d_length_major": case("BatchNorm1d", [3, 4, 5], layout="length_major"),
        "bn1d_momentum_none": case("BatchNorm1d", [5, 3], momentum=None),
        "bn1d_momentum_0_3": case("BatchNorm1d", [5, 3], momentum=0.3),
        "bn2d_no_affine_no_stats": case("BatchNorm2d", [2, 3, 2, 2], affine=False, track=False),
        "bn2d_no_bias": case("BatchNorm2d", [2, 3, 2, 2], bias=False),
    }
    reprs = {
        "bn2d_32": repr(torch.nn.BatchNorm2d(32)),
        "bn1d_custom": repr(torch.nn.BatchNorm1d(3, eps=1e-3, momentum=None, affine=False, track_running_stats=False)),
        "sequential_keys": list(torch.nn.Sequential(torch.nn.BatchNorm2d(3)).state_dict().keys()),
    }
    errors = {}

    def error(name, fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the message is the reference
            errors[name] = str(e)
            return
        raise AssertionError(name + " did not raise")

    F = torch.nn.functional
    error("batch1_1d", lambda: torch.nn.BatchNorm1d(3)(torch.randn(1, 3)))
    error("batch1_2d", lambda: torch.nn.BatchNorm2d(3)(torch.randn(1, 3, 1, 1)))
    error("rank_1d", lambda: torch.nn.BatchNorm1d(3)(torch.randn(2, 3, 4, 5)))
    error("rank_2d", lambda: torch.nn.BatchNorm2d(3)(torch.randn(2, 3, 4)))
    error("running_mean_size", lambda: torch.nn.BatchNorm2d(4)(torch.randn(2, 3, 4, 4)))
    error("running_var_size", lambda: F.batch_norm(torch.randn(2, 3), torch.zeros(3), torch.ones(4), training=True))
    error("weight_size", lambda: F.batch_norm(torch.randn(2, 3), None, None, torch.ones(4), training=True))
    error("bias_size", lambda: F.batch_norm(torch.randn(2, 3), None, None, None, torch.ones(4), training=True))
    error("eval_without_stats", lambda: F.batch_norm(torch.randn(2, 3), None, None, training=False))
    error("long_input", lambda: F.batch_norm(torch.randint(0, 3, (2, 3)), torch.zeros(3), torch.ones(3), training=True))
    error("mixed_float", lambda: F.batch_norm(torch.randn(2, 3), torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64), training=True))
    error("mixed_double", lambda: F.batch_norm(torch.randn(2, 3, dtype=torch.float64), torch.zeros(3), torch.ones(3), training=True))
    error("eps_training", lambda: F.batch_norm(torch.randn(2, 3), None, None, training=True, eps=-1.0))
    error("eps_eval", lambda: F.batch_norm(torch.randn(2, 3), torch.zeros(3), torch.ones(3), training=False, eps=-0.5))
    write("batch_norm.json", {"cases": cases, "reprs": reprs, "errors": errors})


if __name__ == "__main__":
    main()
