"""tests/reference/gen_layer_norm.py — PyTorch reference values for layer norm (issue 21).

Writes layer_norm.json, read by tests/nn/test_layer_norm.cpp. Each case runs
torch.ops.aten.native_layer_norm (output, mean, rstd) and then
  (y * grad).sum().backward()  -> input, weight and bias gradients
on an input stored as "x" and viewed as "layout" says (contiguous; transposed = stored with
its last two dims swapped, viewed through .transpose(-1, -2); step2 = stored with its last
dim doubled, viewed through [..., ::2]). The constant-row and large-mean cases also carry the
same computation in float64 (suffix _f64) from the same float32 values: PyTorch's float32
results there are themselves off by rounding (the mean's, or its grad_weight's x·rstd -
mean·rstd with rstd = 316 on the constant row), so ember is held to the float64 truth too.
Run: /work/venv/bin/python tests/reference/gen_layer_norm.py
"""
import torch

from reflib import tensor_json, write


def view_of(stored, layout):
    if layout == "contiguous":
        return stored
    if layout == "transposed":
        return stored.transpose(-1, -2)
    if layout == "step2":
        return stored[..., ::2]
    raise ValueError(layout)


def stored_shape(shape, layout):
    if layout == "transposed":
        return [*shape[:-2], shape[-1], shape[-2]]
    if layout == "step2":
        return [*shape[:-1], shape[-1] * 2]
    return list(shape)


def run(x_stored, layout, normalized_shape, weight, bias, grad, eps, dtype):
    x = view_of(x_stored.to(dtype).detach().clone(), layout).requires_grad_()
    w = weight.to(dtype).detach().clone().requires_grad_() if weight is not None else None
    b = bias.to(dtype).detach().clone().requires_grad_() if bias is not None else None
    y, mean, rstd = torch.ops.aten.native_layer_norm(x, normalized_shape, w, b, eps)
    (y * grad.to(dtype)).sum().backward()
    out = {"y": tensor_json(y), "mean": tensor_json(mean), "rstd": tensor_json(rstd),
           "grad_input": tensor_json(x.grad)}
    if w is not None:
        out["grad_weight"] = tensor_json(w.grad)
    if b is not None:
        out["grad_bias"] = tensor_json(b.grad)
    return out


def case(shape, normalized_shape, affine=True, bias=True, layout="contiguous", dtype=torch.float32, eps=1e-5,
         scale=2.0, shift=0.5, constant_row=False, large_mean=None, truth=False):
    x_stored = torch.randn(stored_shape(shape, layout), dtype=dtype) * scale + shift
    if constant_row:  # the first row all one value: var 0, output = bias
        rows = x_stored.view(-1, *x_stored.shape[len(shape) - len(normalized_shape):])
        rows[0] = 3.25
    if large_mean is not None:  # a mean far above the spread: the variance's cancellation test
        x_stored = x_stored + large_mean
    weight = torch.randn(normalized_shape, dtype=dtype) if affine else None
    bias_values = torch.randn(normalized_shape, dtype=dtype) if affine and bias else None
    grad = torch.randn(shape, dtype=dtype)
    out = {"shape": list(shape), "normalized_shape": list(normalized_shape), "layout": layout, "eps": eps,
           "x": tensor_json(x_stored), "grad": tensor_json(grad)}
    if weight is not None:
        out["weight"] = tensor_json(weight)
    if bias_values is not None:
        out["bias"] = tensor_json(bias_values)
    out.update(run(x_stored, layout, normalized_shape, weight, bias_values, grad, eps, dtype))
    if truth:
        truth = run(x_stored, layout, normalized_shape, weight, bias_values, grad, eps, torch.float64)
        out.update({key + "_f64": value for key, value in truth.items()})
    return out


def main():
    torch.manual_seed(21)
    cases = {
        "1d": case([7], [7]),
        "2d_rows": case([5, 8], [8]),
        "btc": case([2, 5, 16], [16]),
        "btc_float64": case([3, 4, 6], [6], dtype=torch.float64),
        "normalized_2d": case([3, 4, 5], [4, 5]),
        "normalized_all_3d": case([2, 3, 4], [2, 3, 4]),
        "no_affine": case([4, 9], [9], affine=False),
        "no_bias": case([4, 9], [9], bias=False),
        "transposed": case([3, 6, 5], [5], layout="transposed"),
        "transposed_2d": case([4, 3, 5], [3, 5], layout="transposed"),
        "step2": case([4, 11], [11], layout="step2"),
        "constant_row": case([3, 10], [10], constant_row=True, truth=True),
        "large_mean": case([4, 64], [64], scale=1.0, shift=0.0, large_mean=1000.0, truth=True),
        "long_row": case([2, 700], [700]),
        "many_rows": case([35, 2, 33], [33]),
        "eps_0_1": case([3, 5], [5], eps=0.1),
    }
    reprs = {
        "ln_8": repr(torch.nn.LayerNorm(8)),
        "ln_3x4_custom": repr(torch.nn.LayerNorm([3, 4], eps=1e-3, elementwise_affine=False)),
        "ln_no_bias": repr(torch.nn.LayerNorm(8, bias=False)),
        "state_dict_keys": list(torch.nn.LayerNorm([3, 4]).state_dict().keys()),
        "sequential_keys": list(torch.nn.Sequential(torch.nn.LayerNorm(3)).state_dict().keys()),
    }
    edges = {}
    y, mean, rstd = torch.ops.aten.native_layer_norm(torch.randn(2, 0), [0], None, None, 1e-5)
    edges["empty_rows"] = {"y": tensor_json(y), "mean": tensor_json(mean), "rstd": tensor_json(rstd)}
    y, mean, rstd = torch.ops.aten.native_layer_norm(torch.randn(0, 4), [4], None, None, 1e-5)
    edges["no_rows"] = {"y": tensor_json(y), "mean": tensor_json(mean), "rstd": tensor_json(rstd)}
    y, mean, rstd = torch.ops.aten.native_layer_norm(torch.full((2, 3), 5.0), [3], None, None, 0.0)
    edges["constant_eps_0"] = {"y": tensor_json(y), "mean": tensor_json(mean), "rstd": tensor_json(rstd)}

    errors = {}

    def error(name, fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the message is the reference
            errors[name] = {"type": type(e).__name__, "message": str(e)}
            return
        raise AssertionError(name + " did not raise")

    F = torch.nn.functional
    x = torch.randn(2, 3)
    d = torch.float64
    error("input_shape", lambda: F.layer_norm(x, [4]))
    error("input_shape_2d", lambda: F.layer_norm(torch.randn(2, 3, 4), [2, 4]))
    error("input_too_small", lambda: F.layer_norm(x, [2, 3, 4]))
    error("input_0d", lambda: F.layer_norm(torch.tensor(1.0), [1]))
    error("empty_normalized_shape", lambda: F.layer_norm(x, []))
    error("weight_shape", lambda: F.layer_norm(x, [3], torch.ones(4)))
    error("weight_rank", lambda: F.layer_norm(x, [3], torch.ones(1, 3)))
    error("bias_shape", lambda: F.layer_norm(x, [3], None, torch.ones(4)))
    error("long_input", lambda: F.layer_norm(torch.zeros(2, 3, dtype=torch.long), [3]))
    error("long_input_bad_shape", lambda: F.layer_norm(torch.zeros(2, 3, dtype=torch.long), [4]))
    error("float_input_double_weight", lambda: F.layer_norm(x, [3], torch.ones(3, dtype=d)))
    error("float_input_double_bias", lambda: F.layer_norm(x, [3], None, torch.ones(3, dtype=d)))
    error("double_input_float_weight", lambda: F.layer_norm(x.double(), [3], torch.ones(3)))
    error("double_input_float_bias_second", lambda: F.layer_norm(x.double(), [3], torch.ones(3, dtype=d), torch.ones(3)))
    error("float_input_double_bias_second", lambda: F.layer_norm(x, [3], torch.ones(3), torch.ones(3, dtype=d)))
    error("long_input_float_weight", lambda: F.layer_norm(torch.zeros(2, 3, dtype=torch.long), [3], torch.ones(3)))
    error("negative_size", lambda: torch.nn.LayerNorm([-1]))
    error("module_input_shape", lambda: torch.nn.LayerNorm(3)(torch.randn(2, 4)))
    write("layer_norm.json", {"cases": cases, "reprs": reprs, "edges": edges, "errors": errors})


if __name__ == "__main__":
    main()
